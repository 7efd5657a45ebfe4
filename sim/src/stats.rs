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
        let j = serde_json::to_value(m).unwrap();
        let fields = j.as_object().unwrap();
        assert_eq!(fields.len(), m.named().len());
        for (k, v) in m.named() {
            assert_eq!(fields[k], serde_json::json!(v), "{k}");
        }
    }
}
