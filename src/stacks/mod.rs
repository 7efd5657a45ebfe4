//! `cpistack stacks`: every CPI stack the paper compares, from the same run, and
//! how far each is from the simulation reference (the paper's section 5.2).
//!
//! For each workload (or ChampSim trace) one *real* run drives, every cycle, the
//! bit-accurate FMT and sFMT units ([`hw::Unit`]), the POWER5-style accountant
//! ([`Power5`]) and the overlap meter ([`Overlap`]); the naive stacks come from the
//! same run's miss counts. Idealised runs of the same committed instruction
//! stream (same source, seed, warm-up, instruction count) build the reference in
//! the standard order, the inverse order and a third order with the branch
//! predictor made real last ([`ORDERS`]). Runs are independent and run in
//! parallel.
//!
//! Components, in this order everywhere: base, l1i, l2i, itlb, bpred, l1d, l2d,
//! dtlb, longlat ([`COMPONENTS`]). Methods: [`METHODS`].

mod accounting;
pub(crate) mod output;
pub mod sweep;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use events::{Counter, CounterUnit, Variant};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::census::Census;
pub use accounting::{CensusOf, Overlap, Power5, UnitConsumer};
pub use output::{
    check_dir, check_report_text, detail_text, penalties_csv, render_outputs, stacks_csv,
    text as text_table, write_all, xml_well_formed, OUTPUT_FILES, PENALTIES_CSV_HEADER,
    STACKS_CSV_HEADER,
};

/// A CPI-stack component.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Comp {
    Base = 0,
    L1i = 1,
    L2i = 2,
    Itlb = 3,
    Bpred = 4,
    L1d = 5,
    L2d = 6,
    Dtlb = 7,
    Longlat = 8,
}

/// Number of components (base included).
pub const NCOMP: usize = 9;

/// Component names, in [`Comp`] order.
pub const COMPONENTS: [&str; NCOMP] = [
    "base", "l1i", "l2i", "itlb", "bpred", "l1d", "l2d", "dtlb", "longlat",
];

/// Method keys: the reference first, then the methods compared with it.
pub const METHODS: [&str; 8] = [
    "reference",
    "reference_inverse",
    "reference_bpred_last",
    "fmt",
    "sfmt",
    "naive",
    "naive_nonspec",
    "power5",
];

/// The methods whose error against the standard-order reference is reported.
pub const COMPARED: [&str; 7] = [
    "fmt",
    "sfmt",
    "naive",
    "naive_nonspec",
    "power5",
    "reference_inverse",
    "reference_bpred_last",
];

/// One stack: cycles per component in [`Comp`] order (base may be negative).
pub type Stack = [i64; NCOMP];

/// Idealisation steps of the reference, in the standard order. `longlat` comes
/// first: the paper's base run has real functional units, so its base is our
/// base plus longlat (see docs/accuracy.md).
pub const STANDARD_ORDER: [Comp; 8] = [
    Comp::Longlat,
    Comp::L1d,
    Comp::Bpred,
    Comp::L1i,
    Comp::L2i,
    Comp::Itlb,
    Comp::L2d,
    Comp::Dtlb,
];

/// The inverse order: L2 D-cache and D-TLB before the instruction side.
pub const INVERSE_ORDER: [Comp; 8] = [
    Comp::Longlat,
    Comp::L1d,
    Comp::Bpred,
    Comp::L2d,
    Comp::Dtlb,
    Comp::L1i,
    Comp::L2i,
    Comp::Itlb,
];

/// The branch predictor made real last, after the long data misses: the
/// order in which a mispredicted branch waiting behind an L2 D-miss or a
/// D-TLB walk is charged to bpred (the paper's two orders both measure bpred
/// third, with perfect L2 and D-TLB, so they never move that overlap; see
/// docs/accuracy.md, seventh pass).
pub const BPRED_LAST_ORDER: [Comp; 8] = [
    Comp::Longlat,
    Comp::L1d,
    Comp::L1i,
    Comp::L2i,
    Comp::Itlb,
    Comp::L2d,
    Comp::Dtlb,
    Comp::Bpred,
];

/// Every reference order and the method key of its stack: the standard
/// order (what every error is measured against), then the two whose distance
/// from it is the reference's own uncertainty.
pub const ORDERS: [(&str, [Comp; 8]); 3] = [
    ("reference", STANDARD_ORDER),
    ("reference_inverse", INVERSE_ORDER),
    ("reference_bpred_last", BPRED_LAST_ORDER),
];

/// Where the instructions come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A synthetic workload (a suite entry or a purpose-built spec) with its seed.
    Workload {
        spec: sim::workloads::Spec,
        seed: u64,
    },
    /// A ChampSim trace, read from its start.
    Trace(PathBuf),
}

impl Source {
    /// The suite workload `name` with `seed`.
    pub fn workload(name: &str, seed: u64) -> Result<Source> {
        let spec = sim::workloads::by_name(name)
            .ok_or_else(|| sim::SimError::UnknownWorkload(name.into()))?;
        Ok(Source::Workload { spec, seed })
    }

    pub fn name(&self) -> String {
        match self {
            Source::Workload { spec, .. } => spec.name.to_string(),
            // as `cpistack run` names it
            Source::Trace(p) => sim::trace::trace_name(p),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Source::Workload { .. } => "workload",
            Source::Trace(_) => "trace",
        }
    }

    /// The synthetic workload's seed (a trace has none).
    pub fn seed(&self) -> Option<u64> {
        match self {
            Source::Workload { seed, .. } => Some(*seed),
            Source::Trace(_) => None,
        }
    }

    pub(crate) fn core(&self, cfg: &sim::Config) -> Result<sim::Core<Box<dyn sim::InstrSource>>> {
        let src: Box<dyn sim::InstrSource> = match self {
            Source::Workload { spec, seed } => Box::new(sim::workloads::Workload::new(spec, *seed)),
            Source::Trace(p) => Box::new(
                sim::trace::TraceSource::open(p, 0)
                    .with_context(|| format!("opening trace {}", p.display()))?,
            ),
        };
        Ok(sim::Core::new(cfg, src)?)
    }
}

/// What every run of a study shares.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The machine (its `ideal` switches are kept on in every run).
    pub cfg: sim::Config,
    /// Instructions measured (committed with counting on).
    pub instructions: u64,
    /// Instructions committed before counting starts.
    pub warmup: u64,
}

/// An idealisation set: bit `Comp as u8` on = that structure ideal.
pub(crate) type Mask = u16;

pub(crate) fn mask_of(steps: &[Comp]) -> Mask {
    steps.iter().fold(0, |m, &c| m | 1 << c as u8)
}

pub(crate) fn cfg_with(base: &sim::Config, m: Mask) -> sim::Config {
    let mut c = base.clone();
    let on = |k: Comp| m >> k as u8 & 1 == 1;
    let i = &mut c.ideal;
    i.longlat |= on(Comp::Longlat);
    i.l1d |= on(Comp::L1d);
    i.bpred |= on(Comp::Bpred);
    i.l1i |= on(Comp::L1i);
    i.l2i |= on(Comp::L2i);
    i.itlb |= on(Comp::Itlb);
    i.l2d |= on(Comp::L2d);
    i.dtlb |= on(Comp::Dtlb);
    c
}

/// The idealisation sets an order needs: with the first `k` steps made real, for
/// `k = 0..8` (`k = 8` is the real run).
pub(crate) fn order_masks(order: &[Comp; 8]) -> [Mask; 9] {
    let mut out = [0; 9];
    for (k, o) in out.iter_mut().enumerate() {
        *o = mask_of(&order[k..]);
    }
    out
}

/// Every idealisation set the `orders` need (0 is the real run), each once,
/// in order of first need.
pub(crate) fn masks_of<'a>(orders: impl IntoIterator<Item = &'a [Comp; 8]>) -> Vec<Mask> {
    let mut out: Vec<Mask> = Vec::new();
    for order in orders {
        for m in order_masks(order) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}

/// What the real run measured.
#[derive(Clone, Debug, Serialize)]
pub struct RealRun {
    pub stats: sim::Stats,
    pub fmt: events::Counters,
    pub sfmt: events::Counters,
    /// The methods (`fmt`, `sfmt`) whose unit had a local counter saturate
    /// (`unit.local_bits`): their penalties are understated.
    pub saturated: Vec<String>,
    #[serde(skip)]
    pub power5: Power5,
    #[serde(skip)]
    pub overlap: Overlap,
    /// The cycle census, read before FMT steps each cycle.
    #[serde(skip)]
    pub census: Vec<crate::census::CensusRow>,
    /// [`sim::Core::stream_digest`] at the end of the run.
    #[serde(skip)]
    pub digest: u64,
}

/// What an idealised run measured.
#[derive(Clone, Copy, Debug)]
struct IdealRun {
    cycles: u64,
    instructions: u64,
    /// [`sim::Core::stream_digest`] at the end of the run.
    digest: u64,
}

#[derive(Clone, Debug)]
enum Outcome {
    Ideal(IdealRun),
    Real(Box<RealRun>),
}

fn run_job(src: &Source, s: &Settings, mask: Mask) -> Result<Outcome> {
    let cfg = cfg_with(&s.cfg, mask);
    let mut core = src.core(&cfg)?;
    core.set_warmup(s.warmup);
    if mask != 0 {
        core.run(s.instructions, &mut [])?;
        let st = core.stats();
        return Ok(Outcome::Ideal(IdealRun {
            cycles: st.cycles,
            instructions: st.instructions,
            digest: core.stream_digest(),
        }));
    }
    let p = cfg.unit_params();
    let mut fmt = CensusOf(hw::Unit::new(p.with_variant(Variant::Fmt))?, Census::new());
    let mut sfmt = UnitConsumer(hw::Unit::new(p.with_variant(Variant::Sfmt))?);
    let mut p5 = Power5::new();
    let mut ov = Overlap::new(p.rob_entries);
    core.run(s.instructions, &mut [&mut fmt, &mut sfmt, &mut p5, &mut ov])?;
    let unverified = sim::InstrSource::unverified_bytes(&**core.source());
    if unverified > 0 {
        // (the real run's; every run of the study reads the same records)
        eprintln!(
            "warning: {}: {}",
            src.name(),
            sim::trace::unverified_warning(unverified)
        );
    }
    for u in [&fmt.0, &sfmt.0] {
        if let Some(e) = u.view().error {
            bail!("the core emitted an illegal bundle (a simulator bug): {e}");
        }
    }
    let mut saturated = Vec::new();
    for (k, m, u) in [("FMT", "fmt", &fmt.0), ("sFMT", "sfmt", &sfmt.0)] {
        let v = u.view();
        if v.saturated {
            saturated.push(m.to_string());
        }
        let c = v.counters;
        if let Some(&w) = Counter::ALL.iter().find(|&&w| c.overflowed(w)) {
            bail!(
                "{k}'s global counter `{}` wrapped at unit.global_bits = {} bits \
                 ({} cycles counted): every share of its stack would be wrong; raise \
                 unit.global_bits or run fewer instructions",
                w.name(),
                p.global_bits,
                core.stats().cycles
            );
        }
    }
    Ok(Outcome::Real(Box::new(RealRun {
        stats: core.stats().clone(),
        fmt: fmt.0.view().counters,
        sfmt: sfmt.0.view().counters,
        saturated,
        power5: p5,
        overlap: ov,
        census: fmt.1.rows(),
        digest: core.stream_digest(),
    })))
}

/// Average penalty per event as a method sees it (cycles per event); `None`
/// when the run had no such event.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Penalties {
    /// Per L1 I-miss: the method's `l1i` component over the L1 I-misses.
    pub l1i: Option<f64>,
    /// Per branch misprediction: `bpred` over the mispredictions.
    pub bpred: Option<f64>,
    /// Per long (L2) D-miss: `l2d` over the L2 D-misses.
    pub l2d: Option<f64>,
}

/// Frontend/long-backend overlap (Table 1), see [`Overlap`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OverlapReport {
    pub cycles: u64,
    pub frontend_cycles: u64,
    pub backend_cycles: u64,
    pub overlap_cycles: u64,
    /// `overlap_cycles / cycles`.
    pub fraction: f64,
}

/// Everything measured on one workload or trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Study {
    pub name: String,
    /// `workload` or `trace`.
    pub kind: String,
    /// The synthetic workload's seed (none for a trace).
    pub seed: Option<u64>,
    /// Instructions of the real run (counted).
    pub instructions: u64,
    /// Cycles of the real run (counted): every stack's total.
    pub cycles: u64,
    pub cpi: f64,
    /// Per method (keys of [`METHODS`]): cycles per component (keys of [`COMPONENTS`]).
    #[serde(serialize_with = "ser_stacks", deserialize_with = "de_stacks")]
    pub stacks: BTreeMap<String, Stack>,
    /// Per compared method: max over components of |share - reference share|, in
    /// percentage points.
    pub errors_pp: BTreeMap<String, f64>,
    /// Per method.
    pub penalties: BTreeMap<String, Penalties>,
    pub overlap: OverlapReport,
    /// Cycles of each idealised run, by the list of structures made ideal.
    pub ideal_runs: BTreeMap<String, u64>,
    /// The real run's event counts.
    pub stats: sim::Stats,
    /// The methods (`fmt`, `sfmt`) whose unit had a local counter saturate
    /// (`unit.local_bits` too narrow for a penalty): their stacks understate
    /// the frontend components. Absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub saturated: Vec<String>,
    /// The real run's cycle census (`cpistack run --census`): what the
    /// cycles of FMT's base were doing. Empty in a report written before it
    /// was added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub census: Vec<crate::census::CensusRow>,
}

fn ser_stacks<S: serde::Serializer>(
    m: &BTreeMap<String, Stack>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        let o: BTreeMap<&str, i64> = COMPONENTS.iter().copied().zip(v.iter().copied()).collect();
        map.serialize_entry(k, &o)?;
    }
    map.end()
}

/// [`ser_stacks`] read back: every component named, no other.
fn de_stacks<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<BTreeMap<String, Stack>, D::Error> {
    use serde::de::Error;
    let m = BTreeMap::<String, BTreeMap<String, i64>>::deserialize(d)?;
    m.into_iter()
        .map(|(k, o)| {
            if let Some(c) = o.keys().find(|c| !COMPONENTS.contains(&c.as_str())) {
                return Err(D::Error::custom(format!(
                    "stacks.{k}: unknown component `{c}`"
                )));
            }
            let mut v = [0; NCOMP];
            for (x, c) in v.iter_mut().zip(COMPONENTS) {
                *x = *o
                    .get(c)
                    .ok_or_else(|| D::Error::custom(format!("stacks.{k}: no `{c}`")))?;
            }
            Ok((k, v))
        })
        .collect()
}

impl Study {
    /// Share of the real run's cycles, in percent.
    pub fn share(&self, method: &str, c: Comp) -> f64 {
        100.0 * self.stacks[method][c as usize] as f64 / self.cycles.max(1) as f64
    }
    /// CPI of a component.
    pub fn cpi_of(&self, method: &str, c: Comp) -> f64 {
        self.stacks[method][c as usize] as f64 / self.instructions.max(1) as f64
    }
}

/// Per method: average and maximum error over the studies.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Summary {
    pub avg_error_pp: f64,
    pub max_error_pp: f64,
}

/// A whole study: every workload and trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub instructions: u64,
    pub warmup: u64,
    pub config: sim::Config,
    pub studies: Vec<Study>,
    /// Over every study (workloads and traces).
    pub summary: BTreeMap<String, Summary>,
    /// Over the synthetic workloads only.
    pub summary_workloads: BTreeMap<String, Summary>,
    /// Over the traces only.
    pub summary_traces: BTreeMap<String, Summary>,
    /// The simulations its studies hold (each its real run and its idealised
    /// runs), whether run for this report or, in a sweep, taken from an
    /// earlier point's ([`run_study_reusing`]).
    pub runs: usize,
    /// Wall time of the study; not in `stacks.json`, so that the same inputs
    /// give byte-identical files.
    #[serde(skip)]
    pub seconds: f64,
}

/// Average and maximum error per compared method over `studies` (empty if none).
pub fn summarise<'a>(
    studies: impl Iterator<Item = &'a Study> + Clone,
) -> BTreeMap<String, Summary> {
    let mut out = BTreeMap::new();
    if studies.clone().next().is_none() {
        return out;
    }
    for m in COMPARED {
        let e: Vec<f64> = studies.clone().map(|s| s.errors_pp[m]).collect();
        out.insert(
            m.to_string(),
            Summary {
                avg_error_pp: e.iter().sum::<f64>() / e.len() as f64,
                max_error_pp: e.iter().copied().fold(0.0, f64::max),
            },
        );
    }
    out
}

pub(crate) fn ideal_name(m: Mask) -> String {
    let names: Vec<&str> = (1..NCOMP)
        .filter(|&k| m >> k & 1 == 1)
        .map(|k| COMPONENTS[k])
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(",")
    }
}

pub(crate) fn counters_stack(c: &events::Counters) -> Stack {
    let mut s = [0i64; NCOMP];
    for (k, &ctr) in Counter::COMPONENTS.iter().enumerate() {
        s[k + 1] = c.get(ctr) as i64;
    }
    s[0] = c.base() as i64;
    s
}

/// The naive stack from miss counts `m` (all paths or committed path): each
/// count times its fixed penalty, base the rest of the `cycles`. An error
/// names a component or base beyond 64-bit cycles, which no run reaches: only
/// counts or latencies edited into a `stacks.json` (`--check-only`) can.
pub fn naive_stack(cfg: &sim::Config, m: &sim::MissCounts, cycles: u64) -> Result<Stack> {
    let l2 = cfg.l2.latency as i128;
    let mut s = [0i128; NCOMP];
    s[Comp::L1i as usize] = m.l1i as i128 * l2;
    s[Comp::L2i as usize] = m.l2i as i128 * cfg.memory_latency as i128;
    s[Comp::Itlb as usize] = m.itlb as i128 * cfg.itlb.miss_latency as i128;
    s[Comp::Bpred as usize] = m.mispredicts as i128 * cfg.core.frontend_stages as i128;
    s[Comp::L1d as usize] = m.l1d as i128 * l2;
    s[Comp::L2d as usize] = m.l2d as i128 * cfg.memory_latency as i128;
    s[Comp::Dtlb as usize] = m.dtlb as i128 * cfg.dtlb.miss_latency as i128;
    s[Comp::Longlat as usize] = m.longlat_cycles as i128;
    // at most 8 terms of 2^64 x 2^64: no overflow in 128 bits
    s[0] = cycles as i128 - s[1..].iter().sum::<i128>();
    let mut out = [0i64; NCOMP];
    // the components first: one too large makes the base too large too
    for k in (1..NCOMP).chain([0]) {
        let (v, c) = (s[k], COMPONENTS[k]);
        out[k] = i64::try_from(v).map_err(|_| {
            anyhow::anyhow!("the naive {c} component is {v} cycles, beyond 64 bits")
        })?;
    }
    Ok(out)
}

/// The reference stack of `order` from the cycles of its runs (`runs[k]`: the
/// first `k` steps real, `runs[8]` the real run).
pub fn reference_stack(order: &[Comp; 8], runs: &[u64; 9]) -> Stack {
    let mut s = [0i64; NCOMP];
    s[0] = runs[0] as i64;
    for (k, &c) in order.iter().enumerate() {
        s[c as usize] = runs[k + 1] as i64 - runs[k] as i64;
    }
    s
}

/// The reference stacks (one per order of [`ORDERS`]) of a real run of
/// `cycles` from the cycles of the idealised runs, named as in
/// [`Study::ideal_runs`]; an error names a run that is missing.
pub fn reference_stacks(
    cycles: u64,
    ideal_runs: &BTreeMap<String, u64>,
) -> Result<BTreeMap<String, Stack>> {
    let mut out = BTreeMap::new();
    for (name, order) in &ORDERS {
        let masks = order_masks(order);
        let mut runs = [cycles; 9];
        for (r, &m) in runs.iter_mut().zip(&masks) {
            if m != 0 {
                let k = ideal_name(m);
                *r = *ideal_runs
                    .get(&k)
                    .with_context(|| format!("no idealised run `{k}`"))?;
            }
        }
        out.insert(name.to_string(), reference_stack(order, &runs));
    }
    Ok(out)
}

/// The naive stacks (`naive`: all paths, `naive_nonspec`: the committed path)
/// of a real run's counts under the machine `cfg`.
pub fn naive_stacks(cfg: &sim::Config, st: &sim::Stats) -> Result<[(String, Stack); 2]> {
    Ok([
        ("naive".into(), naive_stack(cfg, &st.all, st.cycles)?),
        (
            "naive_nonspec".into(),
            naive_stack(cfg, &st.committed, st.cycles)?,
        ),
    ])
}

/// Each method's average penalty per event (Figures 4, 6, 9): its component
/// over the committed-path events (the naive method: all-path events).
pub fn penalties_of(
    stacks: &BTreeMap<String, Stack>,
    st: &sim::Stats,
) -> BTreeMap<String, Penalties> {
    let per = |x: i64, n: u64| (n > 0).then(|| x as f64 / n as f64);
    METHODS
        .iter()
        .filter_map(|&m| {
            let sk = stacks.get(m)?;
            let ev = if m == "naive" { &st.all } else { &st.committed };
            Some((
                m.to_string(),
                Penalties {
                    l1i: per(sk[Comp::L1i as usize], ev.l1i),
                    bpred: per(sk[Comp::Bpred as usize], ev.mispredicts),
                    l2d: per(sk[Comp::L2d as usize], ev.l2d),
                },
            ))
        })
        .collect()
}

/// Refuses an idealised run (`m`) that measured another number of
/// instructions than the real run, or committed other instructions: each
/// run's (measured instructions, stream digest
/// ([`sim::Core::stream_digest`])).
pub(crate) fn same_stream(
    src: &Source,
    m: Mask,
    (n, digest): (u64, u64),
    (real_n, real): (u64, u64),
) -> Result<()> {
    if n != real_n {
        bail!(
            "{}: the idealised run ({}) measured {n} instructions, the real run {real_n}",
            src.name(),
            ideal_name(m),
        );
    }
    if digest != real {
        bail!(
            "{}: the idealised run ({}) committed other instructions than the real run (stream digest {digest:#018x} against {real:#018x}): the reference would compare two programs",
            src.name(),
            ideal_name(m),
        );
    }
    Ok(())
}

/// Max over components of |share_m - share_ref| in percentage points.
pub fn error_pp(m: &Stack, reference: &Stack, cycles: u64) -> f64 {
    let t = cycles.max(1) as f64;
    m.iter()
        .zip(reference)
        .map(|(a, b)| 100.0 * (a - b).abs() as f64 / t)
        .fold(0.0, f64::max)
}

fn study(
    src: &Source,
    s: &Settings,
    real: &RealRun,
    ideal: &BTreeMap<Mask, IdealRun>,
) -> Result<Study> {
    let st = &real.stats;
    let cycles = st.cycles;
    // the same committed stream: every run measured the same instructions
    // (retirement stops at exactly the warm-up and the measured count)
    // ... and the same instructions, in the same order, with the same
    // branch outcomes and addresses, warm-up included
    for (&m, run) in ideal {
        same_stream(
            src,
            m,
            (run.instructions, run.digest),
            (st.instructions, real.digest),
        )?;
    }
    let ideal_runs: BTreeMap<String, u64> = ideal
        .iter()
        .map(|(&m, run)| (ideal_name(m), run.cycles))
        .collect();
    let mut stacks = reference_stacks(cycles, &ideal_runs)
        .with_context(|| format!("{}: the reference", src.name()))?;
    stacks.insert("fmt".to_string(), counters_stack(&real.fmt));
    stacks.insert("sfmt".to_string(), counters_stack(&real.sfmt));
    stacks.extend(
        naive_stacks(&s.cfg, st).with_context(|| format!("{}: the naive stacks", src.name()))?,
    );
    stacks.insert("power5".to_string(), real.power5.stack());
    for (k, c) in [("fmt", &real.fmt), ("sfmt", &real.sfmt)] {
        if c.get(Counter::Cycles) != cycles {
            bail!(
                "{}: the {k} unit counted {} cycles, the core {cycles}",
                src.name(),
                c.get(Counter::Cycles)
            );
        }
    }
    let reference = stacks["reference"];
    let errors_pp = COMPARED
        .iter()
        .map(|&m| (m.to_string(), error_pp(&stacks[m], &reference, cycles)))
        .collect();
    let penalties = penalties_of(&stacks, st);
    let o = &real.overlap;
    Ok(Study {
        name: src.name(),
        kind: src.kind().into(),
        seed: src.seed(),
        instructions: st.instructions,
        cycles,
        cpi: st.cpi(),
        stacks,
        errors_pp,
        penalties,
        overlap: OverlapReport {
            cycles: o.cycles,
            frontend_cycles: o.frontend,
            backend_cycles: o.backend,
            overlap_cycles: o.overlap,
            fraction: o.fraction(),
        },
        ideal_runs,
        stats: st.clone(),
        saturated: real.saturated.clone(),
        census: real.census.clone(),
    })
}

/// Run every source (real run plus the idealised runs of every order), in
/// parallel on `jobs` threads (0: rayon's default), calling `progress` with
/// (0, runs in all) before the first run and with (runs done, runs in all)
/// after each.
pub fn run_study(
    sources: &[Source],
    s: &Settings,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Report> {
    run_study_reusing(sources, s, jobs, progress, &IdealRuns::default())
}

/// Idealised runs already made, by source (its index in the list every
/// study of a sweep is given), machine ([`sim::Config::timing`], idealisation
/// included) and idealisation set: a sweep's points that differ only in keys
/// that change no timing (`unit.*`, `core.report_backend_full`) run each
/// idealised run once.
#[derive(Default)]
pub struct IdealRuns(std::sync::Mutex<BTreeMap<(usize, String, Mask), IdealRun>>);

impl IdealRuns {
    fn key(source: usize, cfg: &sim::Config, mask: Mask) -> (usize, String, Mask) {
        let timing =
            serde_json::to_string(&cfg_with(cfg, mask).timing()).expect("config serialises");
        (source, timing, mask)
    }
}

/// Runs `run` on each (source index, idealisation set) of `work` in
/// parallel on `jobs` threads (0: one per core; never more threads than
/// runs), after sorting `work` so that the long runs start first (traces,
/// then real runs, mask 0); returns each run's result in the sorted
/// `work`'s order, an error naming its run, and calls `progress` with (0,
/// runs in all) before the first and (runs done, runs in all) after each.
pub(crate) fn run_all<T: Send>(
    sources: &[Source],
    work: &mut [(usize, Mask)],
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
    run: impl Fn(&Source, Mask) -> Result<T> + Sync,
) -> Result<Vec<Result<T>>> {
    work.sort_by_key(|&(i, m)| (!matches!(sources[i], Source::Trace(_)), m != 0, i, m));
    let total = work.len();
    if total == 0 {
        return Ok(Vec::new());
    }
    progress(0, total);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.min(total))
        .build()
        .context("starting the worker threads")?;
    Ok(pool.install(|| {
        work.par_iter()
            .map(|&(i, m)| {
                let src = &sources[i];
                let r = run(src, m).with_context(|| {
                    format!("{} {} (ideal: {})", src.kind(), src.name(), ideal_name(m))
                });
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(n, total);
                r
            })
            .collect()
    }))
}

/// [`run_study`], taking each idealised run found in `reuse` from there
/// instead of running it again, and adding those it runs. `progress` counts
/// the runs made; the report holds every run of its studies either way.
pub fn run_study_reusing(
    sources: &[Source],
    s: &Settings,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
    reuse: &IdealRuns,
) -> Result<Report> {
    let start = std::time::Instant::now();
    let masks = masks_of(ORDERS.iter().map(|(_, o)| o));
    let mut work: Vec<(usize, Mask)> = Vec::new();
    let mut ideal: Vec<BTreeMap<Mask, IdealRun>> = vec![BTreeMap::new(); sources.len()];
    let known = reuse.0.lock().expect("no run panicked holding it");
    for (i, _) in sources.iter().enumerate() {
        for &m in &masks {
            match known.get(&IdealRuns::key(i, &s.cfg, m)) {
                Some(&run) if m != 0 => {
                    ideal[i].insert(m, run);
                }
                _ => work.push((i, m)),
            }
        }
    }
    drop(known);
    let study_runs = sources.len() * masks.len();
    let outcomes = run_all(sources, &mut work, jobs, progress, |src, m| {
        run_job(src, s, m)
    })?;
    let mut real: Vec<Option<RealRun>> = vec![None; sources.len()];
    for (&(i, m), o) in work.iter().zip(outcomes) {
        match o? {
            Outcome::Real(r) => real[i] = Some(*r),
            Outcome::Ideal(run) => {
                ideal[i].insert(m, run);
                reuse
                    .0
                    .lock()
                    .expect("no run panicked holding it")
                    .insert(IdealRuns::key(i, &s.cfg, m), run);
            }
        }
    }
    let mut studies = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let r = real[i].as_ref().expect("every source has a real run");
        studies.push(study(src, s, r, &ideal[i])?);
    }
    Ok(Report {
        instructions: s.instructions,
        warmup: s.warmup,
        config: s.cfg.clone(),
        summary: summarise(studies.iter()),
        summary_workloads: summarise(studies.iter().filter(|x| x.kind == "workload")),
        summary_traces: summarise(studies.iter().filter(|x| x.kind == "trace")),
        studies,
        runs: study_runs,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The sources of a study of several (`stacks`, `sweep`, `multiplex`).
#[derive(clap::Args, Debug, Clone)]
pub struct SourceArgs {
    /// Suite workloads: `all` (the suite), `limits` (the limit workloads), `none`, or a comma-separated list (`cpistack workloads --all`).
    #[arg(long, default_value = "all")]
    pub workloads: String,
    /// ChampSim traces to study as well (comma-separated or repeated; a path
    /// with a comma in it: `--trace PATH`).
    #[arg(long, value_name = "FILE,...", value_delimiter = ',', value_parser = trace_path)]
    pub traces: Vec<PathBuf>,
    /// One ChampSim trace, taken whole (repeatable).
    #[arg(long = "trace", value_name = "FILE")]
    pub trace: Vec<PathBuf>,
    /// Seed of the synthetic workloads.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl SourceArgs {
    /// The sources named, in order: [`sources_of`], for a study writing
    /// `files` into `out`.
    pub fn sources(&self, out: &Path, files: &[&str]) -> Result<Vec<Source>> {
        let given: Vec<(&str, &PathBuf)> = self
            .traces
            .iter()
            .map(|t| ("--traces", t))
            .chain(self.trace.iter().map(|t| ("--trace", t)))
            .collect();
        sources_of(&self.workloads, &given, self.seed, out, files)
    }
}

/// Arguments of `cpistack stacks`.
#[derive(clap::Args, Debug, Clone)]
pub struct StacksArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Instructions measured per run.
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::run::at_least_one::<u64>)]
    pub instructions: u64,
    /// Instructions committed before counting starts.
    #[arg(long, default_value_t = 200_000)]
    pub warmup: u64,
    /// Output directory (created if missing).
    #[arg(long, default_value = "stacks")]
    pub out: PathBuf,
    /// Runs in parallel (default, or 0: one per core; never more than the runs).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Also print, per study, every method's stack (shares of the cycles,
    /// with the reference's and each method's error), and why the ROB head
    /// waited in FMT's `l1d` and `l2d` cycles, on standard output.
    #[arg(long)]
    pub detail: bool,
    /// Run nothing: check that `--out` holds a complete, well-formed set of
    /// outputs whose numbers agree with each other (the only other option it
    /// takes is `--out`).
    #[arg(long, conflicts_with_all = ["workloads", "traces", "trace", "instructions", "warmup", "seed", "jobs", "detail", "set", "config", "ideal"])]
    pub check_only: bool,
    #[command(flatten)]
    pub machine: crate::run::MachineArgs,
}

/// One name of the `--traces` list; an empty one (`a,,b`, a trailing comma)
/// is refused as such.
fn trace_path(s: &str) -> std::result::Result<PathBuf, String> {
    if s.is_empty() {
        return Err("an empty name in the list (two commas in a row, or one at an end)".into());
    }
    Ok(PathBuf::from(s))
}

/// The sources `--workloads` and `--traces` name.
pub fn sources(args: &StacksArgs) -> Result<Vec<Source>> {
    args.sources.sources(&args.out, &OUTPUT_FILES)
}

/// The sources of a study of several (`stacks`, `sweep`, `multiplex`): the
/// `--workloads` list (`all`, `limits`, `none` or names) seeded `seed`, then
/// the traces, each with the option that gave it. A trace must be a regular
/// file whose name a CSV field can hold, must not be one of the study's
/// output `files` in `out`, and no two sources may share a name.
pub(crate) fn sources_of(
    workloads: &str,
    traces: &[(&str, &PathBuf)],
    seed: u64,
    out_dir: &Path,
    files: &[&str],
) -> Result<Vec<Source>> {
    let mut out = Vec::new();
    let items: Vec<&str> = workloads.split(',').map(str::trim).collect();
    // `a,,b` or a comma at an end is a slip, refused as `--traces` refuses it
    if items.iter().any(|w| w.is_empty()) {
        bail!(
            "--workloads `{workloads}`: an empty name in the list (two commas in a row, one at an end, \
             or nothing at all; `none` runs no workload)"
        );
    }
    let sets = match items[..] {
        ["none"] => Some(vec![]),
        ["all"] => Some(sim::workloads::suite()),
        ["limits"] => Some(sim::workloads::limits()),
        _ => None,
    };
    match sets {
        Some(specs) => out.extend(
            specs
                .into_iter()
                .map(|spec| Source::Workload { spec, seed }),
        ),
        None => {
            for &w in &items {
                if ["all", "limits", "none"].contains(&w) {
                    bail!("--workloads: `{w}` stands for a set of its own and cannot be listed with names (give `{w}` alone, or the names)");
                }
                let s = Source::workload(w, seed)?;
                // a study is named by its source: a second one would repeat
                // the first in every output and count twice in the averages
                if out.iter().any(|o: &Source| o.name() == s.name()) {
                    bail!("--workloads: `{w}` is named twice");
                }
                out.push(s);
            }
        }
    }
    for &(opt, t) in traces {
        // each study reads its trace once per run (18 runs): a pipe or a
        // device could be read only once
        match std::fs::metadata(t) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("{opt}: {}: no such file", t.display())
            }
            Err(e) => bail!("{opt}: {}: {e}", t.display()),
            Ok(m) if m.is_dir() => bail!("{opt}: {}: is a directory", t.display()),
            Ok(m) if !m.is_file() => bail!(
                "{opt}: {}: not a regular file (a pipe or a device); each run of a study \
                 reads the trace again, so give a file",
                t.display()
            ),
            Ok(_) => {}
        }
        let s = Source::Trace(t.clone());
        // the name is a field of stacks.csv and penalties.csv
        if s.name().contains([',', '"', '\n', '\r']) {
            bail!(
                "{opt}: {}: its name `{}` has a comma, quote or line break, which the CSV outputs cannot hold; rename the file",
                t.display(),
                s.name()
            );
        }
        for f in files {
            crate::paths::refuse_overwrite(t, &out_dir.join(f), "--out")?;
        }
        // one file twice (under another name, a link) would count twice in
        // the averages
        if let Some(Source::Trace(p)) = out
            .iter()
            .find(|o| matches!(o, Source::Trace(p) if crate::paths::same_file(p, t)))
        {
            if p == t {
                bail!("{opt}: {} is given twice", t.display());
            }
            bail!(
                "{opt}: {} is {} again (the same file, given twice)",
                t.display(),
                p.display()
            );
        }
        // a study is named by its source; two traces of one name would be
        // indistinguishable in every output
        if let Some(o) = out.iter().find(|o| o.name() == s.name()) {
            let other = match o {
                Source::Trace(p) => format!("the trace {}", p.display()),
                Source::Workload { .. } => "the workload".to_string(),
            };
            bail!(
                "{opt}: {} would be named `{}` in the outputs, as {other} is; rename the file",
                t.display(),
                s.name()
            );
        }
        out.push(s);
    }
    if out.is_empty() {
        bail!("nothing to run: give --workloads and/or --traces");
    }
    Ok(out)
}

/// A progress bar of `template` on standard error when it is a terminal,
/// else a hidden one (a log or a pipe gets no bar).
pub(crate) fn progress_bar(template: &str) -> indicatif::ProgressBar {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(0);
    b.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b
}

/// `cpistack stacks`.
pub fn cmd(args: &StacksArgs) -> Result<()> {
    if args.check_only {
        check_dir(&args.out)?;
        println!(
            "{}: complete, well-formed and consistent",
            args.out.display()
        );
        return Ok(());
    }
    let cfg = args.machine.build()?;
    let srcs = sources(args)?;
    crate::paths::into_out_dir(&args.out, &OUTPUT_FILES, &args.machine, || {
        write_study(args, cfg, &srcs)
    })
}

/// The runs of `cpistack stacks` and their outputs, into an `--out` that exists.
fn write_study(args: &StacksArgs, cfg: sim::Config, srcs: &[Source]) -> Result<()> {
    let settings = Settings {
        cfg,
        instructions: args.instructions,
        warmup: args.warmup,
    };
    let bar = progress_bar("stacks [{bar:40}] {pos}/{len} runs ({elapsed}, eta {eta})");
    let report = run_study(srcs, &settings, args.jobs.unwrap_or(0), &|n, total| {
        bar.set_length(total as u64);
        bar.set_position(n as u64);
    })?;
    bar.finish_and_clear();
    write_all(&report, &args.out)?;
    check_dir(&args.out)?;
    print!("{}", output::text(&report));
    if args.detail {
        print!("{}", output::detail_text(&report));
    }
    eprintln!(
        "{} runs in {:.1} s; wrote {} to {}",
        report.runs,
        report.seconds,
        OUTPUT_FILES.join(", "),
        args.out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: StacksArgs,
    }

    fn sources_of(args: &[&str]) -> Result<Vec<Source>> {
        let out = std::env::temp_dir().join(format!("cpistack-sources-{}", std::process::id()));
        let out = out.display().to_string();
        let cli = Cli::try_parse_from(
            ["stacks", "--out", out.as_str()]
                .into_iter()
                .chain(args.iter().copied()),
        )
        .expect("the arguments parse");
        sources(&cli.a)
    }

    /// A study of `cycles` and `instructions` with the given stacks (the rest empty).
    fn study_of(stacks: &[(&str, Stack)], cycles: u64, instructions: u64) -> Study {
        Study {
            name: "w".into(),
            kind: "workload".into(),
            seed: Some(1),
            instructions,
            cycles,
            cpi: cycles as f64 / instructions as f64,
            stacks: stacks.iter().map(|&(m, s)| (m.to_string(), s)).collect(),
            errors_pp: BTreeMap::new(),
            penalties: BTreeMap::new(),
            overlap: OverlapReport::default(),
            ideal_runs: BTreeMap::new(),
            stats: sim::Stats::default(),
            saturated: Vec::new(),
            census: Vec::new(),
        }
    }

    /// A component's share is its cycles over the run's cycles, in percent,
    /// and its CPI its cycles over the run's instructions; a negative
    /// component keeps its sign.
    #[test]
    fn shares_and_cpis_are_a_components_cycles_over_the_runs() {
        let st = study_of(&[("fmt", [200, 100, 0, 0, 60, 0, -20, 0, 60])], 400, 200);
        assert_eq!(st.share("fmt", Comp::Base), 50.0);
        assert_eq!(st.share("fmt", Comp::L1i), 25.0);
        assert_eq!(st.share("fmt", Comp::L2d), -5.0);
        assert_eq!(st.share("fmt", Comp::Longlat), 15.0);
        assert_eq!(st.cpi_of("fmt", Comp::L1i), 0.5);
        assert_eq!(st.cpi_of("fmt", Comp::Bpred), 0.3);
        assert_eq!(st.cpi_of("fmt", Comp::L2d), -0.1);
    }

    /// The reference compares runs of one committed stream: an idealised run
    /// whose stream digest or measured instructions differ from the real
    /// run's is refused, naming it.
    #[test]
    fn an_idealised_run_of_another_stream_is_refused() {
        let src = Source::workload("fpmix", 1).unwrap();
        let s = Settings {
            cfg: sim::Config::default(),
            instructions: 3_000,
            warmup: 1_000,
        };
        let Outcome::Real(real) = run_job(&src, &s, 0).unwrap() else {
            panic!("mask 0 is the real run")
        };
        let m = mask_of(&[Comp::L1d, Comp::Bpred]);
        let Outcome::Ideal(run) = run_job(&src, &s, m).unwrap() else {
            panic!("an idealised run")
        };
        assert_eq!(run.digest, real.digest, "the same stream, another timing");
        let other = IdealRun {
            digest: run.digest ^ 1,
            ..run
        };
        let ideal = BTreeMap::from([(m, other)]);
        let e = study(&src, &s, &real, &ideal).unwrap_err().to_string();
        assert!(
            e.starts_with("fpmix: the idealised run (bpred,l1d) committed other instructions"),
            "{e}"
        );
        // one that measured fewer instructions, named before its digest
        let short = IdealRun {
            instructions: run.instructions - 1,
            ..run
        };
        let ideal = BTreeMap::from([(m, short)]);
        let e = study(&src, &s, &real, &ideal).unwrap_err().to_string();
        assert_eq!(
            e,
            "fpmix: the idealised run (bpred,l1d) measured 2999 instructions, the real run 3000"
        );
    }

    /// A study is named by its source, so a source named twice is refused
    /// (it would repeat in every output and count twice in the averages),
    /// whether two workloads, two traces or a trace named as a workload is.
    #[test]
    fn a_source_named_twice_is_refused() {
        let names = |a: &[&str]| -> Vec<String> {
            sources_of(a)
                .unwrap()
                .iter()
                .map(|s| s.name().to_string())
                .collect()
        };
        assert_eq!(names(&["--workloads", " mlp, chase "]), ["mlp", "chase"]);
        let e = sources_of(&["--workloads", "mlp,chase, mlp"]).unwrap_err();
        assert_eq!(e.to_string(), "--workloads: `mlp` is named twice");
        for set in ["all", "limits", "none"] {
            let e = sources_of(&["--workloads", &format!("mlp,{set}")]).unwrap_err();
            assert!(
                e.to_string().contains(&format!("`{set}` stands for a set")),
                "{e}"
            );
            // alone, spaces around it, it is the set (none alone is refused
            // for another reason: nothing to study)
            let r = sources_of(&["--workloads", &format!(" {set} ")]);
            assert_eq!(r.is_ok(), set != "none", "{set}");
            assert!(!format!("{:?}", r.err()).contains("stands for"), "{set}");
        }

        let dir = crate::fresh_dir("sources-t");
        std::fs::create_dir_all(dir.join("b")).unwrap();
        let a = dir.join("mlp.champsimtrace.xz");
        let b = dir.join("b").join("mlp.champsimtrace.xz");
        for f in [&a, &b] {
            std::fs::write(f, b"").unwrap();
        }
        let (a, b) = (a.display().to_string(), b.display().to_string());
        let e = sources_of(&["--workloads", "none", "--traces", &format!("{a},{b}")]).unwrap_err();
        assert!(
            e.to_string().contains(&format!("as the trace {a} is")),
            "{e}"
        );
        let e = sources_of(&["--workloads", "mlp", "--trace", &a]).unwrap_err();
        assert!(e.to_string().contains("as the workload is"), "{e}");
        assert!(e.to_string().starts_with("--trace: "), "{e}");
        // the same file twice, by two paths; a file whose name makes no name
        let again = dir.join("b").join("..").join("mlp.champsimtrace.xz");
        let e = sources_of(&[
            "--workloads",
            "none",
            "--trace",
            &a,
            "--trace",
            &again.display().to_string(),
        ])
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "--trace: {} is {a} again (the same file, given twice)",
                again.display()
            )
        );
        let e = sources_of(&["--workloads", "none", "--trace", &a, "--trace", &a]).unwrap_err();
        assert_eq!(e.to_string(), format!("--trace: {a} is given twice"));
        // under another name (a link): it would count twice in the averages
        #[cfg(unix)]
        {
            let link = dir.join("other.champsimtrace.xz");
            std::os::unix::fs::symlink(&a, &link).unwrap();
            let link = link.display().to_string();
            let e = sources_of(&["--workloads", "none", "--traces", &format!("{a},{link}")])
                .unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("--traces: {link} is {a} again (the same file, given twice)")
            );
        }
        // named as `run` names them: the suffixes go, other dots stay, and
        // a suffix that is the whole name stays (a name is never empty)
        for (file, name) in [
            (".champsimtrace.xz", ".champsimtrace"),
            ("602.gcc_s-734B.champsimtrace.xz", "602.gcc_s-734B"),
            ("605.mcf_s-472B.trace.gz", "605.mcf_s-472B"),
            ("raw.bin", "raw.bin"),
        ] {
            let f = dir.join(file);
            std::fs::write(&f, b"").unwrap();
            let f = f.display().to_string();
            let s = sources_of(&["--workloads", "none", "--trace", &f]).unwrap();
            assert_eq!(s[0].name(), name);
        }
        // two SPEC traces of one benchmark are two studies
        let simpoints = ["602.gcc_s-734B", "602.gcc_s-1850B"].map(|n| {
            dir.join(format!("{n}.champsimtrace.xz"))
                .display()
                .to_string()
        });
        for f in &simpoints {
            std::fs::write(f, b"").unwrap();
        }
        let s = sources_of(&["--workloads", "none", "--traces", &simpoints.join(",")]).unwrap();
        assert_eq!(s.len(), 2);
        // each error names the option the path came with
        let missing = dir.join("nosuch.xz").display().to_string();
        for opt in ["--trace", "--traces"] {
            let e = sources_of(&["--workloads", "none", opt, &missing]).unwrap_err();
            assert_eq!(e.to_string(), format!("{opt}: {missing}: no such file"));
        }
        // a directory, and a device or pipe (each run reads the trace again)
        let d = dir.display().to_string();
        let e = sources_of(&["--workloads", "none", "--trace", &d]).unwrap_err();
        assert_eq!(e.to_string(), format!("--trace: {d}: is a directory"));
        #[cfg(unix)]
        {
            let e = sources_of(&["--workloads", "none", "--traces", "/dev/null"]).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("--traces: /dev/null: not a regular file (a pipe or a device)"),
                "{e}"
            );
        }
        // an empty workload name, as an empty trace name, is refused
        for w in [",balanced,,", ",", "", "balanced, ", "none,"] {
            let e = sources_of(&["--workloads", w]).unwrap_err();
            assert!(
                e.to_string().contains("an empty name in the list"),
                "{w:?}: {e}"
            );
        }
        assert_eq!(
            sources_of(&["--workloads", " balanced , mlp"])
                .unwrap()
                .len(),
            2
        );
    }
}
