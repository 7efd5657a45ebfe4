mod rules;
mod scenarios;
mod traces;
