//! The lock-step checker: `hw` and `golden` driven by the same bundles, every
//! architecturally visible field compared every cycle.
//!
//! On the first difference [`LockStep::step`] returns a [`Mismatch`] naming the
//! cycle, the field, both values, the seed (if the caller gave one) and the last
//! 16 bundles. After a mismatch the checker refuses to go on (every later call
//! returns the same mismatch), so a caller cannot accidentally keep counting.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use events::{
    Counter, CounterUnit, CycleEvents, PackedRow, ParamError, Params, RowView, UnitView, Variant,
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

/// One bundle as a compact single line (JSON).
pub fn bundle_line(ev: &CycleEvents) -> String {
    serde_json::to_string(ev).unwrap_or_else(|_| format!("{ev:?}"))
}

/// Bundles per parallel chunk of [`LockStep::run_batch`].
pub const CHUNK: usize = 2048;
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
    /// Test-only fault: golden sees cycle `fault_at` with `count_enable` flipped.
    fault_at: u64,
    /// Compare buffers: live rows packed (`fmt_rows` each), then the live I-miss
    /// bits by ROB id (`ceil(rob_entries / 64)` words each).
    rows_hw: Box<[PackedRow]>,
    rows_golden: Box<[PackedRow]>,
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
            rows_hw: vec![PackedRow::default(); cap].into_boxed_slice(),
            rows_golden: vec![PackedRow::default(); cap].into_boxed_slice(),
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
        self.fault_at = cycle;
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
            e.count_enable = !e.count_enable;
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
    /// and `golden` stepped on two threads.
    ///
    /// The bundles go in chunks of [`CHUNK`]. After every bundle each side
    /// writes a record of everything the per-cycle check compares (the view
    /// packed to plain words, the live rows packed, in sFMT the live I-miss words
    /// when any bit is set). `golden` runs on a scoped thread, at most
    /// [`SLOTS`]` - 1` chunks ahead, filling one record slot per chunk; the
    /// calling thread steps `hw` through the same chunk and then compares its
    /// records with golden's as one slice. A record's length is a function of its
    /// own first words (the row count and `imiss_bits` are in its view part), so
    /// equal buffers mean equal records cycle by cycle, and equal records mean
    /// equal views, rows and I-miss bits. When the buffers differ, both models go
    /// back to their state at the start of the chunk (each side keeps a copy:
    /// `hw` with the failure-waveform history, `golden` in its slot) and the
    /// chunk is re-run through [`LockStep::step`], which finds and reports the
    /// first difference exactly as the per-cycle checker does.
    ///
    /// Memory: the record buffers hold `SLOTS + 1` chunks, allocated on the first
    /// call and reused. Batches shorter than [`MIN_PAR`] go cycle by cycle.
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
        let need = CHUNK.min(bundles.len()) * Enc::max_words(&self.params);
        let params = self.params;
        let bufs = self.batch.get_or_insert_with(|| {
            Box::new(BatchBufs {
                rec_hw: Vec::new(),
                enc_hw: Pad(Enc::new(&params)),
                slots: std::array::from_fn(|_| {
                    Mutex::new(Slot {
                        rec: Vec::new(),
                        len: 0,
                        golden: None,
                    })
                }),
            })
        });
        if bufs.rec_hw.len() < need {
            bufs.rec_hw.resize(need, 0);
        }
        for s in &mut bufs.slots {
            let s = s.get_mut().unwrap_or_else(|e| e.into_inner());
            if s.rec.len() < need {
                s.rec.resize(need, 0);
            }
        }
        bufs.enc_hw.reset();
        let start = self.cycle;
        let fault_at = self.fault_at;
        let g_done = Pad(AtomicUsize::new(0));
        let h_done = Pad(AtomicUsize::new(0));
        let stop = Pad(AtomicBool::new(false));
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
            rec_hw,
            enc_hw,
            slots,
        } = &mut **bufs;
        let slots = &*slots;
        let failed_chunk = std::thread::scope(|sc| {
            sc.spawn(|| {
                // golden works on a copy made here (its heap blocks then come
                // from this thread's arena, away from hw's: no false sharing) and
                // is stored back at the end.
                let mut g = Pad(golden.clone());
                let mut enc = Pad(Enc::new(&params));
                let sync = Sync3 {
                    g_done: &g_done,
                    h_done: &h_done,
                    stop: &stop,
                };
                golden_side(&mut g, &mut enc, bundles, slots, start, fault_at, sync);
                **golden = g.0;
            });
            // hw on this thread, then the compare of each chunk.
            let mut c = start;
            let mut saved: Option<(hw::Unit, crate::failwaves::FailWaves)> = None;
            for (k, chunk) in bundles.chunks(CHUNK).enumerate() {
                match &mut saved {
                    Some((h, f)) => {
                        h.clone_from(hw);
                        f.clone_from(fw);
                    }
                    None => saved = Some((hw.clone(), fw.clone())),
                }
                let n = record(&mut **hw, enc_hw, chunk, None, rec_hw, |h, ev| {
                    fw.before_step(c, ev, h);
                    c += 1;
                });
                wait_for(&stop, || g_done.load(Ordering::Acquire) > k);
                let same = {
                    let slot = slots[k % SLOTS].lock().unwrap_or_else(|e| e.into_inner());
                    rec_hw[..n] == slot.rec[..slot.len]
                };
                if !same {
                    stop.store(true, Ordering::Release);
                    return Some((k, saved.take().expect("saved above")));
                }
                let c1 = c - chunk.len().min(HISTORY) as u64;
                for (i, ev) in (c1..c).zip(&chunk[chunk.len() - (c - c1) as usize..]) {
                    ring[(i % HISTORY as u64) as usize] = *ev;
                }
                h_done.store(k + 1, Ordering::Release);
            }
            None
        });
        match failed_chunk {
            None => {
                self.cycle += bundles.len() as u64;
                Ok(())
            }
            Some((k, (h, f))) => {
                let g = self.batch.as_mut().expect("allocated above").slots[k % SLOTS]
                    .get_mut()
                    .unwrap_or_else(|e| e.into_inner())
                    .golden
                    .take()
                    .expect("golden saved its state before the chunk");
                let c0 = start + (k * CHUNK) as u64;
                let chunk = &bundles[k * CHUNK..bundles.len().min((k + 1) * CHUNK)];
                self.rerun(c0, h, g, f, chunk)
            }
        }
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
        // Both fill packed rows; flattened to plain words: one `memcmp`.
        let nh = self.hw.rows_packed(&mut self.rows_hw);
        let ng = self.golden.rows_packed(&mut self.rows_golden);
        if self.rows_hw[..nh].as_flattened() != self.rows_golden[..ng].as_flattened() {
            return Err(first_packed_row_difference(
                &self.rows_golden[..ng],
                &self.rows_hw[..nh],
            ));
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

/// Record slots of golden's side in [`LockStep::run_batch`].
pub const SLOTS: usize = 2;

/// The buffers of [`LockStep::run_batch`], kept across calls.
struct BatchBufs {
    rec_hw: Vec<u32>,
    enc_hw: Pad<Enc>,
    slots: [Mutex<Slot>; SLOTS],
}

/// golden's records of one chunk and its state before the chunk.
struct Slot {
    rec: Vec<u32>,
    len: usize,
    golden: Option<golden::Unit>,
}

/// The progress counters shared by the two sides of [`LockStep::run_batch`].
#[derive(Clone, Copy)]
struct Sync3<'a> {
    /// Chunks golden has recorded.
    g_done: &'a AtomicUsize,
    /// Chunks the hw side has compared and found equal.
    h_done: &'a AtomicUsize,
    /// Raised by the hw side on a difference.
    stop: &'a AtomicBool,
}

/// golden's side of [`LockStep::run_batch`]: chunk `k` into slot `k % SLOTS`
/// (with golden's state before it) once the hw side is done with chunk
/// `k - SLOTS`; stops early when the hw side raises `stop`.
fn golden_side(
    golden: &mut golden::Unit,
    enc: &mut Enc,
    bundles: &[CycleEvents],
    slots: &[Mutex<Slot>; SLOTS],
    start: u64,
    fault_at: u64,
    sync: Sync3<'_>,
) {
    for (k, chunk) in bundles.chunks(CHUNK).enumerate() {
        if !wait_for(sync.stop, || {
            sync.h_done.load(Ordering::Acquire) + SLOTS > k
        }) {
            return;
        }
        let mut slot = slots[k % SLOTS].lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut *slot;
        match &mut slot.golden {
            Some(g) => g.clone_from(golden),
            None => slot.golden = Some(golden.clone()),
        }
        let c0 = start + (k * CHUNK) as u64;
        let fault = fault_at
            .checked_sub(c0)
            .filter(|&i| i < chunk.len() as u64)
            .map(|i| i as usize);
        slot.len = record(golden, enc, chunk, fault, &mut slot.rec, |_, _| {});
        sync.g_done.store(k + 1, Ordering::Release);
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

/// [`PackedRow`]-sized units of a record's view part ([`pack_view`]).
const VIEW_UNITS: usize = 9;

/// Every field of `v` as plain words (an injective packing: equal packs iff
/// equal views), and `nrows` (the live rows that follow in the record).
#[inline(always)]
fn pack_view(v: &UnitView, nrows: u32) -> [PackedRow; VIEW_UNITS] {
    let mut w = [0u32; VIEW_UNITS * 5];
    for (k, x) in v.counters.value.iter().enumerate() {
        w[2 * k] = *x as u32;
        w[2 * k + 1] = (*x >> 32) as u32;
    }
    let (err, eb) = match v.error {
        Some(e) => (
            1 << 20 | (e.field.bits() as u32) << 21 | (e.rule as u32) << 24,
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
    let mut out = [PackedRow::default(); VIEW_UNITS];
    for (k, o) in out.iter_mut().enumerate() {
        o.copy_from_slice(&w[5 * k..5 * k + 5]);
    }
    out
}

/// One side's record encoder for [`LockStep::run_batch`]: after each step the
/// record of everything the per-cycle check compares (the view packed by
/// [`pack_view`], the live rows packed, in sFMT the live I-miss words when
/// `imiss_bits > 0`, else zeros), written as a delta against the side's
/// previous record, so that little crosses between the two cores:
///
/// - word 0: `n | r << 9 | mask_v << 18`: `n` live rows, the rows compared with
///   the previous record's rows `r` places older (the oldest rows retired), and
///   the view units that changed;
/// - sFMT only: two words, the mask of the I-miss words that changed;
/// - `ceil(n / 32)` words: the mask of rows `i` that differ from previous row
///   `i + r` (or have none);
/// - the changed view units, rows and I-miss words (as two `u32`s), in that order.
///
/// Decoding is a function of the previous record and the words, so two sides
/// that start from the same previous record and write the same words have the
/// same records cycle by cycle (the check stays exact); `r` only affects the size.
struct Enc {
    sfmt: bool,
    prev_v: [PackedRow; VIEW_UNITS],
    prev: Box<[PackedRow]>,
    cur: Box<[PackedRow]>,
    prev_n: usize,
    prev_i: Box<[u64]>,
    cur_i: Box<[u64]>,
}

impl Enc {
    fn new(p: &Params) -> Self {
        let cap = p.fmt_rows as usize;
        let words = (p.rob_entries as usize).div_ceil(64);
        Self {
            sfmt: p.variant == Variant::Sfmt,
            prev_v: [PackedRow::default(); VIEW_UNITS],
            prev: vec![PackedRow::default(); cap].into_boxed_slice(),
            cur: vec![PackedRow::default(); cap].into_boxed_slice(),
            prev_n: 0,
            prev_i: vec![0; words].into_boxed_slice(),
            cur_i: vec![0; words].into_boxed_slice(),
        }
    }

    /// The largest record in words.
    fn max_words(p: &Params) -> usize {
        let cap = p.fmt_rows as usize;
        let words = (p.rob_entries as usize).div_ceil(64);
        1 + 2 + cap.div_ceil(32) + 5 * (VIEW_UNITS + cap) + 2 * words
    }

    /// Forget the previous record (both sides do it at the same cycle).
    fn reset(&mut self) {
        self.prev_v = [PackedRow::default(); VIEW_UNITS];
        self.prev_n = 0;
        self.prev_i.fill(0);
    }

    /// Write the record of `u`'s current state at `out[pos..]`; returns the new end.
    #[inline(always)]
    fn push<U: CounterUnit>(&mut self, u: &U, out: &mut [u32], mut pos: usize) -> usize {
        let v = u.view();
        let n = u.rows_packed(&mut self.cur);
        let vp = pack_view(&v, n as u32);
        // the shift: the oldest row's id and flags found among the oldest previous rows
        let mut r = 0;
        if n > 0 {
            let m = self.cur[0][1];
            let lim = self.prev_n.min(9);
            while r < lim && self.prev[r][1] != m {
                r += 1;
            }
            if r == lim {
                r = 0;
            }
        }
        let head = pos;
        pos += 1;
        let imask_at = pos;
        if self.sfmt {
            pos += 2;
        }
        let rmask_at = pos;
        let rwords = n.div_ceil(32);
        pos += rwords;
        let mut mask_v = 0u32;
        {
            let dst = &mut out[pos..pos + 5 * VIEW_UNITS];
            let mut w = 0;
            for (k, (a, b)) in vp.iter().zip(&self.prev_v).enumerate() {
                let ch = a != b;
                put5(dst, w, a);
                w += 5 * ch as usize;
                mask_v |= (ch as u32) << k;
            }
            pos += w;
        }
        out[head] = n as u32 | (r as u32) << 9 | mask_v << 18;
        self.prev_v = vp;
        // rows `i < k` have a previous row `i + r`; the others are all new
        let k = n.min(self.prev_n.saturating_sub(r));
        let mut masks = [0u32; 8];
        {
            let dst = &mut out[pos..pos + 5 * n];
            let mut w = 0;
            let (cur, prev) = (&self.cur[..k], &self.prev[r..r + k]);
            if cur != prev {
                for (b, (ca, pa)) in cur.chunks(32).zip(prev.chunks(32)).enumerate() {
                    let mut m = 0u32;
                    for (j, (a, p)) in ca.iter().zip(pa).enumerate() {
                        let ch = a != p;
                        put5(dst, w, a);
                        w += 5 * ch as usize;
                        m |= (ch as u32) << j;
                    }
                    masks[b] = m;
                }
            }
            // rows `k..n` are all new: one block
            dst[w..w + 5 * (n - k)].copy_from_slice(self.cur[k..n].as_flattened());
            w += 5 * (n - k);
            for (b, m) in masks.iter_mut().enumerate().take(rwords).skip(k / 32) {
                let lo = (32 * b).max(k) - 32 * b;
                let hi = (32 * b + 32).min(n) - 32 * b;
                *m |= ((1u64 << hi) - (1u64 << lo)) as u32;
            }
            pos += w;
        }
        for (o, m) in out[rmask_at..rmask_at + rwords].iter_mut().zip(masks) {
            *o = m;
        }
        std::mem::swap(&mut self.cur, &mut self.prev);
        self.prev_n = n;
        if self.sfmt {
            if v.imiss_bits > 0 {
                u.imiss_live_words(&mut self.cur_i);
            } else {
                self.cur_i.fill(0);
            }
            let mut im = 0u64;
            for (k, (a, b)) in self.cur_i.iter().zip(self.prev_i.iter()).enumerate() {
                if a != b {
                    im |= 1 << k;
                    out[pos] = *a as u32;
                    out[pos + 1] = (*a >> 32) as u32;
                    pos += 2;
                }
            }
            out[imask_at] = im as u32;
            out[imask_at + 1] = (im >> 32) as u32;
            std::mem::swap(&mut self.cur_i, &mut self.prev_i);
        }
        pos
    }
}

/// `dst[w..w + 5] = a`, as one fixed-size store.
#[inline(always)]
fn put5(dst: &mut [u32], w: usize, a: &PackedRow) {
    let d: &mut PackedRow = (&mut dst[w..w + 5])
        .try_into()
        .expect("five words are five words");
    *d = *a;
}

/// Step `u` through `evs` (bundle `fault` with `count_enable` flipped), calling
/// `pre(u, ev)` before each step, and write after each step its record
/// ([`Enc`]) into `out` from 0; returns the words written. `out` holds at least
/// `evs.len()` records of the largest size.
#[inline(always)]
fn record<U: CounterUnit>(
    u: &mut U,
    enc: &mut Enc,
    evs: &[CycleEvents],
    fault: Option<usize>,
    out: &mut [u32],
    mut pre: impl FnMut(&U, &CycleEvents),
) -> usize {
    let mut pos = 0;
    for (i, ev) in evs.iter().enumerate() {
        pre(u, ev);
        if Some(i) == fault {
            let mut e = *ev;
            e.count_enable = !e.count_enable;
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
fn first_packed_row_difference(g: &[PackedRow], h: &[PackedRow]) -> (String, String, String) {
    let g: Vec<RowView> = g.iter().map(RowView::unpack).collect();
    let h: Vec<RowView> = h.iter().map(RowView::unpack).collect();
    first_row_difference(&g, &h)
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
