//! One condition per test, hand-built bundles, expected values worked out by hand.

use super::*;

fn params(v: Variant) -> Params {
    Params::default().with_variant(v)
}

fn unit(v: Variant) -> Unit {
    Unit::new(params(v)).unwrap()
}

/// A counted cycle in which nothing happens and the ROB is empty.
fn idle() -> CycleEvents {
    CycleEvents::idle()
}

/// A counted cycle in which nothing happens and the (non-empty) ROB head waits.
fn wait() -> CycleEvents {
    CycleEvents {
        head: HeadCause::Other,
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

fn get(u: &Unit, c: Counter) -> u64 {
    u.view().counters.get(c)
}

fn rows(u: &Unit) -> Vec<RowView> {
    let mut v = Vec::new();
    u.for_each_row(&mut |_, r| v.push(r));
    v
}

/// `n` (a multiple of 4) branches through an empty unit, 4 at a time: fetch,
/// dispatch (all four are branches), retire; the head moves `n` rows on.
fn commit_branches(u: &mut Unit, n: usize) {
    for _ in 0..n / 4 {
        ok(u, fetch(4));
        ok(u, dispatch(4, 0b1111));
        ok(
            u,
            CycleEvents {
                retired: 4,
                ..idle()
            },
        );
    }
}

/// Run a bundle and insist it was accepted.
fn ok(u: &mut Unit, ev: CycleEvents) {
    u.step(&ev);
    assert_eq!(u.view().error, None, "bundle rejected: {ev:?}");
}

#[test]
fn new_rejects_illegal_params() {
    let bad = Params {
        fmt_rows: 48,
        ..Params::default()
    };
    assert_eq!(Unit::new(bad).unwrap_err().name, "fmt_rows");
    let bad = Params {
        rob_entries: 4097,
        ..Params::default()
    };
    assert_eq!(Unit::new(bad).unwrap_err().name, "rob_entries");
}

#[test]
fn widths_follow_params() {
    let p = Params {
        fmt_rows: 8,
        rob_entries: 100,
        ..Params::default()
    };
    let w = Widths::of(&p);
    assert_eq!((w.ptr, w.row, w.rob_id, w.rob_count), (4, 3, 7, 7));
    let w = Widths::of(&Params::default());
    assert_eq!((w.ptr, w.rob_id, w.rob_count), (7, 7, 8));
}

#[test]
fn cycles_count_only_when_enabled() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, idle());
    ok(
        &mut u,
        CycleEvents {
            count_enable: false,
            ..idle()
        },
    );
    ok(&mut u, idle());
    assert_eq!(get(&u, Counter::Cycles), 2);
    assert_eq!(u.latch().bundles, 3);
}

#[test]
fn overflow_is_sticky() {
    let mut u = Unit::new(Params {
        global_bits: 8,
        ..Params::default()
    })
    .unwrap();
    for _ in 0..255 {
        ok(&mut u, idle());
    }
    assert_eq!(get(&u, Counter::Cycles), 255);
    assert!(!u.view().counters.overflowed(Counter::Cycles));
    ok(&mut u, idle());
    assert_eq!(get(&u, Counter::Cycles), 0, "wraps modulo 2^8");
    assert!(u.view().counters.overflowed(Counter::Cycles));
    ok(&mut u, idle());
    assert_eq!(get(&u, Counter::Cycles), 1);
    assert!(u.view().counters.overflowed(Counter::Cycles), "stays set");
    assert_eq!(u.view().counters.overflow, 1 << Counter::Cycles.idx());
}

#[test]
fn global_add_of_a_penalty_sets_overflow_on_carry_out() {
    let mut d = Regs {
        counters: [250; NUM_COUNTERS],
        ..Regs::default()
    };
    Unit::gadd(&mut d, 0xff, Counter::Bpred.idx(), 5);
    assert_eq!(d.counters[Counter::Bpred.idx()], 255);
    assert_eq!(d.overflow, 0);
    Unit::gadd(&mut d, 0xff, Counter::Bpred.idx(), 7);
    assert_eq!(d.counters[Counter::Bpred.idx()], 6);
    assert_eq!(d.overflow, 1 << Counter::Bpred.idx());
    let mut d = Regs {
        counters: [u64::MAX; NUM_COUNTERS],
        ..Regs::default()
    };
    Unit::gadd(&mut d, u64::MAX, 0, 2);
    assert_eq!(
        (d.counters[0], d.overflow),
        (1, 1),
        "64-bit globals carry out too"
    );
}

#[test]
fn local_counter_saturates() {
    let mut u = Unit::new(Params {
        local_bits: 2,
        ..Params::default()
    })
    .unwrap();
    ok(&mut u, fetch(1));
    ok(&mut u, dispatch(1, 0b1));
    for want in 1..=3 {
        ok(&mut u, wait());
        assert_eq!(rows(&u)[0].penalty, want);
    }
    assert!(!u.view().saturated, "reaching the maximum loses nothing");
    ok(&mut u, wait());
    assert_eq!(rows(&u)[0].penalty, 3, "holds at 2^2 - 1");
    assert!(u.view().saturated, "a lost increment sets the sticky flag");
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    );
    assert!(u.view().saturated, "sticky");
}

#[test]
fn fetch_claims_rows_and_zeroes_the_next() {
    let mut u = unit(Variant::Fmt);
    ok(
        &mut u,
        CycleEvents {
            fetch_stall: FetchStall::L1i,
            ..idle()
        },
    );
    ok(&mut u, fetch(2));
    let q = *u.regs();
    assert_eq!((q.head, q.dtail, q.ftail), (0, 0, 2));
    let r = rows(&u);
    assert_eq!(r.len(), 3);
    assert_eq!(
        r[0].l1i, 1,
        "the first branch's row holds the stall before it"
    );
    assert_eq!((r[1].l1i, r[2].l1i), (0, 0));
    assert_eq!(u.view().free_rows, 61);
    assert_eq!(u.view().fetched_rows, 2);
}

#[test]
fn dispatch_writes_rob_ids_in_order() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(2));
    ok(&mut u, dispatch(4, 0b1010));
    let r = rows(&u);
    assert_eq!((r[0].dispatched, r[0].rob_id), (true, 1));
    assert_eq!((r[1].dispatched, r[1].rob_id), (true, 3));
    assert!(!r[2].dispatched);
    let v = u.view();
    assert_eq!((v.rob_count, v.dispatched_rows, v.fetched_rows), (4, 2, 0));
    assert_eq!(u.regs().rob_tail, 4);
}

#[test]
fn pointers_wrap_with_the_wrap_bit() {
    // 2 rows: one branch in flight at most; pointers are 2 bits.
    let mut u = Unit::new(Params {
        fmt_rows: 2,
        rob_entries: 3,
        ..Params::default()
    })
    .unwrap();
    for round in 0..5u16 {
        ok(&mut u, fetch(1));
        ok(&mut u, dispatch(1, 0b1));
        ok(
            &mut u,
            CycleEvents {
                retired: 1,
                ..idle()
            },
        );
        let q = *u.regs();
        let p = (round + 1) & 3;
        assert_eq!((q.head, q.dtail, q.ftail), (p, p, p), "round {round}");
        assert_eq!(q.rob_head, (round + 1) % 3);
    }
}

#[test]
fn penalty_counts_dispatched_rows_not_done() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(2));
    ok(&mut u, dispatch(1, 0b1));
    ok(&mut u, wait());
    ok(&mut u, wait());
    let r = rows(&u);
    assert_eq!(r[0].penalty, 2, "dispatched row counts every cycle");
    assert_eq!(r[1].penalty, 0, "a fetched row does not");
}

#[test]
fn full_rob_freezes_penalties_and_charges_head_cause() {
    let mut u = Unit::new(Params {
        rob_entries: 4,
        ..Params::default()
    })
    .unwrap();
    ok(&mut u, fetch(1));
    ok(&mut u, dispatch(4, 0b1)); // ROB full
    ok(
        &mut u,
        CycleEvents {
            head: HeadCause::L2d,
            ..idle()
        },
    );
    ok(
        &mut u,
        CycleEvents {
            head: HeadCause::Dtlb,
            ..idle()
        },
    );
    ok(
        &mut u,
        CycleEvents {
            head: HeadCause::Other,
            ..idle()
        },
    );
    assert_eq!(rows(&u)[0].penalty, 0, "no penalty while the ROB is full");
    assert_eq!(get(&u, Counter::L2d), 1);
    assert_eq!(get(&u, Counter::Dtlb), 1);
    assert_eq!(get(&u, Counter::Cycles), 5);
    assert!(u.view().rob_full);
}

#[test]
fn mispredict_charges_dispatch_to_refill() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(1)); // cycle 0
    ok(&mut u, dispatch(2, 0b01)); // cycle 1: branch id 0 dispatched (d = 1)
    ok(&mut u, wait()); // 2: penalty 1
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        },
    ); // 3: penalty 2, id 1 squashed
    assert_eq!(u.view().rob_count, 1);
    assert!(u.view().refilling);
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    ); // 4: penalty 3, committed: bpred 3, refill pending
    assert_eq!(get(&u, Counter::Bpred), 3);
    assert!(u.view().refill_pending);
    ok(&mut u, idle()); // 5: bpred 4
    ok(&mut u, dispatch(1, 0)); // 6: correct path enters (e = 6): not a lost cycle
    assert!(!u.view().refill_pending && !u.view().refilling);
    ok(&mut u, wait());
    assert_eq!(get(&u, Counter::Bpred), 4, "e - d - 1 = 6 - 1 - 1");
}

#[test]
fn squash_moves_fetch_pointer() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(3));
    ok(&mut u, dispatch(3, 0b111)); // ids 0,1,2, rows 0,1,2
    ok(
        &mut u,
        CycleEvents {
            fetched_branches: 2,
            squash: Squash::Mispredict(1),
            ..wait()
        },
    );
    let q = *u.regs();
    assert_eq!((q.head, q.dtail, q.ftail), (0, 2, 2));
    assert_eq!((q.rob_count, q.rob_tail), (2, 2));
    let r = rows(&u);
    assert_eq!(r.len(), 3);
    assert!(r[1].mispredict && !r[1].done);
    assert_eq!(r[2], RowView::default(), "new accumulation row is zeroed");
}

#[test]
fn flush_keeps_only_older_entries() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(2));
    ok(&mut u, dispatch(4, 0b0101)); // branches at ids 0 and 2
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Flush(2),
            ..wait()
        },
    );
    let q = *u.regs();
    assert_eq!(
        (q.head, q.dtail, q.ftail),
        (0, 1, 1),
        "branch 2 is flushed itself"
    );
    assert_eq!((q.rob_count, q.rob_tail), (2, 2));
    assert!(!q.refilling);
}

#[test]
fn squash_drops_this_cycles_dispatch() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(2));
    ok(&mut u, dispatch(1, 0b1)); // id 0
    ok(
        &mut u,
        CycleEvents {
            dispatched: 2,
            dispatched_branches: 0b1, // id 1, row 1
            squash: Squash::Mispredict(0),
            ..wait()
        },
    );
    let q = *u.regs();
    assert_eq!((q.dtail, q.ftail, q.rob_count, q.rob_tail), (1, 1, 1, 1));
    assert!(q.refilling, "the squash comes after this cycle's dispatch");
}

#[test]
fn dispatch_marks_mispredicted_rows_done() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(1));
    ok(&mut u, dispatch(1, 0b1));
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        },
    );
    ok(
        &mut u,
        CycleEvents {
            dispatched: 1,
            ..wait()
        },
    ); // correct path enters: not counted, then done
    ok(&mut u, wait());
    let r = rows(&u);
    assert!(r[0].mispredict && r[0].done);
    assert_eq!(r[0].penalty, 1, "a done row stops counting");
    assert_eq!(u.view().pending.bpred, 1);
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    );
    assert_eq!(get(&u, Counter::Bpred), 1);
    assert!(!u.view().refill_pending, "done: the refill already ended");
}

#[test]
fn fmt_stall_spares_mispredicted_rows_and_refill() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(2));
    ok(&mut u, dispatch(2, 0b11)); // rows 0, 1 = ids 0, 1
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        },
    ); // both penalty 1; row 1 squashed
    ok(
        &mut u,
        CycleEvents {
            fetch_stall: FetchStall::L2i,
            ..wait()
        },
    );
    let r = rows(&u);
    assert_eq!(
        r[0].penalty, 1,
        "FMT: a stall cycle is the I-cache's, not the branch's"
    );
    assert_eq!(r[1].l2i, 1, "charged to the accumulation row");
}

#[test]
fn fmt_charges_row_icounts_at_commit() {
    let mut u = unit(Variant::Fmt);
    for _ in 0..3 {
        ok(
            &mut u,
            CycleEvents {
                fetch_stall: FetchStall::Itlb,
                ..idle()
            },
        );
    }
    ok(&mut u, fetch(1));
    assert_eq!(u.view().pending.itlb, 3);
    ok(&mut u, dispatch(1, 0b1));
    assert_eq!(get(&u, Counter::Itlb), 0, "not before commit");
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    );
    assert_eq!(get(&u, Counter::Itlb), 3);
    assert_eq!(
        get(&u, Counter::Bpred),
        0,
        "a correct branch charges no penalty"
    );
    assert_eq!(u.view().pending, Pending::default());
}

#[test]
fn redirect_zeroes_the_accumulation_row() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(1));
    ok(
        &mut u,
        CycleEvents {
            fetch_stall: FetchStall::L1i,
            ..idle()
        },
    );
    ok(
        &mut u,
        CycleEvents {
            fetch_stall: FetchStall::L1i,
            fe_redirect: true,
            fe_squash: 1,
            ..idle()
        },
    );
    let q = *u.regs();
    assert_eq!((q.dtail, q.ftail), (0, 0));
    assert_eq!(
        rows(&u),
        vec![RowView::default()],
        "stalls of the squashed path dropped"
    );
}

#[test]
fn count_enable_off_moves_state_but_adds_nothing() {
    let mut u = unit(Variant::Fmt);
    let off = |ev: CycleEvents| CycleEvents {
        count_enable: false,
        ..ev
    };
    ok(&mut u, off(fetch(1)));
    ok(&mut u, off(dispatch(1, 0b1)));
    ok(
        &mut u,
        off(CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        }),
    );
    ok(
        &mut u,
        off(CycleEvents {
            retired: 1,
            ..idle()
        }),
    );
    let v = u.view();
    assert_eq!(v.counters, Counters::default());
    assert!(v.refill_pending, "flags update as usual");
    assert_eq!((v.rob_count, v.dispatched_rows), (0, 0));
}

#[test]
fn sfmt_imiss_bit_charges_shared_counters() {
    let mut u = unit(Variant::Sfmt);
    for _ in 0..2 {
        ok(
            &mut u,
            CycleEvents {
                fetch_stall: FetchStall::L1i,
                ..idle()
            },
        );
    }
    ok(
        &mut u,
        CycleEvents {
            dispatched: 2,
            dispatched_imiss: 0b10,
            ..idle()
        },
    );
    assert_eq!(u.view().shared_i, [2, 0, 0]);
    assert!(u.imiss_bit(1) && !u.imiss_bit(0));
    assert_eq!(u.view().imiss_bits, 1);
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    );
    assert_eq!(get(&u, Counter::L1i), 0, "id 0 carries no I-miss bit");
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    );
    assert_eq!(get(&u, Counter::L1i), 2);
    assert_eq!(u.view().shared_i, [0, 0, 0]);
    assert_eq!(u.view().imiss_bits, 0);
    assert!(
        rows(&u).iter().all(|r| r.l1i == 0),
        "sFMT rows hold no I-counts"
    );
}

#[test]
fn sfmt_refilling_stall_is_not_counted() {
    let mut u = unit(Variant::Sfmt);
    ok(&mut u, fetch(1));
    ok(&mut u, dispatch(1, 0b1));
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        },
    );
    ok(
        &mut u,
        CycleEvents {
            fetch_stall: FetchStall::L1i,
            ..wait()
        },
    );
    assert_eq!(u.view().shared_i, [0, 0, 0], "refilling: the branch's");
    assert_eq!(
        rows(&u)[0].penalty,
        2,
        "sFMT: the stall cycle counts for the branch"
    );
}

#[test]
fn sfmt_mispredict_commit_clears_shared_and_bits() {
    let mut u = unit(Variant::Sfmt);
    ok(&mut u, fetch(1));
    ok(
        &mut u,
        CycleEvents {
            dispatched: 3,
            dispatched_branches: 0b001,
            dispatched_imiss: 0b100,
            ..idle()
        },
    ); // branch id 0, I-miss-marked id 2
    ok(
        &mut u,
        CycleEvents {
            fetch_stall: FetchStall::L2i,
            ..wait()
        },
    );
    assert_eq!(u.view().shared_i, [0, 1, 0]);
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        },
    );
    assert!(!u.imiss_bit(2), "squashed entries lose their bit");
    ok(
        &mut u,
        CycleEvents {
            fetch_stall: FetchStall::L2i,
            ..wait()
        },
    ); // refilling: not counted
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    );
    assert_eq!(u.view().shared_i, [0, 0, 0], "cleared at the commit");
    assert_eq!(get(&u, Counter::L2i), 0, "never charged");
}

#[test]
fn sfmt_imiss_marked_mispredicted_branch_charges_first() {
    let mut u = unit(Variant::Sfmt);
    ok(
        &mut u,
        CycleEvents {
            fetch_stall: FetchStall::Itlb,
            ..idle()
        },
    );
    ok(&mut u, fetch(1));
    ok(
        &mut u,
        CycleEvents {
            dispatched: 1,
            dispatched_branches: 1,
            dispatched_imiss: 1,
            ..idle()
        },
    );
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        },
    );
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    );
    assert_eq!(
        get(&u, Counter::Itlb),
        1,
        "its own stall is on the committed path"
    );
    assert_eq!(u.view().shared_i, [0, 0, 0]);
}

#[test]
fn rejected_bundle_changes_nothing() {
    let mut u = unit(Variant::Sfmt);
    ok(&mut u, fetch(1));
    ok(
        &mut u,
        CycleEvents {
            dispatched: 2,
            dispatched_branches: 1,
            dispatched_imiss: 2,
            ..idle()
        },
    );
    let before = (*u.regs(), rows(&u), u.view());
    u.step(&CycleEvents {
        retired: 3, // more than the ROB holds
        ..idle()
    });
    let err = u.view().error.expect("latched");
    assert_eq!((err.bundle, err.field, err.rule), (2, Field::Retired, 2));
    assert_eq!(*u.regs(), before.0, "no register moved, not even cycles");
    assert_eq!(u.latch().bundles, 2);
    assert_eq!(rows(&u), before.1);
    for _ in 0..3 {
        u.step(&wait());
    }
    assert_eq!(u.view().error, Some(err), "later bundles ignored");
    assert_eq!(u.view().counters, before.2.counters);
    u.reset();
    assert_eq!(*u.regs(), Regs::default());
    assert_eq!(*u.latch(), Latch::default());
    assert!(!u.imiss_bit(1));
    ok(&mut u, idle());
}

/// State: 2 fetched rows; ROB = ids 0 (branch, row 0), 1; one fetched row left.
fn rule_setup() -> Unit {
    let mut u = Unit::new(Params {
        fmt_rows: 4,
        rob_entries: 4,
        ..Params::default()
    })
    .unwrap();
    ok(&mut u, fetch(2));
    ok(&mut u, dispatch(2, 0b01));
    u
}

#[test]
fn each_rule_names_its_field() {
    let cases: Vec<(CycleEvents, Field, u8)> = vec![
        (
            CycleEvents {
                fetched_branches: 9,
                ..wait()
            },
            Field::FetchedBranches,
            1,
        ),
        (
            CycleEvents {
                dispatched: 5,
                ..wait()
            },
            Field::Dispatched,
            1,
        ),
        (
            CycleEvents {
                dispatched: 1,
                dispatched_branches: 2,
                ..wait()
            },
            Field::DispatchedBranches,
            1,
        ),
        (
            CycleEvents {
                dispatched: 1,
                dispatched_imiss: 4,
                ..wait()
            },
            Field::DispatchedImiss,
            1,
        ),
        (
            CycleEvents {
                retired: 5,
                ..idle()
            },
            Field::Retired,
            1,
        ),
        (
            CycleEvents {
                retired: 3,
                ..idle()
            },
            Field::Retired,
            2,
        ),
        (idle(), Field::Head, 3),
        (
            CycleEvents {
                retired: 1,
                ..wait()
            },
            Field::Head,
            3,
        ),
        (
            CycleEvents {
                fetched_branches: 1,
                fetch_stall: FetchStall::L1i,
                ..wait()
            },
            Field::FetchedBranches,
            4,
        ),
        (
            CycleEvents {
                fe_squash: 1,
                ..wait()
            },
            Field::FeSquash,
            5,
        ),
        (
            CycleEvents {
                fe_redirect: true,
                fe_squash: 3,
                fetched_branches: 1,
                ..wait()
            },
            Field::FeSquash,
            5,
        ),
        (
            CycleEvents {
                fetched_branches: 2,
                ..wait()
            },
            Field::FetchedBranches,
            6,
        ),
        (
            CycleEvents {
                dispatched: 2,
                dispatched_branches: 3,
                ..wait()
            },
            Field::DispatchedBranches,
            7,
        ),
        (
            CycleEvents {
                fe_redirect: true,
                fe_squash: 1,
                dispatched: 1,
                dispatched_branches: 1,
                ..wait()
            },
            Field::DispatchedBranches,
            7,
        ),
        (
            CycleEvents {
                dispatched: 3,
                ..wait()
            },
            Field::Dispatched,
            8,
        ),
        (
            CycleEvents {
                squash: Squash::Flush(2),
                ..wait()
            },
            Field::Squash,
            9,
        ),
        (
            CycleEvents {
                squash: Squash::Flush(7),
                ..wait()
            },
            Field::Squash,
            9,
        ),
        (
            CycleEvents {
                squash: Squash::Mispredict(1),
                ..wait()
            },
            Field::Squash,
            9,
        ),
        (
            CycleEvents {
                squash: Squash::Mispredict(0),
                retired: 1,
                ..idle()
            },
            Field::Squash,
            9,
        ),
    ];
    for (ev, field, rule) in cases {
        let mut u = rule_setup();
        u.step(&ev);
        let e = u.view().error.unwrap_or_else(|| panic!("accepted {ev:?}"));
        assert_eq!((e.bundle, e.field, e.rule), (2, field, rule), "{ev:?}");
    }
    // The same bundles' legal neighbours pass.
    let mut u = rule_setup();
    ok(
        &mut u,
        CycleEvents {
            fetched_branches: 1,
            ..wait()
        },
    );
    let mut u = rule_setup();
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            fetched_branches: 2,
            ..idle()
        },
    );
    let mut u = rule_setup();
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        },
    );
    u.step(&CycleEvents {
        squash: Squash::Mispredict(0),
        ..wait()
    });
    assert_eq!(u.view().error.map(|e| e.rule), Some(9), "already marked");
}

#[test]
fn rows_are_walked_oldest_first_across_the_wrap() {
    let mut u = Unit::new(Params {
        fmt_rows: 4,
        rob_entries: 8,
        ..Params::default()
    })
    .unwrap();
    ok(&mut u, fetch(3));
    ok(&mut u, dispatch(3, 0b111)); // rows 0,1,2 = ids 0,1,2
    ok(
        &mut u,
        CycleEvents {
            retired: 2,
            fetched_branches: 2,
            ..idle()
        },
    ); // head -> 2, ftail -> 5
    let mut seen = Vec::new();
    u.for_each_row(&mut |age, r| seen.push((age, r.dispatched, r.rob_id)));
    assert_eq!(
        seen,
        vec![(0, true, 2), (1, false, 0), (2, false, 0), (3, false, 0)]
    );
    let q = *u.regs();
    assert_eq!((q.head, q.dtail, q.ftail), (2, 3, 5));
    assert_eq!(u.view().free_rows, 0);
}

#[test]
fn penalty_mask_covers_rows_in_upper_words() {
    // 256 rows: walk the pointers past row 64 and check a row in word 1 counts.
    let mut u = Unit::new(Params {
        fmt_rows: 256,
        rob_entries: 256,
        ..Params::default()
    })
    .unwrap();
    commit_branches(&mut u, 80);
    assert_eq!(u.regs().head, 80);
    ok(&mut u, fetch(1));
    ok(&mut u, dispatch(1, 0b1));
    ok(&mut u, wait());
    assert_eq!(u.row_penalty(80), 1);
    assert_eq!(rows(&u)[0].rob_id, 80);
}

/// The checker's read-outs agree with the plain ones every cycle of random legal
/// streams: `rows_columns` (with every kernel this CPU runs, into buffers of `5 * fmt_rows` words and 0, 8 or
/// `SHORT_ROWS` more, so that the fixed form, the block copies and the exact
/// copies all run, the last two on the nearly full tiny tables) with
/// `for_each_row` (packed, column by column), `imiss_live_words` with
/// `imiss_bit` over the live ROB entries, and the observer sums in `view` with a
/// walk over the rows (the debug check inside `view` does that recount).
/// All 64 rows of the default table live (no free row), one of them
/// mispredicted and done, another mispredicted and awaiting its correct
/// path: every read-out form this CPU runs gives the rows of the plain
/// walk, flags included, with the table starting at row 0 and across the
/// wrap. (A read-out that took a full table's flags through the partial
/// table's mask survived every other test: a mutation test found it.)
#[test]
fn a_full_64_row_table_reads_out_with_its_flags() {
    for start in [0usize, 20] {
        let mut u = unit(Variant::Fmt);
        commit_branches(&mut u, start);
        let id = |k: u16| ((start as u16) + k) % 128;
        // four branches; the second mispredicts, a branch of its correct path
        // dispatches (so it is done), then that branch mispredicts too
        ok(&mut u, fetch(4));
        ok(&mut u, dispatch(4, 0b1111));
        let mispredict = |x| CycleEvents {
            squash: Squash::Mispredict(x),
            ..wait()
        };
        ok(&mut u, mispredict(id(1)));
        ok(
            &mut u,
            CycleEvents {
                fetched_branches: 1,
                ..wait()
            },
        );
        ok(
            &mut u,
            CycleEvents {
                dispatched: 1,
                dispatched_branches: 0b1,
                ..wait()
            },
        );
        ok(&mut u, mispredict(id(2)));
        while u.view().free_rows > 0 {
            let n = u.view().free_rows.min(8) as u8;
            ok(
                &mut u,
                CycleEvents {
                    fetched_branches: n,
                    ..wait()
                },
            );
        }
        let plain: Vec<events::PackedRow> = rows(&u).iter().map(RowView::pack).collect();
        assert_eq!(plain.len(), 64, "start {start}: every row live");
        let flags: Vec<(bool, bool)> = rows(&u).iter().map(|r| (r.mispredict, r.done)).collect();
        assert_eq!(flags[1], (true, true), "start {start}");
        assert_eq!(flags[2], (true, false), "start {start}");
        let want: Vec<u32> = (0..ROW_COLUMNS)
            .flat_map(|k| plain.iter().map(move |r| r[k]))
            .collect();
        for k in Kernel::available() {
            assert!(u.set_kernel(k));
            // no room past the columns (the exact form), a block's, the fixed form's
            for extra in [0, 8, SHORT_ROWS] {
                let mut buf = vec![u32::MAX; ROW_COLUMNS * 64 + extra];
                assert_eq!(u.rows_columns(&mut buf), 64, "start {start} {k:?}");
                assert_eq!(
                    &buf[..ROW_COLUMNS * 64],
                    &want[..],
                    "start {start} {k:?} {extra} spare words"
                );
            }
        }
    }
}

#[test]
fn packed_readouts_match_the_plain_ones() {
    use events::gen::{GenConfig, Generator};
    for (seed, rows, rob, local) in [
        (21u64, 64u32, 128u32, 16u32),
        (22, 4, 16, 2),
        (23, 2, 8, 1),
        (24, 256, 4096, 16),
        (25, 128, 100, 32),
    ] {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let mut p = params(v);
            p.fmt_rows = rows;
            p.rob_entries = rob;
            p.local_bits = local;
            let mut u = Unit::new(p).unwrap();
            // 0, 8 and `SHORT_ROWS` words past the largest record: which form
            // runs depends on the room past this cycle's `5 * n` words
            let mut bufs = [0, 8, SHORT_ROWS].map(|x| vec![0u32; ROW_COLUMNS * rows as usize + x]);
            let mut words = vec![u64::MAX; (rob as usize).div_ceil(64)];
            let (mut saw_imiss, mut saw_flags, mut saw_wrap) = (false, false, false);
            let mut saw_short_wrap = false;
            for (c, ev) in Generator::new(p, GenConfig::stress(), seed)
                .take(4000)
                .enumerate()
            {
                u.step(&ev);
                let view = u.view();
                assert_eq!(view.error, None, "seed {seed}");
                let plain: Vec<events::PackedRow> = rows_of(&u).iter().map(RowView::pack).collect();
                let n = plain.len();
                let want: Vec<u32> = (0..ROW_COLUMNS)
                    .flat_map(|k| plain.iter().map(move |r| r[k]))
                    .collect();
                // every compiled form of the read-out this CPU runs
                let home = u.kernel();
                for k in Kernel::available() {
                    assert!(u.set_kernel(k));
                    for buf in bufs.iter_mut() {
                        buf.fill(u32::MAX);
                        assert_eq!(u.rows_columns(buf), n, "seed {seed} {v} {k:?} cycle {c}");
                        assert_eq!(
                            &buf[..ROW_COLUMNS * n],
                            &want[..],
                            "seed {seed} {v} {k:?} cycle {c}"
                        );
                    }
                }
                assert!(u.set_kernel(home));
                u.imiss_live_words(&mut words);
                let mut want = vec![0u64; words.len()];
                for k in 0..view.rob_count {
                    let id = (view.rob_head + k) % rob;
                    if u.imiss_bit(id as u16) {
                        want[id as usize / 64] |= 1 << (id % 64);
                    }
                }
                assert_eq!(words, want, "seed {seed} {v} cycle {c}");
                saw_imiss |= want.iter().any(|&w| w != 0);
                saw_flags |= plain
                    .iter()
                    .any(|r| r[1] & (META_MISPREDICT | META_DONE) != 0);
                let wraps = (u.q.head as u32 & (rows - 1)) + n as u32 > rows;
                saw_wrap |= wraps;
                saw_short_wrap |= wraps && n <= SHORT_ROWS;
                let mut via_rows = Vec::new();
                u.rows_into(&mut via_rows);
                assert_eq!(via_rows, rows_of(&u), "seed {seed} {v} cycle {c}");
            }
            assert!(
                saw_flags && saw_wrap && saw_short_wrap,
                "seed {seed} {v}: stream too tame"
            );
            assert_eq!(saw_imiss, v == Variant::Sfmt, "seed {seed} {v}");
        }
    }
}

/// Every register, row, bit vector and observer sum of two units is the same.
fn assert_same_state(a: &Unit, b: &Unit, what: &str) {
    assert_eq!(a.q, b.q, "{what}: registers");
    assert_eq!(a.latch, b.latch, "{what}: latch");
    assert_eq!(a.obs, b.obs, "{what}: observer sums");
    let (x, y) = (&*a.rows, &*b.rows);
    assert_eq!(x.pen, y.pen, "{what}: row penalty");
    assert_eq!(x.rid, y.rid, "{what}: row rob_id");
    assert_eq!(x.ic, y.ic, "{what}: row I-counters");
    assert_eq!(x.mispredict, y.mispredict, "{what}: row mispredict");
    assert_eq!(x.done, y.done, "{what}: row done");
    assert_eq!(*a.imiss, *b.imiss, "{what}: I-miss bits");
}

/// The short path for quiet bundles (`Unit::cycle`) gives the same next state,
/// or the same error, as the general path in every state of random streams:
/// every quiet bundle (each fetch stall, head cause and `count_enable`) is
/// tried from every 5th state, with every kernel this CPU has; the streams reach full ROBs,
/// stalls, refills, saturated locals and wrapped globals.
#[test]
fn quiet_bundles_take_the_short_path_to_the_same_state() {
    use events::gen::{GenConfig, Generator};
    let kernels: Vec<Kernel> = Kernel::available().collect();
    let (mut sat, mut wrapped) = (false, false);
    for (seed, rows, rob, local, global) in [
        (31u64, 64u32, 128u32, 16u32, 48u32),
        (32, 4, 16, 2, 8),
        (33, 2, 8, 1, 8),
        (34, 128, 100, 3, 10),
    ] {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let mut p = params(v);
            (p.fmt_rows, p.rob_entries, p.local_bits, p.global_bits) = (rows, rob, local, global);
            let mut u = Unit::new(p).unwrap();
            let (mut full, mut rejected) = (false, false);
            for (c, ev) in Generator::new(p, GenConfig::stress(), seed)
                .take(3000)
                .enumerate()
            {
                if c % 5 == 0 {
                    for fetch_stall in FetchStall::ALL {
                        for head in HeadCause::ALL {
                            for (count_enable, backend_full) in
                                [(true, false), (false, false), (true, true)]
                            {
                                let q = CycleEvents {
                                    fetch_stall,
                                    head,
                                    count_enable,
                                    backend_full,
                                    ..CycleEvents::idle()
                                };
                                let mut want = u.clone();
                                want.step_general(&q);
                                for &k in &kernels {
                                    let mut got = u.clone();
                                    assert!(got.set_kernel(k));
                                    got.step(&q);
                                    let what = format!("seed {seed} {v} {k:?} cycle {c} {q:?}");
                                    assert_same_state(&got, &want, &what);
                                }
                                rejected |= want.latch.error.is_some();
                            }
                        }
                    }
                }
                full |= u.q.rob_count == rob as u16;
                u.step(&ev);
                assert_eq!(u.latch.error, None, "seed {seed} {v}");
                sat |= u.q.saturated;
                wrapped |= u.q.overflow != 0;
            }
            assert!(
                full && rejected,
                "seed {seed} {v}: stream too tame (full {full}, rejected {rejected})"
            );
        }
    }
    assert!(
        sat && wrapped,
        "no stream saturated a local or wrapped a global"
    );
}

fn rows_of(u: &Unit) -> Vec<RowView> {
    rows(u)
}

/// Every vector form of the 64 penalty incrementers this CPU runs agrees with
/// the portable walk, register for register and on the lost-count flag, for
/// every local width (32 bits included, where `+1` must not wrap) with
/// penalties at, just below and far below the maximum and random row masks
/// (an xorshift sequence from a fixed seed, printed on failure).
#[test]
fn vector_penalty_incrementers_match_the_portable_walk() {
    let seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut x = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut tried = [0usize; 3];
    for bits in 1..=32u32 {
        let max = if bits == 32 {
            u32::MAX
        } else {
            (1u32 << bits) - 1
        };
        for case in 0..200 {
            let mut pen = [0u32; 64];
            for p in &mut pen {
                let r = next();
                *p = match r % 4 {
                    0 => max,
                    1 => max.saturating_sub(1),
                    2 => 0,
                    _ => (r >> 8) as u32 % (max / 2 + 1),
                };
            }
            let m = match case % 4 {
                0 => u64::MAX,
                1 => 0,
                _ => next(),
            };
            let mut want = pen;
            let want_lost = pen_inc_portable(&mut want, m, max);
            for k in Kernel::available() {
                let mut got = pen;
                let lost = match k {
                    Kernel::Portable => pen_inc_portable(&mut got, m, max),
                    // SAFETY: `available` lists only kernels this CPU supports.
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx2 => unsafe { pen_inc_avx2(&mut got, m, max) },
                    // SAFETY: as above.
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx512 => unsafe { pen_inc_avx512(&mut got, m, max) },
                    #[cfg(not(target_arch = "x86_64"))]
                    _ => unreachable!("only the portable kernel is available"),
                };
                let what = format!("seed {seed:#x} {k:?} bits {bits} case {case} mask {m:#x}");
                assert_eq!(got, want, "{what}: penalties");
                assert_eq!(lost, want_lost, "{what}: lost flag");
                tried[Kernel::ALL.iter().position(|&a| a == k).unwrap()] += 1;
            }
        }
    }
    eprintln!("penalty incrementers compared (portable, avx2, avx512): {tried:?}");
    assert!(tried[0] > 0);
}

/// The row read-out with more than 64 live rows, wrapping around the table
/// (the block moves handle up to 64; beyond, the exact copies take over):
/// 256 rows, the head moved to row 200 (then 248) by as many committed
/// branches, then 240 branches in flight (dispatched and fetched), each row
/// with its own ROB id and penalty. Every column equals the plain read-out,
/// in a tight buffer and in roomy ones, as the rows fill up one cycle at a
/// time: the fixed form (up to `SHORT_ROWS` rows; from row 248 it wraps and
/// reads the arrays' padding), the block copies (up to 64 rows) and the
/// exact copies.
#[test]
fn rows_columns_with_more_than_64_live_rows_wrapping() {
    for head in [200u16, 248] {
        rows_columns_from(head);
    }
}

fn rows_columns_from(head: u16) {
    let mut p = params(Variant::Fmt);
    (p.fmt_rows, p.rob_entries) = (256, 4096);
    let mut u = Unit::new(p).unwrap();
    commit_branches(&mut u, head as usize);
    assert_eq!(u.q.head & 255, head);
    let check = |u: &Unit, what: &str| {
        let plain: Vec<events::PackedRow> = rows(u).iter().map(RowView::pack).collect();
        let n = plain.len();
        let want: Vec<u32> = (0..ROW_COLUMNS)
            .flat_map(|k| plain.iter().map(move |r| r[k]))
            .collect();
        for extra in [0, 8, SHORT_ROWS] {
            let mut buf = vec![u32::MAX; ROW_COLUMNS * 256 + extra];
            assert_eq!(u.rows_columns(&mut buf), n, "{what}");
            assert_eq!(
                &buf[..ROW_COLUMNS * n],
                &want[..],
                "{what}, {extra} spare words"
            );
        }
        n
    };
    let mut most = 0;
    // nothing retires from here on: the head waits once the ROB holds something
    let waiting = |u: &Unit, ev: CycleEvents| CycleEvents {
        head: if u.q.rob_count > 0 {
            HeadCause::Other
        } else {
            HeadCause::None
        },
        ..ev
    };
    for c in 0..30 {
        let ev = waiting(&u, fetch(8));
        ok(&mut u, ev);
        // one cycle later, dispatch the 4 oldest fetched (ROB ids differ)
        let ev = waiting(&u, dispatch(4, 0b1111));
        ok(&mut u, ev);
        most = most.max(check(&u, &format!("cycle {c}")));
    }
    assert!(most > 200, "only {most} live rows");
}

/// The pending `bpred` output sums the penalties of the dispatched rows
/// marked mispredicted, and only those: three branches in rows 0-2 count
/// penalties 6, 4 and 4; the one in row 2 is mispredicted, so the output is
/// 4 (not row 0's 6, nor the 14 of every dispatched row). Once that branch
/// has retired, its row still holds the `mispredict` bit but is no longer
/// dispatched: the output is 0.
#[test]
fn pending_bpred_sums_only_the_dispatched_mispredicted_rows() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(3));
    // row 0: id 0
    ok(&mut u, dispatch(1, 0b1));
    // penalties 1
    ok(&mut u, wait());
    // rows 1, 2: ids 1, 2; penalties 2
    ok(
        &mut u,
        CycleEvents {
            dispatched: 2,
            dispatched_branches: 0b11,
            ..wait()
        },
    );
    // penalties 3, 1, 1
    ok(&mut u, wait());
    // penalties 4, 2, 2; id 2 mispredicted (nothing younger to squash)
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(2),
            ..wait()
        },
    );
    // penalties 6, 4, 4
    ok(&mut u, wait());
    ok(&mut u, wait());
    let pen: Vec<u32> = rows(&u).iter().map(|r| r.penalty).collect();
    assert_eq!(pen, [6, 4, 4, 0]);
    assert_eq!(u.view().pending.bpred, 4);
    // ids 0-2 retire (row 2's penalty 5 goes to `bpred`)
    ok(
        &mut u,
        CycleEvents {
            retired: 3,
            ..idle()
        },
    );
    assert_eq!(get(&u, Counter::Bpred), 5);
    assert!(u.mispredict_bits()[2], "the retired row keeps its bit");
    assert_eq!(u.view().pending.bpred, 0);
}

/// The row accessors read each physical row's registers, and give 0 for a
/// row past the table (at 256 rows, row 256 is not row 0 again): row 0 holds
/// ROB id 1, penalty 4, I-counters [1, 0, 2] (stalls counted while it was the
/// accumulation row); row 1 ROB id 2, penalty 3, its `mispredict` and `done`
/// bits; row 2, the accumulation row, is all zero. In sFMT, the I-miss bit
/// of the instruction dispatched with one.
#[test]
fn row_accessors_read_each_row_and_nothing_past_the_table() {
    let mut u = Unit::new(Params {
        fmt_rows: 256,
        ..params(Variant::Fmt)
    })
    .unwrap();
    let stall = |fetch_stall| CycleEvents {
        fetch_stall,
        ..idle()
    };
    ok(&mut u, stall(FetchStall::L1i));
    ok(&mut u, stall(FetchStall::Itlb));
    ok(&mut u, stall(FetchStall::Itlb));
    ok(&mut u, fetch(2));
    // id 0 is not a branch; rows 0 and 1 take ids 1 and 2
    ok(&mut u, dispatch(1, 0));
    ok(
        &mut u,
        CycleEvents {
            dispatched: 2,
            dispatched_branches: 0b11,
            ..wait()
        },
    );
    // penalties 1, 1
    ok(&mut u, wait());
    // penalties 2, 2; id 2 (row 1) mispredicted
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(2),
            ..wait()
        },
    );
    // penalties 3, 3
    ok(&mut u, wait());
    // penalty 4 and row 1 not counted: its correct path dispatches, so it is done
    ok(
        &mut u,
        CycleEvents {
            dispatched: 1,
            ..wait()
        },
    );
    assert_eq!(u.regs().dtail, 2);
    let got: Vec<(u16, u32, [u32; 3])> = [0, 1, 2, 255, 256, 300]
        .iter()
        .map(|&r| (u.row_rob_id(r), u.row_penalty(r), u.row_icounts(r)))
        .collect();
    assert_eq!(
        got,
        [
            (1, 4, [1, 0, 2]),
            (2, 3, [0; 3]),
            (0, 0, [0; 3]),
            (0, 0, [0; 3]),
            (0, 0, [0; 3]),
            (0, 0, [0; 3]),
        ]
    );
    let (mp, done) = (u.mispredict_bits(), u.done_bits());
    assert!(mp[1] && done[1] && !mp[0] && !done[0]);
    assert_eq!(mp.count_ones() + done.count_ones(), 2);

    let mut u = unit(Variant::Sfmt);
    ok(
        &mut u,
        CycleEvents {
            dispatched: 3,
            dispatched_imiss: 0b100,
            ..idle()
        },
    );
    assert!(u.imiss_vec()[2]);
    assert_eq!(u.imiss_vec().count_ones(), 1);
}

/// A bundle takes the short path only when every field it tests is zero:
/// not when one field is set, nor when two are set to the same value (an OR
/// of the fields loosened to an XOR would cancel them), whatever the head
/// cause, fetch stall, `count_enable` and `backend_full` (which the short
/// path handles). A redirect in the cycle of a misprediction (both legal)
/// must still squash and mark the branch.
#[test]
fn a_bundle_is_quiet_only_when_nothing_retires_moves_or_squashes() {
    type Set = fn(&mut CycleEvents);
    let fields: [(&str, Set); 9] = [
        ("retired", |e| e.retired = 1),
        ("fetched_branches", |e| e.fetched_branches = 1),
        ("dispatched", |e| e.dispatched = 1),
        ("dispatched_branches", |e| e.dispatched_branches = 1),
        ("dispatched_imiss", |e| e.dispatched_imiss = 1),
        ("fe_squash", |e| e.fe_squash = 1),
        ("fe_redirect", |e| e.fe_redirect = true),
        ("mispredict", |e| e.squash = Squash::Mispredict(0)),
        ("flush", |e| e.squash = Squash::Flush(0)),
    ];
    for fetch_stall in FetchStall::ALL {
        for head in HeadCause::ALL {
            for (count_enable, backend_full) in [(true, false), (false, true)] {
                let base = CycleEvents {
                    fetch_stall,
                    head,
                    count_enable,
                    backend_full,
                    ..idle()
                };
                assert!(quiet(&base), "{base:?}");
                for (i, (a, set_a)) in fields.iter().enumerate() {
                    for (b, set_b) in &fields[i..] {
                        let mut ev = base;
                        set_a(&mut ev);
                        set_b(&mut ev);
                        assert!(!quiet(&ev), "{a} and {b} set: {ev:?}");
                    }
                }
            }
        }
    }
    // ids 0 (a branch, row 0) and 1; the branch mispredicts as a redirect
    // drops the row fetched behind it
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(2));
    ok(&mut u, dispatch(2, 0b01));
    ok(
        &mut u,
        CycleEvents {
            fe_redirect: true,
            squash: Squash::Mispredict(0),
            ..wait()
        },
    );
    let q = *u.regs();
    assert_eq!((q.dtail, q.ftail, q.rob_count), (1, 1, 1));
    assert!(q.refilling && u.mispredict_bits()[0]);
}

/// `step_many` is as many `step`s, with every kernel, for one, two and four
/// row words and both variants (each unit keeps its parameters): four
/// bundles are accepted (4 cycles, 1 retired), the fifth retires more than
/// the ROB holds and is latched as bundle 4, and the sixth is ignored.
#[test]
fn step_many_steps_each_bundle_until_one_is_rejected() {
    let retire = |n| CycleEvents {
        retired: n,
        ..idle()
    };
    let evs = [
        fetch(2),
        dispatch(2, 0b01),
        wait(),
        retire(1),
        retire(3),
        wait(),
    ];
    for rows in [64, 128, 256] {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let p = Params {
                fmt_rows: rows,
                ..params(v)
            };
            let mut one = Unit::new(p).unwrap();
            for ev in &evs {
                one.step(ev);
            }
            for k in Kernel::available() {
                let mut u = Unit::new(p).unwrap();
                assert!(u.set_kernel(k));
                u.step_many(&evs);
                let what = format!("{rows} rows {v} {k:?}");
                assert_eq!(*u.params(), p, "{what}");
                assert_same_state(&u, &one, &what);
                let err = u.latch().error.expect("latched");
                assert_eq!((err.bundle, err.field, err.rule), (4, Field::Retired, 2));
                assert_eq!(u.latch().bundles, 4, "{what}");
                assert_eq!(
                    (get(&u, Counter::Cycles), get(&u, Counter::Retired)),
                    (4, 1)
                );
                assert_eq!(u.view().rob_count, 1, "{what}");
            }
        }
    }
}

/// Every incrementer form says a count was lost exactly when a row asked to
/// count is already at its maximum, for local widths 1, 2, 16, 31 and 32:
/// rows at even indices hold the maximum, odd ones one less. Counting every
/// odd row loses nothing (each reaches the maximum); one even row among them
/// loses a count and stays; no row at all loses nothing. (Random masks nearly
/// always hold a row at its maximum, so a flag set for any counted row would
/// pass them.)
#[test]
fn a_count_is_lost_only_for_a_row_asked_to_count_at_its_maximum() {
    const ODD: u64 = 0xaaaa_aaaa_aaaa_aaaa;
    for bits in [1u32, 2, 16, 31, 32] {
        let max = if bits == 32 {
            u32::MAX
        } else {
            (1u32 << bits) - 1
        };
        let start: [u32; 64] = std::array::from_fn(|i| max - (i % 2) as u32);
        for k in Kernel::available() {
            for (m, want_lost) in [(ODD, false), (ODD | 1 << 62, true), (1, true), (0, false)] {
                let mut pen = start;
                let lost = match k {
                    Kernel::Portable => pen_inc_portable(&mut pen, m, max),
                    // SAFETY: `available` lists only kernels this CPU supports.
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx2 => unsafe { pen_inc_avx2(&mut pen, m, max) },
                    // SAFETY: as above.
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx512 => unsafe { pen_inc_avx512(&mut pen, m, max) },
                    #[cfg(not(target_arch = "x86_64"))]
                    _ => unreachable!("only the portable kernel is available"),
                };
                let what = format!("{k:?} bits {bits} mask {m:#x}");
                assert_eq!(lost, want_lost, "{what}");
                let want: [u32; 64] =
                    std::array::from_fn(|i| if m >> i & 1 != 0 { max } else { start[i] });
                assert_eq!(pen, want, "{what}");
            }
        }
    }
}

/// The debug form names the unit and shows its parameters and scalar
/// registers (not the row arrays).
#[test]
fn the_debug_form_shows_the_parameters_and_registers() {
    let mut u = unit(Variant::Sfmt);
    ok(&mut u, fetch(3));
    let text = format!("{u:?}");
    assert_eq!(
        text,
        format!("hw::Unit {{ params: {:?}, q: {:?}, .. }}", u.params, u.q)
    );
    assert!(
        text.contains("variant: Sfmt") && text.contains("ftail: 3"),
        "{text}"
    );
}

/// An id at or past `rob_entries` has no I-miss bit, also with 4096 entries,
/// where the bit vector is full and id 4096 would read id 0's bit.
#[test]
fn an_id_past_the_rob_has_no_imiss_bit() {
    let mut u = Unit::new(Params {
        rob_entries: 4096,
        ..params(Variant::Sfmt)
    })
    .unwrap();
    ok(
        &mut u,
        CycleEvents {
            dispatched: 1,
            dispatched_imiss: 0b1,
            ..idle()
        },
    );
    assert!(u.imiss_bit(0));
    assert!(!u.imiss_bit(4095) && !u.imiss_bit(4096) && !u.imiss_bit(u16::MAX));
}

/// A branch's row that collected stalls of two kinds charges both at its
/// commit: one L1I and one L2I stall cycle while row 0 was the accumulation
/// row give it I-counters [1, 1, 0], and its commit adds 1 to `l1i` and 1 to
/// `l2i`, each kind to its own counter. (With the counter index `L1i + k`
/// computed as `L1i * k`, l1i went to `cycles` and l2i to `l1i`; only itlb,
/// `2 * 2 = 4`, landed right, and it was the only kind tested.)
#[test]
fn a_row_with_stalls_of_two_kinds_charges_both_at_commit() {
    let mut u = unit(Variant::Fmt);
    for fetch_stall in [FetchStall::L1i, FetchStall::L2i] {
        ok(
            &mut u,
            CycleEvents {
                fetch_stall,
                ..idle()
            },
        );
    }
    ok(&mut u, fetch(1));
    ok(&mut u, dispatch(1, 0b1));
    assert_eq!(rows(&u)[0].l1i, 1);
    assert_eq!(rows(&u)[0].l2i, 1);
    assert_eq!(u.view().pending.l1i + u.view().pending.l2i, 2);
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    );
    assert_eq!(get(&u, Counter::L1i), 1);
    assert_eq!(get(&u, Counter::L2i), 1);
    assert_eq!(get(&u, Counter::Itlb), 0);
    let p = u.view().pending;
    assert_eq!((p.l1i, p.l2i, p.itlb), (0, 0, 0), "nothing left pending");
}

/// The window is full when the ROB is full or when `backend_full` says so,
/// and also when both hold: with all 4 ROB entries taken and `backend_full`
/// set, a cycle whose head waits for the L1D charges `l1d`, and the dispatched
/// branch's penalty does not count (an XOR of the two conditions would take
/// that cycle as not full).
#[test]
fn a_full_rob_and_a_full_backend_together_still_charge_the_head() {
    let mut u = Unit::new(Params {
        fmt_rows: 4,
        rob_entries: 4,
        ..Params::default()
    })
    .unwrap();
    ok(&mut u, fetch(1));
    ok(&mut u, dispatch(4, 0b1));
    assert!(u.view().rob_full);
    for backend_full in [false, true] {
        ok(
            &mut u,
            CycleEvents {
                head: HeadCause::L1d,
                backend_full,
                ..idle()
            },
        );
    }
    assert_eq!(get(&u, Counter::L1d), 2);
    assert_eq!(rows(&u)[0].penalty, 0, "a full window holds the penalties");
}

/// sFMT: a flush clears the I-miss bits of exactly the squashed entries, and
/// keeps those of the entries it keeps. ROB of 8. Across the wrap: head at
/// id 6, ids 6, 7, 0, 1 dispatched, each with its bit; `flush(7)` squashes
/// 7, 0 and 1, and only id 6's bit is left. Without a wrap: ids 0-5, bits on
/// 0 and 1; `flush(2)` squashes the 4 ids 2-5 and both bits stay (a length
/// taken as old count plus new, 6 + 2 = 8, cleared ids 2-9, wrapping onto 0
/// and 1).
#[test]
fn sfmt_a_flush_clears_the_imiss_bits_of_the_squashed_ids_only() {
    let unit8 = || {
        Unit::new(Params {
            fmt_rows: 4,
            rob_entries: 8,
            ..params(Variant::Sfmt)
        })
        .unwrap()
    };
    let flush = |x| CycleEvents {
        squash: Squash::Flush(x),
        ..wait()
    };
    let bits = |u: &Unit| (0..8).filter(|&id| u.imiss_bit(id)).collect::<Vec<u16>>();
    // across the wrap
    let mut u = unit8();
    ok(&mut u, dispatch(4, 0));
    ok(
        &mut u,
        CycleEvents {
            dispatched: 2,
            ..wait()
        },
    );
    for n in [4, 2] {
        ok(
            &mut u,
            CycleEvents {
                retired: n,
                ..idle()
            },
        );
    }
    assert_eq!((u.view().rob_head, u.view().rob_count), (6, 0));
    ok(
        &mut u,
        CycleEvents {
            dispatched: 4,
            dispatched_imiss: 0b1111,
            ..idle()
        },
    );
    assert_eq!(bits(&u), [0, 1, 6, 7]);
    ok(&mut u, flush(7));
    assert_eq!((u.view().rob_count, u.regs().rob_tail), (1, 7));
    assert_eq!(bits(&u), [6], "the bits of 7, 0 and 1 cleared, 6 kept");
    assert_eq!(u.view().imiss_bits, 1);
    // no wrap, four squashed, two kept
    let mut u = unit8();
    ok(
        &mut u,
        CycleEvents {
            dispatched: 4,
            dispatched_imiss: 0b11,
            ..idle()
        },
    );
    ok(
        &mut u,
        CycleEvents {
            dispatched: 2,
            ..wait()
        },
    );
    ok(&mut u, flush(2));
    assert_eq!((u.view().rob_count, u.regs().rob_tail), (2, 2));
    assert_eq!(bits(&u), [0, 1], "the kept entries keep their bits");
    assert_eq!(u.view().imiss_bits, 2);
}

/// A fetch stall lost at the maximum sets the sticky `saturated` flag in
/// both variants, not only a lost penalty: with 1-bit locals, the first L1I
/// stall cycle takes FMT's accumulation row (sFMT's shared counter) to 1,
/// which loses nothing; the second is lost, the counter holds at 1 and the
/// flag is set.
#[test]
fn a_stall_count_lost_at_the_maximum_sets_saturated_in_both_variants() {
    for v in [Variant::Fmt, Variant::Sfmt] {
        let mut u = Unit::new(Params {
            local_bits: 1,
            ..params(v)
        })
        .unwrap();
        let stall = CycleEvents {
            fetch_stall: FetchStall::L1i,
            ..idle()
        };
        ok(&mut u, stall);
        assert!(
            !u.view().saturated,
            "{v}: reaching the maximum loses nothing"
        );
        ok(&mut u, stall);
        let counted = if v == Variant::Fmt {
            rows(&u)[0].l1i
        } else {
            u.view().shared_i[0]
        };
        assert_eq!(counted, 1, "{v}: holds at 2^1 - 1");
        assert!(u.view().saturated, "{v}: the lost stall sets the flag");
    }
}

/// After a mispredicted branch commits before its correct path dispatches,
/// `bpred` counts every cycle of the wait and stops in the cycle that
/// dispatches (spec 4.1, and the dispatch cycle is the end of the refill):
/// the branch commits with penalty 3, two idle cycles add 1 each (5), the
/// dispatch cycle and the cycle after it add nothing (5).
#[test]
fn a_refill_pending_after_the_commit_counts_until_the_dispatch_cycle() {
    let mut u = unit(Variant::Fmt);
    ok(&mut u, fetch(1));
    ok(&mut u, dispatch(2, 0b01)); // branch id 0, id 1
    ok(&mut u, wait()); // penalty 1
    ok(
        &mut u,
        CycleEvents {
            squash: Squash::Mispredict(0),
            ..wait()
        },
    ); // penalty 2, id 1 squashed
    ok(
        &mut u,
        CycleEvents {
            retired: 1,
            ..idle()
        },
    ); // penalty 3, charged at the commit
    assert_eq!(get(&u, Counter::Bpred), 3);
    assert!(u.view().refill_pending);
    for want in [4, 5] {
        ok(&mut u, idle());
        assert_eq!(get(&u, Counter::Bpred), want, "a refill cycle");
    }
    ok(&mut u, dispatch(1, 0));
    assert_eq!(
        get(&u, Counter::Bpred),
        5,
        "the dispatch cycle ends the refill"
    );
    assert!(!u.view().refill_pending);
    ok(&mut u, wait());
    assert_eq!(get(&u, Counter::Bpred), 5);
}
