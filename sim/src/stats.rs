//! Per-run statistics, counted only while `count_enable` is on (after warm-up).

use serde::{Deserialize, Serialize};

/// Miss events of one kind of path.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissCounts {
    /// L1 I-cache misses (fetch accesses that needed an MSHR).
    pub l1i: u64,
    /// L2 misses of instruction fetches.
    pub l2i: u64,
    pub itlb: u64,
    /// L1 D-cache misses of loads and stores.
    pub l1d: u64,
    /// L2 misses of loads and stores.
    pub l2d: u64,
    pub dtlb: u64,
    /// Long-latency operations executed (latency >= `latency.longlat_min`).
    pub longlat: u64,
    /// Sum over those operations of their latency minus one.
    pub longlat_cycles: u64,
    /// Branch mispredictions found at execute (and squashing).
    pub mispredicts: u64,
}

impl MissCounts {
    /// Every count with its field's name, in declaration order.
    pub fn named(&self) -> [(&'static str, u64); 9] {
        [
            ("l1i", self.l1i),
            ("l2i", self.l2i),
            ("itlb", self.itlb),
            ("l1d", self.l1d),
            ("l2d", self.l2d),
            ("dtlb", self.dtlb),
            ("longlat", self.longlat),
            ("longlat_cycles", self.longlat_cycles),
            ("mispredicts", self.mispredicts),
        ]
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Statistics of one run (the measured part, after warm-up).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Instructions committed while counting.
    pub instructions: u64,
    /// Cycles counted.
    pub cycles: u64,
    /// Events of instructions that committed (an I-miss is charged to the first
    /// instruction delivered after it): those of `all` whose instruction
    /// committed while counting, so never more than `all` (an event before
    /// counting started is in neither; an instruction squashed by a decode
    /// redirect and fetched again keeps none of its first fetch's events, a
    /// case no suite workload met).
    pub committed: MissCounts,
    /// Events on every path, wrong paths included.
    pub all: MissCounts,
    /// Branches committed.
    pub branches: u64,
    /// Decode-time redirects (`fe_redirect`).
    pub fe_redirects: u64,
    /// Wrong-path instructions fetched and dispatched.
    pub wrong_path_fetched: u64,
    pub wrong_path_dispatched: u64,
    /// Cycles with a full ROB.
    pub rob_full_cycles: u64,
    /// Cycles with a full load/store queue and a ROB not full: dispatch stops
    /// at the next memory instruction, a backend stall that the unit's
    /// ROB-full detection does not see and `backend_full` reports
    /// (docs/spec-decisions.md; docs/accuracy.md, the machine sweep).
    pub lsq_full_cycles: u64,
    /// Cycles that start with the core holding its most branches in flight
    /// (`core.fmt_rows - 1`), the ROB and the load/store queue not full: fetch
    /// stops at the next branch, so the window cannot grow past it, a stall
    /// that `backend_full` also reports (docs/spec-decisions.md). Left out
    /// of the JSON when 0 (it is 0 on the default machine), so that a report
    /// written before it was counted still reads back whole.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub branch_full_cycles: u64,
    /// What the ROB head waited for in the cycles FMT charges to a data
    /// miss: its own miss, a pending hit, a late prefetch, or an MSHR
    /// (Chen and Aamodt's distinction). Left out of the JSON when every
    /// count is 0 (no such wait), and read as zeros from a report written
    /// before it was counted.
    #[serde(default, skip_serializing_if = "HeadWaits::is_zero")]
    pub head_waits: HeadWaits,
}

/// The cycles in which the window is full at the start (the ROB, or another
/// structure the core reports as `backend_full`), nothing commits and the ROB
/// head is a load waiting on the D-cache: the cycles FMT's `l1d` and `l2d`
/// counters take, split by why the load waits. Each level's four counts add
/// up to that counter exactly (tests/it/sim.rs).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadWaits {
    /// The head waits on a line coming from the L2 (FMT's `l1d`).
    pub l1d: WaitSplit,
    /// The head waits on a line coming from memory (FMT's `l2d`).
    pub l2d: WaitSplit,
}

impl HeadWaits {
    /// No such wait counted.
    pub fn is_zero(&self) -> bool {
        *self == HeadWaits::default()
    }
}

/// Why a load at the ROB head waits on a line of one level.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitSplit {
    /// Its own miss: the load took the MSHR that brings the line.
    pub miss: u64,
    /// A pending hit: the line was already on its way, requested by an
    /// earlier demand access (a load or store, on any path) to the same line.
    pub pending_hit: u64,
    /// A pending hit on a line a prefetch requested: the prefetch was late.
    pub late_prefetch: u64,
    /// The load has not started: a level it needs had no MSHR free (the L1D's
    /// or the L2's; counted at the level the line would come from, so an
    /// `l2d` MSHR wait may be for an L1D MSHR).
    pub mshr_wait: u64,
}

impl WaitSplit {
    /// The four counts added up (saturating: a report read back may hold
    /// any numbers).
    pub fn total(&self) -> u64 {
        self.miss
            .saturating_add(self.pending_hit)
            .saturating_add(self.late_prefetch)
            .saturating_add(self.mshr_wait)
    }

    /// Every count with its field's name, in declaration order.
    pub fn named(&self) -> [(&'static str, u64); 4] {
        [
            ("miss", self.miss),
            ("pending_hit", self.pending_hit),
            ("late_prefetch", self.late_prefetch),
            ("mshr_wait", self.mshr_wait),
        ]
    }
}

impl Stats {
    pub fn cpi(&self) -> f64 {
        if self.instructions == 0 {
            0.0
        } else {
            self.cycles as f64 / self.instructions as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `MissCounts::named` names every field, with its value.
    #[test]
    fn named_counts_are_every_field() {
        let m = MissCounts {
            l1i: 1,
            l2i: 2,
            itlb: 3,
            l1d: 4,
            l2d: 5,
            dtlb: 6,
            longlat: 7,
            longlat_cycles: 8,
            mispredicts: 9,
        };
        names_every_field(&m, &m.named());
    }

    /// `named` holds each serialised field of `t`, by name and value, and no other.
    fn names_every_field(t: &impl Serialize, named: &[(&str, u64)]) {
        let j = serde_json::to_value(t).unwrap();
        let fields = j.as_object().unwrap();
        assert_eq!(fields.len(), named.len());
        for (k, v) in named {
            assert_eq!(fields[*k], serde_json::json!(v), "{k}");
        }
    }

    /// `WaitSplit::named` names every field, and `total` adds them all.
    #[test]
    fn wait_split_names_and_adds_every_field() {
        let w = WaitSplit {
            miss: 1,
            pending_hit: 20,
            late_prefetch: 300,
            mshr_wait: 4000,
        };
        names_every_field(&w, &w.named());
        assert_eq!(w.total(), 4321);
    }

    /// `head_waits` is left out when all zero, written otherwise, and a
    /// report without it (or written before it was counted) reads it as zeros.
    #[test]
    fn head_waits_are_left_out_when_zero_and_read_back_as_zeros() {
        let j = serde_json::to_value(Stats::default()).unwrap();
        assert!(j.get("head_waits").is_none(), "{j}");
        let s: Stats = serde_json::from_value(j).unwrap();
        assert_eq!(s.head_waits, HeadWaits::default());
        let mut s = Stats::default();
        s.head_waits.l2d.pending_hit = 7;
        let j = serde_json::to_value(&s).unwrap();
        assert_eq!(j["head_waits"]["l2d"]["pending_hit"], 7);
        assert_eq!(serde_json::from_value::<Stats>(j).unwrap(), s);
    }
}
