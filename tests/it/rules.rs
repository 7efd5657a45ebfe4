//! Every protocol rule of spec section 6, broken on purpose, on both models and
//! both variants: the latched {bundle index, field, rule}, nothing changed by the
//! bad bundle (view and rows equal to before, `cycles` too), every later bundle
//! ignored; and the legal edge cases next to each rule that must NOT be rejected.
//!
//! Each case is `(params, prefix, bad)`: the prefix is a legal stream that sets up
//! the state `S`; `bad` is the bundle that breaks the rule (its index is
//! `prefix.len()`).

use cpistack::check::LockStep;
use cpistack::scenarios::{
    busy, dispatch, fetch, flush, idle, mispredict, redirect, retire, stall, Build,
};
use events::{
    CounterUnit, CycleEvents, FetchStall, Field, HeadCause, Params, ProtocolError, RowView,
    UnitView, Variant,
};
use rstest::rstest;

use Field::{
    Dispatched, DispatchedBranches, DispatchedImiss, FeSquash, FetchedBranches, Head, Retired,
    Squash,
};

fn p() -> Params {
    Params::default()
}
fn widths(fetch: u32, dispatch: u32, retire: u32) -> Params {
    Params {
        fetch_width: fetch,
        dispatch_width: dispatch,
        retire_width: retire,
        ..p()
    }
}
fn rows(n: u32) -> Params {
    Params { fmt_rows: n, ..p() }
}
fn rob(n: u32) -> Params {
    Params {
        rob_entries: n,
        ..p()
    }
}

/// `fe_squash` without `fe_redirect` (no builder makes this on purpose).
fn squash_only(n: u8) -> CycleEvents {
    CycleEvents {
        fe_squash: n,
        ..idle()
    }
}

/// ids 0 (non-branch) and 1 (branch B, row 0) in the ROB; no fetched rows.
fn nb_b() -> Vec<CycleEvents> {
    vec![fetch(1), dispatch(2, 0b10)]
}
/// ids 0 (branch B, row 0) and 1 (non-branch) in the ROB.
fn b_nb() -> Vec<CycleEvents> {
    vec![fetch(1), dispatch(2, 0b01)]
}

fn models(p: Params) -> Vec<(&'static str, Box<dyn CounterUnit>)> {
    vec![
        ("hw", Box::new(hw::Unit::new(p).expect("hw params"))),
        (
            "golden",
            Box::new(golden::Unit::new(p).expect("golden params")),
        ),
    ]
}

fn snap(u: &dyn CounterUnit) -> (UnitView, Vec<RowView>) {
    let mut r = Vec::new();
    u.for_each_row(&mut |_, row| r.push(row));
    (u.view(), r)
}

/// Bundles fed after the bad one: legal-looking ones of every kind and another
/// bad one (a different rule); all must be ignored.
fn later() -> Vec<CycleEvents> {
    vec![
        idle(),
        busy(),
        retire(1),
        fetch(1),
        dispatch(1, 0),
        stall(FetchStall::L1i),
        retire(200),
        idle().off(),
    ]
}

/// Run `prefix` then `bad` on both models and both variants: `bad` must latch
/// {prefix.len(), field, rule}, change nothing, and freeze the unit.
fn reject(params: Params, prefix: &[CycleEvents], bad: CycleEvents, field: Field, rule: u8) {
    let want = ProtocolError {
        bundle: prefix.len() as u64,
        field,
        rule,
    };
    for v in [Variant::Fmt, Variant::Sfmt] {
        let pv = params.with_variant(v);
        for (name, mut u) in models(pv) {
            let ctx = format!("{name} ({v}), bad bundle {bad:?}");
            for (i, ev) in prefix.iter().enumerate() {
                u.step(ev);
                assert_eq!(u.view().error, None, "{ctx}: prefix bundle {i} rejected");
            }
            let (before_v, before_r) = snap(u.as_ref());
            u.step(&bad);
            let (after_v, after_r) = snap(u.as_ref());
            assert_eq!(
                after_v.error,
                Some(want),
                "{ctx}: expected {want}, got {:?}",
                after_v.error
            );
            let mut unchanged = after_v;
            unchanged.error = None;
            assert_eq!(
                unchanged, before_v,
                "{ctx}: the bad bundle changed the view"
            );
            assert_eq!(after_r, before_r, "{ctx}: the bad bundle changed the rows");
            for (i, ev) in later().iter().enumerate() {
                u.step(ev);
                let (v2, r2) = snap(u.as_ref());
                assert_eq!(v2, after_v, "{ctx}: later bundle {i} not ignored");
                assert_eq!(r2, after_r, "{ctx}: later bundle {i} changed rows");
            }
        }
        let mut ls = LockStep::new(pv).expect("lock-step params");
        for (i, ev) in prefix
            .iter()
            .chain([&bad])
            .chain(later().iter())
            .enumerate()
        {
            if let Err(m) = ls.step(ev) {
                panic!("lock-step ({v}) mismatch at bundle {i}: {m}");
            }
        }
    }
}

/// Run `bundles` on both models and both variants: none may be rejected; then
/// `check` holds on the final view (of each model).
fn accept(params: Params, bundles: &[CycleEvents], check: impl Fn(&UnitView) -> bool) {
    for v in [Variant::Fmt, Variant::Sfmt] {
        let pv = params.with_variant(v);
        for (name, mut u) in models(pv) {
            for (i, ev) in bundles.iter().enumerate() {
                u.step(ev);
                assert_eq!(
                    u.view().error,
                    None,
                    "{name} ({v}): legal bundle {i} {ev:?} rejected"
                );
            }
            let view = u.view();
            assert!(
                check(&view),
                "{name} ({v}): unexpected final state {view:?}"
            );
        }
        let mut ls = LockStep::new(pv).expect("lock-step params");
        for (i, ev) in bundles.iter().enumerate() {
            if let Err(m) = ls.step(ev) {
                panic!("lock-step ({v}) mismatch at bundle {i}: {m}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Rules 1-9, every sub-case
// ---------------------------------------------------------------------------

#[rstest]
// rule 1: counts above their width, field = the first failing in section 3 order
#[case::r1_fetched_above_width(widths(2, 4, 4), vec![], fetch(3), FetchedBranches, 1)]
#[case::r1_fetched_255(p(), vec![], fetch(255), FetchedBranches, 1)]
#[case::r1_fetched_9_width_8(p(), vec![], fetch(9), FetchedBranches, 1)]
#[case::r1_dispatched_above_width(widths(8, 2, 4), vec![], dispatch(3, 0), Dispatched, 1)]
#[case::r1_dispatched_5_width_4(p(), vec![], dispatch(5, 0), Dispatched, 1)]
#[case::r1_retired_above_width(widths(8, 4, 2), vec![dispatch(4, 0)], retire(3), Retired, 1)]
#[case::r1_retired_width_before_rob_count(p(), vec![], retire(5), Retired, 1)]
// rule 1: a mask bit at or above `dispatched`, both masks
#[case::r1_branch_bit_at_dispatched(p(), vec![fetch(3)], dispatch(2, 0b100), DispatchedBranches, 1)]
#[case::r1_branch_bit_above(p(), vec![fetch(3)], dispatch(1, 0b1000_0000), DispatchedBranches, 1)]
#[case::r1_branch_bit_none_dispatched(p(), vec![fetch(1)], dispatch(0, 0b1), DispatchedBranches, 1)]
#[case::r1_imiss_bit_at_dispatched(p(), vec![], dispatch(2, 0).imiss(0b100), DispatchedImiss, 1)]
#[case::r1_imiss_bit_above(p(), vec![], dispatch(3, 0).imiss(0b1001_0000), DispatchedImiss, 1)]
#[case::r1_imiss_bit_none_dispatched(p(), vec![], idle().imiss(0b1), DispatchedImiss, 1)]
// rule 1: order among its own fields
#[case::r1_order_fetched_before_retired(widths(2, 4, 2), vec![dispatch(4, 0)], fetch(3).retire(3), FetchedBranches, 1)]
#[case::r1_order_dispatched_before_masks(widths(8, 2, 4), vec![], dispatch(3, 0b1000).imiss(0b1000), Dispatched, 1)]
#[case::r1_order_branch_mask_before_imiss(p(), vec![], dispatch(2, 0b100).imiss(0b100), DispatchedBranches, 1)]
#[case::r1_order_imiss_before_retired(p(), vec![], dispatch(2, 0).imiss(0b100).retire(9), DispatchedImiss, 1)]
#[case::r1_counted_off_too(widths(2, 4, 4), vec![], fetch(3).off(), FetchedBranches, 1)]
// rule 2: retired > S.rob_count
#[case::r2_retire_from_empty(p(), vec![], retire(1), Retired, 2)]
#[case::r2_retire_more_than_rob(p(), nb_b(), retire(3), Retired, 2)]
#[case::r2_before_head(p(), vec![], retire(1).head(HeadCause::Other), Retired, 2)]
// rule 3: head inconsistent
#[case::r3_head_while_retiring(p(), nb_b(), retire(1).head(HeadCause::L2d), Head, 3)]
#[case::r3_head_other_while_retiring_all(p(), nb_b(), retire(2).head(HeadCause::Other), Head, 3)]
#[case::r3_head_l1d_while_empty(p(), vec![], idle().head(HeadCause::L1d), Head, 3)]
#[case::r3_head_l2d_while_empty(p(), vec![], idle().head(HeadCause::L2d), Head, 3)]
#[case::r3_head_dtlb_while_empty(p(), vec![], idle().head(HeadCause::Dtlb), Head, 3)]
#[case::r3_head_longlat_while_empty(p(), vec![], idle().head(HeadCause::Longlat), Head, 3)]
#[case::r3_head_other_while_empty(p(), vec![], busy(), Head, 3)]
#[case::r3_head_while_empty_and_dispatching(p(), vec![], dispatch(2, 0).head(HeadCause::Other), Head, 3)]
#[case::r3_head_while_emptied_by_squash(p(), vec![dispatch(2, 0), busy().flush(0)], busy(), Head, 3)]
#[case::r3_none_while_busy(p(), nb_b(), idle(), Head, 3)]
#[case::r3_none_while_busy_dispatching(p(), nb_b(), dispatch(1, 0), Head, 3)]
#[case::r3_before_r4(p(), vec![], stall(FetchStall::L1i).fetch(1).head(HeadCause::Other), Head, 3)]
// rule 4: fetch stall with fetched branches, every stall kind
#[case::r4_l1i(p(), vec![], stall(FetchStall::L1i).fetch(1), FetchedBranches, 4)]
#[case::r4_l2i(p(), vec![], stall(FetchStall::L2i).fetch(2), FetchedBranches, 4)]
#[case::r4_itlb(p(), vec![], stall(FetchStall::Itlb).fetch(1), FetchedBranches, 4)]
#[case::r4_before_r5(p(), vec![], { let mut b = stall(FetchStall::L1i).fetch(1); b.fe_squash = 1; b }, FetchedBranches, 4)]
// rule 5: fe_squash without fe_redirect, or above the fetched rows after this cycle's fetch
#[case::r5_squash_without_redirect(p(), vec![fetch(1)], squash_only(1), FeSquash, 5)]
#[case::r5_squash_without_redirect_same_cycle_fetch(p(), vec![], { let mut b = fetch(1); b.fe_squash = 1; b }, FeSquash, 5)]
#[case::r5_squash_nothing_fetched(p(), vec![], redirect(1), FeSquash, 5)]
#[case::r5_squash_dispatched_rows(p(), nb_b(), redirect(1).head(HeadCause::Other), FeSquash, 5)]
#[case::r5_squash_above_fetched(p(), vec![fetch(1)], fetch(1).redirect(3), FeSquash, 5)]
#[case::r5_before_r6(rows(4), vec![fetch(3)], fetch(1).redirect(9), FeSquash, 5)]
// rule 6: fetched_branches above the free rows after this cycle's retirement
#[case::r6_no_free_row(rows(4), vec![fetch(3)], fetch(1), FetchedBranches, 6)]
#[case::r6_one_free_row(rows(4), vec![fetch(2)], fetch(2), FetchedBranches, 6)]
#[case::r6_fmt_rows_2(rows(2), vec![fetch(1)], fetch(1), FetchedBranches, 6)]
#[case::r6_from_reset(rows(4), vec![], fetch(4), FetchedBranches, 6)]
#[case::r6_redirect_frees_nothing(rows(4), vec![fetch(2)], fetch(2).redirect(2), FetchedBranches, 6)]
#[case::r6_squash_frees_nothing(rows(4), vec![fetch(3), dispatch(3, 0b111)], fetch(1).mispredict(0).head(HeadCause::Other), FetchedBranches, 6)]
#[case::r6_nonbranch_retire_frees_nothing(rows(4), vec![fetch(3), dispatch(4, 0b1110)], retire(1).fetch(1), FetchedBranches, 6)]
#[case::r6_before_r7(rows(4), vec![fetch(3)], fetch(1).dispatch(4, 0b1111), FetchedBranches, 6)]
// rule 7: dispatched branches above the rows fetched in earlier cycles that survive the redirect
#[case::r7_nothing_fetched(p(), vec![], dispatch(1, 0b1), DispatchedBranches, 7)]
#[case::r7_fetched_this_cycle(p(), vec![], fetch(1).dispatch(1, 0b1), DispatchedBranches, 7)]
#[case::r7_more_than_fetched(p(), vec![fetch(1)], dispatch(2, 0b11), DispatchedBranches, 7)]
#[case::r7_only_dispatched_rows(p(), nb_b(), dispatch(1, 0b1).head(HeadCause::Other), DispatchedBranches, 7)]
#[case::r7_redirect_squashes_earlier(p(), vec![fetch(1)], fetch(1).redirect(2).dispatch(1, 0b1), DispatchedBranches, 7)]
#[case::r7_redirect_squashes_all_earlier(p(), vec![fetch(2)], redirect(2).dispatch(1, 0b1), DispatchedBranches, 7)]
#[case::r7_redirect_leaves_one(p(), vec![fetch(2)], redirect(1).dispatch(2, 0b11), DispatchedBranches, 7)]
#[case::r7_before_r8(rob(4), vec![dispatch(4, 0)], dispatch(1, 0b1).head(HeadCause::Other), DispatchedBranches, 7)]
// rule 8: ROB overflow
#[case::r8_overflow(rob(4), vec![dispatch(3, 0)], dispatch(2, 0).head(HeadCause::Other), Dispatched, 8)]
#[case::r8_full(rob(4), vec![dispatch(4, 0)], dispatch(1, 0).head(HeadCause::Other), Dispatched, 8)]
#[case::r8_retire_not_enough(rob(4), vec![dispatch(4, 0)], retire(1).dispatch(2, 0), Dispatched, 8)]
#[case::r8_squash_frees_nothing(rob(4), vec![fetch(1), dispatch(4, 0b0001)], dispatch(1, 0).mispredict(0).head(HeadCause::Other), Dispatched, 8)]
#[case::r8_before_r9(rob(4), vec![dispatch(4, 0)], dispatch(1, 0).mispredict(7).head(HeadCause::Other), Dispatched, 8)]
// rule 9: squash naming an id not in the ROB after this cycle's retirement
#[case::r9_mispredict_not_in_rob(p(), nb_b(), busy().mispredict(5), Squash, 9)]
#[case::r9_flush_not_in_rob(p(), nb_b(), busy().flush(5), Squash, 9)]
#[case::r9_mispredict_rob_tail(p(), nb_b(), busy().mispredict(2), Squash, 9)]
#[case::r9_flush_rob_tail(p(), nb_b(), busy().flush(2), Squash, 9)]
#[case::r9_mispredict_empty_rob(p(), vec![], mispredict(0), Squash, 9)]
#[case::r9_flush_empty_rob(p(), vec![], flush(0), Squash, 9)]
#[case::r9_mispredict_id_above_rob(p(), nb_b(), busy().mispredict(300), Squash, 9)]
#[case::r9_flush_id_max(p(), nb_b(), busy().flush(u16::MAX), Squash, 9)]
#[case::r9_mispredict_retiring(p(), b_nb(), retire(1).mispredict(0), Squash, 9)]
#[case::r9_flush_retiring(p(), b_nb(), retire(1).flush(0), Squash, 9)]
#[case::r9_flush_dispatched_this_cycle(p(), vec![], dispatch(2, 0).flush(0), Squash, 9)]
#[case::r9_mispredict_dispatched_this_cycle(p(), vec![fetch(1)], dispatch(1, 0b1).mispredict(0), Squash, 9)]
#[case::r9_wrapped_rob_gap(rob(4), vec![dispatch(3, 0), retire(3), fetch(1), dispatch(2, 0b10)], busy().mispredict(1), Squash, 9)]
#[case::r9_wrapped_rob_gap_flush(rob(4), vec![dispatch(3, 0), retire(3), fetch(1), dispatch(2, 0b10)], busy().flush(2), Squash, 9)]
// rule 9: mispredict(x) where x is not a dispatched branch of S that stays
#[case::r9_mispredict_non_branch(p(), nb_b(), busy().mispredict(0), Squash, 9)]
#[case::r9_mispredict_non_branch_wrapped(rob(4), vec![dispatch(3, 0), retire(3), fetch(1), dispatch(2, 0b10)], busy().mispredict(3), Squash, 9)]
// rule 9: a row already marked mispredict
#[case::r9_already_mispredicted(p(), vec![fetch(1), dispatch(2, 0b10), busy().mispredict(1)], busy().mispredict(1), Squash, 9)]
#[case::r9_already_mispredicted_after_refill(p(), vec![fetch(1), dispatch(2, 0b10), busy().mispredict(1), dispatch(1, 0).head(HeadCause::Other)], busy().mispredict(1), Squash, 9)]
fn rule_broken(
    #[case] params: Params,
    #[case] prefix: Vec<CycleEvents>,
    #[case] bad: CycleEvents,
    #[case] field: Field,
    #[case] rule: u8,
) {
    reject(params, &prefix, bad, field, rule);
}

/// The latch keeps the FIRST violation: a second bad bundle of another rule
/// does not overwrite it (both models).
#[test]
fn first_error_is_kept() {
    for v in [Variant::Fmt, Variant::Sfmt] {
        for (name, mut u) in models(p().with_variant(v)) {
            u.step(&fetch(1));
            u.step(&retire(1)); // rule 2 at bundle 1
            u.step(&dispatch(9, 0)); // rule 1 at bundle 2: ignored
            u.step(&fetch(1));
            assert_eq!(
                u.view().error,
                Some(ProtocolError {
                    bundle: 1,
                    field: Retired,
                    rule: 2
                }),
                "{name} ({v})"
            );
            assert_eq!(
                u.view().counters.value[0],
                1,
                "{name} ({v}): cycles frozen at 1"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Legal edge cases: must NOT be rejected
// ---------------------------------------------------------------------------

#[test]
fn legal_counts_exactly_at_width() {
    // fetch_width 2, dispatch_width 2, retire_width 2: each count exactly at its width.
    accept(
        widths(2, 2, 2),
        &[fetch(2), dispatch(2, 0b11), retire(2)],
        |v| v.counters.value[1] == 2 && v.free_rows == 63 && v.rob_count == 0,
    );
    // the maximum widths, 8 each
    accept(
        widths(8, 8, 8),
        &[fetch(8), dispatch(8, 0xff).imiss(0x80), retire(8)],
        |v| v.counters.value[1] == 8 && v.rob_count == 0,
    );
}

#[test]
fn legal_highest_mask_bit() {
    // mask bit dispatched - 1, both masks
    accept(p(), &[fetch(1), dispatch(4, 0b1000).imiss(0b1000)], |v| {
        v.dispatched_rows == 1 && v.rob_count == 4
    });
}

#[test]
fn legal_fetch_exactly_the_free_rows() {
    // fmt_rows 4: 3 usable rows, fetched at once from reset
    accept(rows(4), &[fetch(3)], |v| {
        v.free_rows == 0 && v.fetched_rows == 3
    });
    accept(rows(2), &[fetch(1)], |v| v.free_rows == 0);
}

#[test]
fn legal_fetch_up_to_the_rows_freed_by_this_cycles_retirement() {
    // 3 rows dispatched (ids 0-2), none free; retiring one branch frees one row
    // for this cycle's fetch, retiring all three frees three
    let pre = [fetch(3), dispatch(3, 0b111)];
    accept(rows(4), &[pre[0], pre[1], retire(1).fetch(1)], |v| {
        v.free_rows == 0 && v.dispatched_rows == 2 && v.fetched_rows == 1
    });
    accept(rows(4), &[pre[0], pre[1], retire(3).fetch(3)], |v| {
        v.free_rows == 0 && v.dispatched_rows == 0 && v.fetched_rows == 3
    });
    // a non-branch and a branch retire: one row
    accept(
        rows(4),
        &[fetch(3), dispatch(4, 0b1110), retire(2).fetch(1)],
        |v| v.free_rows == 0 && v.rob_count == 2,
    );
    // fmt_rows 2 with the pointer wrap
    accept(
        rows(2),
        &[
            fetch(1),
            dispatch(1, 0b1),
            retire(1).fetch(1),
            dispatch(1, 0b1),
            retire(1).fetch(1),
            dispatch(1, 0b1),
            retire(1).fetch(1),
        ],
        |v| v.free_rows == 0 && v.fetched_rows == 1 && v.counters.value[1] == 3,
    );
}

#[test]
fn legal_dispatch_a_branch_fetched_the_previous_cycle() {
    accept(p(), &[fetch(1), dispatch(1, 0b1)], |v| {
        v.dispatched_rows == 1 && v.fetched_rows == 0
    });
    // fetch and dispatch in the same cycle: the dispatched branch is the earlier one
    accept(p(), &[fetch(1), fetch(1).dispatch(1, 0b1)], |v| {
        v.dispatched_rows == 1 && v.fetched_rows == 1
    });
}

#[test]
fn legal_redirects() {
    // redirect squashing no branch with nothing fetched
    accept(p(), &[redirect(0)], |v| v.free_rows == 63);
    // fe_squash exactly the fetched rows after this cycle's fetch (1 earlier + 1 now)
    accept(p(), &[fetch(1), fetch(1).redirect(2)], |v| {
        v.fetched_rows == 0 && v.free_rows == 63
    });
    // squash only this cycle's branch, dispatch the earlier one
    accept(
        p(),
        &[fetch(1), fetch(1).redirect(1).dispatch(1, 0b1)],
        |v| v.dispatched_rows == 1 && v.fetched_rows == 0,
    );
    // squash one of two earlier rows, dispatch the survivor
    accept(p(), &[fetch(2), redirect(1).dispatch(1, 0b1)], |v| {
        v.dispatched_rows == 1 && v.fetched_rows == 0
    });
    // redirect while dispatched rows exist
    accept(
        p(),
        &[
            fetch(2),
            dispatch(1, 0b1),
            redirect(1).head(HeadCause::Other),
        ],
        |v| v.dispatched_rows == 1 && v.fetched_rows == 0,
    );
}

#[test]
fn legal_rob_exactly_full() {
    accept(
        rob(4),
        &[dispatch(3, 0), dispatch(1, 0).head(HeadCause::Other)],
        |v| v.rob_full && v.rob_count == 4,
    );
    accept(rob(4), &[dispatch(4, 0), retire(1).dispatch(1, 0)], |v| {
        v.rob_full && v.rob_count == 4
    });
    accept(rob(4), &[dispatch(4, 0), retire(4).dispatch(4, 0)], |v| {
        v.rob_full && v.rob_head == 0
    });
}

#[test]
fn legal_head_cases() {
    // retire everything (retired == rob_count), head none
    accept(p(), &[dispatch(3, 0), retire(3)], |v| v.rob_count == 0);
    // dispatch into an empty ROB with head none
    accept(p(), &[dispatch(2, 0)], |v| v.rob_count == 2);
    // every head cause while the ROB holds instructions and nothing retires
    for c in [
        HeadCause::L1d,
        HeadCause::L2d,
        HeadCause::Dtlb,
        HeadCause::Longlat,
        HeadCause::Other,
    ] {
        accept(p(), &[dispatch(2, 0), dispatch(1, 0).head(c)], |v| {
            v.rob_count == 3
        });
    }
    // a fetch stall with dispatch and retirement in the same cycle
    accept(
        p(),
        &[
            dispatch(2, 0),
            retire(1).dispatch(1, 0).stall(FetchStall::Itlb),
        ],
        |v| v.rob_count == 2,
    );
}

#[test]
fn legal_squashes() {
    // an older instruction retires in the cycle its younger branch is mispredicted
    accept(
        p(),
        &[fetch(1), dispatch(2, 0b10), retire(1).mispredict(1)],
        |v| v.rob_count == 1 && v.dispatched_rows == 1 && v.refilling,
    );
    // flush of the oldest instruction left after this cycle's retirement
    accept(p(), &[dispatch(3, 0), retire(1).flush(1)], |v| {
        v.rob_count == 0 && v.rob_head == 1
    });
    // two different branches mispredicted, the younger first (out of order)
    accept(
        p(),
        &[
            fetch(2),
            dispatch(2, 0b11),
            busy().mispredict(1),
            busy().mispredict(0),
        ],
        |v| v.dispatched_rows == 1 && v.rob_count == 1,
    );
    // wrapped ROB (ids 3, 0): mispredict the branch id 0, flush id 3
    let wrap = [dispatch(3, 0), retire(3), fetch(1), dispatch(2, 0b10)];
    accept(
        rob(4),
        &[wrap.as_slice(), &[busy().mispredict(0)]].concat(),
        |v| v.rob_count == 2 && v.rob_head == 3 && v.dispatched_rows == 1,
    );
    accept(
        rob(4),
        &[wrap.as_slice(), &[busy().flush(0)]].concat(),
        |v| v.rob_count == 1 && v.dispatched_rows == 0,
    );
    accept(
        rob(4),
        &[wrap.as_slice(), &[busy().flush(3)]].concat(),
        |v| v.rob_count == 0 && v.dispatched_rows == 0,
    );
    // flush of a branch itself (a non-branch event on a branch): its row goes
    accept(p(), &[fetch(1), dispatch(1, 0b1), busy().flush(0)], |v| {
        v.rob_count == 0 && v.dispatched_rows == 0 && !v.refilling
    });
}

#[test]
fn legal_imiss_mask_in_fmt_and_count_enable_off() {
    accept(
        p(),
        &[
            stall(FetchStall::L1i).off(),
            fetch(1).off(),
            dispatch(2, 0b10).imiss(0b01).off(),
            retire(2).off(),
        ],
        |v| v.counters.value.iter().all(|&c| c == 0) && v.rob_count == 0,
    );
}
