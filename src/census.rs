//! The cycle census (`cpistack run --census`, `replay --census`, and each
//! study of `cpistack stacks`): every counted cycle in one
//! class by what the window, the ROB head and the frontend were doing, and
//! where FMT's counters put such a cycle.
//!
//! A CPI stack says how many cycles each component got; the census says what
//! the cycles of each part were. Its use is FMT's `base`: the paper's
//! counters charge a full window only while its head waits on a miss or a
//! long operation, so the cycles in which a full window commits (the drain
//! and refill around each stall) are base cycles even when they commit far
//! below the machine's steady rate. The census shows how many there are and
//! at what rate they commit, counted from the end of the last backend stall
//! (docs/accuracy.md, "Eighth pass").
//!
//! The window is full at the start of a cycle when the ROB is full or the
//! bundle says another backend structure is (`backend_full`), as in the
//! unit's counting step (spec 4.1): the same test, so the four "head waits"
//! classes are exactly FMT's `l1d`, `l2d`, `dtlb` and `longlat` counters
//! (checked by the tests).

use events::{CounterUnit, CycleEvents, FetchStall, HeadCause};
use serde::{Deserialize, Serialize};

/// Cycles since the end of the last backend stall at which a committing
/// full-window cycle moves to the next class: `[1, 5)`, `[5, 20)`, then 20
/// or more (or no stall yet).
pub const RAMP_EDGES: [u64; 2] = [5, 20];

/// The classes, in report order: (window, what, where FMT puts the cycle).
pub const CLASSES: [(&str, &str, &str); 15] = [
    ("full", "head waits on an L1 D-miss", "l1d"),
    ("full", "head waits on an L2 D-miss", "l2d"),
    ("full", "head waits on a D-TLB miss", "dtlb"),
    ("full", "head waits on a long-latency op", "longlat"),
    ("full", "head waits, other cause or none", "base"),
    ("full", "commits, 1-4 cycles after a backend stall", "base"),
    ("full", "commits, 5-19 cycles after a backend stall", "base"),
    (
        "full",
        "commits, 20+ cycles after one (or none yet)",
        "base",
    ),
    (
        "open",
        "fetch stalled on an L1 I-miss",
        "l1i (correct path)",
    ),
    (
        "open",
        "fetch stalled on an L2 I-miss",
        "l2i (correct path)",
    ),
    (
        "open",
        "fetch stalled on an I-TLB miss",
        "itlb (correct path)",
    ),
    (
        "open",
        "no fetch stall, dispatches, head waits (fill)",
        "base",
    ),
    (
        "open",
        "no fetch stall, dispatches, head not waiting",
        "base",
    ),
    (
        "open",
        "no fetch stall, dispatches nothing, commits",
        "base or bpred",
    ),
    (
        "open",
        "no fetch stall, nothing dispatches or commits",
        "base or bpred",
    ),
];

/// The classes `0..HEAD_WAITS`: a full window whose head waits on a backend
/// event (FMT's `l1d`, `l2d`, `dtlb`, `longlat`, in that order).
const HEAD_WAITS: usize = 4;
/// Index of the first committing full-window class.
const RAMP0: usize = 5;
/// Index of the first open-window class.
const OPEN0: usize = 8;

/// The census of one run: fed each cycle's bundle and whether the window was
/// full at its start; counts only counted cycles (`count_enable`).
#[derive(Clone, Debug)]
pub struct Census {
    cycles: [u64; CLASSES.len()],
    commits: [u64; CLASSES.len()],
    dispatches: [u64; CLASSES.len()],
    /// Counted and uncounted cycles since the last cycle whose full window's
    /// head waited on a backend miss or a long-latency op (`u64::MAX`: none yet).
    since_stall: u64,
}

impl Default for Census {
    fn default() -> Self {
        Self {
            cycles: [0; CLASSES.len()],
            commits: [0; CLASSES.len()],
            dispatches: [0; CLASSES.len()],
            since_stall: u64::MAX,
        }
    }
}

impl Census {
    pub fn new() -> Self {
        Self::default()
    }

    /// The class of a cycle, given the distance from the last backend stall.
    fn class(ev: &CycleEvents, window_full: bool, since_stall: u64) -> usize {
        if window_full {
            if ev.retired > 0 {
                return RAMP0 + RAMP_EDGES.iter().filter(|&&e| since_stall >= e).count();
            }
            return match ev.head {
                HeadCause::L1d => 0,
                HeadCause::L2d => 1,
                HeadCause::Dtlb => 2,
                HeadCause::Longlat => 3,
                HeadCause::None | HeadCause::Other => 4,
            };
        }
        match ev.fetch_stall {
            FetchStall::L1i => OPEN0,
            FetchStall::L2i => OPEN0 + 1,
            FetchStall::Itlb => OPEN0 + 2,
            // the window fills behind a head that waits: the paper's
            // "ROB fill time", which FMT leaves in base
            FetchStall::None
                if ev.dispatched > 0 && ev.retired == 0 && ev.head != HeadCause::None =>
            {
                OPEN0 + 3
            }
            FetchStall::None if ev.dispatched > 0 => OPEN0 + 4,
            FetchStall::None if ev.retired > 0 => OPEN0 + 5,
            FetchStall::None => OPEN0 + 6,
        }
    }

    /// One cycle: its bundle, and whether the window was full at its start
    /// (the ROB full, or `ev.backend_full`).
    pub fn cycle(&mut self, ev: &CycleEvents, window_full: bool) {
        let window_full = window_full || ev.backend_full;
        // a committing cycle is one further from the last stall; a stall
        // (one of the four "head waits" classes, which do not commit)
        // starts the ramp classes again
        let k = Self::class(ev, window_full, self.since_stall.saturating_add(1));
        self.since_stall = if k < HEAD_WAITS {
            0
        } else {
            self.since_stall.saturating_add(1)
        };
        if ev.count_enable {
            self.cycles[k] += 1;
            self.commits[k] += ev.retired as u64;
            self.dispatches[k] += ev.dispatched as u64;
        }
    }

    /// One cycle of a run that drives `u`, called before `u` steps with
    /// `ev`: the window is full if `u`'s ROB mirror is (the ROB at the
    /// cycle's start, as the unit's counting step sees it).
    pub fn before_step(&mut self, u: &hw::Unit, ev: &CycleEvents) {
        self.cycle(ev, u32::from(u.regs().rob_count) == u.params().rob_entries);
    }

    /// Counted cycles.
    pub fn total(&self) -> u64 {
        self.cycles.iter().sum()
    }

    /// The rows of the report, in order (every class, empty ones included, so
    /// that two runs' censuses line up).
    pub fn rows(&self) -> Vec<CensusRow> {
        let total = self.total();
        CLASSES
            .iter()
            .enumerate()
            .map(|(k, &(window, what, fmt))| CensusRow {
                window: window.into(),
                what: what.into(),
                fmt: fmt.into(),
                cycles: self.cycles[k],
                share_pct: share(self.cycles[k], total),
                commits: self.commits[k],
                commits_per_cycle: per_cycle(self.commits[k], self.cycles[k]),
                dispatches: self.dispatches[k],
                dispatches_per_cycle: per_cycle(self.dispatches[k], self.cycles[k]),
            })
            .collect()
    }

    /// The census as a table for people ([`text`]).
    pub fn text(&self) -> String {
        text(&self.rows())
    }
}

/// `100 * part / total`, 0 for no cycles.
fn share(part: u64, total: u64) -> f64 {
    if total > 0 {
        100.0 * part as f64 / total as f64
    } else {
        0.0
    }
}

/// The cycles of the four classes whose full window's head waits on a
/// backend event, by FMT counter name (`l1d`, `l2d`, `dtlb`, `longlat`): FMT
/// counts exactly these cycles. Classes are found by name; a missing one is 0.
pub fn head_waits(rows: &[CensusRow]) -> [(&'static str, u64); HEAD_WAITS] {
    std::array::from_fn(|k| (CLASSES[k].2, sum_of(rows, &[k]).0))
}

/// Cycles and commits of the rows of classes `ks` (found by name; saturating,
/// so any rows read back will do).
fn sum_of(rows: &[CensusRow], ks: &[usize]) -> (u64, u64) {
    rows.iter()
        .filter(|r| ks.iter().any(|&k| r.what == CLASSES[k].1))
        .fold((0, 0), |(c, n), r| {
            (c.saturating_add(r.cycles), n.saturating_add(r.commits))
        })
}

/// The summary of a census that says what FMT's base is made of: cycles
/// and commits of a full window committing, of an open window filling
/// behind a head that waits, and of an open window whose head does not wait
/// and dispatches (classes found by name, so any rows read back will do).
pub fn base_parts(rows: &[CensusRow]) -> [(u64, u64); 3] {
    [
        sum_of(rows, &[RAMP0, RAMP0 + 1, RAMP0 + 2]),
        sum_of(rows, &[OPEN0 + 3]),
        sum_of(rows, &[OPEN0 + 4]),
    ]
}

/// A census as read back from a file: exactly the classes of [`CLASSES`] in
/// order, its cycles adding up to `cycles` and its commits to `commits`, and
/// every share and rate what its counts give. The message names the class
/// and the field.
pub fn check(rows: &[CensusRow], cycles: u64, commits: u64) -> Result<(), String> {
    if rows.len() != CLASSES.len() {
        return Err(format!(
            "{} classes, expected {}",
            rows.len(),
            CLASSES.len()
        ));
    }
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    for (r, &(window, what, fmt)) in rows.iter().zip(&CLASSES) {
        if (r.window.as_str(), r.what.as_str(), r.fmt.as_str()) != (window, what, fmt) {
            return Err(format!(
                "class `{} {}` (FMT: {}) where `{window} {what}` (FMT: {fmt}) belongs",
                r.window, r.what, r.fmt
            ));
        }
        if r.cycles > 1 << 53 || r.commits > 1 << 53 || r.dispatches > 1 << 53 {
            return Err(format!("`{what}`: a count above a run's 2^53"));
        }
    }
    let sum: u64 = rows.iter().map(|r| r.cycles).sum();
    if sum != cycles {
        return Err(format!(
            "the classes hold {sum} cycles, not the run's {cycles}"
        ));
    }
    let sum: u64 = rows.iter().map(|r| r.commits).sum();
    if sum != commits {
        return Err(format!(
            "the classes commit {sum} instructions, not the run's {commits}"
        ));
    }
    for r in rows {
        for (k, got, want) in [
            ("share_pct", r.share_pct, share(r.cycles, cycles)),
            (
                "commits_per_cycle",
                r.commits_per_cycle,
                per_cycle(r.commits, r.cycles),
            ),
            (
                "dispatches_per_cycle",
                r.dispatches_per_cycle,
                per_cycle(r.dispatches, r.cycles),
            ),
        ] {
            if !close(got, want) {
                return Err(format!(
                    "`{}`: {k} is {got}, but its counts give {want}",
                    r.what
                ));
            }
        }
    }
    Ok(())
}

/// `n / cycles`, 0 for no cycles.
fn per_cycle(n: u64, cycles: u64) -> f64 {
    if cycles > 0 {
        n as f64 / cycles as f64
    } else {
        0.0
    }
}

/// A census's rows as a table for people.
pub fn text(rows: &[CensusRow]) -> String {
    use std::fmt::Write;
    let total: u64 = rows.iter().map(|r| r.cycles).sum();
    let mut s = format!(
        "cycle census: {} counted, by the state at each cycle's start (window full: the ROB or `backend_full`)\n",
        crate::console::count(total, "cycle")
    );
    let _ = writeln!(
        s,
        "  {:<6} {:<46} {:>12} {:>8} {:>8} {:>8}  FMT counts it as",
        "window", "what", "cycles", "share", "commits", "dispatch"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "  {:<6} {:<46} {:>12} {:>7.2}% {:>8.2} {:>8.2}  {}",
            r.window,
            r.what,
            r.cycles,
            r.share_pct,
            r.commits_per_cycle,
            r.dispatches_per_cycle,
            r.fmt
        );
    }
    s
}

/// One class of the census.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CensusRow {
    /// `full` or `open`: the window at the cycle's start.
    pub window: String,
    /// What the head, dispatch or the frontend did.
    pub what: String,
    /// Where FMT's counters put such a cycle ("correct path": the stall cycles
    /// of a block that is squashed are not charged; "base or bpred": bpred
    /// while a mispredicted branch's refill is pending).
    pub fmt: String,
    pub cycles: u64,
    /// Of the counted cycles.
    pub share_pct: f64,
    /// Instructions committed in these cycles.
    pub commits: u64,
    /// `commits / cycles` (0 for an empty class).
    pub commits_per_cycle: f64,
    /// Instructions dispatched (entered the ROB) in these cycles, wrong path
    /// included.
    pub dispatches: u64,
    /// `dispatches / cycles` (0 for an empty class).
    pub dispatches_per_cycle: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(f: impl FnOnce(&mut CycleEvents)) -> CycleEvents {
        let mut e = CycleEvents::idle();
        f(&mut e);
        e
    }

    fn by_what(c: &Census) -> Vec<(&'static str, &'static str, u64, u64)> {
        c.rows()
            .into_iter()
            .zip(CLASSES)
            .filter(|(r, _)| r.cycles > 0)
            .map(|(r, (window, what, _))| (window, what, r.cycles, r.commits))
            .collect()
    }

    #[test]
    fn each_cycle_lands_in_the_class_its_state_names() {
        let mut c = Census::new();
        // an uncounted stall still starts a ramp, but is not a counted cycle
        c.cycle(
            &ev(|e| (e.count_enable, e.head) = (false, HeadCause::L2d)),
            true,
        );
        // 1 cycle after it: a committing full window
        c.cycle(&ev(|e| (e.retired, e.dispatched) = (3, 3)), true);
        // two stall cycles of a long op, then commits 1, 2, ..., 21 cycles after
        for _ in 0..2 {
            c.cycle(&ev(|e| e.head = HeadCause::Longlat), true);
        }
        for _ in 0..21 {
            c.cycle(&ev(|e| e.retired = 2), true);
        }
        // a head waiting on nothing the unit counts, full window
        c.cycle(&ev(|e| e.head = HeadCause::Other), true);
        // `backend_full` makes the window full with the ROB not full
        c.cycle(
            &ev(|e| (e.head, e.backend_full) = (HeadCause::Dtlb, true)),
            false,
        );
        // open window: stalls of each kind, and the three kinds of no stall
        c.cycle(
            &ev(|e| (e.fetch_stall, e.retired) = (FetchStall::L1i, 1)),
            false,
        );
        c.cycle(&ev(|e| e.fetch_stall = FetchStall::L2i), false);
        c.cycle(&ev(|e| e.fetch_stall = FetchStall::Itlb), false);
        c.cycle(&ev(|e| e.dispatched = 4), false);
        c.cycle(&ev(|e| (e.dispatched, e.head) = (2, HeadCause::L2d)), false);
        c.cycle(&ev(|e| e.retired = 4), false);
        c.cycle(&ev(|_| ()), false);
        c.cycle(&ev(|e| e.head = HeadCause::L1d), true);
        assert_eq!(
            by_what(&c),
            vec![
                ("full", "head waits on an L1 D-miss", 1, 0),
                ("full", "head waits on a D-TLB miss", 1, 0),
                ("full", "head waits on a long-latency op", 2, 0),
                ("full", "head waits, other cause or none", 1, 0),
                // 1 after the uncounted stall, then 1-4 after the long op
                ("full", "commits, 1-4 cycles after a backend stall", 5, 11),
                ("full", "commits, 5-19 cycles after a backend stall", 15, 30),
                ("full", "commits, 20+ cycles after one (or none yet)", 2, 4),
                ("open", "fetch stalled on an L1 I-miss", 1, 1),
                ("open", "fetch stalled on an L2 I-miss", 1, 0),
                ("open", "fetch stalled on an I-TLB miss", 1, 0),
                (
                    "open",
                    "no fetch stall, dispatches, head waits (fill)",
                    1,
                    0
                ),
                ("open", "no fetch stall, dispatches, head not waiting", 1, 0),
                ("open", "no fetch stall, dispatches nothing, commits", 1, 4),
                (
                    "open",
                    "no fetch stall, nothing dispatches or commits",
                    1,
                    0
                ),
            ]
        );
        assert_eq!(c.total(), 34);
        let rows = c.rows();
        assert_eq!(rows.len(), CLASSES.len(), "empty classes are rows too");
        let shares: f64 = rows.iter().map(|r| r.share_pct).sum();
        assert!((shares - 100.0).abs() < 1e-9, "{shares}");
        let ramp = &rows[RAMP0];
        assert_eq!(
            (ramp.commits_per_cycle, ramp.share_pct),
            (2.2, 500.0 / 34.0)
        );
        assert_eq!((ramp.dispatches, ramp.dispatches_per_cycle), (3, 0.6));
        let fill = &rows[OPEN0 + 3];
        assert_eq!((fill.dispatches, fill.dispatches_per_cycle), (2, 2.0));
        let open = &rows[OPEN0 + 4];
        assert_eq!((open.dispatches, open.dispatches_per_cycle), (4, 4.0));
        assert_eq!(rows.iter().map(|r| r.dispatches).sum::<u64>(), 9);
        let text = c.text();
        assert!(
            text.starts_with("cycle census: 34 cycles counted"),
            "{text}"
        );
        assert!(
            text.contains("full   head waits on a long-latency op") && text.contains("longlat"),
            "{text}"
        );
    }

    #[test]
    fn a_census_read_back_is_checked_class_by_class() {
        let mut c = Census::new();
        c.cycle(&ev(|e| e.head = HeadCause::L2d), true);
        c.cycle(&ev(|e| (e.retired, e.dispatched) = (3, 2)), true);
        c.cycle(&ev(|e| e.dispatched = 4), false);
        let rows = c.rows();
        assert_eq!(check(&rows, 3, 3), Ok(()));
        assert_eq!(
            head_waits(&rows),
            [("l1d", 0), ("l2d", 1), ("dtlb", 0), ("longlat", 0)]
        );
        let bad = |f: &dyn Fn(&mut Vec<CensusRow>)| {
            let mut r = rows.clone();
            f(&mut r);
            check(&r, 3, 3).unwrap_err()
        };
        assert_eq!(
            check(&rows, 4, 3).unwrap_err(),
            "the classes hold 3 cycles, not the run's 4"
        );
        assert!(check(&rows, 3, 2)
            .unwrap_err()
            .contains("commit 3 instructions, not the run's 2"));
        assert_eq!(
            bad(&|r| {
                r.pop();
            }),
            "14 classes, expected 15"
        );
        assert!(bad(&|r| r.swap(0, 1)).starts_with("class `full head waits on an L2 D-miss`"));
        assert!(bad(&|r| r[5].fmt = "l2d".into()).contains("(FMT: l2d) where"));
        assert!(bad(&|r| r[1].share_pct = 50.0)
            .contains("`head waits on an L2 D-miss`: share_pct is 50"));
        assert!(bad(&|r| r[5].commits_per_cycle = 2.0).contains("commits_per_cycle is 2"));
        assert!(bad(&|r| r[5].dispatches_per_cycle = 3.0).contains("dispatches_per_cycle is 3"));
        assert!(bad(&|r| r[1].cycles = u64::MAX).contains("2^53"));
    }

    #[test]
    fn a_committing_full_window_before_any_stall_is_in_the_last_ramp_class() {
        let mut c = Census::new();
        c.cycle(&ev(|e| e.retired = 4), true);
        assert_eq!(
            by_what(&c),
            vec![("full", "commits, 20+ cycles after one (or none yet)", 1, 4)]
        );
        // an empty census: no share, no rate, no division by zero
        let e = Census::new();
        assert!(e.rows().iter().all(|r| r.share_pct == 0.0
            && r.commits_per_cycle == 0.0
            && r.dispatches_per_cycle == 0.0));
        assert_eq!(e.total(), 0);
    }
}
