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
                assert_eq!(v.first_stack.iter().sum::<i64>(), x.cycles as i64);
                assert!(v.sampling_mean_pp <= v.sampling_max_pp);
            }
        }
        // eight groups sample: some set-up of one counter moves FMT's stack
        assert!(
            x.setups
                .iter()
                .any(|u| u.counters == 1 && u.methods["fmt"].sampling_max_pp > 0.0),
            "{}",
            x.name
        );
    }
    // the summary: one row per set-up and method, each over the three
    let rows: Vec<_> = r.summary.iter().filter(|x| x.set == "workloads").collect();
    assert_eq!(rows.len(), 16 * METHODS.len());
    assert!(r.summary.iter().all(|x| x.studies == 3));
    for x in &rows {
        let per: Vec<f64> = r
            .studies
            .iter()
            .map(|st| {
                st.setups
                    .iter()
                    .find(|u| {
                        (u.basis, u.slice, u.counters, &u.order)
                            == (x.basis, x.slice, x.counters, &x.order)
                    })
                    .unwrap()
                    .methods[&x.method]
                    .sampling_max_pp
            })
            .collect();
        assert_eq!(x.sampling_max_pp, per.iter().copied().fold(0.0, f64::max));
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
                let mut unit = hw::Unit::new(cfg.unit_params().with_variant(Variant::Fmt)).unwrap();
                let mut prev = unit.view().counters;
                let mut cycles: Vec<(usize, [u64; 8])> = Vec::new();
                let (mut n, mut retired, mut slice_of) = (0u64, 0u64, 0usize);
                while core.counted_retired() < instructions {
                    let ev = *core.step().unwrap();
                    unit.step(&ev);
                    let now = unit.view().counters;
                    if ev.count_enable {
                        n += 1;
                        retired += ev.retired as u64;
                        let mut d = [0u64; 8];
                        for (k, c) in Counter::COMPONENTS.iter().enumerate() {
                            d[k] = now.get(*c) - prev.get(*c);
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
                let mut counted = vec![0u64; groups.len()];
                let mut raw = [0u64; 8];
                for (k, d) in &cycles {
                    let q = active[*k];
                    counted[q] += 1;
                    for &c in &groups[q] {
                        raw[c - 1] += d[c - 1];
                    }
                }
                let mut want = [0i64; NCOMP];
                for (q, g) in groups.iter().enumerate() {
                    for &c in g {
                        want[c] = (raw[c - 1] as f64 * n as f64 / counted[q] as f64).round() as i64;
                    }
                }
                want[0] = n as i64 - want[1..].iter().sum::<i64>();
                assert_eq!(
                    u.methods["fmt"].first_stack, want,
                    "{name} {basis:?} {order}"
                );
            }
        }
    }
}

/// 11-bit global counters, wrapped many times over the run, give the same
/// study as 48-bit ones when no slice moves a counter by 2048; 9-bit ones
/// cannot count a slice of 1000 cycles twice over, and the study says which.
#[test]
fn narrow_global_counters_are_unwrapped_between_slice_reads() {
    let wide = settings(sim::Config::default(), 40_000, 5_000);
    let mut cfg = sim::Config::default();
    cfg.set("unit.global_bits=11").unwrap();
    let narrow = settings(cfg.clone(), 40_000, 5_000);
    let p = plan(&[1, 2], &[1_000], 3);
    let a = report(&["balanced"], &wide, &p, 0);
    let b = report(&["balanced"], &narrow, &p, 0);
    assert!(a.studies[0].cycles > 4 << 11);
    let json = |r: &Report| serde_json::to_value(&r.studies).unwrap();
    assert_eq!(json(&a), json(&b));
    cfg.set("unit.global_bits=9").unwrap();
    let tiny = settings(cfg, 40_000, 5_000);
    let src = [Source::workload("mlp", 1).unwrap()];
    let e = run_multiplex(&src, &tiny, &plan(&[1], &[2_000], 1), 0, &|_, _| {})
        .expect_err("slices too long for 9 bits");
    let msg = format!("{e:#}");
    assert!(
        msg.contains("mlp: slice 0 of 2000 cycles: fmt: its cycles counter moved by")
            && msg.contains("wider unit.global_bits"),
        "{msg}"
    );
}

/// The four files: a CSV row per study, set-up and method with every
/// column, a summary CSV, a JSON report, an SVG that parses and draws a
/// line per count and basis and a circle per point; the same bytes from
/// one thread as from several.
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
        msg.contains("balanced: no set-up has a whole round of slices")
            && msg.contains(
                "slices of 2000 cycles with 1 counter: 5 slices, fewer than the 8 groups; slices of 2000 instructions with 1 counter: 2 slices"
            ),
        "{msg}"
    );
}
