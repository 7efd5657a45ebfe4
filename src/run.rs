//! `cpistack run`, `cpistack workloads`, `cpistack config`: the core simulator on a
//! synthetic workload driving the FMT and/or sFMT unit (and, with `--check`, the
//! golden model in lock step).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use events::{Counter, CounterUnit, CycleEvents, Variant};
use serde::Serialize;

use crate::check::LockStep;
use crate::report::StackReport;

/// Which unit variants to attach.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VariantArg {
    Fmt,
    Sfmt,
    Both,
}

impl VariantArg {
    /// The variants named, FMT first.
    pub fn list(self) -> Vec<Variant> {
        match self {
            VariantArg::Fmt => vec![Variant::Fmt],
            VariantArg::Sfmt => vec![Variant::Sfmt],
            VariantArg::Both => vec![Variant::Fmt, Variant::Sfmt],
        }
    }
}

/// The machine configuration: defaults, then a file, then `--set`, then `--ideal`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct MachineArgs {
    /// Configuration file (TOML if it ends in `.toml`, any case, else JSON); missing keys keep defaults.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override one configuration key (dotted path), e.g. `--set l2.latency=12`. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Idealisations, comma-separated: bpred, l1i, l2i, itlb, l1d, l2d, dtlb,
    /// longlat; `all` is the first seven (not longlat), `none` adds nothing.
    /// Added to the `ideal.*` keys of the configuration.
    #[arg(long, value_name = "LIST")]
    pub ideal: Option<String>,
}

impl MachineArgs {
    /// Fails if the output `out` (described as `what`) would overwrite the
    /// `--config` file.
    pub fn refuse_overwrite(&self, out: &std::path::Path, what: &str) -> Result<()> {
        match &self.config {
            Some(c) => crate::paths::refuse_overwrite(c, out, what),
            None => Ok(()),
        }
    }

    /// The effective configuration.
    pub fn build(&self) -> Result<sim::Config> {
        let mut cfg = match &self.config {
            // validated once, after the overrides (several may be needed together)
            Some(p) => sim::Config::load(p)?,
            None => sim::Config::default(),
        };
        for (i, s) in self.set.iter().enumerate() {
            if let Some((key, first)) = earlier_set(&self.set, i) {
                bail!("configuration: --set `{s}`: `{key}` is already set by --set `{first}`");
            }
            // (the error names the assignment)
            cfg.set(s)?;
        }
        if let Some(l) = &self.ideal {
            let add = sim::Ideal::parse_list(l)?;
            // `--set ideal.X=false` with an `--ideal` that makes X ideal says
            // two things; the union would silently keep X ideal
            let on = serde_json::to_value(&add)?;
            for s in &self.set {
                let Some((k, v)) = s.split_once('=') else {
                    continue;
                };
                let Some(x) = k.trim().strip_prefix("ideal.") else {
                    continue;
                };
                if v.trim() == "false" && on[x] == true {
                    bail!(
                        "configuration: --ideal {l} makes `{x}` ideal and --set `{s}` makes it real: give one of them"
                    );
                }
            }
            cfg.ideal = cfg.ideal.or(&add);
        }
        if let Err(e) = cfg.validate() {
            // name the file the values came from (a value set on the command
            // line names itself: the message names its key)
            return Err(match (&self.config, e) {
                (Some(p), sim::SimError::Config(m)) => {
                    let with = if self.set.is_empty() {
                        ""
                    } else {
                        " with the --set overrides"
                    };
                    sim::SimError::Config(format!("{}{with}: {m}", p.display())).into()
                }
                (_, e) => e.into(),
            });
        }
        for w in cfg.warnings() {
            eprintln!("warning: configuration: {w}");
        }
        Ok(cfg)
    }
}

/// The key of `set[i]` (a `--set KEY=VALUE` option, `set` in command-line
/// order) and the earlier assignment that set the same key, if any: a key
/// given twice is refused rather than silently taking the last value.
pub fn earlier_set(set: &[String], i: usize) -> Option<(&str, &str)> {
    let k = set_key(&set[i])?;
    let first = set[..i].iter().find(|o| set_key(o) == Some(k))?;
    Some((k, first))
}

/// The key of a `--set KEY=VALUE` assignment (none without `=`).
pub fn set_key(assignment: &str) -> Option<&str> {
    assignment.split_once('=').map(|(k, _)| k.trim())
}

/// Arguments of `cpistack run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// Synthetic workload: one of the suite (`cpistack workloads` lists
    /// them) or a limit workload such as `server` (`cpistack workloads --all`).
    #[arg(long, default_value = "balanced")]
    pub workload: String,
    /// ChampSim trace to simulate instead of a workload (`.xz`, `.gz` or raw
    /// records; see docs/traces.md).
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
    pub trace: Option<PathBuf>,
    /// Trace records to skip before simulation (before the warm-up).
    #[arg(
        long,
        default_value_t = 0,
        requires = "trace",
        conflicts_with = "workload"
    )]
    pub skip: u64,
    /// Instructions to measure (committed with counting on). A source that
    /// ends before the warm-up and these are done is an error.
    #[arg(long, default_value_t = 1_000_000, value_parser = at_least_one::<u64>)]
    pub instructions: u64,
    /// Instructions committed with `count_enable` off first.
    #[arg(long, default_value_t = 100_000)]
    pub warmup: u64,
    /// Seed of the synthetic program and its execution (a workload's: a trace
    /// has none, and `--seed` with `--trace` is refused).
    #[arg(long, default_value_t = 1, conflicts_with = "trace")]
    pub seed: u64,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Unit variants to attach.
    #[arg(long, value_enum, default_value = "both")]
    pub variant: VariantArg,
    /// Run the golden model in lock step with each unit and check the ROB mirror and
    /// the retired count against the core every cycle.
    #[arg(long)]
    pub check: bool,
    /// Write the event stream to FILE (`.bin`: binary, else JSON Lines). It is
    /// written to FILE.part and moved to FILE when the run succeeds; a failed
    /// run leaves the stream up to the failure in FILE.part.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also print the cycle census: every counted cycle in one class by what
    /// the window, the ROB head and the frontend were doing, with its share,
    /// its commits and dispatches per cycle and where FMT's counters put it (what FMT's
    /// `base` is made of; docs/cli.md).
    #[arg(long)]
    pub census: bool,
    /// `--vcd FILE` and `--window FROM:TO` (cycles of the core, from 0, warm-up
    /// included): a VCD of each attached `hw` unit.
    #[command(flatten)]
    pub waves: crate::waves::WaveArgs,
}

impl RunArgs {
    /// The seed of what runs: the workload's; `None` for a trace, which has
    /// none (`--seed` is refused with `--trace`).
    pub fn source_seed(&self) -> Option<u64> {
        self.trace.is_none().then_some(self.seed)
    }
}

/// A unit attached to the run: plain (`hw`) or `hw` and `golden` in lock step.
enum Slot {
    Plain(Box<hw::Unit>),
    Checked(Box<LockStep>),
}

impl Slot {
    fn hw(&self) -> &hw::Unit {
        match self {
            Slot::Plain(u) => u,
            Slot::Checked(l) => l.hw(),
        }
    }
}

/// What one run measured.
#[derive(Serialize)]
pub struct RunReport {
    /// The workload, or the trace's name.
    pub workload: String,
    /// With `--trace`: what the trace reader saw (branch kinds, wrong-path lookups
    /// found in its code image).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<sim::trace::TraceStats>,
    /// The workload's seed; `None` (JSON `null`) for a trace, which has none.
    pub seed: Option<u64>,
    /// The machine: the configuration keys that differ from the default
    /// (the paper's Table 2), each as the `--set` that makes it; empty for
    /// the default ([`sim::Config::differences`]).
    pub machine: Vec<String>,
    /// With a `layout.seed`: the shifts it drew, `[code, data]` in bytes
    /// (left out otherwise: explicit shifts are in `machine`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout_shifts: Option<[u64; 2]>,
    pub warmup: u64,
    pub instructions: u64,
    pub cycles: u64,
    /// The core's cycle (bundle index from 0, as `--window` counts) of the
    /// first cycle counted; the cycles before it are the warm-up's.
    pub first_counted_cycle: u64,
    /// Every cycle simulated, warm-up included (the bundles the units saw).
    pub total_cycles: u64,
    pub cpi: f64,
    pub checked: bool,
    pub stats: sim::Stats,
    /// Per unit variant (`fmt`, `sfmt`): its counters, CPI stack and pending cycles.
    pub units: std::collections::BTreeMap<String, StackReport>,
    /// With `--census`: the cycle census, every class in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub census: Option<Vec<crate::census::CensusRow>>,
    pub seconds: f64,
    pub instructions_per_second: f64,
}

/// Everything driven per cycle besides the core.
struct Drive {
    slots: Vec<Slot>,
    check: bool,
    writer: Option<events::stream::StreamWriter>,
    /// One VCD tracer per slot (with `--vcd`).
    waves: Vec<Option<crate::waves::Traced>>,
    /// With `--census`.
    census: Option<crate::census::Census>,
}

impl Drive {
    fn after_cycle<S: sim::InstrSource>(
        &mut self,
        ev: &CycleEvents,
        core: &sim::Core<S>,
    ) -> Result<()> {
        let cycle = core.cycle() - 1;
        if let Some(c) = &mut self.census {
            c.before_step(self.slots[0].hw(), ev);
        }
        for (s, w) in self.slots.iter_mut().zip(self.waves.iter_mut()) {
            match s {
                Slot::Plain(u) => u.step(ev),
                Slot::Checked(l) => {
                    if let Err(m) = l.step(ev) {
                        bail!("lock step failed at core cycle {cycle}:\n{m}");
                    }
                }
            }
            if let Some(w) = w {
                hw::Tracer::cycle(&mut w.tracer, s.hw(), ev);
            }
        }
        if self.check {
            for s in &self.slots {
                check_unit_follows_core(s.hw(), core, ev)?;
            }
        }
        if let Some(w) = &mut self.writer {
            w.write(ev)?;
        }
        Ok(())
    }
}

/// The checks `run --check` makes after each core cycle, of a unit stepped
/// with that cycle's bundle `ev`: the bundle was legal (an illegal one is a
/// simulator bug), and the unit's ROB mirror and retired count equal the
/// core's ROB occupancy and counted commits.
pub fn check_unit_follows_core<S: sim::InstrSource>(
    u: &hw::Unit,
    core: &sim::Core<S>,
    ev: &CycleEvents,
) -> Result<()> {
    let cycle = core.cycle() - 1;
    let v = u.view();
    if let Some(e) = v.error {
        bail!(
            "the core emitted an illegal bundle (a simulator bug): {e}\nbundle: {}",
            crate::check::bundle_line(ev)
        );
    }
    if v.rob_count != core.rob_occupancy() {
        bail!(
            "cycle {cycle}: {} unit's rob_count {} differs from the core's ROB occupancy {}",
            u.params().variant,
            v.rob_count,
            core.rob_occupancy()
        );
    }
    let mask = u.params().global_mask();
    if v.counters.get(Counter::Retired) != core.counted_retired() & mask {
        bail!(
            "cycle {cycle}: {} unit's retired {} differs from the core's counted commits {}",
            u.params().variant,
            v.counters.get(Counter::Retired),
            core.counted_retired()
        );
    }
    Ok(())
}

/// `--instructions` and the like: a whole number of at least 1 (clap's own
/// range check would say `0 is not in 1..18446744073709551615`).
pub fn at_least_one<T: std::str::FromStr + Default + PartialEq>(s: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    match s.parse::<T>() {
        Ok(n) if n == T::default() => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Run the core on a workload or trace with the attached units and return what
/// they measured.
pub fn simulate(args: &RunArgs) -> Result<RunReport> {
    let cfg = args.machine.build()?;
    // two outputs of one name would be written over each other (a VCD's
    // layout is an output too)
    let variants = args.variant.list();
    let outs: Vec<(&str, PathBuf)> = (args.events.iter().map(|e| ("--events", e.clone())))
        .chain(
            args.waves
                .paths(&variants)
                .into_iter()
                .map(|p| ("--vcd", p)),
        )
        .chain((args.waves.layouts(&variants).into_iter()).map(|p| ("--vcd's GTKWave layout", p)))
        .collect();
    crate::paths::distinct_outputs(&outs)?;
    for (what, out) in &outs {
        args.machine.refuse_overwrite(out, what)?;
        if let Some(path) = &args.trace {
            crate::paths::refuse_overwrite(path, out, what)?;
        }
    }
    // (this makes the VCDs' directories: after every refusal above)
    args.waves.check_variants(&variants)?;
    match &args.trace {
        Some(path) => {
            let src = sim::trace::TraceSource::open(path, args.skip)?;
            let name = sim::InstrSource::name(&src).to_string();
            let core = sim::Core::new(&cfg, src)?;
            simulate_core(args, &cfg, core, name, |s| Some(s.stats()))
        }
        None => {
            let core = sim::workload_core(&cfg, &args.workload, args.seed)?;
            simulate_core(args, &cfg, core, args.workload.clone(), |_| None)
        }
    }
}

fn simulate_core<S: sim::InstrSource>(
    args: &RunArgs,
    cfg: &sim::Config,
    mut core: sim::Core<S>,
    name: String,
    trace_stats: impl Fn(&S) -> Option<sim::trace::TraceStats>,
) -> Result<RunReport> {
    let params = cfg.unit_params();
    core.set_warmup(args.warmup);
    core.set_limit(args.instructions);
    let mut slots = Vec::new();
    for v in args.variant.list() {
        let p = params.with_variant(v);
        slots.push(if args.check {
            // a mismatch names the workload's seed; a trace has none
            let ls = LockStep::new(p)?;
            Slot::Checked(Box::new(match args.source_seed() {
                Some(seed) => ls.with_seed(seed),
                None => ls,
            }))
        } else {
            Slot::Plain(Box::new(hw::Unit::new(p)?))
        });
    }
    // the stream is written to FILE.part until the run succeeds (then moved to FILE)
    let writer = match &args.events {
        Some(path) => {
            let fmt =
                events::stream::Format::from_path(path).unwrap_or(events::stream::Format::Jsonl);
            crate::paths::output_file(path, "--events")?;
            // the header names the variant run (the first, with both), so
            // that a plain `replay` drives what this run drove
            Some(events::stream::create(
                crate::paths::part_path(path),
                fmt,
                &params.with_variant(args.variant.list()[0]),
            )?)
        }
        None => None,
    };
    let mut waves = Vec::new();
    for (k, s) in slots.iter().enumerate() {
        waves.push(args.waves.tracer(k, s.hw())?);
    }
    let mut drive = Drive {
        slots,
        check: args.check,
        writer,
        waves,
        census: args.census.then(crate::census::Census::new),
    };
    let start = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr()) && !args.json;
    let mut k: u32 = 0;
    let total = args.warmup.saturating_add(args.instructions);
    let mut body = || -> Result<()> {
        while core.counted_retired() < args.instructions && !core.finished() {
            let ev = *core.step()?;
            drive.after_cycle(&ev, &core)?;
            k = k.wrapping_add(1);
            if tty && k & 0xffff == 0 {
                if bar.is_none() && start.elapsed() > Duration::from_secs(1) {
                    let b = indicatif::ProgressBar::new(total);
                    b.set_style(
                        indicatif::ProgressStyle::with_template(
                            "{msg} [{bar:40}] {human_pos}/{human_len} instructions ({eta} left)",
                        )
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                    );
                    b.set_message(name.clone());
                    bar = Some(b);
                }
                if let Some(b) = &bar {
                    b.set_position(core.committed().min(total));
                }
            }
        }
        // a source that ran dry first measured less than asked: not a result
        // and the trace's blocks read passed their integrity checks
        core.finish(args.instructions)?;
        Ok(())
    };
    let outcome = body();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Err(e) = outcome {
        // keep what was written up to the failure (the waveform, the stream as
        // FILE.part), and let nothing hide the failure itself
        if let (Some(w), Some(path)) = (drive.writer.take(), &args.events) {
            let part = crate::paths::part_path(path);
            match w.finish() {
                Ok(()) => eprintln!("event stream up to the failure: {}", part.display()),
                // the chain, cause included (`I/O error on FILE: No space left
                // on device`)
                Err(we) => eprintln!(
                    "warning: the event stream up to the failure was not kept in {}: {:#}",
                    part.display(),
                    anyhow::Error::from(we)
                ),
            }
        }
        return Err(crate::waves::finish_after_failure(
            std::mem::take(&mut drive.waves),
            e,
        ));
    }
    let seconds = start.elapsed().as_secs_f64();
    if let (Some(w), Some(path)) = (drive.writer.take(), &args.events) {
        w.finish()?;
        crate::paths::move_into_place(path, "--events")?;
    }
    crate::waves::finish_all(std::mem::take(&mut drive.waves))?;
    // without --check the latch is read once at the end (a latched error freezes the unit)
    let mut units = std::collections::BTreeMap::new();
    for s in &drive.slots {
        let u = s.hw();
        if let Some(e) = u.view().error {
            bail!("the core emitted an illegal bundle (a simulator bug): {e}");
        }
        units.insert(
            u.params().variant.name().to_string(),
            StackReport::from_unit(u),
        );
    }
    let st = core.stats().clone();
    Ok(RunReport {
        workload: name,
        trace: trace_stats(core.source()),
        seed: args.source_seed(),
        machine: cfg.differences(&sim::Config::default()),
        layout_shifts: (cfg.layout.seed != 0).then(|| {
            let (c, d) = cfg.layout.shifts();
            [c, d]
        }),
        warmup: args.warmup,
        instructions: st.instructions,
        cycles: st.cycles,
        // counting is on from the warm-up's end to the run's: the counted
        // cycles are the last ones
        first_counted_cycle: core.cycle() - st.cycles,
        total_cycles: core.cycle(),
        cpi: st.cpi(),
        checked: args.check,
        units,
        census: drive.census.as_ref().map(crate::census::Census::rows),
        seconds,
        instructions_per_second: core.committed() as f64 / seconds.max(1e-9),
        stats: st,
    })
}

/// `cpistack run`.
pub fn run(args: &RunArgs) -> Result<()> {
    // a stream or waveform on standard output is not mixed with the report
    let vcds = args.waves.paths(&args.variant.list());
    crate::console::report_to_stderr_if_stdout_among(
        args.events.iter().chain(&vcds).map(PathBuf::as_path),
    );
    let r = simulate(args)?;
    if args.json {
        crate::reportln!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    let (what, key, value) = match r.seed {
        None => ("trace", "skip", args.skip),
        Some(seed) => ("workload", "seed", seed),
    };
    crate::reportln!(
        "{what} {} ({key} {value}): {} after {} of warm-up, {}, CPI {:.4}{}",
        r.workload,
        crate::console::count(r.instructions, "instruction"),
        r.warmup,
        crate::console::count(r.cycles, "cycle"),
        r.cpi,
        if r.checked {
            ", golden model in lock step: OK"
        } else {
            ""
        }
    );
    if !r.machine.is_empty() {
        crate::reportln!("  machine: the default with {}", r.machine.join(", "));
    }
    if let Some([c, d]) = r.layout_shifts {
        crate::reportln!(
            "  layout: code shifted by {c:#x} bytes, data by {d:#x} (drawn from layout.seed)"
        );
    }
    crate::reportln!(
        "  core cycles [0, {}) warm-up, counting off; [{}, {}) measured (`--window A:B` counts core cycles from 0, warm-up included)",
        r.first_counted_cycle,
        r.first_counted_cycle,
        r.total_cycles
    );
    // a waveform of the warm-up only shows counters that never move
    if let Some(w) = args.waves.vcd.as_ref().and(args.waves.window) {
        if w.to <= r.first_counted_cycle {
            crate::reportln!(
                "  note: the waveform's window {}:{} lies in the warm-up (counting off: no counter moves in it); the measured cycles start at {}",
                w.from,
                w.to,
                r.first_counted_cycle
            );
        }
    }
    let s = &r.stats;
    crate::reportln!("  {:<12} {:>12} {:>12}", "event", "committed", "all paths");
    for (name, c, a) in [
        ("l1i miss", s.committed.l1i, s.all.l1i),
        ("l2i miss", s.committed.l2i, s.all.l2i),
        ("itlb miss", s.committed.itlb, s.all.itlb),
        ("l1d miss", s.committed.l1d, s.all.l1d),
        ("l2d miss", s.committed.l2d, s.all.l2d),
        ("dtlb miss", s.committed.dtlb, s.all.dtlb),
        ("longlat op", s.committed.longlat, s.all.longlat),
        ("mispredict", s.committed.mispredicts, s.all.mispredicts),
    ] {
        crate::reportln!("  {name:<12} {c:>12} {a:>12}");
    }
    crate::reportln!(
        "  branches {}, decode redirects {}, wrong-path fetched {} / dispatched {}, ROB-full cycles {}, LSQ-full cycles {}, branch-limit cycles {}",
        s.branches, s.fe_redirects, s.wrong_path_fetched, s.wrong_path_dispatched, s.rob_full_cycles, s.lsq_full_cycles, s.branch_full_cycles
    );
    for (level, w) in [("l1d", &s.head_waits.l1d), ("l2d", &s.head_waits.l2d)] {
        if w.total() > 0 {
            crate::reportln!(
                "  head waits on the D-cache, window full (FMT's {level}): {} cycles: its own miss {}, a pending hit {}, a late prefetch {}, no MSHR free {}",
                w.total(),
                w.miss,
                w.pending_hit,
                w.late_prefetch,
                w.mshr_wait
            );
        }
    }
    if let Some(t) = &r.trace {
        crate::reportln!(
            "  trace: {} records read, wrong path found in the code image {} / {} ({})",
            t.records,
            t.wrong_path_found,
            t.wrong_path_found + t.wrong_path_missing,
            // no wrong path looked up (no misprediction): no fraction
            t.wrong_path_found_fraction()
                .map_or("-".into(), |f| format!("{:.1} %", 100.0 * f))
        );
        if t.unflagged_branches + t.flagged_non_branches + t.taken_non_branches > 0 {
            crate::reportln!(
                "  trace flags the registers contradict (read as ChampSim reads them, docs/traces.md section 6): {} branches with is_branch 0, {} non-branches with is_branch 1, {} non-branches with branch_taken 1",
                t.unflagged_branches,
                t.flagged_non_branches,
                t.taken_non_branches
            );
        }
        if t.unverified_bytes > 0 {
            crate::reportln!(
                "  warning: {}",
                sim::trace::unverified_warning(t.unverified_bytes)
            );
        }
        if t.image_not_learned > 0 {
            crate::reportln!(
                "  warning: the code image is full ({} distinct addresses): {} records at new addresses were not learned, and the wrong path finds none of them (a real program shows a few thousand addresses; is the trace damaged?)",
                t.image_addresses,
                t.image_not_learned
            );
        }
    }
    for u in r.units.values() {
        crate::report!("{}", u.text());
        let p = &u.pending;
        if p.l1i + p.l2i + p.itlb + p.bpred == 0 {
            crate::reportln!("  pending (in rows, not charged): none");
        }
    }
    if let Some(rows) = &r.census {
        crate::report!("{}", crate::census::text(rows));
    }
    eprintln!(
        "{:.2} s, {:.2} M instructions/s",
        r.seconds,
        r.instructions_per_second / 1e6
    );
    Ok(())
}

/// Arguments of `cpistack workloads`.
#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadsArgs {
    /// JSON array of {name, description}.
    #[arg(long)]
    pub json: bool,
    /// Also list the limit workloads (where interval analysis breaks down; not in the suite).
    #[arg(long)]
    pub all: bool,
}

/// `cpistack workloads`: the suite, one line each.
pub fn workloads(args: &WorkloadsArgs) -> Result<()> {
    let mut suite = sim::workloads::suite();
    if args.all {
        suite.extend(sim::workloads::limits());
    }
    if args.json {
        let v: Vec<_> = suite
            .iter()
            .map(|s| serde_json::json!({"name": s.name, "description": s.description}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for s in &suite {
            println!("{:<11} {}", s.name, s.description);
        }
    }
    Ok(())
}

/// Arguments of `cpistack config`: without `--print` or `--json`, only
/// checks that the configuration is legal.
#[derive(clap::Args, Debug, Clone)]
pub struct ConfigArgs {
    /// Print the effective configuration (TOML).
    #[arg(long)]
    pub print: bool,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Print the effective configuration as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `cpistack config [--print | --json]`.
pub fn config(args: &ConfigArgs) -> Result<()> {
    let cfg = args.machine.build()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&cfg)?);
    } else if args.print {
        print!("{}", cfg.to_toml());
        if cfg.layout.seed != 0 {
            let (c, d) = cfg.layout.shifts();
            println!(
                "# layout.seed = {} draws code_shift = {c}, data_shift = {d}",
                cfg.layout.seed
            );
        }
    } else {
        eprintln!("configuration is valid (`--print` shows it)");
    }
    Ok(())
}
