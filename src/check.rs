//! The lock-step checker: `hw` and `golden` driven by the same bundles, every
//! architecturally visible field compared every cycle.
//!
//! On the first difference [`LockStep::step`] returns a [`Mismatch`] naming the
//! cycle, the field, both values, the seed (if the caller gave one) and the last
//! 16 bundles. After a mismatch the checker refuses to go on (every later call
//! returns the same mismatch), so a caller cannot accidentally keep counting.

use std::fmt;

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

/// `hw` and `golden` of one variant in lock step.
pub struct LockStep {
    params: Params,
    hw: hw::Unit,
    golden: golden::Unit,
    cycle: u64,
    seed: Option<u64>,
    ring: [CycleEvents; HISTORY],
    failed: Option<Box<Mismatch>>,
    /// History for the failure waveform (src/failwaves.rs).
    fw: crate::failwaves::FailWaves,
    /// Test-only fault: golden sees cycle `fault_at` with `count_enable` flipped.
    fault_at: u64,
    /// Compare buffers: live rows packed (`fmt_rows` each), then the live I-miss
    /// bits by ROB id (`ceil(rob_entries / 64)` words each).
    rows_hw: Box<[PackedRow]>,
    rows_golden: Box<[PackedRow]>,
    imiss_hw: Box<[u64]>,
    imiss_golden: Box<[u64]>,
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
            hw,
            golden,
            cycle: 0,
            seed: None,
            ring: [CycleEvents::default(); HISTORY],
            failed: None,
            fw: crate::failwaves::FailWaves::new(Some(crate::failwaves::default_dir())),
            fault_at: u64::MAX,
            rows_hw: vec![PackedRow::default(); cap].into_boxed_slice(),
            rows_golden: vec![PackedRow::default(); cap].into_boxed_slice(),
            imiss_hw: vec![0; words].into_boxed_slice(),
            imiss_golden: vec![0; words].into_boxed_slice(),
        })
    }

    /// Where a mismatch writes its waveform (`None`: write none). Default:
    /// [`crate::failwaves::default_dir`].
    pub fn with_waves_dir(mut self, dir: Option<std::path::PathBuf>) -> Self {
        self.fw = crate::failwaves::FailWaves::new(dir);
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
