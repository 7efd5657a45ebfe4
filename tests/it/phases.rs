//! CPI stacks over time (`cpistack::phases`): the intervals add up to the
//! whole-run study of `cpistack stacks`, narrow global counters are unwrapped
//! between reads as software does, and the outputs are complete and the same
//! however many threads ran them.

use cpistack::phases::{self, run_phases, Phases, COMPARED, CSV_HEADER, METHODS};
use cpistack::stacks::{run_study, Settings, Source, NCOMP};

use std::collections::BTreeMap;

use crate::scratch::Scratch;

fn settings(cfg: sim::Config, instructions: u64, warmup: u64) -> Settings {
    Settings {
        cfg,
        instructions,
        warmup,
    }
}

fn study(name: &str, s: &Settings, interval: u64) -> Phases {
    let src = Source::workload(name, 1).unwrap();
    run_phases(&src, s, interval, 0).unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

/// Every method's intervals sum to its whole-run stack, which is the stack
/// `cpistack stacks` builds from the same runs (counters read once at the
/// end); each interval's stack adds up to its cycles, and the intervals tile
/// the run (the last one short when the run is not a multiple).
#[test]
fn the_intervals_add_up_to_the_whole_run_study() {
    let s = settings(sim::Config::default(), 30_000, 5_000);
    for name in ["mlp", "icache", "branchy", "longlat"] {
        let p = study(name, &s, 4_000);
        let whole = run_study(&[Source::workload(name, 1).unwrap()], &s, 0, &|_, _| {})
            .expect("stacks runs");
        let st = &whole.studies[0];
        assert_eq!(p.cycles, st.cycles, "{name}");
        assert_eq!(p.intervals.len(), 8, "{name}: 7 of 4000 and one of 2000");
        let mut at = 0;
        let mut cycles = 0;
        for (k, iv) in p.intervals.iter().enumerate() {
            assert_eq!(iv.first_instruction, at, "{name} #{k}");
            let want = if k == 7 { 2_000 } else { 4_000 };
            assert_eq!(iv.instructions, want, "{name} #{k}");
            at += iv.instructions;
            cycles += iv.cycles;
            for m in METHODS {
                let sum: i64 = iv.stacks[m].iter().sum();
                assert_eq!(
                    sum, iv.cycles as i64,
                    "{name} #{k} {m}: adds up to the cycles"
                );
            }
            assert_eq!(iv.errors_pp.len(), COMPARED.len());
        }
        assert_eq!((at, cycles), (st.instructions, st.cycles), "{name}");
        for m in METHODS {
            assert_eq!(
                p.whole[m], st.stacks[m],
                "{name} {m}: the sum of the intervals"
            );
            let mut sum = [0i64; NCOMP];
            for iv in &p.intervals {
                for (a, b) in sum.iter_mut().zip(&iv.stacks[m]) {
                    *a += b;
                }
            }
            assert_eq!(sum, p.whole[m], "{name} {m}");
        }
        for m in COMPARED {
            let e = &p.summary[m];
            assert_eq!(e.whole_run_pp, st.errors_pp[m], "{name} {m}");
            assert!(
                e.median_pp <= e.p90_pp && e.p90_pp <= e.max_pp,
                "{name} {m}: {e:?}"
            );
            assert_eq!(
                p.intervals[e.max_interval].errors_pp[m], e.max_pp,
                "{name} {m}"
            );
        }
    }
}

/// A profiler reads a counter that wrapped between two reads modulo its
/// width: 11-bit global counters give the same stack per interval as 48-bit
/// ones as long as no interval takes 2048 cycles, and an interval that does
/// is refused, naming it and the key.
#[test]
fn narrow_global_counters_are_unwrapped_between_reads() {
    let wide = settings(sim::Config::default(), 40_000, 5_000);
    let mut cfg = sim::Config::default();
    cfg.set("unit.global_bits=11").unwrap();
    let narrow = settings(cfg, 40_000, 5_000);
    let a = study("balanced", &wide, 2_000);
    let b = study("balanced", &narrow, 2_000);
    // the run wraps the 12-bit counters several times
    assert!(a.cycles > 4 << 11, "{} cycles", a.cycles);
    assert!(a.intervals.iter().all(|iv| iv.cycles < 1 << 11));
    for (k, (x, y)) in a.intervals.iter().zip(&b.intervals).enumerate() {
        assert_eq!(x.stacks, y.stacks, "interval {k}");
    }
    assert_eq!(a.whole, b.whole);
    // mlp's intervals of 2000 instructions take more than 2048 cycles
    let src = Source::workload("mlp", 1).unwrap();
    let e = run_phases(&src, &narrow, 2_000, 0).expect_err("an interval too long to unwrap");
    let msg = format!("{e:#}");
    assert!(
        msg.contains("mlp: interval 0 (instructions 0 to 2000) took")
            && msg.contains("unit.global_bits = 11")
            && msg.contains("shorter --interval"),
        "{msg}"
    );
}

#[test]
fn an_interval_the_run_cannot_be_cut_into_is_refused() {
    let e = |n, i| {
        phases::check_interval(n, i)
            .expect_err("refused")
            .to_string()
    };
    assert!(e(100_000, 999).contains("at least 1000"));
    assert!(e(100_000, 100_001).contains("longer than the run"));
    assert!(e(3_000_000, 1_000).contains("3000 intervals, more than 2000"));
    phases::check_interval(100_000, 100_000).expect("one interval");
    phases::check_interval(2_000_000, 1_000).expect("2000 intervals");
    // run_phases checks it too (a library caller gets the same error)
    let s = settings(sim::Config::default(), 10_000, 0);
    let src = Source::workload("balanced", 1).unwrap();
    assert!(run_phases(&src, &s, 500, 0).is_err());
}

/// The three files: a CSV row per interval and method with every column, a
/// JSON object with the study, an SVG that parses; the same bytes from one
/// thread as from several.
#[test]
fn outputs_are_complete_well_formed_and_the_same_on_any_number_of_threads() {
    let s = settings(sim::Config::default(), 20_000, 2_000);
    let src = Source::workload("fpmix", 1).unwrap();
    let one = run_phases(&src, &s, 5_000, 1).unwrap();
    let many = run_phases(&src, &s, 5_000, 3).unwrap();
    let (d1, d2) = (Scratch::new("phases-1"), Scratch::new("phases-3"));
    phases::write_all(&one, &d1).unwrap();
    phases::write_all(&many, &d2).unwrap();
    for f in phases::OUTPUT_FILES {
        let a = std::fs::read(d1.join(f)).unwrap();
        assert_eq!(a, std::fs::read(d2.join(f)).unwrap(), "{f}");
    }
    assert_eq!(phases::text(&one), phases::text(&many));
    let csv = std::fs::read_to_string(d1.join("phases.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], CSV_HEADER);
    assert_eq!(lines.len(), 1 + 4 * METHODS.len());
    let cols = CSV_HEADER.split(',').count();
    for l in &lines[1..] {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), cols, "{l}");
        assert_eq!(&f[..2], ["fpmix", "workload"], "{l}");
        // the error column is empty for the reference only
        assert_eq!(f[cols - 1].is_empty(), f[7] == "reference", "{l}");
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d1.join("phases.json")).unwrap()).unwrap();
    assert_eq!(j["intervals"].as_array().unwrap().len(), 4);
    assert_eq!(j["interval"], 5_000);
    for m in COMPARED {
        assert!(j["summary"][m]["max_pp"].is_number(), "{m}");
    }
    let svg = std::fs::read_to_string(d1.join("phases.svg")).unwrap();
    cpistack::stacks::xml_well_formed(&svg).unwrap();
    // one bar segment per non-zero component of each of the three stacks drawn
    let segments: usize = one
        .intervals
        .iter()
        .map(|iv| {
            ["reference", "fmt", "sfmt"]
                .iter()
                .map(|m| iv.stacks[*m].iter().filter(|&&v| v != 0).count())
                .sum::<usize>()
        })
        .sum();
    assert_eq!(
        svg.matches("<rect x=").count(),
        segments + NCOMP + COMPARED.len()
    );
    let page = std::fs::read_to_string(d1.join("index.html")).unwrap();
    assert!(page.contains("<object data=\"phases.svg\""));
    for m in COMPARED {
        let e = &one.summary[m];
        let row = format!(
            "<tr><td>{m}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td></tr>",
            e.whole_run_pp, e.mean_pp, e.median_pp, e.p90_pp, e.max_pp, e.max_interval
        );
        assert!(page.contains(&row), "{row}");
    }
    // every interval and method in the folded table, each with its nine shares
    let cell = |m: &str| format!("<td style=\"text-align:left\">{m}</td>");
    assert_eq!(page.matches(&cell("reference")).count(), 4);
    assert_eq!(page.matches(&cell("sfmt")).count(), 4);
    // the first interval's rows: its four cells over the five methods, then
    // each method's nine shares of its cycles and its error
    let iv = &one.intervals[0];
    let mut want = format!(
        "<tr><td rowspan=\"5\">0</td><td rowspan=\"5\">0</td><td rowspan=\"5\">{}</td><td rowspan=\"5\">{:.3}</td>",
        iv.cycles,
        iv.cycles as f64 / iv.instructions as f64
    );
    for (i, m) in METHODS.iter().enumerate() {
        if i > 0 {
            want.push_str("<tr>");
        }
        want.push_str(&cell(m));
        for v in iv.stacks[*m] {
            want.push_str(&format!(
                "<td>{:.1}</td>",
                100.0 * v as f64 / iv.cycles as f64
            ));
        }
        match iv.errors_pp.get(*m) {
            Some(e) => want.push_str(&format!("<td>{e:.2}</td></tr>\n")),
            None => want.push_str("<td></td></tr>\n"),
        }
    }
    assert!(page.contains(&want), "{want}");
    assert_eq!(
        page.matches("</td></tr>").count(),
        COMPARED.len() + 4 * METHODS.len()
    );
    assert!(page.ends_with("</body></html>\n"));
    let t = phases::text(&one);
    assert!(t.starts_with("phases of workload fpmix (seed 1): 20000 instructions after 2000 of warm-up, 4 intervals of 5000\n"), "{t}");
    for m in COMPARED {
        assert!(t.lines().any(|l| l.starts_with(m)), "{m}: {t}");
    }
}

/// `phases.svg` read back as a person reads it: each bar of the three stack
/// panels measured on its panel's own axis is the interval's component in
/// CPI, in the legend's colour for it, in its interval's column; each point
/// of the error panel is the method's error over the interval, in the
/// legend's colour for the method.
#[test]
fn every_bar_and_point_of_the_phase_chart_is_the_studys() {
    let s = settings(sim::Config::default(), 24_000, 4_000);
    // a workload with negative reference components in some intervals
    // (drawn below the axis) and one with long misses
    for name in ["branchy", "mlp"] {
        let p = study(name, &s, 3_000);
        check_phase_chart(&phases::svg(&p), &p);
    }
}

fn check_phase_chart(svg: &str, p: &Phases) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed");
    let num = |n: roxmltree::Node, a: &str| -> f64 { n.attribute(a).unwrap().parse().unwrap() };
    // grid lines with their tick label: (y, value); a panel's ticks rise
    let mut panels: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut legend: BTreeMap<String, String> = BTreeMap::new();
    let mut bars = Vec::new();
    let mut points = Vec::new();
    for n in doc.root_element().children().filter(|n| n.is_element()) {
        let next_text = || {
            n.next_siblings()
                .skip(1)
                .find(|x| x.is_element())
                .filter(|x| x.has_tag_name("text"))
                .and_then(|x| x.text())
                .map(str::to_string)
        };
        match n.tag_name().name() {
            "line" if n.attribute("stroke") == Some("#e4e4e4") => {
                let v: f64 = next_text().unwrap().parse().unwrap();
                let y = num(n, "y1");
                match panels.last_mut() {
                    Some(t) if t.last().unwrap().1 < v => t.push((y, v)),
                    _ => panels.push(vec![(y, v)]),
                }
            }
            "rect" if n.attribute("width") == Some("12") => {
                legend.insert(next_text().unwrap(), n.attribute("fill").unwrap().into());
            }
            "rect" if n.has_children() => {
                let title = n.first_element_child().unwrap().text().unwrap().to_string();
                bars.push((
                    num(n, "x"),
                    num(n, "y"),
                    num(n, "width"),
                    num(n, "height"),
                    n.attribute("fill").unwrap().to_string(),
                    title,
                ));
            }
            "circle" => points.push((
                num(n, "cx"),
                num(n, "cy"),
                n.attribute("fill").unwrap().to_string(),
            )),
            _ => {}
        }
    }
    assert_eq!(panels.len(), 4, "three stack panels and the error panel");
    // pixels per unit and the pixel of 0, from a panel's first and last tick
    let axis = |t: &[(f64, f64)]| {
        let ((y0, v0), (y1, v1)) = (t[0], t[t.len() - 1]);
        let px = (y0 - y1) / (v1 - v0);
        (px, y0 + v0 * px)
    };
    let left = 64.0;
    let n = p.intervals.len() as f64;
    let mut drawn = 0;
    for (j, m) in ["reference", "fmt", "sfmt"].into_iter().enumerate() {
        let (px, zero) = axis(&panels[j]);
        let (top, bottom) = (panels[j].last().unwrap().0, panels[j][0].0);
        let bw = bars[0].2;
        for (k, iv) in p.intervals.iter().enumerate() {
            let mine: Vec<_> = bars
                .iter()
                .filter(|b| b.1 >= top - 0.5 && b.1 + b.3 <= bottom + 0.5)
                .filter(|b| ((b.0 - left) / bw).round() as usize == k)
                .collect();
            let want: Vec<usize> = (0..NCOMP).filter(|&c| iv.stacks[m][c] != 0).collect();
            assert_eq!(mine.len(), want.len(), "{} {m} #{k}", p.name);
            // drawn in component order, positives up from 0, negatives down
            let (mut up, mut down) = (zero, zero);
            for (b, &c) in mine.iter().zip(&want) {
                let cpi = iv.stacks[m][c] as f64 / iv.instructions as f64;
                let comp = cpistack::stacks::COMPONENTS[c];
                assert!(
                    b.5.starts_with(&format!("#{k} {comp}: ")),
                    "{m} #{k}: {}",
                    b.5
                );
                assert_eq!(b.4, legend[comp], "{m} #{k} {comp}: colour");
                assert!(
                    (b.3 / px - cpi.abs()).abs() < 0.02 / px + 1e-9,
                    "{m} #{k} {comp}: {} px for {cpi}",
                    b.3
                );
                if cpi > 0.0 {
                    assert!(
                        (b.1 + b.3 - up).abs() < 0.02,
                        "{m} #{k} {comp}: stacked on the one below"
                    );
                    up = b.1;
                } else {
                    assert!(
                        (b.1 - down).abs() < 0.02,
                        "{m} #{k} {comp}: hangs from the one above"
                    );
                    down = b.1 + b.3;
                }
                assert!((b.2 - 820.0 / n).abs() < 0.01);
            }
            drawn += mine.len();
        }
    }
    assert_eq!(drawn, bars.len(), "no bar outside the panels");
    let (px, zero) = axis(&panels[3]);
    assert_eq!(points.len(), p.intervals.len() * COMPARED.len());
    for (i, m) in COMPARED.iter().enumerate() {
        for (k, iv) in p.intervals.iter().enumerate() {
            let (x, y, fill) = &points[i * p.intervals.len() + k];
            assert!(
                (x - (left + (k as f64 + 0.5) * 820.0 / n)).abs() < 0.06,
                "{m} #{k}"
            );
            assert!(
                ((zero - y) / px - iv.errors_pp[*m]).abs() < 0.06 / px + 1e-9,
                "{m} #{k}: {y}"
            );
            assert_eq!(fill, &legend[*m], "{m}");
        }
    }
}

/// Each interval's cycles, taken independently of the study's consumers:
/// the core stepped by hand and its counted cycles read when the
/// `(k+1)·N`-th measured instruction has committed. For the real run (the
/// interval's `cycles`) and the run with every structure ideal (the
/// reference's base), on run lengths whose remainder is a whole interval,
/// a short one and one below the retire width (which joins the last).
#[test]
fn each_interval_ends_in_the_cycle_its_boundary_instruction_commits() {
    for (name, instructions, interval, want) in [
        ("branchy", 10_001, 2_500, vec![2_500, 2_500, 2_500, 2_501]),
        ("icache", 10_002, 5_000, vec![5_000, 5_002]),
        ("mlp", 7_500, 3_000, vec![3_000, 3_000, 1_500]),
        ("chase", 9_000, 3_000, vec![3_000, 3_000, 3_000]),
    ] {
        assert_eq!(
            phases::intervals_of(instructions, interval),
            want.len() as u64
        );
        let s = settings(sim::Config::default(), instructions, 2_000);
        let p = study(name, &s, interval);
        let got: Vec<u64> = p.intervals.iter().map(|iv| iv.instructions).collect();
        assert_eq!(got, want, "{name}");
        let mut ideal = sim::Config::default();
        for k in [
            "bpred", "l1i", "l2i", "itlb", "l1d", "l2d", "dtlb", "longlat",
        ] {
            ideal.set(&format!("ideal.{k}=true")).unwrap();
        }
        let by_hand = |cfg: &sim::Config| -> Vec<u64> {
            let spec = sim::workloads::by_name(name).unwrap();
            let mut core = sim::Core::new(cfg, sim::workloads::Workload::new(&spec, 1)).unwrap();
            core.set_warmup(2_000);
            core.set_limit(instructions);
            let mut ends = Vec::new();
            let mut at = 0;
            for n in &want {
                at += n;
                while core.counted_retired() < at {
                    core.step().unwrap();
                }
                ends.push(core.stats().cycles);
            }
            let mut prev = 0;
            ends.iter()
                .map(|&e| {
                    let d = e - prev;
                    prev = e;
                    d
                })
                .collect()
        };
        let real: Vec<u64> = p.intervals.iter().map(|iv| iv.cycles).collect();
        assert_eq!(
            real,
            by_hand(&sim::Config::default()),
            "{name}: the real run"
        );
        let base: Vec<u64> = p
            .intervals
            .iter()
            .map(|iv| iv.stacks["reference"][0] as u64)
            .collect();
        assert_eq!(base, by_hand(&ideal), "{name}: every structure ideal");
    }
}
