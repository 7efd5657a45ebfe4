//! The `cpistack` library behind the command-line tool: the lock-step checker,
//! text/JSON reports of a unit's counters, the benchmark, and the glue that runs
//! streams, the core simulator and CPI-stack studies.
//!
//! Model logic lives in the crates below (`events`, `hw`, `golden`, `sim`); this
//! crate only wires them together.

pub mod bench;
pub mod census;
pub mod check;
pub mod console;
pub mod failwaves;
pub mod fuzz;
pub mod multiplex;
pub mod paths;
pub mod phases;
pub mod report;
pub mod run;
pub mod scenarios;
pub mod stacks;
pub mod vcdcheck;
pub mod waves;

/// For unit tests: an empty directory `cpistack-NAME-PID` in the system's
/// temporary directory, removed when the test passes and kept (a line on
/// standard error names it) when the test fails.
#[cfg(test)]
pub(crate) fn fresh_dir(name: &str) -> TestDir {
    let d = std::env::temp_dir().join(format!("cpistack-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    TestDir(d)
}

/// A directory of [`fresh_dir`]: a `Path`, removed when dropped unless the
/// thread is panicking.
#[cfg(test)]
pub(crate) struct TestDir(std::path::PathBuf);

#[cfg(test)]
impl std::ops::Deref for TestDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

#[cfg(test)]
impl Drop for TestDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept the failed test's files in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
