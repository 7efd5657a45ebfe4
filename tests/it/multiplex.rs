//! Multiplexed global counters (`cpistack::multiplex`): the full stacks are
//! the `stacks` study's, one group (every counter counting) changes nothing,
//! a schedule's stack is what a physical counter reprogrammed at every slice
//! end would count (checked against the core stepped by hand), narrow
//! counters are unwrapped between reads, and the outputs are complete and
//! the same however many threads ran them.

use cpistack::multiplex::{
    self, run_multiplex, schedule, Basis, Plan, Report, CSV_HEADER, METHODS, SUMMARY_CSV_HEADER,
};
use cpistack::stacks::{run_study, Settings, Source, NCOMP};
use events::{Counter, CounterUnit, Variant};

use crate::scratch::Scratch;

fn settings(cfg: sim::Config, instructions: u64, warmup: u64) -> Settings {
    Settings {
        cfg,
        instructions,
        warmup,
    }
}

fn plan(counters: &[usize], slices: &[u64], schedules: usize) -> Plan {
    Plan::new(counters.to_vec(), slices.to_vec(), schedules, 1).unwrap()
}

fn report(names: &[&str], s: &Settings, p: &Plan, jobs: usize) -> Report {
    let src: Vec<Source> = names
        .iter()
        .map(|n| Source::workload(n, 1).unwrap())
        .collect();
    run_multiplex(&src, s, p, jobs, &|_, _| {}).unwrap_or_else(|e| panic!("{names:?}: {e:#}"))
}

/// Every method's full stack and its error are those `cpistack stacks`
/// gives from its own runs; with all eight counters (one group) every
/// schedule gives the full stack exactly, and fewer counters move it.
#[test]
fn one_group_is_the_full_stack_and_the_full_stacks_are_the_stacks_study() {
    let s = settings(sim::Config::default(), 40_000, 5_000);
    let names = ["mlp", "icache", "longlat"];
    let r = report(&names, &s, &plan(&[1, 8], &[1_000, 5_000], 4), 0);
    let src: Vec<Source> = names
        .iter()
        .map(|n| Source::workload(n, 1).unwrap())
        .collect();
    let whole = run_study(&src, &s, 0, &|_, _| {}).expect("stacks runs");
    for (x, st) in r.studies.iter().zip(&whole.studies) {
        assert_eq!(x.name, st.name);
        assert_eq!(x.cycles, st.cycles, "{}", x.name);
        for m in ["reference", "fmt", "sfmt", "power5"] {
            assert_eq!(x.stacks[m], st.stacks[m], "{} {m}", x.name);
        }
        // 2 bases x 2 lengths x 2 counts x 2 orders, none too short
        assert_eq!(x.setups.len(), 16, "{}: {:?}", x.name, x.skipped);
        for u in &x.setups {
            for m in METHODS {
                let v = &u.methods[m];
                assert_eq!(v.full_error_pp, st.errors_pp[m], "{} {m}", x.name);
                if u.counters == 8 {
                    assert_eq!(u.groups, 1);
                    assert_eq!(v.first_stack, x.stacks[m], "{} {m}", x.name);
                    assert_eq!((v.sampling_max_pp, v.rel_max_pct), (0.0, 0.0));
                    assert_eq!(v.error_max_pp, v.full_error_pp);
                }
            }
        }
        // eight groups sample: some set-up of one counter moves FMT's stack,
        // and the random schedules differ from each other
        assert!(
            x.setups
                .iter()
                .any(|u| u.counters == 1 && u.methods["fmt"].sampling_max_pp > 0.0),
            "{}",
            x.name
        );
        assert!(
            x.setups.iter().any(|u| u.order == "random"
                && u.methods["fmt"].sampling_mean_pp < u.methods["fmt"].sampling_max_pp),
            "{}",
            x.name
        );
        for u in &x.setups {
            assert_eq!(u.rounds, u.slices / u.groups, "{}", x.name);
            assert_eq!(u.schedules, if u.order == "fixed" { 1 } else { 4 });
        }
    }
    // the summary: one row per set-up and method, each over the three
    let rows: Vec<_> = r.summary.iter().filter(|x| x.set == "workloads").collect();
    assert_eq!(rows.len(), 16 * METHODS.len());
    assert!(r.summary.iter().all(|x| x.studies == 3));
    check_summary(&r);
}

/// Every summary row recomputed from the studies: means of the means,
/// maxima of the maxima, the study of the largest sampling error, and only
/// set-ups every study of the set measured.
fn check_summary(r: &Report) {
    for set in ["workloads", "traces"] {
        let of: Vec<_> = r
            .studies
            .iter()
            .filter(|x| format!("{}s", x.kind) == set)
            .collect();
        let rows: Vec<_> = r.summary.iter().filter(|x| x.set == set).collect();
        let mut want = 0;
        for u in of.first().map_or(&[][..], |x| &x.setups[..]) {
            let key = (u.basis, u.slice, u.counters, &u.order);
            let per: Vec<_> = of
                .iter()
                .filter_map(|x| {
                    x.setups
                        .iter()
                        .find(|v| (v.basis, v.slice, v.counters, &v.order) == key)
                        .map(|v| (x.name.as_str(), v))
                })
                .collect();
            let found: Vec<_> = rows
                .iter()
                .filter(|x| (x.basis, x.slice, x.counters, &x.order) == key)
                .collect();
            if per.len() < of.len() {
                assert!(
                    found.is_empty(),
                    "{set} {key:?}: not measured on every study"
                );
                continue;
            }
            want += 1;
            assert_eq!(found.len(), METHODS.len(), "{set} {key:?}");
            for x in found {
                let m: Vec<_> = per
                    .iter()
                    .map(|(n, v)| (*n, &v.methods[&x.method]))
                    .collect();
                let n = m.len() as f64;
                let mean = |f: &dyn Fn(&multiplex::MethodResult) -> f64| {
                    m.iter().map(|(_, v)| f(v)).sum::<f64>() / n
                };
                let max = |f: &dyn Fn(&multiplex::MethodResult) -> f64| {
                    m.iter().map(|(_, v)| f(v)).fold(0.0, f64::max)
                };
                assert_eq!(x.studies, m.len());
                assert!((x.full_error_pp - mean(&|v| v.full_error_pp)).abs() < 1e-12);
                assert!((x.sampling_mean_pp - mean(&|v| v.sampling_mean_pp)).abs() < 1e-12);
                assert!((x.error_mean_pp - mean(&|v| v.error_mean_pp)).abs() < 1e-12);
                assert!((x.rel_mean_pct - mean(&|v| v.rel_mean_pct)).abs() < 1e-12);
                assert_eq!(x.sampling_max_pp, max(&|v| v.sampling_max_pp));
                assert_eq!(x.error_max_pp, max(&|v| v.error_max_pp));
                assert_eq!(x.rel_max_pct, max(&|v| v.rel_max_pct));
                let worst = m
                    .iter()
                    .find(|(_, v)| v.sampling_max_pp == x.sampling_max_pp)
                    .unwrap();
                assert_eq!(x.sampling_max_study, worst.0);
            }
        }
        assert_eq!(rows.len(), want * METHODS.len(), "{set}");
    }
}

/// A set-up some study is too short for is left out of the summary (and
/// listed by the study), the others are kept.
#[test]
fn the_summary_holds_only_set_ups_every_study_measured() {
    let s = settings(sim::Config::default(), 10_000, 2_000);
    // balanced runs 10 k instructions in fewer than 8 slices of 2000
    // cycles, mlp in more; neither makes 8 slices of 2000 instructions
    let r = report(&["balanced", "mlp"], &s, &plan(&[1, 4], &[2_000], 2), 0);
    let skipped = |x: &multiplex::Study, what: &str| {
        x.skipped
            .iter()
            .any(|k| k.starts_with(&format!("slices of 2000 {what} with 1 counter:")))
    };
    assert!(
        skipped(&r.studies[0], "cycles"),
        "{:?}",
        r.studies[0].skipped
    );
    assert!(
        !skipped(&r.studies[1], "cycles"),
        "{:?}",
        r.studies[1].skipped
    );
    assert!(r.studies.iter().all(|x| skipped(x, "instructions")));
    assert!(!r
        .summary
        .iter()
        .any(|x| x.basis == Basis::Cycles && x.counters == 1));
    assert!(r
        .summary
        .iter()
        .any(|x| x.basis == Basis::Cycles && x.counters == 4));
    check_summary(&r);
}

/// A slice of `m·g` is `m` slices of `g`: the set-ups of 5000 are the same
/// whether the run was read every 1000 or every 5000, on both bases.
#[test]
fn a_long_slice_is_the_same_read_in_short_ones() {
    let s = settings(sim::Config::default(), 60_000, 5_000);
    let fine = report(
        &["chase", "icache"],
        &s,
        &plan(&[1, 2], &[1_000, 5_000], 3),
        0,
    );
    let coarse = report(&["chase", "icache"], &s, &plan(&[1, 2], &[5_000], 3), 0);
    for (a, b) in fine.studies.iter().zip(&coarse.studies) {
        let of = |x: &multiplex::Study| {
            serde_json::to_value(
                x.setups
                    .iter()
                    .filter(|u| u.slice == 5_000)
                    .collect::<Vec<_>>(),
            )
            .unwrap()
        };
        assert_eq!(b.setups.len(), 8, "{}", b.name);
        assert_eq!(of(a), of(b), "{}", a.name);
    }
}

/// A physical counter emulated independently: the core stepped by hand, an
/// FMT unit read every cycle, each component's increments in a cycle added
/// to its counter only while its group is the one programmed (slices of
/// cycles or instructions, groups in the fixed order or in a drawn
/// schedule), then scaled by the cycles the group counted. The study's
/// stack of the first schedule is the same, to the cycle.
#[test]
fn a_schedule_counts_what_a_reprogrammed_counter_would() {
    let (instructions, warmup) = (30_000, 3_000);
    let s = settings(sim::Config::default(), instructions, warmup);
    for (name, counters, slice) in [
        ("branchy", 2, 1_000),
        ("mlp", 1, 2_000),
        ("fpmix", 3, 1_000),
    ] {
        let r = report(&[name], &s, &plan(&[counters], &[slice], 3), 1);
        let x = &r.studies[0];
        let groups = multiplex::groups_of(counters);
        for basis in Basis::ALL {
            for order in ["fixed", "random"] {
                let u = x
                    .setups
                    .iter()
                    .find(|u| u.basis == basis && u.order == order)
                    .unwrap();
                // the per-cycle increments of FMT's eight components, and
                // each counted cycle's slice
                let spec = sim::workloads::by_name(name).unwrap();
                let cfg = sim::Config::default();
                let mut core =
                    sim::Core::new(&cfg, sim::workloads::Workload::new(&spec, 1)).unwrap();
                core.set_warmup(warmup);
                core.set_limit(instructions);
                let mut units = [Variant::Fmt, Variant::Sfmt]
                    .map(|v| hw::Unit::new(cfg.unit_params().with_variant(v)).unwrap());
                let mut p5 = cpistack::stacks::Power5::new();
                let read = |u: &[hw::Unit; 2], p5: &cpistack::stacks::Power5| {
                    let mut r = [[0i64; 8]; 3];
                    for (j, u) in u.iter().enumerate() {
                        let c = u.view().counters;
                        for (k, w) in Counter::COMPONENTS.iter().enumerate() {
                            r[j][k] = c.get(*w) as i64;
                        }
                    }
                    r[2].copy_from_slice(&p5.stack()[1..]);
                    r
                };
                let mut prev = read(&units, &p5);
                // per counted cycle: its slice, each method's component increments
                let mut cycles: Vec<(usize, [[i64; 8]; 3])> = Vec::new();
                let (mut n, mut retired, mut slice_of) = (0u64, 0u64, 0usize);
                while core.counted_retired() < instructions {
                    let ev = *core.step().unwrap();
                    for u in &mut units {
                        u.step(&ev);
                    }
                    events::Consumer::cycle(&mut p5, &ev);
                    let now = read(&units, &p5);
                    if ev.count_enable {
                        n += 1;
                        retired += ev.retired as u64;
                        let mut d = [[0i64; 8]; 3];
                        for j in 0..3 {
                            for k in 0..8 {
                                d[j][k] = now[j][k] - prev[j][k];
                            }
                        }
                        cycles.push((slice_of, d));
                        // the slice ends with this cycle when its count is reached
                        let at = match basis {
                            Basis::Cycles => n,
                            Basis::Instructions => retired,
                        };
                        if at >= (slice_of as u64 + 1) * slice {
                            slice_of += 1;
                        }
                    }
                    prev = now;
                }
                assert_eq!(n, x.cycles, "{name}");
                let slices = cycles.last().unwrap().0 + 1;
                assert_eq!(slices, u.slices, "{name} {basis:?}");
                let active = if order == "fixed" {
                    schedule(slices, groups.len(), None)
                } else {
                    schedule(
                        slices,
                        groups.len(),
                        Some(&mut multiplex::schedule_rng(1, 0)),
                    )
                };
                for (j, m) in METHODS.iter().enumerate() {
                    let mut counted = vec![0u64; groups.len()];
                    let mut raw = [0i64; 8];
                    for (k, d) in &cycles {
                        let q = active[*k];
                        counted[q] += 1;
                        for &c in &groups[q] {
                            raw[c - 1] += d[j][c - 1];
                        }
                    }
                    let mut want = [0i64; NCOMP];
                    for (q, g) in groups.iter().enumerate() {
                        for &c in g {
                            want[c] =
                                (raw[c - 1] as f64 * n as f64 / counted[q] as f64).round() as i64;
                        }
                    }
                    want[0] = n as i64 - want[1..].iter().sum::<i64>();
                    assert_eq!(
                        u.methods[*m].first_stack, want,
                        "{name} {basis:?} {order} {m}"
                    );
                }
            }
        }
    }
}

/// The configured width is checked per set-up, against what a counter
/// read at each of its slice ends must count: 11-bit global counters give
/// the same study as 48-bit ones when no slice moves a counter by 2048;
/// 14-bit ones measure slices of 1000 cycles (the same numbers) but not of
/// 100 k, whichever other lengths are asked for; and a study no length
/// fits says why.
#[test]
fn the_counter_width_is_checked_per_slice_length() {
    let wide = settings(sim::Config::default(), 40_000, 5_000);
    let with_bits = |bits: u32| {
        let mut cfg = sim::Config::default();
        cfg.set(&format!("unit.global_bits={bits}")).unwrap();
        settings(cfg, 40_000, 5_000)
    };
    let p = plan(&[1, 2], &[1_000], 3);
    let a = report(&["balanced"], &wide, &p, 0);
    let b = report(&["balanced"], &with_bits(11), &p, 0);
    assert!(a.studies[0].cycles > 4 << 11);
    let json = |r: &Report| serde_json::to_value(&r.studies).unwrap();
    assert_eq!(json(&a), json(&b));
    let both = plan(&[1, 2], &[1_000, 100_000], 3);
    let c = report(&["mlp"], &with_bits(14), &both, 0);
    let d = report(&["mlp"], &wide, &plan(&[1, 2], &[1_000], 3), 0);
    let x = &c.studies[0];
    assert!(x.setups.iter().all(|u| u.slice == 1_000));
    assert_eq!(
        serde_json::to_value(&x.setups).unwrap(),
        serde_json::to_value(&d.studies[0].setups).unwrap()
    );
    // (a run shorter than a slice is one slice, the run)
    assert_eq!(
        x.skipped[0],
        format!(
            "slices of 100000 cycles: slice 0 takes {} cycles, more than a counter of 14 bits \
             counts between two reads (unit.global_bits = 14)",
            x.cycles.min(100_000)
        ),
        "{:?}",
        x.skipped
    );
    let src = [Source::workload("mlp", 1).unwrap()];
    let e = run_multiplex(&src, &with_bits(9), &plan(&[1], &[2_000], 1), 0, &|_, _| {})
        .expect_err("slices too long for 9 bits");
    let msg = format!("{e:#}");
    assert!(
        msg.contains("mlp: no set-up can be measured (slices of 2000 cycles: slice 0 takes 2000 cycles, more than a counter of 9 bits counts between two reads (unit.global_bits = 9)")
            && msg.contains("a wider unit.global_bits"),
        "{msg}"
    );
}

/// The five files: a CSV row per study, set-up and method with every
/// column, a summary CSV, a JSON report, an SVG that parses and draws a
/// line per count and basis and a point per slice length, a page with the
/// chart and every summary row; the same bytes from one thread as from
/// several.
#[test]
fn outputs_are_complete_well_formed_and_the_same_on_any_number_of_threads() {
    let s = settings(sim::Config::default(), 30_000, 2_000);
    let p = plan(&[1, 2, 4], &[1_000, 2_000], 5);
    let one = report(&["fpmix", "chase"], &s, &p, 1);
    let many = report(&["fpmix", "chase"], &s, &p, 3);
    let (d1, d2) = (Scratch::new("multiplex-1"), Scratch::new("multiplex-3"));
    multiplex::write_all(&one, &d1).unwrap();
    multiplex::write_all(&many, &d2).unwrap();
    for f in multiplex::OUTPUT_FILES {
        let a = std::fs::read(d1.join(f)).unwrap();
        assert_eq!(a, std::fs::read(d2.join(f)).unwrap(), "{f}");
    }
    assert_eq!(multiplex::text(&one), multiplex::text(&many));
    let setups = 2 * 2 * 3 * 2;
    let csv = std::fs::read_to_string(d1.join("multiplex.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], CSV_HEADER);
    assert_eq!(lines.len(), 1 + 2 * setups * METHODS.len());
    let cols = CSV_HEADER.split(',').count();
    for l in &lines[1..] {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), cols, "{l}");
        assert!(f[0] == "fpmix" || f[0] == "chase", "{l}");
        // fixed order: one schedule, so its mean is its max
        if f[8] == "fixed" {
            assert_eq!((f[9], f[12]), ("1", f[13]), "{l}");
        }
    }
    let sum = std::fs::read_to_string(d1.join("multiplex-summary.csv")).unwrap();
    let lines: Vec<&str> = sum.lines().collect();
    assert_eq!(lines[0], SUMMARY_CSV_HEADER);
    assert_eq!(lines.len(), 1 + setups * METHODS.len());
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d1.join("multiplex.json")).unwrap()).unwrap();
    assert_eq!(j["studies"].as_array().unwrap().len(), 2);
    assert_eq!(j["schedules"], 5);
    // the command reference's section documents both CSV headers and every
    // key of the JSON file: top level, a study, a set-up, a method's
    // results, a summary row
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md"))
        .expect("docs/cli.md");
    let head = "## `cpistack multiplex`";
    let sec = &doc[doc.find(head).expect("a multiplex section")..];
    let sec = &sec[..sec[head.len()..]
        .find("\n## ")
        .map_or(sec.len(), |e| e + head.len())];
    for h in [CSV_HEADER, SUMMARY_CSV_HEADER] {
        assert!(sec.contains(&format!("\n  {h}\n")), "docs/cli.md: {h}");
    }
    let study = &j["studies"][0];
    for o in [
        &j,
        study,
        &study["setups"][0],
        &study["setups"][0]["methods"]["fmt"],
        &j["summary"][0],
    ] {
        for k in o.as_object().expect("an object").keys() {
            assert!(
                sec.contains(&format!("`{k}`"))
                    || CSV_HEADER.contains(k.as_str())
                    || SUMMARY_CSV_HEADER.contains(k.as_str()),
                "docs/cli.md, {head}: no key `{k}`"
            );
        }
    }
    let svg = std::fs::read_to_string(d1.join("multiplex.svg")).unwrap();
    cpistack::stacks::xml_well_formed(&svg).unwrap();
    // a line per method, basis and count in the row of means and in the
    // row of the largest; a point per slice length on each
    for kind in ["mean", "max"] {
        assert_eq!(
            svg.matches(&format!("<polyline class=\"{kind} ")).count(),
            3 * 2 * 3
        );
        assert_eq!(
            svg.matches(&format!("<circle class=\"{kind} ")).count(),
            3 * 2 * 3 * 2
        );
    }
    // the page: the chart, a row per summary row with its numbers, a row per study
    let page = std::fs::read_to_string(d1.join("index.html")).unwrap();
    assert!(page.contains("<object data=\"multiplex.svg\""));
    for x in &one.summary {
        let row = format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td>\
             <td>{:.2}</td><td>{:.2}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:.1}</td>\
             <td>{:.1}</td></tr>",
            x.basis.name(),
            x.slice,
            x.counters,
            x.order,
            x.method,
            x.full_error_pp,
            x.sampling_mean_pp,
            x.sampling_max_pp,
            x.sampling_max_study,
            x.error_mean_pp,
            x.error_max_pp,
            x.rel_mean_pct,
            x.rel_max_pct
        );
        assert!(page.contains(&row), "{row}");
    }
    for x in &one.studies {
        assert!(page.contains(&format!("<tr><td>{}</td><td>{}</td>", x.name, x.cycles)));
    }
    let text = multiplex::text(&one);
    assert!(text.contains("\nworkloads (2): fpmix, chase\n"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains(" | ")).count(),
        1 + setups
    );
}

#[test]
fn a_study_no_set_up_fits_is_refused() {
    let s = settings(sim::Config::default(), 3_000, 0);
    let src = [Source::workload("balanced", 1).unwrap()];
    // 9163 cycles: five slices of 2000 cycles, two of 2000 instructions
    let e = run_multiplex(&src, &s, &plan(&[1], &[2_000], 1), 0, &|_, _| {})
        .expect_err("too few slices for eight groups");
    let msg = format!("{e:#}");
    assert!(
        msg.contains("balanced: no set-up can be measured")
            && msg.contains(
                "slices of 2000 cycles with 1 counter: 5 slices, fewer than the 8 groups; slices of 2000 instructions with 1 counter: 2 slices"
            ),
        "{msg}"
    );
}
