//! What a counter unit shows the outside: global counters, flags, pointers'
//! occupancies, live rows, the error latch. Both `hw` and `golden` implement
//! [`CounterUnit`]; the lock-step checker compares their views field by field.

use serde::{Deserialize, Serialize};

use crate::{CycleEvents, Params};

/// The global counters of spec section 1, in a fixed order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Counter {
    Cycles = 0,
    Retired = 1,
    L1i = 2,
    L2i = 3,
    Itlb = 4,
    Bpred = 5,
    L1d = 6,
    L2d = 7,
    Dtlb = 8,
    Longlat = 9,
}

/// Number of global counters.
pub const NUM_COUNTERS: usize = 10;

impl Counter {
    pub const ALL: [Counter; NUM_COUNTERS] = [
        Self::Cycles,
        Self::Retired,
        Self::L1i,
        Self::L2i,
        Self::Itlb,
        Self::Bpred,
        Self::L1d,
        Self::L2d,
        Self::Dtlb,
        Self::Longlat,
    ];
    /// The eight CPI-stack components (everything but `cycles` and `retired`).
    pub const COMPONENTS: [Counter; 8] = [
        Self::L1i,
        Self::L2i,
        Self::Itlb,
        Self::Bpred,
        Self::L1d,
        Self::L2d,
        Self::Dtlb,
        Self::Longlat,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Self::Cycles => "cycles",
            Self::Retired => "retired",
            Self::L1i => "l1i",
            Self::L2i => "l2i",
            Self::Itlb => "itlb",
            Self::Bpred => "bpred",
            Self::L1d => "l1d",
            Self::L2d => "l2d",
            Self::Dtlb => "dtlb",
            Self::Longlat => "longlat",
        }
    }
    #[inline]
    pub fn idx(self) -> usize {
        self as usize
    }
}

/// Global counter values (already wrapped to `global_bits`) and their sticky
/// overflow flags (bit `Counter::idx()`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Counters {
    pub value: [u64; NUM_COUNTERS],
    pub overflow: u16,
}

impl Counters {
    #[inline]
    pub fn get(&self, c: Counter) -> u64 {
        self.value[c.idx()]
    }
    #[inline]
    pub fn overflowed(&self, c: Counter) -> bool {
        self.overflow >> c.idx() & 1 == 1
    }
    /// Base cycles: `cycles` minus the eight components (as a signed number, since
    /// sFMT may charge more than `cycles`).
    pub fn base(&self) -> i128 {
        let comp: i128 = Counter::COMPONENTS
            .iter()
            .map(|&c| self.get(c) as i128)
            .sum();
        self.get(Counter::Cycles) as i128 - comp
    }
}

/// Penalties held in rows (and sFMT's shared I-counters) that are not yet charged
/// to the global counters (spec 4.6). Read-only; never added by the unit.
///
/// `l1i`/`l2i`/`itlb`: FMT: the sum over every live row, the accumulation row
/// included; sFMT: the shared I-counters. `bpred`: the sum of `penalty` over the
/// dispatched rows marked `mispredict`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pending {
    pub l1i: u64,
    pub l2i: u64,
    pub itlb: u64,
    pub bpred: u64,
}

/// Which input field a protocol rule names (spec section 6).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Field {
    FetchedBranches = 1,
    FeSquash = 2,
    Dispatched = 3,
    DispatchedBranches = 4,
    DispatchedImiss = 5,
    Squash = 6,
    Retired = 7,
    Head = 8,
}

impl Field {
    pub const ALL: [Field; 8] = [
        Self::FetchedBranches,
        Self::FeSquash,
        Self::Dispatched,
        Self::DispatchedBranches,
        Self::DispatchedImiss,
        Self::Squash,
        Self::Retired,
        Self::Head,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Self::FetchedBranches => "fetched_branches",
            Self::FeSquash => "fe_squash",
            Self::Dispatched => "dispatched",
            Self::DispatchedBranches => "dispatched_branches",
            Self::DispatchedImiss => "dispatched_imiss",
            Self::Squash => "squash",
            Self::Retired => "retired",
            Self::Head => "head",
        }
    }
    #[inline]
    pub fn bits(self) -> u8 {
        self as u8
    }
    pub fn from_bits(b: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|f| f.bits() == b)
    }
}

/// The latched first protocol violation: bundle index since reset (from 0), the
/// field and the rule (1..=9) of spec section 6.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProtocolError {
    pub bundle: u64,
    pub field: Field,
    pub rule: u8,
}

impl ProtocolError {
    /// One-line description of a rule.
    pub fn rule_text(rule: u8) -> &'static str {
        match rule {
            1 => "a count above its width, or a mask bit at or above `dispatched`",
            2 => "retired more than the ROB holds",
            3 => "`head` inconsistent with retirement or ROB occupancy",
            4 => "a fetch stall in a cycle that fetched branches",
            5 => "`fe_squash` without `fe_redirect`, or more than the fetched rows",
            6 => "more fetched branches than free rows after retirement",
            7 => "more dispatched branches than rows fetched in earlier cycles",
            8 => "dispatch overflows the ROB",
            9 => "squash names an id not in the ROB, or not a live unmarked dispatched branch",
            _ => "unknown rule",
        }
    }
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "protocol violation at cycle {} (bundle index from 0): field `{}`, rule {} ({})",
            self.bundle,
            self.field.name(),
            self.rule,
            Self::rule_text(self.rule)
        )
    }
}

impl std::error::Error for ProtocolError {}

/// The scalar part of a unit's architecturally visible state, read at a cycle
/// boundary (after the last `step`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UnitView {
    pub counters: Counters,
    /// Some local counter saturated since reset (sticky).
    pub saturated: bool,
    /// ROB id of the oldest live entry (the ROB mirror's head pointer).
    pub rob_head: u32,
    pub rob_count: u32,
    pub rob_full: bool,
    /// `fmt_rows - 1 - (ftail - head)`.
    pub free_rows: u32,
    /// Rows in `[head, dtail)`.
    pub dispatched_rows: u32,
    /// Rows in `[dtail, ftail)`.
    pub fetched_rows: u32,
    pub refilling: bool,
    pub refill_pending: bool,
    pub error: Option<ProtocolError>,
    /// sFMT's shared I-counters `[l1i, l2i, itlb]` (zero for FMT).
    pub shared_i: [u32; 3],
    /// sFMT: the number of live ROB entries whose I-miss bit is set (zero for FMT).
    pub imiss_bits: u32,
    pub pending: Pending,
}

/// One live row, seen from outside. For a fetched (not yet dispatched) row and
/// for the accumulation row, `rob_id` is reported as 0 and `dispatched` false.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RowView {
    pub dispatched: bool,
    pub rob_id: u16,
    pub penalty: u32,
    pub mispredict: bool,
    pub done: bool,
    /// FMT's per-row I-miss counters (zero in sFMT).
    pub l1i: u32,
    pub l2i: u32,
    pub itlb: u32,
}

/// One live row as plain words, the five words the lock-step checker's row
/// columns hold for it ([`CounterUnit::rows_columns`]): `[penalty, meta,
/// l1i, l2i, itlb]` with
/// `meta = rob_id | dispatched << 16 | mispredict << 17 | done << 18`.
/// [`RowView::pack`] and [`RowView::unpack`] convert; nothing is lost.
pub type PackedRow = [u32; 5];

/// Words of a [`PackedRow`]: the columns of [`CounterUnit::rows_columns`].
pub const ROW_COLUMNS: usize = 5;

/// `meta` bit of [`PackedRow`]: the row is dispatched.
pub const META_DISPATCHED: u32 = 1 << 16;
/// `meta` bit of [`PackedRow`]: the row is marked mispredicted.
pub const META_MISPREDICT: u32 = 1 << 17;
/// `meta` bit of [`PackedRow`]: the row is done.
pub const META_DONE: u32 = 1 << 18;

impl RowView {
    /// The packed form (see [`PackedRow`]).
    #[inline]
    pub fn pack(&self) -> PackedRow {
        let meta = self.rob_id as u32
            | (self.dispatched as u32) << 16
            | (self.mispredict as u32) << 17
            | (self.done as u32) << 18;
        [self.penalty, meta, self.l1i, self.l2i, self.itlb]
    }
    /// Back from the packed form.
    pub fn unpack(p: &PackedRow) -> RowView {
        RowView {
            dispatched: p[1] & META_DISPATCHED != 0,
            rob_id: p[1] as u16,
            penalty: p[0],
            mispredict: p[1] & META_MISPREDICT != 0,
            done: p[1] & META_DONE != 0,
            l1i: p[2],
            l2i: p[3],
            itlb: p[4],
        }
    }
}

/// A counter unit driven one bundle per cycle: implemented by `hw::Unit` and
/// `golden::Unit`.
pub trait CounterUnit {
    /// The parameters the unit was built with.
    fn params(&self) -> &Params;
    /// One clock cycle. Infallible: a bad bundle sets the error latch (spec 6).
    fn step(&mut self, ev: &CycleEvents);
    /// `evs.len()` clock cycles, exactly as many calls of [`CounterUnit::step`]
    /// (a model may override it to pay its per-call costs once per batch).
    fn step_many(&mut self, evs: &[CycleEvents]) {
        for ev in evs {
            self.step(ev);
        }
    }
    /// The scalar visible state at the current cycle boundary.
    fn view(&self) -> UnitView;
    /// Live rows, oldest first: the dispatched rows, then the fetched rows, then the
    /// accumulation row last (so there are `dispatched_rows + fetched_rows + 1`).
    /// Calls `f(age, row)` for each; no allocation.
    fn for_each_row(&self, f: &mut dyn FnMut(usize, RowView));
    /// The same rows as [`CounterUnit::for_each_row`], oldest first, appended to
    /// `out` (which the caller clears). Models override it with a direct fill;
    /// the lock-step checker calls it every cycle.
    fn rows_into(&self, out: &mut Vec<RowView>) {
        self.for_each_row(&mut |_, r| out.push(r));
    }
    /// Whether the ROB entry `rob_id` (must be live) has its sFMT I-miss bit set.
    fn imiss_bit(&self, rob_id: u16) -> bool;
    /// The same rows as [`CounterUnit::for_each_row`], oldest first, as
    /// [`ROW_COLUMNS`] columns of `n` words (struct of arrays): `out[k * n + i]`
    /// is word `k` of row `i`'s [`PackedRow`] (`penalty`, `meta`, `l1i`, `l2i`,
    /// `itlb`). Returns `n`. `out` must hold at least `ROW_COLUMNS *
    /// params().fmt_rows` words (there are never more live rows); the words
    /// of `out` after the `ROW_COLUMNS * n` may be overwritten too. Models
    /// override it with block copies; the lock-step checker calls it every
    /// cycle.
    fn rows_columns(&self, out: &mut [u32]) -> usize {
        let mut rows = Vec::new();
        self.rows_into(&mut rows);
        let n = rows.len();
        for (i, r) in rows.iter().enumerate() {
            for (k, w) in r.pack().into_iter().enumerate() {
                out[k * n + i] = w;
            }
        }
        n
    }
    /// sFMT's I-miss bits of the live ROB entries as a bit vector by ROB id: bit
    /// `id` of `out` (word `id / 64`, bit `id % 64`) is set iff entry `id` is live
    /// and has its I-miss bit set; every other bit of `out` is cleared. `out` must
    /// hold at least `ceil(rob_entries / 64)` words. All zero in FMT.
    fn imiss_live_words(&self, out: &mut [u64]) {
        out.fill(0);
        let v = self.view();
        let e = self.params().rob_entries;
        for k in 0..v.rob_count {
            let id = (v.rob_head + k) % e;
            if self.imiss_bit(id as u16) {
                out[id as usize / 64] |= 1 << (id % 64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit that only shows given rows and I-miss bits, for the trait's
    /// default methods.
    struct Shown {
        p: Params,
        rob_head: u32,
        rob_count: u32,
        imiss: Vec<u16>,
        rows: Vec<RowView>,
        steps: Vec<CycleEvents>,
    }

    impl CounterUnit for Shown {
        fn params(&self) -> &Params {
            &self.p
        }
        fn step(&mut self, ev: &CycleEvents) {
            self.steps.push(*ev);
        }
        fn view(&self) -> UnitView {
            UnitView {
                rob_head: self.rob_head,
                rob_count: self.rob_count,
                ..UnitView::default()
            }
        }
        fn for_each_row(&self, f: &mut dyn FnMut(usize, RowView)) {
            for (i, r) in self.rows.iter().enumerate() {
                f(i, *r);
            }
        }
        fn imiss_bit(&self, rob_id: u16) -> bool {
            self.imiss.contains(&rob_id)
        }
    }

    fn row(i: u32) -> RowView {
        RowView {
            dispatched: i % 2 == 1,
            rob_id: 100 + i as u16,
            penalty: 10 + i,
            mispredict: i % 3 == 1,
            done: i % 3 == 2,
            l1i: 20 + i,
            l2i: 30 + i,
            itlb: 40 + i,
        }
    }

    fn shown(rows: u32) -> Shown {
        Shown {
            p: Params {
                rob_entries: 130,
                ..Params::default()
            },
            rob_head: 120,
            rob_count: 75,
            imiss: vec![],
            rows: (0..rows).map(row).collect(),
            steps: vec![],
        }
    }

    /// A packed row keeps every field apart and unpacks to itself.
    #[test]
    fn a_row_packs_every_field_apart_and_unpacks_to_itself() {
        let r = RowView {
            dispatched: true,
            rob_id: 0xffff,
            penalty: 7,
            mispredict: true,
            done: true,
            l1i: 1,
            l2i: 2,
            itlb: 3,
        };
        assert_eq!(r.pack(), [7, 0x7ffff, 1, 2, 3]);
        assert_eq!(RowView::unpack(&r.pack()), r);
        for (flag, bit) in [
            (
                RowView {
                    dispatched: true,
                    ..RowView::default()
                },
                META_DISPATCHED,
            ),
            (
                RowView {
                    mispredict: true,
                    ..RowView::default()
                },
                META_MISPREDICT,
            ),
            (
                RowView {
                    done: true,
                    ..RowView::default()
                },
                META_DONE,
            ),
        ] {
            assert_eq!(flag.pack(), [0, bit, 0, 0, 0]);
            assert_eq!(RowView::unpack(&flag.pack()), flag);
        }
    }

    /// The default read-outs: rows in columns (`out[k * n + i]`), the rows
    /// appended in order, each step of a batch once and in order, and the
    /// I-miss bits of exactly the live entries across the ROB's wrap.
    #[test]
    fn the_default_read_outs_follow_the_rows_and_the_live_entries() {
        let mut u = shown(3);
        let mut out = vec![u32::MAX; 20];
        assert_eq!(u.rows_columns(&mut out), 3);
        let want: Vec<u32> = (0..5)
            .flat_map(|k| (0..3).map(move |i| row(i).pack()[k]))
            .collect();
        assert_eq!(out[..15], want[..]);
        assert_eq!(out[15..], [u32::MAX; 5]);
        let mut rows = vec![row(9)];
        u.rows_into(&mut rows);
        assert_eq!(rows, [row(9), row(0), row(1), row(2)]);
        let evs: Vec<CycleEvents> = (0..3)
            .map(|i| CycleEvents {
                retired: i,
                ..CycleEvents::default()
            })
            .collect();
        u.step_many(&evs);
        assert_eq!(u.steps, evs);
        // live: ids 120..=129 and 0..=64; 119 and 65 are not live
        u.imiss = vec![0, 63, 64, 65, 119, 120, 127, 128, 129];
        let mut words = [u64::MAX; 4];
        u.imiss_live_words(&mut words);
        assert_eq!(
            words,
            [1 | 1 << 63, 1 | 1 << (120 - 64) | 1 << (127 - 64), 0b11, 0]
        );
    }

    #[test]
    fn counters_read_their_own_value_and_flag_and_base_may_be_negative() {
        let mut c = Counters::default();
        for (i, k) in Counter::ALL.into_iter().enumerate() {
            assert_eq!(k.idx(), i);
            c.value[i] = 1 << i;
        }
        c.overflow = 1 << Counter::Bpred.idx() | 1 << Counter::Longlat.idx();
        for k in Counter::ALL {
            assert_eq!(c.get(k), 1 << k.idx(), "{}", k.name());
            assert_eq!(
                c.overflowed(k),
                matches!(k, Counter::Bpred | Counter::Longlat),
                "{}",
                k.name()
            );
        }
        // cycles 1 minus l1i..longlat: 4 + 8 + ... + 512
        assert_eq!(c.base(), 1 - 1020);
        c.value[0] = 5000;
        assert_eq!(c.base(), 5000 - 1020);
        let names: Vec<_> = Counter::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            ["cycles", "retired", "l1i", "l2i", "itlb", "bpred", "l1d", "l2d", "dtlb", "longlat"]
        );
    }

    #[test]
    fn fields_and_rules_are_named_and_read_back_by_their_codes() {
        let names: Vec<_> = Field::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(
            names,
            [
                "fetched_branches",
                "fe_squash",
                "dispatched",
                "dispatched_branches",
                "dispatched_imiss",
                "squash",
                "retired",
                "head"
            ]
        );
        for (i, f) in Field::ALL.into_iter().enumerate() {
            assert_eq!(f.bits(), i as u8 + 1);
            assert_eq!(Field::from_bits(i as u8 + 1), Some(f));
        }
        assert_eq!(Field::from_bits(0), None);
        assert_eq!(Field::from_bits(9), None);
        let e = ProtocolError {
            bundle: 12,
            field: Field::Squash,
            rule: 9,
        };
        assert_eq!(
            e.to_string(),
            "protocol violation at cycle 12 (bundle index from 0): field `squash`, rule 9 \
             (squash names an id not in the ROB, or not a live unmarked dispatched branch)"
        );
        let texts: Vec<_> = (0..=10).map(ProtocolError::rule_text).collect();
        let distinct: std::collections::HashSet<_> = texts.iter().collect();
        assert_eq!(distinct.len(), 10);
        assert_eq!(texts[0], "unknown rule");
        assert_eq!(texts[10], "unknown rule");
        assert_eq!(texts[8], "dispatch overflows the ROB");
    }
}
