//! `cpistack phases`: CPI stacks over time, and how far each method is from
//! the simulation reference interval by interval.
//!
//! The paper compares whole-program stacks. A profiler reads the counters
//! periodically instead, and an architect looks at phases: does FMT's stack
//! still hold over an interval of 50 k instructions? This module answers that
//! with the same runs as `cpistack stacks`, sampled at instruction boundaries.
//!
//! - **Boundaries.** Interval `k` of a run ends at the end of the cycle in which
//!   its `(k+1)·N`-th measured instruction commits (`N` = `--interval`; the last
//!   interval ends with the run, and a remainder of fewer than
//!   [`MIN_INTERVAL`] instructions joins it: [`intervals_of`]). Every run of a
//!   study commits the same instructions (checked by the stream digest, as
//!   `stacks` does), so in every run an interval ends with the commit of the
//!   same instruction; the up to `retire_width - 1` instructions that commit
//!   in the same cycle after it need not be the same in each run, and cost
//!   that cycle no more. The reference's components over an interval are
//!   differences of the idealised runs' cycles up to those commits: exactly
//!   the reference of `stacks`, cut at the boundaries. Summed over the
//!   intervals, every stack is the whole run's (tested); each end is checked
//!   to fall within `retire_width` instructions of its boundary, and a test
//!   that steps the core by hand pins the cycles.
//! - **Counters as software reads them.** FMT's and sFMT's stacks over an
//!   interval are the differences of the `hw` unit's global counters between
//!   two reads, taken modulo `2^unit.global_bits`, as a profiler unwraps a
//!   counter that wrapped between its reads: so the counters may be narrow as
//!   long as no counter moves by `2^global_bits` between two reads. An
//!   interval in which one does is an error: the interval's cycles are
//!   checked, and every difference is held to a 64-bit twin of the unit
//!   (a component can move by more than the interval's cycles: a penalty
//!   still held in a row at a boundary is charged in the interval in which
//!   its row leaves the table).
//! - **Methods.** The standard-order reference, the inverse order (its
//!   distance from the standard order is the reference's own uncertainty),
//!   FMT, sFMT and the POWER5-style accountant. The naive methods need miss
//!   counts per interval, which the bundles do not carry; they are left out.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use events::{Consumer, Counter, CounterUnit, Counters, CycleEvents, Variant};
use serde::Serialize;

use crate::stacks::{
    cfg_with, counters_stack, error_pp, ideal_name, masks_of, order_masks, reference_stack,
    same_stream, Mask, Power5, Settings, Source, Stack, COMPONENTS, INVERSE_ORDER, NCOMP,
    STANDARD_ORDER,
};

/// Methods of a phase study, the standard-order reference first.
pub const METHODS: [&str; 5] = ["reference", "reference_inverse", "fmt", "sfmt", "power5"];

/// The methods whose error against the standard-order reference is reported.
pub const COMPARED: [&str; 4] = ["fmt", "sfmt", "power5", "reference_inverse"];

/// Fewest instructions an interval may have (a boundary is a cycle; a
/// shorter interval would be a few cycles).
pub const MIN_INTERVAL: u64 = 1_000;

/// Most intervals a study may have (the outputs hold one row per interval
/// and method).
pub const MAX_INTERVALS: u64 = 2_000;

/// Output files of `cpistack phases`.
pub const OUTPUT_FILES: [&str; 4] = ["phases.csv", "phases.json", "phases.svg", "index.html"];

/// Header of `phases.csv`.
pub const CSV_HEADER: &str = "source,kind,interval,first_instruction,instructions,cycles,cpi,method,base,l1i,l2i,itlb,bpred,l1d,l2d,dtlb,longlat,error_pp";

/// Counted cycles and instructions up to the end of a boundary cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Mark {
    cycles: u64,
    instructions: u64,
}

/// How many intervals of `interval` instructions a run of `instructions`
/// is cut into: a remainder of fewer than [`MIN_INTERVAL`] instructions
/// joins the last whole interval, so that no interval ends within a few
/// cycles of the run's end (where one run could end both in one cycle and
/// another not).
pub fn intervals_of(instructions: u64, interval: u64) -> u64 {
    let whole = instructions / interval;
    if instructions % interval >= MIN_INTERVAL || whole == 0 {
        whole + 1
    } else {
        whole
    }
}

/// The clock of a run as its bundles show it: counted cycles and committed
/// instructions (`count_enable` on), and the next boundary.
#[derive(Clone, Debug)]
struct Clock {
    interval: u64,
    next: u64,
    /// The last boundary inside the run; the run's end closes the last interval.
    last: u64,
    now: Mark,
}

impl Clock {
    fn new(instructions: u64, interval: u64) -> Self {
        Self {
            interval,
            next: interval,
            last: (intervals_of(instructions, interval) - 1) * interval,
            now: Mark::default(),
        }
    }

    /// Counts `ev`; true when the cycle ends an interval: the cycle in which
    /// the next boundary's instruction commits. An interval has at least
    /// [`MIN_INTERVAL`] instructions, so no cycle ends two.
    #[inline]
    fn tick(&mut self, ev: &CycleEvents) -> bool {
        if !ev.count_enable {
            return false;
        }
        self.now.cycles += 1;
        self.now.instructions += ev.retired as u64;
        let end = self.now.instructions >= self.next && self.next <= self.last;
        if end {
            self.next += self.interval;
        }
        end
    }
}

/// An idealised run's boundaries (its start first).
struct IdealSampler {
    clock: Clock,
    marks: Vec<Mark>,
}

impl Consumer for IdealSampler {
    #[inline]
    fn cycle(&mut self, ev: &CycleEvents) {
        if self.clock.tick(ev) {
            self.marks.push(self.clock.now);
        }
    }
}

/// What the real run reads at a boundary (and at its start).
#[derive(Clone, Copy, Debug)]
struct RealMark {
    at: Mark,
    fmt: Counters,
    sfmt: Counters,
    /// The twins' counters (FMT, sFMT), when the units are narrower than 64 bits.
    wide: Option<[Counters; 2]>,
    /// The POWER5-style stack so far.
    power5: Stack,
}

/// The real run: both units and the POWER5-style accountant, read at every
/// boundary after they took the boundary cycle. When the units' global
/// counters are narrower than 64 bits, a twin of each with 64-bit global
/// counters (the same unit otherwise: the width feeds nothing back) steps
/// beside it, so that an interval whose counters cannot be unwrapped is
/// found, not read as a wrong number.
struct RealSampler {
    clock: Clock,
    fmt: hw::Unit,
    sfmt: hw::Unit,
    wide: Option<[hw::Unit; 2]>,
    power5: Power5,
    marks: Vec<RealMark>,
}

impl RealSampler {
    fn read(&self) -> RealMark {
        RealMark {
            at: self.clock.now,
            fmt: self.fmt.view().counters,
            sfmt: self.sfmt.view().counters,
            wide: self
                .wide
                .as_ref()
                .map(|[f, s]| [f.view().counters, s.view().counters]),
            power5: self.power5.stack(),
        }
    }
}

impl Consumer for RealSampler {
    #[inline]
    fn cycle(&mut self, ev: &CycleEvents) {
        self.fmt.step(ev);
        self.sfmt.step(ev);
        if let Some([f, s]) = &mut self.wide {
            f.step(ev);
            s.step(ev);
        }
        self.power5.cycle(ev);
        if self.clock.tick(ev) {
            let m = self.read();
            self.marks.push(m);
        }
    }
}

enum Outcome {
    Ideal { marks: Vec<Mark>, digest: u64 },
    Real(Box<RealOut>),
}

struct RealOut {
    marks: Vec<RealMark>,
    stats: sim::Stats,
    digest: u64,
    saturated: Vec<String>,
}

fn check_clock(src: &Source, clock: &Clock, st: &sim::Stats) -> Result<()> {
    if clock.now.cycles != st.cycles || clock.now.instructions != st.instructions {
        bail!(
            "{}: the bundles counted {} cycles and {} instructions, the core {} and {}",
            src.name(),
            clock.now.cycles,
            clock.now.instructions,
            st.cycles,
            st.instructions
        );
    }
    Ok(())
}

fn run_job(src: &Source, s: &Settings, interval: u64, mask: Mask) -> Result<Outcome> {
    let cfg = cfg_with(&s.cfg, mask);
    let mut core = src.core(&cfg)?;
    core.set_warmup(s.warmup);
    let cap = (intervals_of(s.instructions, interval) + 1) as usize;
    if mask != 0 {
        let mut smp = IdealSampler {
            clock: Clock::new(s.instructions, interval),
            marks: Vec::with_capacity(cap),
        };
        smp.marks.push(smp.clock.now);
        core.run(s.instructions, &mut [&mut smp])?;
        check_clock(src, &smp.clock, core.stats())?;
        // the run's end closes the last interval
        smp.marks.push(smp.clock.now);
        return Ok(Outcome::Ideal {
            marks: smp.marks,
            digest: core.stream_digest(),
        });
    }
    let p = cfg.unit_params();
    let wide = events::Params {
        global_bits: 64,
        ..p
    };
    let mut smp = RealSampler {
        clock: Clock::new(s.instructions, interval),
        fmt: hw::Unit::new(p.with_variant(Variant::Fmt))?,
        sfmt: hw::Unit::new(p.with_variant(Variant::Sfmt))?,
        wide: if p.global_bits < 64 {
            Some([
                hw::Unit::new(wide.with_variant(Variant::Fmt))?,
                hw::Unit::new(wide.with_variant(Variant::Sfmt))?,
            ])
        } else {
            None
        },
        power5: Power5::new(),
        marks: Vec::with_capacity(cap),
    };
    let start = smp.read();
    smp.marks.push(start);
    core.run(s.instructions, &mut [&mut smp])?;
    check_clock(src, &smp.clock, core.stats())?;
    let last = smp.read();
    smp.marks.push(last);
    let mut saturated = Vec::new();
    for (k, u) in [("fmt", &smp.fmt), ("sfmt", &smp.sfmt)] {
        let v = u.view();
        if let Some(e) = v.error {
            bail!("the core emitted an illegal bundle (a simulator bug): {e}");
        }
        if v.saturated {
            saturated.push(k.to_string());
        }
    }
    Ok(Outcome::Real(Box::new(RealOut {
        marks: smp.marks,
        stats: core.stats().clone(),
        digest: core.stream_digest(),
        saturated,
    })))
}

/// One interval of a study.
#[derive(Clone, Debug, Serialize)]
pub struct Interval {
    /// The first measured instruction of the interval (from 0).
    pub first_instruction: u64,
    pub instructions: u64,
    /// The real run's cycles over the interval.
    pub cycles: u64,
    /// Each method's stack over the interval, in cycles ([`COMPONENTS`] order).
    pub stacks: BTreeMap<String, Stack>,
    /// Each compared method's error against the standard-order reference
    /// (percentage points of the interval's cycles).
    pub errors_pp: BTreeMap<String, f64>,
}

/// A method's errors over the intervals.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorSummary {
    /// Its error on the whole run (the stacks summed over the intervals).
    pub whole_run_pp: f64,
    pub mean_pp: f64,
    pub median_pp: f64,
    pub p90_pp: f64,
    pub max_pp: f64,
    /// The interval of the largest error (the first, on a tie).
    pub max_interval: usize,
}

/// A phase study of one source.
#[derive(Clone, Debug, Serialize)]
pub struct Phases {
    pub name: String,
    pub kind: String,
    pub seed: Option<u64>,
    pub instructions: u64,
    pub warmup: u64,
    pub interval: u64,
    pub cycles: u64,
    pub config: sim::Config,
    /// The methods (`fmt`, `sfmt`) whose unit had a local counter saturate.
    pub saturated: Vec<String>,
    pub intervals: Vec<Interval>,
    /// Every method's stack over the whole run (the sum of its intervals').
    pub whole: BTreeMap<String, Stack>,
    pub summary: BTreeMap<String, ErrorSummary>,
    /// Runs made and their wall time.
    pub runs: usize,
    #[serde(skip)]
    pub seconds: f64,
}

/// A unit's stack over one interval from its counters at the two ends, as
/// software unwraps them: each difference modulo `2^global_bits`.
fn counter_stack(
    a: &Counters,
    b: &Counters,
    global_bits: u32,
    cycles: u64,
) -> std::result::Result<Stack, String> {
    let mask = if global_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << global_bits) - 1
    };
    let mut d = Counters::default();
    for c in Counter::ALL {
        d.value[c.idx()] = b.get(c).wrapping_sub(a.get(c)) & mask;
    }
    if d.get(Counter::Cycles) != cycles {
        return Err(format!(
            "its cycles counter moved by {} over the interval, the core counted {cycles}",
            d.get(Counter::Cycles)
        ));
    }
    Ok(counters_stack(&d))
}

/// The first interval whose end in `ends` (a run's marks after its start)
/// is not where it must be: in the cycle in which its boundary's
/// instruction commits (at most `width - 1` more commit with it), the last
/// one at the run's end; `Some(len)` when there are too few ends.
fn misplaced_end(ends: &[Mark], instructions: u64, interval: u64, width: u64) -> Option<usize> {
    let n = intervals_of(instructions, interval) as usize;
    (0..n)
        .find(|&k| {
            let Some(m) = ends.get(k) else {
                return true;
            };
            if k + 1 == n {
                m.instructions != instructions
            } else {
                let b = (k as u64 + 1) * interval;
                !(b..b + width).contains(&m.instructions)
            }
        })
        .or((ends.len() > n).then_some(n))
}

/// A unit's stack over one interval from its `global_bits`-wide counters
/// at the two ends (`narrow`), checked against its 64-bit twin's (`wide`,
/// when there is one): a counter that moved by `2^global_bits` or more
/// between the two reads is an error naming it, not a wrong number.
pub(crate) fn unwrapped(
    narrow: (&Counters, &Counters),
    wide: Option<(Counters, Counters)>,
    global_bits: u32,
    cycles: u64,
) -> std::result::Result<Stack, String> {
    let s = counter_stack(narrow.0, narrow.1, global_bits, cycles)?;
    let Some((a, b)) = wide else {
        return Ok(s);
    };
    let w = counter_stack(&a, &b, 64, cycles)
        .map_err(|e| format!("its 64-bit twin: {e} (a bug of the study)"))?;
    if let Some(k) = (1..NCOMP).find(|&k| s[k] != w[k]) {
        return Err(format!(
            "its `{}` counter moved by {} over the interval, which a counter of \
             {global_bits} bits read twice sees as {} (unit.global_bits = {global_bits})",
            COMPONENTS[k], w[k], s[k]
        ));
    }
    Ok(s)
}

fn summarise(errors: &[f64], whole_run_pp: f64) -> ErrorSummary {
    let mut sorted = errors.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    // nearest rank
    let rank = |q: f64| sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
    // the first of the largest
    let mut max_interval = 0;
    for (i, &e) in errors.iter().enumerate() {
        if e > errors[max_interval] {
            max_interval = i;
        }
    }
    ErrorSummary {
        whole_run_pp,
        mean_pp: errors.iter().sum::<f64>() / n as f64,
        median_pp: rank(0.5),
        p90_pp: rank(0.9),
        max_pp: errors[max_interval],
        max_interval,
    }
}

/// Runs a phase study of `src`: the real run and the idealised runs of the
/// standard and inverse orders, on `jobs` threads (0: one per core).
pub fn run_phases(src: &Source, s: &Settings, interval: u64, jobs: usize) -> Result<Phases> {
    check_interval(s.instructions, interval)?;
    let start = std::time::Instant::now();
    let masks = masks_of([&STANDARD_ORDER, &INVERSE_ORDER]);
    let bar =
        crate::stacks::progress_bar("phases [{bar:40}] {pos}/{len} runs ({elapsed}, eta {eta})");
    let mut work: Vec<(usize, Mask)> = masks.iter().map(|&m| (0, m)).collect();
    let outcomes = crate::stacks::run_all(
        std::slice::from_ref(src),
        &mut work,
        jobs,
        &|n, total| {
            bar.set_length(total as u64);
            bar.set_position(n as u64);
        },
        |src, m| run_job(src, s, interval, m),
    )?;
    bar.finish_and_clear();
    let mut real = None;
    let mut ideal: BTreeMap<Mask, (Vec<Mark>, u64)> = BTreeMap::new();
    for (&(_, m), o) in work.iter().zip(outcomes) {
        match o? {
            Outcome::Real(r) => real = Some(*r),
            Outcome::Ideal { marks, digest } => {
                ideal.insert(m, (marks, digest));
            }
        }
    }
    let real = real.expect("mask 0 is the real run");
    let st = &real.stats;
    let marks: Vec<Mark> = real.marks.iter().map(|m| m.at).collect();
    let width = s.cfg.core.retire_width as u64;
    if let Some(k) = misplaced_end(&marks[1..], s.instructions, interval, width) {
        bail!(
            "{}: the real run ended interval {k} after {} instructions (a bug of the study)",
            src.name(),
            marks.get(k + 1).map_or(0, |m| m.instructions)
        );
    }
    for (&m, (marks, digest)) in &ideal {
        if let Some(k) = misplaced_end(&marks[1..], s.instructions, interval, width) {
            bail!(
                "{}: the idealised run ({}) ended interval {k} after {} instructions (a bug of the study)",
                src.name(),
                ideal_name(m),
                marks.get(k + 1).map_or(0, |m| m.instructions)
            );
        }
        let n = marks.last().map_or(0, |x| x.instructions);
        same_stream(src, m, (n, *digest), (st.instructions, real.digest))?;
    }
    let gb = s.cfg.unit.global_bits;
    // the interval cycles of every run, by mask (0: the real run)
    let per_interval = |marks: &[Mark]| -> Vec<u64> {
        marks
            .windows(2)
            .map(|w| w[1].cycles - w[0].cycles)
            .collect()
    };
    let mut run_cycles: BTreeMap<Mask, Vec<u64>> = BTreeMap::new();
    run_cycles.insert(0, per_interval(&marks));
    for (&m, (marks, _)) in &ideal {
        run_cycles.insert(m, per_interval(marks));
    }
    let shorter = if interval > MIN_INTERVAL {
        "a shorter --interval or "
    } else {
        ""
    };
    let count = marks.len() - 1;
    let mut intervals = Vec::with_capacity(count);
    let mut first = 0;
    for (k, ab) in real.marks.windows(2).enumerate() {
        let (a, b) = (&ab[0], &ab[1]);
        let c = b.at.cycles - a.at.cycles;
        let n = if k + 1 == count {
            st.instructions - first
        } else {
            interval
        };
        let mut stacks: BTreeMap<String, Stack> = BTreeMap::new();
        for (name, order) in [
            ("reference", &STANDARD_ORDER),
            ("reference_inverse", &INVERSE_ORDER),
        ] {
            let om = order_masks(order);
            let mut runs = [0u64; 9];
            for (r, m) in runs.iter_mut().zip(om) {
                *r = run_cycles[&m][k];
            }
            stacks.insert(name.into(), reference_stack(order, &runs));
        }
        if gb < 64 && c >> gb != 0 {
            bail!(
                "{}: interval {k} (instructions {first} to {}) took {c} cycles, more than a \
                 global counter of {gb} bits can count between two reads (unit.global_bits = {gb}): \
                 its counters cannot be unwrapped; give {shorter}a wider unit.global_bits",
                src.name(),
                first + n
            );
        }
        for (j, name) in ["fmt", "sfmt"].into_iter().enumerate() {
            let get = |m: &RealMark| [m.fmt, m.sfmt][j];
            let wide = |m: &RealMark| m.wide.map(|w| w[j]);
            let s = unwrapped((&get(a), &get(b)), wide(a).zip(wide(b)), gb, c).map_err(|e| {
                anyhow::anyhow!(
                    "{}: interval {k}: {name}: {e}; give {shorter}a wider unit.global_bits",
                    src.name()
                )
            })?;
            stacks.insert(name.into(), s);
        }
        // a stack so far is linear in its counts: the interval's is the difference
        let mut p5 = b.power5;
        for (x, y) in p5.iter_mut().zip(&a.power5) {
            *x -= y;
        }
        stacks.insert("power5".into(), p5);
        let reference = stacks["reference"];
        let errors_pp = COMPARED
            .iter()
            .map(|&m| (m.to_string(), error_pp(&stacks[m], &reference, c)))
            .collect();
        intervals.push(Interval {
            first_instruction: first,
            instructions: n,
            cycles: c,
            stacks,
            errors_pp,
        });
        first += n;
    }
    let mut whole: BTreeMap<String, Stack> = BTreeMap::new();
    for m in METHODS {
        let mut s = [0i64; NCOMP];
        for iv in &intervals {
            for (a, b) in s.iter_mut().zip(&iv.stacks[m]) {
                *a += b;
            }
        }
        whole.insert(m.into(), s);
    }
    let summary = COMPARED
        .iter()
        .map(|&m| {
            let e: Vec<f64> = intervals.iter().map(|iv| iv.errors_pp[m]).collect();
            let w = error_pp(&whole[m], &whole["reference"], st.cycles);
            (m.to_string(), summarise(&e, w))
        })
        .collect();
    Ok(Phases {
        name: src.name(),
        kind: src.kind().into(),
        seed: src.seed(),
        instructions: st.instructions,
        warmup: s.warmup,
        interval,
        cycles: st.cycles,
        config: s.cfg.clone(),
        saturated: real.saturated,
        intervals,
        whole,
        summary,
        runs: masks.len(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Refuses an interval the study cannot cut `instructions` into.
pub fn check_interval(instructions: u64, interval: u64) -> Result<()> {
    if interval < MIN_INTERVAL {
        bail!("--interval {interval}: an interval has at least {MIN_INTERVAL} instructions");
    }
    if interval > instructions {
        bail!("--interval {interval} is longer than the run (--instructions {instructions})");
    }
    let n = intervals_of(instructions, interval);
    if n > MAX_INTERVALS {
        bail!(
            "--interval {interval} cuts --instructions {instructions} into {n} intervals, more \
             than {MAX_INTERVALS}: give a longer interval"
        );
    }
    Ok(())
}

/// Decimals that show every multiple of the axis step `step` (a
/// [`nice_step`](crate::stacks::output::svg::nice_step): 1, 2, 2.5 or 5 times
/// a power of ten): `0.25` takes 2, `5` takes 0.
pub(crate) fn decimals_of(step: f64) -> usize {
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .map_or(6, |d| d as usize)
}

/// `1500000` as `1.5M`, `250000` as `250k`.
pub(crate) fn si(n: u64) -> String {
    let f = |x: f64, u: &str| {
        let t = format!("{x:.2}");
        let t = t.trim_end_matches('0').trim_end_matches('.');
        format!("{t}{u}")
    };
    if n >= 1_000_000 {
        f(n as f64 / 1e6, "M")
    } else if n >= 1_000 {
        f(n as f64 / 1e3, "k")
    } else {
        n.to_string()
    }
}

/// How the run is cut: `5 intervals of 10000`, `(the last 5000)` added when
/// the last differs, `1 interval` for one.
fn cut(p: &Phases, interval: &str) -> String {
    let n = p.intervals.len();
    let last = p.intervals.last().map_or(0, |iv| iv.instructions);
    match n {
        1 => "1 interval".into(),
        _ if last == p.interval => format!("{n} intervals of {interval}"),
        _ => format!("{n} intervals of {interval} (the last {last})"),
    }
}

/// The text report: one line per interval, then each method's errors.
pub fn text(p: &Phases) -> String {
    let mut s = String::new();
    let what = match p.seed {
        Some(seed) => format!("workload {} (seed {seed})", p.name),
        None => format!("trace {}", p.name),
    };
    let _ = writeln!(
        s,
        "phases of {what}: {} instructions after {} of warm-up, {}",
        p.instructions,
        p.warmup,
        cut(p, &p.interval.to_string())
    );
    let ch = crate::stacks::output::machine_changes(&p.config);
    if !ch.is_empty() {
        let _ = writeln!(s, "  machine: the default with {}", ch.join(", "));
    }
    if !p.saturated.is_empty() {
        let _ = writeln!(
            s,
            "warning: a local counter saturated in {} (unit.local_bits = {}): its penalties are understated",
            p.saturated.join(", "),
            p.config.unit.local_bits
        );
    }
    let _ = writeln!(
        s,
        "\n{:>4} {:>12} {:>10} {:>7}  {:<22} | error (pp) {:>6} {:>6} {:>6} {:>7}",
        "#",
        "from instr",
        "cycles",
        "CPI",
        "reference's largest",
        "fmt",
        "sfmt",
        "power5",
        "ref_inv"
    );
    for (k, iv) in p.intervals.iter().enumerate() {
        let r = &iv.stacks["reference"];
        let share = |c: usize| 100.0 * r[c] as f64 / iv.cycles.max(1) as f64;
        // the two largest components but base
        // (a share that rounds to 0 % says nothing)
        let mut big: Vec<usize> = (1..NCOMP).filter(|&c| share(c) >= 0.5).collect();
        big.sort_by_key(|&c| std::cmp::Reverse(r[c]));
        let big: Vec<String> = big
            .iter()
            .take(2)
            .map(|&c| format!("{} {:.0}%", COMPONENTS[c], share(c)))
            .collect();
        let _ = write!(
            s,
            "{k:>4} {:>12} {:>10} {:>7.3}  {:<22} |           ",
            iv.first_instruction,
            iv.cycles,
            iv.cycles as f64 / iv.instructions as f64,
            big.join(", "),
        );
        for m in COMPARED {
            let _ = write!(s, " {:>6.2}", iv.errors_pp[m]);
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "\nerror per interval (pp: the largest |share - reference share| over the components, shares of the interval's cycles)"
    );
    let _ = writeln!(
        s,
        "{:<18} {:>9} {:>7} {:>7} {:>7} {:>7}  (interval)",
        "method", "whole run", "mean", "median", "p90", "max"
    );
    for m in COMPARED {
        let e = &p.summary[m];
        let _ = writeln!(
            s,
            "{m:<18} {:>9.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2}  (#{})",
            e.whole_run_pp, e.mean_pp, e.median_pp, e.p90_pp, e.max_pp, e.max_interval
        );
    }
    s
}

/// `phases.csv`: one row per interval and method, in cycles.
pub fn csv(p: &Phases) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for (k, iv) in p.intervals.iter().enumerate() {
        for m in METHODS {
            let _ = write!(
                s,
                "{},{},{k},{},{},{},{:.6},{m}",
                p.name,
                p.kind,
                iv.first_instruction,
                iv.instructions,
                iv.cycles,
                iv.cycles as f64 / iv.instructions as f64
            );
            for v in iv.stacks[m] {
                let _ = write!(s, ",{v}");
            }
            match iv.errors_pp.get(m) {
                Some(e) => {
                    let _ = writeln!(s, ",{e:.4}");
                }
                None => s.push_str(",\n"),
            }
        }
    }
    s
}

/// `phases.svg`: the reference's, FMT's and sFMT's CPI stacks over the
/// intervals on one scale, and each compared method's error per interval.
pub fn svg(p: &Phases) -> String {
    use crate::stacks::output::svg::{head, legend, nice_step, COLOURS, METHOD_COLOURS};
    let (left, right, top) = (64.0, 150.0, 48.0);
    let (pw, ph, gap) = (820.0, 150.0, 46.0);
    let panels = ["reference", "fmt", "sfmt"];
    let w = left + pw + right;
    let h = top + 4.0 * (ph + gap) - gap + 40.0;
    let mut s = head(w, h);
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">CPI stacks over time: {} ({} instructions)</text>",
        crate::stacks::output::esc(&p.name),
        cut(p, &si(p.interval))
    );
    let n = p.intervals.len();
    let bw = pw / n as f64;
    let cpi = |iv: &Interval, v: i64| v as f64 / iv.instructions as f64;
    // one scale for the three stacks: the most any bar reaches up and down
    let (mut hi, mut lo) = (0.0f64, 0.0f64);
    for iv in &p.intervals {
        for m in panels {
            let st = &iv.stacks[m];
            hi = hi.max(st.iter().filter(|&&v| v > 0).map(|&v| cpi(iv, v)).sum());
            lo = lo.min(st.iter().filter(|&&v| v < 0).map(|&v| cpi(iv, v)).sum());
        }
    }
    let step = nice_step((hi - lo).max(1e-9));
    let (hi, lo) = ((hi / step).ceil() * step, (lo / step).floor() * step);
    let x_axis = |s: &mut String, y0: f64| {
        let every = n.div_ceil(10).max(1);
        for k in (0..=n).step_by(every) {
            let x = left + k as f64 * bw;
            let at = p
                .intervals
                .get(k)
                .map_or(p.instructions, |iv| iv.first_instruction);
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#444\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                y0 + 4.0,
                y0 + 15.0,
                si(at)
            );
        }
    };
    let y_axis = |s: &mut String, y0: f64, lo: f64, hi: f64, step: f64, label: &str| {
        let y = |v: f64| y0 + ph - (v - lo) / (hi - lo) * ph;
        let decimals = decimals_of(step);
        let mut v = lo;
        while v <= hi + step / 2.0 {
            let _ = writeln!(
                s,
                "<line x1=\"{left}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" stroke=\"#e4e4e4\"/>\
                 <text x=\"{2:.1}\" y=\"{3:.1}\" text-anchor=\"end\">{v:.4$}</text>",
                y(v),
                left + pw,
                left - 4.0,
                y(v) + 4.0,
                decimals
            );
            v += step;
        }
        let _ = writeln!(
            s,
            "<text transform=\"translate(14,{:.1}) rotate(-90)\" text-anchor=\"middle\">{label}</text>",
            y0 + ph / 2.0
        );
    };
    for (j, m) in panels.iter().enumerate() {
        let y0 = top + j as f64 * (ph + gap);
        let _ = writeln!(
            s,
            "<text x=\"{left}\" y=\"{:.1}\" font-weight=\"bold\">{}</text>",
            y0 - 6.0,
            match *m {
                "reference" => "reference (standard order)",
                "fmt" => "FMT",
                _ => "sFMT",
            }
        );
        y_axis(&mut s, y0, lo, hi, step, "CPI");
        let y = |v: f64| y0 + ph - (v - lo) / (hi - lo) * ph;
        for (k, iv) in p.intervals.iter().enumerate() {
            let x = left + k as f64 * bw;
            let (mut up, mut down) = (0.0, 0.0);
            for (c, &v) in iv.stacks[*m].iter().enumerate() {
                if v == 0 {
                    continue;
                }
                let d = cpi(iv, v);
                let (a, b) = if d > 0.0 {
                    up += d;
                    (up - d, up)
                } else {
                    down += d;
                    (down, down - d)
                };
                let _ = writeln!(
                    s,
                    "<rect x=\"{x:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{}\"><title>#{k} {}: {:.3} CPI</title></rect>",
                    y(b),
                    bw,
                    (y(a) - y(b)).max(0.0),
                    COLOURS[c],
                    COMPONENTS[c],
                    d
                );
            }
        }
        x_axis(&mut s, y0 + ph);
    }
    let mut names = COMPONENTS;
    let mut colours = COLOURS;
    names.reverse();
    colours.reverse();
    legend(&mut s, left + pw + 16.0, top, &names, &colours);
    // the errors
    let y0 = top + 3.0 * (ph + gap);
    let emax = p
        .intervals
        .iter()
        .flat_map(|iv| iv.errors_pp.values().copied())
        .fold(0.0f64, f64::max);
    let estep = nice_step(emax.max(1.0));
    let ehi = (emax / estep).ceil().max(1.0) * estep;
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"{:.1}\" font-weight=\"bold\">error against the reference per interval (pp)</text>",
        y0 - 6.0
    );
    y_axis(&mut s, y0, 0.0, ehi, estep, "pp");
    let y = |v: f64| y0 + ph - v / ehi * ph;
    let method_colour = |m: &str| {
        let i = crate::stacks::METHODS
            .iter()
            .position(|&x| x == m)
            .expect("a method of stacks");
        METHOD_COLOURS[i]
    };
    for m in COMPARED {
        let pts: Vec<String> = p
            .intervals
            .iter()
            .enumerate()
            .map(|(k, iv)| {
                format!(
                    "{:.1},{:.1}",
                    left + (k as f64 + 0.5) * bw,
                    y(iv.errors_pp[m])
                )
            })
            .collect();
        let c = method_colour(m);
        let _ = writeln!(
            s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.5\"/>",
            pts.join(" ")
        );
        for pt in &pts {
            let (px, py) = pt.split_once(',').expect("x,y");
            let _ = writeln!(s, "<circle cx=\"{px}\" cy=\"{py}\" r=\"2\" fill=\"{c}\"/>");
        }
    }
    x_axis(&mut s, y0 + ph);
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">measured instructions</text>",
        left + pw / 2.0,
        y0 + ph + 30.0
    );
    let cols: Vec<&str> = COMPARED.iter().map(|m| method_colour(m)).collect();
    legend(&mut s, left + pw + 16.0, y0, &COMPARED, &cols);
    s.push_str("</svg>\n");
    s
}

/// `index.html`: the chart, the summary and the intervals on one page.
pub fn html(p: &Phases) -> String {
    use crate::stacks::output::{esc, machine_html, page_head, WARN_STYLE};
    let mut s = page_head(&format!("CPI stacks over time: {}", p.name));
    let what = match p.seed {
        Some(seed) => format!("workload <code>{}</code> (seed {seed})", esc(&p.name)),
        None => format!("trace <code>{}</code>", esc(&p.name)),
    };
    let _ = writeln!(
        s,
        "<h1>CPI stacks over time: {}</h1>\n\
         <p>The {what}, {} instructions after {} of warm-up, cut into {}, on {}. \
         Every run of a <code>cpistack stacks</code> study (the real run with FMT, sFMT \
         and the POWER5-style accountant attached; the idealised runs of the reference \
         in its standard and inverse orders) is read where the same instruction \
         commits, every {} instructions. FMT's and sFMT's stack over an interval is the \
         difference of the unit's global counters between two reads, as a profiler \
         reads them; the reference's is the difference of the idealised runs' cycles \
         over the same instructions. A method's error over an interval is the largest \
         difference, over the components, between its share of the interval's cycles \
         and the standard-order reference's, in percentage points. Over intervals of a \
         few memory latencies the reference itself is noisy (a miss's cost moves \
         across a boundary in one idealised run and not in the next): \
         docs/accuracy.md.</p>",
        esc(&p.name),
        p.instructions,
        p.warmup,
        cut(p, &p.interval.to_string()),
        machine_html(&p.config),
        p.interval
    );
    if !p.saturated.is_empty() {
        let _ = writeln!(
            s,
            "<p {WARN_STYLE}><b>Warning:</b> a local counter saturated in {} \
             (unit.local_bits = {}): its penalties are understated.</p>",
            esc(&p.saturated.join(", ")),
            p.config.unit.local_bits
        );
    }
    s.push_str(
        "<h2>Error per interval, percentage points</h2>\n<table><tr><th>method</th>\
         <th>whole run</th><th>mean</th><th>median</th><th>p90</th><th>max</th>\
         <th>interval of the max</th></tr>\n",
    );
    for m in COMPARED {
        let e = &p.summary[m];
        let _ = writeln!(
            s,
            "<tr><td>{m}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td>\
             <td>{:.2}</td><td>{}</td></tr>",
            e.whole_run_pp, e.mean_pp, e.median_pp, e.p90_pp, e.max_pp, e.max_interval
        );
    }
    s.push_str(
        "</table>\n<h2>Stacks per interval</h2>\n<p>The reference's, FMT's and \
         sFMT's CPI stacks on one scale (a component below zero is drawn below the \
         axis), then each method's error per interval; hover over a bar for its \
         value.</p>\n<div class=\"wide\"><object data=\"phases.svg\" \
         type=\"image/svg+xml\" aria-label=\"stacks over time\">stacks over time \
         (phases.svg)</object></div>\n<details><summary>Every interval (shares of \
         its cycles, %)</summary><table><tr><th>#</th><th>from</th><th>cycles</th>\
         <th>CPI</th><th>method</th>",
    );
    for c in COMPONENTS {
        let _ = write!(s, "<th>{c}</th>");
    }
    s.push_str("<th>error</th></tr>\n");
    for (k, iv) in p.intervals.iter().enumerate() {
        for (i, m) in METHODS.iter().enumerate() {
            if i == 0 {
                let _ = write!(
                    s,
                    "<tr><td rowspan=\"{}\">{k}</td><td rowspan=\"{0}\">{}</td>\
                     <td rowspan=\"{0}\">{}</td><td rowspan=\"{0}\">{:.3}</td>",
                    METHODS.len(),
                    iv.first_instruction,
                    iv.cycles,
                    iv.cycles as f64 / iv.instructions as f64
                );
            } else {
                s.push_str("<tr>");
            }
            // left-aligned as the page's first column is
            let _ = write!(s, "<td style=\"text-align:left\">{m}</td>");
            for v in iv.stacks[*m] {
                let _ = write!(s, "<td>{:.1}</td>", 100.0 * v as f64 / iv.cycles as f64);
            }
            match iv.errors_pp.get(*m) {
                Some(e) => {
                    let _ = writeln!(s, "<td>{e:.2}</td></tr>");
                }
                None => s.push_str("<td></td></tr>\n"),
            }
        }
    }
    s.push_str(
        "</table></details>\n<p>Files: <a href=\"phases.csv\">phases.csv</a>, \
         <a href=\"phases.json\">phases.json</a>, <a href=\"phases.svg\">phases.svg</a>.</p>\n\
         </body></html>\n",
    );
    s
}

/// Writes the outputs of `p` into `dir`.
pub fn write_all(p: &Phases, dir: &Path) -> Result<()> {
    let json = serde_json::to_string_pretty(p).context("serialising the study")? + "\n";
    for (f, text) in [
        ("phases.csv", csv(p)),
        ("phases.json", json),
        ("phases.svg", svg(p)),
        ("index.html", html(p)),
    ] {
        let path = dir.join(f);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Arguments of `cpistack phases`.
#[derive(clap::Args, Debug, Clone)]
pub struct PhasesArgs {
    /// Synthetic workload: one of the suite or a limit workload (`cpistack workloads --all`).
    #[arg(long, default_value = "balanced")]
    pub workload: String,
    /// ChampSim trace to study instead of a workload (read from its start).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["workload", "seed"])]
    pub trace: Option<PathBuf>,
    /// Instructions measured per run.
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::run::at_least_one::<u64>)]
    pub instructions: u64,
    /// Instructions committed before counting starts.
    #[arg(long, default_value_t = 200_000)]
    pub warmup: u64,
    /// Instructions per interval, at least 1000; at most 2000 intervals. The
    /// last interval takes what is left, and a remainder of fewer than 1000
    /// instructions joins it.
    #[arg(long, default_value_t = 50_000)]
    pub interval: u64,
    /// Seed of the synthetic workload.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory (created if missing).
    #[arg(long, default_value = "phases")]
    pub out: PathBuf,
    /// Runs in parallel (default, or 0: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub machine: crate::run::MachineArgs,
}

/// The source of a one-source study (`phases`, `multiplex`): the trace,
/// when one is given (a regular file, since every run of the study reads it
/// again, and none of the study's outputs in `out`), else the workload.
pub(crate) fn one_source(
    trace: Option<&Path>,
    workload: &str,
    seed: u64,
    out: &Path,
    files: &[&str],
) -> Result<Source> {
    let Some(t) = trace else {
        return Source::workload(workload, seed);
    };
    match std::fs::metadata(t) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("--trace: {}: no such file", t.display())
        }
        Err(e) => bail!("--trace: {}: {e}", t.display()),
        Ok(m) if !m.is_file() => bail!(
            "--trace: {}: not a regular file; each run of the study reads the trace again, so give a file",
            t.display()
        ),
        Ok(_) => {}
    }
    for f in files {
        crate::paths::refuse_overwrite(t, &out.join(f), "--out")?;
    }
    Ok(Source::Trace(t.to_path_buf()))
}

/// `cpistack phases`.
pub fn cmd(args: &PhasesArgs) -> Result<()> {
    check_interval(args.instructions, args.interval)?;
    let cfg = args.machine.build()?;
    let src = one_source(
        args.trace.as_deref(),
        &args.workload,
        args.seed,
        &args.out,
        &OUTPUT_FILES,
    )?;
    crate::paths::into_out_dir(&args.out, &OUTPUT_FILES, &args.machine, || {
        let s = Settings {
            cfg,
            instructions: args.instructions,
            warmup: args.warmup,
        };
        let p = run_phases(&src, &s, args.interval, args.jobs.unwrap_or(0))?;
        write_all(&p, &args.out)?;
        print!("{}", text(&p));
        eprintln!(
            "{} runs in {:.1} s; wrote {} to {}",
            p.runs,
            p.seconds,
            OUTPUT_FILES.join(", "),
            args.out.display()
        );
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: PhasesArgs,
    }

    /// Nearest-rank percentiles, the first interval of the largest error.
    #[test]
    fn the_summary_takes_nearest_ranks_and_the_first_largest() {
        let e = summarise(&[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 9.0], 2.5);
        assert_eq!(e.whole_run_pp, 2.5);
        assert_eq!(e.mean_pp, 4.5);
        assert_eq!(e.median_pp, 4.0); // rank 5 of 1 1 2 3 4 5 5 6 9 9
        assert_eq!(e.p90_pp, 9.0); // rank 9
        assert_eq!((e.max_pp, e.max_interval), (9.0, 5));
        let one = summarise(&[0.5], 0.5);
        assert_eq!((one.median_pp, one.p90_pp, one.max_interval), (0.5, 0.5, 0));
    }

    #[test]
    fn axis_labels_and_instruction_counts_read_well() {
        assert_eq!(decimals_of(5.0), 0);
        assert_eq!(decimals_of(0.5), 1);
        assert_eq!(decimals_of(0.25), 2);
        assert_eq!(decimals_of(0.02), 2);
        assert_eq!(decimals_of(250.0), 0);
        assert_eq!(si(3_000_000), "3M");
        assert_eq!(si(1_500_000), "1.5M");
        assert_eq!(si(250_000), "250k");
        assert_eq!(si(2_500), "2.5k");
        assert_eq!(si(999), "999");
    }

    /// A unit's stack over an interval: differences modulo the width, base
    /// the rest; a cycles counter that moved otherwise than the core is named.
    #[test]
    fn counter_differences_wrap_at_the_width() {
        let mut a = Counters::default();
        let mut b = Counters::default();
        a.value[Counter::Cycles.idx()] = 250;
        b.value[Counter::Cycles.idx()] = 4; // 256 + 4 - 250 = 10 at 8 bits
        a.value[Counter::L2d.idx()] = 255;
        b.value[Counter::L2d.idx()] = 2; // 3
        let s = counter_stack(&a, &b, 8, 10).unwrap();
        assert_eq!(s[0], 7);
        assert_eq!(s[6], 3); // l2d
        assert_eq!(s.iter().sum::<i64>(), 10);
        let e = counter_stack(&a, &b, 8, 266).unwrap_err();
        assert_eq!(
            e,
            "its cycles counter moved by 10 over the interval, the core counted 266"
        );
        // 64-bit counters: no mask
        assert_eq!(
            counter_stack(&a, &b, 64, 10).unwrap_err(),
            format!(
                "its cycles counter moved by {} over the interval, the core counted 10",
                4u64.wrapping_sub(250)
            )
        );
    }

    /// A component that moved by more than the width between two reads,
    /// while the cycles did not: the 64-bit twin names it.
    #[test]
    fn a_component_that_wrapped_between_reads_is_refused() {
        let set = |cycles: u64, l2d: u64, mask: u64| {
            let mut c = Counters::default();
            c.value[Counter::Cycles.idx()] = cycles & mask;
            c.value[Counter::L2d.idx()] = l2d & mask;
            c
        };
        let (a, b) = (set(1000, 0, 255), set(1200, 300, 255));
        let (wa, wb) = (set(1000, 0, u64::MAX), set(1200, 300, u64::MAX));
        let e = unwrapped((&a, &b), Some((wa, wb)), 8, 200).unwrap_err();
        assert_eq!(
            e,
            "its `l2d` counter moved by 300 over the interval, which a counter of 8 bits read \
             twice sees as 44 (unit.global_bits = 8)"
        );
        // without the twin the narrow reading is all there is
        assert_eq!(unwrapped((&a, &b), None, 8, 200).unwrap()[6], 44);
        // within the width both agree
        let (b, wb) = (set(1200, 100, 255), set(1200, 100, u64::MAX));
        assert_eq!(unwrapped((&a, &b), Some((wa, wb)), 8, 200).unwrap()[6], 100);
    }

    #[test]
    fn a_trace_takes_no_workload_or_seed() {
        for extra in [["--workload", "mlp"], ["--seed", "3"]] {
            let r = Cli::try_parse_from(
                ["phases", "--trace", "t.champsimtrace"]
                    .into_iter()
                    .chain(extra),
            );
            assert!(r.is_err(), "{extra:?}");
        }
        let c = Cli::try_parse_from(["phases"]).unwrap();
        assert_eq!(
            (c.a.workload.as_str(), c.a.interval, c.a.instructions),
            ("balanced", 50_000, 1_000_000)
        );
    }
}
