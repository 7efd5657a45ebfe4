mod rules;
mod scenarios;
