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
