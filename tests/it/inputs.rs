//! Bad input and bad output paths at the command level (found by an
//! adversarial review of the CLI): a source that ends before the run is done,
//! an output that is the input, a `--vcd` window never reached, an `--out`
//! that is a file, values too large for a parameter. Each is an error naming
//! what and where, found before the work where it can be, and never a
//! silently short or wrong result.

use std::path::{Path, PathBuf};

use crate::scratch::Scratch;

use cpistack::run::{simulate, MachineArgs, RunArgs, VariantArg};
use cpistack::stacks::{run_study, Settings, Source, SourceArgs, StacksArgs};
use events::CounterUnit;

/// A fresh scratch directory for one test, removed if it passes.
fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("inputs-{name}"))
}

/// A raw ChampSim trace of `n` plain (non-branch, no memory) instructions.
fn tiny_trace(dir: &Path, n: u64) -> PathBuf {
    let mut b = Vec::with_capacity(64 * n as usize);
    for i in 0..n {
        let mut r = [0u8; 64];
        r[..8].copy_from_slice(&(0x40_1000 + 4 * i).to_le_bytes());
        b.extend_from_slice(&r);
    }
    let p = dir.join("tiny.trace");
    std::fs::write(&p, b).unwrap();
    p
}

fn trace_args(trace: &Path, warmup: u64, instructions: u64) -> RunArgs {
    RunArgs {
        workload: "balanced".into(),
        trace: Some(trace.to_path_buf()),
        skip: 0,
        instructions,
        warmup,
        seed: 1,
        machine: MachineArgs::default(),
        variant: VariantArg::Fmt,
        check: true,
        events: None,
        waves: Default::default(),
        json: true,
        census: false,
    }
}

#[test]
fn a_trace_that_ends_before_the_measurement_is_done_is_an_error() {
    let d = scratch("short");
    let t = tiny_trace(&d, 3_000);
    // enough: a result
    let r = simulate(&trace_args(&t, 100, 2_000)).unwrap();
    assert_eq!(r.instructions, 2_000);
    // a trace has no seed: its report says none (JSON null), not the
    // workloads' default
    assert_eq!(r.seed, None);
    assert_eq!(
        serde_json::to_value(&r).unwrap()["seed"],
        serde_json::Value::Null
    );
    // where counting starts: the warm-up's cycles, then the measured ones
    assert!(
        r.first_counted_cycle > 0,
        "100 instructions of warm-up take cycles"
    );
    assert_eq!(r.first_counted_cycle + r.cycles, r.total_cycles);
    assert_eq!(
        simulate(&trace_args(&t, 0, 2_000))
            .unwrap()
            .first_counted_cycle,
        0
    );
    // too short for the measurement, then for the warm-up: errors naming the counts
    for (warmup, instructions, measured) in [(1_000, 50_000, 2_000), (5_000, 100, 0)] {
        let e = simulate(&trace_args(&t, warmup, instructions))
            .err()
            .expect("an error");
        let m = format!("{e:#}");
        assert!(
            m.contains("the source ended after 3000 instructions"),
            "{m}"
        );
        assert!(m.contains(&format!("{measured} of them measured")), "{m}");
        assert!(
            m.contains(&format!(
                "asked for {warmup} of warm-up and {instructions} measured"
            )),
            "{m}"
        );
    }
}

#[test]
fn a_failed_run_leaves_its_stream_as_part_and_its_waveform_finished() {
    let d = scratch("part");
    let t = tiny_trace(&d, 3_000);
    let mut a = trace_args(&t, 100, 10_000);
    let ev = d.join("run.bin");
    let vcd = d.join("run.vcd");
    a.events = Some(ev.clone());
    a.waves.vcd = Some(vcd.clone());
    assert!(simulate(&a).is_err());
    // no valid-looking stream at the name asked for; the part replays
    assert!(!ev.exists());
    let (_, it) = events::stream::open(d.join("run.bin.part")).unwrap();
    let n = it.inspect(|r| assert!(r.is_ok(), "{r:?}")).count();
    assert!(n > 3_000, "{n} bundles");
    // the waveform of the cycles up to the failure, finished (it ends with a timestamp)
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(text.trim_end().lines().last().unwrap().starts_with('#'));
    assert!(!d.join("run.vcd.part").exists());
    // the same run, long enough: the stream is at its name
    a.instructions = 2_000;
    simulate(&a).unwrap();
    assert!(ev.exists() && !d.join("run.bin.part").exists());
    let (_, it) = events::stream::open(&ev).unwrap();
    assert!(it.count() > 2_000);
}

/// The rate reported is every instruction the core committed, warm-up
/// included, over the seconds reported (`cpistack bench` reads the count
/// back from the two): 100 of warm-up and 2000 measured are 2100.
#[test]
fn the_rate_is_the_committed_instructions_over_the_seconds() {
    let d = scratch("rate");
    let t = tiny_trace(&d, 3_000);
    let r = simulate(&trace_args(&t, 100, 2_000)).unwrap();
    assert!(r.seconds > 0.0);
    assert_eq!((r.instructions_per_second * r.seconds).round(), 2_100.0);
}

/// `run` and `config` fail on an illegal machine, naming the key, as
/// `simulate` does: neither prints a report or "valid" and succeeds.
#[test]
fn run_and_config_refuse_an_illegal_machine() {
    let machine = MachineArgs {
        set: vec!["core.rob_entries=0".into()],
        ..Default::default()
    };
    let mut a = trace_args(Path::new("never-opened.trace"), 0, 1);
    a.machine = machine.clone();
    let e = format!("{:#}", cpistack::run::run(&a).unwrap_err());
    assert!(e.contains("rob_entries"), "{e}");
    let c = cpistack::run::ConfigArgs {
        print: false,
        machine,
        json: false,
    };
    let e = format!("{:#}", cpistack::run::config(&c).unwrap_err());
    assert!(e.contains("rob_entries"), "{e}");
}

#[test]
fn an_output_that_is_the_input_is_refused_before_anything_is_written() {
    let d = scratch("same");
    let t = tiny_trace(&d, 3_000);
    let before = std::fs::read(&t).unwrap();
    for (events, vcd) in [
        (Some(t.clone()), None),
        (None, Some(d.join(".").join("tiny.trace"))),
    ] {
        let mut a = trace_args(&t, 100, 1_000);
        a.events = events;
        a.waves.vcd = vcd;
        let e = format!("{:#}", simulate(&a).err().expect("refused"));
        assert!(e.contains("would overwrite the input file"), "{e}");
        assert_eq!(std::fs::read(&t).unwrap(), before, "the input is untouched");
    }
    // nor through a directory still to be made and `..` (`nd` does not
    // exist when the outputs are checked), or a dangling link's file: both
    // refused before any directory is made
    for (events, vcd) in [
        (Some(d.join("nd/../tiny.trace")), None),
        (None, Some(d.join("nd/x/../../tiny.trace"))),
    ] {
        let mut a = trace_args(&t, 100, 1_000);
        a.events = events;
        a.waves.vcd = vcd;
        let e = format!("{:#}", simulate(&a).err().expect("refused"));
        assert!(e.contains("would overwrite the input file"), "{e}");
        assert!(e.contains("(written at "), "{e}");
        assert_eq!(std::fs::read(&t).unwrap(), before, "the input is untouched");
        assert!(!d.join("nd").exists(), "no directory made");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("later.bin", d.join("dangling.vcd")).unwrap();
        let mut a = trace_args(&t, 100, 1_000);
        a.events = Some(d.join("later.bin"));
        a.waves.vcd = Some(d.join("dangling.vcd"));
        let e = format!("{:#}", simulate(&a).err().expect("refused"));
        assert!(e.contains("name the same file"), "{e}");
        assert!(!d.join("later.bin").exists());
    }
    // nor through the `.part` an output is written to first
    let part = d.join("out.part");
    std::fs::copy(&t, &part).unwrap();
    let mut a = trace_args(&part, 100, 1_000);
    a.events = Some(d.join("out"));
    let e = format!("{:#}", simulate(&a).err().expect("refused"));
    assert!(e.contains("would overwrite the input file"), "{e}");
    assert_eq!(std::fs::read(&part).unwrap(), before);
    // two outputs of one name
    let mut a = trace_args(&t, 100, 1_000);
    a.events = Some(d.join("both.out"));
    a.waves.vcd = Some(d.join("both.out"));
    let e = format!("{:#}", simulate(&a).err().expect("refused"));
    assert!(e.contains("name the same file"), "{e}");
    // the stream at the VCD's layout, refused before the run (not after it)
    let mut a = trace_args(&t, 100, 1_000);
    a.events = Some(d.join("c.gtkw"));
    a.waves.vcd = Some(d.join("c.vcd"));
    let e = format!("{:#}", simulate(&a).err().expect("refused"));
    assert!(e.contains("--vcd's GTKWave layout"), "{e}");
    assert!(!d.join("c.vcd").exists() && !d.join("c.gtkw").exists());
    // the --config file is an input too, for every output of the run
    let cfg = d.join("machine.toml");
    std::fs::write(&cfg, "[core]\nrob_entries = 64\n").unwrap();
    // (a JSON configuration may have any name, a layout's among them)
    let json = d.join("machine.gtkw");
    std::fs::write(&json, "{}").unwrap();
    for (cfg, events, vcd) in [
        (&cfg, Some(cfg.clone()), None),
        (&cfg, None, Some(cfg.clone())),
        (&json, None, Some(d.join("machine.vcd"))),
    ] {
        let before = std::fs::read(cfg).unwrap();
        let mut a = trace_args(&t, 100, 1_000);
        a.machine.config = Some(cfg.clone());
        a.events = events;
        a.waves.vcd = vcd;
        let e = format!("{:#}", simulate(&a).err().expect("refused"));
        assert!(e.contains("would overwrite the input file"), "{e}");
        assert_eq!(std::fs::read(cfg).unwrap(), before);
    }
}

#[test]
fn a_window_never_reached_keeps_an_earlier_waveform() {
    let d = scratch("window");
    let vcd = d.join("w.vcd");
    std::fs::write(&vcd, "an earlier waveform").unwrap();
    let mut a = crate::sim::args("balanced", 1_000, 1);
    a.check = false;
    a.waves.vcd = Some(vcd.clone());
    a.waves.window = Some("100000000:100000010".parse().unwrap());
    let e = format!("{:#}", simulate(&a).err().expect("window not reached"));
    assert!(
        e.contains("starts after the last cycle") && e.contains("no file written"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(&vcd).unwrap(),
        "an earlier waveform"
    );
    assert!(!d.join("w.vcd.part").exists());
}

fn stacks_args(out: PathBuf) -> StacksArgs {
    StacksArgs {
        sources: SourceArgs {
            workloads: "balanced".into(),
            traces: vec![],
            trace: vec![],
            seed: 1,
        },
        instructions: 2_000,
        warmup: 1_000,
        out,
        jobs: Some(1),
        detail: false,
        check_only: false,
        machine: MachineArgs::default(),
    }
}

#[test]
fn stacks_refuse_an_out_that_is_a_file_before_running_anything() {
    let d = scratch("out");
    let f = d.join("a-file");
    std::fs::write(&f, "x").unwrap();
    for out in [f.clone(), f.join("below")] {
        let t = std::time::Instant::now();
        let e = format!(
            "{:#}",
            cpistack::stacks::cmd(&stacks_args(out)).unwrap_err()
        );
        assert!(e.contains("not a directory"), "{e}");
        // (no study ran: 13 runs of even 3000 instructions take far longer)
        assert!(t.elapsed().as_secs() < 5);
    }
}

#[test]
fn stacks_on_a_trace_shorter_than_asked_fail_and_name_it() {
    let d = scratch("stacks-short");
    let t = tiny_trace(&d, 3_000);
    let s = Settings {
        cfg: sim::Config::default(),
        instructions: 5_000,
        warmup: 1_000,
    };
    let e = run_study(&[Source::Trace(t.clone())], &s, 1, &|_, _| {}).unwrap_err();
    let m = format!("{e:#}");
    assert!(
        m.contains("tiny") && m.contains("the source ended after 3000 instructions"),
        "{m}"
    );
    // through the command: the error, and no empty --out left behind (the
    // directories it made are removed; the one that existed stays)
    let mut a = stacks_args(d.join("new/out"));
    a.sources.workloads = "none".into();
    a.sources.traces = vec![t];
    a.instructions = 5_000;
    let m = format!("{:#}", cpistack::stacks::cmd(&a).unwrap_err());
    assert!(
        m.contains("the source ended after 3000 instructions"),
        "{m}"
    );
    assert!(!d.join("new").exists());
    assert!(d.is_dir());
}

#[test]
fn stacks_json_is_the_same_for_the_same_inputs() {
    let s = Settings {
        cfg: sim::Config::default(),
        instructions: 2_000,
        warmup: 1_000,
    };
    // two sources, so that runs of both interleave on two threads
    let src = [
        Source::workload("balanced", 1).unwrap(),
        Source::workload("mlp", 1).unwrap(),
    ];
    let one = run_study(&src, &s, 1, &|_, _| {}).unwrap();
    let a = serde_json::to_string(&one).unwrap();
    // the progress callback hears of the start, then of each run once,
    // counting up to all of them
    let calls = std::sync::Mutex::new(Vec::new());
    let r = run_study(&src, &s, 2, &|n, total| {
        calls.lock().unwrap().push((n, total))
    })
    .unwrap();
    let b = serde_json::to_string(&r).unwrap();
    assert_eq!(a, b, "no wall time or thread count in the report");
    // and every file rendered from it (CSV, charts, page), and the text tables
    let (x, y) = (
        cpistack::stacks::render_outputs(&one).unwrap(),
        cpistack::stacks::render_outputs(&r).unwrap(),
    );
    assert_eq!(x.len(), y.len());
    for ((f, t), (_, u)) in x.iter().zip(&y) {
        assert!(t == u, "{f} differs between 1 and 2 threads");
    }
    assert_eq!(
        cpistack::stacks::text_table(&one),
        cpistack::stacks::text_table(&r)
    );
    let mut calls = calls.into_inner().unwrap();
    calls.sort_unstable();
    let runs = r.runs;
    assert_eq!(
        runs,
        2 * (1 + r.studies[0].ideal_runs.len()),
        "the real run and each ideal one, of each source"
    );
    assert_eq!(calls, (0..=runs).map(|n| (n, runs)).collect::<Vec<_>>());
}

#[test]
fn a_parameter_too_large_for_its_register_names_its_legal_range() {
    // beyond u32, and beyond u64: still an integer, too large
    for (name, legal, v) in [
        ("rob_entries", "2..=4096", "99999999999"),
        ("local_bits", "1..=32", "99999999999"),
        ("fmt_rows", "2..=256", "18446744073709551616"),
    ] {
        let e = events::Params::default().set(name, v).unwrap_err();
        assert!(
            e.contains(v) && e.contains(legal) && e.contains(name),
            "{e}"
        );
    }
    let e = events::Params::default().set("fmt_rows", "-3").unwrap_err();
    assert!(e.contains("not a non-negative integer"), "{e}");
}

#[test]
fn overrides_that_must_change_together_are_validated_once_after_the_last() {
    let d = scratch("machine");
    // the three line sizes must be equal: no order of single changes is legal
    // on the way, so only the whole set is checked
    let file = d.join("m.toml");
    std::fs::write(&file, "[l2]\nline = 32\n").unwrap();
    let m = MachineArgs {
        config: Some(file),
        set: vec!["l1i.line=32".into(), "l1d.line=32".into()],
        ideal: None,
    };
    let c = m.build().unwrap();
    assert_eq!((c.l1i.line, c.l1d.line, c.l2.line), (32, 32, 32));
    // a file that gives part of a section keeps the machine's other values
    assert_eq!(c.l2.size, sim::Config::default().l2.size);
    // still illegal at the end: an error naming the key
    let m = MachineArgs {
        set: vec!["l1i.line=32".into()],
        ..MachineArgs::default()
    };
    let e = format!("{:#}", m.build().unwrap_err());
    assert!(e.contains("line"), "{e}");
}

#[test]
fn a_configuration_key_set_twice_is_refused_and_a_bad_file_is_named() {
    let m = MachineArgs {
        set: vec!["l2.latency=12".into(), " l2.latency = 14".into()],
        ..MachineArgs::default()
    };
    let e = format!("{:#}", m.build().unwrap_err());
    assert!(
        e.contains("`l2.latency` is already set by --set `l2.latency=12`"),
        "{e}"
    );
    // an illegal value from a file names the file (and says when --set took part)
    let d = scratch("cfgname");
    let file = d.join("m.toml");
    std::fs::write(&file, "[core]\nrob_entries = 100000\n").unwrap();
    let mut m = MachineArgs {
        config: Some(file.clone()),
        ..MachineArgs::default()
    };
    let e = format!("{:#}", m.build().unwrap_err());
    assert!(
        e.contains(&format!("{}: `core.rob_entries`", file.display())),
        "{e}"
    );
    m.set = vec!["l2.latency=12".into()];
    let e = format!("{:#}", m.build().unwrap_err());
    assert!(
        e.contains("with the --set overrides: `core.rob_entries`"),
        "{e}"
    );
}

/// `--vcd` written directly (`/dev/stdout`, a named pipe) holds one variant:
/// with two, the second's `-sfmt` file would be a new file in `/dev` (or
/// beside the pipe) that nobody reads, so the run is refused before it
/// starts; with one variant it is written.
#[test]
fn a_direct_vcd_with_two_variants_is_refused_before_the_run() {
    let d = scratch("direct");
    let t = tiny_trace(&d, 3_000);
    let mut a = trace_args(&t, 100, 1_000);
    a.variant = VariantArg::Both;
    a.waves.vcd = Some(PathBuf::from("/dev/null"));
    let e = format!("{:#}", simulate(&a).err().expect("refused"));
    assert!(
        e.contains("--vcd /dev/null: two variants need a file each") && e.contains("--variant fmt"),
        "{e}"
    );
    assert!(!Path::new("/dev/null-sfmt").exists());
    a.variant = VariantArg::Sfmt;
    simulate(&a).expect("one variant into /dev/null");
    // a regular file takes both (FILE and FILE-sfmt)
    a.variant = VariantArg::Both;
    a.waves.vcd = Some(d.join("w.vcd"));
    simulate(&a).unwrap();
    assert!(d.join("w.vcd").exists() && d.join("w-sfmt.vcd").exists());
}

/// The stream `run --events` records names the variant the run drove (the
/// first with both), so that a plain `replay` of it drives the same unit and
/// prints the same counters; it used to say `fmt` whatever was run.
#[test]
fn a_recorded_stream_replays_the_variant_that_was_run() {
    let d = scratch("variant");
    for (v, want) in [
        (VariantArg::Sfmt, events::Variant::Sfmt),
        (VariantArg::Fmt, events::Variant::Fmt),
        (VariantArg::Both, events::Variant::Fmt),
    ] {
        let mut a = crate::sim::args("branchy", 5_000, 1);
        a.variant = v;
        a.check = false;
        let ev = d.join("run.bin");
        a.events = Some(ev.clone());
        let r = simulate(&a).unwrap();
        let (p, it) = events::stream::open(&ev).unwrap();
        assert_eq!(p.variant, want, "{v:?}");
        let mut u = hw::Unit::new(p).unwrap();
        for b in it {
            u.step(&b.unwrap());
        }
        let ran = &r.units[want.name()];
        assert_eq!(
            cpistack::report::StackReport::from_unit(&u).counters,
            ran.counters,
            "{v:?}: the replay's counters are the run's"
        );
    }
}

/// `--ideal` adds switches; a `--set ideal.X=false` for a switch it turns on
/// contradicts it, and is refused instead of silently losing to the union.
/// Agreeing or unrelated settings stay legal.
#[test]
fn an_ideal_switch_both_added_and_set_false_is_refused() {
    let m = |ideal: &str, set: &[&str]| MachineArgs {
        config: None,
        set: set.iter().map(|s| s.to_string()).collect(),
        ideal: Some(ideal.into()),
    };
    for (ideal, set) in [
        ("all", "ideal.bpred=false"),
        ("l1i,l2d", " ideal.l2d = false"),
    ] {
        let e = format!("{:#}", m(ideal, &[set]).build().unwrap_err());
        assert!(
            e.contains(&format!("--ideal {ideal} makes"))
                && e.contains("makes it real: give one of them"),
            "{e}"
        );
    }
    let c = m("all", &["ideal.bpred=true", "ideal.longlat=false"])
        .build()
        .unwrap();
    assert!(c.ideal.bpred && !c.ideal.longlat);
    let c = m("l1i", &["ideal.bpred=false"]).build().unwrap();
    assert!(c.ideal.l1i && !c.ideal.bpred);
}

#[test]
fn a_stack_of_wrapped_counters_shows_no_share_no_cpi_and_no_base() {
    // 300 idle counted cycles through 8-bit globals: `cycles` wraps to 44
    let p = events::Params {
        global_bits: 8,
        ..Default::default()
    };
    let mut u = hw::Unit::new(p).unwrap();
    for _ in 0..300 {
        u.step(&events::CycleEvents::idle());
    }
    let r = cpistack::report::StackReport::from_unit(&u);
    assert_eq!(r.counters["cycles"], 44);
    assert_eq!(r.overflowed, ["cycles"]);
    assert!(r.cpi.is_empty(), "{:?}", r.cpi);
    assert_eq!(r.base, None, "a difference of wrapped counts is no base");
    let text = r.text();
    assert!(
        text.contains("OVERFLOWED") && text.contains("modulo 2^8"),
        "{text}"
    );
    let base = text
        .lines()
        .find(|l| l.trim_start().starts_with("base"))
        .unwrap();
    assert_eq!(
        base.split_whitespace().collect::<Vec<_>>(),
        ["base", "-", "-", "-"],
        "{text}"
    );
    // the same run at 48 bits: every ratio shown
    let mut u = hw::Unit::new(events::Params::default()).unwrap();
    for _ in 0..300 {
        u.step(&events::CycleEvents::idle());
    }
    let r = cpistack::report::StackReport::from_unit(&u);
    assert!(r.overflowed.is_empty());
    assert!(r.text().contains(" 300 cycles"), "{}", r.text());
}

/// The ten counters a stack reads, paired with `values` in this order:
/// cycles, retired, l1i, l2i, itlb, bpred, l1d, l2d, dtlb, longlat.
fn stack_counts(values: [u64; 10]) -> [(events::Counter, u64); 10] {
    use events::Counter::*;
    let order = [
        Cycles, Retired, L1i, L2i, Itlb, Bpred, L1d, L2d, Dtlb, Longlat,
    ];
    std::array::from_fn(|i| (order[i], values[i]))
}

/// A view of hand-picked counters, `overflow` the sticky flags.
fn stack_view(counts: [(events::Counter, u64); 10], overflow: u16) -> events::UnitView {
    let mut counters = events::Counters {
        value: [0; events::NUM_COUNTERS],
        overflow,
    };
    for (k, v) in counts {
        counters.value[k.idx()] = v;
    }
    events::UnitView {
        counters,
        ..Default::default()
    }
}

/// The lines of a stack's table, each split into its words, by component.
fn stack_rows(text: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    text.lines()
        .skip(2)
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .filter(|w| w.len() == 4)
        .map(|w| (w[0].clone(), w[1..].to_vec()))
        .collect()
}

/// 1000 cycles, 400 retired, components adding to 500: every CPI is a
/// counter over 400 and every share a counter over 1000, worked by hand.
#[test]
fn a_stack_report_gives_each_component_its_cpi_and_share() {
    let counts = stack_counts([1000, 400, 100, 50, 20, 80, 150, 60, 10, 30]);
    let r = cpistack::report::StackReport::from_view(
        &events::Params::default(),
        &stack_view(counts, 0),
    );
    assert!(r.overflowed.is_empty(), "{:?}", r.overflowed);
    assert_eq!(r.base, Some(500));
    let want = [
        ("cycles", 2.5, "-"),
        ("base", 1.25, "50.00%"),
        ("l1i", 0.25, "10.00%"),
        ("l2i", 0.125, "5.00%"),
        ("itlb", 0.05, "2.00%"),
        ("bpred", 0.2, "8.00%"),
        ("l1d", 0.375, "15.00%"),
        ("l2d", 0.15, "6.00%"),
        ("dtlb", 0.025, "1.00%"),
        ("longlat", 0.075, "3.00%"),
    ];
    assert_eq!(r.cpi.len(), want.len(), "{:?}", r.cpi);
    for (k, cpi, _) in want {
        assert_eq!(r.cpi[k], cpi, "{k}");
    }
    let text = r.text();
    assert!(
        text.starts_with(
            "FMT (rows 64, ROB 128, local 16 b, global 48 b): 1000 cycles, 400 instructions retired, CPI 2.5000\n"
        ),
        "{text}"
    );
    let rows = stack_rows(&text);
    assert_eq!(rows.len(), 9, "{text}");
    for (k, cpi, share) in &want[1..] {
        let count = if *k == "base" { 500 } else { r.counters[*k] };
        assert_eq!(
            rows[*k],
            [count.to_string(), share.to_string(), format!("{cpi:.4}")],
            "{k}: {text}"
        );
    }
    assert!(
        !text.contains("pending") && !text.contains("OVERFLOWED"),
        "{text}"
    );
}

/// No cycle gives no share and no instruction no CPI (not `NaN` or `inf`);
/// a wrapped counter, any of them, gives neither even where both counts are
/// above zero.
#[test]
fn a_stack_report_shows_no_ratio_it_cannot_derive() {
    use events::Counter::*;
    let mut counts = stack_counts([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let report = |counts, overflow| {
        cpistack::report::StackReport::from_view(
            &events::Params::default(),
            &stack_view(counts, overflow),
        )
    };
    // reset: nothing counted
    let r = report(counts, 0);
    assert!(r.cpi.is_empty(), "{:?}", r.cpi);
    let text = r.text();
    assert!(!text.contains("CPI 0") && !text.contains("NaN"), "{text}");
    for (k, w) in stack_rows(&text) {
        assert_eq!(w, ["0", "-", "-"], "{k}: {text}");
    }
    // 300 idle cycles: shares, but no CPI
    counts[0].1 = 300;
    let r = report(counts, 0);
    assert!(r.cpi.is_empty(), "{:?}", r.cpi);
    let text = r.text();
    let rows = stack_rows(&text);
    assert_eq!(rows["base"], ["300", "100.00%", "-"], "{text}");
    assert_eq!(rows["l1d"], ["0", "0.00%", "-"], "{text}");
    // 1000 cycles and 400 retired, but `l1d` wrapped: neither
    counts[0].1 = 1000;
    counts[1].1 = 400;
    counts[6].1 = 150;
    let r = report(counts, 1 << L1d.idx());
    assert_eq!(r.overflowed, ["l1d"]);
    assert!(r.cpi.is_empty(), "{:?}", r.cpi);
    assert_eq!(r.base, None);
    let text = r.text();
    assert!(!text.contains("CPI 2"), "{text}");
    for (k, w) in stack_rows(&text) {
        assert_eq!(w[1..], ["-", "-"], "{k}: {text}");
    }
}

/// The pending line appears when any penalty is held in rows, whichever and
/// however many, and never when none is.
#[test]
fn a_stack_report_names_pending_penalties_whenever_one_is_held() {
    let counts = stack_counts([10, 10, 0, 0, 0, 0, 0, 0, 0, 0]);
    for held in 0..16u64 {
        let mut v = stack_view(counts, 0);
        v.pending = events::Pending {
            l1i: held & 1,
            l2i: held >> 1 & 1,
            itlb: held >> 2 & 1,
            bpred: held >> 3 & 1,
        };
        let text = cpistack::report::StackReport::from_view(&events::Params::default(), &v).text();
        let line = text.lines().find(|l| l.contains("pending"));
        if held == 0 {
            assert_eq!(line, None, "{text}");
        } else {
            let p = v.pending;
            assert_eq!(
                line.map(str::trim),
                Some(
                    format!(
                        "pending (in rows, not charged): l1i {} l2i {} itlb {} bpred {}",
                        p.l1i, p.l2i, p.itlb, p.bpred
                    )
                    .as_str()
                ),
                "{held:04b}"
            );
        }
    }
}

#[test]
fn configuration_files_are_read_as_named_and_bounded() {
    let d = scratch("config-files");
    let build = |config: &Path, set: &[&str]| {
        MachineArgs {
            config: Some(config.to_path_buf()),
            set: set.iter().map(|s| s.to_string()).collect(),
            ideal: None,
        }
        .build()
        .map_err(|e| format!("{e:#}"))
    };
    // `.TOML` is TOML
    let upper = d.join("m.TOML");
    std::fs::write(&upper, "[l2]\nlatency = 12\n").unwrap();
    assert_eq!(build(&upper, &[]).unwrap().l2.latency, 12);
    // anything else is JSON, and a parse error says so
    let yaml = d.join("m.yaml");
    std::fs::write(&yaml, "l2:\n  latency: 12\n").unwrap();
    let e = build(&yaml, &[]).unwrap_err();
    assert!(e.contains("read as JSON") && e.contains("m.yaml"), "{e}");
    // a device is read up to the bound, not until memory runs out
    let e = build(Path::new("/dev/zero"), &[]).unwrap_err();
    assert!(e.contains("/dev/zero") && e.contains("larger than"), "{e}");
    // widths and queues the core allocates for are bounded
    for (set, legal) in [
        ("core.decode_width=4294967295", "1..=64"),
        ("core.issue_width=65", "1..=64"),
        ("core.lsq_entries=4097", "1..=4096"),
    ] {
        let e = build(&upper, &[set]).unwrap_err();
        assert!(
            e.contains(set.split('=').next().unwrap()) && e.contains(legal),
            "{e}"
        );
    }
}

/// `cpistack sweep`: the base and each point are written as complete `stacks`
/// outputs and summarised in `sweep.csv`; a value equal to the base's is run
/// once and written twice; `--check-only` finds a changed number, a missing
/// point, a point of another machine and a point of another study.
#[test]
fn sweep_writes_every_point_and_its_check_finds_what_was_changed() {
    use cpistack::stacks::sweep::{self, SweepArgs};
    let d = scratch("sweep");
    let out = d.join("sw");
    let mut a = SweepArgs {
        vary: vec![
            "core.rob_entries=64,128".into(),
            "memory_latency=120".into(),
        ],
        stacks: stacks_args(out.clone()),
    };
    a.stacks.sources.workloads = "balanced,mlp".into();
    sweep::cmd(&a).unwrap();
    let points = [
        "base",
        "core.rob_entries=64",
        "core.rob_entries=128",
        "memory_latency=120",
    ];
    assert_eq!(sweep::check_sweep(&out).unwrap(), points.len());
    let read = |p: &str| std::fs::read_to_string(out.join(p)).unwrap();
    // 128 is the base's own ROB: the same study, byte for byte
    assert_eq!(
        read("base/stacks.json"),
        read("core.rob_entries=128/stacks.json")
    );
    assert_ne!(
        read("base/stacks.json"),
        read("core.rob_entries=64/stacks.json")
    );
    let csv = read("sweep.csv");
    // per point: each compared method over all studies and over the workloads
    assert_eq!(
        csv.lines().count(),
        1 + points.len() * 2 * cpistack::stacks::COMPARED.len()
    );
    assert!(
        csv.contains("\ncore.rob_entries=64,core.rob_entries,64,all,fmt,"),
        "{csv}"
    );

    let expect_err = |what: &str, want: &str| {
        let e = format!("{:#}", sweep::check_sweep(&out).unwrap_err());
        assert!(e.contains(want), "{what}: {e}");
    };
    // a number changed
    let i = csv.find(",all,fmt,").unwrap() + ",all,fmt,".len();
    let bad = format!("{}9{}", &csv[..i], &csv[i + 1..]);
    std::fs::write(out.join("sweep.csv"), &bad).unwrap();
    expect_err("a changed number", "sweep.csv: line 2 is `base,,,all,fmt,9");
    std::fs::write(out.join("sweep.csv"), &csv).unwrap();
    // the page or the chart edited, or another sweep's
    for f in ["index.html", "sweep.svg"] {
        let orig = read(f);
        std::fs::write(
            out.join(f),
            orig.replace("core.rob_entries=64", "core.rob_entries=65"),
        )
        .unwrap();
        expect_err(f, &format!("{f}: not what the points' stacks.json render"));
        std::fs::write(out.join(f), &orig).unwrap();
    }
    assert!(read("index.html").contains("<a href=\"core.rob_entries=64/index.html\">"));
    sweep::check_sweep(&out).unwrap();
    // a point's files missing
    let p64 = out.join("core.rob_entries=64");
    std::fs::rename(&p64, d.join("moved")).unwrap();
    expect_err("a missing point", "point core.rob_entries=64");
    std::fs::rename(d.join("moved"), &p64).unwrap();
    // a point of another machine: the ROB-64 point's files and rows, named 256
    std::fs::rename(&p64, out.join("core.rob_entries=256")).unwrap();
    let renamed = csv.replace(
        "core.rob_entries=64,core.rob_entries,64,",
        "core.rob_entries=256,core.rob_entries,256,",
    );
    std::fs::write(out.join("sweep.csv"), &renamed).unwrap();
    expect_err(
        "another machine",
        "is not the base machine with core.rob_entries=256",
    );
    // a point of another study (other workloads)
    let mut b = SweepArgs {
        vary: vec!["memory_latency=120".into()],
        stacks: stacks_args(d.join("other")),
    };
    b.stacks.sources.workloads = "balanced".into();
    sweep::cmd(&b).unwrap();
    let mut c = a.clone();
    c.vary = vec!["memory_latency=120".into()];
    c.stacks.out = d.join("third");
    sweep::cmd(&c).unwrap();
    std::fs::remove_dir_all(d.join("third/memory_latency=120")).unwrap();
    std::fs::rename(
        d.join("other/memory_latency=120"),
        d.join("third/memory_latency=120"),
    )
    .unwrap();
    let csv3 = std::fs::read_to_string(d.join("third/sweep.csv")).unwrap();
    let other = std::fs::read_to_string(d.join("other/sweep.csv")).unwrap();
    let mixed: String = csv3
        .lines()
        .filter(|l| !l.starts_with("memory_latency"))
        .chain(other.lines().filter(|l| l.starts_with("memory_latency")))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(d.join("third/sweep.csv"), mixed).unwrap();
    let e = format!("{:#}", sweep::check_sweep(&d.join("third")).unwrap_err());
    assert!(e.contains("studies other sources"), "{e}");
}

/// A failed sweep leaves no directory it made; a sweep refuses an `--out`
/// with another sweep's points and an output that is an input trace; and
/// `--check-only` finds a point that `sweep.csv` does not list.
#[test]
fn sweep_cleans_up_refuses_old_points_and_finds_unlisted_ones() {
    use cpistack::stacks::sweep::{self, SweepArgs};
    let d = scratch("sweep-edges");
    let t = tiny_trace(&d, 3_000);
    let args = |out: PathBuf, vary: &[&str]| {
        let mut a = SweepArgs {
            vary: vary.iter().map(|s| s.to_string()).collect(),
            stacks: stacks_args(out),
        };
        a.stacks.sources.workloads = "balanced".into();
        a
    };
    // the trace ends before the runs do: the error, and nothing left behind
    let mut a = args(d.join("new/out"), &["core.rob_entries=64"]);
    a.stacks.sources.workloads = "none".into();
    a.stacks.sources.traces = vec![t.clone()];
    a.stacks.instructions = 5_000;
    let e = format!("{:#}", sweep::cmd(&a).unwrap_err());
    assert!(
        e.contains("the source ended after 3000 instructions"),
        "{e}"
    );
    assert!(!d.join("new").exists());
    // an output that is the input trace
    let inside = d.join("o2/base");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::copy(&t, inside.join("penalties.csv")).unwrap();
    let mut a = args(d.join("o2"), &["core.rob_entries=64"]);
    a.stacks.sources.trace = vec![inside.join("penalties.csv")];
    let e = format!("{:#}", sweep::cmd(&a).unwrap_err());
    assert!(e.contains("would overwrite the input file"), "{e}");
    // the same through a directory still to be made: refused, nothing made
    let mut a = args(d.join("nd/../o2"), &["core.rob_entries=64"]);
    a.stacks.sources.trace = vec![inside.join("penalties.csv")];
    let e = format!("{:#}", sweep::cmd(&a).unwrap_err());
    assert!(e.contains("would overwrite the input file"), "{e}");
    assert!(!d.join("nd").exists());
    let mut s = stacks_args(d.join("nd/../o2/base"));
    s.sources.trace = vec![inside.join("penalties.csv")];
    s.sources.workloads = "none".into();
    let e = format!("{:#}", cpistack::stacks::cmd(&s).unwrap_err());
    assert!(e.contains("would overwrite the input file"), "{e}");
    assert!(!d.join("nd").exists());
    assert_eq!(
        std::fs::read(inside.join("penalties.csv")).unwrap(),
        std::fs::read(&t).unwrap()
    );
    // an output that is the --config file, of the sweep and of `stacks`
    std::fs::write(d.join("o2/sweep.csv"), "{}").unwrap();
    std::fs::write(inside.join("stacks.json"), "{}").unwrap();
    for cfg in [d.join("o2/sweep.csv"), inside.join("stacks.json")] {
        let mut a = args(d.join("o2"), &["core.rob_entries=64"]);
        a.stacks.machine.config = Some(cfg.clone());
        let e = format!("{:#}", sweep::cmd(&a).unwrap_err());
        assert!(e.contains("would overwrite the input file"), "{e}");
        assert_eq!(std::fs::read_to_string(&cfg).unwrap(), "{}");
    }
    let mut s = stacks_args(inside.clone());
    s.machine.config = Some(inside.join("stacks.json"));
    let e = format!("{:#}", cpistack::stacks::cmd(&s).unwrap_err());
    assert!(e.contains("would overwrite the input file"), "{e}");
    assert_eq!(
        std::fs::read_to_string(inside.join("stacks.json")).unwrap(),
        "{}"
    );
    // a sweep, then another with other points into the same --out
    let out = d.join("sw");
    sweep::cmd(&args(
        out.clone(),
        &["core.rob_entries=64", "memory_latency=120"],
    ))
    .unwrap();
    let e = format!(
        "{:#}",
        sweep::cmd(&args(out.clone(), &["core.rob_entries=64"])).unwrap_err()
    );
    assert!(
        e.contains("holds points that this sweep does not have (memory_latency=120)"),
        "{e}"
    );
    // the rows of one point removed from sweep.csv
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let fewer: String = csv
        .lines()
        .filter(|l| !l.starts_with("memory_latency"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(out.join("sweep.csv"), fewer).unwrap();
    let e = format!("{:#}", sweep::check_sweep(&out).unwrap_err());
    assert!(e.contains("memory_latency=120 not in sweep.csv"), "{e}");
}
