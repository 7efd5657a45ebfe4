//! The behavioural model: timestamps, prefix counts, queues.

use std::collections::VecDeque;

use events::{
    Counter, CounterUnit, Counters, CycleEvents, PackedRow, ParamError, Params, Pending,
    ProtocolError, RowView, Squash, UnitView, Variant, NUM_COUNTERS, ROW_COLUMNS,
};

/// Running totals of the cycles that had some property, from reset to now. Each
/// accepted cycle adds to them once, from the bundle and the state at the start
/// of the cycle (spec 4.1), before anything else of that cycle happens.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Prefix {
    /// Counted cycles (`count_enable`).
    pub counted: u64,
    /// Counted cycles with a full window (a full ROB, or `backend_full`), by
    /// `HeadCause` encoding.
    pub full_by_head: [u64; 6],
    /// Counted cycles with a window not full ("open" cycles).
    pub open: u64,
    /// Open cycles by `FetchStall` encoding (0: no stall).
    pub open_by_stall: [u64; 4],
    /// Open cycles by `FetchStall` encoding while not refilling (sFMT's shared counters).
    pub shared_by_stall: [u64; 4],
    /// Open cycles in which nothing dispatched: the cycles an sFMT refill can
    /// lose (the cycle its correct path enters the ROB is not lost;
    /// docs/spec-decisions.md).
    pub idle: u64,
    /// The same without a fetch stall: the cycles an FMT refill can lose.
    pub idle_unstalled: u64,
}

/// A moment: the cycle (bundle index since reset) at which something happened,
/// and the prefix counts right after that cycle's counting step.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub cycle: u64,
    /// `Prefix::open`.
    pub open: u64,
    /// The cycles a mispredicted branch's penalty (and a pending refill) grows
    /// by: open cycles in which nothing dispatched, and (FMT) without a fetch
    /// stall.
    pub refill: u64,
}

impl Stamp {
    /// The readings a penalty clock can take at this moment, by `Branch::clock`
    /// (the fourth is padding so that an index `& 3` needs no bounds check).
    #[inline]
    fn clocks(&self) -> [u64; 4] {
        [0, self.open, self.refill, 0]
    }
}

/// An in-flight branch: a row of the table, described by what happened to it when.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Branch {
    /// Cycle its fetch completed.
    pub fetched_at: u64,
    /// ROB sequence number once dispatched; `u64::MAX` while only fetched (so the
    /// whole queue is sorted by `seq`).
    pub seq: u64,
    pub dispatched: Option<Stamp>,
    /// Found mispredicted.
    pub resolved: Option<Stamp>,
    /// First dispatch after it was found mispredicted (its correct path arrived).
    pub done: Option<Stamp>,
    /// The row as seen from outside, but for `penalty`: these fields change only
    /// at the events above. FMT's I-stall cycles of its basic block are fixed (and
    /// saturated) at its fetch.
    pub row: RowView,
    /// The penalty as a clock reading, for cheap reads: `penalty_raw(now) ==
    /// [0, now.open, now.refill][clock] - offset` (wrapping), re-derived from the
    /// stamps at each event (checked against [`Branch::penalty_raw`] in debug builds).
    pub clock: usize,
    pub offset: u64,
    /// `row` packed ([`PackedRow`], its penalty word 0), refreshed with the clock
    /// at each event: the checker's row read-out (`rows_columns`) copies its
    /// words and computes only the penalty.
    pub packed: PackedRow,
}

/// `min(raw, max)` without a branch (the row walks of the checker call it per row).
#[inline(always)]
fn sat_min(raw: u64, max: u64) -> u64 {
    let over = ((raw > max) as u64).wrapping_neg();
    raw ^ ((raw ^ max) & over)
}

/// `Branch::clock` values.
const STOPPED: usize = 0;
const OPEN: usize = 1;
const REFILL: usize = 2;

impl Branch {
    /// The raw (unsaturated) penalty at moment `now`: the open cycles since its
    /// dispatch until it was found mispredicted, then the refill cycles until its
    /// correct path arrived.
    #[inline]
    pub fn penalty_raw(&self, now: Stamp) -> u64 {
        let Some(d) = self.dispatched else { return 0 };
        match self.resolved {
            None => now.open - d.open,
            Some(r) => (r.open - d.open) + (self.done.unwrap_or(now).refill - r.refill),
        }
    }

    /// FMT: the saturated I-stall cycles of kind `k` (0 l1i, 1 l2i, 2 itlb).
    #[inline]
    fn imiss(&self, k: usize) -> u64 {
        [self.row.l1i, self.row.l2i, self.row.itlb][k] as u64
    }

    /// The same as `penalty_raw`, read from the clock.
    #[inline]
    pub fn penalty_fast(&self, now: Stamp) -> u64 {
        let v = now.clocks()[self.clock & 3].wrapping_sub(self.offset);
        debug_assert_eq!(v, self.penalty_raw(now), "{self:?}");
        v
    }

    /// Set the clock from the stamps after an event at moment `now`.
    fn set_clock(&mut self, now: Stamp) {
        let pen = self.penalty_raw(now);
        self.clock = match (self.dispatched, self.resolved, self.done) {
            (Some(_), None, _) => OPEN,
            (Some(_), Some(_), None) => REFILL,
            _ => STOPPED,
        };
        self.offset = now.clocks()[self.clock].wrapping_sub(pen);
        self.packed = RowView {
            penalty: 0,
            ..self.row
        }
        .pack();
    }
}

/// What happened to a live branch, when (cycle numbers are bundle indices since reset).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BranchTimes {
    pub fetched_at: u64,
    pub dispatched_at: Option<u64>,
    /// Found mispredicted.
    pub resolved_at: Option<u64>,
    /// Its correct path's first instructions entered the ROB.
    pub done_at: Option<u64>,
}

/// The behavioural FMT/sFMT counter unit. See the crate documentation.
#[derive(Clone, Debug)]
pub struct Unit {
    pub(crate) p: Params,
    pub(crate) sfmt: bool,
    local_max: u64,
    /// `2^global_bits - 1`.
    global_mask: u128,

    /// Bundles accepted since reset (= index of the next bundle).
    pub(crate) t: u64,
    pub(crate) pre: Prefix,

    // --- ROB mirror ---
    /// Sequence number of the oldest live instruction (instructions retired since reset).
    pub(crate) rob_head_seq: u64,
    pub(crate) rob_count: u32,
    /// sFMT: sequence numbers of the live instructions with an I-miss bit, ascending.
    marks: VecDeque<u64>,
    /// sFMT: the same marks by ROB id, for O(1) `imiss_bit` queries.
    marked: Vec<bool>,

    // --- branches ---
    /// Live branches, oldest first: `n_disp` dispatched ones, then fetched ones.
    pub(crate) branches: VecDeque<Branch>,
    pub(crate) n_disp: usize,
    /// Index of the oldest dispatched branch whose penalty still grows (not done);
    /// `n_disp` if none. Every dispatched branch before it is done.
    first_growing: usize,
    /// FMT: `open_by_stall[1..4]` when the current basic block (the accumulation row) began.
    acc_open: [u64; 3],
    /// sFMT: `shared_by_stall[1..4]` at the last clear of the shared I-counters.
    shared_open: [u64; 3],
    refilling: bool,
    /// A mispredicted branch committed before its correct path arrived at this moment.
    refill_from: Option<Stamp>,

    /// Unbounded totals charged at commit and by finished refills (`retired`,
    /// `l1i`, `l2i`, `itlb`, `bpred`; the others are prefix counts).
    pub(crate) charged: [u128; NUM_COUNTERS],
    saturated: bool,
    error: Option<ProtocolError>,

    // --- running sums for `Pending` ---
    /// FMT: saturated I-stall cycles over the queued branches.
    queued_imiss: [u64; 3],
    /// Saturated penalties of the done (mispredicted) dispatched branches.
    done_penalty: u64,
}

const I_COUNTERS: [Counter; 3] = [Counter::L1i, Counter::L2i, Counter::Itlb];

impl Unit {
    /// A unit in its reset state.
    pub fn new(params: Params) -> Result<Unit, ParamError> {
        params.validate()?;
        let global_mask = if params.global_bits >= 64 {
            u64::MAX as u128
        } else {
            (1u128 << params.global_bits) - 1
        };
        Ok(Unit {
            p: params,
            sfmt: params.variant == Variant::Sfmt,
            local_max: params.local_max(),
            global_mask,
            t: 0,
            pre: Prefix::default(),
            rob_head_seq: 0,
            rob_count: 0,
            marks: VecDeque::with_capacity(params.rob_entries as usize),
            marked: vec![false; params.rob_entries as usize],
            branches: VecDeque::with_capacity(params.fmt_rows as usize),
            n_disp: 0,
            first_growing: 0,
            acc_open: [0; 3],
            shared_open: [0; 3],
            refilling: false,
            refill_from: None,
            charged: [0; NUM_COUNTERS],
            saturated: false,
            error: None,
            queued_imiss: [0; 3],
            done_penalty: 0,
        })
    }

    /// Back to the reset state (same parameters; keeps its allocations).
    pub fn reset(&mut self) {
        let mut marks = std::mem::take(&mut self.marks);
        let mut marked = std::mem::take(&mut self.marked);
        let mut branches = std::mem::take(&mut self.branches);
        marks.clear();
        marked.fill(false);
        branches.clear();
        *self = Unit::new(self.p).expect("parameters were validated at construction");
        self.marks = marks;
        self.marked = marked;
        self.branches = branches;
    }

    /// The cycle numbers at which things happened to each live branch, oldest
    /// first (the dispatched ones, then the fetched ones).
    pub fn branch_times(&self) -> impl Iterator<Item = BranchTimes> + '_ {
        self.branches.iter().map(|b| BranchTimes {
            fetched_at: b.fetched_at,
            dispatched_at: b.dispatched.map(|s| s.cycle),
            resolved_at: b.resolved.map(|s| s.cycle),
            done_at: b.done.map(|s| s.cycle),
        })
    }

    /// Bundles accepted since reset (a rejected bundle and those after it are not).
    pub fn accepted(&self) -> u64 {
        self.t
    }

    #[inline]
    fn sat(&self, raw: u64) -> u64 {
        raw.min(self.local_max)
    }

    /// The present moment (after the counting step of the cycle being processed,
    /// or at the boundary after the last step).
    #[inline]
    pub(crate) fn now(&self) -> Stamp {
        Stamp {
            cycle: self.t,
            open: self.pre.open,
            refill: if self.sfmt {
                self.pre.idle
            } else {
                self.pre.idle_unstalled
            },
        }
    }

    /// FMT: raw I-stall cycles of the current basic block (the accumulation row).
    #[inline]
    fn acc_raw(&self) -> [u64; 3] {
        let s = &self.pre.open_by_stall;
        [
            s[1] - self.acc_open[0],
            s[2] - self.acc_open[1],
            s[3] - self.acc_open[2],
        ]
    }

    /// sFMT: raw shared I-counters.
    #[inline]
    fn shared_raw(&self) -> [u64; 3] {
        let s = &self.pre.shared_by_stall;
        [
            s[1] - self.shared_open[0],
            s[2] - self.shared_open[1],
            s[3] - self.shared_open[2],
        ]
    }

    #[inline]
    fn restart_block(&mut self) {
        self.acc_open.copy_from_slice(&self.pre.open_by_stall[1..]);
    }

    #[inline]
    fn clear_shared(&mut self) {
        self.shared_open
            .copy_from_slice(&self.pre.shared_by_stall[1..]);
        for s in self.marks.drain(..) {
            self.marked[(s % self.p.rob_entries as u64) as usize] = false;
        }
    }

    /// The dispatched branch found mispredicted whose correct path has not arrived
    /// yet. There is at most one, and it is the youngest dispatched branch: the
    /// squash at its resolution removed everything younger, and the next dispatch
    /// makes it done.
    #[inline]
    fn awaiting(&self) -> Option<&Branch> {
        let b = self.branches.get(self.n_disp.checked_sub(1)?)?;
        (b.resolved.is_some() && b.done.is_none()).then_some(b)
    }

    /// The unbounded totals of the global counters, in `Counter` order.
    fn totals(&self) -> [u128; NUM_COUNTERS] {
        let mut t = self.charged;
        t[Counter::Cycles.idx()] = self.pre.counted as u128;
        // HeadCause encodings 1..=4 are l1d, l2d, dtlb, longlat.
        for (k, c) in [Counter::L1d, Counter::L2d, Counter::Dtlb, Counter::Longlat]
            .into_iter()
            .enumerate()
        {
            t[c.idx()] = self.pre.full_by_head[k + 1] as u128;
        }
        if let Some(r) = self.refill_from {
            t[Counter::Bpred.idx()] += (self.now().refill - r.refill) as u128;
        }
        t
    }

    fn advance_first_growing(&mut self) {
        while self.first_growing < self.n_disp && self.branches[self.first_growing].done.is_some() {
            self.first_growing += 1;
        }
    }

    /// Drop the youngest branches until `keep` remain.
    fn drop_younger(&mut self, keep: usize) {
        while self.branches.len() > keep {
            let b = self.branches.pop_back().expect("len > keep >= 0");
            for k in 0..3 {
                self.queued_imiss[k] -= b.imiss(k);
            }
            if b.done.is_some() {
                self.done_penalty -= self.sat(b.penalty_raw(self.now()));
            }
        }
        self.n_disp = self.n_disp.min(keep);
        self.first_growing = self.first_growing.min(self.n_disp);
    }

    /// Sequence number of the live instruction with ROB id `id` (spec 4.5: ages
    /// count from the ROB head after this cycle's retirement).
    #[inline]
    pub(crate) fn seq_of(&self, head_seq: u64, id: u16) -> u64 {
        let n = self.p.rob_entries as u64;
        head_seq + (id as u64 + n - head_seq % n) % n
    }

    // ----- one cycle, spec 4.1 to 4.5 -----

    /// 4.1: add this cycle to the prefix counts.
    #[inline]
    fn count(&mut self, ev: &CycleEvents) {
        let ce = ev.count_enable as u64;
        // the window is full: the ROB, or another backend structure (the
        // `backend_full` amendment, docs/spec-decisions.md)
        let full = (self.rob_count == self.p.rob_entries) as u64 | ev.backend_full as u64;
        let open = ce & (full ^ 1);
        let stall = ev.fetch_stall as usize;
        self.pre.counted += ce;
        self.pre.full_by_head[ev.head as usize] += ce & full;
        self.pre.open += open;
        self.pre.open_by_stall[stall] += open;
        self.pre.shared_by_stall[stall] += open & (self.refilling as u64 ^ 1);
        let idle = open & (ev.dispatched == 0) as u64;
        self.pre.idle += idle;
        self.pre.idle_unstalled += idle & (stall == 0) as u64;
    }

    /// Whether some local counter has exceeded its maximum by now (after this
    /// cycle's counting, before anything leaves).
    fn local_exceeded(&self) -> bool {
        let max = self.local_max;
        if let Some(b) = self.branches.get(self.first_growing) {
            if self.first_growing < self.n_disp && b.penalty_fast(self.now()) > max {
                return true;
            }
        }
        let raw = if self.sfmt {
            self.shared_raw()
        } else {
            self.acc_raw()
        };
        raw.iter().any(|&v| v > max)
    }

    /// 4.2: `n` instructions leave the ROB, oldest first. Only the marked ones and
    /// the branches among them do anything beyond `retired += 1`.
    fn retire(&mut self, n: u64, ce: bool) {
        if n == 0 {
            return;
        }
        self.charged[Counter::Retired.idx()] += ce as u128 * n as u128;
        let end = self.rob_head_seq + n;
        loop {
            let mark = self.marks.front().copied().unwrap_or(u64::MAX);
            let branch = if self.n_disp > 0 {
                self.branches[0].seq
            } else {
                u64::MAX
            };
            if mark.min(branch) >= end {
                break;
            }
            // An instruction both marked and a branch: its I-miss bit first (spec 7).
            if mark <= branch {
                if ce {
                    let raw = self.shared_raw();
                    for (k, c) in I_COUNTERS.iter().enumerate() {
                        self.charged[c.idx()] += self.sat(raw[k]) as u128;
                    }
                }
                self.clear_shared();
            } else {
                self.commit_branch(ce);
            }
        }
        self.rob_head_seq = end;
        self.rob_count -= n as u32;
    }

    /// The oldest dispatched branch commits.
    fn commit_branch(&mut self, ce: bool) {
        let b = self.branches.pop_front().expect("a dispatched branch");
        self.n_disp -= 1;
        if self.first_growing > 0 {
            self.first_growing -= 1;
        } else {
            self.advance_first_growing();
        }
        let now = self.now();
        for (k, c) in I_COUNTERS.iter().enumerate() {
            let v = b.imiss(k);
            self.queued_imiss[k] -= v;
            if ce && !self.sfmt {
                self.charged[c.idx()] += v as u128;
            }
        }
        if b.resolved.is_some() {
            let pen = self.sat(b.penalty_raw(now));
            if ce {
                self.charged[Counter::Bpred.idx()] += pen as u128;
            }
            if b.done.is_some() {
                self.done_penalty -= pen;
            } else {
                debug_assert!(self.refill_from.is_none());
                self.refill_from = Some(now);
            }
            if self.sfmt {
                self.clear_shared();
            }
        }
    }

    /// 4.3: fetched branches join the queue; then a frontend redirect drops the
    /// youngest fetched ones and restarts the basic block.
    fn fetch(&mut self, ev: &CycleEvents) {
        for i in 0..ev.fetched_branches {
            let imiss = if i == 0 && !self.sfmt {
                self.acc_raw()
            } else {
                [0; 3]
            };
            let imiss = imiss.map(|v| self.sat(v));
            for (k, q) in self.queued_imiss.iter_mut().enumerate() {
                *q += imiss[k];
            }
            let row = RowView {
                l1i: imiss[0] as u32,
                l2i: imiss[1] as u32,
                itlb: imiss[2] as u32,
                ..RowView::default()
            };
            self.branches.push_back(Branch {
                fetched_at: self.t,
                seq: u64::MAX,
                dispatched: None,
                resolved: None,
                done: None,
                row,
                clock: STOPPED,
                offset: 0,
                packed: row.pack(),
            });
            self.restart_block();
        }
        if ev.fe_redirect {
            self.drop_younger(self.branches.len() - ev.fe_squash as usize);
            self.restart_block();
        }
    }

    /// 4.4: instructions enter the ROB; branches among them take the oldest
    /// fetched entries of the queue; a mispredicted branch's correct path arrived.
    fn dispatch(&mut self, ev: &CycleEvents) {
        if ev.dispatched == 0 {
            return;
        }
        let now = self.now();
        if self.awaiting().is_some() {
            let i = self.n_disp - 1;
            let b = &mut self.branches[i];
            b.done = Some(now);
            b.row.done = true;
            b.set_clock(now);
            self.done_penalty += self.sat(self.branches[i].penalty_raw(now));
        }
        let tail = self.rob_head_seq + self.rob_count as u64;
        let mut mask = ev.dispatched_branches;
        while mask != 0 {
            let b = &mut self.branches[self.n_disp];
            b.seq = tail + mask.trailing_zeros() as u64;
            b.dispatched = Some(now);
            b.row.dispatched = true;
            b.row.rob_id = (b.seq % self.p.rob_entries as u64) as u16;
            b.set_clock(now);
            self.n_disp += 1;
            mask &= mask - 1;
        }
        if self.sfmt {
            let mut mask = ev.dispatched_imiss;
            while mask != 0 {
                let seq = tail + mask.trailing_zeros() as u64;
                self.marks.push_back(seq);
                self.marked[(seq % self.p.rob_entries as u64) as usize] = true;
                mask &= mask - 1;
            }
        }
        self.rob_count += ev.dispatched as u32;
        self.refilling = false;
        if let Some(r) = self.refill_from.take() {
            self.charged[Counter::Bpred.idx()] += (now.refill - r.refill) as u128;
        }
        self.advance_first_growing();
    }

    /// 4.5: a misprediction or a flush squashes the younger instructions.
    fn squash(&mut self, sq: Squash) {
        let (x, keep_x) = match sq {
            Squash::None => return,
            Squash::Mispredict(x) => (x, true),
            Squash::Flush(x) => (x, false),
        };
        let seq = self.seq_of(self.rob_head_seq, x);
        let older = self.branches.partition_point(|b| b.seq < seq);
        let kept_rob = seq + keep_x as u64;
        if keep_x {
            debug_assert!(older < self.n_disp && self.branches[older].seq == seq);
            self.drop_younger(older + 1);
            let now = self.now();
            let b = &mut self.branches[older];
            b.resolved = Some(now);
            b.row.mispredict = true;
            b.set_clock(now);
            self.refilling = true;
        } else {
            self.drop_younger(older);
            self.refilling = false;
        }
        self.rob_count = (kept_rob - self.rob_head_seq) as u32;
        while let Some(&s) = self.marks.back().filter(|&&s| s >= kept_rob) {
            self.marks.pop_back();
            self.marked[(s % self.p.rob_entries as u64) as usize] = false;
        }
        self.restart_block();
    }
}

impl CounterUnit for Unit {
    fn params(&self) -> &Params {
        &self.p
    }

    fn step(&mut self, ev: &CycleEvents) {
        if self.error.is_some() {
            return;
        }
        if let Err((field, rule)) = self.check(ev) {
            self.error = Some(ProtocolError {
                bundle: self.t,
                field,
                rule,
            });
            return;
        }
        self.count(ev);
        if !self.saturated {
            self.saturated = self.local_exceeded();
        }
        self.retire(ev.retired as u64, ev.count_enable);
        self.fetch(ev);
        self.dispatch(ev);
        self.squash(ev.squash);
        self.t += 1;
    }

    fn view(&self) -> UnitView {
        let mut counters = Counters::default();
        // `global_mask < 2^64`: a total passed it iff its high half is not zero
        // or its low half is above it.
        let gm = self.global_mask as u64;
        for (i, total) in self.totals().into_iter().enumerate() {
            let (lo, hi) = (total as u64, (total >> 64) as u64);
            counters.value[i] = lo & gm;
            counters.overflow |= (((hi != 0) | (lo > gm)) as u16) << i;
        }
        let (shared, pending_i) = if self.sfmt {
            let s = self.shared_raw().map(|v| self.sat(v));
            (s, s)
        } else {
            let a = self.acc_raw();
            let q = &self.queued_imiss;
            (
                [0; 3],
                [
                    q[0] + self.sat(a[0]),
                    q[1] + self.sat(a[1]),
                    q[2] + self.sat(a[2]),
                ],
            )
        };
        let awaiting = self
            .awaiting()
            .map_or(0, |b| self.sat(b.penalty_fast(self.now())));
        let live = self.branches.len() as u32;
        UnitView {
            counters,
            saturated: self.saturated,
            rob_head: (self.rob_head_seq % self.p.rob_entries as u64) as u32,
            rob_count: self.rob_count,
            rob_full: self.rob_count == self.p.rob_entries,
            free_rows: self.p.fmt_rows - 1 - live,
            dispatched_rows: self.n_disp as u32,
            fetched_rows: live - self.n_disp as u32,
            refilling: self.refilling,
            refill_pending: self.refill_from.is_some(),
            error: self.error,
            shared_i: shared.map(|v| v as u32),
            imiss_bits: self.marks.len() as u32,
            pending: Pending {
                l1i: pending_i[0],
                l2i: pending_i[1],
                itlb: pending_i[2],
                bpred: self.done_penalty + awaiting,
            },
        }
    }

    fn for_each_row(&self, f: &mut dyn FnMut(usize, RowView)) {
        let now = self.now();
        let clocks = now.clocks();
        for (age, b) in self.branches.iter().enumerate() {
            let raw = clocks[b.clock & 3].wrapping_sub(b.offset);
            debug_assert_eq!(raw, b.penalty_raw(now), "{b:?}");
            f(
                age,
                RowView {
                    penalty: raw.min(self.local_max) as u32,
                    ..b.row
                },
            );
        }
        let a = if self.sfmt {
            [0; 3]
        } else {
            self.acc_raw().map(|v| self.sat(v) as u32)
        };
        f(
            self.branches.len(),
            RowView {
                l1i: a[0],
                l2i: a[1],
                itlb: a[2],
                ..RowView::default()
            },
        );
    }

    fn rows_into(&self, out: &mut Vec<RowView>) {
        let now = self.now();
        let clocks = now.clocks();
        let max = self.local_max;
        out.extend(self.branches.iter().map(|b| {
            let raw = clocks[b.clock & 3].wrapping_sub(b.offset);
            debug_assert_eq!(raw, b.penalty_raw(now), "{b:?}");
            RowView {
                penalty: raw.min(max) as u32,
                ..b.row
            }
        }));
        let a = if self.sfmt {
            [0; 3]
        } else {
            self.acc_raw().map(|v| self.sat(v) as u32)
        };
        out.push(RowView {
            l1i: a[0],
            l2i: a[1],
            itlb: a[2],
            ..RowView::default()
        });
    }

    fn rows_columns(&self, out: &mut [u32]) -> usize {
        let now = self.now();
        let clocks = now.clocks();
        let max = self.local_max;
        let n = self.branches.len() + 1;
        let (cols, _) = out.split_at_mut(ROW_COLUMNS * n);
        let (pen, rest) = cols.split_at_mut(n);
        let (meta, rest) = rest.split_at_mut(n);
        let (l1, rest) = rest.split_at_mut(n);
        let (l2, it) = rest.split_at_mut(n);
        // The queue's two runs, one row per column each; zipped iterators, so
        // no index is checked per row.
        #[inline(always)]
        fn fill(src: &[Branch], cols: [&mut [u32]; ROW_COLUMNS], clocks: &[u64; 4], max: u64) {
            let n = src.len();
            let [pen, meta, l1, l2, it] = cols;
            let (pen, meta, l1, l2, it) = (
                &mut pen[..n],
                &mut meta[..n],
                &mut l1[..n],
                &mut l2[..n],
                &mut it[..n],
            );
            for i in 0..n {
                let b = &src[i];
                let raw = clocks[b.clock & 3].wrapping_sub(b.offset);
                pen[i] = sat_min(raw, max) as u32;
                meta[i] = b.packed[1];
                l1[i] = b.packed[2];
                l2[i] = b.packed[3];
                it[i] = b.packed[4];
            }
        }
        let (qa, qb) = self.branches.as_slices();
        for (run, at) in [(qa, 0), (qb, qa.len())] {
            let cols = [
                &mut pen[at..],
                &mut meta[at..],
                &mut l1[at..],
                &mut l2[at..],
                &mut it[at..],
            ];
            fill(run, cols, &clocks, max);
        }
        debug_assert!(self
            .branches
            .iter()
            .enumerate()
            .all(|(i, b)| pen[i] as u64 == self.sat(b.penalty_raw(now))));
        let a = if self.sfmt {
            [0; 3]
        } else {
            self.acc_raw().map(|v| self.sat(v) as u32)
        };
        let i = n - 1;
        (pen[i], meta[i], l1[i], l2[i], it[i]) = (0, 0, a[0], a[1], a[2]);
        n
    }

    fn imiss_bit(&self, rob_id: u16) -> bool {
        self.marked.get(rob_id as usize).copied().unwrap_or(false)
    }

    fn imiss_live_words(&self, out: &mut [u64]) {
        let w = (self.p.rob_entries as usize).div_ceil(64);
        let out = &mut out[..w];
        out.fill(0);
        // `marks` holds exactly the live marked instructions.
        let e = self.p.rob_entries as u64;
        for &s in &self.marks {
            let id = s % e;
            out[(id / 64) as usize] |= 1 << (id % 64);
        }
    }
}
