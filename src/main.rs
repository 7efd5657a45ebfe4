//! `cpistack`: the FMT/sFMT CPI-stack counter unit, its golden model, lock-step
//! checking, stream tools and benchmarks.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use cpistack::check::LockStep;
use cpistack::report::StackReport;
use cpistack::run::VariantArg;
use events::gen::{GenConfig, Generator};
use events::{CounterUnit, CycleEvents, Params, Variant};

/// FMT/sFMT performance-counter unit: accurate CPI stacks on an out-of-order core.
///
/// The bit-accurate model (`hw`) and an independent behavioural model (`golden`)
/// of the counter unit, checked against each other every cycle.
#[derive(Parser)]
#[command(name = "cpistack", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Lock-step run of a random legal stream through `hw` and `golden`.
    ///
    /// Exits 0 only if both models agreed on every visible field every cycle;
    /// prints the final counters and the CPI stack of each variant.
    Check(CheckArgs),
    /// Write a random legal stream to a file.
    Gen(GenArgs),
    /// Drive the unit from a stream file and print its counters and CPI stack.
    Replay(ReplayArgs),
    /// Storage bits of each structure of the unit.
    Cost(CostArgs),
    /// Throughput figures (run it in release mode: `make bench`).
    Bench(BenchArgs),
    /// Simulate the out-of-order core on a workload or a ChampSim trace, driving
    /// the FMT and sFMT units every cycle, and print the CPI stacks they measured.
    Run(cpistack::run::RunArgs),
    /// List the synthetic workloads of the suite.
    Workloads(cpistack::run::WorkloadsArgs),
    /// Show the effective core configuration.
    Config(cpistack::run::ConfigArgs),
    /// Build every CPI stack the paper compares (FMT, sFMT, naive, naive non-spec,
    /// POWER5, the simulation reference in three orders) on workloads and traces,
    /// measure each method's error, and write tables, JSON and charts.
    Stacks(cpistack::stacks::StacksArgs),
    /// The `stacks` study on variants of the machine, one configuration key
    /// varied at a time (`--vary core.rob_entries=64,256`): does each method's
    /// accuracy hold as the machine changes? Writes each point's `stacks`
    /// outputs and a summary, `sweep.csv`; for a key of three values or
    /// more (`--vary layout.seed=1,2,3`: random layouts in memory), the
    /// spread of each study's CPI and errors over them.
    Sweep(cpistack::stacks::sweep::SweepArgs),
    /// CPI stacks over time: the reference's, FMT's, sFMT's and POWER5's stack
    /// over each interval of `--interval` instructions, read from the same runs
    /// as `stacks` at instruction boundaries, and each method's error per
    /// interval. Writes `phases.csv`, `phases.json`, `phases.svg` and an `index.html`.
    Phases(cpistack::phases::PhasesArgs),
    /// FMT's, sFMT's and POWER5's global counters time-multiplexed over fewer
    /// physical counters (Azimi et al.): groups of components take turns in
    /// slices of cycles or instructions, each count scaled by the cycles its
    /// group counted. How far does each stack move from the full counters'
    /// and from the simulation reference? Writes `multiplex.csv`,
    /// `multiplex-summary.csv`, `multiplex.json`, `multiplex.svg` and an `index.html`.
    Multiplex(cpistack::multiplex::MultiplexArgs),
    /// Write one VCD waveform per scenario of the scenario table (FMT and sFMT),
    /// each with its GTKWave layout, into a directory (`make waves`); open one
    /// with `cd DIR && gtkwave NAME.gtkw`.
    Waves(cpistack::waves::WavesCmdArgs),
}

/// One variant (where `both` has no meaning).
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum OneVariant {
    Fmt,
    Sfmt,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Mix {
    /// About one branch in six instructions, a misprediction every ~100
    /// instructions, I-miss and ROB-full episodes (the benchmark mix).
    Realistic,
    /// Everything often: redirects, flushes, saturation, counting toggles,
    /// backend-full episodes.
    Stress,
    /// Nearly every instruction a branch, resolved late: the table fills up
    /// at any size (`--set fmt_rows=256 --set rob_entries=512`), with the
    /// stress mix's other events except its backend-full episodes.
    Fill,
}

impl Mix {
    fn config(self) -> GenConfig {
        match self {
            Mix::Realistic => GenConfig::realistic(),
            Mix::Stress => GenConfig::stress(),
            Mix::Fill => GenConfig::fill(),
        }
    }
}

#[derive(clap::Args)]
struct ParamArgs {
    /// Override a unit parameter, e.g. `--set fmt_rows=4 --set local_bits=3`
    /// (rob_entries, fmt_rows, local_bits, global_bits, fetch_width,
    /// dispatch_width, retire_width).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

impl ParamArgs {
    fn apply(&self, mut p: Params) -> Result<Params> {
        for (i, kv) in self.set.iter().enumerate() {
            let (k, v) = kv
                .split_once('=')
                .with_context(|| format!("--set `{kv}`: expected NAME=VALUE"))?;
            if k.trim() == "variant" {
                bail!("--set `{kv}`: the variant is chosen with --variant");
            }
            if let Some((key, first)) = cpistack::run::earlier_set(&self.set, i) {
                bail!("--set `{kv}`: `{key}` is already set by --set `{first}`");
            }
            p.set(k.trim(), v.trim())
                .map_err(|e| anyhow::anyhow!("--set `{kv}`: {e}"))?;
        }
        if let Err(e) = p.validate() {
            // named with the --set that gave the illegal value, if one did
            let by = |kv: &&String| kv.split_once('=').is_some_and(|(k, _)| k.trim() == e.name);
            match self.set.iter().find(by) {
                Some(kv) => bail!("--set `{kv}`: {e}"),
                None => return Err(e.into()),
            }
        }
        Ok(p)
    }
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Use a random legal stream: the only source `check` has, so this is
    /// the default (the flag is accepted as the command line writes it).
    #[arg(long)]
    random: bool,
    /// Seed of the random stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of cycles to run (at least 1).
    #[arg(long, default_value_t = 100_000, value_parser = cpistack::run::at_least_one::<u64>)]
    cycles: u64,
    /// Which variant(s) to check.
    #[arg(long, value_enum, default_value_t = VariantArg::Both)]
    variant: VariantArg,
    /// Stimulus mix.
    #[arg(long, value_enum, default_value_t = Mix::Realistic)]
    mix: Mix,
    #[command(flatten)]
    params: ParamArgs,
    #[command(flatten)]
    waves: cpistack::waves::WaveArgs,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Format {
    Jsonl,
    Bin,
}

#[derive(clap::Args)]
struct GenArgs {
    /// Seed of the random stream (the same seed gives the same file).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of bundles (cycles) to write.
    #[arg(long, default_value_t = 10_000)]
    cycles: u64,
    /// Output file. Its directory is made if missing; it is written to
    /// FILE.part and moved to FILE when complete, and a named pipe (such as
    /// /dev/stdout) is written directly.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// File format (default: by suffix: `.jsonl` or `.json` is JSON Lines, anything else binary).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Stimulus mix.
    #[arg(long, value_enum, default_value_t = Mix::Realistic)]
    mix: Mix,
    /// Variant written in the header (the stream itself is legal for both;
    /// `replay --variant` can drive either).
    #[arg(long, value_enum, default_value_t = OneVariant::Fmt)]
    variant: OneVariant,
    #[command(flatten)]
    params: ParamArgs,
}

#[derive(clap::Args)]
struct ReplayArgs {
    /// Stream file (JSON Lines or binary; detected from its content). A
    /// named pipe works too (`cpistack gen -o /dev/stdout | cpistack replay /dev/stdin`).
    file: PathBuf,
    /// Variant(s) to drive (default: the one in the file's header).
    #[arg(long, value_enum)]
    variant: Option<VariantArg>,
    /// Also run the golden model in lock step and compare every cycle.
    #[arg(long)]
    check: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Also print the cycle census, as `run --census` does: every counted
    /// cycle in one class by what the window, the ROB head and the frontend
    /// were doing (the window full by the first unit's ROB mirror or the
    /// bundle's `backend_full`), and where FMT's counters put it.
    #[arg(long)]
    census: bool,
    #[command(flatten)]
    waves: cpistack::waves::WaveArgs,
}

#[derive(clap::Args)]
struct CostArgs {
    /// Which variant(s) to cost.
    #[arg(long, value_enum, default_value_t = VariantArg::Both)]
    variant: VariantArg,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    params: ParamArgs,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Cycles in the in-memory stream, 1 to 50 000 000 (the streams it
    /// holds take about 50 bytes a cycle).
    #[arg(long, default_value_t = 10_000_000, value_parser = bench_cycles)]
    cycles: u64,
    /// Repetitions (the best is reported).
    #[arg(long, default_value_t = 3, value_parser = cpistack::run::at_least_one::<u32>)]
    reps: u32,
}

/// The most cycles `bench --cycles` takes: its streams are held in memory.
const BENCH_MAX_CYCLES: u64 = 50_000_000;

/// `bench --cycles`: 1 to [`BENCH_MAX_CYCLES`], refused before any work
/// (the streams are allocated up front).
fn bench_cycles(s: &str) -> Result<u64, String> {
    let n = cpistack::run::at_least_one::<u64>(s)?;
    if n > BENCH_MAX_CYCLES {
        return Err(format!(
            "at most {BENCH_MAX_CYCLES} (the benchmark holds its streams in memory, \
             about 50 bytes a cycle)"
        ));
    }
    Ok(n)
}

fn main() -> ExitCode {
    restore_sigpipe();
    output_errors_exit();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    let r = match &cli.cmd {
        Cmd::Check(a) => cmd_check(a),
        Cmd::Gen(a) => cmd_gen(a),
        Cmd::Replay(a) => cmd_replay(a),
        Cmd::Cost(a) => cmd_cost(a),
        Cmd::Bench(a) => cmd_bench(a),
        Cmd::Run(a) => cpistack::run::run(a),
        Cmd::Workloads(a) => cpistack::run::workloads(a),
        Cmd::Config(a) => cpistack::run::config(a),
        Cmd::Stacks(a) => cpistack::stacks::cmd(a),
        Cmd::Sweep(a) => cpistack::stacks::sweep::cmd(a),
        Cmd::Phases(a) => cpistack::phases::cmd(a),
        Cmd::Multiplex(a) => cpistack::multiplex::cmd(a),
        Cmd::Waves(a) => cpistack::waves::cmd(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Let a closed pipe end the program as it ends other Unix tools
/// (`cpistack run --json | head`): quietly, by `SIGPIPE`. Rust ignores the
/// signal, so that each write to the closed pipe fails instead, and `print!`
/// panics on that failure.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any other thread exists; it
    // changes only the disposition of SIGPIPE back to the system default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Let a failed write to standard output or error (`> /dev/full`, a full
/// disk) end the program as an error: its message and exit status 1. `print!`
/// panics on that failure, and a panic would exit 101 with a backtrace hint,
/// which reads as a bug of this program.
fn output_errors_exit() {
    let next = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let p = info.payload();
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("");
        // (std's message for a failed `print!`; every report is printed on
        // the main thread, so exiting here skips no other thread's cleanup)
        if msg.starts_with("failed printing to std") {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "error: {msg}");
            std::process::exit(1);
        }
        next(info)
    }));
}

/// Print clap's help, version or usage error and give its exit code; help
/// and version go to standard output, and a failure to write them there (`>
/// /dev/full`) is an error, as it is for every report.
fn clap_exit(e: &clap::Error) -> ExitCode {
    use std::io::Write;
    let printed = e.print().and_then(|()| {
        if e.use_stderr() {
            std::io::stderr().flush()
        } else {
            std::io::stdout().flush()
        }
    });
    match printed {
        Ok(()) => ExitCode::from(e.exit_code() as u8),
        Err(io) => {
            let to = if e.use_stderr() { "stderr" } else { "stdout" };
            eprintln!("error: failed printing to {to}: {io}");
            ExitCode::FAILURE
        }
    }
}

/// Bundles per [`LockStep::run_batch`] call of `check` and `replay --check`.
const BATCH: usize = 1 << 16;

/// `check`'s line for a variant whose models agreed throughout.
fn agreed(v: Variant, cycles: u64, seed: u64) -> String {
    format!(
        "{v}: hw and golden agreed on every field for {} (seed {seed})",
        cpistack::console::count(cycles, "cycle")
    )
}

fn cmd_check(a: &CheckArgs) -> Result<()> {
    // `--random` or not: a random stream is the only source
    let _ = a.random;
    let base = a.params.apply(Params::default())?;
    a.waves.check_variants(&a.variant.list())?;
    // a waveform on standard output is not mixed with the report
    let vcds = a.waves.paths(&a.variant.list());
    cpistack::console::report_to_stderr_if_stdout_among(vcds.iter().map(|p| p.as_path()));
    for (k, v) in a.variant.list().into_iter().enumerate() {
        let p = base.with_variant(v);
        let mut ls = LockStep::new(p)?.with_seed(a.seed);
        let mut wave = a.waves.tracer(k, ls.hw())?;
        let mut gen = Generator::new(p, a.mix.config(), a.seed).take(a.cycles as usize);
        if wave.is_none() {
            // hw and golden on two threads, a batch at a time
            let mut batch = Vec::with_capacity(BATCH);
            loop {
                batch.clear();
                batch.extend(gen.by_ref().take(BATCH));
                if batch.is_empty() {
                    break;
                }
                if let Err(m) = ls.run_batch(&batch) {
                    bail!("{m}");
                }
            }
        }
        for ev in gen {
            if let Err(m) = ls.step(&ev) {
                return Err(cpistack::waves::finish_after_failure(
                    vec![wave],
                    anyhow::anyhow!("{m}"),
                ));
            }
            if let Some(w) = &mut wave {
                hw::Tracer::cycle(&mut w.tracer, ls.hw(), &ev);
            }
        }
        cpistack::waves::finish_all(vec![wave])?;
        if let Some(e) = ls.hw().view().error {
            bail!("the random stream broke the protocol (a generator bug): {e}");
        }
        cpistack::reportln!("{}", agreed(v, a.cycles, a.seed));
        cpistack::report!("{}", StackReport::from_unit(ls.hw()).text());
    }
    Ok(())
}

fn cmd_gen(a: &GenArgs) -> Result<()> {
    let v = match a.variant {
        OneVariant::Fmt => Variant::Fmt,
        OneVariant::Sfmt => Variant::Sfmt,
    };
    let p = a.params.apply(Params::default())?.with_variant(v);
    let fmt = match a.format {
        Some(Format::Jsonl) => events::stream::Format::Jsonl,
        Some(Format::Bin) => events::stream::Format::Bin,
        None => events::stream::Format::from_path(&a.output).unwrap_or(events::stream::Format::Bin),
    };
    // as `run --events`: the directory is made if missing, and the stream is
    // written to FILE.part until it is complete (then moved to FILE)
    cpistack::paths::output_file(&a.output, "-o")?;
    let part = cpistack::paths::part_path(&a.output);
    let mut w =
        events::stream::create(&part, fmt, &p).map_err(|e| stream_error("creating", &part, e))?;
    // (JSON Lines only; a binary stream has no comments)
    let mix = a.mix.to_possible_value().map(|v| v.get_name().to_string());
    w.comment(&format!(
        "cpistack gen --seed {} --cycles {} --mix {}",
        a.seed,
        a.cycles,
        mix.unwrap_or_default()
    ))?;
    for ev in Generator::new(p, a.mix.config(), a.seed).take(a.cycles as usize) {
        w.write(&ev)?;
    }
    w.finish()?;
    cpistack::paths::move_into_place(&a.output, "-o")?;
    eprintln!(
        "wrote {} (seed {}) to {}",
        cpistack::console::count(a.cycles, "cycle"),
        a.seed,
        a.output.display()
    );
    Ok(())
}

/// A unit driven by a replay: plain `hw`, or `hw` and `golden` in lock step.
enum Driven {
    Plain(Box<hw::Unit>),
    Checked(Box<LockStep>),
}

impl Driven {
    fn hw(&self) -> &hw::Unit {
        match self {
            Driven::Plain(u) => u,
            Driven::Checked(l) => l.hw(),
        }
    }
}

/// A stream error as `VERB FILE: ...`, naming the file once: the errors that
/// already name it (an I/O error, an unknown format) are not wrapped again.
fn stream_error(
    verb: &str,
    path: &std::path::Path,
    e: events::stream::StreamError,
) -> anyhow::Error {
    use events::stream::StreamError as E;
    match e {
        E::Io { .. } | E::UnknownFormat { .. } => e.into(),
        e => anyhow::Error::new(e).context(format!("{verb} {}", path.display())),
    }
}

/// [`stream_error`] for reading.
fn reading(path: &std::path::Path, e: events::stream::StreamError) -> anyhow::Error {
    stream_error("reading", path, e)
}

fn cmd_replay(a: &ReplayArgs) -> Result<()> {
    let (fp, stream) = events::stream::open(&a.file).map_err(|e| reading(&a.file, e))?;
    let variants = match a.variant {
        Some(v) => v.list(),
        None => vec![fp.variant],
    };
    a.waves.refuse_overwrite(&a.file, &variants)?;
    a.waves.check_variants(&variants)?;
    // a waveform on standard output is not mixed with the report
    let vcds = a.waves.paths(&variants);
    cpistack::console::report_to_stderr_if_stdout_among(vcds.iter().map(|p| p.as_path()));
    let mut units = variants
        .iter()
        .map(|&v| {
            let p = fp.with_variant(v);
            Ok(if a.check {
                Driven::Checked(Box::new(LockStep::new(p)?))
            } else {
                Driven::Plain(Box::new(hw::Unit::new(p)?))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut waves = Vec::new();
    for (k, u) in units.iter().enumerate() {
        waves.push(a.waves.tracer(k, u.hw())?);
    }
    let mut census = a.census.then(cpistack::census::Census::new);
    let n = match drive_replay(a, stream, &mut units, &mut waves, &mut census) {
        Ok(n) => n,
        // the waveforms up to the failure are kept, and never hide it
        Err(e) => return Err(cpistack::waves::finish_after_failure(waves, e)),
    };
    cpistack::waves::finish_all(waves)?;
    let reports: Vec<StackReport> = units
        .iter()
        .map(|u| StackReport::from_unit(u.hw()))
        .collect();
    if a.json {
        let mut out = serde_json::json!({
            "file": a.file.display().to_string(),
            "cycles_replayed": n,
            "checked": a.check,
            "units": reports,
        });
        if let Some(c) = &census {
            out["census"] = serde_json::to_value(c.rows())?;
        }
        cpistack::reportln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        cpistack::reportln!(
            "{}: {} replayed",
            a.file.display(),
            cpistack::console::count(n as u64, "cycle")
        );
        if a.check {
            cpistack::reportln!("hw and golden agreed on every field every cycle");
        }
        for r in &reports {
            cpistack::report!("{}", r.text());
        }
        if let Some(c) = &census {
            cpistack::report!("{}", c.text());
        }
    }
    Ok(())
}

/// A protocol violation latched while replaying `path`: the latch's cycle,
/// field and rule, then where the bundle is in the file and the bundle as a
/// JSONL stream writes it (`ev`, when the caller still has it).
fn violation(
    path: &std::path::Path,
    e: &events::ProtocolError,
    ev: Option<&CycleEvents>,
) -> anyhow::Error {
    let mut msg = format!("{}: {e}", path.display());
    // Without a location when the file cannot be read again (a pipe) or
    // changed meanwhile.
    if let Ok(Some(at)) = events::stream::locate(path, e.bundle) {
        msg += &format!("; the bundle is at {at}");
    }
    if let Some(ev) = ev {
        msg += &format!(": {}", events::stream::bundle_json(ev));
    }
    anyhow::anyhow!(msg)
}

/// Drive `units` (and their tracers) with every bundle of `stream`; returns
/// the bundles replayed. Fails on a read error, a protocol violation or a
/// lock-step difference, naming the file.
fn drive_replay(
    a: &ReplayArgs,
    mut stream: events::stream::EventIter,
    units: &mut [Driven],
    waves: &mut [Option<cpistack::waves::Traced>],
    census: &mut Option<cpistack::census::Census>,
) -> Result<u64> {
    let mut n: u64 = 0;
    if a.check && waves.iter().all(Option::is_none) && census.is_none() {
        // hw and golden on two threads, a batch of bundles at a time
        let mut batch = Vec::with_capacity(BATCH);
        let mut read_err = None;
        while read_err.is_none() {
            batch.clear();
            for ev in stream.by_ref().take(BATCH) {
                match ev {
                    Ok(ev) => batch.push(ev),
                    Err(e) => {
                        read_err = Some(e);
                        break;
                    }
                }
            }
            if batch.is_empty() && read_err.is_none() {
                break;
            }
            for u in units.iter_mut() {
                if let Driven::Checked(l) = u {
                    l.run_batch(&batch).map_err(|m| anyhow::anyhow!("{m}"))?;
                }
                if let Some(e) = u.hw().view().error {
                    let ev = e.bundle.checked_sub(n).and_then(|i| batch.get(i as usize));
                    return Err(violation(&a.file, &e, ev));
                }
            }
            n += batch.len() as u64;
        }
        if let Some(e) = read_err {
            return Err(reading(&a.file, e));
        }
    }
    for ev in stream {
        let ev: CycleEvents = ev.map_err(|e| reading(&a.file, e))?;
        if let (Some(c), Some(u)) = (census.as_mut(), units.first()) {
            c.before_step(u.hw(), &ev);
        }
        for (u, w) in units.iter_mut().zip(waves.iter_mut()) {
            let r = match u {
                Driven::Plain(h) => {
                    h.step(&ev);
                    Ok(())
                }
                Driven::Checked(l) => l.step(&ev).map_err(|m| anyhow::anyhow!("{m}")),
            };
            if let Some(w) = w {
                hw::Tracer::cycle(&mut w.tracer, u.hw(), &ev);
            }
            // the latch alone: a whole view each cycle (its pending sums
            // included) took a fifth of an unchecked replay's time
            if let Some(e) = u.hw().latch().error {
                return r.and(Err(violation(&a.file, &e, Some(&ev))));
            }
            r?;
        }
        n += 1;
    }
    Ok(n)
}

fn cmd_cost(a: &CostArgs) -> Result<()> {
    let base = a.params.apply(Params::default())?;
    let costs: Vec<hw::Cost> = a
        .variant
        .list()
        .into_iter()
        .map(|v| hw::cost(&base.with_variant(v)))
        .collect::<Result<_, _>>()?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&costs)?);
    } else {
        for c in &costs {
            print!("{c}");
        }
    }
    Ok(())
}

fn cmd_bench(a: &BenchArgs) -> Result<()> {
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; run `make bench` (release) for real figures");
    }
    let mut figs = cpistack::bench::Figures::default();
    // first: the memory figures read the process's peak, which the in-memory
    // streams of the others would raise
    cpistack::bench::mem_figures(&mut figs)?;
    cpistack::bench::unit_figures(a.cycles as usize, a.reps as usize, &mut figs)?;
    cpistack::bench::wave_figures(a.cycles as usize, a.reps as usize, &mut figs)?;
    cpistack::bench::sim_figures(&mut figs)?;
    if a.json {
        println!("{}", serde_json::to_string(&figs.json())?);
    } else {
        print!("{}", figs.text());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("cpistack").chain(args.iter().copied()))
    }

    #[cfg(unix)]
    fn mkfifo(path: &std::path::Path) {
        let c = std::ffi::CString::new(path.display().to_string()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates it.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    }

    #[test]
    fn an_empty_name_in_the_traces_list_is_refused_as_such() {
        for list in ["a,,b", "a,", ",a"] {
            let e = parse(&["stacks", "--traces", list]).err().expect(list);
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{list}");
            assert!(e.to_string().contains("an empty name in the list"), "{e}");
        }
        let Cmd::Stacks(a) = parse(&["stacks", "--traces", "a,b"]).unwrap().cmd else {
            panic!("stacks")
        };
        assert_eq!(a.sources.traces, [PathBuf::from("a"), PathBuf::from("b")]);
    }

    /// A parameter that `validate` refuses is named with the `--set` that
    /// gave it, as every other `--set` error is.
    #[test]
    fn an_illegal_parameter_names_its_set() {
        let apply = |set: &[&str]| {
            ParamArgs {
                set: set.iter().map(|s| s.to_string()).collect(),
            }
            .apply(Params::default())
        };
        let e = apply(&["fmt_rows=4", " rob_entries = 0"])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--set ` rob_entries = 0`: parameter `rob_entries` = 0 is illegal: 2..=4096"
        );
        assert_eq!(apply(&["rob_entries=64"]).unwrap().rob_entries, 64);
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// docs/cli.md has a section per subcommand naming every one of its long
    /// options, so that an option added to the program must be documented.
    #[test]
    fn every_option_is_in_the_command_reference() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md"))
            .expect("docs/cli.md");
        let mut missing = Vec::new();
        for sub in Cli::command().get_subcommands() {
            let head = format!("## `cpistack {}`", sub.get_name());
            let Some(at) = doc.find(&head) else {
                missing.push(head);
                continue;
            };
            let rest = &doc[at + head.len()..];
            let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                if ["help", "version"].contains(&long) {
                    continue;
                }
                let flag = format!("--{long}");
                let named = section.match_indices(&flag).any(|(i, _)| {
                    !section[i + flag.len()..]
                        .starts_with(|c: char| c == '-' || c.is_alphanumeric())
                });
                if !named {
                    missing.push(format!("{} {flag}", sub.get_name()));
                }
            }
        }
        assert!(missing.is_empty(), "not in docs/cli.md: {missing:?}");
    }

    /// A trace has no seed: `run --trace T --seed S` is a usage error, not a
    /// seed recorded in the report that changed nothing.
    #[test]
    fn a_seed_with_a_trace_is_refused() {
        let e = parse(&["run", "--trace", "t.xz", "--seed", "5"])
            .err()
            .expect("refused");
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{e}");
        assert!(parse(&["run", "--trace", "t.xz"]).is_ok());
        assert!(parse(&["run", "--workload", "mlp", "--seed", "5"]).is_ok());
        // and a workload has no records to skip
        for args in [
            &["run", "--workload", "mlp", "--skip", "5"][..],
            &["run", "--skip", "5"],
        ] {
            assert!(parse(args).is_err(), "{args:?}");
        }
        assert!(parse(&["run", "--trace", "t.xz", "--skip", "5"]).is_ok());
    }

    #[test]
    fn zero_instructions_are_a_usage_error_for_run_and_stacks_alike() {
        for cmd in ["run", "stacks"] {
            let e = parse(&[cmd, "--instructions", "0"]).err().expect(cmd);
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{cmd}: {e}"
            );
            assert!(
                e.to_string().contains(
                    "invalid value '0' for '--instructions <INSTRUCTIONS>': must be at least 1"
                ),
                "{cmd}: {e}"
            );
            assert!(parse(&[cmd, "--instructions", "1"]).is_ok(), "{cmd}");
            let e = parse(&[cmd, "--instructions", "x"]).err().expect(cmd);
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        }
    }

    /// A check of no cycles would report agreement it never tested.
    #[test]
    fn a_check_of_zero_cycles_is_a_usage_error() {
        let e = parse(&["check", "--cycles", "0"]).err().expect("refused");
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{e}");
        assert!(e.to_string().contains("must be at least 1"), "{e}");
        assert!(parse(&["check", "--cycles", "1"]).is_ok());
    }

    /// The README's first example is this program's output, line for line (up
    /// to its `...`), so that it cannot go stale.
    #[test]
    fn the_readme_check_example_is_the_real_output() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md");
        let cmd = "$ cpistack check --random --seed 1 --cycles 20000";
        let shown: Vec<&str> = readme
            .lines()
            .skip_while(|l| *l != cmd)
            .skip(1)
            .take_while(|l| *l != "...")
            .collect();
        assert!(shown.len() > 5, "README: no `{cmd}` example");
        let Cmd::Check(a) = parse(&cmd["$ cpistack ".len()..].split(' ').collect::<Vec<_>>())
            .unwrap()
            .cmd
        else {
            panic!("not a check command");
        };
        let p = a
            .params
            .apply(Params::default())
            .unwrap()
            .with_variant(Variant::Fmt);
        let mut u = hw::Unit::new(p).unwrap();
        for ev in Generator::new(p, a.mix.config(), a.seed).take(a.cycles as usize) {
            u.step(&ev);
        }
        let real = format!(
            "{}\n{}",
            agreed(Variant::Fmt, a.cycles, a.seed),
            StackReport::from_unit(&u).text()
        );
        assert!(
            shown.len() <= real.lines().count(),
            "the README's example has more lines than the output"
        );
        for (k, (s, r)) in shown.iter().zip(real.lines()).enumerate() {
            assert_eq!(
                s,
                &r,
                "README line {} of the example differs from the output",
                k + 1
            );
        }
    }

    /// A protocol violation in a replayed file names the latch's cycle, field
    /// and rule, where the bundle is in the file and the bundle itself, in
    /// both formats, stepped one bundle at a time and in `--check`'s batches
    /// (the violation in the second batch, so that its index is not the
    /// batch's, and far enough into it that `run_batch` takes its two-thread
    /// path). A named pipe is not read twice: the message goes without the
    /// location.
    /// `replay --census` of a stream `run --events` recorded is the run's own
    /// census, with and without `--check` (which then steps bundle by bundle).
    #[test]
    fn a_replayed_census_is_the_census_of_the_run_that_recorded_it() {
        let path = std::env::temp_dir().join(format!("cpistack-census-{}.bin", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let file = path.display().to_string();
        let run = [
            "run",
            "--workload",
            "server",
            "--instructions",
            "20000",
            "--warmup",
            "2000",
            "--variant",
            "fmt",
            "--census",
            "--events",
            file.as_str(),
        ];
        let Cmd::Run(r) = parse(&run).unwrap().cmd else {
            panic!("not a run command");
        };
        let want = cpistack::run::simulate(&r).unwrap().census.unwrap();
        assert!(
            want.iter().filter(|r| r.cycles > 0).count() >= 8,
            "{want:?}"
        );
        for check in [&[][..], &["--check"][..]] {
            let mut args = vec!["replay", file.as_str(), "--census"];
            args.extend_from_slice(check);
            let Cmd::Replay(a) = parse(&args).unwrap().cmd else {
                panic!("not a replay command");
            };
            let (fp, stream) = events::stream::open(&a.file).unwrap();
            let mut units = vec![if a.check {
                Driven::Checked(Box::new(LockStep::new(fp).unwrap()))
            } else {
                Driven::Plain(Box::new(hw::Unit::new(fp).unwrap()))
            }];
            let mut census = Some(cpistack::census::Census::new());
            drive_replay(&a, stream, &mut units, &mut [None], &mut census).unwrap();
            assert_eq!(census.unwrap().rows(), want, "{args:?}");
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_replayed_violation_points_at_the_bundle_in_the_file() {
        use events::stream::{create, Format};
        // enough bundles in the second batch for `run_batch`'s two threads
        let idle = BATCH as u64 + 2 * cpistack::check::MIN_PAR as u64 + 3;
        let bad = CycleEvents {
            retired: 3,
            ..CycleEvents::default()
        };
        let header_len = events::stream::HEADER_LEN as u64;
        let record = events::stream::RECORD_SIZE as u64;
        for (fmt, ext, at) in [
            // the header line, the comment, the idle lines, the dispatch
            (
                Format::Jsonl,
                "jsonl",
                format!("line {}", 1 + 1 + idle + 1 + 1),
            ),
            (
                Format::Bin,
                "bin",
                format!("byte offset {}", header_len + (idle + 1) * record),
            ),
        ] {
            let path = std::env::temp_dir()
                .join(format!("cpistack-violation-{}.{ext}", std::process::id()));
            let mut w = create(&path, fmt, &Params::default()).unwrap();
            w.comment("idle cycles, one dispatch of 2, then 3 retire")
                .unwrap();
            for _ in 0..idle {
                w.write(&CycleEvents::default()).unwrap();
            }
            w.write(&CycleEvents {
                dispatched: 2,
                ..CycleEvents::default()
            })
            .unwrap();
            w.write(&bad).unwrap();
            w.finish().unwrap();
            let file = path.display().to_string();
            for check in [&[][..], &["--check"][..]] {
                let mut args = vec!["replay", file.as_str(), "--variant", "both"];
                args.extend_from_slice(check);
                let Cmd::Replay(a) = parse(&args).unwrap().cmd else {
                    panic!("not a replay command");
                };
                let e = cmd_replay(&a).unwrap_err().to_string();
                let want = format!(
                    "{file}: protocol violation at cycle {} (bundle index from 0): field `retired`, rule 2 ({}); the bundle is at {at}: {{\"retired\":3}}",
                    idle + 1,
                    events::ProtocolError::rule_text(2)
                );
                assert_eq!(e, want, "{args:?}");
            }
            #[cfg(unix)]
            if fmt == Format::Jsonl {
                // the same stream through a named pipe: read once, no location
                let fifo = path.with_extension("fifo");
                mkfifo(&fifo);
                let bytes = std::fs::read(&path).unwrap();
                let w = fifo.clone();
                std::thread::spawn(move || std::fs::write(w, bytes));
                let name = fifo.display().to_string();
                let Cmd::Replay(a) = parse(&["replay", name.as_str()]).unwrap().cmd else {
                    panic!("not a replay command");
                };
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || tx.send(cmd_replay(&a).unwrap_err().to_string()));
                let e = rx
                    .recv_timeout(std::time::Duration::from_secs(60))
                    .expect("replay of a named pipe finishes (it must not open it twice)");
                let want = format!(
                    "{name}: protocol violation at cycle {} (bundle index from 0): field `retired`, rule 2 ({}): {{\"retired\":3}}",
                    idle + 1,
                    events::ProtocolError::rule_text(2)
                );
                assert_eq!(e, want);
                std::fs::remove_file(&fifo).unwrap();
            }
            std::fs::remove_file(&path).unwrap();
        }
    }

    /// `gen -o` makes the file's directory, writes through `FILE.part` (none
    /// left behind), and writes a named pipe directly (`gen -o /dev/stdout |
    /// cpistack replay /dev/stdin`); the stream read back is the generator's.
    #[test]
    fn gen_writes_files_and_pipes() {
        let dir = std::env::temp_dir().join(format!("cpistack-gen-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = dir.join("new").join("s.bin");
        let want: Vec<CycleEvents> = Generator::new(Params::default(), Mix::Realistic.config(), 9)
            .take(3000)
            .collect();
        let gen = |out: &std::path::Path| {
            let o = out.display().to_string();
            let Cmd::Gen(a) = parse(&["gen", "--seed", "9", "--cycles", "3000", "-o", &o])
                .unwrap()
                .cmd
            else {
                panic!("not a gen command");
            };
            cmd_gen(&a)
        };
        gen(&file).unwrap();
        let read = |bytes: &[u8]| events::stream::decode_bin(bytes).unwrap().1;
        assert_eq!(read(&std::fs::read(&file).unwrap()), want);
        assert_eq!(
            std::fs::read_dir(file.parent().unwrap()).unwrap().count(),
            1,
            "only s.bin"
        );
        #[cfg(unix)]
        {
            let fifo = dir.join("p.bin");
            mkfifo(&fifo);
            let f = fifo.clone();
            let reader = std::thread::spawn(move || std::fs::read(f).unwrap());
            gen(&fifo).unwrap();
            assert_eq!(read(&reader.join().unwrap()), want);
            assert!(!dir.join("p.bin.part").exists());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_unit_parameter_set_twice_is_refused_naming_both() {
        let a = ParamArgs {
            set: vec!["fmt_rows=8".into(), " fmt_rows = 16".into()],
        };
        let e = a.apply(Params::default()).unwrap_err().to_string();
        assert!(
            e.contains("`fmt_rows` is already set by --set `fmt_rows=8`"),
            "{e}"
        );
        let a = ParamArgs {
            set: vec!["fmt_rows=8".into(), "rob_entries=16".into()],
        };
        let p = a.apply(Params::default()).unwrap();
        assert_eq!((p.fmt_rows, p.rob_entries), (8, 16));
    }

    /// `bench --cycles` takes 1 to 50 000 000 and refuses 0 and one more than
    /// the most, saying why.
    #[test]
    fn bench_takes_one_to_fifty_million_cycles() {
        assert_eq!(bench_cycles("1"), Ok(1));
        assert_eq!(bench_cycles("50000000"), Ok(50_000_000));
        assert_eq!(bench_cycles("0"), Err("must be at least 1".to_string()));
        assert_eq!(
            bench_cycles("50000001"),
            Err(
                "at most 50000000 (the benchmark holds its streams in memory, \
                 about 50 bytes a cycle)"
                    .to_string()
            )
        );
    }

    /// `check` runs the check it is asked for: with `--vcd` it writes the
    /// waveform of every cycle it checked (a valid VCD ending at time 2 x
    /// cycles), and it refuses an illegal parameter, naming its `--set`.
    #[test]
    fn check_writes_its_waveform_and_refuses_an_illegal_parameter() {
        let dir = std::env::temp_dir().join(format!("cpistack-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let vcd = dir.join("c.vcd");
        let v = vcd.display().to_string();
        let check = |args: &[&str]| {
            let Cmd::Check(a) = parse(args).unwrap().cmd else {
                panic!("not a check command");
            };
            cmd_check(&a)
        };
        check(&[
            "check",
            "--seed",
            "3",
            "--cycles",
            "300",
            "--variant",
            "fmt",
            "--vcd",
            &v,
        ])
        .unwrap();
        cpistack::vcdcheck::check_file(&vcd).unwrap();
        assert!(dir.join("c.gtkw").exists(), "the layout beside the VCD");
        let e = check(&["check", "--cycles", "10", "--set", "rob_entries=0"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set `rob_entries=0`: parameter `rob_entries` = 0 is illegal: 2..=4096"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `cost` costs the unit of the parameters given, so it refuses an
    /// illegal one, naming its `--set`.
    #[test]
    fn cost_refuses_an_illegal_parameter() {
        let Cmd::Cost(a) = parse(&["cost", "--set", "fmt_rows=0"]).unwrap().cmd else {
            panic!("not a cost command");
        };
        assert_eq!(
            cmd_cost(&a).unwrap_err().to_string(),
            "--set `fmt_rows=0`: parameter `fmt_rows` = 0 is illegal: a power of two in 2..=256"
        );
    }

    /// A replay returns the number of bundles it drove, stepped one at a
    /// time or in `--check`'s batches (more than one batch here, the last
    /// one partial).
    #[test]
    fn a_replay_counts_every_bundle_it_drove() {
        use events::stream::{create, Format};
        let n = BATCH + 2 * cpistack::check::MIN_PAR + 7;
        let p = Params::default();
        let path = std::env::temp_dir().join(format!("cpistack-count-{}.bin", std::process::id()));
        let mut w = create(&path, Format::Bin, &p).unwrap();
        for ev in Generator::new(p, Mix::Realistic.config(), 2).take(n) {
            w.write(&ev).unwrap();
        }
        w.finish().unwrap();
        let file = path.display().to_string();
        for check in [false, true] {
            let mut args = vec!["replay", file.as_str()];
            if check {
                args.push("--check");
            }
            let Cmd::Replay(a) = parse(&args).unwrap().cmd else {
                panic!("not a replay command");
            };
            let (fp, stream) = events::stream::open(&a.file).unwrap();
            let mut units = vec![if check {
                Driven::Checked(Box::new(LockStep::new(fp).unwrap().with_waves_dir(None)))
            } else {
                Driven::Plain(Box::new(hw::Unit::new(fp).unwrap()))
            }];
            let got = drive_replay(&a, stream, &mut units, &mut [None], &mut None).unwrap();
            assert_eq!(got, n as u64, "{args:?}");
            assert_eq!(
                units[0].hw().view().counters.value[0],
                n as u64,
                "{args:?}: cycles counted"
            );
        }
        std::fs::remove_file(&path).unwrap();
    }

    /// Each `--mix` draws the generator configuration of its name, for `check`
    /// and `gen` alike; without one it is the realistic mix.
    #[test]
    fn each_mix_is_the_generator_configuration_of_its_name() {
        for (args, want) in [
            (&[][..], GenConfig::realistic()),
            (&["--mix", "realistic"], GenConfig::realistic()),
            (&["--mix", "stress"], GenConfig::stress()),
            (&["--mix", "fill"], GenConfig::fill()),
        ] {
            let Cmd::Check(c) = parse(&[&["check"][..], args].concat()).unwrap().cmd else {
                panic!("not a check command");
            };
            assert_eq!(c.mix.config(), want, "check {args:?}");
            let Cmd::Gen(g) = parse(&[&["gen", "-o", "x.bin"][..], args].concat())
                .unwrap()
                .cmd
            else {
                panic!("not a gen command");
            };
            assert_eq!(g.mix.config(), want, "gen {args:?}");
        }
        assert_ne!(GenConfig::stress(), GenConfig::realistic());
        assert_ne!(GenConfig::fill(), GenConfig::stress());
    }
}
