//! Waves on failure: what the lock-step checker keeps so that, on a mismatch, it
//! can write the waveform of the cycles that led to it.
//!
//! [`FailWaves`] keeps the last [`RING`] bundles and a clone of the `hw` unit taken
//! every [`SNAP_EVERY`] cycles (the two newest). On a mismatch after cycle `C` it
//! takes the newest snapshot at least [`BEFORE`] cycles older than `C` (or the one
//! at reset when `C < BEFORE`), re-steps the clone through the kept bundles with a
//! [`VcdTracer`](crate::waves::VcdTracer) and writes
//! `<dir>/mismatch-<variant>-seed<S>-cycle<C>.vcd` (seed `none` if the run was not
//! random). The waveform therefore covers between [`BEFORE`] and
//! `BEFORE + SNAP_EVERY - 1` cycles before `C`, cycle `C` itself, and the state
//! after it. `hw` is deterministic, so the re-stepped clone passes through the same
//! states as the checked unit.
//!
//! Cost in the lock-step loop: one 16-byte store a cycle and a clone of the unit
//! (about 5 KiB) every 256 cycles.

use std::path::{Path, PathBuf};

use events::{CycleEvents, Params};

use crate::waves::{self, Window};

/// Bundles kept.
pub const RING: usize = 512;
/// Cycles between two snapshots of the unit.
pub const SNAP_EVERY: u64 = 256;
/// Cycles before the failing one that a failure waveform covers at least.
pub const BEFORE: u64 = 200;

/// The directory failure waveforms go to unless set otherwise: `$CPISTACK_WAVES_DIR`
/// or else `waves` (relative to the current directory).
pub fn default_dir() -> PathBuf {
    std::env::var_os("CPISTACK_WAVES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("waves"))
}

/// The history a failure waveform is rebuilt from.
#[derive(Clone)]
pub struct FailWaves {
    ring: Box<[CycleEvents; RING]>,
    /// `(cycle, unit before that cycle)`, older first.
    snaps: [Option<(u64, hw::Unit)>; 2],
    dir: Option<PathBuf>,
}

impl FailWaves {
    /// Writing to `dir` (`None`: keep nothing, write nothing).
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self {
            ring: Box::new([CycleEvents::default(); RING]),
            snaps: [None, None],
            dir,
        }
    }

    /// Where the waveforms go (`None`: disabled).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Record bundle `ev` of cycle `cycle`, before `hw` steps with it.
    #[inline(always)]
    pub fn before_step(&mut self, cycle: u64, ev: &CycleEvents, hw: &hw::Unit) {
        if self.dir.is_none() {
            return;
        }
        self.ring[(cycle % RING as u64) as usize] = *ev;
        if cycle.is_multiple_of(SNAP_EVERY) {
            self.snapshot(cycle, hw);
        }
    }

    #[cold]
    #[inline(never)]
    fn snapshot(&mut self, cycle: u64, hw: &hw::Unit) {
        let old = self.snaps[1].take();
        self.snaps[0] = old;
        self.snaps[1] = Some((cycle, hw.clone()));
    }

    /// The file name for a mismatch after cycle `cycle`.
    pub fn file_name(params: &Params, seed: Option<u64>, cycle: u64) -> String {
        let seed = seed.map_or("none".to_string(), |s| s.to_string());
        format!(
            "mismatch-{}-seed{seed}-cycle{cycle}.vcd",
            params.variant.name()
        )
    }

    /// Write the waveform of a mismatch after cycle `cycle` (whose bundle was the
    /// last recorded). Returns the path written, or `None` when disabled; an error
    /// names what failed.
    pub fn write(&self, seed: Option<u64>, cycle: u64) -> Result<Option<PathBuf>, String> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        // The newest snapshot at least BEFORE cycles back whose bundles are all
        // still in the ring; else the oldest one (a run shorter than BEFORE).
        let usable = |s: &&(u64, hw::Unit)| s.0 <= cycle && cycle - s.0 < RING as u64;
        let snaps: Vec<&(u64, hw::Unit)> = self.snaps.iter().flatten().filter(usable).collect();
        let pick = snaps
            .iter()
            .rev()
            .find(|s| cycle - s.0 >= BEFORE)
            .or_else(|| snaps.iter().find(|s| s.0 == 0))
            .ok_or_else(|| format!("no snapshot of the unit covers cycle {cycle}"))?;
        let (start, unit) = (pick.0, &pick.1);
        let params = *events::CounterUnit::params(unit);
        let path = dir.join(Self::file_name(&params, seed, cycle));
        let mut u = unit.clone();
        let res = (|| -> Result<(), waves::WavesError> {
            let mut t = waves::create(&path, &u, start, Window::ALL)?;
            for c in start..=cycle {
                u.step_traced(&self.ring[(c % RING as u64) as usize], &mut t);
            }
            t.finish()?;
            Ok(())
        })();
        res.map_err(|e| format!("writing {}: {e}", path.display()))?;
        // its layout beside it: the failing unit's widths and rows (a problem
        // with it is a warning: the waveform itself was written)
        // opening on the failing cycle, marked
        let view = waves::View {
            cycles: cycle - start + 1,
            mark: Some(cycle - start),
        };
        if let Err(e) = waves::write_vcd_layout(&path, &params, view) {
            eprintln!("warning: {e:#}");
        }
        Ok(Some(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/waves.md: `waves` in the current directory unless
    /// `$CPISTACK_WAVES_DIR` names another.
    #[test]
    fn failure_waves_go_to_waves_unless_the_environment_names_a_directory() {
        let want =
            std::env::var_os("CPISTACK_WAVES_DIR").map_or(PathBuf::from("waves"), PathBuf::from);
        assert_eq!(default_dir(), want);
    }

    #[test]
    fn dir_is_the_directory_given_or_none_when_disabled() {
        let d = PathBuf::from("some/dir");
        assert_eq!(FailWaves::new(Some(d.clone())).dir(), Some(d.as_path()));
        assert_eq!(FailWaves::new(None).dir(), None);
    }
}
