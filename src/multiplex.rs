//! `cpistack multiplex`: the unit's global counters time-multiplexed over
//! fewer physical counters, as Azimi et al. multiplex a PMU's counters
//! (seed paper 001, section 3), and what that costs each method's stack.
//!
//! FMT needs a global counter per component: eight besides the cycle and
//! instruction counters. A PMU has a handful. Azimi et al. count more events
//! than there are counters by cutting time into slices of `g` cycles (or
//! `g` committed instructions) and counting one *group* of events per slice,
//! the groups taking turns in *rounds* (a random order in each round, "to
//! avoid accidental correlations"); a group's count is scaled by the cycles
//! of the run over the cycles in which it counted.
//!
//! - **Groups.** With `p` physical counters for the eight components
//!   ([`events::Counter::COMPONENTS`] order), group `q` is components
//!   `q·p .. q·p + p`: `8 / p` groups, rounded up. Cycles and instructions
//!   are counted all the time (fixed counters, as on most PMUs). Base is the
//!   cycles the scaled components leave.
//! - **Exact emulation.** One real run reads the `hw` units' global counters
//!   (and the POWER5-style accountant's stack) at the end of every slice of
//!   the smallest `--slices` length, on both bases. A physical counter
//!   programmed for a component during a slice counts exactly that
//!   component's increments over the slice, so a schedule's counts are sums
//!   of slice differences: one run serves every slice length (each a
//!   multiple of the smallest), counter count and schedule. Differences are
//!   unwrapped modulo `2^unit.global_bits` and held to 64-bit twins, as
//!   `phases` reads them.
//! - **Measures**, per slice length, counter count and method, over the
//!   schedules: the *sampling error* (the multiplexed stack against the
//!   same method's full stack, the issue-6 error measure), the error against
//!   the standard-order simulation reference (8 idealised runs), and the
//!   largest relative error of a component holding at least 1 % of the
//!   cycles (Azimi et al. report counts "within 15 %").

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use events::{Consumer, Counter, CounterUnit, Counters, CycleEvents, Variant};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

use crate::stacks::{
    cfg_with, counters_stack, error_pp, order_masks, reference_stack, same_stream, Mask, Power5,
    Settings, Source, Stack, NCOMP, STANDARD_ORDER,
};

/// The multiplexed methods.
pub const METHODS: [&str; 3] = ["fmt", "sfmt", "power5"];

/// The components a physical counter can be given (all but base).
const COUNTED: usize = NCOMP - 1;

/// Whole rounds below which the text output says a set-up rests on few samples.
pub const FEW_ROUNDS: usize = 10;

/// Fewest cycles or instructions a slice may have.
pub const MIN_SLICE: u64 = 1_000;

/// Most slices of the smallest length a run may be cut into, per basis
/// (each is kept until the study is measured: 224 bytes a slice).
pub const MAX_SLICES: usize = 100_000;

/// Most random schedules a study may draw.
pub const MAX_SCHEDULES: usize = 10_000;

/// A share of the cycles (percent) from which a component's relative error counts.
pub const REL_FLOOR_PCT: f64 = 1.0;

/// Output files of `cpistack multiplex`.
pub const OUTPUT_FILES: [&str; 5] = [
    "multiplex.csv",
    "multiplex-summary.csv",
    "multiplex.json",
    "multiplex.svg",
    "index.html",
];

/// Header of `multiplex-summary.csv`.
pub const SUMMARY_CSV_HEADER: &str = "set,basis,slice,counters,order,method,studies,full_error_pp,sampling_mean_pp,sampling_max_pp,sampling_max_study,error_mean_pp,error_max_pp,rel_mean_pct,rel_max_pct";

/// Header of `multiplex.csv`.
pub const CSV_HEADER: &str = "source,kind,basis,slice,counters,groups,slices,rounds,order,schedules,method,full_error_pp,sampling_mean_pp,sampling_max_pp,error_mean_pp,error_max_pp,rel_mean_pct,rel_max_pct";

/// What a slice is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// Counted cycles (Azimi et al.'s time-based multiplexing).
    Cycles,
    /// Committed instructions: a slice ends with the cycle in which its last
    /// instruction commits (their instruction-based multiplexing).
    Instructions,
}

impl Basis {
    pub const ALL: [Basis; 2] = [Basis::Cycles, Basis::Instructions];

    pub fn name(self) -> &'static str {
        match self {
            Basis::Cycles => "cycles",
            Basis::Instructions => "instructions",
        }
    }
}

/// What one slice moved: its cycles, and each method's
/// components over it ([`METHODS`] order; index 0, base, unused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    pub cycles: u64,
    pub moved: [Stack; 3],
}

impl Slice {
    fn add(&mut self, o: &Slice) {
        self.cycles += o.cycles;
        for (a, b) in self.moved.iter_mut().zip(&o.moved) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }
}

/// What the real run's methods read, at a slice end.
#[derive(Clone, Copy, Debug)]
struct Read {
    cycles: u64,
    units: [Counters; 2],
    power5: Stack,
}

/// The slices of one basis as the run goes.
struct Cutter {
    basis: Basis,
    every: u64,
    next: u64,
    last: Read,
    slices: Vec<Slice>,
}

/// The real run: both units (with 64-bit global counters: every slice's
/// increments exactly; the configured width is checked per set-up, in
/// [`measure`]) and the POWER5-style accountant, read at every slice end of
/// both bases.
struct Sampler {
    units: [hw::Unit; 2],
    power5: Power5,
    cycles: u64,
    instructions: u64,
    cutters: [Cutter; 2],
    /// The first slice that could not be kept (the study stops there).
    error: Option<String>,
}

impl Sampler {
    fn read(&self) -> Read {
        Read {
            cycles: self.cycles,
            units: [self.units[0].view().counters, self.units[1].view().counters],
            power5: self.power5.stack(),
        }
    }

    /// Ends the current slice of cutter `i` at `now`, if it has a cycle.
    fn cut(&mut self, i: usize, now: Read) {
        let c = &mut self.cutters[i];
        let cycles = now.cycles - c.last.cycles;
        if cycles == 0 || self.error.is_some() {
            return;
        }
        if c.slices.len() == MAX_SLICES {
            self.error = Some(format!(
                "the run has more than {MAX_SLICES} slices of {} {}: give a longer smallest \
                 --slices or fewer --instructions",
                c.every,
                c.basis.name()
            ));
            return;
        }
        let k = c.slices.len();
        let mut s = Slice {
            cycles,
            moved: [[0; NCOMP]; 3],
        };
        for (j, m) in METHODS.iter().enumerate().take(2) {
            let (a, b) = (&c.last.units[j], &now.units[j]);
            let mut d = Counters::default();
            for w in Counter::ALL {
                d.value[w.idx()] = b.get(w) - a.get(w);
            }
            if d.get(Counter::Cycles) != cycles {
                self.error = Some(format!(
                    "slice {k} of {} {}: {}'s cycles counter moved by {}, the core counted \
                     {cycles} (a bug of the study)",
                    c.every,
                    c.basis.name(),
                    m,
                    d.get(Counter::Cycles)
                ));
                return;
            }
            s.moved[j] = counters_stack(&d);
        }
        for (x, (a, b)) in s.moved[2]
            .iter_mut()
            .zip(now.power5.iter().zip(&c.last.power5))
        {
            *x = a - b;
        }
        c.slices.push(s);
        c.last = now;
    }
}

impl Consumer for Sampler {
    #[inline]
    fn cycle(&mut self, ev: &CycleEvents) {
        for u in &mut self.units {
            u.step(ev);
        }
        self.power5.cycle(ev);
        if !ev.count_enable {
            return;
        }
        self.cycles += 1;
        self.instructions += ev.retired as u64;
        for i in 0..2 {
            let c = &mut self.cutters[i];
            let now = match c.basis {
                Basis::Cycles => self.cycles,
                Basis::Instructions => self.instructions,
            };
            if now >= c.next {
                // a slice has at least MIN_SLICE > retire_width instructions:
                // no cycle ends two, and slice k ends in the cycle in which
                // the count reaches (k+1)·every (so a slice of m·every is m
                // slices of every, exactly)
                c.next += c.every;
                let r = self.read();
                self.cut(i, r);
            }
        }
    }
}

/// The real run's slices of each basis ([`Basis::ALL`] order) and its
/// whole-run stacks ([`METHODS`] order).
struct RealOut {
    slices: [Vec<Slice>; 2],
    full: [Stack; 3],
    stats: sim::Stats,
    digest: u64,
    saturated: Vec<String>,
}

fn real_run(src: &Source, s: &Settings, every: u64) -> Result<RealOut> {
    let cfg = &s.cfg;
    let mut core = src.core(cfg)?;
    core.set_warmup(s.warmup);
    let p = events::Params {
        global_bits: 64,
        ..cfg.unit_params()
    };
    let units = [
        hw::Unit::new(p.with_variant(Variant::Fmt))?,
        hw::Unit::new(p.with_variant(Variant::Sfmt))?,
    ];
    let start = Read {
        cycles: 0,
        units: [units[0].view().counters, units[1].view().counters],
        power5: [0; NCOMP],
    };
    let cutter = |basis| Cutter {
        basis,
        every,
        next: every,
        last: start,
        slices: Vec::new(),
    };
    let mut smp = Sampler {
        units,
        power5: Power5::new(),
        cycles: 0,
        instructions: 0,
        cutters: Basis::ALL.map(cutter),
        error: None,
    };
    // `Core::run`, stopping at the first slice that cannot be kept
    core.set_limit(s.instructions);
    while core.counted_retired() < s.instructions && !core.finished() {
        let ev = *core.step()?;
        smp.cycle(&ev);
        if let Some(e) = smp.error.take() {
            bail!("{e}");
        }
    }
    core.finish(s.instructions)?;
    let st = core.stats();
    if smp.cycles != st.cycles || smp.instructions != st.instructions {
        bail!(
            "the bundles counted {} cycles and {} instructions, the core {} and {}",
            smp.cycles,
            smp.instructions,
            st.cycles,
            st.instructions
        );
    }
    // the run's end closes the last slice of each basis
    let end = smp.read();
    for i in 0..2 {
        smp.cut(i, end);
    }
    if let Some(e) = smp.error {
        bail!("{e}");
    }
    let mut saturated = Vec::new();
    for (k, u) in METHODS.iter().zip(&smp.units) {
        let v = u.view();
        if let Some(e) = v.error {
            bail!("the core emitted an illegal bundle (a simulator bug): {e}");
        }
        if v.saturated {
            saturated.push(k.to_string());
        }
    }
    let full = [
        counters_stack(&end.units[0]),
        counters_stack(&end.units[1]),
        smp.power5.stack(),
    ];
    let slices = smp.cutters.map(|c| c.slices);
    for (b, sl) in Basis::ALL.iter().zip(&slices) {
        let mut sum = Slice::default();
        for x in sl {
            sum.add(x);
        }
        for (j, m) in METHODS.iter().enumerate() {
            if sum.cycles != st.cycles || sum.moved[j][1..] != full[j][1..] {
                bail!(
                    "the {} slices of {every} {} do not add up to the whole run's {m} \
                     counters (a bug of the study)",
                    sl.len(),
                    b.name()
                );
            }
        }
    }
    Ok(RealOut {
        slices,
        full,
        stats: st.clone(),
        digest: core.stream_digest(),
        saturated,
    })
}

/// Why slices of the set-up's length cannot be read with `global_bits`-wide
/// counters: a slice in which the cycles, or a component of FMT or sFMT,
/// move by `2^global_bits` or more (a counter read at every slice end
/// cannot be unwrapped then); `None` when every slice can. (The retired
/// counter is not read by the study, so not checked; it moves less than
/// the cycles times the retire width.)
fn too_narrow(slices: &[Slice], global_bits: u32) -> Option<String> {
    if global_bits >= 64 {
        return None;
    }
    // (u64: 1 << 63 is no i64; a component's increments are never negative)
    let limit = 1u64 << global_bits;
    for (k, s) in slices.iter().enumerate() {
        if s.cycles >= limit {
            return Some(format!(
                "slice {k} takes {} cycles, more than a counter of {global_bits} bits counts \
                 between two reads (unit.global_bits = {global_bits})",
                s.cycles
            ));
        }
        for (j, m) in METHODS.iter().enumerate().take(2) {
            if let Some(c) = (1..NCOMP).find(|&c| s.moved[j][c].unsigned_abs() >= limit) {
                return Some(format!(
                    "{m}'s `{}` moves by {} in slice {k}, more than a counter of \
                     {global_bits} bits counts between two reads (unit.global_bits = \
                     {global_bits})",
                    crate::stacks::COMPONENTS[c],
                    s.moved[j][c]
                ));
            }
        }
    }
    None
}

/// The groups of `counters` physical counters: component indices into a
/// [`Stack`] (1..=8), in order.
pub fn groups_of(counters: usize) -> Vec<Vec<usize>> {
    (1..NCOMP)
        .collect::<Vec<_>>()
        .chunks(counters)
        .map(<[usize]>::to_vec)
        .collect()
}

/// The group that counts in each of `slices` slices: rounds of `groups`
/// slices, each round every group once, in the order `0..groups` (`rng`
/// none) or in an order drawn from `rng` for each round.
pub fn schedule(
    slices: usize,
    groups: usize,
    mut rng: Option<&mut rand_xoshiro::Xoshiro256PlusPlus>,
) -> Vec<usize> {
    let mut out = Vec::with_capacity(slices);
    let mut round: Vec<usize> = (0..groups).collect();
    while out.len() < slices {
        if let Some(r) = rng.as_deref_mut() {
            round.shuffle(r);
        }
        let take = (slices - out.len()).min(groups);
        out.extend_from_slice(&round[..take]);
    }
    out
}

/// Method `m`'s multiplexed stack: in each slice only the active group's
/// components count; a group's counts are scaled by the run's cycles over
/// the cycles of the slices in which it counted; base is the rest. `None`
/// when a group never counted.
pub fn estimate(
    slices: &[Slice],
    m: usize,
    groups: &[Vec<usize>],
    active: &[usize],
) -> Option<Stack> {
    let mut counted = [0u64; COUNTED + 1];
    let mut raw = [0i64; NCOMP];
    let mut total = 0u64;
    for (s, &q) in slices.iter().zip(active) {
        total += s.cycles;
        counted[q] += s.cycles;
        for &c in &groups[q] {
            raw[c] += s.moved[m][c];
        }
    }
    let mut out = [0i64; NCOMP];
    for (q, g) in groups.iter().enumerate() {
        if counted[q] == 0 {
            return None;
        }
        let scale = total as f64 / counted[q] as f64;
        for &c in g {
            out[c] = (raw[c] as f64 * scale).round() as i64;
        }
    }
    out[0] = total as i64 - out[1..].iter().sum::<i64>();
    Some(out)
}

/// The largest relative error (percent) of a component of `est` that holds
/// at least [`REL_FLOOR_PCT`] of the `cycles` in `full`; 0 when none does.
pub fn rel_error_pct(est: &Stack, full: &Stack, cycles: u64) -> f64 {
    let floor = REL_FLOOR_PCT / 100.0 * cycles as f64;
    (1..NCOMP)
        .filter(|&c| full[c] as f64 >= floor && full[c] > 0)
        .map(|c| 100.0 * (est[c] - full[c]).abs() as f64 / full[c] as f64)
        .fold(0.0, f64::max)
}

/// One method under one multiplexing set-up, over its schedules.
#[derive(Clone, Debug, Serialize)]
pub struct MethodResult {
    /// The full (not multiplexed) stack's error against the reference.
    pub full_error_pp: f64,
    /// The multiplexed stack against the full one (mean, max over schedules).
    pub sampling_mean_pp: f64,
    pub sampling_max_pp: f64,
    /// The multiplexed stack against the reference.
    pub error_mean_pp: f64,
    pub error_max_pp: f64,
    /// The largest relative error of a component of at least 1 % of the cycles.
    pub rel_mean_pct: f64,
    pub rel_max_pct: f64,
    /// The multiplexed stack of the first schedule, in cycles.
    pub first_stack: Stack,
}

/// One multiplexing set-up.
#[derive(Clone, Debug, Serialize)]
pub struct Setup {
    pub basis: Basis,
    /// Cycles or instructions a slice.
    pub slice: u64,
    /// Physical counters for the eight components.
    pub counters: usize,
    pub groups: usize,
    /// Slices in the run (the last may be shorter) and whole rounds among them.
    pub slices: usize,
    pub rounds: usize,
    /// `fixed` (groups in order in every round) or `random` (an order drawn
    /// for each round, one draw per schedule).
    pub order: String,
    pub schedules: usize,
    pub methods: BTreeMap<String, MethodResult>,
}

/// A multiplexing study of one source.
#[derive(Clone, Debug, Serialize)]
pub struct Study {
    pub name: String,
    pub kind: String,
    pub seed: Option<u64>,
    pub instructions: u64,
    pub cycles: u64,
    /// The methods (`fmt`, `sfmt`) whose unit had a local counter saturate.
    pub saturated: Vec<String>,
    /// The standard-order reference and each method's full stack.
    pub stacks: BTreeMap<String, Stack>,
    pub setups: Vec<Setup>,
    /// Set-ups left out: fewer slices than groups, so a group never counts.
    pub skipped: Vec<String>,
}

/// One set-up and method over the studies of a set.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryRow {
    /// `workloads` or `traces`.
    pub set: String,
    pub basis: Basis,
    pub slice: u64,
    pub counters: usize,
    pub order: String,
    pub method: String,
    /// Studies that measured the set-up (a study too short for it has no row).
    pub studies: usize,
    /// Means over the studies of their full error, mean sampling error and
    /// mean error; the largest sampling error and error of any schedule on
    /// any study, and the study it was on.
    pub full_error_pp: f64,
    pub sampling_mean_pp: f64,
    pub sampling_max_pp: f64,
    pub sampling_max_study: String,
    pub error_mean_pp: f64,
    pub error_max_pp: f64,
    /// The largest relative error of a component of at least 1 % of the
    /// cycles: mean over the studies and schedules, largest on any.
    pub rel_mean_pct: f64,
    pub rel_max_pct: f64,
}

/// A multiplexing study of several sources.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub instructions: u64,
    pub warmup: u64,
    pub config: sim::Config,
    pub schedules: usize,
    pub schedule_seed: u64,
    pub studies: Vec<Study>,
    pub summary: Vec<SummaryRow>,
    pub runs: usize,
    #[serde(skip)]
    pub seconds: f64,
}

/// What a study measures.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Physical counters (1..=8), ascending.
    pub counters: Vec<usize>,
    /// Slice lengths, ascending, each a multiple of the first (at least [`MIN_SLICE`]).
    pub slices: Vec<u64>,
    pub schedules: usize,
    pub schedule_seed: u64,
}

impl Plan {
    /// Sorts the lists and refuses what the study cannot measure.
    pub fn new(
        mut counters: Vec<usize>,
        mut slices: Vec<u64>,
        schedules: usize,
        schedule_seed: u64,
    ) -> Result<Plan> {
        counters.sort_unstable();
        counters.dedup();
        slices.sort_unstable();
        slices.dedup();
        if counters.is_empty() {
            bail!("--counters: give at least one count");
        }
        if let Some(&c) = counters.iter().find(|&&c| c == 0 || c > COUNTED) {
            bail!("--counters {c}: a count of physical counters is 1 to {COUNTED} (the components besides base)");
        }
        let Some(&g0) = slices.first() else {
            bail!("--slices: give at least one length");
        };
        if g0 < MIN_SLICE {
            bail!("--slices {g0}: a slice has at least {MIN_SLICE} cycles or instructions");
        }
        if let Some(&g) = slices.iter().find(|&&g| g % g0 != 0) {
            bail!(
                "--slices {g}: every length must be a multiple of the smallest, {g0} (the run is read at every {g0})"
            );
        }
        if schedules == 0 || schedules > MAX_SCHEDULES {
            bail!("--schedules {schedules}: give 1 to {MAX_SCHEDULES}");
        }
        Ok(Plan {
            counters,
            slices,
            schedules,
            schedule_seed,
        })
    }
}

/// The random generator of schedule `i` of a study seeded `seed`.
pub fn schedule_rng(seed: u64, i: usize) -> rand_xoshiro::Xoshiro256PlusPlus {
    rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(
        seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    )
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// A method's results over the multiplexed stacks `ests` of its schedules
/// (at least one), against its `full` stack and the `reference`.
fn method_result(
    ests: impl Iterator<Item = Stack>,
    full: &Stack,
    reference: &Stack,
    cycles: u64,
) -> MethodResult {
    let (mut sam, mut err, mut rel) = (vec![], vec![], vec![]);
    let mut first = None;
    for est in ests {
        sam.push(error_pp(&est, full, cycles));
        err.push(error_pp(&est, reference, cycles));
        rel.push(rel_error_pct(&est, full, cycles));
        first.get_or_insert(est);
    }
    MethodResult {
        full_error_pp: error_pp(full, reference, cycles),
        sampling_mean_pp: mean(&sam),
        sampling_max_pp: max(&sam),
        error_mean_pp: mean(&err),
        error_max_pp: max(&err),
        rel_mean_pct: mean(&rel),
        rel_max_pct: max(&rel),
        first_stack: first.expect("at least one schedule"),
    }
}

/// The set-ups of `plan` on the real run's slices.
fn measure(
    plan: &Plan,
    real: &RealOut,
    reference: &Stack,
    cycles: u64,
    global_bits: u32,
) -> (Vec<Setup>, Vec<String>) {
    let mut setups = Vec::new();
    let mut skipped = Vec::new();
    let g0 = plan.slices[0];
    for (b, fine) in Basis::ALL.iter().zip(&real.slices) {
        for &g in &plan.slices {
            // slices of g: runs of g / g0 fine ones
            let coarse: Vec<Slice> = fine
                .chunks((g / g0) as usize)
                .map(|ch| {
                    let mut s = Slice::default();
                    for x in ch {
                        s.add(x);
                    }
                    s
                })
                .collect();
            if let Some(why) = too_narrow(&coarse, global_bits) {
                skipped.push(format!("slices of {g} {}: {why}", b.name()));
                continue;
            }
            for &p in &plan.counters {
                let groups = groups_of(p);
                let n = coarse.len();
                if n < groups.len() {
                    skipped.push(format!(
                        "slices of {g} {} with {p} counter{}: {n} slice{}, fewer than the {} groups",
                        b.name(),
                        if p == 1 { "" } else { "s" },
                        if n == 1 { "" } else { "s" },
                        groups.len()
                    ));
                    continue;
                }
                for order in ["fixed", "random"] {
                    let draws = if order == "fixed" { 1 } else { plan.schedules };
                    let actives: Vec<Vec<usize>> = (0..draws)
                        .map(|i| {
                            if order == "fixed" {
                                schedule(n, groups.len(), None)
                            } else {
                                let mut r = schedule_rng(plan.schedule_seed, i);
                                schedule(n, groups.len(), Some(&mut r))
                            }
                        })
                        .collect();
                    let methods = METHODS
                        .iter()
                        .enumerate()
                        .map(|(m, name)| {
                            let est = |a: &Vec<usize>| {
                                estimate(&coarse, m, &groups, a)
                                    .expect("every group counts in the first round")
                            };
                            let r = method_result(
                                actives.iter().map(est),
                                &real.full[m],
                                reference,
                                cycles,
                            );
                            (name.to_string(), r)
                        })
                        .collect();
                    setups.push(Setup {
                        basis: *b,
                        slice: g,
                        counters: p,
                        groups: groups.len(),
                        slices: n,
                        rounds: n / groups.len(),
                        order: order.into(),
                        schedules: draws,
                        methods,
                    });
                }
            }
        }
    }
    (setups, skipped)
}

/// What one run of a study gives.
enum Outcome {
    Real(Box<RealOut>),
    Ideal {
        cycles: u64,
        instructions: u64,
        digest: u64,
    },
}

fn run_job(src: &Source, s: &Settings, g0: u64, m: Mask) -> Result<Outcome> {
    if m == 0 {
        return Ok(Outcome::Real(Box::new(real_run(src, s, g0)?)));
    }
    let mut core = src.core(&cfg_with(&s.cfg, m))?;
    core.set_warmup(s.warmup);
    core.run(s.instructions, &mut [])?;
    let st = core.stats();
    Ok(Outcome::Ideal {
        cycles: st.cycles,
        instructions: st.instructions,
        digest: core.stream_digest(),
    })
}

/// One source's study from its runs ([`order_masks`] of the standard order).
fn study(
    src: &Source,
    plan: &Plan,
    global_bits: u32,
    masks: &[Mask; 9],
    mut runs: Vec<(Mask, Outcome)>,
) -> Result<Study> {
    let k = runs
        .iter()
        .position(|(m, _)| *m == 0)
        .expect("every source has a real run");
    let Outcome::Real(real) = runs.swap_remove(k).1 else {
        unreachable!("mask 0 is the real run")
    };
    let st = &real.stats;
    let mut cycles = [st.cycles; 9];
    for (m, o) in runs {
        let Outcome::Ideal {
            cycles: c,
            instructions: n,
            digest,
        } = o
        else {
            unreachable!("only mask 0 is the real run")
        };
        same_stream(src, m, (n, digest), (st.instructions, real.digest))?;
        let at = masks
            .iter()
            .position(|&x| x == m)
            .expect("a mask of the order");
        cycles[at] = c;
    }
    let reference = reference_stack(&STANDARD_ORDER, &cycles);
    let (setups, skipped) = measure(plan, &real, &reference, st.cycles, global_bits);
    let mut stacks = BTreeMap::from([("reference".to_string(), reference)]);
    for (m, full) in METHODS.iter().zip(&real.full) {
        stacks.insert(m.to_string(), *full);
    }
    Ok(Study {
        name: src.name(),
        kind: src.kind().into(),
        seed: src.seed(),
        instructions: st.instructions,
        cycles: st.cycles,
        saturated: real.saturated.clone(),
        stacks,
        setups,
        skipped,
    })
}

/// The studies of a set (`workloads`, `traces`): those whose kind it is
/// the plural of.
fn studies_of<'a>(studies: &'a [Study], set: &str) -> Vec<&'a Study> {
    studies
        .iter()
        .filter(|x| set.strip_suffix('s') == Some(x.kind.as_str()))
        .collect()
}

/// The summary rows of `studies` (a set) named `set`.
fn summarise(set: &str, studies: &[&Study]) -> Vec<SummaryRow> {
    let mut keys: Vec<(Basis, u64, usize, String)> = Vec::new();
    for x in studies {
        for u in &x.setups {
            let k = (u.basis, u.slice, u.counters, u.order.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.sort();
    // a set-up some study is too short for would average other studies
    keys.retain(|(b, g, p, o)| {
        studies.iter().all(|x| {
            x.setups
                .iter()
                .any(|u| (u.basis, u.slice, u.counters, &u.order) == (*b, *g, *p, o))
        })
    });
    let mut out = Vec::new();
    for (basis, slice, counters, order) in keys {
        for m in METHODS {
            let rows: Vec<(&str, &MethodResult)> = studies
                .iter()
                .filter_map(|x| {
                    x.setups
                        .iter()
                        .find(|u| {
                            (u.basis, u.slice, u.counters, &u.order)
                                == (basis, slice, counters, &order)
                        })
                        .map(|u| (x.name.as_str(), &u.methods[m]))
                })
                .collect();
            let n = rows.len() as f64;
            let avg = |f: fn(&MethodResult) -> f64| rows.iter().map(|r| f(r.1)).sum::<f64>() / n;
            // the first study of the largest
            let mut worst = 0;
            for (i, r) in rows.iter().enumerate() {
                if r.1.sampling_max_pp > rows[worst].1.sampling_max_pp {
                    worst = i;
                }
            }
            out.push(SummaryRow {
                set: set.into(),
                basis,
                slice,
                counters,
                order: order.clone(),
                method: m.into(),
                studies: rows.len(),
                full_error_pp: avg(|r| r.full_error_pp),
                sampling_mean_pp: avg(|r| r.sampling_mean_pp),
                sampling_max_pp: rows[worst].1.sampling_max_pp,
                sampling_max_study: rows[worst].0.to_string(),
                error_mean_pp: avg(|r| r.error_mean_pp),
                error_max_pp: rows.iter().map(|r| r.1.error_max_pp).fold(0.0, f64::max),
                rel_mean_pct: avg(|r| r.rel_mean_pct),
                rel_max_pct: rows.iter().map(|r| r.1.rel_max_pct).fold(0.0, f64::max),
            });
        }
    }
    out
}

/// Runs a multiplexing study of every source: its real run, read at every
/// slice of the smallest length on both bases, and the idealised runs of
/// the standard-order reference; all runs in parallel on `jobs` threads (0:
/// one per core), calling `progress` as [`crate::stacks::run_study`] does.
pub fn run_multiplex(
    sources: &[Source],
    s: &Settings,
    plan: &Plan,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Report> {
    let g0 = plan.slices[0];
    if s.instructions.div_ceil(g0) > MAX_SLICES as u64 {
        bail!(
            "--instructions {} cuts into more than {MAX_SLICES} slices of {g0} instructions: \
             give a longer smallest --slices or fewer --instructions",
            s.instructions
        );
    }
    let start = std::time::Instant::now();
    let masks = order_masks(&STANDARD_ORDER);
    let mut work: Vec<(usize, Mask)> = (0..sources.len())
        .flat_map(|i| masks.iter().map(move |&m| (i, m)))
        .collect();
    let total = work.len();
    let outcomes = crate::stacks::run_all(sources, &mut work, jobs, progress, |src, m| {
        run_job(src, s, g0, m)
    })?;
    let mut by_source: Vec<Vec<(Mask, Outcome)>> = (0..sources.len()).map(|_| Vec::new()).collect();
    for (&(i, m), o) in work.iter().zip(outcomes) {
        by_source[i].push((m, o?));
    }
    let mut studies = Vec::with_capacity(sources.len());
    for (src, runs) in sources.iter().zip(by_source) {
        let x = study(src, plan, s.cfg.unit.global_bits, &masks, runs)?;
        if x.setups.is_empty() {
            bail!(
                "{}: no set-up can be measured ({}); give shorter --slices, more --counters, \
                 more --instructions or a wider unit.global_bits",
                x.name,
                x.skipped.join("; ")
            );
        }
        studies.push(x);
    }
    let mut summary = Vec::new();
    for set in ["workloads", "traces"] {
        let of = studies_of(&studies, set);
        if !of.is_empty() {
            summary.extend(summarise(set, &of));
        }
    }
    Ok(Report {
        instructions: s.instructions,
        warmup: s.warmup,
        config: s.cfg.clone(),
        schedules: plan.schedules,
        schedule_seed: plan.schedule_seed,
        studies,
        summary,
        runs: total,
        seconds: start.elapsed().as_secs_f64(),
    })
}

use crate::phases::si;

/// The summary as tables, one per set.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "multiplexed counters: {} instructions after {} of warm-up per run; groups in the \
         same order every round (fixed) or in an order drawn for each round (random: {} \
         schedules from seed {})",
        r.instructions, r.warmup, r.schedules, r.schedule_seed
    );
    let _ = writeln!(
        s,
        "sampling: the largest gap to the same method's stack with every counter counting all \
         the time; error: to the standard-order reference (pp of the cycles; mean over the \
         studies and schedules / the largest on any); a set-up some study is too short for \
         is left out"
    );
    for x in &r.studies {
        if !x.saturated.is_empty() {
            let _ = writeln!(
                s,
                "warning: {}: a local counter saturated in {} (unit.local_bits): their penalties are understated",
                x.name,
                x.saturated.join(", ")
            );
        }
        for k in &x.skipped {
            let _ = writeln!(s, "{}: not measured: {k}", x.name);
        }
    }
    let few: Vec<String> = r
        .studies
        .iter()
        .filter_map(|x| {
            let n = x.setups.iter().filter(|u| u.rounds < FEW_ROUNDS).count();
            (n > 0).then(|| format!("{} ({n} set-up{})", x.name, if n == 1 { "" } else { "s" }))
        })
        .collect();
    if !few.is_empty() {
        let _ = writeln!(
            s,
            "note: set-ups with fewer than {FEW_ROUNDS} whole rounds (each group counts in fewer \
             than {FEW_ROUNDS} slices; `rounds` in multiplex.csv) on {}: their estimates rest on \
             few samples",
            few.join(", ")
        );
    }
    for set in ["workloads", "traces"] {
        let rows: Vec<&SummaryRow> = r.summary.iter().filter(|x| x.set == set).collect();
        if rows.is_empty() {
            continue;
        }
        let of = studies_of(&r.studies, set);
        let names: Vec<&str> = of.iter().map(|x| x.name.as_str()).collect();
        let _ = writeln!(s, "\n{set} ({}): {}", names.len(), names.join(", "));
        let full = |m: &str| {
            of.iter()
                .map(|x| error_pp(&x.stacks[m], &x.stacks["reference"], x.cycles))
                .sum::<f64>()
                / of.len() as f64
        };
        let _ = writeln!(
            s,
            "every counter counting all the time, mean error: FMT {:.2} pp, sFMT {:.2}, POWER5 {:.2}",
            full("fmt"),
            full("sfmt"),
            full("power5")
        );
        let _ = writeln!(
            s,
            "{:<12} {:>6} {:>4} {:<6} | {:>15} {:>15} | {:>15} {:>15} | {:>15} {:>15}",
            "basis",
            "slice",
            "ctrs",
            "order",
            "FMT sampling",
            "FMT error",
            "sFMT sampling",
            "sFMT error",
            "POWER5 sampl.",
            "POWER5 error"
        );
        let pair = |a: f64, b: f64| format!("{a:.2} / {b:.2}");
        for ch in rows.chunks(METHODS.len()) {
            let u = ch[0];
            let m = |k: &str| ch.iter().find(|x| x.method == k).expect("every method");
            let _ = write!(
                s,
                "{:<12} {:>6} {:>4} {:<6}",
                u.basis.name(),
                si(u.slice),
                u.counters,
                u.order
            );
            for k in METHODS {
                let x = m(k);
                let _ = write!(
                    s,
                    " | {:>15} {:>15}",
                    pair(x.sampling_mean_pp, x.sampling_max_pp),
                    pair(x.error_mean_pp, x.error_max_pp)
                );
            }
            s.push('\n');
        }
    }
    s
}

/// `multiplex.csv`: one row per study, set-up and method.
pub fn csv(r: &Report) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for x in &r.studies {
        for u in &x.setups {
            for (m, v) in &u.methods {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{},{m},{:.4},{:.4},{:.4},{:.4},{:.4},{:.3},{:.3}",
                    x.name,
                    x.kind,
                    u.basis.name(),
                    u.slice,
                    u.counters,
                    u.groups,
                    u.slices,
                    u.rounds,
                    u.order,
                    u.schedules,
                    v.full_error_pp,
                    v.sampling_mean_pp,
                    v.sampling_max_pp,
                    v.error_mean_pp,
                    v.error_max_pp,
                    v.rel_mean_pct,
                    v.rel_max_pct
                );
            }
        }
    }
    s
}

/// `multiplex-summary.csv`: one row per set, set-up and method.
pub fn summary_csv(r: &Report) -> String {
    let mut s = String::from(SUMMARY_CSV_HEADER);
    s.push('\n');
    for x in &r.summary {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{:.4},{:.4},{:.4},{},{:.4},{:.4},{:.3},{:.3}",
            x.set,
            x.basis.name(),
            x.slice,
            x.counters,
            x.order,
            x.method,
            x.studies,
            x.full_error_pp,
            x.sampling_mean_pp,
            x.sampling_max_pp,
            x.sampling_max_study,
            x.error_mean_pp,
            x.error_max_pp,
            x.rel_mean_pct,
            x.rel_max_pct
        );
    }
    s
}

/// Colours of the counter counts in `multiplex.svg` (by rank of the count).
pub const COUNT_COLOURS: [&str; 8] = [
    "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

/// `multiplex.svg`: the sampling error of the random order against the
/// slice length, one column of panels per method; for each set a row of
/// the mean over its studies and schedules and a row of the largest on any,
/// each row on its own scale; one colour per counter count, cycle slices
/// solid, instruction slices dashed.
pub fn svg(r: &Report) -> String {
    use crate::stacks::output::svg::{head, legend, nice_step};
    let (left, right, top) = (64.0, 170.0, 62.0);
    let (pw, ph, gap, vgap) = (300.0, 150.0, 40.0, 62.0);
    let random: Vec<&SummaryRow> = r.summary.iter().filter(|x| x.order == "random").collect();
    let mut rows: Vec<(&str, bool)> = Vec::new();
    for set in ["workloads", "traces"] {
        if random.iter().any(|x| x.set == set) {
            rows.push((set, false));
            rows.push((set, true));
        }
    }
    let n = METHODS.len() as f64;
    let w = left + n * pw + (n - 1.0) * gap + right;
    let h = top + rows.len() as f64 * (ph + vgap) + 10.0;
    let mut s = head(w, h);
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Multiplexed counters: sampling error ({} instructions per run)</text>",
        si(r.instructions)
    );
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"38\" font-size=\"11\">largest gap to the full counters' stack over the components, pp of the cycles; groups in a random order each round ({} schedules); solid: slices of cycles, dashed: of instructions</text>",
        r.schedules
    );
    let mut lengths: Vec<u64> = random.iter().map(|x| x.slice).collect();
    lengths.sort_unstable();
    lengths.dedup();
    let mut counts: Vec<usize> = random.iter().map(|x| x.counters).collect();
    counts.sort_unstable();
    counts.dedup();
    let xs = |i: usize| {
        if lengths.len() == 1 {
            pw / 2.0
        } else {
            20.0 + (pw - 40.0) * i as f64 / (lengths.len() - 1) as f64
        }
    };
    let colour = |i: usize| COUNT_COLOURS[i % COUNT_COLOURS.len()];
    for (ri, &(set, worst)) in rows.iter().enumerate() {
        let value = |x: &SummaryRow| {
            if worst {
                x.sampling_max_pp
            } else {
                x.sampling_mean_pp
            }
        };
        let of: Vec<&SummaryRow> = random.iter().copied().filter(|x| x.set == set).collect();
        let hi = of.iter().map(|x| value(x)).fold(0.0, f64::max);
        let step = nice_step(hi.max(1e-9));
        let hi = ((hi / step).ceil() * step).max(step);
        let y0 = top + ri as f64 * (ph + vgap);
        let y = |v: f64| y0 + ph - ph * v / hi;
        for (pi, m) in METHODS.iter().enumerate() {
            let x0 = left + pi as f64 * (pw + gap);
            let label = ["FMT", "sFMT", "POWER5-style"][pi];
            let what = if worst { "worst study" } else { "mean" };
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" font-size=\"12\" font-weight=\"bold\" text-anchor=\"middle\">{label}: {set}, {what}</text>",
                x0 + pw / 2.0,
                y0 - 6.0
            );
            let mut v = 0.0;
            while v <= hi + step / 2.0 {
                let _ = writeln!(
                    s,
                    "<line x1=\"{x0}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>",
                    x0 + pw,
                    y(v),
                    y(v)
                );
                let _ = writeln!(
                    s,
                    "<text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{v:.*}</text>",
                    x0 - 4.0,
                    y(v) + 3.0,
                    crate::phases::decimals_of(step)
                );
                v += step;
            }
            let _ = writeln!(
                s,
                "<rect x=\"{x0}\" y=\"{y0}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#888\"/>"
            );
            for (i, g) in lengths.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}</text>",
                    x0 + xs(i),
                    y0 + ph + 14.0,
                    si(*g)
                );
            }
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">slice (cycles or instructions)</text>",
                x0 + pw / 2.0,
                y0 + ph + 28.0
            );
            for b in Basis::ALL {
                for (ci, c) in counts.iter().enumerate() {
                    let pts: Vec<(f64, f64)> = lengths
                        .iter()
                        .enumerate()
                        .filter_map(|(i, g)| {
                            of.iter()
                                .find(|x| {
                                    x.method == *m
                                        && x.basis == b
                                        && x.slice == *g
                                        && x.counters == *c
                                })
                                .map(|x| (x0 + xs(i), y(value(x))))
                        })
                        .collect();
                    if pts.is_empty() {
                        continue;
                    }
                    let dash = if b == Basis::Instructions {
                        " stroke-dasharray=\"5 3\""
                    } else {
                        ""
                    };
                    let line: Vec<String> = pts
                        .iter()
                        .map(|p| format!("{:.1},{:.1}", p.0, p.1))
                        .collect();
                    let kind = if worst { "max" } else { "mean" };
                    let _ = writeln!(
                        s,
                        "<polyline class=\"{kind} {} c{c}\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
                        b.name(),
                        line.join(" "),
                        colour(ci)
                    );
                    for p in &pts {
                        let _ = writeln!(
                            s,
                            "<circle class=\"{kind} {} c{c}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{}\"/>",
                            b.name(),
                            p.0,
                            p.1,
                            colour(ci)
                        );
                    }
                }
            }
        }
    }
    let names: Vec<String> = counts
        .iter()
        .map(|c| format!("{c} counter{}", if *c == 1 { "" } else { "s" }))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let colours: Vec<&str> = (0..counts.len()).map(colour).collect();
    legend(
        &mut s,
        left + n * pw + (n - 1.0) * gap + 16.0,
        top,
        &names,
        &colours,
    );
    s.push_str("</svg>\n");
    s
}

/// `index.html`: the study on one page: what was emulated, the summary per
/// set (both orders), the chart, and per study its full errors and the
/// set-ups it could not measure.
pub fn html(r: &Report) -> String {
    use crate::stacks::output::{esc, machine_html, page_head, WARN_STYLE};
    let mut s = page_head("Multiplexed counters");
    let _ = writeln!(
        s,
        "<h1>Multiplexed counters</h1>\n\
         <p>FMT needs a global counter per CPI component, eight besides cycles and \
         instructions; a PMU has a handful. Here the units' component counters are \
         time-multiplexed over fewer physical counters, as Azimi et al. multiplex a \
         PMU's: the components are cut into groups of as many as there are counters \
         (in the order l1i, l2i, itlb, bpred, l1d, l2d, dtlb, longlat), time into \
         slices of cycles or of committed instructions, one group counts in each \
         slice, the groups take turns in rounds (in the same order each round, \
         <i>fixed</i>, or in an order drawn for each round, <i>random</i>: {} \
         schedules from seed {}), and each count is scaled by the run's cycles over \
         the cycles its group counted; base is the rest. Every set-up is emulated \
         exactly from one real run read at every slice end. {} instructions after {} \
         of warm-up per run, on {}.</p>\n\
         <p>The <b>sampling error</b> of a set-up is the largest gap, over the \
         components, between its stack and the same method's stack with every \
         counter counting, in percentage points of the cycles; its <b>error</b> is the \
         same gap to the standard-order simulation reference (the issue-6 error). \
         Means are over the studies and schedules, maxima the worst schedule on the \
         worst study (named). docs/accuracy.md discusses the results.</p>",
        r.schedules,
        r.schedule_seed,
        r.instructions,
        r.warmup,
        machine_html(&r.config)
    );
    for x in &r.studies {
        if !x.saturated.is_empty() {
            let _ = writeln!(
                s,
                "<p {WARN_STYLE}><b>Warning:</b> {}: a local counter saturated in {} \
                 (unit.local_bits = {}): its penalties are understated.</p>",
                esc(&x.name),
                esc(&x.saturated.join(", ")),
                r.config.unit.local_bits
            );
        }
    }
    s.push_str(
        "<h2>Sampling error against the slice length</h2>\n<div class=\"wide\">\
         <object data=\"multiplex.svg\" type=\"image/svg+xml\" aria-label=\"sampling \
         error\">sampling error (multiplex.svg)</object></div>\n",
    );
    for set in ["workloads", "traces"] {
        let rows: Vec<&SummaryRow> = r.summary.iter().filter(|x| x.set == set).collect();
        if rows.is_empty() {
            continue;
        }
        let of = studies_of(&r.studies, set);
        let names: Vec<String> = of.iter().map(|x| esc(&x.name)).collect();
        let _ = writeln!(
            s,
            "<h2>{set} ({})</h2>\n<p>{}</p>\n<table><tr><th>basis</th><th>slice</th>\
             <th>counters</th><th>order</th><th>method</th><th>full error</th>\
             <th>sampling mean</th><th>sampling max</th><th>on</th><th>error mean</th>\
             <th>error max</th><th>rel. mean %</th><th>rel. max %</th></tr>",
            of.len(),
            names.join(", ")
        );
        for x in rows {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td><td>{:.2}</td>\
                 <td>{:.2}</td><td>{:.1}</td><td>{:.1}</td></tr>",
                x.basis.name(),
                x.slice,
                x.counters,
                x.order,
                x.method,
                x.full_error_pp,
                x.sampling_mean_pp,
                x.sampling_max_pp,
                esc(&x.sampling_max_study),
                x.error_mean_pp,
                x.error_max_pp,
                x.rel_mean_pct,
                x.rel_max_pct
            );
        }
        s.push_str("</table>\n");
    }
    s.push_str(
        "<details><summary>Every study: its error with every counter counting, and \
         the set-ups it could not measure</summary><table><tr><th>study</th>\
         <th>cycles</th><th>FMT</th><th>sFMT</th><th>POWER5</th><th>not measured</th></tr>\n",
    );
    for x in &r.studies {
        let e = |m: &str| error_pp(&x.stacks[m], &x.stacks["reference"], x.cycles);
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td>\
             <td style=\"text-align:left\">{}</td></tr>",
            esc(&x.name),
            x.cycles,
            e("fmt"),
            e("sfmt"),
            e("power5"),
            esc(&x.skipped.join("; "))
        );
    }
    s.push_str(
        "</table></details>\n<p>Files: <a href=\"multiplex.csv\">multiplex.csv</a>, \
         <a href=\"multiplex-summary.csv\">multiplex-summary.csv</a>, \
         <a href=\"multiplex.json\">multiplex.json</a>, \
         <a href=\"multiplex.svg\">multiplex.svg</a>.</p>\n</body></html>\n",
    );
    s
}

/// Writes the study's files into `dir`.
pub fn write_all(r: &Report, dir: &Path) -> Result<()> {
    let json = serde_json::to_string_pretty(r).context("serialising the study")? + "\n";
    for (f, text) in [
        ("multiplex.csv", csv(r)),
        ("multiplex-summary.csv", summary_csv(r)),
        ("multiplex.json", json),
        ("multiplex.svg", svg(r)),
        ("index.html", html(r)),
    ] {
        let path = dir.join(f);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Arguments of `cpistack multiplex`.
#[derive(clap::Args, Debug, Clone)]
pub struct MultiplexArgs {
    #[command(flatten)]
    pub sources: crate::stacks::SourceArgs,
    /// Instructions measured per run.
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::run::at_least_one::<u64>)]
    pub instructions: u64,
    /// Instructions committed before counting starts.
    #[arg(long, default_value_t = 200_000)]
    pub warmup: u64,
    /// Physical counters for the eight components (1 to 8; 8 is no
    /// multiplexing), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pub counters: Vec<usize>,
    /// Slice lengths, in cycles and (separately) in committed instructions,
    /// comma-separated; each a multiple of the smallest, at least 1000.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    pub slices: Vec<u64>,
    /// Random schedules drawn for each set-up (an order of the groups for
    /// each round), besides the fixed order.
    #[arg(long, default_value_t = 20)]
    pub schedules: usize,
    /// Seed of the random schedules.
    #[arg(long, default_value_t = 1)]
    pub schedule_seed: u64,
    /// Output directory (created if missing).
    #[arg(long, default_value = "multiplex")]
    pub out: PathBuf,
    /// Runs in parallel (default, or 0: one per core; never more than the runs).
    #[arg(long)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub machine: crate::run::MachineArgs,
}

/// `cpistack multiplex`.
pub fn cmd(args: &MultiplexArgs) -> Result<()> {
    let plan = Plan::new(
        args.counters.clone(),
        args.slices.clone(),
        args.schedules,
        args.schedule_seed,
    )?;
    let cfg = args.machine.build()?;
    let sources = args.sources.sources(&args.out, &OUTPUT_FILES)?;
    crate::paths::into_out_dir(&args.out, &OUTPUT_FILES, &args.machine, || {
        let s = Settings {
            cfg,
            instructions: args.instructions,
            warmup: args.warmup,
        };
        let bar = crate::stacks::progress_bar(
            "multiplex [{bar:40}] {pos}/{len} runs ({elapsed}, eta {eta})",
        );
        let r = run_multiplex(&sources, &s, &plan, args.jobs.unwrap_or(0), &|n, total| {
            bar.set_length(total as u64);
            bar.set_position(n as u64);
        })?;
        bar.finish_and_clear();
        write_all(&r, &args.out)?;
        print!("{}", text(&r));
        eprintln!(
            "{} runs in {:.1} s; wrote {} to {}",
            r.runs,
            r.seconds,
            OUTPUT_FILES.join(", "),
            args.out.display()
        );
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(cycles: u64, comps: [i64; 8]) -> Slice {
        let mut st = [0i64; NCOMP];
        st[1..].copy_from_slice(&comps);
        Slice {
            cycles,
            moved: [st, st, st],
        }
    }

    #[test]
    fn groups_are_consecutive_components() {
        assert_eq!(groups_of(8), vec![vec![1, 2, 3, 4, 5, 6, 7, 8]]);
        assert_eq!(groups_of(3), vec![vec![1, 2, 3], vec![4, 5, 6], vec![7, 8]]);
        assert_eq!(groups_of(1).len(), 8);
    }

    /// Every whole round holds every group once; the fixed order is 0..G;
    /// a seed gives one schedule, another seed another.
    #[test]
    fn a_round_gives_every_group_one_slice() {
        assert_eq!(schedule(7, 3, None), vec![0, 1, 2, 0, 1, 2, 0]);
        let a = schedule(400, 4, Some(&mut schedule_rng(1, 0)));
        for r in a.chunks(4) {
            let mut r = r.to_vec();
            r.sort_unstable();
            assert_eq!(r, vec![0, 1, 2, 3]);
        }
        // an order is drawn for each round, not once
        let mut orders: Vec<&[usize]> = a.chunks(4).collect();
        orders.sort_unstable();
        orders.dedup();
        assert!(orders.len() > 10, "{} distinct orders", orders.len());
        assert_eq!(a, schedule(400, 4, Some(&mut schedule_rng(1, 0))));
        assert_ne!(a, schedule(400, 4, Some(&mut schedule_rng(1, 1))));
        assert_ne!(a, schedule(400, 4, Some(&mut schedule_rng(2, 0))));
    }

    /// Worked by hand: two groups (four counters), three slices.
    #[test]
    fn a_group_is_scaled_by_the_cycles_it_counted() {
        let s = [
            slice(100, [10, 0, 0, 0, 40, 0, 0, 0]),
            slice(100, [30, 0, 0, 0, 20, 0, 0, 0]),
            slice(200, [0, 0, 0, 0, 60, 0, 0, 0]),
        ];
        let g = groups_of(4);
        // group 0 counts slices 0 and 2 (300 cycles), group 1 slice 1 (100)
        let e = estimate(&s, 0, &g, &[0, 1, 0]).unwrap();
        // l1i: 10 * 400/300 = 13.33 -> 13; l1d: 20 * 400/100 = 80
        assert_eq!(e[1], 13);
        assert_eq!(e[5], 80);
        assert_eq!(e[0], 400 - 13 - 80);
        // one group: the full stack exactly
        let all = estimate(&s, 0, &groups_of(8), &[0, 0, 0]).unwrap();
        assert_eq!(&all[1..], &[40, 0, 0, 0, 120, 0, 0, 0]);
        assert_eq!(all[0], 240);
        // a group that never counted: no estimate
        assert_eq!(estimate(&s, 0, &g, &[0, 0, 0]), None);
    }

    /// A slice is readable when every count it makes fits the width; at
    /// 63 bits every count does (the limit is no `i64`), at 64 nothing is checked.
    #[test]
    fn a_width_is_too_narrow_only_for_a_count_that_does_not_fit() {
        let s = [slice(1000, [0, 0, 0, 300, 0, 0, 0, 0])];
        for bits in [10, 62, 63, 64] {
            assert_eq!(too_narrow(&s, bits), None, "{bits}");
        }
        assert_eq!(
            too_narrow(&s, 9).unwrap(),
            "slice 0 takes 1000 cycles, more than a counter of 9 bits counts between two \
             reads (unit.global_bits = 9)"
        );
        let lump = [slice(100, [0, 0, 0, 300, 0, 0, 0, 0])];
        assert_eq!(
            too_narrow(&lump, 8).unwrap(),
            "fmt's `bpred` moves by 300 in slice 0, more than a counter of 8 bits counts \
             between two reads (unit.global_bits = 8)"
        );
    }

    #[test]
    fn relative_errors_skip_small_components() {
        let mut full = [0i64; NCOMP];
        full[1] = 100; // 10 %
        full[2] = 5; // 0.5 %: below the floor
        let mut est = full;
        est[1] = 90;
        est[2] = 50;
        assert_eq!(rel_error_pct(&est, &full, 1000), 10.0);
        assert_eq!(rel_error_pct(&full, &full, 1000), 0.0);
    }

    #[test]
    fn impossible_plans_are_refused() {
        let e =
            |c: Vec<usize>, s: Vec<u64>, n: usize| Plan::new(c, s, n, 1).unwrap_err().to_string();
        assert!(e(vec![0], vec![1000], 1).contains("--counters 0"));
        assert!(e(vec![9], vec![1000], 1).contains("1 to 8"));
        assert!(e(vec![], vec![1000], 1).contains("at least one"));
        assert!(e(vec![1], vec![999], 1).contains("at least 1000"));
        assert!(e(vec![1], vec![2000, 3000], 1).contains("multiple of the smallest, 2000"));
        assert!(e(vec![1], vec![1000], 0).contains("--schedules 0"));
        let p = Plan::new(vec![4, 1, 4], vec![10_000, 1000], 3, 7).unwrap();
        assert_eq!((p.counters, p.slices), (vec![1, 4], vec![1000, 10_000]));
    }
}
