//! The lock-step checker: `hw` and `golden` driven by the same bundles, every
//! architecturally visible field compared every cycle.
//!
//! On the first difference [`LockStep::step`] returns a [`Mismatch`] naming the
//! cycle, the field, both values, the seed (if the caller gave one) and the last
//! 16 bundles. After a mismatch the checker refuses to go on (every later call
//! returns the same mismatch), so a caller cannot accidentally keep counting.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::RwLock;

use events::{
    Counter, CounterUnit, CycleEvents, Field, ParamError, Params, RowView, UnitView, Variant,
    ROW_COLUMNS,
};

/// How many bundles the mismatch report shows.
pub const HISTORY: usize = 16;

/// The first difference between the two models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub variant: Variant,
    /// Index of the bundle after which the difference appeared (from 0).
    pub cycle: u64,
    /// Dotted name of the field, e.g. `counters.bpred` or `row[3].penalty`.
    pub field: String,
    pub golden: String,
    pub hw: String,
    pub seed: Option<u64>,
    /// The last bundles, oldest first, the failing one last; `(index, bundle)`.
    pub last: Vec<(u64, CycleEvents)>,
    /// The waveform written for this mismatch, if any.
    pub waves: Option<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "lock-step mismatch ({}) after cycle {}: field `{}`: golden = {}, hw = {}",
            self.variant, self.cycle, self.field, self.golden, self.hw
        )?;
        match self.seed {
            Some(s) => writeln!(f, "  seed: {s}")?,
            None => writeln!(f, "  seed: none (not a random run)")?,
        }
        if let Some(w) = &self.waves {
            writeln!(f, "  waveform: {w}")?;
        }
        writeln!(f, "  last {} bundles (oldest first):", self.last.len())?;
        for (i, ev) in &self.last {
            writeln!(f, "    {i:>10}: {}", bundle_line(ev))?;
        }
        Ok(())
    }
}

impl std::error::Error for Mismatch {}

/// One bundle as a compact single line, as a JSONL stream holds it (the
/// fields that differ from an idle counted cycle).
pub fn bundle_line(ev: &CycleEvents) -> String {
    events::stream::bundle_json(ev)
}

/// A test-only change to the bundle golden sees ([`LockStep::inject_golden_fault`]).
pub type Fault = fn(&mut CycleEvents);

fn flip_count_enable(e: &mut CycleEvents) {
    e.count_enable = !e.count_enable;
}

/// Bundles per parallel chunk of [`LockStep::run_batch`].
pub const CHUNK: usize = 1024;
/// Chunks shorter than this go through the per-cycle path ([`LockStep::step`]).
pub const MIN_PAR: usize = 64;

/// `hw` and `golden` of one variant in lock step.
pub struct LockStep {
    params: Params,
    hw: Pad<hw::Unit>,
    golden: Pad<golden::Unit>,
    cycle: u64,
    seed: Option<u64>,
    ring: [CycleEvents; HISTORY],
    failed: Option<Box<Mismatch>>,
    /// History for the failure waveform (src/failwaves.rs).
    fw: Pad<crate::failwaves::FailWaves>,
    /// Test-only fault: golden sees cycle `fault_at` changed by `fault`.
    fault_at: u64,
    fault: Fault,
    /// Compare buffers: live rows as columns (`ROW_COLUMNS * fmt_rows` words
    /// each and the read-out's spill room), then the live I-miss bits by ROB id
    /// (`ceil(rob_entries / 64)` words each).
    rows_hw: Box<[u32]>,
    rows_golden: Box<[u32]>,
    imiss_hw: Box<[u64]>,
    imiss_golden: Box<[u64]>,
    /// Buffers of the batched path ([`LockStep::run_batch`]), from its first call.
    batch: Option<Box<BatchBufs>>,
}

impl LockStep {
    /// Both models reset, built with `params` (its `variant` picks FMT or sFMT).
    pub fn new(params: Params) -> Result<Self, ParamError> {
        let hw = hw::Unit::new(params)?;
        let golden = golden::Unit::new(params)?;
        let cap = params.fmt_rows as usize;
        let words = (params.rob_entries as usize).div_ceil(64);
        Ok(Self {
            params,
            hw: Pad(hw),
            golden: Pad(golden),
            cycle: 0,
            seed: None,
            ring: [CycleEvents::default(); HISTORY],
            failed: None,
            fw: Pad(crate::failwaves::FailWaves::new(Some(
                crate::failwaves::default_dir(),
            ))),
            fault_at: u64::MAX,
            fault: flip_count_enable,
            rows_hw: vec![0; ROW_COLUMNS * cap + ROW_SPILL].into_boxed_slice(),
            rows_golden: vec![0; ROW_COLUMNS * cap + ROW_SPILL].into_boxed_slice(),
            imiss_hw: vec![0; words].into_boxed_slice(),
            imiss_golden: vec![0; words].into_boxed_slice(),
            batch: None,
        })
    }

    /// Where a mismatch writes its waveform (`None`: write none). Default:
    /// [`crate::failwaves::default_dir`].
    pub fn with_waves_dir(mut self, dir: Option<std::path::PathBuf>) -> Self {
        self.fw = Pad(crate::failwaves::FailWaves::new(dir));
        self
    }

    /// Test only: inject a fault into golden (it sees bundle `cycle` with
    /// `count_enable` flipped), to exercise the mismatch path.
    #[doc(hidden)]
    pub fn inject_golden_fault_at(&mut self, cycle: u64) {
        self.inject_golden_fault(cycle, flip_count_enable);
    }

    /// Test only: golden sees bundle `cycle` changed by `fault` (a field of the
    /// views, rows or I-miss bits made to differ on purpose, to show that
    /// both the per-cycle and the batched compare see it).
    #[doc(hidden)]
    pub fn inject_golden_fault(&mut self, cycle: u64, fault: Fault) {
        self.fault_at = cycle;
        self.fault = fault;
    }

    /// Record the seed of the stream, for the mismatch report.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    pub fn params(&self) -> &Params {
        &self.params
    }
    pub fn hw(&self) -> &hw::Unit {
        &self.hw
    }
    pub fn golden(&self) -> &golden::Unit {
        &self.golden
    }
    /// Bundles stepped so far.
    pub fn cycles(&self) -> u64 {
        self.cycle
    }

    /// Step both models with `ev` and compare everything visible.
    pub fn step(&mut self, ev: &CycleEvents) -> Result<(), Box<Mismatch>> {
        if let Some(m) = &self.failed {
            return Err(m.clone());
        }
        self.ring[(self.cycle % HISTORY as u64) as usize] = *ev;
        self.fw.before_step(self.cycle, ev, &self.hw);
        self.hw.step(ev);
        if self.cycle == self.fault_at {
            let mut e = *ev;
            (self.fault)(&mut e);
            self.golden.step(&e);
        } else {
            self.golden.step(ev);
        }
        let res = self.compare();
        self.cycle += 1;
        match res {
            Ok(()) => Ok(()),
            Err((field, golden, hw)) => {
                let m = Mismatch {
                    variant: self.params.variant,
                    cycle: self.cycle - 1,
                    field,
                    golden,
                    hw,
                    seed: self.seed,
                    last: self.history(),
                    waves: match self.fw.write(self.seed, self.cycle - 1) {
                        Ok(p) => p.map(|p| p.display().to_string()),
                        Err(e) => Some(format!("none ({e})")),
                    },
                };
                let m = Box::new(m);
                self.failed = Some(m.clone());
                Err(m)
            }
        }
    }

    /// Step both models with every bundle of `bundles`, in order, and compare
    /// everything visible after each: the same check as calling
    /// [`LockStep::step`] on each bundle, with the same [`Mismatch`] (cycle, field,
    /// values, seed, history, waveform) on the first difference, but with `hw`
    /// (on the calling thread) and `golden` (on a scoped thread) stepped in
    /// parallel.
    ///
    /// The bundles go in chunks of [`CHUNK`]. After every bundle each side
    /// writes a record of everything the per-cycle check compares (see
    /// [`Enc`]: the view packed to plain words, the live rows as columns, the
    /// sFMT I-miss words). `golden` runs ahead, into its slot for the chunk
    /// (two slots, so it records chunk `k + 1` while `hw` checks chunk `k`);
    /// `hw` records chunk `k` into its buffer, waits for `golden`'s record of
    /// it and compares the two (one slice compare: records are prefix-free, so
    /// equal buffers mean equal records cycle by cycle). When they differ,
    /// both models (and the failure-waveform and mismatch histories) go back
    /// to their state at the start of the chunk (`golden`'s saved in its slot,
    /// `hw`'s on its side) and the chunk is re-run through [`LockStep::step`],
    /// which finds and reports the first difference exactly as the per-cycle
    /// checker does.
    ///
    /// The compare is all on `hw`'s thread, whose step and read-out cost less
    /// than `golden`'s (docs/performance.md); `golden`'s thread only steps and
    /// records. Comparing each record as soon as it is written was measured
    /// slower: the compare's wide loads then straddle stores still in flight.
    ///
    /// No allocation per cycle: the buffers (3 chunks of records, the saved
    /// states) are allocated on the first call and reused; the saved states
    /// are copied into per chunk. Batches shorter than [`MIN_PAR`] go cycle by
    /// cycle.
    pub fn run_batch(&mut self, bundles: &[CycleEvents]) -> Result<(), Box<Mismatch>> {
        if let Some(m) = &self.failed {
            return Err(m.clone());
        }
        if bundles.len() < MIN_PAR {
            for ev in bundles {
                self.step(ev)?;
            }
            return Ok(());
        }
        let params = self.params;
        let bufs = self.batch.get_or_insert_with(|| {
            Box::new(BatchBufs {
                enc_hw: Pad(Enc::new(&params)),
                rec_hw: Vec::new(),
                hw_saved: None,
                golden_slots: std::array::from_fn(|_| Pad(RwLock::new(Slot::default()))),
            })
        });
        let need = CHUNK.min(bundles.len()) * bufs.enc_hw.max_words();
        for s in bufs.golden_slots.iter_mut() {
            s.get_mut().unwrap_or_else(|e| e.into_inner()).grow(need);
        }
        if bufs.rec_hw.len() < need {
            bufs.rec_hw.resize(need, 0);
        }
        let start = self.cycle;
        let (fault_at, fault_fn) = (self.fault_at, self.fault);
        let progress = Progress::default();
        let Self {
            hw,
            golden,
            fw,
            ring,
            batch,
            ..
        } = self;
        let bufs = batch.as_mut().expect("allocated above");
        let BatchBufs {
            enc_hw,
            rec_hw,
            hw_saved,
            golden_slots,
        } = &mut **bufs;
        let golden_slots = &*golden_slots;
        let pr = &progress;
        std::thread::scope(|sc| {
            sc.spawn(|| {
                // golden works on a copy made here (its heap blocks then come
                // from this thread's arena, away from hw's: no false sharing) and
                // is stored back at the end.
                let _guard = StopOnPanic(&pr.stop);
                let mut g = Pad(golden.clone());
                let mut enc = Pad(Enc::new(&params));
                for (k, chunk) in bundles.chunks(CHUNK).enumerate() {
                    // slot k % 2 is free once hw checked chunk k - 2
                    if !wait_for(&pr.stop, || pr.h_cmp.load(Ordering::Acquire) + 2 > k) {
                        break;
                    }
                    {
                        let mut s = golden_slots[k % 2]
                            .write()
                            .unwrap_or_else(|e| e.into_inner());
                        let s = &mut *s;
                        match &mut s.saved {
                            Some(x) => x.clone_from(&g),
                            None => s.saved = Some(g.0.clone()),
                        }
                        let c0 = start + (k * CHUNK) as u64;
                        let fault = fault_at
                            .checked_sub(c0)
                            .filter(|&i| i < chunk.len() as u64)
                            .map(|i| i as usize);
                        s.len = record(
                            &mut *g,
                            &mut enc,
                            chunk,
                            fault.map(|i| (i, fault_fn)),
                            &mut s.rec,
                            |_, _| {},
                        );
                    }
                    pr.g_rec.store(k + 1, Ordering::Release);
                }
                **golden = g.0;
            });
            // hw on this thread
            let _guard = StopOnPanic(&pr.stop);
            let mut c = start;
            for (k, chunk) in bundles.chunks(CHUNK).enumerate() {
                match hw_saved {
                    Some((h, f, r)) => {
                        h.clone_from(hw);
                        f.clone_from(fw);
                        *r = *ring;
                    }
                    None => *hw_saved = Some((hw.0.clone(), fw.0.clone(), *ring)),
                }
                let len = record(&mut **hw, enc_hw, chunk, None, rec_hw, |h, ev| {
                    fw.before_step(c, ev, h);
                    c += 1;
                });
                if !wait_for(&pr.stop, || pr.g_rec.load(Ordering::Acquire) > k) {
                    break;
                }
                let same = {
                    let s = golden_slots[k % 2]
                        .read()
                        .unwrap_or_else(|e| e.into_inner());
                    s.rec[..s.len] == rec_hw[..len]
                };
                if !same {
                    pr.fail(k);
                    break;
                }
                let c1 = c - chunk.len().min(HISTORY) as u64;
                for (i, ev) in (c1..c).zip(&chunk[chunk.len() - (c - c1) as usize..]) {
                    ring[(i % HISTORY as u64) as usize] = *ev;
                }
                pr.h_cmp.store(k + 1, Ordering::Release);
            }
        });
        let k = progress.failed.load(Ordering::Acquire);
        if k == usize::MAX {
            self.cycle += bundles.len() as u64;
            return Ok(());
        }
        let bufs = self.batch.as_mut().expect("allocated above");
        let (h, f, r) = bufs
            .hw_saved
            .take()
            .expect("hw saved its state before the chunk");
        let g = bufs.golden_slots[k % 2]
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .saved
            .take()
            .expect("golden saved its state before the chunk");
        self.ring = r;
        let c0 = start + (k * CHUNK) as u64;
        let chunk = &bundles[k * CHUNK..bundles.len().min((k + 1) * CHUNK)];
        self.rerun(c0, h, g, f, chunk)
    }

    /// The cold path of a chunk whose records differ: back to the state at its
    /// start, then cycle by cycle.
    #[cold]
    #[inline(never)]
    fn rerun(
        &mut self,
        start: u64,
        hw: hw::Unit,
        golden: golden::Unit,
        fw: crate::failwaves::FailWaves,
        chunk: &[CycleEvents],
    ) -> Result<(), Box<Mismatch>> {
        self.hw = Pad(hw);
        self.golden = Pad(golden);
        self.fw = Pad(fw);
        self.cycle = start;
        for ev in chunk {
            self.step(ev)?;
        }
        // Unreachable unless the records are not faithful to the compare.
        let m = Box::new(Mismatch {
            variant: self.params.variant,
            cycle: self.cycle.saturating_sub(1),
            field: format!(
                "batch records of cycles {start}..{} (the per-cycle re-run agreed: a checker bug)",
                self.cycle
            ),
            golden: String::new(),
            hw: String::new(),
            seed: self.seed,
            last: self.history(),
            waves: None,
        });
        self.failed = Some(m.clone());
        Err(m)
    }

    /// The last bundles stepped (at most [`HISTORY`]), oldest first, with their indices.
    pub fn history(&self) -> Vec<(u64, CycleEvents)> {
        let n = self.cycle.min(HISTORY as u64);
        (self.cycle - n..self.cycle)
            .map(|i| (i, self.ring[(i % HISTORY as u64) as usize]))
            .collect()
    }

    /// Every field of the views, every field of every live row (packed, one
    /// slice compare), and in sFMT the I-miss bit of every live ROB entry (as
    /// words masked to the live ids, one slice compare); the first difference is
    /// then named field by field (cold path).
    #[inline]
    fn compare(&mut self) -> Result<(), (String, String, String)> {
        let g = self.golden.view();
        let h = self.hw.view();
        if g != h {
            return Err(first_view_difference(&g, &h));
        }
        // Both fill row columns of plain words: one `memcmp`.
        let nh = self.hw.rows_columns(&mut self.rows_hw);
        let ng = self.golden.rows_columns(&mut self.rows_golden);
        let (ch, cg) = (
            &self.rows_hw[..ROW_COLUMNS * nh],
            &self.rows_golden[..ROW_COLUMNS * ng],
        );
        if ch != cg {
            return Err(first_column_row_difference(cg, ng, ch, nh));
        }
        if self.params.variant == Variant::Sfmt && g.imiss_bits > 0 {
            self.hw.imiss_live_words(&mut self.imiss_hw);
            self.golden.imiss_live_words(&mut self.imiss_golden);
            if self.imiss_hw != self.imiss_golden {
                return Err(self.first_imiss_difference(&g));
            }
        }
        Ok(())
    }

    /// The first live ROB entry, oldest first, whose I-miss bits differ.
    #[cold]
    fn first_imiss_difference(&self, g: &UnitView) -> (String, String, String) {
        let bit = |w: &[u64], id: u32| w[id as usize / 64] >> (id % 64) & 1 != 0;
        for k in 0..g.rob_count {
            let id = (g.rob_head + k) % self.params.rob_entries;
            let (gb, hb) = (bit(&self.imiss_golden, id), bit(&self.imiss_hw, id));
            if gb != hb {
                return (
                    format!("imiss_bit[rob_id {id}]"),
                    gb.to_string(),
                    hb.to_string(),
                );
            }
        }
        (
            "imiss_bits (outside the live ROB entries)".into(),
            format!("{:?}", self.imiss_golden),
            format!("{:?}", self.imiss_hw),
        )
    }
}

/// A value alone on its cache lines (the two threads of
/// [`LockStep::run_batch`] write their own state every cycle: no false sharing).
#[repr(align(128))]
struct Pad<T>(T);

impl<T> std::ops::Deref for Pad<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Pad<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// The state of `hw`'s side before a chunk: the unit, the failure-waveform
/// history and the mismatch history.
type HwSaved = (
    hw::Unit,
    crate::failwaves::FailWaves,
    [CycleEvents; HISTORY],
);

/// The buffers of [`LockStep::run_batch`], kept across calls: `hw`'s
/// record writer, its records of the chunk being checked and its state
/// before that chunk; `golden`'s two record slots (chunk `k` uses slot `k % 2`).
struct BatchBufs {
    enc_hw: Pad<Enc>,
    rec_hw: Vec<u32>,
    hw_saved: Option<HwSaved>,
    golden_slots: [Pad<RwLock<Slot>>; 2],
}

/// `golden`'s records of one chunk and its state before the chunk.
#[derive(Default)]
struct Slot {
    rec: Vec<u32>,
    len: usize,
    saved: Option<golden::Unit>,
}

impl Slot {
    fn grow(&mut self, words: usize) {
        if self.rec.len() < words {
            self.rec.resize(words, 0);
        }
    }
}

/// How far each side of [`LockStep::run_batch`] got (`golden`: chunks
/// recorded; `hw`: chunks checked and found equal), and the first chunk found
/// to differ.
struct Progress {
    g_rec: Pad<AtomicUsize>,
    h_cmp: Pad<AtomicUsize>,
    stop: Pad<AtomicBool>,
    failed: Pad<AtomicUsize>,
}

impl Default for Progress {
    fn default() -> Self {
        Self {
            g_rec: Pad(AtomicUsize::new(0)),
            h_cmp: Pad(AtomicUsize::new(0)),
            stop: Pad(AtomicBool::new(false)),
            failed: Pad(AtomicUsize::new(usize::MAX)),
        }
    }
}

impl Progress {
    /// Chunk `k` differs: stop both sides.
    fn fail(&self, k: usize) {
        self.failed.fetch_min(k, Ordering::AcqRel);
        self.stop.store(true, Ordering::Release);
    }
}

/// Raises `stop` if its side unwinds from a panic, so the other side stops
/// waiting for it (the panic then surfaces instead of a hang).
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

/// Spin (then yield) until `ready()`; `false` if `stop` was raised first.
fn wait_for(stop: &AtomicBool, ready: impl Fn() -> bool) -> bool {
    let mut spins = 0u32;
    while !ready() {
        if stop.load(Ordering::Acquire) {
            return false;
        }
        if spins < 256 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
    true
}

/// Words of a record's view part ([`pack_view`]).
const VIEW_WORDS: usize = 41;

// Every field's code fits the 4 bits `pack_view` gives it.
const _: () = {
    let mut i = 0;
    while i < Field::ALL.len() {
        assert!((Field::ALL[i] as u32) < 16);
        i += 1;
    }
};

/// Every field of `v` as plain words (an injective packing: equal packs iff
/// equal views), and `nrows` (the live rows that follow in the record).
#[inline(always)]
fn pack_view(v: &UnitView, nrows: u32, w: &mut [u32; VIEW_WORDS]) {
    for (k, x) in v.counters.value.iter().enumerate() {
        w[2 * k] = *x as u32;
        w[2 * k + 1] = (*x >> 32) as u32;
    }
    // The error's valid bit 20, its field in bits 21..=24 (1..=8), its rule
    // from bit 25 (the rule once began at bit 24, where it overlapped the
    // field `head` (8), so that rules 2 and 3 of `head` packed alike).
    let (err, eb) = match v.error {
        Some(e) => (
            1 << 20 | (e.field.bits() as u32) << 21 | (e.rule as u32) << 25,
            e.bundle,
        ),
        None => (0, 0),
    };
    w[20] = v.counters.overflow as u32
        | (v.saturated as u32) << 16
        | (v.rob_full as u32) << 17
        | (v.refilling as u32) << 18
        | (v.refill_pending as u32) << 19
        | err;
    w[21] = eb as u32;
    w[22] = (eb >> 32) as u32;
    w[23] = v.rob_head;
    w[24] = v.rob_count;
    w[25] = v.free_rows;
    w[26] = v.dispatched_rows;
    w[27] = v.fetched_rows;
    w[28] = v.shared_i[0];
    w[29] = v.shared_i[1];
    w[30] = v.shared_i[2];
    w[31] = v.imiss_bits;
    let p = [
        v.pending.l1i,
        v.pending.l2i,
        v.pending.itlb,
        v.pending.bpred,
    ];
    for (k, x) in p.iter().enumerate() {
        w[32 + 2 * k] = *x as u32;
        w[33 + 2 * k] = (*x >> 32) as u32;
    }
    w[40] = nrows;
}

/// One side's record writer for [`LockStep::run_batch`]: after each step, the
/// record of everything the per-cycle check compares, in plain words: the view
/// packed by [`pack_view`] (its row count included), the live rows as columns
/// ([`CounterUnit::rows_columns`]), and in sFMT the live I-miss words (zeros
/// when `imiss_bits` is 0, since the per-cycle check compares them only when it
/// is not), as `u32` pairs.
///
/// A record's length follows from its first words (the row count, the
/// variant), so two sides that write the same words have the same records
/// cycle by cycle: the same views, rows and I-miss bits.
struct Enc {
    sfmt: bool,
    cap: usize,
    imiss: Box<[u64]>,
}

impl Enc {
    fn new(p: &Params) -> Self {
        Self {
            sfmt: p.variant == Variant::Sfmt,
            cap: p.fmt_rows as usize,
            imiss: vec![0; (p.rob_entries as usize).div_ceil(64)].into_boxed_slice(),
        }
    }

    /// Words of the I-miss part (sFMT).
    fn imiss_words(&self) -> usize {
        if self.sfmt {
            2 * self.imiss.len()
        } else {
            0
        }
    }

    /// The largest record in words, and room for the row read-out's spill
    /// (a model may write a few words past its columns).
    fn max_words(&self) -> usize {
        VIEW_WORDS + ROW_COLUMNS * self.cap + self.imiss_words() + ROW_SPILL
    }

    /// Write the record of `u`'s current state at `out[pos..]`; returns the new end.
    #[inline(always)]
    fn push<U: CounterUnit>(&mut self, u: &U, out: &mut [u32], mut pos: usize) -> usize {
        let v = u.view();
        let rows = pos + VIEW_WORDS;
        let n = u.rows_columns(&mut out[rows..rows + ROW_COLUMNS * self.cap + ROW_SPILL]);
        let vp: &mut [u32; VIEW_WORDS] =
            (&mut out[pos..rows]).try_into().expect("VIEW_WORDS words");
        pack_view(&v, n as u32, vp);
        pos = rows + ROW_COLUMNS * n;
        if self.sfmt {
            if v.imiss_bits > 0 {
                u.imiss_live_words(&mut self.imiss);
            } else {
                self.imiss.fill(0);
            }
            let dst = &mut out[pos..pos + 2 * self.imiss.len()];
            for (j, x) in self.imiss.iter().enumerate() {
                dst[2 * j] = *x as u32;
                dst[2 * j + 1] = (*x >> 32) as u32;
            }
            pos += 2 * self.imiss.len();
        }
        pos
    }
}

/// Words past its `ROW_COLUMNS * fmt_rows` that a row read-out may write
/// ([`CounterUnit::rows_columns`]): the room `hw`'s fixed form needs
/// (`golden` writes none).
const ROW_SPILL: usize = hw::ROW_SPILL;

/// Step `u` through `evs` (bundle `fault.0` changed by `fault.1`), calling
/// `pre(u, ev)` before each step, and write after each step its record
/// ([`Enc`]) into `out` from 0; returns the words written. `out` holds at least
/// `evs.len()` records of the largest size.
#[inline(always)]
fn record<U: CounterUnit>(
    u: &mut U,
    enc: &mut Enc,
    evs: &[CycleEvents],
    fault: Option<(usize, Fault)>,
    out: &mut [u32],
    mut pre: impl FnMut(&U, &CycleEvents),
) -> usize {
    let mut pos = 0;
    for (i, ev) in evs.iter().enumerate() {
        pre(u, ev);
        if let Some((_, f)) = fault.filter(|x| x.0 == i) {
            let mut e = *ev;
            f(&mut e);
            u.step(&e);
        } else {
            u.step(ev);
        }
        pos = enc.push(u, out, pos);
    }
    pos
}

fn first_view_difference(g: &UnitView, h: &UnitView) -> (String, String, String) {
    macro_rules! cmp {
        ($name:expr, $a:expr, $b:expr) => {
            if $a != $b {
                return ($name.to_string(), format!("{:?}", $a), format!("{:?}", $b));
            }
        };
    }
    for c in Counter::ALL {
        cmp!(
            format!("counters.{}", c.name()),
            g.counters.get(c),
            h.counters.get(c)
        );
        cmp!(
            format!("counters.{}.overflow", c.name()),
            g.counters.overflowed(c),
            h.counters.overflowed(c)
        );
    }
    cmp!("error", g.error, h.error);
    cmp!("saturated", g.saturated, h.saturated);
    cmp!("rob_head", g.rob_head, h.rob_head);
    cmp!("rob_count", g.rob_count, h.rob_count);
    cmp!("rob_full", g.rob_full, h.rob_full);
    cmp!("free_rows", g.free_rows, h.free_rows);
    cmp!("dispatched_rows", g.dispatched_rows, h.dispatched_rows);
    cmp!("fetched_rows", g.fetched_rows, h.fetched_rows);
    cmp!("refilling", g.refilling, h.refilling);
    cmp!("refill_pending", g.refill_pending, h.refill_pending);
    cmp!("shared_i.l1i", g.shared_i[0], h.shared_i[0]);
    cmp!("shared_i.l2i", g.shared_i[1], h.shared_i[1]);
    cmp!("shared_i.itlb", g.shared_i[2], h.shared_i[2]);
    cmp!("imiss_bits", g.imiss_bits, h.imiss_bits);
    cmp!("pending.l1i", g.pending.l1i, h.pending.l1i);
    cmp!("pending.l2i", g.pending.l2i, h.pending.l2i);
    cmp!("pending.itlb", g.pending.itlb, h.pending.itlb);
    cmp!("pending.bpred", g.pending.bpred, h.pending.bpred);
    (
        "view (unnamed field)".into(),
        format!("{g:?}"),
        format!("{h:?}"),
    )
}

#[cold]
fn first_column_row_difference(
    g: &[u32],
    ng: usize,
    h: &[u32],
    nh: usize,
) -> (String, String, String) {
    let rows = |c: &[u32], n: usize| -> Vec<RowView> {
        (0..n)
            .map(|i| RowView::unpack(&std::array::from_fn(|k| c[k * n + i])))
            .collect()
    };
    first_row_difference(&rows(g, ng), &rows(h, nh))
}

fn first_row_difference(g: &[RowView], h: &[RowView]) -> (String, String, String) {
    if g.len() != h.len() {
        return ("rows.len".into(), g.len().to_string(), h.len().to_string());
    }
    let last = g.len() - 1;
    for (i, (a, b)) in g.iter().zip(h).enumerate() {
        let name = |f: &str| {
            if i == last {
                format!("row[accumulation].{f}")
            } else {
                format!("row[{i}].{f}")
            }
        };
        macro_rules! cmp {
            ($f:ident) => {
                if a.$f != b.$f {
                    return (
                        name(stringify!($f)),
                        format!("{:?}", a.$f),
                        format!("{:?}", b.$f),
                    );
                }
            };
        }
        cmp!(dispatched);
        cmp!(rob_id);
        cmp!(penalty);
        cmp!(mispredict);
        cmp!(done);
        cmp!(l1i);
        cmp!(l2i);
        cmp!(itlb);
    }
    ("rows".into(), format!("{g:?}"), format!("{h:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use events::gen::{GenConfig, Generator};
    use events::{ProtocolError, NUM_COUNTERS};

    /// A unit that only shows a fixed state (its row columns are the trait's
    /// default `rows_columns`, the layout every model's read-out writes).
    struct Shown {
        p: Params,
        v: UnitView,
        rows: Vec<RowView>,
        imiss: Vec<bool>,
    }
    impl CounterUnit for Shown {
        fn params(&self) -> &Params {
            &self.p
        }
        fn step(&mut self, _: &CycleEvents) {}
        fn view(&self) -> UnitView {
            self.v
        }
        fn for_each_row(&self, f: &mut dyn FnMut(usize, RowView)) {
            for (i, r) in self.rows.iter().enumerate() {
                f(i, *r)
            }
        }
        fn imiss_bit(&self, rob_id: u16) -> bool {
            self.imiss[rob_id as usize]
        }
    }

    /// Views that differ from the reset view in one field each, at values
    /// that need every bit the field has (both halves of a 64-bit counter,
    /// every overflow flag, every error field and rule).
    fn one_field_views() -> Vec<(String, UnitView)> {
        let base = UnitView::default();
        let mut out = Vec::new();
        let mut add = |name: String, f: &dyn Fn(&mut UnitView)| {
            let mut v = base;
            f(&mut v);
            out.push((name, v));
        };
        let wide = [1u64, 1 << 31, 1 << 32, 1 << 47, u64::MAX];
        for k in 0..NUM_COUNTERS {
            for x in wide {
                add(format!("counter {k} = {x:#x}"), &|v| {
                    v.counters.value[k] = x
                });
            }
        }
        for b in 0..16 {
            add(format!("overflow bit {b}"), &|v| {
                v.counters.overflow = 1 << b
            });
        }
        add("saturated".into(), &|v| v.saturated = true);
        add("rob_full".into(), &|v| v.rob_full = true);
        add("refilling".into(), &|v| v.refilling = true);
        add("refill_pending".into(), &|v| v.refill_pending = true);
        for field in Field::ALL {
            for rule in 1..=9 {
                for bundle in [0, 1, 1 << 32, u64::MAX] {
                    add(
                        format!("error {field:?} rule {rule} bundle {bundle:#x}"),
                        &|v| {
                            v.error = Some(ProtocolError {
                                bundle,
                                field,
                                rule,
                            })
                        },
                    );
                }
            }
        }
        for x in [1u32, 1 << 16, u32::MAX] {
            add(format!("rob_head {x}"), &|v| v.rob_head = x);
            add(format!("rob_count {x}"), &|v| v.rob_count = x);
            add(format!("free_rows {x}"), &|v| v.free_rows = x);
            add(format!("dispatched_rows {x}"), &|v| v.dispatched_rows = x);
            add(format!("fetched_rows {x}"), &|v| v.fetched_rows = x);
            add(format!("imiss_bits {x}"), &|v| v.imiss_bits = x);
            for k in 0..3 {
                add(format!("shared_i[{k}] {x}"), &|v| v.shared_i[k] = x);
            }
        }
        for x in wide {
            add(format!("pending.l1i {x:#x}"), &|v| v.pending.l1i = x);
            add(format!("pending.l2i {x:#x}"), &|v| v.pending.l2i = x);
            add(format!("pending.itlb {x:#x}"), &|v| v.pending.itlb = x);
            add(format!("pending.bpred {x:#x}"), &|v| v.pending.bpred = x);
        }
        out
    }

    /// The batched checker compares packed views, so the packing must lose
    /// nothing: all these views (and the reset view) pack differently, and
    /// the row count is packed too. (A mutation test found that no test held
    /// this: a packing that dropped a counter's high half, a flag or an error
    /// field passed every other test.)
    #[test]
    fn pack_view_packs_every_field_apart() {
        let views = one_field_views();
        let mut seen: std::collections::HashMap<[u32; VIEW_WORDS], String> =
            std::collections::HashMap::new();
        let mut w = [0u32; VIEW_WORDS];
        pack_view(&UnitView::default(), 0, &mut w);
        seen.insert(w, "the reset view".into());
        pack_view(&UnitView::default(), 1, &mut w);
        seen.insert(w, "the reset view with one row".into());
        for (name, v) in &views {
            pack_view(v, 0, &mut w);
            if let Some(other) = seen.insert(w, name.clone()) {
                panic!("{name} packs as {other} does: {w:?}");
            }
        }
        assert_eq!(seen.len(), views.len() + 2);
    }

    /// `Enc::push` writes each I-miss word whole (both halves): decoded back,
    /// the record's I-miss part is what `imiss_live_words` gives, at cycles of
    /// a random sFMT stream with bits set in both halves of a word.
    #[test]
    fn a_record_carries_every_imiss_bit() {
        let p = Params::default().with_variant(Variant::Sfmt);
        let seed = 3;
        eprintln!("seed {seed}");
        let mut u = golden::Unit::new(p).unwrap();
        let mut enc = Enc::new(&p);
        let mut out = vec![0u32; enc.max_words()];
        let mut live = vec![0u64; enc.imiss.len()];
        let (mut low, mut high) = (0, 0);
        for ev in Generator::new(p, GenConfig::realistic(), seed).take(200_000) {
            u.step(&ev);
            if u.view().imiss_bits == 0 {
                continue;
            }
            let end = enc.push(&u, &mut out, 0);
            u.imiss_live_words(&mut live);
            let part = &out[end - 2 * live.len()..end];
            let got: Vec<u64> = part
                .chunks(2)
                .map(|c| c[0] as u64 | (c[1] as u64) << 32)
                .collect();
            assert_eq!(got, live, "cycle {}", u.view().counters.value[0]);
            low += live.iter().any(|w| *w as u32 != 0) as u32;
            high += live.iter().any(|w| (*w >> 32) != 0) as u32;
        }
        assert!(
            low > 0 && high > 0,
            "bits seen in low {low}, high {high} halves"
        );
    }

    /// The first differing row and field is named, the youngest row as the
    /// accumulation row, from the columns both sides write.
    #[test]
    fn the_first_row_difference_is_named_from_the_columns() {
        let row = |i: u32| RowView {
            dispatched: i < 2,
            rob_id: 10 + i as u16,
            penalty: 100 + i,
            mispredict: false,
            done: false,
            l1i: i,
            l2i: 2 * i,
            itlb: 3 * i,
        };
        let columns = |rows: &[RowView]| -> Vec<u32> {
            let u = Shown {
                p: Params::default(),
                v: UnitView::default(),
                rows: rows.to_vec(),
                imiss: Vec::new(),
            };
            let mut c = vec![0; ROW_COLUMNS * rows.len()];
            u.rows_columns(&mut c);
            c
        };
        let g: Vec<RowView> = (0..3).map(row).collect();
        let mut h = g.clone();
        h[1].penalty = 7;
        h[2].l2i = 9;
        let named = first_column_row_difference(&columns(&g), 3, &columns(&h), 3);
        assert_eq!(named, ("row[1].penalty".into(), "101".into(), "7".into()));
        let mut h = g.clone();
        h[2].itlb = 5;
        let named = first_column_row_difference(&columns(&g), 3, &columns(&h), 3);
        assert_eq!(
            named,
            ("row[accumulation].itlb".into(), "6".into(), "5".into())
        );
        let named = first_column_row_difference(&columns(&g), 3, &columns(&g[..2]), 2);
        assert_eq!(named, ("rows.len".into(), "3".into(), "2".into()));
    }

    /// The I-miss report names the oldest live ROB entry (by age from `rob_head`,
    /// across the wrap, not the lowest id) whose bit differs, with golden's bit
    /// then hw's. (Kills `first_imiss_difference`'s `bit` mutants `& 1` -> `^ 1`
    /// and `!= 0` -> `== 0` (other ids, or the two values swapped) and
    /// `gb != hb` -> `==` (an entry whose bits agree reported).)
    #[test]
    fn first_imiss_difference_names_the_oldest_live_entry_and_both_bits() {
        let p = Params::default().with_variant(Variant::Sfmt); // 128 ROB entries
        let mut ls = LockStep::new(p).unwrap().with_waves_dir(None);
        // live: ids 120..=127 then 0..=21 (ages 0..30); bits by id
        let g = UnitView {
            rob_head: 120,
            rob_count: 30,
            ..UnitView::default()
        };
        let words = |ids: &[u32]| {
            let mut w = vec![0u64; 2];
            for &id in ids {
                w[id as usize / 64] |= 1 << (id % 64);
            }
            w.into_boxed_slice()
        };
        // 125 (age 5) differs, golden set; 3 (age 11) differs, hw set; 127 and 10 agree
        ls.imiss_golden = words(&[125, 127, 10]);
        ls.imiss_hw = words(&[127, 3, 10]);
        assert_eq!(
            ls.first_imiss_difference(&g),
            (
                "imiss_bit[rob_id 125]".to_string(),
                "true".to_string(),
                "false".to_string()
            )
        );
        // only 3 differs, hw set
        ls.imiss_golden = words(&[127, 10]);
        assert_eq!(
            ls.first_imiss_difference(&g),
            (
                "imiss_bit[rob_id 3]".to_string(),
                "false".to_string(),
                "true".to_string()
            )
        );
    }

    /// The batched path's record ([`Enc::push`]) of a unit differs whenever
    /// anything the per-cycle compare looks at differs, here an sFMT I-miss mark
    /// moved between two live ROB entries of the same 32-bit half of a word (the
    /// count, the views and the rows unchanged), for every pair of neighbouring
    /// ids; and it stays within `max_words()`, the room `run_batch` gives a
    /// record. (Kills `Enc::push`'s `(*x >> 32) as u32` -> `<<`, which drops the
    /// I-miss bits of ROB ids 32..63 of each word, so that the batched checker
    /// misses a difference there that the per-cycle one finds; and
    /// `rows + ROW_COLUMNS * self.cap + ROW_SPILL` -> `* ROW_SPILL`, which hands
    /// the row read-out a slice past the record's room: a panic once records
    /// are near their largest.)
    #[test]
    fn enc_push_records_every_difference_within_max_words() {
        let p = Params::default().with_variant(Variant::Sfmt);
        let e = p.rob_entries as usize;
        let unit = |marked: usize| Shown {
            p,
            v: UnitView {
                rob_head: 0,
                rob_count: p.rob_entries,
                imiss_bits: 1,
                ..UnitView::default()
            },
            // every row live, so that the record has its largest size
            rows: (0..p.fmt_rows)
                .map(|i| RowView {
                    penalty: i,
                    ..RowView::default()
                })
                .collect(),
            imiss: (0..e).map(|id| id == marked).collect(),
        };
        let mut enc = Enc::new(&p);
        let room = enc.max_words();
        let record = |enc: &mut Enc, u: &Shown| {
            let mut out = vec![0u32; room];
            let len = enc.push(u, &mut out, 0);
            assert!(len <= room);
            out.truncate(len);
            out
        };
        for id in 0..e - 1 {
            let (a, b) = (unit(id), unit(id + 1));
            assert_ne!(
                record(&mut enc, &a),
                record(&mut enc, &b),
                "I-miss mark on ROB id {id} or {}",
                id + 1
            );
        }
    }

    /// A mismatch reads as its variant, cycle, field and both values, then
    /// the seed (or that there was none), the waveform when one was written,
    /// and the last bundles, oldest first, each by its index and as a JSONL
    /// stream writes it (the fields that differ from an idle counted cycle).
    #[test]
    fn a_mismatch_reads_as_its_field_values_seed_waveform_and_last_bundles() {
        let off_retire = CycleEvents {
            count_enable: false,
            dispatched: 2,
            retired: 1,
            ..CycleEvents::default()
        };
        let mut m = Mismatch {
            variant: Variant::Sfmt,
            cycle: 41,
            field: "counters.bpred".into(),
            golden: "7".into(),
            hw: "8".into(),
            seed: Some(9),
            last: vec![(40, CycleEvents::default()), (41, off_retire)],
            waves: Some("waves/mismatch-sfmt-seed9-cycle41.vcd".into()),
        };
        assert_eq!(
            m.to_string(),
            "lock-step mismatch (sfmt) after cycle 41: field `counters.bpred`: golden = 7, hw = 8\n\
             \x20 seed: 9\n\
             \x20 waveform: waves/mismatch-sfmt-seed9-cycle41.vcd\n\
             \x20 last 2 bundles (oldest first):\n\
             \x20           40: {}\n\
             \x20           41: {\"count_enable\":false,\"dispatched\":2,\"retired\":1}\n"
        );
        m.seed = None;
        m.waves = None;
        m.last.truncate(1);
        assert_eq!(
            m.to_string(),
            "lock-step mismatch (sfmt) after cycle 41: field `counters.bpred`: golden = 7, hw = 8\n\
             \x20 seed: none (not a random run)\n\
             \x20 last 1 bundles (oldest first):\n\
             \x20           40: {}\n"
        );
    }

    /// The checker gives back the parameters it was built with, counts every
    /// bundle stepped, one at a time or in batches long enough for two
    /// threads (`MIN_PAR` and more) or not, and keeps the last 16 of them,
    /// with their indices, either way.
    #[test]
    fn the_checker_keeps_its_parameters_and_counts_and_remembers_every_bundle() {
        let mut p = Params::default().with_variant(Variant::Sfmt);
        p.set("fmt_rows", "4").unwrap();
        p.set("rob_entries", "20").unwrap();
        let s: Vec<CycleEvents> = Generator::new(p, GenConfig::realistic(), 4)
            .take(3 + 2 * CHUNK + 5 + 10)
            .collect();
        let last = |n: usize| -> Vec<(u64, CycleEvents)> {
            (n.saturating_sub(HISTORY)..n)
                .map(|i| (i as u64, s[i]))
                .collect()
        };
        let mut ls = LockStep::new(p).unwrap().with_waves_dir(None);
        assert_eq!(*ls.params(), p);
        assert_eq!((ls.cycles(), ls.history()), (0, vec![]));
        for ev in &s[..3] {
            ls.step(ev).unwrap();
        }
        assert_eq!((ls.cycles(), ls.history()), (3, last(3)));
        let n = 3 + 2 * CHUNK + 5;
        ls.run_batch(&s[3..n]).unwrap();
        assert_eq!((ls.cycles(), ls.history()), (n as u64, last(n)));
        ls.run_batch(&s[n..]).unwrap();
        assert_eq!((ls.cycles(), ls.history()), (s.len() as u64, last(s.len())));
    }

    /// A panic in `golden`'s thread of the batched path (here a fault that
    /// panics when golden sees bundle 3000, in the third chunk) surfaces from
    /// `run_batch` instead of leaving `hw`'s thread waiting for a record that
    /// never comes.
    #[test]
    fn a_panic_on_goldens_thread_surfaces_from_run_batch() {
        let p = Params::default();
        let s: Vec<CycleEvents> = Generator::new(p, GenConfig::realistic(), 6)
            .take(4 * CHUNK)
            .collect();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut ls = LockStep::new(p).unwrap().with_waves_dir(None);
            ls.inject_golden_fault(3000, |_| panic!("golden's step panics"));
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = ls.run_batch(&s);
            }));
            let _ = tx.send(r.is_err());
        });
        let panicked = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("run_batch returns (by panicking) within 60 s");
        assert!(panicked, "the panic surfaces from run_batch");
    }

    /// A batch of `MIN_PAR` bundles or more steps golden on a thread of its
    /// own, in parallel with hw on the calling thread; a shorter one goes
    /// cycle by cycle on the calling thread. (A fault that changes nothing
    /// tells which thread golden stepped the bundle on.)
    #[test]
    fn golden_steps_on_its_own_thread_from_min_par_bundles_on() {
        static SEEN: std::sync::Mutex<Vec<std::thread::ThreadId>> =
            std::sync::Mutex::new(Vec::new());
        let p = Params::default();
        let s: Vec<CycleEvents> = Generator::new(p, GenConfig::realistic(), 8)
            .take(MIN_PAR)
            .collect();
        let golden_thread = |n: usize| {
            let mut ls = LockStep::new(p).unwrap().with_waves_dir(None);
            ls.inject_golden_fault(n as u64 - 1, |_| {
                SEEN.lock().unwrap().push(std::thread::current().id())
            });
            ls.run_batch(&s[..n]).unwrap();
            let seen = std::mem::take(&mut *SEEN.lock().unwrap());
            assert_eq!(seen.len(), 1, "{n} bundles: golden saw the last once");
            seen[0]
        };
        let here = std::thread::current().id();
        assert_eq!(golden_thread(1), here);
        assert_eq!(golden_thread(MIN_PAR - 1), here);
        assert_ne!(golden_thread(MIN_PAR), here);
    }

    /// The room `run_batch` gives a record holds the largest one: for the
    /// largest sFMT unit (256 rows, ROB 4096, so 64 I-miss words, 128 record
    /// words) with every row live, a record is the 41 view words, 256 rows of
    /// columns and the 128 I-miss words, and the room is that and the
    /// read-out's spill; in FMT there are no I-miss words.
    #[test]
    fn a_records_room_holds_every_live_row_and_every_imiss_word() {
        let mut p = Params::default().with_variant(Variant::Sfmt);
        p.set("fmt_rows", "256").unwrap();
        p.set("rob_entries", "4096").unwrap();
        for (v, imiss_words) in [(Variant::Sfmt, 128), (Variant::Fmt, 0)] {
            let p = p.with_variant(v);
            let u = Shown {
                p,
                v: UnitView {
                    rob_count: 4096,
                    imiss_bits: 1,
                    ..UnitView::default()
                },
                rows: (0..256)
                    .map(|i| RowView {
                        penalty: i,
                        ..RowView::default()
                    })
                    .collect(),
                imiss: (0..4096).map(|id| id == 4095).collect(),
            };
            let mut enc = Enc::new(&p);
            let largest = VIEW_WORDS + ROW_COLUMNS * 256 + imiss_words;
            assert_eq!(enc.max_words(), largest + ROW_SPILL, "{v}");
            let mut out = vec![0u32; enc.max_words()];
            assert_eq!(enc.push(&u, &mut out, 0), largest, "{v}");
        }
    }
}
