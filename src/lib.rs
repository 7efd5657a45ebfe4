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

/// For unit tests: `cpistack-NAME-PID` in the system's temporary directory,
/// emptied of anything an earlier run left there (not created).
#[cfg(test)]
pub(crate) fn fresh_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("cpistack-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}
