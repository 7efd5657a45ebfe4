mod props;
mod rules;
mod scenarios;
mod traces;
mod sim;
