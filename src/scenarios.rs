//! Named, hand-built bundle sequences: the scenario table of the counter unit.
//!
//! Each [`Scenario`] is a short stream written from the paper's interval analysis
//! and the spec (`counter-unit.md`), read like a timing diagram: one line per run
//! of identical cycles. The integration tests (`tests/it/scenarios.rs`) hold the
//! counter values worked out by hand for each; `cpistack waves --scenario NAME`
//! dumps their waveforms by name.
//!
//! A scenario's `params.variant` is `fmt`; every scenario is meant to be run with
//! both variants (`params.with_variant(..)`).
//!
//! Building blocks: [`idle`], [`busy`], [`fetch`], [`dispatch`], [`stall`],
//! [`retire`], [`mispredict`], [`flush`], [`redirect`], [`off`] start a bundle
//! (and `.backend_full()` marks a full backend structure other than the ROB);
//! the [`Build`] trait chains more fields onto it
//! (`fetch(1).dispatch(2, 0b10).head(Other)`); [`seq`] expands `(repeat, bundle)` pairs.

use events::{CycleEvents, FetchStall, HeadCause, Params, Squash};

use FetchStall::{Itlb, L1i, L2i};
use HeadCause::{Dtlb, L1d, L2d, Longlat, Other};

/// One named stream of bundles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    pub params: Params,
    pub bundles: Vec<CycleEvents>,
}

/// Chain fields onto a bundle.
pub trait Build: Sized {
    /// `fetched_branches = n`.
    fn fetch(self, n: u8) -> Self;
    /// `dispatched = n`, `dispatched_branches = branch_mask`.
    fn dispatch(self, n: u8, branch_mask: u8) -> Self;
    /// `dispatched_imiss = mask`.
    fn imiss(self, mask: u8) -> Self;
    /// `fetch_stall = kind`.
    fn stall(self, kind: FetchStall) -> Self;
    /// `retired = n`.
    fn retire(self, n: u8) -> Self;
    /// `head = cause`.
    fn head(self, cause: HeadCause) -> Self;
    /// `squash = mispredict(id)`.
    fn mispredict(self, id: u16) -> Self;
    /// `squash = flush(id)`.
    fn flush(self, id: u16) -> Self;
    /// `fe_redirect = 1`, `fe_squash = squash`.
    fn redirect(self, squash: u8) -> Self;
    /// `count_enable = 0`.
    fn off(self) -> Self;
    /// `backend_full = 1`: a full backend structure other than the ROB.
    fn backend_full(self) -> Self;
}

impl Build for CycleEvents {
    fn fetch(mut self, n: u8) -> Self {
        self.fetched_branches = n;
        self
    }
    fn dispatch(mut self, n: u8, branch_mask: u8) -> Self {
        self.dispatched = n;
        self.dispatched_branches = branch_mask;
        self
    }
    fn imiss(mut self, mask: u8) -> Self {
        self.dispatched_imiss = mask;
        self
    }
    fn stall(mut self, kind: FetchStall) -> Self {
        self.fetch_stall = kind;
        self
    }
    fn retire(mut self, n: u8) -> Self {
        self.retired = n;
        self
    }
    fn head(mut self, cause: HeadCause) -> Self {
        self.head = cause;
        self
    }
    fn mispredict(mut self, id: u16) -> Self {
        self.squash = Squash::Mispredict(id);
        self
    }
    fn flush(mut self, id: u16) -> Self {
        self.squash = Squash::Flush(id);
        self
    }
    fn redirect(mut self, squash: u8) -> Self {
        self.fe_redirect = true;
        self.fe_squash = squash;
        self
    }
    fn off(mut self) -> Self {
        self.count_enable = false;
        self
    }
    fn backend_full(mut self) -> Self {
        self.backend_full = true;
        self
    }
}

/// A counted cycle in which nothing happens (the ROB must be empty).
pub fn idle() -> CycleEvents {
    CycleEvents::idle()
}
/// Nothing happens; the ROB holds instructions and its head is not ready (`other`).
pub fn busy() -> CycleEvents {
    idle().head(Other)
}
/// `n` branches finish their fetch.
pub fn fetch(n: u8) -> CycleEvents {
    idle().fetch(n)
}
/// `n` instructions enter the ROB; `branch_mask` bit i: the i-th is a branch.
pub fn dispatch(n: u8, branch_mask: u8) -> CycleEvents {
    idle().dispatch(n, branch_mask)
}
/// Fetch waits on an I-side miss.
pub fn stall(kind: FetchStall) -> CycleEvents {
    idle().stall(kind)
}
/// `n` instructions commit.
pub fn retire(n: u8) -> CycleEvents {
    idle().retire(n)
}
/// The branch with ROB id `id` is found mispredicted.
pub fn mispredict(id: u16) -> CycleEvents {
    idle().mispredict(id)
}
/// A non-branch event squashes ROB id `id` and everything younger.
pub fn flush(id: u16) -> CycleEvents {
    idle().flush(id)
}
/// Decode-time redirect squashing the `squash` youngest fetched branches.
pub fn redirect(squash: u8) -> CycleEvents {
    idle().redirect(squash)
}
/// An idle cycle with counting disabled.
pub fn off() -> CycleEvents {
    idle().off()
}

/// Expand `(repeat, bundle)` pairs into a stream.
pub fn seq(parts: &[(usize, CycleEvents)]) -> Vec<CycleEvents> {
    parts
        .iter()
        .flat_map(|&(n, ev)| (0..n).map(move |_| ev))
        .collect()
}

/// The scenario called `name`.
pub fn by_name(name: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.name == name)
}

fn rob(entries: u32) -> Params {
    Params {
        rob_entries: entries,
        ..Params::default()
    }
}

/// A full ROB whose head waits on `cause` for `k` cycles.
fn rob_full(name: &'static str, description: &'static str, cause: HeadCause, k: usize) -> Scenario {
    Scenario {
        name,
        description,
        params: rob(4),
        bundles: seq(&[
            (1, dispatch(2, 0)),             // c0: ids 0,1
            (1, dispatch(2, 0).head(cause)), // c1: ids 2,3; ROB not yet full: not counted
            (k, idle().head(cause)),         // ROB full, head blocked: counted
            (1, retire(4)),                  // all commit
        ]),
    }
}

/// Every scenario, in table order.
pub fn all() -> Vec<Scenario> {
    let d = Params::default;
    vec![
        Scenario {
            name: "l1i_miss",
            description: "isolated L1 I-miss of 9 cycles: the penalty is the miss delay",
            params: d(),
            bundles: seq(&[
                (9, stall(L1i)),                          // c0-c8: fetch waits on L1 I-miss
                (1, fetch(1)),                            // c9: block + branch B fetched
                (1, dispatch(2, 0b10).imiss(0b01)),       // c10: i (waited on the miss) id0, B id1
                (1, retire(2)),                           // c11
            ]),
        },
        Scenario {
            name: "l2i_miss",
            description: "L2 I-miss of 20 cycles after a branch: charged to the next branch's row",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B0 fetched
                (1, dispatch(2, 0b10).stall(L2i)),        // c1: i id0, B0 id1; fetch misses L2
                (1, retire(2).stall(L2i)),                // c2
                (18, stall(L2i)),                         // c3-c20
                (1, fetch(1)),                            // c21: B1 fetched
                (1, dispatch(1, 0b1).imiss(0b1)),         // c22: B1 id2, it waited on the miss
                (1, retire(1)),                           // c23
            ]),
        },
        Scenario {
            name: "itlb_miss",
            description: "I-TLB miss of 7 cycles, then an L1 I-miss of 3 on the same fetch",
            params: d(),
            bundles: seq(&[
                (7, stall(Itlb)),                         // c0-c6
                (3, stall(L1i)),                          // c7-c9
                (1, fetch(1)),                            // c10
                (1, dispatch(3, 0b100).imiss(0b001)),     // c11: ids 0,1 and B id2
                (1, busy()),                              // c12
                (1, retire(3)),                           // c13
            ]),
        },
        Scenario {
            name: "mispredict",
            description: "isolated misprediction: penalty from the branch entering the ROB until the correct path enters it (that cycle not lost)",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B fetched
                (1, dispatch(2, 0b10).fetch(1)),          // c1: i id0, B id1; wrong-path W fetched
                (1, retire(1).dispatch(2, 0b01)),         // c2: i commits; W id2, w id3
                (1, busy()),                              // c3
                (1, busy().mispredict(1)),                // c4: B resolved, W,w squashed
                (1, busy()),                              // c5
                (1, retire(1)),                           // c6: B commits
                (1, idle()),                              // c7: refill
                (1, dispatch(2, 0)),                      // c8: correct path enters the ROB
                (1, retire(2)),                           // c9
            ]),
        },
        Scenario {
            name: "mispredict_done_before_commit",
            description: "misprediction whose correct path enters the ROB before the branch commits (head blocked by an older op, ROB never full)",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0
                (1, dispatch(2, 0b10)),                   // c1: ld id0, B id1
                (1, idle().head(Longlat)),                // c2
                (1, idle().head(Longlat).mispredict(1)),  // c3
                (1, idle().head(Longlat)),                // c4
                (1, dispatch(2, 0).head(Longlat)),        // c5: correct path ids 2,3
                (2, idle().head(Longlat)),                // c6-c7
                (1, retire(2)),                           // c8: ld, B commit
                (1, retire(2)),                           // c9
            ]),
        },
        Scenario {
            name: "mispredict_refill_imiss",
            description: "misprediction whose refill meets a 4-cycle L1 I-miss (FMT: I-cache; sFMT: the branch)",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B fetched
                (1, dispatch(1, 0b1)),                    // c1: B id0
                (1, busy()),                              // c2
                (1, busy().mispredict(0)),                // c3: B resolved
                (1, stall(L1i).head(Other)),              // c4: refill misses in L1 I
                (1, stall(L1i).retire(1)),                // c5: B commits
                (2, stall(L1i)),                          // c6-c7
                (1, fetch(1)),                            // c8: B2 fetched
                (1, dispatch(2, 0b10).imiss(0b01)),       // c9: i id1 (waited), B2 id2
                (1, retire(2)),                           // c10
            ]),
        },
        Scenario {
            name: "imiss_wrong_path",
            description: "L2 I-miss on a mispredicted path: counted by neither variant",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B fetched
                (1, dispatch(1, 0b1).stall(L2i)),         // c1: B id0; wrong path misses L2
                (4, stall(L2i).head(Other)),              // c2-c5
                (1, stall(L2i).head(Other).mispredict(0)),// c6: B resolved
                (1, busy()),                              // c7
                (1, retire(1)),                           // c8: B commits
                (1, idle()),                              // c9
                (1, dispatch(1, 0)),                      // c10: correct path
                (1, retire(1)),                           // c11
            ]),
        },
        Scenario {
            name: "sfmt_imiss_mispredict_imiss",
            description: "I-miss, mispredicted branch, I-miss on its wrong path: sFMT charges the wrong-path miss, FMT does not",
            params: d(),
            bundles: seq(&[
                (4, stall(L1i)),                          // c0-c3: correct-path miss
                (1, fetch(1)),                            // c4: X block + B fetched
                (1, dispatch(2, 0b10).imiss(0b01)),       // c5: X id0 (waited), B id1
                (3, stall(L1i).head(Other)),              // c6-c8: wrong-path miss
                (1, busy().mispredict(1)),                // c9: B resolved
                (1, retire(1)),                           // c10: X commits
                (1, retire(1)),                           // c11: B commits
                (1, dispatch(1, 0)),                      // c12: correct path
                (1, retire(1)),                           // c13
            ]),
        },
        Scenario {
            name: "sfmt_imiss_marked_mispredicted_branch",
            description: "the I-miss-marked instruction is itself the mispredicted branch: its I-miss bit is handled first",
            params: d(),
            bundles: seq(&[
                (3, stall(L1i)),                          // c0-c2
                (1, fetch(1)),                            // c3
                (1, dispatch(1, 0b1).imiss(0b1)),         // c4: B id0, marked
                (1, busy().mispredict(0)),                // c5
                (1, retire(1)),                           // c6: B commits
                (1, dispatch(1, 0)),                      // c7
                (1, retire(1)),                           // c8
            ]),
        },
        Scenario {
            name: "overlapping_long_dmisses",
            description: "two independent L2 D-misses within one ROB's worth: one penalty, from ROB full to data return",
            params: rob(8),
            bundles: seq(&[
                (1, dispatch(4, 0)),                      // c0: ids 0-3; A=id0, B=id2 miss in L2
                (1, dispatch(4, 0).head(L2d)),            // c1: ids 4-7; ROB not yet full
                (10, idle().head(L2d)),                   // c2-c11: ROB full, A at the head
                (1, retire(2)),                           // c12: A's data returned
                (1, retire(4).dispatch(2, 0)),            // c13: B's data already back; ids 0,1 (wrap)
                (1, retire(4)),                           // c14
            ]),
        },
        rob_full("rob_full_l1d", "full ROB, head an L1 D-miss for 3 cycles", L1d, 3),
        rob_full("rob_full_l2d", "full ROB, head an L2 D-miss for 5 cycles", L2d, 5),
        rob_full("rob_full_dtlb", "full ROB, head a D-TLB miss for 4 cycles", Dtlb, 4),
        rob_full("rob_full_longlat", "full ROB, head a long-latency op for 6 cycles", Longlat, 6),
        rob_full("rob_full_other", "full ROB, head blocked by something else for 7 cycles: counted nowhere", Other, 7),
        Scenario {
            name: "rob_full_retires",
            description: "a full ROB that retires each cycle (with fetch stalls and a dispatched branch): counted nowhere",
            params: rob(4),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B fetched
                (1, dispatch(4, 0b0010)),                 // c1: ids 0-3, B id1; ROB full
                (3, retire(1).dispatch(1, 0).stall(L1i)), // c2-c4: full, one in one out
                (1, retire(4)),                           // c5
            ]),
        },
        Scenario {
            name: "rob_full_masks_frontend",
            description: "full ROB with an L2 D-miss head during an I-miss: only l2d counts until the ROB is not full",
            params: rob(4),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B fetched
                (1, dispatch(4, 0b0010)),                 // c1: ids 0-3, B id1
                (3, stall(L1i).head(L2d)),                // c2-c4: full, head L2 D-miss
                (1, stall(L1i).retire(1)),                // c5: full, head commits
                (1, stall(L1i).head(Other)),              // c6: not full
                (1, retire(3)),                           // c7
            ]),
        },
        Scenario {
            name: "backend_full_masks_frontend",
            description: "a full load/store queue (backend_full) with a non-full ROB: counted like a full ROB, to the head's miss, and hides an I-miss and a branch's growth",
            params: rob(8),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B fetched
                (1, dispatch(2, 0b10)),                   // c1: ld id0, B id1; ROB 2 of 8
                (1, busy().backend_full()),               // c2: window full, head other: nowhere
                (3, stall(L1i).head(L2d).backend_full()), // c3-c5: window full, head L2 D-miss
                (1, stall(L1i).head(L2d)),                // c6: window open again
                (1, retire(2)),                           // c7
            ]),
        },
        Scenario {
            name: "backend_full_masks_refill",
            description: "a mispredicted branch's penalty does not grow while the backend is full (backend_full), as with a full ROB",
            params: rob(8),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B fetched
                (1, dispatch(2, 0b10)),                   // c1: ld id0, B id1
                (1, idle().head(L2d).mispredict(1)),      // c2: B resolved mispredicted
                (3, idle().head(L2d).backend_full()),     // c3-c5: window full: l2d
                (2, idle().head(L2d)),                    // c6-c7: refill, window open
                (1, dispatch(1, 0).head(L2d)),            // c8: B's correct path enters
                (1, retire(3)),                           // c9
            ]),
        },
        Scenario {
            name: "backend_full_masks_refill_pending",
            description: "the refill after a mispredicted branch has committed (refill_pending) is not charged while the backend is full, with the ROB empty",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B fetched
                (1, dispatch(1, 0b1)),                    // c1: B id0
                (1, busy().mispredict(0)),                // c2: B resolved mispredicted
                (1, retire(1)),                           // c3: B commits first: refill_pending
                (2, idle().backend_full()),               // c4-c5: ROB empty, store queue full
                (1, idle()),                              // c6: refill, window open
                (1, dispatch(1, 0)),                      // c7: the correct path enters
                (1, retire(1)),                           // c8
            ]),
        },
        Scenario {
            name: "backend_full_with_an_empty_rob_charges_nothing",
            description: "an L1 I-miss while the backend is full (backend_full) and the ROB empty: the window is full, so the stall is charged nowhere (base), in both variants",
            params: d(),
            bundles: seq(&[
                (5, stall(L1i).backend_full()),           // c0-c4: ROB empty, queue full, I-miss
                (1, fetch(1)),                            // c5: B fetched, takes the (0) stalls
                (1, dispatch(1, 0b1).imiss(0b1)),         // c6: B id0, marked
                (1, retire(1)),                           // c7: B commits: adds 0
            ]),
        },
        Scenario {
            name: "back_to_back_mispredicts",
            description: "the first correct-path branch after a misprediction is itself mispredicted",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B1
                (1, dispatch(1, 0b1)),                    // c1: B1 id0
                (1, busy().mispredict(0)),                // c2: B1 resolved
                (1, fetch(1).head(Other)),                // c3: B2 on B1's correct path
                (1, dispatch(1, 0b1).head(Other)),        // c4: B2 id1: B1's refill ends
                (1, retire(1).mispredict(1)),             // c5: B1 commits, B2 resolved
                (1, busy()),                              // c6
                (1, retire(1)),                           // c7: B2 commits
                (1, dispatch(2, 0)),                      // c8: B2's correct path
                (1, retire(2)),                           // c9
            ]),
        },
        Scenario {
            name: "wrong_path_branch_mispredict",
            description: "a wrong-path branch W mispredicts first; its refill meets an I-miss; then the older B mispredicts",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B
                (1, dispatch(1, 0b1).fetch(1)),           // c1: B id0; W fetched
                (1, dispatch(1, 0b1).head(Other)),        // c2: W id1
                (1, busy().mispredict(1)),                // c3: W resolved
                (1, stall(L1i).head(Other)),              // c4: W's refill misses in L1 I
                (1, busy().mispredict(0)),                // c5: B resolved: W squashed
                (1, retire(1)),                           // c6: B commits
                (1, idle()),                              // c7
                (1, dispatch(1, 0)),                      // c8: correct path
                (1, retire(1)),                           // c9
            ]),
        },
        Scenario {
            name: "older_mispredict_after_younger_refill",
            description: "a younger wrong-path branch W resolves and refills, then the older B mispredicts",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B
                (1, dispatch(1, 0b1).fetch(1)),           // c1: B id0; W fetched
                (1, dispatch(2, 0b01).head(Other)),       // c2: W id1, w id2
                (1, fetch(1).head(Other)),                // c3: W2 fetched
                (1, busy().mispredict(1)),                // c4: W resolved: w, W2 squashed
                (1, dispatch(1, 0).head(Other)),          // c5: W's target path id2
                (1, busy()),                              // c6
                (1, busy().mispredict(0)),                // c7: B resolved
                (1, retire(1)),                           // c8: B commits
                (1, dispatch(1, 0)),                      // c9: correct path
                (1, retire(1)),                           // c10
            ]),
        },
        Scenario {
            name: "fe_redirect_squash",
            description: "decode-time redirect squashing one fetched branch (FMT drops the redirected path's stalls, sFMT keeps them)",
            params: d(),
            bundles: seq(&[
                (1, fetch(2)),                            // c0: B0, B1
                (1, dispatch(1, 0b1).stall(L1i)),         // c1: B0 id0; fetch past B1 misses
                (1, fetch(1).head(Other)),                // c2: B2
                (1, stall(L1i).head(Other)),              // c3
                (1, busy().redirect(1)),                  // c4: B1's target wrong: B2 squashed
                (1, dispatch(1, 0b1).stall(L1i).head(Other)), // c5: B1 id1; new path misses
                (1, stall(L1i).head(Other)),              // c6
                (1, fetch(1).retire(2)),                  // c7: B3; B0, B1 commit
                (1, dispatch(2, 0b10).imiss(0b01)),       // c8: i id2 (waited), B3 id3
                (1, retire(2)),                           // c9
            ]),
        },
        Scenario {
            name: "fe_redirect_no_squash",
            description: "redirects squashing no branch (only the accumulation row) and the branch fetched in the same cycle",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B0
                (1, dispatch(1, 0b1).stall(Itlb)),        // c1: B0 id0; I-TLB miss
                (1, stall(Itlb).head(Other)),             // c2
                (1, busy().redirect(0)),                  // c3: redirect, no branch squashed
                (1, fetch(2).redirect(1).head(Other)),    // c4: B1, B2 fetched; B2 squashed
                (1, dispatch(1, 0b1).head(Other)),        // c5: B1 id1
                (1, retire(2)),                           // c6
            ]),
        },
        Scenario {
            name: "flush",
            description: "a non-branch flush squashes itself, a younger branch and the accumulated stalls; nothing is charged",
            params: d(),
            bundles: seq(&[
                (1, fetch(2)),                            // c0: B0, B1
                (1, dispatch(3, 0b010)),                  // c1: i id0, B0 id1, j id2
                (1, dispatch(2, 0b01).stall(L1i).head(Other)), // c2: B1 id3, k id4
                (1, busy().flush(2)),                     // c3: j flushes j, B1, k
                (1, fetch(1).head(Other)),                // c4: B1 again
                (1, dispatch(3, 0b010).head(Other)),      // c5: j id2, B1 id3, k id4
                (1, retire(4)),                           // c6
                (1, retire(1)),                           // c7
            ]),
        },
        Scenario {
            name: "flush_older_than_mispredict",
            description: "a flush of an instruction older than a resolved mispredicted branch: refill cancelled, nothing charged",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B
                (1, dispatch(2, 0b10)),                   // c1: ld id0, B id1
                (1, busy().mispredict(1)),                // c2: B resolved
                (1, busy().flush(0)),                     // c3: ld faults: ld and B squashed
                (1, idle()),                              // c4
                (1, dispatch(1, 0)),                      // c5
                (1, retire(1)),                           // c6
            ]),
        },
        Scenario {
            name: "warmup",
            description: "count_enable off during warm-up: state moves, nothing counts; counting resumes mid-misprediction",
            params: d(),
            bundles: seq(&[
                (1, fetch(1).off()),                      // c0: B
                (1, dispatch(1, 0b1).stall(L1i).off()),   // c1: B id0
                (1, busy().off()),                        // c2
                (1, busy().mispredict(0).off()),          // c3
                (1, busy()),                              // c4: counting on
                (1, retire(1)),                           // c5: B commits
                (1, off()),                               // c6
                (1, dispatch(1, 0)),                      // c7
                (1, retire(1).off()),                     // c8
            ]),
        },
        Scenario {
            name: "warmup_commit_drops_icounts",
            description: "a branch carrying I-stalls (and sFMT's marked instruction) commits with count_enable off: nothing is added, the stalls are dropped",
            params: d(),
            bundles: seq(&[
                (2, stall(L1i)),                          // c0-c1: acc / shared l1i 2
                (1, fetch(1)),                            // c2: B claims row0 (l1i 2)
                (1, dispatch(1, 0b1).imiss(0b1)),         // c3: B id0, I-miss marked
                (1, retire(1).off()),                     // c4 off: B commits
                (1, dispatch(1, 0)),                      // c5: i id1
                (1, retire(1)),                           // c6
            ]),
        },
        Scenario {
            name: "first_fetched_branch_takes_stalls",
            description: "two branches fetched in one cycle: the older takes the stalls, the younger a zero row; a misprediction of the older squashes the younger and charges the stalls once",
            params: d(),
            bundles: seq(&[
                (2, stall(L1i)),                          // c0-c1: acc / shared l1i 2
                (1, fetch(2)),                            // c2: B0 (l1i 2), B1 (0)
                (1, dispatch(2, 0b11).imiss(0b01)),       // c3: B0 id0 (marked), B1 id1
                (1, busy().mispredict(0)),                // c4: B0 mispredicted, B1 squashed
                (1, retire(1)),                           // c5: B0 commits
                (1, dispatch(1, 0)),                      // c6: correct path, i id1
                (1, retire(1)),                           // c7
            ]),
        },
        Scenario {
            name: "no_free_row",
            description: "FMT with 2 rows: one branch in flight at a time, the next fetched in the cycle the previous retires",
            params: Params {
                fmt_rows: 2,
                ..d()
            },
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B0
                (1, dispatch(1, 0b1)),                    // c1: B0 id0
                (1, busy()),                              // c2
                (1, retire(1).fetch(1)),                  // c3: B0 commits, B1 fetched
                (1, dispatch(1, 0b1)),                    // c4: B1 id1
                (1, stall(L1i).head(Other)),              // c5
                (1, stall(L1i).retire(1)),                // c6: B1 commits
                (1, fetch(1)),                            // c7: B2
                (1, dispatch(2, 0b10).imiss(0b01)),       // c8: i id2 (waited), B2 id3
                (1, retire(2)),                           // c9
            ]),
        },
        Scenario {
            name: "local_saturation",
            description: "local_bits 2: row and shared I-counters and the branch penalty stop at 3",
            params: Params {
                local_bits: 2,
                ..d()
            },
            bundles: seq(&[
                (5, stall(L1i)),                          // c0-c4
                (1, fetch(1)),                            // c5: B
                (1, dispatch(2, 0b10).imiss(0b01)),       // c6: i id0 (waited), B id1
                (5, busy()),                              // c7-c11
                (1, busy().mispredict(1)),                // c12
                (1, retire(2)),                           // c13
                (4, idle()),                              // c14-c17
                (1, dispatch(1, 0)),                      // c18
                (1, retire(1)),                           // c19
            ]),
        },
        Scenario {
            name: "penalty_saturation",
            description: "local_bits 1: a branch penalty stops at 1 and sets the sticky saturated flag",
            params: Params {
                local_bits: 1,
                ..d()
            },
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B
                (1, dispatch(1, 0b1)),                    // c1: B id0
                (2, busy()),                              // c2-c3
                (1, busy().mispredict(0)),                // c4
                (1, retire(1)),                           // c5
                (1, dispatch(1, 0)),                      // c6
                (1, retire(1)),                           // c7
            ]),
        },
        Scenario {
            name: "global_wrap",
            description: "global_bits 8: cycles, l2d and bpred wrap modulo 256 and set their sticky overflow flags",
            params: Params {
                global_bits: 8,
                rob_entries: 4,
                ..d()
            },
            bundles: seq(&[
                (1, dispatch(4, 0)),                      // c0: ids 0-3
                (260, idle().head(L2d)),                  // c1-c260: ROB full
                (1, retire(4)),                           // c261
                (1, fetch(1)),                            // c262: B
                (1, dispatch(1, 0b1)),                    // c263: B id0
                (298, busy()),                            // c264-c561
                (1, busy().mispredict(0)),                // c562
                (1, retire(1)),                           // c563: bpred += 300
                (1, idle()),                              // c564
                (1, dispatch(1, 0)),                      // c565
                (1, retire(1)),                           // c566
            ]),
        },
        Scenario {
            name: "pending_at_end",
            description: "the run ends with a mispredicted branch uncommitted and stalls in rows: pending sums, not globals",
            params: d(),
            bundles: seq(&[
                (3, stall(L1i)),                          // c0-c2
                (1, fetch(1)),                            // c3: B0
                (1, dispatch(2, 0b10).imiss(0b01)),       // c4: i id0 (waited), B0 id1
                (1, stall(Itlb).head(Other)),             // c5
                (1, fetch(1).head(Other)),                // c6: B1
                (1, busy().mispredict(1)),                // c7: B0 resolved, B1 squashed
                (2, stall(L2i).head(Other)),              // c8-c9: refill misses in L2
            ]),
        },
        Scenario {
            name: "rejected_bundle",
            description: "a misprediction naming an id not in the ROB is rejected: nothing changes, later bundles ignored",
            params: d(),
            bundles: seq(&[
                (1, fetch(1)),                            // c0: B
                (1, dispatch(1, 0b1)),                    // c1: B id0
                (1, busy()),                              // c2
                (1, busy().mispredict(5)),                // c3: id 5 not in the ROB: rule 9
                (1, retire(1)),                           // c4: ignored
                (1, idle()),                              // c5: ignored
            ]),
        },
    ]
}
