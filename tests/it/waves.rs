//! Waveforms (issue 3): every VCD written here passes the strict checker
//! (`cpistack::vcdcheck`); a round trip through `wellen` gives back, cycle by
//! cycle, the value every dumped signal had in the model; files are byte-identical
//! across identical runs; a lock-step mismatch leaves a valid waveform covering
//! the failing cycle; the committed GTKWave layout is what `cpistack waves`
//! writes; GTKWave itself loads each save file with its VCD without a warning.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::scratch::Scratch;

use cpistack::check::LockStep;
use cpistack::waves::{self, VcdTracer, Window};
use events::gen::{GenConfig, Generator};
use events::{Counter, CounterUnit, CycleEvents, Params, Variant};

/// A fresh scratch directory for one test, removed if it passes.
fn tmp(name: &str) -> Scratch {
    Scratch::new(&format!("waves-{name}"))
}

fn check(path: &Path) -> cpistack::vcdcheck::VcdSummary {
    cpistack::vcdcheck::check_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A value as the test expects it: bits or a string.
#[derive(Clone, Debug, PartialEq, Eq)]
enum V {
    Bits(u64),
    Wide(String),
    Str(String),
}

/// Every register of `u` by full signal name, computed from the public accessors
/// (independently of the tracer's own sampling).
fn regs(u: &hw::Unit, out: &mut BTreeMap<String, V>) {
    let q = u.regs();
    let l = u.latch();
    let p = *u.params();
    let m = 2 * p.fmt_rows as u16 - 1;
    let mut put = |k: &str, v: u64| {
        out.insert(k.to_string(), V::Bits(v));
    };
    put("top.bundles", l.bundles);
    put("top.rob.rob_count", q.rob_count as u64);
    put("top.rob.rob_head", q.rob_head as u64);
    put("top.rob.rob_tail", q.rob_tail as u64);
    put(
        "top.rob.rob_full",
        (q.rob_count as u32 == p.rob_entries) as u64,
    );
    put("top.fmt.head", q.head as u64);
    put("top.fmt.dtail", q.dtail as u64);
    put("top.fmt.ftail", q.ftail as u64);
    let live = q.ftail.wrapping_sub(q.head) & m;
    put("top.fmt.free_rows", p.fmt_rows as u64 - 1 - live as u64);
    put(
        "top.fmt.dispatched_rows",
        (q.dtail.wrapping_sub(q.head) & m) as u64,
    );
    put(
        "top.fmt.fetched_rows",
        (q.ftail.wrapping_sub(q.dtail) & m) as u64,
    );
    put("top.fmt.refilling", q.refilling as u64);
    put("top.fmt.refill_pending", q.refill_pending as u64);
    for c in Counter::ALL {
        put(&format!("top.counters.{}", c.name()), q.counters[c.idx()]);
        put(
            &format!("top.counters.{}_ovf", c.name()),
            (q.overflow >> c.idx() & 1) as u64,
        );
    }
    put("top.counters.saturated", q.saturated as u64);
    let e = l.error;
    put("top.err.valid", e.is_some() as u64);
    put("top.err.bundle", e.map_or(0, |e| e.bundle));
    put("top.err.field", e.map_or(0, |e| e.field.bits() as u64));
    put("top.err.rule", e.map_or(0, |e| e.rule as u64));
    out.insert(
        "top.err.field_s".into(),
        V::Str(e.map_or("none".into(), |e| e.field.name().into())),
    );
    out.insert(
        "top.err.rule_s".into(),
        V::Str(e.map_or("none".into(), |e| format!("rule{}", e.rule))),
    );
    let fmt = p.variant == Variant::Fmt;
    // a row's place, from the unit's own list of live rows (oldest first:
    // dispatched, then fetched, then the accumulation row), each checked to
    // be the physical row it names; every other row is free
    let rows = p.fmt_rows as usize;
    let mut state = vec![(0u64, "free"); rows];
    let mut live = Vec::new();
    u.for_each_row(&mut |age, v| live.push((age, v)));
    let n_live = live.len();
    for (age, v) in live {
        let r = (q.head as usize + age) % rows;
        assert_eq!(
            (v.rob_id, v.penalty),
            (u.row_rob_id(r), u.row_penalty(r)),
            "live row of age {age} is physical row {r}"
        );
        state[r] = match (age + 1 == n_live, v.dispatched) {
            (true, _) => (3, "accum"),
            (false, true) => (1, "dispatched"),
            (false, false) => (2, "fetched"),
        };
    }
    for (r, &(code, name)) in state.iter().enumerate() {
        let n = format!("top.fmt.{}", cpistack::waves::row_name(r, p.fmt_rows));
        out.insert(format!("{n}_state"), V::Bits(code));
        out.insert(format!("{n}_state_s"), V::Str(name.into()));
        out.insert(format!("{n}_rob_id"), V::Bits(u.row_rob_id(r) as u64));
        out.insert(format!("{n}_penalty"), V::Bits(u.row_penalty(r) as u64));
        out.insert(
            format!("{n}_mispredict"),
            V::Bits(u.mispredict_bits()[r] as u64),
        );
        out.insert(format!("{n}_done"), V::Bits(u.done_bits()[r] as u64));
        if fmt {
            let c = u.row_icounts(r);
            for (k, f) in ["l1i", "l2i", "itlb"].iter().enumerate() {
                out.insert(format!("{n}_{f}"), V::Bits(c[k] as u64));
            }
        }
    }
    if !fmt {
        for (k, f) in ["l1i", "l2i", "itlb"].iter().enumerate() {
            out.insert(format!("top.fmt.shared_{f}"), V::Bits(q.shared_i[k] as u64));
        }
        let bits: String = (0..p.rob_entries as usize)
            .rev()
            .map(|i| if u.imiss_vec()[i] { '1' } else { '0' })
            .collect();
        out.insert("top.rob.imiss".into(), V::Wide(bits));
    }
}

fn inputs(ev: &CycleEvents, out: &mut BTreeMap<String, V>) {
    let mut put = |k: &str, v: u64| {
        out.insert(format!("top.in.{k}"), V::Bits(v));
    };
    put("count_enable", ev.count_enable as u64);
    put("fetch_stall", ev.fetch_stall.bits() as u64);
    put("fetched_branches", ev.fetched_branches as u64);
    put("fe_redirect", ev.fe_redirect as u64);
    put("fe_squash", ev.fe_squash as u64);
    put("dispatched", ev.dispatched as u64);
    put("dispatched_branches", ev.dispatched_branches as u64);
    put("dispatched_imiss", ev.dispatched_imiss as u64);
    put("squash_kind", ev.squash.kind_bits() as u64);
    put("squash_id", ev.squash.id() as u64);
    put("retired", ev.retired as u64);
    put("head", ev.head.bits() as u64);
    put("backend_full", ev.backend_full as u64);
    let mut s = |k: &str, v: &str| {
        out.insert(format!("top.in.{k}_s"), V::Str(v.into()));
    };
    s("fetch_stall", ev.fetch_stall.name());
    s("squash_kind", ev.squash.name());
    s("head", ev.head.name());
}

/// Trace `bundles` on a fresh unit of `params` into `path` (window `w`), and
/// record what every signal should show at each dumped time: `(time, values)`.
fn trace(
    path: &Path,
    params: Params,
    bundles: &[CycleEvents],
    w: Window,
) -> Vec<(u64, BTreeMap<String, V>)> {
    let mut u = hw::Unit::new(params).unwrap();
    let f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut t = VcdTracer::new(f, &u, 0, w).unwrap();
    let mut want = Vec::new();
    let mut before = BTreeMap::new();
    regs(&u, &mut before);
    let last = (bundles.len() as u64).min(w.to);
    for (c, ev) in bundles.iter().enumerate() {
        let c = c as u64;
        if c >= w.from && c < w.to {
            let mut m = before.clone();
            inputs(ev, &mut m);
            m.insert("top.clk".into(), V::Bits(1));
            want.push(((c - w.from) * 10, m));
        }
        u.step_traced(ev, &mut t);
        before.clear();
        regs(&u, &mut before);
        if c + 1 == last {
            before.insert("top.clk".into(), V::Bits(1));
            want.push(((c + 1 - w.from) * 10, before.clone()));
        }
    }
    t.finish().unwrap();
    want
}

/// Read `path` with wellen and compare every signal at every recorded time.
fn round_trip(path: &Path, want: &[(u64, BTreeMap<String, V>)]) {
    let mut wf = wellen::simple::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let h = wf.hierarchy();
    let vars: Vec<(String, wellen::SignalRef)> = h
        .all_vars()
        .map(|v| (h[v].full_name(h), h[v].signal_ref()))
        .collect();
    let refs: Vec<_> = vars.iter().map(|v| v.1).collect();
    wf.load_signals(&refs);
    let times = wf.time_table().to_vec();
    // every signal the model has is in the file, and nothing else
    let names: Vec<&String> = vars.iter().map(|v| &v.0).collect();
    let expected: Vec<&String> = want[0].1.keys().collect();
    let mut a = names.clone();
    a.sort();
    assert_eq!(a, expected, "signal names of {}", path.display());
    for (t, m) in want {
        let idx = times
            .binary_search(t)
            .unwrap_or_else(|_| panic!("no time {t}")) as u32;
        for (name, sref) in &vars {
            let Some(exp) = m.get(name) else { continue };
            let sig = wf.get_signal(*sref).unwrap();
            let off = sig.get_offset(idx).unwrap();
            let got = sig.get_value_at(&off, off.elements - 1);
            let ok = match (exp, &got) {
                (V::Str(s), wellen::SignalValueRef::String(g)) => s == g,
                (V::Bits(b), v) => {
                    v.to_bit_string()
                        .and_then(|s| u64::from_str_radix(&s, 2).ok())
                        == Some(*b)
                }
                (V::Wide(b), v) => v.to_bit_string().as_deref() == Some(b.as_str()),
                _ => false,
            };
            assert!(
                ok,
                "{}: `{name}` at time {t}: expected {exp:?}, file has {got:?}",
                path.display()
            );
        }
    }
}

fn stress(p: Params, n: usize, seed: u64) -> Vec<CycleEvents> {
    Generator::new(p, GenConfig::stress(), seed)
        .take(n)
        .collect()
}

#[test]
fn scenario_waves_are_valid_and_round_trip() {
    let dir = tmp("scen");
    for sc in cpistack::scenarios::all() {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let p = sc.params.with_variant(v);
            let path = dir.join(format!("{}-{}.vcd", sc.name, v.name()));
            let want = trace(&path, p, &sc.bundles, Window::ALL);
            let s = check(&path);
            assert_eq!(s.last_time, 10 * sc.bundles.len() as u64 + 10);
            round_trip(&path, &want);
        }
    }
}

/// Row names sort in row order by name, at every legal table size.
#[test]
fn row_names_sort_in_row_order() {
    use cpistack::waves::row_name;
    assert_eq!(row_name(7, 64), "row07");
    assert_eq!(row_name(0, 2), "row00");
    assert_eq!(row_name(7, 128), "row007");
    assert_eq!(row_name(255, 256), "row255");
    for rows in [2u32, 4, 8, 16, 32, 64, 128, 256] {
        let names: Vec<String> = (0..rows as usize).map(|r| row_name(r, rows)).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "{rows} rows");
    }
}

#[test]
fn random_stress_round_trip_both_variants_small_and_default() {
    let dir = tmp("rand");
    for (k, set) in [
        vec![],
        vec![("fmt_rows", "4"), ("local_bits", "3"), ("rob_entries", "9")],
        // three-digit row names (row000..row127)
        vec![("fmt_rows", "128"), ("rob_entries", "256")],
    ]
    .into_iter()
    .enumerate()
    {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let mut p = Params::default().with_variant(v);
            for (n, x) in &set {
                p.set(n, x).unwrap();
            }
            let seed = 11 + k as u64;
            println!("seed {seed}, params {p:?}");
            let s = stress(p, 1500, seed);
            let path = dir.join(format!("r{k}-{}.vcd", v.name()));
            let want = trace(&path, p, &s, Window::ALL);
            check(&path);
            round_trip(&path, &want);
            // a window: time 0 is cycle 700
            let pw = dir.join(format!("r{k}-{}-win.vcd", v.name()));
            let w = Window { from: 700, to: 900 };
            let want = trace(&pw, p, &s, w);
            assert_eq!(want.len(), 201);
            let sum = check(&pw);
            assert_eq!(sum.last_time, 2010);
            round_trip(&pw, &want);
        }
    }
}

#[test]
fn identical_runs_give_identical_files() {
    let dir = tmp("det");
    let p = Params::default();
    let s = stress(p, 3000, 5);
    let a = dir.join("a.vcd");
    let b = dir.join("b.vcd");
    waves::dump_stream(&a, p, &s, Window::ALL).unwrap();
    waves::dump_stream(&b, p, &s, Window::ALL).unwrap();
    let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(x == y, "two identical runs differ");
    check(&a);
    let text = String::from_utf8(x).unwrap();
    assert!(text.contains(waves::DATE));
    assert!(text.contains(&format!("cpistack {}", env!("CARGO_PKG_VERSION"))));
    assert!(text.contains("$timescale 1 ns $end"));
}

#[test]
fn window_out_of_range_is_an_error() {
    let dir = tmp("win");
    let p = Params::default();
    let s = stress(p, 50, 1);
    let e = waves::dump_stream(&dir.join("x.vcd"), p, &s, Window { from: 100, to: 200 })
        .expect_err("a window after the end must fail");
    assert!(e.to_string().contains("starts after the last cycle"), "{e}");
}

#[test]
fn a_mismatch_leaves_a_valid_waveform_covering_the_failing_cycle() {
    let dir = tmp("mism");
    for (v, fault) in [(Variant::Fmt, 1234u64), (Variant::Sfmt, 77)] {
        let p = Params::default().with_variant(v);
        let mut ls = LockStep::new(p)
            .unwrap()
            .with_seed(42)
            .with_waves_dir(Some(dir.to_path_buf()));
        ls.inject_golden_fault_at(fault);
        let mut err = None;
        for ev in Generator::new(p, GenConfig::realistic(), 42).take(3000) {
            if let Err(m) = ls.step(&ev) {
                err = Some(m);
                break;
            }
        }
        let m = err.expect("the injected fault must be found");
        assert_eq!(m.cycle, fault);
        let name = format!("mismatch-{}-seed42-cycle{fault}.vcd", v.name());
        let path = dir.join(&name);
        assert_eq!(m.waves.as_deref(), Some(path.to_str().unwrap()));
        assert!(m.to_string().contains(&name), "{m}");
        let s = check(&path);
        // time 0 is cycle `start`; the failing cycle and the state after it are in
        let text = std::fs::read_to_string(&path).unwrap();
        let start: u64 = text
            .split("time 0 = cycle ")
            .nth(1)
            .and_then(|r| r.split(';').next())
            .and_then(|x| x.parse().ok())
            .expect("the header names the first cycle");
        assert!(
            fault - start >= 200 || start == 0,
            "covers {start}..={fault}: fewer than 200 cycles before"
        );
        assert_eq!(s.last_time, (fault + 1 - start) * 10 + 10);
        // the waveform's registers equal a fresh replay's
        let mut u = hw::Unit::new(p).unwrap();
        let evs: Vec<_> = Generator::new(p, GenConfig::realistic(), 42)
            .take(fault as usize + 1)
            .collect();
        let mut want = Vec::new();
        for (c, ev) in evs.iter().enumerate() {
            let c = c as u64;
            if c >= start {
                let mut m = BTreeMap::new();
                regs(&u, &mut m);
                inputs(ev, &mut m);
                m.insert("top.clk".into(), V::Bits(1));
                want.push(((c - start) * 10, m));
            }
            u.step(ev);
        }
        round_trip(&path, &want);
    }
    // disabled: no file
    let p = Params::default();
    let mut ls = LockStep::new(p).unwrap().with_waves_dir(None);
    ls.inject_golden_fault_at(3);
    let mut m = None;
    for ev in Generator::new(p, GenConfig::realistic(), 1).take(10) {
        if let Err(e) = ls.step(&ev) {
            m = Some(e);
            break;
        }
    }
    assert_eq!(m.expect("fault found").waves, None);
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn committed_layout_is_what_cpistack_writes() {
    let dir = tmp("layout");
    for p in waves::write_layout(&dir).unwrap() {
        let name = p.file_name().unwrap();
        let committed = repo().join("waves").join(name);
        let want = std::fs::read_to_string(&p).unwrap();
        let got = std::fs::read_to_string(&committed)
            .unwrap_or_else(|e| panic!("{}: {e} (run `make waves`)", committed.display()));
        assert_eq!(
            got,
            want,
            "{} is stale: run `make waves`",
            committed.display()
        );
    }
}

/// GTKWave loads each save file `cpistack waves` writes, with the scenario
/// VCD it names, without a warning and showing every trace: for the default
/// layout (`mispredict`, default parameters) and for a run of one scenario of
/// other parameters (`no_free_row`: 2 rows), whose layout once
/// named a `mispredict.vcd` that was not written.
#[test]
fn gtkwave_loads_each_layout_without_warning() {
    let have = |c: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {c}"))
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !have("gtkwave") || !have("xvfb-run") {
        eprintln!(
            "\n*** SKIPPED: gtkwave_loads_each_layout_without_warning: gtkwave or xvfb-run \
             not found (install with: apt-get install gtkwave xvfb xauth) ***\n"
        );
        println!("SKIPPED: gtkwave or xvfb-run not installed");
        return;
    }
    for (name, only) in [("mispredict", false), ("no_free_row", true)] {
        let dir = tmp(&format!("gtkwave-{name}"));
        let sc = cpistack::scenarios::by_name(name).unwrap();
        assert_eq!(sc.params == Params::default(), !only);
        waves::cmd(&waves::WavesCmdArgs {
            out: dir.to_path_buf(),
            scenarios: if only { vec![name.to_string()] } else { vec![] },
        })
        .unwrap();
        // the save file names its VCD by relative path: open it alone, in
        // its directory, and from another (`[savefile]` names the layout,
        // so GTKWave takes the VCD's path relative to it)
        let generic = [Variant::Fmt, Variant::Sfmt].map(|v| (format!("{}.gtkw", v.name()), None));
        gtkwave_loads_layouts(&dir, sc.bundles.len(), &generic);
        let elsewhere = [Variant::Fmt, Variant::Sfmt].map(|v| {
            (
                dir.join(format!("{}.gtkw", v.name())).display().to_string(),
                None,
            )
        });
        gtkwave_loads_layouts(&std::env::temp_dir(), sc.bundles.len(), &elsewhere);
        // each VCD's own layout, from another directory (a layout once needed
        // its translate filters in the working directory)
        let own = [format!("{name}.vcd"), format!("{name}-sfmt.vcd")].map(|vcd| {
            let layout = waves::layout_path(&dir.join(&vcd)).unwrap();
            (layout.display().to_string(), Some(dir.join(vcd)))
        });
        gtkwave_loads_layouts(&std::env::temp_dir(), sc.bundles.len(), &own);
    }
}

/// GTKWave, run in `dir`, opens each layout (with its VCD when one is given)
/// without a warning, shows every trace of it and loads `bundles` cycles.
fn gtkwave_loads_layouts(dir: &Path, bundles: usize, layouts: &[(String, Option<PathBuf>)]) {
    let probe_dir = tmp("gtkwave-probe");
    let probe = probe_dir.join("probe.tcl");
    for (gtkw, vcd) in layouts {
        std::fs::write(
            &probe,
            "puts \"DISPLAYED [llength [gtkwave::getDisplayedSignals]]\"\ngtkwave::/File/Quit\n",
        )
        .unwrap();
        let mut args = vec![
            "120".to_string(),
            "xvfb-run".into(),
            "-a".into(),
            "gtkwave".into(),
        ];
        args.extend(["-S".into(), probe.display().to_string()]);
        args.extend(vcd.iter().map(|v| v.display().to_string()));
        args.push(gtkw.clone());
        let out = std::process::Command::new("timeout")
            .current_dir(dir)
            .args(&args)
            .output()
            .expect("run gtkwave");
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "gtkwave failed on {gtkw}:\n{log}");
        let lower = log.to_lowercase();
        for bad in ["warning", "error", "cannot", "not found", "unable"] {
            assert!(
                !lower.contains(bad),
                "gtkwave says `{bad}` on {gtkw}:\n{log}"
            );
        }
        let shown: usize = log
            .split("DISPLAYED ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no probe output from gtkwave on {gtkw}:\n{log}"));
        let traces = std::fs::read_to_string(dir.join(gtkw))
            .unwrap()
            .lines()
            // a trace is a line naming a signal, or an alias and the signal
            .filter(|l| l.starts_with("top.") || l.starts_with("+{"))
            .count();
        assert_eq!(
            shown, traces,
            "{gtkw}: every trace of the save file is shown\n{log}"
        );
        // the final timestamp, 10 ns after the final state (docs/waves.md)
        let end = format!("[{}] end time.", 10 * (bundles + 1));
        assert!(log.contains(&end), "{gtkw} did not load its VCD:\n{log}");
    }
}

/// Every VCD gets the layout of its own unit beside it, which names every
/// register at its width; a file of that name that is not a layout is kept.
#[test]
fn a_vcd_is_written_with_its_own_layout() {
    let dir = tmp("own-layout");
    let p = Params {
        fmt_rows: 4,
        rob_entries: 8,
        ..Default::default()
    };
    let sc = &cpistack::scenarios::all()[0];
    let vcd = dir.join("small.vcd");
    let bundles: Vec<CycleEvents> = sc.bundles.iter().take(3).copied().collect();
    // the unit: a small one (the scenario's first bundles are legal for it)
    waves::dump_stream(&vcd, p, &bundles, Window::ALL).unwrap();
    let layout = waves::write_vcd_layout(&vcd, &p, waves::View::of(3))
        .unwrap()
        .unwrap();
    assert_eq!(layout, dir.join("small.gtkw"));
    let text = std::fs::read_to_string(&layout).unwrap();
    assert!(text.contains("[dumpfile] \"small.vcd\""), "{text}");
    // the widths of this unit: 3-bit pointers (4 rows and a wrap bit), 3-bit ROB ids
    for name in [
        "top.fmt.head[2:0]",
        "top.rob.rob_head[2:0]",
        "top.fmt.row03_penalty[15:0]",
    ] {
        assert!(text.lines().any(|l| l == name), "{name} in\n{text}");
    }
    assert!(!text.contains("row04"), "{text}");
    // a file of the layout's name that is not a layout is not overwritten
    std::fs::write(&layout, "my notes\n").unwrap();
    let e = waves::write_vcd_layout(&vcd, &p, waves::View::of(3))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a cpistack layout"), "{e}");
    assert_eq!(std::fs::read_to_string(&layout).unwrap(), "my notes\n");
    // and a run that would write it is refused before it starts
    let args = waves::WaveArgs {
        vcd: Some(vcd.clone()),
        window: None,
    };
    let e = args
        .check_variants(&[Variant::Fmt])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a cpistack layout"), "{e}");
    // an empty file of that name is written over, as `cpistack waves` does
    // with one in its `--out` (it was refused after the check let it through)
    std::fs::write(&layout, "").unwrap();
    args.check_variants(&[Variant::Fmt]).unwrap();
    assert_eq!(
        waves::write_vcd_layout(&vcd, &p, waves::View::of(3)).unwrap(),
        Some(layout.clone())
    );
    assert!(std::fs::read_to_string(&layout)
        .unwrap()
        .contains("[dumpfile] \"small.vcd\""));
    // a VCD named .gtkw has no layout (it would be its own)
    assert!(waves::layout_path(&dir.join("x.gtkw")).is_none());
}
