//! The scenario table: every stream of `cpistack::scenarios::all()` run on both
//! models (`hw::Unit`, `golden::Unit`) and through the lock-step checker, for both
//! variants, against counter values worked out BY HAND from the spec
//! (`counter-unit.md` sections 3-5) and the paper's interval analysis.
//!
//! Notation in the comments: `cN` is the bundle with index N (from 0); `at(k)` is
//! the state after k bundles (so `at(N+1)` is after `cN`). `rowR` is a physical
//! FMT row; `acc` the accumulation row (`ftail`); `pen` a row's penalty counter;
//! `shared` sFMT's shared I-counters. Counting (4.1) reads the state at the start
//! of the cycle, so a branch dispatched in `cN` first gets `pen += 1` in `cN+1`.

use cpistack::check::LockStep;
use cpistack::scenarios::{all, by_name};
use events::Counter::{self, Bpred, Cycles, Dtlb, Itlb, L1d, L1i, L2d, L2i, Longlat, Retired};
use events::{CounterUnit, Field, Pending, ProtocolError, RowView, UnitView, Variant};
use rstest::rstest;

use Variant::{Fmt, Sfmt};

// ---------------------------------------------------------------------------
// Expectations
// ---------------------------------------------------------------------------

/// What must hold after `k` bundles. Every `At` also checks `error` (None unless
/// `err` is given) and `saturated` (false unless `sat` is given).
#[derive(Clone, Debug, Default)]
struct At {
    k: usize,
    counters: Option<Vec<(Counter, u64)>>,
    overflow: Vec<Counter>,
    saturated: bool,
    pending: Option<Pending>,
    free_rows: Option<u32>,
    rob_count: Option<u32>,
    rob_head: Option<u32>,
    rob_full: Option<bool>,
    occ: Option<(u32, u32)>,
    refill: Option<(bool, bool)>,
    shared_i: Option<[u32; 3]>,
    imiss_bits: Option<u32>,
    rows: Option<Vec<RowView>>,
    error: Option<ProtocolError>,
    same_as: Option<usize>,
}

fn at(k: usize) -> At {
    At { k, ..At::default() }
}

impl At {
    /// All ten global counters: the listed ones, every other one 0. Also checks
    /// the overflow flags (none unless `ovf`).
    fn c(mut self, v: &[(Counter, u64)]) -> Self {
        self.counters = Some(v.to_vec());
        self
    }
    fn ovf(mut self, v: &[Counter]) -> Self {
        self.overflow = v.to_vec();
        self
    }
    fn sat(mut self, s: bool) -> Self {
        self.saturated = s;
        self
    }
    fn pend(mut self, l1i: u64, l2i: u64, itlb: u64, bpred: u64) -> Self {
        self.pending = Some(Pending {
            l1i,
            l2i,
            itlb,
            bpred,
        });
        self
    }
    fn free(mut self, n: u32) -> Self {
        self.free_rows = Some(n);
        self
    }
    fn rob(mut self, n: u32) -> Self {
        self.rob_count = Some(n);
        self
    }
    fn robh(mut self, id: u32) -> Self {
        self.rob_head = Some(id);
        self
    }
    fn full(mut self, f: bool) -> Self {
        self.rob_full = Some(f);
        self
    }
    /// (dispatched rows, fetched rows).
    fn occ(mut self, d: u32, f: u32) -> Self {
        self.occ = Some((d, f));
        self
    }
    /// (refilling, refill_pending).
    fn refill(mut self, refilling: bool, pending: bool) -> Self {
        self.refill = Some((refilling, pending));
        self
    }
    fn shared(mut self, v: [u32; 3]) -> Self {
        self.shared_i = Some(v);
        self
    }
    fn ibits(mut self, n: u32) -> Self {
        self.imiss_bits = Some(n);
        self
    }
    /// Every live row, oldest first, the accumulation row last.
    fn rows(mut self, r: Vec<RowView>) -> Self {
        self.rows = Some(r);
        self
    }
    fn err(mut self, bundle: u64, field: Field, rule: u8) -> Self {
        self.error = Some(ProtocolError {
            bundle,
            field,
            rule,
        });
        self
    }
    /// The view (but for `error`) and the rows equal those after `j` bundles.
    fn same_as(mut self, j: usize) -> Self {
        self.same_as = Some(j);
        self
    }
}

/// A dispatched row.
fn dr(rob_id: u16, penalty: u32, mispredict: bool, done: bool) -> RowView {
    RowView {
        dispatched: true,
        rob_id,
        penalty,
        mispredict,
        done,
        ..RowView::default()
    }
}

/// A fetched (undispatched) row or the accumulation row, with no I-stalls.
fn fr() -> RowView {
    RowView::default()
}

/// A row's FMT I-counters (sFMT rows report 0).
trait RowI {
    fn i(self, v: Variant, l1i: u32, l2i: u32, itlb: u32) -> RowView;
}

impl RowI for RowView {
    fn i(mut self, v: Variant, l1i: u32, l2i: u32, itlb: u32) -> RowView {
        if v == Fmt {
            self.l1i = l1i;
            self.l2i = l2i;
            self.itlb = itlb;
        }
        self
    }
}

/// `f` in FMT, `s` in sFMT.
fn fs<T>(v: Variant, f: T, s: T) -> T {
    if v == Fmt {
        f
    } else {
        s
    }
}

// ---------------------------------------------------------------------------
// The harness
// ---------------------------------------------------------------------------

struct Trace {
    views: Vec<UnitView>,
    rows: Vec<Vec<RowView>>,
}

fn rows_of(u: &dyn CounterUnit) -> Vec<RowView> {
    let mut r = Vec::new();
    u.for_each_row(&mut |_, row| r.push(row));
    r
}

fn trace(u: &mut dyn CounterUnit, bundles: &[events::CycleEvents]) -> Trace {
    let mut t = Trace {
        views: vec![u.view()],
        rows: vec![rows_of(u)],
    };
    for ev in bundles {
        u.step(ev);
        t.views.push(u.view());
        t.rows.push(rows_of(u));
    }
    t
}

fn compare(model: &str, t: &Trace, e: &At, out: &mut Vec<String>) {
    let Some(v) = t.views.get(e.k) else {
        out.push(format!("{model}: no state after {} bundles", e.k));
        return;
    };
    let mut bad = |field: &str, exp: String, got: String| {
        if exp != got {
            out.push(format!(
                "{model} at({}): {field}: expected {exp}, got {got}",
                e.k
            ));
        }
    };
    if let Some(c) = &e.counters {
        for k in Counter::ALL {
            let exp = c.iter().find(|(n, _)| *n == k).map_or(0, |&(_, x)| x);
            bad(k.name(), exp.to_string(), v.counters.get(k).to_string());
        }
        let exp: u16 = e.overflow.iter().map(|c| 1u16 << c.idx()).sum();
        bad(
            "overflow",
            format!("{exp:#012b}"),
            format!("{:#012b}", v.counters.overflow),
        );
    }
    bad(
        "saturated",
        e.saturated.to_string(),
        v.saturated.to_string(),
    );
    bad("error", format!("{:?}", e.error), format!("{:?}", v.error));
    if let Some(p) = e.pending {
        bad("pending", format!("{p:?}"), format!("{:?}", v.pending));
    }
    if let Some(n) = e.free_rows {
        bad("free_rows", n.to_string(), v.free_rows.to_string());
    }
    if let Some(n) = e.rob_count {
        bad("rob_count", n.to_string(), v.rob_count.to_string());
    }
    if let Some(n) = e.rob_head {
        bad("rob_head", n.to_string(), v.rob_head.to_string());
    }
    if let Some(f) = e.rob_full {
        bad("rob_full", f.to_string(), v.rob_full.to_string());
    }
    if let Some((d, f)) = e.occ {
        bad(
            "(dispatched_rows, fetched_rows)",
            format!("{:?}", (d, f)),
            format!("{:?}", (v.dispatched_rows, v.fetched_rows)),
        );
    }
    if let Some(r) = e.refill {
        bad(
            "(refilling, refill_pending)",
            format!("{r:?}"),
            format!("{:?}", (v.refilling, v.refill_pending)),
        );
    }
    if let Some(s) = e.shared_i {
        bad("shared_i", format!("{s:?}"), format!("{:?}", v.shared_i));
    }
    if let Some(n) = e.imiss_bits {
        bad("imiss_bits", n.to_string(), v.imiss_bits.to_string());
    }
    if let Some(r) = &e.rows {
        bad("rows", format!("{r:?}"), format!("{:?}", t.rows[e.k]));
    }
    if let Some(j) = e.same_as {
        let mut before = t.views[j];
        before.error = v.error;
        bad("view (frozen)", format!("{before:?}"), format!("{v:?}"));
        bad(
            "rows (frozen)",
            format!("{:?}", t.rows[j]),
            format!("{:?}", t.rows[e.k]),
        );
    }
}

fn dump(t: &Trace) -> String {
    let mut s = String::new();
    for (k, (v, r)) in t.views.iter().zip(&t.rows).enumerate() {
        s += &format!(
            "  at({k}): ctr {:?} ovf {:#b} sat {} pend {:?} rob {}@{} occ ({},{}) free {} refill ({},{}) shared {:?} err {:?}\n           rows {:?}\n",
            v.counters.value,
            v.counters.overflow,
            v.saturated,
            v.pending,
            v.rob_count,
            v.rob_head,
            v.dispatched_rows,
            v.fetched_rows,
            v.free_rows,
            v.refilling,
            v.refill_pending,
            v.shared_i,
            v.error,
            r
        );
    }
    s
}

/// Run scenario `name` with variant `v` on `hw`, on `golden` and through the
/// lock-step checker; check every expectation on both models, and (FMT) the
/// spec-5 invariant that the components never exceed `cycles` at any boundary.
fn check(name: &str, v: Variant, expect: &[At]) {
    let s = by_name(name).unwrap_or_else(|| panic!("no scenario `{name}`"));
    let p = s.params.with_variant(v);
    let mut fails = Vec::new();
    let mut dumps = String::new();

    let mut h = hw::Unit::new(p).expect("hw params");
    let th = trace(&mut h, &s.bundles);
    let mut g = golden::Unit::new(p).expect("golden params");
    let tg = trace(&mut g, &s.bundles);
    for (model, t) in [("hw", &th), ("golden", &tg)] {
        let before = fails.len();
        for e in expect {
            compare(model, t, e, &mut fails);
        }
        // spec 5: in FMT, with no overflow flag set, no cycle is charged twice
        if v == Fmt {
            for (k, view) in t.views.iter().enumerate() {
                let c = view.counters;
                if c.overflow == 0 && c.base() < 0 {
                    fails.push(format!(
                        "{model} at({k}): FMT components exceed cycles: {:?}",
                        c.value
                    ));
                    break;
                }
            }
        }
        if fails.len() > before {
            dumps += &format!("{model} trace:\n{}", dump(t));
        }
    }

    let mut ls = LockStep::new(p).expect("lock-step params");
    for (i, ev) in s.bundles.iter().enumerate() {
        if let Err(m) = ls.step(ev) {
            fails.push(format!("lock-step failed at bundle {i}: {m}"));
            break;
        }
    }

    assert!(
        fails.is_empty(),
        "scenario `{name}` ({v}): {} failure(s):\n  {}\n{dumps}",
        fails.len(),
        fails.join("\n  ")
    );
}

/// The whole table is here: every scenario has a test below, names are unique,
/// parameters are legal.
#[test]
fn table_is_complete() {
    let tested = [
        "l1i_miss",
        "l2i_miss",
        "itlb_miss",
        "mispredict",
        "mispredict_done_before_commit",
        "mispredict_refill_imiss",
        "imiss_wrong_path",
        "sfmt_imiss_mispredict_imiss",
        "sfmt_imiss_marked_mispredicted_branch",
        "overlapping_long_dmisses",
        "rob_full_l1d",
        "rob_full_l2d",
        "rob_full_dtlb",
        "rob_full_longlat",
        "rob_full_other",
        "rob_full_retires",
        "rob_full_masks_frontend",
        "backend_full_masks_frontend",
        "backend_full_masks_refill",
        "backend_full_masks_refill_pending",
        "backend_full_with_an_empty_rob_charges_nothing",
        "back_to_back_mispredicts",
        "wrong_path_branch_mispredict",
        "older_mispredict_after_younger_refill",
        "fe_redirect_squash",
        "fe_redirect_no_squash",
        "flush",
        "flush_older_than_mispredict",
        "warmup",
        "warmup_commit_drops_icounts",
        "first_fetched_branch_takes_stalls",
        "no_free_row",
        "local_saturation",
        "penalty_saturation",
        "global_wrap",
        "pending_at_end",
        "rejected_bundle",
    ];
    let names: Vec<&str> = all().iter().map(|s| s.name).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "duplicate scenario names");
    let mut t = tested.to_vec();
    t.sort_unstable();
    assert_eq!(sorted, t, "scenario table and tests differ");
    for s in all() {
        s.params.validate().unwrap();
        assert!(
            !s.description.is_empty() && !s.bundles.is_empty(),
            "{}",
            s.name
        );
    }
}

// ---------------------------------------------------------------------------
// Frontend: I-side misses
// ---------------------------------------------------------------------------

/// Isolated L1 I-miss: the penalty is the miss delay (paper 3.1.1).
///
/// c0-c8  stall l1i x9, ROB empty (not full): FMT acc=row0.l1i 1..9; sFMT shared.l1i 1..9
/// c9     fetch B: B claims row0 (l1i 9); new acc row1 = 0
/// c10    dispatch i(id0, imiss) B(id1): row0.rob_id 1
/// c11    count: row0 pen 0+1 = 1. retire i: retired 1; sFMT: i's I-miss bit
///        -> l1i += 9, shared cleared. retire B: retired 2; FMT: l1i += row0.l1i = 9
/// final: cycles 12, retired 2, l1i 9 (both variants)
#[rstest]
fn l1i_miss(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "l1i_miss",
        v,
        &[
            at(9)
                .c(&[(Cycles, 9)])
                .pend(9, 0, 0, 0)
                .shared(fs(v, [0, 0, 0], [9, 0, 0]))
                .rows(vec![fr().i(v, 9, 0, 0)])
                .free(63),
            at(10)
                .rows(vec![fr().i(v, 9, 0, 0), fr()])
                .free(62)
                .occ(0, 1),
            at(11)
                .rows(vec![dr(1, 0, false, false).i(v, 9, 0, 0), fr()])
                .rob(2)
                .ibits(fs(v, 0, 1))
                .pend(9, 0, 0, 0),
            at(12)
                .c(&[(Cycles, 12), (Retired, 2), (L1i, 9)])
                .pend(0, 0, 0, 0)
                .shared([0, 0, 0])
                .rows(vec![fr()])
                .rob(0)
                .robh(2)
                .ibits(0)
                .free(63),
        ],
    );
}

/// L2 I-miss after a branch: charged to the NEXT branch's row (spec 7).
///
/// c0      fetch B0 -> row0; acc row1
/// c1      dispatch i id0, B0 id1; stall l2i: acc row1.l2i 1 / shared.l2i 1
/// c2      retire 2, stall: row1.l2i 2 / shared 2; row0 pen 1; B0 retires (no I, no mispredict)
/// c3-c20  stall x18: row1.l2i / shared = 2+18 = 20
/// c21     fetch B1: claims row1 (l2i 20)
/// c22     dispatch B1 id2 (imiss)
/// c23     row1 pen 1; retire B1: sFMT I-miss bit -> l2i += 20; FMT row1 -> l2i += 20
/// final: cycles 24, retired 3, l2i 20
#[rstest]
fn l2i_miss(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "l2i_miss",
        v,
        &[
            at(3)
                .c(&[(Cycles, 3), (Retired, 2)])
                .pend(0, 2, 0, 0)
                .robh(2),
            at(21)
                .c(&[(Cycles, 21), (Retired, 2)])
                .pend(0, 20, 0, 0)
                .shared(fs(v, [0, 0, 0], [0, 20, 0]))
                .rows(vec![fr().i(v, 0, 20, 0)]),
            at(23).rows(vec![dr(2, 0, false, false).i(v, 0, 20, 0), fr()]),
            at(24)
                .c(&[(Cycles, 24), (Retired, 3), (L2i, 20)])
                .pend(0, 0, 0, 0)
                .rows(vec![fr()]),
        ],
    );
}

/// I-TLB miss then L1 I-miss on the same fetch (each level charged its own cycles).
///
/// c0-c6  itlb x7: acc row0.itlb / shared.itlb 7
/// c7-c9  l1i x3:  row0.l1i / shared.l1i 3
/// c10    fetch B -> row0 (l1i 3, itlb 7)
/// c11    dispatch ids 0,1,2; B id2, id0 marked
/// c12    row0 pen 1
/// c13    pen 2; retire id0: sFMT l1i += 3, itlb += 7; retire id2 = B: FMT l1i += 3, itlb += 7
/// final: cycles 14, retired 3, l1i 3, itlb 7
#[rstest]
fn itlb_miss(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "itlb_miss",
        v,
        &[
            at(7).pend(0, 0, 7, 0),
            at(10).c(&[(Cycles, 10)]).pend(3, 0, 7, 0),
            at(13)
                .rows(vec![dr(2, 1, false, false).i(v, 3, 0, 7), fr()])
                .rob(3)
                .ibits(fs(v, 0, 1)),
            at(14)
                .c(&[(Cycles, 14), (Retired, 3), (L1i, 3), (Itlb, 7)])
                .pend(0, 0, 0, 0)
                .shared([0, 0, 0]),
        ],
    );
}

// ---------------------------------------------------------------------------
// Branch mispredictions
// ---------------------------------------------------------------------------

/// Isolated misprediction (paper 3.1.2): penalty = cycles from the branch
/// entering the ROB (dispatched c1) to the first correct-path instruction
/// entering it (c8), that cycle not counted (it dispatches; decision in
/// docs/spec-decisions.md): 8 - 1 - 1 = 6.
///
/// c0  fetch B -> row0
/// c1  dispatch i id0, B id1 (row0.rob_id 1); fetch wrong-path W -> row1
/// c2  row0 pen 1. retire i. dispatch W id2 (row1.rob_id 2), w id3
/// c3  row0 pen 2, row1 pen 1
/// c4  row0 pen 3, row1 pen 2; mispredict(1): row0.mispredict, refilling;
///     n = 1: dtail = ftail = head+1, row1 zeroed; rob_count = (1-1)+1 = 1
/// c5  row0 (mispredict, no stall) pen 4
/// c6  pen 5; B commits: bpred += 5; done 0 -> refill_pending
/// c7  refill_pending: bpred 6
/// c8  dispatch (not lost: no bpred); refilling = refill_pending = 0
/// c9  retire 2 (ids 2,3)
/// final: cycles 10, retired 4, bpred 6; rob_head 4
#[rstest]
fn mispredict(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "mispredict",
        v,
        &[
            at(4)
                .rows(vec![dr(1, 2, false, false), dr(2, 1, false, false), fr()])
                .rob(3)
                .robh(1)
                .occ(2, 0)
                .pend(0, 0, 0, 0),
            at(5)
                .rows(vec![dr(1, 3, true, false), fr()])
                .refill(true, false)
                .pend(0, 0, 0, 3)
                .rob(1)
                .occ(1, 0)
                .free(62),
            at(7)
                .c(&[(Cycles, 7), (Retired, 2), (Bpred, 5)])
                .refill(true, true)
                .pend(0, 0, 0, 0)
                .rob(0)
                .rows(vec![fr()]),
            at(8).c(&[(Cycles, 8), (Retired, 2), (Bpred, 6)]),
            at(9)
                .c(&[(Cycles, 9), (Retired, 2), (Bpred, 6)])
                .refill(false, false)
                .rob(2),
            at(10)
                .c(&[(Cycles, 10), (Retired, 4), (Bpred, 6)])
                .rob(0)
                .robh(4),
        ],
    );
}

/// The correct path enters the ROB (c5) before the branch commits (c8): the
/// penalty stops at the dispatch (`done`), nothing is added after the commit.
/// The ROB (128) is never full, so the `longlat` head counts nothing.
///
/// c1  dispatch ld id0, B id1
/// c2  pen 1        c3 pen 2; mispredict(1): rob_count = (1-0)+1 = 2
/// c4  pen 3        c5 dispatch ids 2,3 (not lost: pen stays 3): refilling 0, row0.done 1
/// c6, c7: done -> no increment
/// c8  retire ld, B: bpred += 3; done -> no refill_pending
/// final: cycles 10, retired 4, bpred 3 (= 5 - 1 - 1: dispatched c1, correct path c5)
#[rstest]
fn mispredict_done_before_commit(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "mispredict_done_before_commit",
        v,
        &[
            at(4).rob(2).refill(true, false).pend(0, 0, 0, 2),
            at(6)
                .rows(vec![dr(1, 3, true, true), fr()])
                .refill(false, false)
                .pend(0, 0, 0, 3)
                .rob(4),
            at(8)
                .rows(vec![dr(1, 3, true, true), fr()])
                .c(&[(Cycles, 8)]),
            at(9)
                .c(&[(Cycles, 9), (Retired, 2), (Bpred, 3)])
                .refill(false, false)
                .rows(vec![fr()]),
            at(10).c(&[(Cycles, 10), (Retired, 4), (Bpred, 3)]),
        ],
    );
}

/// A misprediction whose refill meets a 4-cycle L1 I-miss (spec 4.1.3, 7).
///
/// c1  dispatch B id0      c2 pen 1      c3 pen 2; mispredict(0): refilling 1
/// c4  stall, S.refilling, row0.mispredict:
///       FMT:  acc row1.l1i 1; row0 skipped (mispredict in a stall cycle): pen 2
///       sFMT: shared not counted (refilling); pen 3
/// c5  stall: FMT row1.l1i 2, pen 2 -> B commits: bpred 2, refill_pending
///            sFMT pen 4 -> bpred 4, refill_pending, shared cleared
/// c6  stall + refill_pending: FMT row1.l1i 3, no bpred (stall); sFMT bpred 5
/// c7  FMT row1.l1i 4;                                      sFMT bpred 6
/// c8  fetch B2 (no stall): FMT bpred 3, B2 claims row1 (l1i 4); sFMT bpred 7
/// c9  dispatch i id1 (marked), B2 id2: not lost, no bpred; then cleared
/// c10 retire i (sFMT adds shared = 0), B2 (FMT l1i += 4)
/// final FMT:  cycles 11, retired 3, bpred 3, l1i 4  (9 - 1 - 1 = 7, minus 4 stall cycles after resolution)
/// final sFMT: cycles 11, retired 3, bpred 7, l1i 0  (all 7 to the branch)
#[rstest]
fn mispredict_refill_imiss(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "mispredict_refill_imiss",
        v,
        &[
            at(4)
                .rows(vec![dr(0, 2, true, false), fr()])
                .refill(true, false),
            at(5)
                .rows(vec![dr(0, fs(v, 2, 3), true, false), fr().i(v, 1, 0, 0)])
                .pend(fs(v, 1, 0), 0, 0, fs(v, 2, 3))
                .shared([0, 0, 0]),
            at(8)
                .c(&[(Cycles, 8), (Retired, 1), (Bpred, fs(v, 2, 6))])
                .pend(fs(v, 4, 0), 0, 0, 0)
                .refill(true, true)
                .shared([0, 0, 0]),
            at(9).c(&[(Cycles, 9), (Retired, 1), (Bpred, fs(v, 3, 7))]),
            at(10)
                .c(&[(Cycles, 10), (Retired, 1), (Bpred, fs(v, 3, 7))])
                .refill(false, false),
            at(11).c(&[
                (Cycles, 11),
                (Retired, 3),
                (Bpred, fs(v, 3, 7)),
                (L1i, fs(v, 4, 0)),
            ]),
        ],
    );
}

/// An L2 I-miss on the mispredicted path (paper 3.3.1): FMT drops it with the
/// squashed row; sFMT counts it in `shared` but clears it when B commits.
///
/// c0     fetch B -> row0
/// c1     dispatch B id0; stall l2i: acc row1.l2i 1 / shared.l2i 1
/// c2-c5  stall: row1.l2i / shared 2..5; row0 pen 1..4
/// c6     stall: row1.l2i / shared 6; pen 5; mispredict(0): ftail = head+1, row1 zeroed
/// c7     pen 6
/// c8     pen 7; B commits: bpred 7, refill_pending; sFMT: shared cleared (6 -> 0)
/// c9     bpred 8     c10 dispatch (not lost)     c11 retire
/// final: cycles 12, retired 2, bpred 8 (= 10 - 1 - 1), l2i 0 (both)
#[rstest]
fn imiss_wrong_path(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "imiss_wrong_path",
        v,
        &[
            at(6)
                .pend(0, 5, 0, 0)
                .rows(vec![dr(0, 4, false, false), fr().i(v, 0, 5, 0)]),
            at(7)
                .pend(0, fs(v, 0, 6), 0, 5)
                .shared(fs(v, [0, 0, 0], [0, 6, 0]))
                .rows(vec![dr(0, 5, true, false), fr()]),
            at(9)
                .c(&[(Cycles, 9), (Retired, 1), (Bpred, 7)])
                .pend(0, 0, 0, 0)
                .shared([0, 0, 0]),
            at(12).c(&[(Cycles, 12), (Retired, 2), (Bpred, 8)]),
        ],
    );
}

/// sFMT's documented inaccuracy (paper 4.1.2): I-miss, mispredicted branch,
/// I-miss on its wrong path. X (marked) is older than B and commits after the
/// wrong-path miss, so sFMT charges a + b = 4 + 3; FMT only a = 4.
///
/// c0-c3  stall l1i x4 (correct path): row0.l1i / shared 4
/// c4     fetch X..B: B claims row0 (l1i 4)
/// c5     dispatch X id0 (marked), B id1
/// c6-c8  stall l1i x3 (wrong path): FMT acc row1.l1i 1..3; shared 5..7; pen 1..3
/// c9     pen 4; mispredict(1): row1 zeroed (FMT drops 3); rob_count (1-0)+1 = 2
/// c10    pen 5; X commits: sFMT l1i += 7, shared and I-miss bits cleared
/// c11    pen 6; B commits: FMT l1i += 4; bpred 6; refill_pending
/// c12    dispatch (not lost)      c13 retire
/// final FMT: l1i 4; sFMT: l1i 7; both cycles 14, retired 3, bpred 6 (= 12 - 5 - 1)
#[rstest]
fn sfmt_imiss_mispredict_imiss(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "sfmt_imiss_mispredict_imiss",
        v,
        &[
            at(9).pend(7, 0, 0, 0).rows(vec![
                dr(1, 3, false, false).i(v, 4, 0, 0),
                fr().i(v, 3, 0, 0),
            ]),
            at(10).pend(fs(v, 4, 7), 0, 0, 4).ibits(fs(v, 0, 1)).rob(2),
            at(11)
                .c(&[(Cycles, 11), (Retired, 1), (L1i, fs(v, 0, 7))])
                .pend(fs(v, 4, 0), 0, 0, 5)
                .ibits(0)
                .shared([0, 0, 0]),
            at(14).c(&[(Cycles, 14), (Retired, 3), (L1i, fs(v, 4, 7)), (Bpred, 6)]),
        ],
    );
}

/// The I-miss-marked instruction is itself the mispredicted branch (spec 7: its
/// I-miss bit is handled first, so sFMT charges its own stall before clearing).
///
/// c0-c2 stall l1i x3: row0.l1i / shared 3     c3 fetch B     c4 dispatch B id0 marked
/// c5    pen 1; mispredict(0)
/// c6    pen 2; B commits: sFMT I-miss bit -> l1i += 3, then clear; FMT row0 -> l1i += 3;
///       bpred 2; refill_pending
/// c7    dispatch (not lost)        c8 retire
/// final: cycles 9, retired 2, l1i 3, bpred 2 (= 7 - 4 - 1, both)
#[rstest]
fn sfmt_imiss_marked_mispredicted_branch(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "sfmt_imiss_marked_mispredicted_branch",
        v,
        &[
            at(6)
                .rows(vec![dr(0, 1, true, false).i(v, 3, 0, 0), fr()])
                .pend(3, 0, 0, 1)
                .ibits(fs(v, 0, 1)),
            at(7)
                .c(&[(Cycles, 7), (Retired, 1), (L1i, 3), (Bpred, 2)])
                .refill(true, true)
                .shared([0, 0, 0])
                .ibits(0),
            at(9).c(&[(Cycles, 9), (Retired, 2), (L1i, 3), (Bpred, 2)]),
        ],
    );
}

/// Back-to-back mispredictions: B2, the first branch of B1's correct path,
/// mispredicts too.
///
/// c1  dispatch B1 id0      c2 pen0 1; mispredict(0): refilling; rob_count 1
/// c3  fetch B2 -> row1; pen0 2
/// c4  dispatch B2 id1 (not lost: pen0 stays 2): refilling 0, row0.done 1  (B1: 4 - 1 - 1 = 2)
/// c5  row0 done: no increment; row1 pen 1; B1 commits: bpred 2 (done: no refill_pending);
///     mispredict(1): n = 1 (row1 is now the oldest); rob_count (1-1)+1 = 1
/// c6  row1 pen 2      c7 pen 3; B2 commits: bpred 5, refill_pending
/// c8  dispatch ids 2,3, not lost (B2: 8 - 4 - 1 = 3)     c9 retire 2
/// final: cycles 10, retired 4, bpred 5
#[rstest]
fn back_to_back_mispredicts(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "back_to_back_mispredicts",
        v,
        &[
            at(5)
                .rows(vec![dr(0, 2, true, true), dr(1, 0, false, false), fr()])
                .pend(0, 0, 0, 2)
                .refill(false, false),
            at(6)
                .c(&[(Cycles, 6), (Retired, 1), (Bpred, 2)])
                .rows(vec![dr(1, 1, true, false), fr()])
                .pend(0, 0, 0, 1)
                .refill(true, false)
                .rob(1)
                .robh(1),
            at(8)
                .c(&[(Cycles, 8), (Retired, 2), (Bpred, 5)])
                .refill(true, true),
            at(10).c(&[(Cycles, 10), (Retired, 4), (Bpred, 5)]),
        ],
    );
}

/// A branch W on B's wrong path mispredicts first; W's refill meets an I-miss;
/// then B mispredicts: W's row (penalty and stalls) is dropped, never charged.
///
/// c1  dispatch B id0; fetch W -> row1     c2 dispatch W id1; pen0 1
/// c3  pen0 2, pen1 1; mispredict(1): row1.mispredict, refilling; n = 2; rob_count 2
/// c4  stall l1i, S.refilling: FMT acc row2.l1i 1, pen0 3, row1 (mispredict, stall) stays 1
///                             sFMT shared not counted, pen0 3, pen1 2
/// c5  no stall: pen0 4; pen1 FMT 2 / sFMT 3; mispredict(0): n = 1, row1 zeroed; rob_count 1
/// c6  pen0 5; B commits: bpred 5, refill_pending
/// c7  bpred 6     c8 dispatch (not lost)     c9 retire
/// final: cycles 10, retired 2, bpred 6 (= 8 - 1 - 1), l1i 0
#[rstest]
fn wrong_path_branch_mispredict(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "wrong_path_branch_mispredict",
        v,
        &[
            at(4)
                .rows(vec![dr(0, 2, false, false), dr(1, 1, true, false), fr()])
                .refill(true, false)
                .pend(0, 0, 0, 1)
                .rob(2),
            at(5)
                .rows(vec![
                    dr(0, 3, false, false),
                    dr(1, fs(v, 1, 2), true, false),
                    fr().i(v, 1, 0, 0),
                ])
                .pend(fs(v, 1, 0), 0, 0, fs(v, 1, 2))
                .shared([0, 0, 0]),
            at(6)
                .rows(vec![dr(0, 4, true, false), fr()])
                .pend(0, 0, 0, 4)
                .occ(1, 0)
                .rob(1),
            at(7)
                .c(&[(Cycles, 7), (Retired, 1), (Bpred, 5)])
                .refill(true, true),
            at(10).c(&[(Cycles, 10), (Retired, 2), (Bpred, 6)]),
        ],
    );
}

/// The older B mispredicts after the younger wrong-path W resolved AND refilled
/// (W's row is `done`); only B's penalty is charged.
///
/// c1  dispatch B id0; fetch W -> row1     c2 dispatch W id1, w id2; pen0 1
/// c3  fetch W2 -> row2; pen0 2, pen1 1
/// c4  pen0 3, pen1 2; mispredict(1): n = 2, row2 zeroed; rob_count (1-0)+1 = 2
/// c5  pen0 4; dispatch id2: pen1 stays 2 (not lost); refilling 0, row1.done 1; rob_count 3
/// c6  pen0 5; row1 done
/// c7  pen0 6; mispredict(0): n = 1, row1 zeroed; rob_count 1
/// c8  pen0 7; B commits: bpred 7, refill_pending
/// c9  dispatch (not lost)     c10 retire
/// final: cycles 11, retired 2, bpred 7 (= 9 - 1 - 1)
#[rstest]
fn older_mispredict_after_younger_refill(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "older_mispredict_after_younger_refill",
        v,
        &[
            at(4).occ(2, 1).free(60),
            at(5)
                .rows(vec![dr(0, 3, false, false), dr(1, 2, true, false), fr()])
                .refill(true, false)
                .pend(0, 0, 0, 2)
                .free(61),
            at(6)
                .rows(vec![dr(0, 4, false, false), dr(1, 2, true, true), fr()])
                .refill(false, false)
                .pend(0, 0, 0, 2)
                .rob(3),
            at(7).rows(vec![dr(0, 5, false, false), dr(1, 2, true, true), fr()]),
            at(8)
                .rows(vec![dr(0, 6, true, false), fr()])
                .pend(0, 0, 0, 6)
                .refill(true, false)
                .rob(1),
            at(9)
                .c(&[(Cycles, 9), (Retired, 1), (Bpred, 7)])
                .refill(true, true),
            at(11).c(&[(Cycles, 11), (Retired, 2), (Bpred, 7)]),
        ],
    );
}

// ---------------------------------------------------------------------------
// Frontend redirects and flushes
// ---------------------------------------------------------------------------

/// Decode-time redirect squashing one fetched branch (spec 4.3, 7).
///
/// c0  fetch B0, B1 -> row0, row1; acc row2
/// c1  dispatch B0 id0; stall l1i: acc row2.l1i 1 / shared 1
/// c2  fetch B2: claims row2 (l1i 1), acc row3; pen0 1
/// c3  stall: row3.l1i 1 / shared 2; pen0 2          (FMT pending l1i 2, free 63-3 = 60)
/// c4  redirect(1): pen0 3; ftail 3 -> 2, row2 zeroed (B2 and both stalls gone)
/// c5  stall + dispatch B1 id1: row2.l1i 1 / shared 3; pen0 4
/// c6  stall: row2.l1i 2 / shared 4; pen0 5, pen1 1
/// c7  fetch B3: claims row2 (l1i 2); pen0 6, pen1 2; B0, B1 commit (l1i 0 each)
/// c8  dispatch i id2 (marked), B3 id3
/// c9  pen2 1; i commits: sFMT l1i += 4; B3 commits: FMT l1i += 2
/// final: cycles 10, retired 4; FMT l1i 2; sFMT l1i 4
#[rstest]
fn fe_redirect_squash(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "fe_redirect_squash",
        v,
        &[
            at(4)
                .pend(2, 0, 0, 0)
                .free(60)
                .occ(1, 2)
                .shared(fs(v, [0, 0, 0], [2, 0, 0])),
            at(5)
                .pend(fs(v, 0, 2), 0, 0, 0)
                .rows(vec![dr(0, 3, false, false), fr(), fr()])
                .free(61)
                .occ(1, 1),
            at(7)
                .rows(vec![
                    dr(0, 5, false, false),
                    dr(1, 1, false, false),
                    fr().i(v, 2, 0, 0),
                ])
                .pend(fs(v, 2, 4), 0, 0, 0)
                .shared(fs(v, [0, 0, 0], [4, 0, 0])),
            at(8)
                .c(&[(Cycles, 8), (Retired, 2)])
                .rows(vec![fr().i(v, 2, 0, 0), fr()]),
            at(10).c(&[(Cycles, 10), (Retired, 4), (L1i, fs(v, 2, 4))]),
        ],
    );
}

/// Redirects that squash no branch: the accumulation row is zeroed anyway (FMT
/// drops the stalls; sFMT keeps them, pending), then a redirect in the cycle of
/// a two-branch fetch squashing only the younger.
///
/// c0  fetch B0 -> row0     c1 dispatch B0 id0; stall itlb: acc row1.itlb 1 / shared 1
/// c2  stall: row1.itlb 2 / shared 2; pen0 1
/// c3  redirect(0): pen0 2; row1 zeroed
/// c4  fetch B1, B2 -> row1, row2; redirect(1): ftail 3 -> 2, row2 zeroed; pen0 3
/// c5  dispatch B1 id1; pen0 4      c6 retire 2: pen0 5, pen1 1; nothing charged
/// final: cycles 7, retired 2; FMT pending 0; sFMT pending itlb 2 (shared [0,0,2])
#[rstest]
fn fe_redirect_no_squash(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "fe_redirect_no_squash",
        v,
        &[
            at(3)
                .pend(0, 0, 2, 0)
                .rows(vec![dr(0, 1, false, false), fr().i(v, 0, 0, 2)]),
            at(4)
                .pend(0, 0, fs(v, 0, 2), 0)
                .rows(vec![dr(0, 2, false, false), fr()])
                .occ(1, 0),
            at(5)
                .rows(vec![dr(0, 3, false, false), fr(), fr()])
                .occ(1, 1)
                .free(61),
            at(7)
                .c(&[(Cycles, 7), (Retired, 2)])
                .pend(0, 0, fs(v, 0, 2), 0)
                .shared(fs(v, [0, 0, 0], [0, 0, 2]))
                .occ(0, 0)
                .free(63),
        ],
    );
}

/// A non-branch flush (spec 4.5): j (id2) squashes itself, the younger B1 and k,
/// and (FMT) the stall accumulated after B1; nothing is charged.
///
/// c0  fetch B0, B1 -> row0, row1
/// c1  dispatch i id0, B0 id1, j id2: row0.rob_id 1
/// c2  dispatch B1 id3, k id4: row1.rob_id 3; stall: acc row2.l1i 1 / shared 1; pen0 1
/// c3  pen0 2, pen1 1; flush(2): refilling 0; n = rows older than id2 = 1 (row0);
///     dtail = ftail = head+1, row1 zeroed; rob_count = 2 - 0 = 2
/// c4  fetch B1 again -> row1; pen0 3
/// c5  dispatch j id2, B1 id3, k id4; pen0 4
/// c6  pen0 5, pen1 1; retire ids 0-3      c7 retire id4
/// final: cycles 8, retired 5, no component; sFMT keeps shared l1i 1 pending
#[rstest]
fn flush(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "flush",
        v,
        &[
            at(3)
                .rows(vec![
                    dr(1, 1, false, false),
                    dr(3, 0, false, false),
                    fr().i(v, 1, 0, 0),
                ])
                .rob(5)
                .occ(2, 0),
            at(4)
                .rows(vec![dr(1, 2, false, false), fr()])
                .rob(2)
                .robh(0)
                .occ(1, 0)
                .refill(false, false)
                .pend(fs(v, 0, 1), 0, 0, 0),
            at(6)
                .rows(vec![dr(1, 4, false, false), dr(3, 0, false, false), fr()])
                .rob(5),
            at(8)
                .c(&[(Cycles, 8), (Retired, 5)])
                .pend(fs(v, 0, 1), 0, 0, 0)
                .rob(0)
                .robh(5),
        ],
    );
}

/// A flush of an instruction older than a resolved mispredicted branch: the
/// branch's row goes with it, `refilling` is cleared, nothing reaches `bpred`.
///
/// c1  dispatch ld id0, B id1     c2 pen 1; mispredict(1): refilling; rob_count 2
/// c3  pen 2; flush(0): refilling 0; n = 0: dtail = ftail = head, row0 zeroed; rob_count 0
/// c4  ROB empty, refill_pending 0: nothing     c5 dispatch id0     c6 retire
/// final: cycles 7, retired 1, bpred 0
#[rstest]
fn flush_older_than_mispredict(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "flush_older_than_mispredict",
        v,
        &[
            at(3)
                .rows(vec![dr(1, 1, true, false), fr()])
                .refill(true, false)
                .pend(0, 0, 0, 1),
            at(4)
                .rows(vec![fr()])
                .refill(false, false)
                .pend(0, 0, 0, 0)
                .rob(0)
                .robh(0)
                .occ(0, 0)
                .free(63),
            at(7)
                .c(&[(Cycles, 7), (Retired, 1)])
                .refill(false, false)
                .robh(1),
        ],
    );
}

// ---------------------------------------------------------------------------
// Backend: full ROB
// ---------------------------------------------------------------------------

/// Two independent L2 D-misses within one ROB's worth (paper 3.2.2, Fig. 8):
/// one penalty, from the ROB filling up to the first miss's data return.
/// rob_entries 8.
///
/// c0      dispatch ids 0-3 (A = id0, B = id2 miss in L2)
/// c1      dispatch ids 4-7; head l2d but S.rob_count 4 != 8: not counted
/// c2-c11  S.rob_count 8 = full, head l2d: l2d 1..10
/// c12     A's data is back, retire 2: full but head none: nothing
/// c13     B's data came back under A's shadow: retire 4 + dispatch 2 (ids 0,1): S.rob_count 6
/// c14     retire 4
/// final: cycles 15, retired 10, l2d 10
#[rstest]
fn overlapping_long_dmisses(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "overlapping_long_dmisses",
        v,
        &[
            at(2).c(&[(Cycles, 2)]).rob(8).full(true),
            at(12).c(&[(Cycles, 12), (L2d, 10)]).full(true),
            at(13)
                .c(&[(Cycles, 13), (Retired, 2), (L2d, 10)])
                .rob(6)
                .robh(2)
                .full(false),
            at(14).rob(4).robh(6),
            at(15)
                .c(&[(Cycles, 15), (Retired, 10), (L2d, 10)])
                .rob(0)
                .robh(2),
        ],
    );
}

/// A full ROB with each head cause (paper 4.2, 4.3). rob_entries 4.
///
/// c0         dispatch ids 0,1
/// c1         dispatch ids 2,3; head = cause, S.rob_count 2: not full, not counted
/// c2..c(k+1) S.rob_count 4 = full, head = cause: that counter += 1 (other: nothing)
/// c(k+2)     retire 4
/// final: cycles k+3, retired 4, counter k
#[rstest]
#[case::l1d("rob_full_l1d", Some(L1d), 3)]
#[case::l2d("rob_full_l2d", Some(L2d), 5)]
#[case::dtlb("rob_full_dtlb", Some(Dtlb), 4)]
#[case::longlat("rob_full_longlat", Some(Longlat), 6)]
#[case::other("rob_full_other", None, 7)]
fn rob_full_head_cause(
    #[case] name: &str,
    #[case] counter: Option<Counter>,
    #[case] k: u64,
    #[values(Fmt, Sfmt)] v: Variant,
) {
    let with = |cycles: u64, n: u64| {
        let mut c = vec![(Cycles, cycles)];
        if let Some(ctr) = counter {
            c.push((ctr, n));
        }
        c
    };
    let k_us = k as usize;
    check(
        name,
        v,
        &[
            at(2).c(&with(2, 0)).rob(4).full(true),
            at(k_us + 2).c(&with(k + 2, k)).full(true),
            at(k_us + 3)
                .c(&[with(k + 3, k), vec![(Retired, 4)]].concat())
                .rob(0)
                .full(false),
        ],
    );
}

/// A full ROB that retires every cycle: counted nowhere (spec 4.1: no head
/// counter with head none; no frontend counting while full). rob_entries 4.
///
/// c0     fetch B -> row0
/// c1     dispatch ids 0-3, B id1: ROB full
/// c2-c4  S full, head none: only cycles; stall l1i not counted, row0 pen stays 0.
///        retire 1 + dispatch 1 each (ids 0,1,2 reused); B (id1) commits in c3
/// c5     retire 4 (ids 3,0,1,2): rob_head 3
/// final: cycles 6, retired 7, nothing else, nothing pending
#[rstest]
fn rob_full_retires(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "rob_full_retires",
        v,
        &[
            at(3)
                .rows(vec![dr(1, 0, false, false), fr()])
                .full(true)
                .pend(0, 0, 0, 0)
                .robh(1),
            at(4).rows(vec![fr()]).full(true).pend(0, 0, 0, 0),
            at(6)
                .c(&[(Cycles, 6), (Retired, 7)])
                .pend(0, 0, 0, 0)
                .shared([0, 0, 0])
                .rob(0)
                .robh(3),
        ],
    );
}

/// A full ROB with an L2 D-miss head during an I-miss (paper 3.3.2): only l2d
/// counts while full; the frontend counts again once the ROB is not full.
/// rob_entries 4.
///
/// c1     dispatch ids 0-3, B id1
/// c2-c4  full, head l2d: l2d 3; stall and row0 not counted
/// c5     full, head commits (none): nothing
/// c6     S.rob_count 3: stall -> acc row1.l1i 1 / shared 1; pen0 1
/// c7     pen0 2; retire ids 1-3 (B: l1i 0, not mispredicted)
/// final: cycles 8, retired 4, l2d 3; pending l1i 1 (FMT acc row, sFMT shared)
#[rstest]
fn rob_full_masks_frontend(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "rob_full_masks_frontend",
        v,
        &[
            at(5)
                .c(&[(Cycles, 5), (L2d, 3)])
                .rows(vec![dr(1, 0, false, false), fr()])
                .pend(0, 0, 0, 0),
            at(6)
                .c(&[(Cycles, 6), (Retired, 1), (L2d, 3)])
                .pend(0, 0, 0, 0),
            at(7).rows(vec![dr(1, 1, false, false), fr().i(v, 1, 0, 0)]),
            at(8)
                .c(&[(Cycles, 8), (Retired, 4), (L2d, 3)])
                .pend(1, 0, 0, 0)
                .shared(fs(v, [0, 0, 0], [1, 0, 0])),
        ],
    );
}

/// A full backend structure other than the ROB (`backend_full`, the contract
/// amendment of docs/spec-decisions.md): the window is full although the ROB
/// (8 entries) holds 2; counted as a full ROB would be. rob_entries 8.
///
/// c0     fetch B -> row0
/// c1     dispatch ld id0, B id1 (ROB 2 of 8)
/// c2     backend_full, head other: cycles only (row0 pen stays 0)
/// c3-c5  backend_full, head l2d, stall l1i: l2d 3; stall and row0 not counted
/// c6     window open: stall -> acc row1.l1i 1 / shared 1; pen0 1
/// c7     pen0 2; retire ld, B (not mispredicted: nothing charged)
/// final: cycles 8, retired 2, l2d 3; pending l1i 1 (FMT acc row, sFMT shared)
#[rstest]
fn backend_full_masks_frontend(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "backend_full_masks_frontend",
        v,
        &[
            at(2)
                .c(&[(Cycles, 2)])
                .rows(vec![dr(1, 0, false, false), fr()])
                .rob(2)
                .full(false),
            at(6)
                .c(&[(Cycles, 6), (L2d, 3)])
                .rows(vec![dr(1, 0, false, false), fr()])
                .pend(0, 0, 0, 0)
                .rob(2)
                .full(false),
            at(7)
                .c(&[(Cycles, 7), (L2d, 3)])
                .rows(vec![dr(1, 1, false, false), fr().i(v, 1, 0, 0)]),
            at(8)
                .c(&[(Cycles, 8), (Retired, 2), (L2d, 3)])
                .pend(1, 0, 0, 0)
                .shared(fs(v, [0, 0, 0], [1, 0, 0]))
                .rob(0),
        ],
    );
}

/// The spec-5 law with a full backend: a mispredicted branch dispatched at
/// `d` = 1 whose correct path dispatches at `e` = 8 is charged `e - d - 1` = 6
/// cycles minus the 3 with a full window: 3. rob_entries 8.
///
/// c0     fetch B -> row0
/// c1     dispatch ld id0, B id1
/// c2     head l2d; pen0 1 (counted before the squash); mispredict(1):
///        row0 mispredict, refilling
/// c3-c5  backend_full, head l2d: l2d 3; pen0 stays 1
/// c6-c7  window open, nothing dispatched: pen0 2, 3
/// c8     the correct path dispatches: pen0 not counted; done, refilling 0
/// c9     retire ld, B (bpred += 3), the new id2
/// final: cycles 10, retired 3, l2d 3, bpred 3
#[rstest]
fn backend_full_masks_refill(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "backend_full_masks_refill",
        v,
        &[
            at(3)
                .c(&[(Cycles, 3)])
                .rows(vec![dr(1, 1, true, false), fr()])
                .refill(true, false)
                .pend(0, 0, 0, 1),
            at(6)
                .c(&[(Cycles, 6), (L2d, 3)])
                .rows(vec![dr(1, 1, true, false), fr()])
                .pend(0, 0, 0, 1),
            at(8)
                .c(&[(Cycles, 8), (L2d, 3)])
                .rows(vec![dr(1, 3, true, false), fr()])
                .pend(0, 0, 0, 3),
            at(9)
                .c(&[(Cycles, 9), (L2d, 3)])
                .rows(vec![dr(1, 3, true, true), fr()])
                .refill(false, false)
                .rob(3),
            at(10)
                .c(&[(Cycles, 10), (Retired, 3), (L2d, 3), (Bpred, 3)])
                .pend(0, 0, 0, 0)
                .rob(0),
        ],
    );
}

/// The refill after the mispredicted branch commits (`refill_pending`) is
/// not counted while the window is full, here by `backend_full` alone with
/// the ROB empty (a store queue full of committed stores). Law: `d` = 1,
/// `e` = 7: `e - d - 1` = 5 cycles minus the 2 with a full window: 3.
///
/// c0     fetch B -> row0
/// c1     dispatch B id0
/// c2     head other; pen0 1; mispredict(0): row0 mispredict, refilling
/// c3     pen0 2; B commits: bpred += 2, refill_pending (not done)
/// c4-c5  backend_full, ROB empty: nothing but cycles (bpred stays 2)
/// c6     window open, nothing dispatched: refill_pending -> bpred 3
/// c7     the correct path dispatches: not counted; clears refilling, pending
/// c8     retire it
/// final: cycles 9, retired 2, bpred 3
#[rstest]
fn backend_full_masks_refill_pending(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "backend_full_masks_refill_pending",
        v,
        &[
            at(3)
                .c(&[(Cycles, 3)])
                .rows(vec![dr(0, 1, true, false), fr()])
                .refill(true, false),
            at(4)
                .c(&[(Cycles, 4), (Retired, 1), (Bpred, 2)])
                .rows(vec![fr()])
                .refill(true, true)
                .rob(0),
            at(6)
                .c(&[(Cycles, 6), (Retired, 1), (Bpred, 2)])
                .refill(true, true)
                .full(false),
            at(7)
                .c(&[(Cycles, 7), (Retired, 1), (Bpred, 3)])
                .refill(true, true),
            at(8)
                .c(&[(Cycles, 8), (Retired, 1), (Bpred, 3)])
                .refill(false, false)
                .rob(1),
            at(9)
                .c(&[(Cycles, 9), (Retired, 2), (Bpred, 3)])
                .pend(0, 0, 0, 0)
                .rob(0),
        ],
    );
}

/// A full window by `backend_full` alone, with the ROB empty (`head` none),
/// while fetch stalls on an L1 I-miss: the frontend does not grow (the
/// window is full) and the head charges nothing, so the five cycles fall in
/// base (docs/spec-decisions.md, "A full queue with the ROB empty"). The
/// same stream without `backend_full` would charge `l1i` 5.
///
/// c0-c4  stall l1i, backend_full, ROB empty: only cycles
/// c5     fetch B -> row0, which takes the accumulated (0) stalls
/// c6     dispatch B id0, marked I-miss (sFMT bit)
/// c7     B commits: FMT adds row0's 0, sFMT the shared 0
/// final: cycles 8, retired 1, l1i 0
#[rstest]
fn backend_full_with_an_empty_rob_charges_nothing(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "backend_full_with_an_empty_rob_charges_nothing",
        v,
        &[
            at(5)
                .c(&[(Cycles, 5)])
                .rows(vec![fr()])
                .shared([0, 0, 0])
                .rob(0)
                .pend(0, 0, 0, 0),
            at(6).c(&[(Cycles, 6)]).rows(vec![fr(), fr()]),
            at(7)
                .c(&[(Cycles, 7)])
                .rows(vec![dr(0, 0, false, false), fr()])
                .rob(1),
            at(8)
                .c(&[(Cycles, 8), (Retired, 1)])
                .rows(vec![fr()])
                .pend(0, 0, 0, 0)
                .rob(0),
        ],
    );
}

// ---------------------------------------------------------------------------
// Counting control, capacity, widths
// ---------------------------------------------------------------------------

/// Warm-up with count_enable off (spec 3, 4.2): rows, flags and the ROB mirror
/// move; nothing is counted or added.
///
/// c0 off  fetch B -> row0
/// c1 off  dispatch B id0; stall l1i: not counted (row1.l1i 0, shared 0)
/// c2 off  no pen      c3 off  mispredict(0): row0.mispredict, refilling; pen 0
/// c4 on   cycles 1; pen 1
/// c5 on   cycles 2; pen 2; B commits: retired 1, bpred 2, refill_pending
/// c6 off  nothing (refill_pending stays)
/// c7 on   cycles 3; dispatch: not lost (no bpred), clears
/// c8 off  retire: retired not incremented
/// final: cycles 3, retired 1, bpred 2
#[rstest]
fn warmup(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "warmup",
        v,
        &[
            at(4)
                .c(&[])
                .rows(vec![dr(0, 0, true, false), fr()])
                .refill(true, false)
                .pend(0, 0, 0, 0)
                .shared([0, 0, 0]),
            at(6)
                .c(&[(Cycles, 2), (Retired, 1), (Bpred, 2)])
                .refill(true, true),
            at(7)
                .c(&[(Cycles, 2), (Retired, 1), (Bpred, 2)])
                .refill(true, true),
            at(9)
                .c(&[(Cycles, 3), (Retired, 1), (Bpred, 2)])
                .rob(0)
                .robh(2)
                .refill(false, false),
        ],
    );
}

/// A branch that carries I-stalls commits with count_enable off (spec 4.2:
/// "steps 1-3 add nothing to any global counter; the clearing ... update all
/// the same"): its stalls are dropped, not added, in both variants.
///
/// c0-c1   stall l1i x2: FMT acc row0.l1i 2; sFMT shared.l1i 2
/// c2      fetch B: claims row0 (l1i 2); acc row1
/// c3      dispatch B id0, I-miss marked (sFMT bit id0); pen starts next cycle
/// c4 off  B commits: no count (pen stays 0); FMT l1i += 2 suppressed; sFMT:
///         its I-miss bit set -> shared "added" (suppressed) and cleared
/// c5      dispatch i id1      c6 retire i: retired 1, nothing else moves
/// final: cycles 6, retired 1, l1i 0
#[rstest]
fn warmup_commit_drops_icounts(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "warmup_commit_drops_icounts",
        v,
        &[
            at(2)
                .c(&[(Cycles, 2)])
                .rows(vec![fr().i(v, 2, 0, 0)])
                .shared(fs(v, [0, 0, 0], [2, 0, 0]))
                .pend(2, 0, 0, 0)
                .free(63),
            at(3)
                .rows(vec![fr().i(v, 2, 0, 0), fr()])
                .occ(0, 1)
                .free(62),
            at(4)
                .c(&[(Cycles, 4)])
                .rows(vec![dr(0, 0, false, false).i(v, 2, 0, 0), fr()])
                .occ(1, 0)
                .rob(1)
                .ibits(fs(v, 0, 1))
                .shared(fs(v, [0, 0, 0], [2, 0, 0]))
                .pend(2, 0, 0, 0),
            at(5)
                .c(&[(Cycles, 4)])
                .rows(vec![fr()])
                .rob(0)
                .robh(1)
                .ibits(0)
                .shared([0, 0, 0])
                .pend(0, 0, 0, 0)
                .free(63),
            at(7)
                .c(&[(Cycles, 6), (Retired, 1)])
                .rows(vec![fr()])
                .rob(0)
                .robh(2)
                .pend(0, 0, 0, 0),
        ],
    );
}

/// Two branches fetched in one cycle (spec 4.3: each claims row `ftail` in
/// order, and the new row is zeroed): the older takes the stalls since the
/// previous branch, the younger a zero row. A misprediction of the older
/// squashes the younger; the stalls are charged once, at the older's commit.
///
/// c0-c1  stall l1i x2: acc row0.l1i 2 / shared 2
/// c2     fetch B0, B1: B0 claims row0 (l1i 2), B1 row1 (0); acc row2
/// c3     dispatch B0 id0 (I-miss marked), B1 id1
/// c4     pen 1 each; mispredict(0): row0 mispredict, refilling; B1 and row1
///        dropped (dtail = ftail = head + 1), ROB keeps id0
/// c5     pen 2; B0 commits: FMT l1i += 2 (row0), sFMT l1i += 2 (its I-miss
///        bit); bpred += 2; refill_pending
/// c6     dispatch i id1: refill_pending not counted (a dispatch cycle), clears
/// c7     retire i
/// final: cycles 8, retired 2, l1i 2, bpred 2
#[rstest]
fn first_fetched_branch_takes_stalls(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "first_fetched_branch_takes_stalls",
        v,
        &[
            at(3)
                .c(&[(Cycles, 3)])
                .rows(vec![fr().i(v, 2, 0, 0), fr(), fr()])
                .occ(0, 2)
                .free(61)
                .shared(fs(v, [0, 0, 0], [2, 0, 0]))
                .pend(2, 0, 0, 0),
            at(4)
                .rows(vec![
                    dr(0, 0, false, false).i(v, 2, 0, 0),
                    dr(1, 0, false, false),
                    fr(),
                ])
                .occ(2, 0)
                .rob(2)
                .ibits(fs(v, 0, 1)),
            at(5)
                .c(&[(Cycles, 5)])
                .rows(vec![dr(0, 1, true, false).i(v, 2, 0, 0), fr()])
                .occ(1, 0)
                .free(62)
                .rob(1)
                .ibits(fs(v, 0, 1))
                .refill(true, false)
                .pend(2, 0, 0, 1),
            at(6)
                .c(&[(Cycles, 6), (Retired, 1), (L1i, 2), (Bpred, 2)])
                .rows(vec![fr()])
                .rob(0)
                .robh(1)
                .ibits(0)
                .shared([0, 0, 0])
                .refill(true, true)
                .pend(0, 0, 0, 0)
                .free(63),
            at(7)
                .c(&[(Cycles, 7), (Retired, 1), (L1i, 2), (Bpred, 2)])
                .refill(false, false)
                .rob(1),
            at(8)
                .c(&[(Cycles, 8), (Retired, 2), (L1i, 2), (Bpred, 2)])
                .rob(0)
                .robh(2),
        ],
    );
}

/// The FMT with no free row: fmt_rows 2 (one branch in flight); a branch is
/// fetched in the cycle the previous one retires (spec 3: free after this
/// cycle's retirement). Pointers wrap (phys row = ptr mod 2).
///
/// c0 fetch B0 -> ptr0; free 2-1-1 = 0      c1 dispatch B0 id0      c2 pen 1
/// c3 pen 2; B0 retires (head 1), B1 fetched -> ptr1, ftail 2: free 0
/// c4 dispatch B1 id1
/// c5 stall: acc (ptr2 = phys0).l1i 1 / shared 1; pen1 1
/// c6 stall: acc l1i 2 / shared 2; pen1 2; B1 retires: free 1
/// c7 fetch B2 -> ptr2 (l1i 2): free 0     c8 dispatch i id2 marked, B2 id3
/// c9 retire: sFMT l1i += 2 (i), FMT l1i += 2 (B2)
/// final: cycles 10, retired 4, l1i 2
#[rstest]
fn no_free_row(#[values(Fmt, Sfmt)] v: Variant) {
    let mut e: Vec<At> = [0, 0, 0, 0, 0, 0, 1, 0, 0, 1]
        .iter()
        .enumerate()
        .map(|(i, &f)| at(i + 1).free(f))
        .collect();
    e.extend([
        at(4)
            .rows(vec![fr(), fr()])
            .occ(0, 1)
            .c(&[(Cycles, 4), (Retired, 1)]),
        at(7).rows(vec![fr().i(v, 2, 0, 0)]).pend(2, 0, 0, 0),
        at(8).rows(vec![fr().i(v, 2, 0, 0), fr()]).occ(0, 1),
        at(10).c(&[(Cycles, 10), (Retired, 4), (L1i, 2)]),
    ]);
    check("no_free_row", v, &e);
}

/// Local saturation, local_bits 2 (max 3). `saturated` is read as set when an
/// increment is lost at the maximum (like a global's carry-out), not on reaching it.
///
/// c0-c4  stall l1i x5: row0.l1i / shared 1,2,3,3,3 (lost at c3: saturated)
/// c5     fetch B -> row0 (l1i 3)     c6 dispatch i id0 marked, B id1
/// c7-c11 pen 1,2,3,3,3     c12 pen 3; mispredict(1)
/// c13    pen 3; i commits: sFMT l1i += 3; B commits: FMT l1i += 3; bpred 3; refill_pending
/// c14-c17 bpred 4..7 (global, no saturation)     c18 dispatch (not lost)     c19 retire
/// final: cycles 20, retired 3, l1i 3, bpred 7, saturated
#[rstest]
fn local_saturation(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "local_saturation",
        v,
        &[
            at(3).pend(3, 0, 0, 0).sat(false),
            at(4).pend(3, 0, 0, 0).sat(true),
            at(5).pend(3, 0, 0, 0).sat(true),
            at(10)
                .rows(vec![dr(1, 3, false, false).i(v, 3, 0, 0), fr()])
                .sat(true),
            at(13)
                .rows(vec![dr(1, 3, true, false).i(v, 3, 0, 0), fr()])
                .pend(3, 0, 0, 3)
                .sat(true),
            at(14)
                .c(&[(Cycles, 14), (Retired, 2), (L1i, 3), (Bpred, 3)])
                .sat(true),
            at(20)
                .c(&[(Cycles, 20), (Retired, 3), (L1i, 3), (Bpred, 7)])
                .sat(true),
        ],
    );
}

/// Penalty saturation alone, local_bits 1 (max 1).
///
/// c1 dispatch B id0     c2 pen 1 (max reached, nothing lost)     c3 pen 1, lost: saturated
/// c4 pen 1; mispredict(0)     c5 pen 1; commit: bpred 1, refill_pending
/// c6 dispatch (not lost)     c7 retire
/// final: cycles 8, retired 2, bpred 1, saturated
#[rstest]
fn penalty_saturation(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "penalty_saturation",
        v,
        &[
            at(3).rows(vec![dr(0, 1, false, false), fr()]).sat(false),
            at(4).rows(vec![dr(0, 1, false, false), fr()]).sat(true),
            at(6).c(&[(Cycles, 6), (Retired, 1), (Bpred, 1)]).sat(true),
            at(8).c(&[(Cycles, 8), (Retired, 2), (Bpred, 1)]).sat(true),
        ],
    );
}

/// Global wrap, global_bits 8 (mod 256, sticky overflow on carry-out); locals 16 bits.
/// rob_entries 4.
///
/// c0          dispatch ids 0-3
/// c1-c260     full, head l2d: l2d 260 -> 260 - 256 = 4 (carry at the 256th, in c256)
///             cycles: 256th count in c255 -> 0, overflow
/// c261        retire 4: retired 4
/// c262 fetch B; c263 dispatch B id0 (4 mod 4)
/// c264-c561   pen 1..298     c562 pen 299; mispredict(0)
/// c563        pen 300; commit: bpred 0 + 300 = 300 - 256 = 44, overflow
/// c564 bpred 45     c565 dispatch (not lost)     c566 retire: retired 6
/// final: 567 bundles: cycles 567 - 512 = 55, retired 6, l2d 4, bpred 45,
///        overflow {cycles, l2d, bpred}
#[rstest]
fn global_wrap(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "global_wrap",
        v,
        &[
            at(255).c(&[(Cycles, 255), (L2d, 254)]),
            at(256).c(&[(Cycles, 0), (L2d, 255)]).ovf(&[Cycles]),
            at(257).c(&[(Cycles, 1), (L2d, 0)]).ovf(&[Cycles, L2d]),
            at(261).c(&[(Cycles, 5), (L2d, 4)]).ovf(&[Cycles, L2d]),
            at(563)
                .c(&[(Cycles, 51), (Retired, 4), (L2d, 4)])
                .ovf(&[Cycles, L2d])
                .pend(0, 0, 0, 299),
            at(564)
                .c(&[(Cycles, 52), (Retired, 5), (L2d, 4), (Bpred, 44)])
                .ovf(&[Cycles, L2d, Bpred])
                .pend(0, 0, 0, 0),
            at(567)
                .c(&[(Cycles, 55), (Retired, 6), (L2d, 4), (Bpred, 45)])
                .ovf(&[Cycles, L2d, Bpred]),
        ],
    );
}

/// End of run with rows in flight (spec 4.6): pending sums, never added.
///
/// c0-c2 stall l1i: row0.l1i / shared.l1i 3     c3 fetch B0 -> row0
/// c4    dispatch i id0 marked, B0 id1
/// c5    stall itlb: acc row1.itlb 1 / shared.itlb 1; pen0 1
/// c6    fetch B1 -> row1 (itlb 1); pen0 2
/// c7    pen0 3; mispredict(1): row1 (B1, itlb 1) zeroed; rob_count 2
/// c8-c9 stall l2i, S.refilling, row0.mispredict:
///       FMT acc row1.l2i 1,2, pen0 stays 3; sFMT shared not counted, pen0 4,5
/// final: cycles 10, nothing else charged.
///   FMT pending: l1i 3 (row0) + 0, l2i 2 (acc), itlb 0, bpred 3
///   sFMT pending: shared [3, 0, 1], bpred 5
#[rstest]
fn pending_at_end(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "pending_at_end",
        v,
        &[
            at(7).pend(3, 0, 1, 0).occ(1, 1),
            at(10)
                .c(&[(Cycles, 10)])
                .pend(3, fs(v, 2, 0), fs(v, 0, 1), fs(v, 3, 5))
                .shared(fs(v, [0, 0, 0], [3, 0, 1]))
                .rows(vec![
                    dr(1, fs(v, 3, 5), true, false).i(v, 3, 0, 0),
                    fr().i(v, 0, 2, 0),
                ])
                .rob(2)
                .occ(1, 0)
                .refill(true, false)
                .free(62)
                .ibits(fs(v, 0, 1)),
        ],
    );
}

/// A rejected bundle (spec 6): mispredict(5) while the ROB holds only id0 breaks
/// rule 9 (field squash) at bundle 3; nothing changes, not even cycles; c4, c5
/// are ignored.
///
/// c0 fetch B     c1 dispatch B id0     c2 pen 1: cycles 3
#[rstest]
fn rejected_bundle(#[values(Fmt, Sfmt)] v: Variant) {
    check(
        "rejected_bundle",
        v,
        &[
            at(3)
                .c(&[(Cycles, 3)])
                .rows(vec![dr(0, 1, false, false), fr()])
                .rob(1),
            at(4).same_as(3).err(3, Field::Squash, 9),
            at(5).same_as(3).err(3, Field::Squash, 9),
            at(6)
                .same_as(3)
                .err(3, Field::Squash, 9)
                .c(&[(Cycles, 3)])
                .rob(1),
        ],
    );
}
