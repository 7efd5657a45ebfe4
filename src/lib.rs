//! The `cpistack` library behind the command-line tool: the lock-step checker,
//! text/JSON reports of a unit's counters, the benchmark, and the glue that runs
//! streams, the core simulator and CPI-stack studies.
//!
//! Model logic lives in the crates below (`events`, `hw`, `golden`, `sim`); this
//! crate only wires them together.

pub mod bench;
pub mod check;
pub mod console;
pub mod failwaves;
pub mod paths;
pub mod report;
pub mod run;
pub mod scenarios;
pub mod stacks;
pub mod vcdcheck;
pub mod waves;
