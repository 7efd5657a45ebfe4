//! `cpistack bench`: throughput figures, measured in-process on pre-generated
//! in-memory streams (never a timed test; `make bench` runs it in release mode).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use events::gen::{GenConfig, Generator};
use events::{CounterUnit, CycleEvents, Params, Variant};

use crate::check::LockStep;

/// Figures by name, in the order measured.
#[derive(Default, Debug)]
pub struct Figures {
    /// Rates (per second), whole numbers in JSON.
    pub items: Vec<(String, f64)>,
    /// Other measured quantities (e.g. bytes a cycle), one decimal in JSON.
    pub values: BTreeMap<String, f64>,
    /// Words, not figures (the kernel measured, a figure skipped and why).
    pub notes: BTreeMap<String, String>,
}

impl Figures {
    pub fn push(&mut self, k: &str, v: f64) {
        self.items.push((k.to_string(), v));
    }
    pub fn json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (k, v) in &self.items {
            m.insert(k.clone(), serde_json::json!(v.round()));
        }
        for (k, v) in &self.values {
            m.insert(k.clone(), serde_json::json!((v * 10.0).round() / 10.0));
        }
        for (k, v) in &self.notes {
            m.insert(k.clone(), serde_json::json!(v));
        }
        serde_json::Value::Object(m)
    }
    pub fn text(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.items {
            s.push_str(&format!("{k:<32} {:>14.3} M/s\n", v / 1e6));
        }
        for (k, v) in &self.values {
            s.push_str(&format!("{k:<32} {v:>14.1}\n"));
        }
        for (k, v) in &self.notes {
            s.push_str(&format!("{k:<32} {v}\n"));
        }
        s
    }
}

/// The benchmark stream: `cycles` bundles of the realistic mix for `params`.
pub fn stream(params: Params, cycles: usize, seed: u64) -> Vec<CycleEvents> {
    Generator::new(params, GenConfig::realistic(), seed)
        .take(cycles)
        .collect()
}

/// Best of `reps` timings of `f`, as items per second.
pub fn rate(items: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    items as f64 / best
}

/// Drive one unit over the whole stream, one `step` per bundle.
pub fn drive<U: CounterUnit>(u: &mut U, s: &[CycleEvents]) {
    for ev in s {
        u.step(black_box(ev));
    }
}

/// Drive one unit over the whole stream in batches of [`BATCH`] bundles
/// ([`CounterUnit::step_many`]: `hw` pays its kernel dispatch once per batch;
/// the state after each batch is the same as after as many `step` calls).
pub fn drive_batched<U: CounterUnit>(u: &mut U, s: &[CycleEvents]) {
    for b in s.chunks(BATCH) {
        u.step_many(black_box(b));
    }
}

/// Bundles per [`CounterUnit::step_many`] call in [`drive_batched`].
pub const BATCH: usize = 4096;

/// The counter-unit figures of issue 2 on a stream of `cycles` bundles, and
/// the `hw` kernel they were measured with (note `hw_kernel`).
pub fn unit_figures(cycles: usize, reps: usize, figs: &mut Figures) -> anyhow::Result<()> {
    // The `hw` figures depend on the kernel this CPU runs (`hw::Kernel`).
    figs.notes.insert(
        "hw_kernel".into(),
        format!("{:?}", hw::Kernel::detect()).to_lowercase(),
    );
    let p = Params::default();
    let s = stream(p, cycles, 1);
    let ps = p.with_variant(Variant::Sfmt);
    let ss = stream(ps, cycles, 1);

    // A virtual machine's clock can move by half within an hour
    // (docs/performance.md): the clock read just before and just after the
    // `hw` figures turns them into host cycles a bundle, which say how the
    // code does whatever the clock did.
    let clock_before = host_clock_mhz(CLOCK_SPAN);
    for (key, params, st, batched) in [
        ("hw_fmt_cycles_per_s", p, &s, false),
        ("hw_fmt_batch_cycles_per_s", p, &s, true),
        ("hw_sfmt_cycles_per_s", ps, &ss, false),
    ] {
        figs.push(
            key,
            rate(cycles, reps, || {
                let mut u = hw::Unit::new(params).expect("default params are legal");
                if batched {
                    drive_batched(&mut u, st);
                } else {
                    drive(&mut u, st);
                }
                assert!(u.view().error.is_none(), "bench stream must be legal");
                black_box(u.view());
            }),
        );
    }
    let clock_after = host_clock_mhz(CLOCK_SPAN);
    match clock_before.zip(clock_after) {
        Some((b, a)) => {
            figs.values.insert("host_clock_mhz_before_hw".into(), b);
            figs.values.insert("host_clock_mhz_after_hw".into(), a);
            let mhz = (a + b) / 2.0;
            for (rate, key) in [
                ("hw_fmt_cycles_per_s", "hw_fmt_host_cycles_per_cycle"),
                ("hw_sfmt_cycles_per_s", "hw_sfmt_host_cycles_per_cycle"),
            ] {
                let r = figs.items.iter().find(|(k, _)| k == rate).map(|x| x.1);
                let r = r.expect("measured above");
                figs.values.insert(key.into(), mhz * 1e6 / r);
            }
        }
        None => {
            figs.notes.insert(
                "host_clock_mhz".into(),
                "skipped: no add-chain probe for this architecture".into(),
            );
        }
    }
    figs.push(
        "golden_fmt_cycles_per_s",
        rate(cycles, reps, || {
            let mut u = golden::Unit::new(p).expect("default params are legal");
            drive(&mut u, &s);
            black_box(u.view());
        }),
    );
    // The checker's two threads hand each cycle's record (about 500 bytes)
    // from one core to the other: its figures follow how far apart the two
    // CPUs are, which on a virtual machine can change while it runs
    // (docs/performance.md). Measured before and after them, so that a low
    // lock-step figure can be told from a slow path between the cores.
    figs.values.insert(
        "core_round_trip_ns_before_lockstep".into(),
        core_round_trip_ns(),
    );
    for (key, params, st) in [
        ("lockstep_fmt_cycles_per_s", p, &s),
        ("lockstep_sfmt_cycles_per_s", ps, &ss),
    ] {
        let mut err = None;
        let r = rate(cycles, reps, || {
            // hw and golden on two threads (`run_batch`), the whole stream at once
            let mut l = LockStep::new(params).expect("default params are legal");
            if let Err(m) = l.run_batch(st) {
                err = Some(m);
            }
        });
        if let Some(m) = err {
            anyhow::bail!("benchmark stream disagreed in lock step:\n{m}");
        }
        figs.push(key, r);
    }
    figs.values.insert(
        "core_round_trip_ns_after_lockstep".into(),
        core_round_trip_ns(),
    );

    let mut buf = Vec::with_capacity(cycles * 16 + 64);
    {
        let mut w = events::stream::BinWriter::new(&mut buf, &p)?;
        for ev in &s {
            w.write(ev)?;
        }
        w.finish()?;
    }
    let mut out = vec![CycleEvents::default(); 4096];
    figs.push(
        "decode_bin_cycles_per_s",
        rate(cycles, reps, || {
            let mut r = events::stream::BinReader::new(&buf[..]).expect("header just written");
            let mut n = 0usize;
            loop {
                let k = r.read_batch(&mut out).expect("stream just written");
                if k == 0 {
                    break;
                }
                n += k;
                black_box(&out[..k]);
            }
            assert_eq!(n, cycles);
        }),
    );
    Ok(())
}

/// The waveform figures of issue 3: `hw_fmt_notrace_cycles_per_s` (stepping
/// through `step_traced` with [`hw::NoTrace`]: tracing compiled in but off; compare
/// with `hw_fmt_cycles_per_s`) and `vcd_fmt_cycles_per_s` (every register of the
/// default 64-row FMT traced to a VCD file in a temporary directory).
pub fn wave_figures(cycles: usize, reps: usize, figs: &mut Figures) -> anyhow::Result<()> {
    let p = Params::default();
    let s = stream(p, cycles, 1);
    figs.push(
        "hw_fmt_notrace_cycles_per_s",
        rate(cycles, reps, || {
            let mut u = hw::Unit::new(p).expect("default params are legal");
            let mut t = hw::NoTrace;
            for ev in &s {
                u.step_traced(black_box(ev), &mut t);
            }
            assert!(u.view().error.is_none(), "bench stream must be legal");
            black_box(u.view());
        }),
    );
    // The VCD is large (about 100 bytes a cycle): a tenth of the stream, at most 2M cycles.
    let n = (cycles / 10).clamp(1, 2_000_000);
    let dir = std::env::temp_dir().join(format!("cpistack-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("bench.vcd");
    let mut err = None;
    let r = rate(n, reps, || {
        let res = (|| -> anyhow::Result<()> {
            let mut u = hw::Unit::new(p)?;
            let mut t = crate::waves::create(&path, &u, 0, crate::waves::Window::ALL)?;
            for ev in &s[..n] {
                u.step_traced(ev, &mut t);
            }
            t.finish()?;
            Ok(())
        })();
        if let Err(e) = res {
            err = Some(e);
        }
    });
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(e) = err {
        return Err(e.context("vcd benchmark"));
    }
    figs.push("vcd_fmt_cycles_per_s", r);
    figs.values
        .insert("vcd_fmt_bytes_per_cycle".into(), bytes as f64 / n as f64);
    Ok(())
}

/// How long a cache line takes to go from one thread to another and back,
/// ns: one thread writes a counter, a second answers by writing it again,
/// for about 20 ms, as many round trips as fit (the two threads run on two
/// CPUs when the machine has two free; on one, a round trip takes a
/// time slice, and the figure shows it).
pub fn core_round_trip_ns() -> f64 {
    let (t, trips) = round_trips(std::time::Duration::from_millis(20));
    t.as_nanos() as f64 / trips.max(1) as f64
}

/// How long [`host_clock_mhz`] measures in `make bench`.
pub const CLOCK_SPAN: std::time::Duration = std::time::Duration::from_millis(50);

/// The host's clock in MHz as a chain of dependent register adds sees it
/// (such an add takes one cycle on every x86-64 and AArch64 core, and each
/// waits for the one before): the fastest of the chains of 8 M adds run in about
/// `span`. `None` where there is no such probe (other architectures).
pub fn host_clock_mhz(span: std::time::Duration) -> Option<f64> {
    const ITERS: u64 = 1 << 20;
    let t0 = Instant::now();
    let mut best = f64::MAX;
    loop {
        let t = Instant::now();
        let adds = add_chain(black_box(ITERS))?;
        best = best.min(t.elapsed().as_secs_f64() / adds as f64);
        if t0.elapsed() >= span {
            return Some(1e-6 / best);
        }
    }
}

/// Run `iters` blocks of 8 dependent adds; the adds done (`8 * iters`, the
/// chain's own result), `None` without a probe for this architecture.
fn add_chain(iters: u64) -> Option<u64> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        // a register, not an immediate: a core may do adds of an immediate
        // at register renaming, several a cycle (an Intel Xeon here did 6-8 G
        // a second of them against 2.6 G of these)
        let one = black_box(1u64);
        let mut x = 0u64;
        for _ in 0..iters {
            x = add8(x, one);
        }
        Some(x)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = iters;
        None
    }
}

/// `x + 8 * one` as 8 dependent adds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn add8(mut x: u64, one: u64) -> u64 {
    // SAFETY: register arithmetic only.
    unsafe {
        std::arch::asm!(
            "add {0}, {1}", "add {0}, {1}", "add {0}, {1}", "add {0}, {1}",
            "add {0}, {1}", "add {0}, {1}", "add {0}, {1}", "add {0}, {1}",
            inout(reg) x,
            in(reg) one,
            options(nomem, nostack),
        );
    }
    x
}

/// `x + 8 * one` as 8 dependent adds.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn add8(mut x: u64, one: u64) -> u64 {
    // SAFETY: register arithmetic only.
    unsafe {
        std::arch::asm!(
            "add {0}, {0}, {1}", "add {0}, {0}, {1}",
            "add {0}, {0}, {1}", "add {0}, {0}, {1}",
            "add {0}, {0}, {1}", "add {0}, {0}, {1}",
            "add {0}, {0}, {1}", "add {0}, {0}, {1}",
            inout(reg) x,
            in(reg) one,
            options(nomem, nostack),
        );
    }
    x
}

/// How many round trips of a cache line between two threads fit in about
/// `span` (see [`core_round_trip_ns`]), and how long they took.
fn round_trips(span: std::time::Duration) -> (std::time::Duration, u64) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    /// The counter alone on its cache lines.
    #[repr(align(128))]
    struct Line(AtomicU64);
    let ball = Line(AtomicU64::new(0));
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            // answer each odd value with the next even one
            while !stop.load(Ordering::Relaxed) {
                let v = ball.0.load(Ordering::Acquire);
                if v & 1 == 1 {
                    ball.0.store(v + 1, Ordering::Release);
                } else {
                    std::hint::spin_loop();
                }
            }
        });
        let t = Instant::now();
        let mut trips = 0u64;
        'out: loop {
            let v = 2 * trips + 1;
            ball.0.store(v, Ordering::Release);
            let mut spins = 0u32;
            while ball.0.load(Ordering::Acquire) != v + 1 {
                std::hint::spin_loop();
                spins += 1;
                // (the clock read costs as much as a round trip: rarely)
                if spins.is_multiple_of(1024) && t.elapsed() >= span {
                    break 'out;
                }
            }
            trips += 1;
            if trips.is_multiple_of(256) && t.elapsed() >= span {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        (t.elapsed(), trips)
    })
}

/// Instructions measured per workload by [`sim_figures`], after [`SIM_WARMUP`].
pub const SIM_INSTRUCTIONS: u64 = 300_000;
/// Warm-up instructions per workload in [`sim_figures`].
pub const SIM_WARMUP: u64 = 50_000;
/// Instructions of the trace figure, after [`SIM_WARMUP`].
pub const SIM_TRACE_INSTRUCTIONS: u64 = 2_000_000;
/// The trace of `sim_trace_instr_per_s`, relative to the directory beside the repository.
pub const SIM_TRACE: &str = "shared/traces/xz6_x86_skip50M_13M.champsimtrace.xz";

/// One `cpistack run` with both units attached, no `--check`; returns
/// (instructions simulated, warm-up included; wall seconds of the whole run,
/// program generation or trace opening included).
fn timed_run(args: &[&str]) -> anyhow::Result<(u64, f64)> {
    #[derive(clap::Parser)]
    struct P {
        #[command(flatten)]
        run: crate::run::RunArgs,
    }
    let p = <P as clap::Parser>::try_parse_from(
        ["bench", "--variant", "both"].iter().chain(args.iter()),
    )?;
    let t = Instant::now();
    let r = crate::run::simulate(&p.run)?;
    let s = t.elapsed().as_secs_f64();
    // every instruction the core committed (warm-up included): the report's rate
    // is committed instructions over the simulation loop's time
    let committed = (r.instructions_per_second * r.seconds).round() as u64;
    Ok((committed, s))
}

/// The high-water mark of this process's resident memory, KiB (Linux:
/// `VmHWM` of `/proc/self/status`; `None` elsewhere).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Memory stays flat however long the run (issue 2): how much the process's
/// peak resident memory grows when a run is ten times longer, KiB, for a
/// random stream generated and checked in lock step chunk by chunk
/// (`mem_lockstep_10x_peak_growth_kib`: 1 M cycles, then 10 M) and for the
/// core simulator with both units attached (`mem_sim_10x_peak_growth_kib`:
/// `mlp`, 1 M instructions, then 10 M, measured before the lock-step pair,
/// whose peak is higher: growth below a peak already reached does not show).
/// Measured first, before the other figures allocate their in-memory
/// streams (which would hide any growth under their own peak); near 0 when
/// nothing grows with the run.
pub fn mem_figures(figs: &mut Figures) -> anyhow::Result<()> {
    let Some(start) = peak_rss_kib() else {
        figs.notes.insert(
            "mem_lockstep_10x_peak_growth_kib".into(),
            "skipped: no /proc/self/status (peak memory is read on Linux only)".into(),
        );
        return Ok(());
    };
    let lockstep = |cycles: usize| -> anyhow::Result<()> {
        let p = Params::default();
        let mut l = LockStep::new(p)?;
        let mut g = Generator::new(p, GenConfig::realistic(), 5);
        let mut chunk = Vec::with_capacity(1 << 16);
        let mut left = cycles;
        while left > 0 {
            chunk.clear();
            chunk.extend(g.by_ref().take(left.min(1 << 16)));
            left -= chunk.len();
            if let Err(m) = l.run_batch(&chunk) {
                anyhow::bail!("the memory benchmark's stream disagreed in lock step:\n{m}");
            }
        }
        Ok(())
    };
    let peak = || peak_rss_kib().unwrap_or(start);
    // the simulator first: its peak is the lower of the two, and growth
    // below a peak already reached would not show
    let run = |n: &str| {
        timed_run(&[
            "--workload",
            "mlp",
            "--instructions",
            n,
            "--warmup",
            "100000",
        ])
    };
    run("1000000")?;
    let short = peak();
    run("10000000")?;
    figs.values.insert(
        "mem_sim_10x_peak_growth_kib".into(),
        peak().saturating_sub(short) as f64,
    );
    lockstep(1_000_000)?;
    let short = peak();
    lockstep(10_000_000)?;
    figs.values.insert(
        "mem_lockstep_10x_peak_growth_kib".into(),
        peak().saturating_sub(short) as f64,
    );
    figs.values.insert("mem_peak_rss_kib".into(), peak() as f64);
    Ok(())
}

/// The simulator figures of issues 4 and 5: `sim_<workload>_instr_per_s` for every
/// workload of the suite ([`SIM_INSTRUCTIONS`] after [`SIM_WARMUP`], seed 1, default
/// machine, FMT and sFMT `hw` units attached, no `--check`), `sim_synthetic_instr_per_s`
/// = all their instructions over all their wall time, and `sim_trace_instr_per_s` on
/// `<repo>/../`[`SIM_TRACE`] ([`SIM_TRACE_INSTRUCTIONS`]; a note instead when the
/// file is absent). Instructions count the warm-up too (it is simulated alike).
pub fn sim_figures(figs: &mut Figures) -> anyhow::Result<()> {
    let (n, w) = (SIM_INSTRUCTIONS.to_string(), SIM_WARMUP.to_string());
    let (mut instr, mut secs) = (0u64, 0f64);
    for name in sim::workloads::names() {
        let (i, s) = timed_run(&["--workload", name, "--instructions", &n, "--warmup", &w])?;
        figs.push(&format!("sim_{name}_instr_per_s"), i as f64 / s.max(1e-9));
        instr += i;
        secs += s;
    }
    figs.push("sim_synthetic_instr_per_s", instr as f64 / secs.max(1e-9));
    let trace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(SIM_TRACE);
    if trace.is_file() {
        let path = trace.to_string_lossy().into_owned();
        let n = SIM_TRACE_INSTRUCTIONS.to_string();
        let (i, s) = timed_run(&["--trace", &path, "--instructions", &n, "--warmup", &w])?;
        figs.push("sim_trace_instr_per_s", i as f64 / s.max(1e-9));
    } else {
        figs.notes.insert(
            "sim_trace_instr_per_s".into(),
            format!("skipped: {} not found", trace.display()),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bench --json` gives every figure as a JSON number (rates whole, other
    /// quantities to one decimal) and only the notes as strings, so that a
    /// script can compare the figures; `vcd_fmt_bytes_per_cycle` was once a
    /// string (`"160.5"`).
    #[test]
    fn json_figures_are_numbers() {
        let mut f = Figures::default();
        f.push("hw_fmt_cycles_per_s", 33_512_345.6);
        f.values.insert("vcd_fmt_bytes_per_cycle".into(), 160.54);
        f.notes.insert("hw_kernel".into(), "avx2".into());
        let j = f.json();
        assert_eq!(j["hw_fmt_cycles_per_s"], serde_json::json!(33_512_346.0));
        assert_eq!(j["vcd_fmt_bytes_per_cycle"], serde_json::json!(160.5));
        assert_eq!(j["hw_kernel"], serde_json::json!("avx2"));
        assert!(f.text().contains("vcd_fmt_bytes_per_cycle"));
    }

    /// `drive` and `drive_batched` step the unit through every bundle of the
    /// stream: the unit ends where stepping it by hand leaves it.
    #[test]
    fn both_drivers_step_every_bundle() {
        let p = Params::default();
        let s = stream(p, 3 * BATCH + 17, 1);
        let mut by_hand = hw::Unit::new(p).unwrap();
        for ev in &s {
            by_hand.step(ev);
        }
        let want = by_hand.view();
        assert!(want.error.is_none() && want.counters != Default::default());
        let mut u = hw::Unit::new(p).unwrap();
        drive(&mut u, &s);
        assert_eq!(u.view(), want);
        let mut u = hw::Unit::new(p).unwrap();
        drive_batched(&mut u, &s);
        assert_eq!(u.view(), want);
    }

    /// `rate` runs its work `reps` times (at least once) and gives items
    /// over the best time.
    #[test]
    fn rate_is_items_over_the_best_of_its_repetitions() {
        for (reps, runs) in [(0, 1), (1, 1), (3, 3)] {
            let mut n = 0;
            let r = rate(1000, reps, || n += 1);
            assert_eq!(n, runs);
            assert!(r.is_finite() && r > 0.0, "{r}");
        }
        // the best repetition took at least its 20 ms and at most the whole call
        let t = Instant::now();
        let r = rate(10, 2, || {
            std::thread::sleep(std::time::Duration::from_millis(20))
        });
        let whole = t.elapsed().as_secs_f64();
        assert!(r >= 10.0 / whole && r <= 10.0 / 0.020, "{r} ({whole} s)");
    }

    /// The figures issue 2 asks `make bench` for, and the waveform ones,
    /// are all there as rates above zero (on a short stream: a debug
    /// build's rates say nothing else), with the kernel named and a VCD
    /// of the size a cycle of every register makes.
    #[test]
    fn every_unit_and_waveform_figure_is_measured() {
        let mut f = Figures::default();
        unit_figures(20_000, 1, &mut f).unwrap();
        wave_figures(20_000, 1, &mut f).unwrap();
        let keys: Vec<&str> = f.items.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "hw_fmt_cycles_per_s",
                "hw_fmt_batch_cycles_per_s",
                "hw_sfmt_cycles_per_s",
                "golden_fmt_cycles_per_s",
                "lockstep_fmt_cycles_per_s",
                "lockstep_sfmt_cycles_per_s",
                "decode_bin_cycles_per_s",
                "hw_fmt_notrace_cycles_per_s",
                "vcd_fmt_cycles_per_s",
            ]
        );
        for (k, v) in &f.items {
            assert!(v.is_finite() && *v > 0.0, "{k}: {v}");
        }
        assert_eq!(
            f.notes["hw_kernel"],
            format!("{:?}", hw::Kernel::detect()).to_lowercase()
        );
        for k in [
            "core_round_trip_ns_before_lockstep",
            "core_round_trip_ns_after_lockstep",
        ] {
            assert!(f.values[k] > 1.0, "{k}");
        }
        // host cycles a bundle: the mean of the two clock readings over the rate
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            let mhz =
                (f.values["host_clock_mhz_before_hw"] + f.values["host_clock_mhz_after_hw"]) / 2.0;
            for (rate, key) in [
                ("hw_fmt_cycles_per_s", "hw_fmt_host_cycles_per_cycle"),
                ("hw_sfmt_cycles_per_s", "hw_sfmt_host_cycles_per_cycle"),
            ] {
                let r = f.items.iter().find(|(k, _)| k == rate).unwrap().1;
                assert!(mhz > 0.0 && r > 0.0);
                assert!(
                    (f.values[key] - mhz * 1e6 / r).abs() < 1e-9 * f.values[key],
                    "{key}"
                );
            }
        } else {
            assert!(f.notes.contains_key("host_clock_mhz"));
        }
        // every register of a 64-row FMT, about 100 bytes a cycle
        let b = f.values["vcd_fmt_bytes_per_cycle"];
        assert!((20.0..1000.0).contains(&b), "{b} bytes a cycle");
        let j = f.json();
        assert_eq!(
            j.as_object().unwrap().len(),
            keys.len() + f.values.len() + f.notes.len()
        );
    }

    /// The round trip between two threads is a time, however the machine
    /// schedules them (about 50 ns between two cores of one die; a time
    /// slice when both share one CPU).
    #[test]
    fn the_core_round_trip_is_a_time() {
        let t = core_round_trip_ns();
        assert!(t.is_finite() && t > 1.0 && t < 1e8, "{t}");
        // the ball goes back and forth: in 200 ms many times even on one
        // shared CPU (a time slice a trip), and the count stops at the span
        let span = std::time::Duration::from_millis(200);
        let (t, trips) = round_trips(span);
        assert!(trips >= 4, "{trips} round trips in {t:?}");
        assert!(t >= span && t < 50 * span, "{t:?}");
    }

    /// The clock probe runs the adds it says (the chain's own result), for
    /// the span asked, and reads a clock some core could have.
    #[test]
    fn the_host_clock_is_read_from_a_chain_of_adds() {
        if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert_eq!(add_chain(3), None);
            assert_eq!(host_clock_mhz(CLOCK_SPAN), None);
            return;
        }
        for n in [0, 1, 1000] {
            assert_eq!(add_chain(n), Some(8 * n));
        }
        let span = std::time::Duration::from_millis(30);
        let t = Instant::now();
        let mhz = host_clock_mhz(span).expect("a probe on this architecture");
        let took = t.elapsed();
        assert!(took >= span && took < 100 * span, "{took:?}");
        // a debug build runs the loop around the adds unoptimised: the
        // probe then reads low, never high
        assert!((50.0..8000.0).contains(&mhz), "{mhz} MHz");
    }
}
