//! Hand-built bundle sequences with hand-worked expectations. Cycle numbers in
//! comments are bundle indices from 0.

use events::{
    Counter, CounterUnit, CycleEvents, FetchStall, Field, HeadCause, Params, ProtocolError,
    RowView, Squash, UnitView, Variant,
};

use crate::{BranchTimes, Unit};

const BOTH: [Variant; 2] = [Variant::Fmt, Variant::Sfmt];

fn params(variant: Variant) -> Params {
    Params {
        rob_entries: 16,
        fmt_rows: 8,
        variant,
        ..Params::default()
    }
}

/// A test bench: steps bundles, fills in `head = other` when the ROB holds
/// something and nothing retires (unless the bundle names a cause), and insists
/// every bundle is accepted.
struct Tb {
    u: Unit,
}

impl Tb {
    fn new(p: Params) -> Tb {
        Tb {
            u: Unit::new(p).expect("legal params"),
        }
    }
    fn step(&mut self, ev: CycleEvents) {
        let mut ev = ev;
        if ev.head == HeadCause::None && ev.retired == 0 && self.u.view().rob_count > 0 {
            ev.head = HeadCause::Other;
        }
        let cycle = self.u.accepted();
        self.u.step(&ev);
        assert_eq!(self.u.view().error, None, "cycle {cycle}: {ev:?} rejected");
    }
    fn run(&mut self, n: usize, ev: CycleEvents) {
        for _ in 0..n {
            self.step(ev);
        }
    }
    fn v(&self) -> UnitView {
        self.u.view()
    }
    fn c(&self, c: Counter) -> u64 {
        self.u.view().counters.get(c)
    }
    fn rows(&self) -> Vec<RowView> {
        let mut out = Vec::new();
        self.u.for_each_row(&mut |age, r| {
            assert_eq!(age, out.len());
            out.push(r);
        });
        out
    }
    fn times(&self) -> Vec<BranchTimes> {
        self.u.branch_times().collect()
    }
    /// The eight components never add up to more than `cycles` (FMT, no overflow).
    fn assert_no_double_charge(&self) {
        let v = self.v();
        let comp: u64 = Counter::COMPONENTS.iter().map(|&c| v.counters.get(c)).sum();
        assert!(comp <= v.counters.get(Counter::Cycles), "{v:?}");
    }
}

fn idle() -> CycleEvents {
    CycleEvents::idle()
}
fn stall(s: FetchStall) -> CycleEvents {
    CycleEvents {
        fetch_stall: s,
        ..idle()
    }
}
fn fetch(n: u8) -> CycleEvents {
    CycleEvents {
        fetched_branches: n,
        ..idle()
    }
}
fn dispatch(n: u8, branches: u8) -> CycleEvents {
    CycleEvents {
        dispatched: n,
        dispatched_branches: branches,
        ..idle()
    }
}
fn retire(n: u8) -> CycleEvents {
    CycleEvents {
        retired: n,
        ..idle()
    }
}
fn squash(s: Squash) -> CycleEvents {
    CycleEvents {
        squash: s,
        ..idle()
    }
}
fn kinds() -> [(FetchStall, Counter, usize); 3] {
    [
        (FetchStall::L1i, Counter::L1i, 0),
        (FetchStall::L2i, Counter::L2i, 1),
        (FetchStall::Itlb, Counter::Itlb, 2),
    ]
}

// ----- construction -----

#[test]
fn new_rejects_illegal_params() {
    let p = Params {
        fmt_rows: 48,
        ..Params::default()
    };
    assert_eq!(Unit::new(p).unwrap_err().name, "fmt_rows");
    let p = Params {
        local_bits: 0,
        ..Params::default()
    };
    assert_eq!(Unit::new(p).unwrap_err().name, "local_bits");
}

#[test]
fn reset_state_is_empty() {
    for var in BOTH {
        let tb = Tb::new(params(var));
        let v = tb.v();
        assert_eq!(
            v,
            UnitView {
                free_rows: 7,
                ..UnitView::default()
            }
        );
        assert_eq!(tb.rows(), vec![RowView::default()]);
    }
}

// ----- I-side -----

#[test]
fn isolated_imiss_fmt_charged_when_its_branch_commits() {
    for (s, c, k) in kinds() {
        let mut tb = Tb::new(params(Variant::Fmt));
        tb.run(5, stall(s)); // 0..=4
        assert_eq!(tb.rows()[0].l1i + tb.rows()[0].l2i + tb.rows()[0].itlb, 5);
        tb.step(fetch(1)); // 5: the branch closes its basic block
        let rows = tb.rows();
        assert_eq!(rows.len(), 2);
        let i = [rows[0].l1i, rows[0].l2i, rows[0].itlb];
        assert_eq!(i[k], 5, "{s:?}");
        assert_eq!(i.iter().sum::<u32>(), 5);
        assert_eq!(rows[1], RowView::default(), "accumulation row restarts");
        assert!(!rows[0].dispatched);
        assert_eq!(tb.v().fetched_rows, 1);
        tb.step(dispatch(2, 0b10)); // 6: branch is id 1
        assert_eq!(tb.rows()[0].rob_id, 1);
        assert!(tb.rows()[0].dispatched);
        let pend = tb.v().pending;
        assert_eq!([pend.l1i, pend.l2i, pend.itlb][k], 5);
        assert_eq!(tb.c(c), 0, "not charged before commit");
        tb.step(retire(1)); // 7: not the branch yet
        assert_eq!(tb.c(c), 0);
        tb.step(retire(1)); // 8: the branch commits
        assert_eq!(tb.c(c), 5);
        assert_eq!(tb.c(Counter::Cycles), 9);
        assert_eq!(tb.c(Counter::Retired), 2);
        assert_eq!(tb.v().pending, Default::default());
        assert_eq!(tb.c(Counter::Bpred), 0, "a correctly predicted branch");
        tb.assert_no_double_charge();
    }
}

#[test]
fn isolated_imiss_sfmt_charged_when_marked_instruction_commits() {
    for (s, c, k) in kinds() {
        let mut tb = Tb::new(params(Variant::Sfmt));
        tb.run(7, stall(s)); // 0..=6
        assert_eq!(tb.v().shared_i[k], 7);
        assert_eq!(
            tb.rows()[0],
            RowView::default(),
            "sFMT rows hold no I-counts"
        );
        tb.step(CycleEvents {
            dispatched: 2,
            dispatched_imiss: 0b01,
            ..idle()
        }); // 7: ids 0 (marked), 1
        assert_eq!(tb.v().imiss_bits, 1);
        assert!(tb.u.imiss_bit(0));
        assert!(!tb.u.imiss_bit(1));
        assert!(!tb.u.imiss_bit(2), "not live");
        assert!(!tb.u.imiss_bit(999), "out of range");
        let pend = tb.v().pending;
        assert_eq!([pend.l1i, pend.l2i, pend.itlb][k], 7);
        tb.step(retire(1)); // 8
        assert_eq!(tb.c(c), 7, "{s:?}");
        assert_eq!(tb.v().shared_i, [0; 3]);
        assert_eq!(tb.v().imiss_bits, 0);
        assert_eq!(tb.v().pending, Default::default());
    }
}

#[test]
fn fetch_stalls_of_a_squashed_path_and_redirects_are_dropped_fmt() {
    let mut tb = Tb::new(params(Variant::Fmt));
    tb.run(2, stall(FetchStall::L1i)); // 0,1
    tb.step(fetch(2)); // 2: first branch holds 2, the second 0
    tb.step(stall(FetchStall::L2i)); // 3
    tb.step(CycleEvents {
        fe_redirect: true,
        fe_squash: 1,
        ..stall(FetchStall::L2i)
    }); // 4: drops the younger branch and the l2i stalls (this cycle's too)
    let rows = tb.rows();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].l1i, 2);
    assert_eq!(rows[1], RowView::default());
    assert_eq!(tb.v().free_rows, 6);
    assert_eq!(tb.v().pending.l1i, 2);
    assert_eq!(tb.v().pending.l2i, 0);
    // A redirect squashing nothing still restarts the basic block.
    tb.step(stall(FetchStall::Itlb)); // 5
    tb.step(CycleEvents {
        fe_redirect: true,
        ..idle()
    }); // 6
    assert_eq!(tb.rows()[1], RowView::default());
    // fe_squash counts this cycle's fetches first.
    tb.step(CycleEvents {
        fetched_branches: 1,
        fe_redirect: true,
        fe_squash: 2,
        ..idle()
    }); // 7
    assert_eq!(tb.v().fetched_rows, 0);
    assert_eq!(tb.v().pending.l1i, 0);
    assert_eq!(tb.c(Counter::Cycles), 8);
}

#[test]
fn fetch_redirect_keeps_stalls_in_sfmt_shared_counters() {
    let mut tb = Tb::new(params(Variant::Sfmt));
    tb.run(3, stall(FetchStall::L2i));
    tb.step(CycleEvents {
        fe_redirect: true,
        ..stall(FetchStall::L2i)
    });
    assert_eq!(tb.v().shared_i, [0, 4, 0]);
}

// ----- branch mispredictions -----

#[test]
fn mispredict_penalty_is_dispatch_to_correct_path_dispatch() {
    for var in BOTH {
        let mut tb = Tb::new(params(var));
        tb.step(fetch(1)); // 0
        tb.step(dispatch(1, 0b1)); // 1: d = 1, id 0
        tb.run(2, idle()); // 2,3
        assert_eq!(tb.rows()[0].penalty, 2, "grows while unresolved");
        tb.step(squash(Squash::Mispredict(0))); // 4
        assert!(tb.v().refilling);
        assert_eq!(tb.rows()[0].penalty, 3);
        assert!(tb.rows()[0].mispredict);
        assert_eq!(tb.v().pending.bpred, 3);
        tb.run(3, idle()); // 5,6,7
        tb.step(dispatch(2, 0)); // 8: e = 8, ids 1,2 (this cycle is not lost)
        assert!(!tb.v().refilling);
        let r = tb.rows()[0];
        assert!(r.done && r.mispredict);
        assert_eq!(r.penalty, 6, "e - d - 1");
        assert_eq!(
            tb.times()[0],
            BranchTimes {
                fetched_at: 0,
                dispatched_at: Some(1),
                resolved_at: Some(4),
                done_at: Some(8),
            }
        );
        tb.run(2, idle()); // 9,10: frozen once done
        assert_eq!(tb.rows()[0].penalty, 6);
        assert_eq!(tb.c(Counter::Bpred), 0);
        tb.step(retire(3)); // 11
        assert_eq!(tb.c(Counter::Bpred), 6, "{var}");
        assert_eq!(tb.v().pending.bpred, 0);
        assert_eq!(tb.v().dispatched_rows, 0);
        tb.assert_no_double_charge();
    }
}

#[test]
fn mispredicted_branch_committing_before_its_correct_path_uses_refill_pending() {
    for var in BOTH {
        let mut tb = Tb::new(params(var));
        tb.step(fetch(1)); // 0
        tb.step(dispatch(1, 0b1)); // 1: d = 1
        tb.step(squash(Squash::Mispredict(0))); // 2
        tb.step(retire(1)); // 3: commits with penalty 2 (cycles 2, 3)
        assert_eq!(tb.c(Counter::Bpred), 2);
        assert!(tb.v().refill_pending);
        assert_eq!(tb.v().dispatched_rows, 0);
        tb.step(idle()); // 4
        assert_eq!(
            tb.c(Counter::Bpred),
            3,
            "refill cycles charged as they pass"
        );
        tb.step(idle()); // 5
        assert_eq!(tb.c(Counter::Bpred), 4);
        tb.step(dispatch(1, 0)); // 6: e = 6, not lost
        assert_eq!(tb.c(Counter::Bpred), 4, "e - d - 1");
        assert!(!tb.v().refill_pending && !tb.v().refilling);
        tb.step(idle()); // 7
        assert_eq!(tb.c(Counter::Bpred), 4);
        tb.assert_no_double_charge();
    }
}

#[test]
fn imiss_while_refilling_goes_to_icache_in_fmt_and_to_the_branch_in_sfmt() {
    for var in BOTH {
        let mut tb = Tb::new(params(var));
        tb.step(fetch(1)); // 0: branch B
        tb.step(dispatch(1, 0b1)); // 1: d = 1
        tb.step(squash(Squash::Mispredict(0))); // 2
        tb.run(3, stall(FetchStall::L1i)); // 3,4,5: correct path misses in L1I
        tb.step(fetch(1)); // 6: branch C closes the block
        tb.step(dispatch(1, 0b1)); // 7: e = 7
        tb.step(retire(2)); // 8: B and C commit
        let (bpred, l1i) = (tb.c(Counter::Bpred), tb.c(Counter::L1i));
        match var {
            // FMT: cycles 2 and 6; sFMT: 2 to 6 (cycle 7, e, is not lost).
            Variant::Fmt => assert_eq!((bpred, l1i), (2, 3)),
            Variant::Sfmt => assert_eq!((bpred, l1i), (5, 0)),
        }
        assert_eq!(
            tb.v().shared_i,
            [0; 3],
            "sFMT counts no stall while refilling"
        );
        tb.assert_no_double_charge();
    }
}

#[test]
fn fmt_stall_during_refill_pending_is_not_charged_to_bpred() {
    let mut tb = Tb::new(params(Variant::Fmt));
    tb.step(fetch(1)); // 0
    tb.step(dispatch(1, 0b1)); // 1
    tb.step(squash(Squash::Mispredict(0))); // 2
    tb.step(retire(1)); // 3: bpred 2
    tb.run(2, stall(FetchStall::Itlb)); // 4,5
    assert_eq!(tb.c(Counter::Bpred), 2);
    tb.step(fetch(1)); // 6
    assert_eq!(tb.c(Counter::Bpred), 3);
    assert_eq!(tb.rows()[0].itlb, 2);
}

#[test]
fn older_branch_mispredicting_after_a_younger_one_refilled() {
    let mut tb = Tb::new(params(Variant::Fmt));
    tb.step(fetch(2)); // 0: B1, B2
    tb.step(dispatch(2, 0b11)); // 1: ids 0, 1
    tb.step(squash(Squash::Mispredict(1))); // 2: B2 (a wrong-path branch, as it turns out)
    tb.step(dispatch(1, 0)); // 3: B2 done with penalty 1 (cycle 2; 3 is not lost)
    assert_eq!(tb.rows()[1].penalty, 1);
    assert!(tb.rows()[1].done);
    assert_eq!(tb.v().pending.bpred, 1);
    tb.step(squash(Squash::Mispredict(0))); // 4: B1; B2 and id 2 squashed
    assert_eq!(tb.v().dispatched_rows, 1);
    assert_eq!(tb.v().rob_count, 1);
    assert_eq!(tb.v().pending.bpred, 3);
    tb.step(dispatch(1, 0)); // 5: e = 5, id 1 reused
    assert_eq!(tb.rows()[0].penalty, 3);
    tb.step(retire(1)); // 6
    assert_eq!(tb.c(Counter::Bpred), 3, "only the older branch, e - d - 1");
    assert_eq!(tb.v().pending.bpred, 0);
}

#[test]
fn back_to_back_mispredictions() {
    let mut tb = Tb::new(params(Variant::Fmt));
    tb.step(fetch(1)); // 0
    tb.step(dispatch(1, 0b1)); // 1: B1 id 0
    tb.step(squash(Squash::Mispredict(0))); // 2
    tb.step(fetch(1)); // 3: B2 on the correct path of B1
    tb.step(dispatch(1, 0b1)); // 4: B1 done (2), B2 id 1 dispatched
    tb.step(squash(Squash::Mispredict(1))); // 5: B2 mispredicted (1)
    tb.step(dispatch(1, 0)); // 6: B2 done (1)
    tb.step(retire(3)); // 7
    assert_eq!(tb.c(Counter::Bpred), 3, "(4-1-1) + (6-4-1)");
    tb.assert_no_double_charge();
}

#[test]
fn flush_drops_rows_charges_nothing_and_reuses_ids() {
    for var in BOTH {
        let mut tb = Tb::new(params(var));
        tb.step(fetch(2)); // 0
        tb.step(CycleEvents {
            dispatched: 4,
            dispatched_branches: 0b0101,
            dispatched_imiss: 0b1000,
            ..idle()
        }); // 1: ids 0 (B1) 1 2 (B2) 3 (marked)
        tb.step(squash(Squash::Flush(1))); // 2: keeps id 0
        let v = tb.v();
        assert_eq!((v.rob_count, v.dispatched_rows, v.fetched_rows), (1, 1, 0));
        assert_eq!(v.imiss_bits, 0);
        assert!(!v.refilling);
        tb.step(dispatch(2, 0)); // 3: ids 1, 2 again
        assert_eq!(tb.v().rob_count, 3);
        assert!(!tb.u.imiss_bit(3));
        tb.step(retire(3)); // 4
        assert_eq!(tb.c(Counter::Bpred), 0);
        assert_eq!(tb.v().rob_head, 3);
    }
}

#[test]
fn mispredict_squashes_this_cycles_dispatch_and_marks() {
    let mut tb = Tb::new(params(Variant::Sfmt));
    tb.step(fetch(1)); // 0
    tb.step(CycleEvents {
        dispatched: 2,
        dispatched_branches: 0b01,
        dispatched_imiss: 0b10,
        ..idle()
    }); // 1: B id 0, marked id 1
    assert!(tb.u.imiss_bit(1));
    tb.step(CycleEvents {
        dispatched: 2,
        dispatched_imiss: 0b01,
        squash: Squash::Mispredict(0),
        ..idle()
    }); // 2: ids 2, 3 dispatched and squashed at once
    let v = tb.v();
    assert_eq!((v.rob_count, v.imiss_bits), (1, 0));
    assert!(v.refilling, "the dispatch came before the squash");
    assert!(!tb.rows()[0].done);
}

#[test]
fn rob_ids_wrap_modulo_rob_entries() {
    let p = Params {
        rob_entries: 3,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.step(dispatch(2, 0)); // 0: ids 0, 1
    tb.step(retire(2)); // 1
    tb.step(fetch(1)); // 2
    tb.step(dispatch(2, 0b10)); // 3: ids 2, 0: the branch is id 0
    assert_eq!(tb.rows()[0].rob_id, 0);
    assert_eq!(tb.v().rob_head, 2);
    tb.step(squash(Squash::Mispredict(0))); // 4
    assert_eq!(tb.v().rob_count, 2);
    tb.step(retire(1)); // 5
    tb.step(retire(1)); // 6: the branch
    assert_eq!(tb.c(Counter::Bpred), 3, "cycles 4, 5, 6");
    assert!(tb.v().refill_pending);
}

#[test]
fn sfmt_marked_mispredicted_branch_handles_its_imiss_bit_first() {
    let mut tb = Tb::new(params(Variant::Sfmt));
    tb.run(3, stall(FetchStall::L1i)); // 0,1,2
    tb.step(fetch(1)); // 3
    tb.step(CycleEvents {
        dispatched: 1,
        dispatched_branches: 1,
        dispatched_imiss: 1,
        ..idle()
    }); // 4: d = 4
    tb.step(squash(Squash::Mispredict(0))); // 5
    tb.step(stall(FetchStall::L2i)); // 6: refilling, not shared
    tb.step(retire(1)); // 7
    assert_eq!(tb.c(Counter::L1i), 3);
    assert_eq!(tb.c(Counter::Bpred), 3);
    assert_eq!(tb.v().shared_i, [0; 3]);
}

#[test]
fn sfmt_mispredicted_commit_clears_shared_counters_uncharged() {
    let mut tb = Tb::new(params(Variant::Sfmt));
    tb.step(fetch(1)); // 0
    tb.step(CycleEvents {
        dispatched: 2,
        dispatched_branches: 0b01,
        dispatched_imiss: 0b10,
        ..idle()
    }); // 1: B id 0, marked id 1 (on B's wrong path)
    tb.run(2, stall(FetchStall::Itlb)); // 2,3: counted in shared
    tb.step(squash(Squash::Mispredict(0))); // 4: drops the mark of id 1
    assert_eq!(tb.v().shared_i, [0, 0, 2]);
    tb.step(retire(1)); // 5
    assert_eq!(tb.v().shared_i, [0; 3]);
    assert_eq!(tb.c(Counter::Itlb), 0);
}

// ----- full ROB -----

#[test]
fn full_rob_head_causes_and_a_full_rob_that_retires() {
    let p = Params {
        rob_entries: 4,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.step(dispatch(4, 0)); // 0
    assert!(tb.v().rob_full);
    let head = |h| CycleEvents { head: h, ..idle() };
    tb.run(3, head(HeadCause::L1d)); // 1..3
    tb.run(2, head(HeadCause::L2d)); // 4,5
    tb.run(1, head(HeadCause::Dtlb)); // 6
    tb.run(4, head(HeadCause::Longlat)); // 7..10
    tb.run(1, head(HeadCause::Other)); // 11: counted nowhere
    tb.step(CycleEvents {
        head: HeadCause::L1d,
        fetch_stall: FetchStall::L1i,
        ..idle()
    }); // 12: no I-count with a full ROB
    tb.step(retire(4)); // 13: full, but retiring: counted nowhere
    let c = tb.v().counters;
    assert_eq!(c.get(Counter::L1d), 4);
    assert_eq!(c.get(Counter::L2d), 2);
    assert_eq!(c.get(Counter::Dtlb), 1);
    assert_eq!(c.get(Counter::Longlat), 4);
    assert_eq!(c.get(Counter::Cycles), 14);
    assert_eq!(c.get(Counter::Retired), 4);
    assert_eq!(tb.rows()[0].l1i, 0);
    assert_eq!(c.base(), 3);
    // A non-full ROB with a blocked head counts nothing.
    tb.step(dispatch(1, 0));
    tb.step(head(HeadCause::L2d));
    assert_eq!(tb.c(Counter::L2d), 2);
}

#[test]
fn full_rob_cycles_are_not_branch_penalty() {
    let p = Params {
        rob_entries: 4,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.step(fetch(1)); // 0
    tb.step(dispatch(4, 0b1000)); // 1: d = 1, branch id 3, ROB full
    tb.run(
        2,
        CycleEvents {
            head: HeadCause::L2d,
            ..idle()
        },
    ); // 2,3
    tb.step(retire(1)); // 4: full at the start: not counted
    assert_eq!(tb.rows()[0].penalty, 0);
    tb.step(idle()); // 5
    tb.step(squash(Squash::Mispredict(3))); // 6
    tb.step(dispatch(1, 0)); // 7: e = 7
    assert_eq!(tb.rows()[0].penalty, 2, "(7 - 1 - 1) - 3 full cycles");
    assert_eq!(tb.c(Counter::L2d), 2);
}

// ----- count_enable -----

#[test]
fn count_enable_off_counts_nothing_but_state_moves() {
    for var in BOTH {
        let mut tb = Tb::new(params(var));
        let off = |ev: CycleEvents| CycleEvents {
            count_enable: false,
            ..ev
        };
        tb.run(3, off(stall(FetchStall::L1i))); // 0..2
        tb.step(off(fetch(1))); // 3
        tb.step(off(CycleEvents {
            dispatched: 1,
            dispatched_branches: 1,
            dispatched_imiss: 1,
            ..idle()
        })); // 4
        tb.step(off(squash(Squash::Mispredict(0)))); // 5
        assert_eq!(tb.rows()[0].penalty, 0);
        tb.step(idle()); // 6: counted: penalty 1
        assert_eq!(tb.rows()[0].penalty, 1);
        tb.step(off(retire(1))); // 7: commit while not counting: nothing charged
        let v = tb.v();
        assert_eq!(v.counters.get(Counter::Cycles), 1);
        assert_eq!(v.counters.get(Counter::Retired), 0);
        assert_eq!(v.counters.get(Counter::Bpred), 0);
        assert_eq!(v.counters.get(Counter::L1i), 0);
        assert!(v.refill_pending, "flags update all the same");
        assert_eq!(v.rob_count, 0);
        tb.step(idle()); // 8: refill cycle, counted
        assert_eq!(tb.c(Counter::Bpred), 1);
    }
}

// ----- width rules -----

#[test]
fn global_counters_wrap_with_a_sticky_overflow_flag() {
    let p = Params {
        global_bits: 8,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.run(255, idle());
    assert_eq!(tb.c(Counter::Cycles), 255);
    assert_eq!(tb.v().counters.overflow, 0);
    tb.step(idle());
    assert_eq!(tb.c(Counter::Cycles), 0);
    assert!(tb.v().counters.overflowed(Counter::Cycles));
    tb.run(44, idle());
    assert_eq!(tb.c(Counter::Cycles), 44);
    assert_eq!(tb.v().counters.overflow, 1 << Counter::Cycles.idx());
}

#[test]
fn a_charge_that_carries_out_wraps_and_flags_its_counter() {
    let p = Params {
        global_bits: 8,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.step(fetch(1)); // 0
    tb.step(dispatch(1, 1)); // 1
    tb.run(299, idle()); // 2..300
    tb.step(squash(Squash::Mispredict(0))); // 301: penalty 300
    tb.step(retire(1)); // 302: 301
    let v = tb.v();
    assert_eq!(v.counters.get(Counter::Bpred), 301 - 256);
    assert!(v.counters.overflowed(Counter::Bpred));
    assert!(!v.counters.overflowed(Counter::Retired));
    assert!(!v.saturated);
}

#[test]
fn global_64_bits_reads_plainly() {
    let p = Params {
        global_bits: 64,
        ..params(Variant::Sfmt)
    };
    let mut tb = Tb::new(p);
    tb.run(10, idle());
    assert_eq!(tb.c(Counter::Cycles), 10);
    assert_eq!(tb.v().counters.overflow, 0);
}

/// A 64-bit global counter passing 2^64 wraps and sets its overflow flag,
/// one that reaches 2^64 - 1 does not (no run reaches 2^64 cycles: the
/// unbounded total is preloaded). Dropping the high half's term from the
/// flag passed every other test.
#[test]
fn global_64_bits_wrap_past_2_to_the_64_and_flag_it() {
    for v in BOTH {
        let p = Params {
            global_bits: 64,
            ..params(v)
        };
        let mut tb = Tb::new(p);
        tb.step(dispatch(4, 0));
        tb.u.charged[Counter::Retired.idx()] = u64::MAX as u128 - 2;
        tb.step(retire(2)); // 2^64 - 1: the largest value, no overflow
        assert_eq!(tb.c(Counter::Retired), u64::MAX, "{v}");
        assert!(!tb.v().counters.overflowed(Counter::Retired), "{v}");
        tb.step(retire(2)); // 2^64 + 1: wraps to 1
        assert_eq!(tb.c(Counter::Retired), 1, "{v}");
        assert!(tb.v().counters.overflowed(Counter::Retired), "{v}");
        assert_eq!(
            tb.v().counters.overflow,
            1 << Counter::Retired.idx(),
            "{v}: only it"
        );
    }
    // a narrower counter whose total passed 2^64 with its low half above the
    // mask too: flagged (both terms true)
    let p = Params {
        global_bits: 8,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.u.charged[Counter::Retired.idx()] = (1u128 << 64) + 0x1ff;
    tb.step(idle());
    assert_eq!(tb.c(Counter::Retired), 0xff);
    assert!(tb.v().counters.overflowed(Counter::Retired));
}

#[test]
fn row_penalty_saturates_and_flags_the_cycle_it_would_exceed() {
    let p = Params {
        local_bits: 2,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.step(fetch(1)); // 0
    tb.step(dispatch(1, 1)); // 1
    tb.run(3, idle()); // 2,3,4: penalty 3 = max
    assert_eq!(tb.rows()[0].penalty, 3);
    assert!(!tb.v().saturated);
    tb.step(idle()); // 5: would be 4
    assert_eq!(tb.rows()[0].penalty, 3);
    assert!(tb.v().saturated);
    tb.step(squash(Squash::Mispredict(0)));
    tb.step(retire(1));
    assert_eq!(tb.c(Counter::Bpred), 3, "charged saturated");
    assert!(tb.v().saturated, "sticky");
}

#[test]
fn saturation_is_flagged_even_if_the_row_commits_that_cycle() {
    let p = Params {
        local_bits: 2,
        ..params(Variant::Sfmt)
    };
    let mut tb = Tb::new(p);
    tb.step(fetch(1)); // 0
    tb.step(dispatch(1, 1)); // 1
    tb.run(3, idle()); // 2,3,4
    tb.step(retire(1)); // 5: counted (4 > 3), then commits
    assert!(tb.v().saturated);
}

#[test]
fn saturation_seen_on_a_growing_row_behind_done_rows() {
    let p = Params {
        local_bits: 3,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.step(fetch(1)); // 0: B
    tb.step(dispatch(1, 1)); // 1
    tb.step(squash(Squash::Mispredict(0))); // 2
    tb.step(fetch(1)); // 3: C
    tb.step(dispatch(1, 1)); // 4: B done with 2 (cycles 2, 3), C dispatched
    tb.run(7, idle()); // 5..11: C at 7
    assert!(!tb.v().saturated);
    tb.step(idle()); // 12: C would be 8
    assert!(tb.v().saturated);
    assert_eq!(tb.rows()[0].penalty, 2);
    assert_eq!(tb.rows()[1].penalty, 7);
}

#[test]
fn fmt_row_imiss_counter_saturates() {
    let p = Params {
        local_bits: 2,
        ..params(Variant::Fmt)
    };
    let mut tb = Tb::new(p);
    tb.run(3, stall(FetchStall::L2i));
    assert!(!tb.v().saturated);
    tb.step(stall(FetchStall::L2i));
    assert!(tb.v().saturated);
    assert_eq!(tb.rows()[0].l2i, 3);
    assert_eq!(tb.v().pending.l2i, 3);
    tb.step(fetch(1));
    tb.step(dispatch(1, 1));
    tb.step(retire(1));
    assert_eq!(tb.c(Counter::L2i), 3);
}

#[test]
fn sfmt_shared_counter_saturates() {
    let p = Params {
        local_bits: 2,
        ..params(Variant::Sfmt)
    };
    let mut tb = Tb::new(p);
    tb.run(3, stall(FetchStall::Itlb));
    assert!(!tb.v().saturated);
    tb.run(2, stall(FetchStall::Itlb));
    assert!(tb.v().saturated);
    assert_eq!(tb.v().shared_i, [0, 0, 3]);
}

// ----- bad input (spec 6) -----

/// A unit with a dispatched branch (id 0) and another instruction in the ROB, one
/// fetched branch, 4 rows (3 usable), ROB of 4, widths 2.
fn rule_bench() -> Tb {
    let p = Params {
        rob_entries: 4,
        fmt_rows: 4,
        fetch_width: 2,
        dispatch_width: 2,
        retire_width: 2,
        ..params(Variant::Sfmt)
    };
    let mut tb = Tb::new(p);
    tb.step(fetch(2)); // 0
    tb.step(dispatch(2, 0b01)); // 1
    tb
}

fn rows_of(u: &Unit) -> Vec<RowView> {
    let mut out = Vec::new();
    u.for_each_row(&mut |_, r| out.push(r));
    out
}

fn assert_rejected(ev: CycleEvents, field: Field, rule: u8) {
    let mut tb = rule_bench();
    let (before, rows) = (tb.v(), tb.rows());
    tb.u.step(&ev);
    let want = ProtocolError {
        bundle: 2,
        field,
        rule,
    };
    assert_eq!(tb.v().error, Some(want), "{ev:?}");
    assert_eq!(
        UnitView {
            error: None,
            ..tb.v()
        },
        before,
        "a failing bundle changes nothing"
    );
    assert_eq!(rows_of(&tb.u), rows);
    assert_eq!(tb.u.accepted(), 2);
    // Later bundles are ignored, legal or not.
    tb.u.step(&CycleEvents {
        head: HeadCause::Other,
        ..idle()
    });
    tb.u.step(&ev);
    assert_eq!(tb.v().error, Some(want));
    assert_eq!(tb.v().counters, before.counters);
    // Reset clears the latch.
    tb.u.reset();
    assert_eq!(tb.v(), Unit::new(*tb.u.params()).unwrap().view());
}

fn other(ev: CycleEvents) -> CycleEvents {
    CycleEvents {
        head: HeadCause::Other,
        ..ev
    }
}

#[test]
fn rule_1_counts_and_masks() {
    assert_rejected(other(fetch(3)), Field::FetchedBranches, 1);
    assert_rejected(other(dispatch(3, 0)), Field::Dispatched, 1);
    assert_rejected(other(dispatch(1, 0b10)), Field::DispatchedBranches, 1);
    assert_rejected(
        other(CycleEvents {
            dispatched: 1,
            dispatched_imiss: 0b100,
            ..idle()
        }),
        Field::DispatchedImiss,
        1,
    );
    assert_rejected(retire(3), Field::Retired, 1);
    // The first failing field in the order of spec 3.
    assert_rejected(
        CycleEvents {
            fetched_branches: 3,
            retired: 3,
            ..idle()
        },
        Field::FetchedBranches,
        1,
    );
    assert_rejected(
        CycleEvents {
            dispatched_branches: 1,
            retired: 3,
            ..idle()
        },
        Field::DispatchedBranches,
        1,
    );
}

#[test]
fn rule_1_imiss_mask_is_checked_in_fmt_too() {
    let mut u = Unit::new(params(Variant::Fmt)).unwrap();
    u.step(&CycleEvents {
        dispatched_imiss: 1,
        ..idle()
    });
    assert_eq!(
        u.view().error,
        Some(ProtocolError {
            bundle: 0,
            field: Field::DispatchedImiss,
            rule: 1
        })
    );
}

#[test]
fn rule_2_retiring_more_than_the_rob_holds() {
    let mut u = Unit::new(params(Variant::Fmt)).unwrap();
    u.step(&retire(1));
    assert_eq!(
        u.view().error.map(|e| (e.field, e.rule)),
        Some((Field::Retired, 2))
    );
    // Rule 2 before rule 4.
    let p = Params {
        retire_width: 4,
        ..*rule_bench().u.params()
    };
    let mut u = Unit::new(p).unwrap();
    u.step(&CycleEvents {
        retired: 3,
        fetch_stall: FetchStall::L1i,
        fetched_branches: 1,
        ..idle()
    });
    assert_eq!(u.view().error.map(|e| e.rule), Some(2));
}

#[test]
fn rule_3_head() {
    assert_rejected(idle(), Field::Head, 3); // none, nothing retires, ROB not empty
    assert_rejected(
        CycleEvents {
            retired: 1,
            head: HeadCause::L1d,
            ..idle()
        },
        Field::Head,
        3,
    );
    let mut u = Unit::new(params(Variant::Fmt)).unwrap();
    u.step(&CycleEvents {
        head: HeadCause::Other,
        ..idle()
    });
    assert_eq!(
        u.view().error.map(|e| (e.field, e.rule)),
        Some((Field::Head, 3))
    );
}

#[test]
fn rule_4_fetch_stall_with_fetched_branches() {
    assert_rejected(
        other(CycleEvents {
            fetched_branches: 1,
            fetch_stall: FetchStall::Itlb,
            ..idle()
        }),
        Field::FetchedBranches,
        4,
    );
}

#[test]
fn rule_5_fe_squash() {
    assert_rejected(
        other(CycleEvents {
            fe_squash: 1,
            ..idle()
        }),
        Field::FeSquash,
        5,
    );
    // One fetched row + one this cycle = 2; 3 is too many.
    assert_rejected(
        other(CycleEvents {
            fe_redirect: true,
            fe_squash: 3,
            fetched_branches: 1,
            ..idle()
        }),
        Field::FeSquash,
        5,
    );
    let mut tb = rule_bench();
    tb.step(other(CycleEvents {
        fe_redirect: true,
        fe_squash: 2,
        fetched_branches: 1,
        ..idle()
    }));
    assert_eq!(tb.v().fetched_rows, 0);
}

#[test]
fn rule_6_more_fetched_branches_than_free_rows_after_retirement() {
    // 2 live rows of 3 usable: one free.
    assert_rejected(other(fetch(2)), Field::FetchedBranches, 6);
    // Retiring the dispatched branch (id 0) frees its row.
    let mut tb = rule_bench();
    tb.step(CycleEvents {
        retired: 1,
        fetched_branches: 2,
        ..idle()
    });
    assert_eq!(tb.v().fetched_rows, 3);
    assert_eq!(tb.v().free_rows, 0);
}

#[test]
fn rule_7_dispatching_branches_not_fetched_in_earlier_cycles() {
    assert_rejected(other(dispatch(2, 0b11)), Field::DispatchedBranches, 7);
    // The only fetched row is squashed by this cycle's redirect.
    assert_rejected(
        other(CycleEvents {
            fe_redirect: true,
            fe_squash: 1,
            dispatched: 1,
            dispatched_branches: 1,
            ..idle()
        }),
        Field::DispatchedBranches,
        7,
    );
    // A branch fetched this cycle cannot dispatch this cycle.
    let mut u = Unit::new(params(Variant::Fmt)).unwrap();
    u.step(&CycleEvents {
        fetched_branches: 1,
        dispatched: 1,
        dispatched_branches: 1,
        ..idle()
    });
    assert_eq!(
        u.view().error.map(|e| (e.field, e.rule)),
        Some((Field::DispatchedBranches, 7))
    );
    // The redirect squashes this cycle's fetch first: the older row survives.
    let mut tb = rule_bench();
    tb.step(other(CycleEvents {
        fetched_branches: 1,
        fe_redirect: true,
        fe_squash: 1,
        dispatched: 1,
        dispatched_branches: 1,
        ..idle()
    }));
    assert_eq!(tb.v().dispatched_rows, 2);
}

#[test]
fn rule_8_dispatch_overflowing_the_rob() {
    let mut tb = rule_bench();
    tb.step(other(dispatch(2, 0))); // full: 4 of 4
    let before = tb.v();
    tb.u.step(&CycleEvents {
        retired: 1,
        dispatched: 2,
        ..idle()
    });
    assert_eq!(
        tb.v().error,
        Some(ProtocolError {
            bundle: 3,
            field: Field::Dispatched,
            rule: 8
        })
    );
    assert_eq!(tb.v().counters, before.counters);
}

#[test]
fn rule_9_squash() {
    // Id out of range, id not live.
    assert_rejected(other(squash(Squash::Flush(4))), Field::Squash, 9);
    assert_rejected(other(squash(Squash::Flush(2))), Field::Squash, 9);
    assert_rejected(other(squash(Squash::Mispredict(2))), Field::Squash, 9);
    // Not a branch.
    assert_rejected(other(squash(Squash::Mispredict(1))), Field::Squash, 9);
    // The branch commits this cycle.
    assert_rejected(
        CycleEvents {
            retired: 1,
            squash: Squash::Mispredict(0),
            ..idle()
        },
        Field::Squash,
        9,
    );
    // An instruction dispatched this cycle is not yet in the ROB.
    assert_rejected(
        other(CycleEvents {
            dispatched: 1,
            squash: Squash::Flush(2),
            ..idle()
        }),
        Field::Squash,
        9,
    );
    // Already marked.
    let mut tb = rule_bench();
    tb.step(other(squash(Squash::Mispredict(0))));
    tb.u.step(&other(squash(Squash::Mispredict(0))));
    assert_eq!(
        tb.v().error.map(|e| (e.bundle, e.field, e.rule)),
        Some((3, Field::Squash, 9))
    );
    // A flush of the live non-branch is fine.
    let mut tb = rule_bench();
    tb.step(other(squash(Squash::Flush(1))));
    assert_eq!(tb.v().rob_count, 1);
}

#[test]
fn reset_returns_to_the_initial_state() {
    let mut tb = Tb::new(params(Variant::Sfmt));
    tb.step(stall(FetchStall::L1i));
    tb.step(fetch(1));
    tb.step(CycleEvents {
        dispatched: 1,
        dispatched_branches: 1,
        dispatched_imiss: 1,
        ..idle()
    });
    tb.u.reset();
    assert_eq!(tb.v(), Unit::new(params(Variant::Sfmt)).unwrap().view());
    assert_eq!(tb.rows(), vec![RowView::default()]);
    assert_eq!(tb.u.accepted(), 0);
}
