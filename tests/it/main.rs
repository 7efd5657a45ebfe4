mod props;
mod rules;
mod scenarios;
mod sim;
mod traces;
mod waves;
