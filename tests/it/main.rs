mod batch;
mod props;
mod rules;
mod scenarios;
mod sim;
mod stacks;
mod traces;
mod waves;
