//! Writing a [`Report`]: CSV, JSON, SVG charts, an HTML page and a text table.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use super::{Comp, Report, Study, COMPARED, COMPONENTS, METHODS, NCOMP};

fn write(dir: &Path, name: &str, text: &str) -> Result<()> {
    let p = dir.join(name);
    std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
}

/// Renders one output file's text.
type Render = fn(&Report) -> Result<String>;

/// Every output file and what renders it, in the order the run's last line
/// names them.
const OUTPUTS: [(&str, Render); 8] = [
    ("stacks.csv", |r| Ok(stacks_csv(r))),
    ("stacks.json", |r| {
        Ok(serde_json::to_string_pretty(r)? + "\n")
    }),
    ("stacks.svg", |r| Ok(svg::stacks(r))),
    ("errors.svg", |r| Ok(svg::errors(r))),
    ("penalties.csv", |r| Ok(penalties_csv(r))),
    ("penalties.svg", |r| Ok(svg::penalties(r))),
    ("census.csv", |r| Ok(census_csv(r))),
    ("index.html", |r| Ok(html(r))),
];

/// The files [`write_all`] writes.
pub const OUTPUT_FILES: [&str; 8] = {
    let mut names = [""; 8];
    let mut i = 0;
    while i < OUTPUTS.len() {
        names[i] = OUTPUTS[i].0;
        i += 1;
    }
    names
};

/// Write every output file into `dir` (which must exist).
pub fn write_all(r: &Report, dir: &Path) -> Result<()> {
    for (name, render) in OUTPUTS {
        write(dir, name, &render(r)?)?;
    }
    Ok(())
}

/// Columns of `stacks.csv`.
pub const STACKS_CSV_HEADER: &str =
    "workload,kind,method,component,cycles,cpi,share_pct,reference_share_pct,method_error_pp";

/// Every workload x method x component.
pub fn stacks_csv(r: &Report) -> String {
    let mut s = String::from(STACKS_CSV_HEADER);
    s.push('\n');
    for st in &r.studies {
        for m in METHODS {
            let err = st
                .errors_pp
                .get(m)
                .map(|e| format!("{e:.3}"))
                .unwrap_or_default();
            for (k, c) in COMPONENTS.iter().enumerate() {
                let comp = comp_of(k);
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{:.5},{:.3},{:.3},{}",
                    st.name,
                    st.kind,
                    m,
                    c,
                    st.stacks[m][k],
                    no_minus_zero(st.cpi_of(m, comp), 5),
                    no_minus_zero(st.share(m, comp), 3),
                    no_minus_zero(st.share("reference", comp), 3),
                    err
                );
            }
        }
    }
    s
}

/// Columns of `penalties.csv`.
pub const PENALTIES_CSV_HEADER: &str =
    "workload,kind,method,per_l1i_miss,per_mispredict,per_l2d_miss,overlap_pct";

/// Average penalty per event per method, and the overlap fraction.
pub fn penalties_csv(r: &Report) -> String {
    let mut s = String::from(PENALTIES_CSV_HEADER);
    s.push('\n');
    let f = |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_default();
    for st in &r.studies {
        for m in METHODS {
            let p = &st.penalties[m];
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{:.3}",
                st.name,
                st.kind,
                m,
                f(p.l1i),
                f(p.bpred),
                f(p.l2d),
                100.0 * st.overlap.fraction
            );
        }
    }
    s
}

/// Columns of `census.csv`.
pub const CENSUS_CSV_HEADER: &str = "workload,kind,window,class,fmt_counts_it_as,cycles,share_pct,commits,commits_per_cycle,dispatches,dispatches_per_cycle";

/// The cycle census of each study's real run (`cpistack run --census`),
/// every class; no rows for a study without one (a report from before it).
/// The class names hold commas: they are quoted.
pub fn census_csv(r: &Report) -> String {
    let mut s = String::from(CENSUS_CSV_HEADER);
    s.push('\n');
    let q = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    for st in &r.studies {
        for c in &st.census {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{:.3},{},{:.3},{},{:.3}",
                st.name,
                st.kind,
                q(&c.window),
                q(&c.what),
                q(&c.fmt),
                c.cycles,
                c.share_pct,
                c.commits,
                c.commits_per_cycle,
                c.dispatches,
                c.dispatches_per_cycle
            );
        }
    }
    s
}

/// The census section of the page: per study, FMT's base and the
/// reference's, and the parts of FMT's base the census tells apart, with
/// the commits a cycle in each against the ideal machine's. Empty when no
/// study has a census.
fn census_html(r: &Report) -> String {
    if r.studies.iter().all(|st| st.census.is_empty()) {
        return String::new();
    }
    let mut s = String::from(
        "<h2>What FMT's base is made of (cycle census)</h2>\n\
         <p>Every counted cycle of the real run in one class by the state at its start \
         (<code>cpistack run --census</code>; the classes of each workload under \
         \"Per workload\" and in <a href=\"census.csv\">census.csv</a>). FMT charges a \
         full window only while its head waits on a miss or a long operation: the \
         cycles in which a full window commits, or an open one fills behind a head \
         that waits, are base. Interval analysis assumes that they cost what the ideal \
         machine spends on the same commits; where a full window commits well below \
         the ideal run's rate (dense dependence chains behind each long event), FMT's \
         base is too large (docs/accuracy.md, eighth pass). Shares of the real run's \
         cycles, %; in brackets, commits a cycle. The rest is FMT's base less the three \
         parts before it, so that the four add up to it: the other open cycles (that \
         only commit, or do nothing), net of the cycles of any class that FMT charges \
         to a misprediction or an I-miss instead (a mispredicted branch's penalty grows \
         in open cycles, dispatching ones included); it can be negative.</p>\n\
         <table><tr><th>workload</th><th>FMT base</th><th>reference base</th>\
         <th>full window commits</th><th>fill behind a waiting head</th>\
         <th>open, head not waiting, dispatches</th><th>the rest, net</th>\
         <th>ideal run's commits a cycle</th></tr>\n",
    );
    for st in &r.studies {
        if st.census.is_empty() {
            continue;
        }
        let pct = |c: f64| 100.0 * c / st.cycles.max(1) as f64;
        let rate = |(c, n): (u64, u64)| {
            if c > 0 {
                format!(" ({:.2})", n as f64 / c as f64)
            } else {
                String::new()
            }
        };
        let [full, fill, open] = crate::census::base_parts(&st.census);
        let base = |m: &str| st.stacks.get(m).map_or(0, |v| v[Comp::Base as usize]);
        let ideal = base("reference");
        let rest = base("fmt") as f64 - (full.0 + fill.0 + open.0) as f64;
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}{}</td><td>{:.1}</td><td>{:.1}{}</td><td>{:.1}</td><td>{}</td></tr>",
            esc(&st.name),
            pct(base("fmt") as f64),
            pct(ideal as f64),
            pct(full.0 as f64),
            rate(full),
            pct(fill.0 as f64),
            pct(open.0 as f64),
            rate(open),
            pct(rest),
            if ideal > 0 {
                format!("{:.2}", st.instructions as f64 / ideal as f64)
            } else {
                "-".into()
            }
        );
    }
    s.push_str("</table>\n");
    s
}

/// A study's census as a table (empty without one).
fn census_table(st: &Study) -> String {
    if st.census.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<table><tr><th>window</th><th>cycle census class</th><th>cycles</th><th>share</th>\
         <th>commits a cycle</th><th>dispatches a cycle</th><th>FMT counts it as</th></tr>\n",
    );
    for c in &st.census {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td></tr>",
            esc(&c.window),
            esc(&c.what),
            c.cycles,
            c.share_pct,
            c.commits_per_cycle,
            c.dispatches_per_cycle,
            esc(&c.fmt)
        );
    }
    s.push_str("</table>\n");
    s
}

fn comp_of(k: usize) -> Comp {
    [
        Comp::Base,
        Comp::L1i,
        Comp::L2i,
        Comp::Itlb,
        Comp::Bpred,
        Comp::L1d,
        Comp::L2d,
        Comp::Dtlb,
        Comp::Longlat,
    ][k]
}

/// Short column labels of the methods in tables.
pub(super) fn short(m: &str) -> &'static str {
    match m {
        "reference" => "ref",
        "reference_inverse" => "inverse",
        "reference_bpred_last" => "bp-last",
        "fmt" => "fmt",
        "sfmt" => "sfmt",
        "naive" => "naive",
        "naive_nonspec" => "nonspec",
        "power5" => "power5",
        _ => "?",
    }
}

/// `, workload seed S` (the seeds of the synthetic workloads, each once, in
/// the order met), or nothing when the report has only traces.
fn seeds(r: &Report) -> String {
    let mut seeds: Vec<u64> = Vec::new();
    for x in r.studies.iter().filter_map(|st| st.seed) {
        if !seeds.contains(&x) {
            seeds.push(x);
        }
    }
    let list: Vec<String> = seeds.iter().map(u64::to_string).collect();
    match list.len() {
        0 => String::new(),
        1 => format!(", workload seed {}", list[0]),
        _ => format!(", workload seeds {}", list.join(", ")),
    }
}

/// The machine studied, as the `--set`s that make it from the default
/// (the paper's Table 2 machine): empty for the default.
pub fn machine_changes(cfg: &sim::Config) -> Vec<String> {
    cfg.differences(&sim::Config::default())
}

/// `; LABEL: the default with KEY=VALUE, ...` for a machine other than the
/// default, else empty (the text tables' first line).
pub fn machine_suffix(cfg: &sim::Config, label: &str) -> String {
    let d = machine_changes(cfg);
    if d.is_empty() {
        String::new()
    } else {
        format!("; {label}: the default with {}", d.join(", "))
    }
}

/// The machine in a sentence for a page: the default (the paper's Table 2),
/// or the default with each changed key.
pub fn machine_html(cfg: &sim::Config) -> String {
    let d = machine_changes(cfg);
    if d.is_empty() {
        "the default machine (the paper's Table 2: <code>cpistack config --print</code>)".into()
    } else {
        let keys: Vec<String> = d
            .iter()
            .map(|k| format!("<code>{}</code>", esc(k)))
            .collect();
        format!(
            "the default machine (the paper's Table 2) with {}",
            keys.join(", ")
        )
    }
}

/// `x`, or 0 when it rounds to zero at `decimals` (a tiny negative
/// component, a cycle or two, would print as `-0.0`).
fn no_minus_zero(x: f64, decimals: i32) -> f64 {
    if (x * 10f64.powi(decimals)).round() == 0.0 {
        0.0
    } else {
        x
    }
}

/// Width of the name column of the text tables: the longest name, at least 24.
fn name_width(r: &Report) -> usize {
    r.studies
        .iter()
        .map(|st| st.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(24)
}

/// The text table: per workload the reference stack (shares), then each method's
/// error; the summaries.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    let w = name_width(r);
    let _ = writeln!(
        s,
        "CPI stacks: {} instructions after {} of warm-up per run{}{}; shares of the real run's cycles (%), reference = standard order",
        r.instructions,
        r.warmup,
        seeds(r),
        machine_suffix(&r.config, "machine")
    );
    let _ = write!(s, "{:<w$} {:>6} ", "workload", "CPI");
    for c in COMPONENTS {
        let _ = write!(s, "{c:>8}");
    }
    let _ = writeln!(s, " {:>6}", "ovl%");
    for st in &r.studies {
        let _ = write!(s, "{:<w$} {:>6.3} ", st.name, st.cpi);
        for k in 0..NCOMP {
            let _ = write!(
                s,
                "{:>8.1}",
                no_minus_zero(st.share("reference", comp_of(k)), 1)
            );
        }
        let _ = writeln!(s, " {:>6.2}", 100.0 * st.overlap.fraction);
    }
    let _ = writeln!(
        s,
        "\nError: max over components of |share - reference share|, percentage points"
    );
    let _ = write!(s, "{:<w$}", "workload");
    for m in COMPARED {
        let _ = write!(s, " {:>8}", short(m));
    }
    s.push('\n');
    for st in &r.studies {
        let _ = write!(s, "{:<w$}", st.name);
        for m in COMPARED {
            let _ = write!(s, " {:>8.2}", st.errors_pp[m]);
        }
        s.push('\n');
    }
    for (label, sum) in [
        ("synthetic", &r.summary_workloads),
        ("traces", &r.summary_traces),
        ("all", &r.summary),
    ] {
        if sum.is_empty()
            || (label == "all" && (r.summary_traces.is_empty() || r.summary_workloads.is_empty()))
        {
            continue;
        }
        for (what, avg) in [("avg", true), ("max", false)] {
            let _ = write!(s, "{:<w$}", format!("{what} ({label})"));
            for m in COMPARED {
                let v = &sum[m];
                let _ = write!(
                    s,
                    " {:>8.2}",
                    if avg { v.avg_error_pp } else { v.max_error_pp }
                );
            }
            s.push('\n');
        }
    }
    if let Some(w) = saturation_warning(r) {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}

/// The look of a warning paragraph on a page, inline, so that a page
/// without a warning is byte for byte what it was before warnings existed
/// (`--check-only` re-renders older reports).
pub(crate) const WARN_STYLE: &str =
    "style=\"background:#fff3cd;border:1px solid #e0b000;padding:0.4em\"";

/// The warning that some stacks come from saturated local counters, or
/// `None`: which studies (`NAME (fmt, sfmt)`), and the width that was too
/// narrow.
pub fn saturation_warning(r: &Report) -> Option<String> {
    let sat: Vec<String> = r
        .studies
        .iter()
        .filter(|st| !st.saturated.is_empty())
        .map(|st| format!("{} ({})", st.name, st.saturated.join(", ")))
        .collect();
    (!sat.is_empty()).then(|| {
        format!(
            "a local counter saturated at unit.local_bits = {} bits, so these stacks \
             understate the frontend penalties (l1i, l2i, itlb, bpred) and their errors \
             include it: {}",
            r.config.unit.local_bits,
            sat.join("; ")
        )
    })
}

/// `stacks --detail`: per study, each method's stack as shares of the real
/// run's cycles (one row a method, the reference's three orders first) and
/// the method's error against the standard order, the text form of the
/// table under each study's chart in `index.html`; then, for FMT's `l1d`
/// and `l2d` cycles, why the head load waited (`stats.head_waits`).
pub fn detail_text(r: &Report) -> String {
    let mut s = String::new();
    for st in &r.studies {
        let _ = writeln!(
            s,
            "\n{} ({}, CPI {:.3}, {} cycles): shares of the cycles (%)",
            st.name, st.kind, st.cpi, st.cycles
        );
        let _ = write!(s, "{:<8}", "method");
        for c in COMPONENTS {
            let _ = write!(s, "{c:>8}");
        }
        let _ = writeln!(s, " {:>8}", "error");
        for m in METHODS {
            let _ = write!(s, "{:<8}", short(m));
            for k in 0..NCOMP {
                let _ = write!(s, "{:>8.1}", no_minus_zero(st.share(m, comp_of(k)), 1));
            }
            let e = (st.errors_pp.get(m)).map_or_else(|| "-".into(), |e| format!("{e:.2}"));
            let _ = writeln!(s, " {e:>8}");
        }
        for line in head_wait_lines(st) {
            let _ = writeln!(s, "{line}");
        }
    }
    s
}

/// For each of FMT's `l1d` and `l2d` that has cycles, why the ROB head load
/// waited in them, as shares of them (`stats.head_waits`): the lines of
/// `stacks --detail` and the sentences under each study's tables.
pub fn head_wait_lines(st: &Study) -> Vec<String> {
    let hw = &st.stats.head_waits;
    [("l1d", &hw.l1d), ("l2d", &hw.l2d)]
        .into_iter()
        .filter(|(_, w)| w.total() > 0)
        .map(|(level, w)| {
            let pct = |n: u64| 100.0 * n as f64 / w.total() as f64;
            format!(
                "Why FMT's {level} head waited: its own miss {:.1} %, a pending hit {:.1} %, a late prefetch {:.1} %, no MSHR free {:.1} %",
                pct(w.miss),
                pct(w.pending_hit),
                pct(w.late_prefetch),
                pct(w.mshr_wait)
            )
        })
        .collect()
}

fn study_table(st: &Study) -> String {
    let mut s = String::new();
    let _ = write!(s, "<table><tr><th>method</th>");
    for c in COMPONENTS {
        let _ = write!(s, "<th>{c}</th>");
    }
    let _ = write!(s, "<th>error (pp)</th></tr>");
    for m in METHODS {
        let _ = write!(s, "<tr><td>{m}</td>");
        for k in 0..NCOMP {
            let _ = write!(
                s,
                "<td>{:.1}</td>",
                no_minus_zero(st.share(m, comp_of(k)), 1)
            );
        }
        let e = st
            .errors_pp
            .get(m)
            .map(|e| format!("{e:.2}"))
            .unwrap_or_else(|| "-".into());
        let _ = write!(s, "<td>{e}</td></tr>");
    }
    s.push_str("</table>");
    s
}

/// `s` as text in HTML or SVG: `&`, `<`, `>` and `"` as entities (a study is
/// named after its trace file, whose name may hold any of them).
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The head of a report page titled `cpistack: <title>`, with the style
/// every page shares, up to the opening of its body.
pub(crate) fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>cpistack: {}</title><style>\
         body{{font-family:sans-serif;max-width:1300px;margin:1em auto;padding:0 1em;color:#222}}\
         table{{border-collapse:collapse;margin:0.5em 0 1.5em 0;font-size:13px}}\
         td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}\
         th{{background:#f0f0f0}} td:first-child{{text-align:left}}\
         img,object{{max-width:100%;border:1px solid #ddd;margin:0.5em 0;display:block}}\
         .wide{{overflow-x:auto}} .wide img,.wide object{{max-width:none}}\
         details{{margin:0.3em 0}}</style></head><body>\n",
        esc(title)
    )
}

/// Which workload set a report is: the whole suite (then its page points
/// at the limit workloads, which `make paper` writes to `limits/`), the
/// limit workloads (then its page says why they are apart), or neither.
fn workload_set(r: &Report) -> Option<&'static str> {
    let names: Vec<&str> = r.studies.iter().map(|s| s.name.as_str()).collect();
    let all_of = |set: Vec<sim::workloads::Spec>| set.iter().all(|w| names.contains(&w.name));
    if all_of(sim::workloads::suite()) {
        Some("suite")
    } else if all_of(sim::workloads::limits()) {
        Some("limits")
    } else {
        None
    }
}

/// The one-page report.
pub fn html(r: &Report) -> String {
    let set = workload_set(r);
    let mut s = page_head(if set == Some("limits") {
        "CPI stacks compared: the limit workloads"
    } else {
        "CPI stacks compared"
    });
    if set == Some("limits") {
        s.push_str(
            "<h1>CPI stacks on the limit workloads: where interval analysis breaks down</h1>\n\
             <p><b>These workloads are kept out of the suite and its averages on purpose.</b> \
             Each breaks an assumption the counter architectures (and the reference) rest \
             on: <code>bigcode</code> and <code>server</code> overlap frontend misses with \
             long backend misses in many of their cycles (12-14 % in <code>make paper</code>), \
             so the reference's own orders disagree by many points (up to 35 there) and no \
             method can be close to all of them; \
             <code>dtlb_l1miss</code> chains an L1 D-miss on every D-TLB walk of one load, \
             which the reference charges to the D-TLB and FMT to the L1 D-cache. Read \
             their errors as the limits of the method (docs/accuracy.md, second pass, \
             item 6), not as its accuracy.</p>\n",
        );
    }
    let _ = writeln!(
        s,
        "{}<p>Each workload runs once with every method attached: the bit-accurate FMT and \
         sFMT counter units, the naive methods (miss counts times a fixed penalty, on all \
         paths or on the committed path only) and the IBM POWER5-style completion-stall \
         accounting. The reference (the paper's section 5.2) runs the same instruction \
         stream with every structure idealised, then makes them real one at a time \
         (long-latency units, L1 D-cache, branch predictor, L1 I, L2 I, I-TLB, L2 D, D-TLB; \
         the long-latency step is this project's, the paper's base keeps real functional \
         units; the inverse order does L2 D and D-TLB before the instruction side, and a \
         third order, ours, makes the branch predictor real last, after the long data \
         misses, the overlap the paper's two orders never move); each \
         component is the extra cycles. A method's error on a workload is the largest \
         difference, over the components, between its share of the cycles and the \
         standard-order reference's, in percentage points (docs/accuracy.md defines each \
         method and discusses what the comparison depends on). {} instructions per run \
         after {} of warm-up{}, on {}.</p>{}",
        if set == Some("limits") {
            ""
        } else {
            "<h1>CPI stacks: FMT and sFMT against the simulation reference</h1>\n"
        },
        r.instructions,
        r.warmup,
        seeds(r),
        machine_html(&r.config),
        if set == Some("suite") {
            "\n<p>The suite's workloads follow the assumptions of interval analysis. \
             Three more, the <a href=\"limits/index.html\">limit workloads</a> (written \
             beside this page by <code>make paper</code>; \
             <code>cpistack stacks --workloads limits</code>), break them on purpose \
             (heavily overlapped frontend and long backend misses, chained miss types on \
             one load) and are kept out of these averages: their errors, far larger, \
             measure where the method stops, and the reference's own orders disagree \
             there by many points.</p>"
        } else {
            ""
        }
    );
    if let Some(w) = saturation_warning(r) {
        let _ = writeln!(s, "<p {WARN_STYLE}><b>Warning:</b> {}</p>", esc(&w));
    }
    s.push_str("<h2>Summary: error against the standard-order reference, percentage points (avg / max over the workloads)</h2>\n<table><tr><th>set</th>");
    for m in COMPARED {
        let _ = write!(s, "<th>{m}</th>");
    }
    s.push_str("</tr>\n");
    let workloads = if set == Some("limits") {
        "limit workloads"
    } else {
        "synthetic workloads"
    };
    for (label, sum) in [
        (workloads, &r.summary_workloads),
        ("traces", &r.summary_traces),
        ("all", &r.summary),
    ] {
        if sum.is_empty()
            || (label == "all" && (r.summary_traces.is_empty() || r.summary_workloads.is_empty()))
        {
            continue;
        }
        let _ = write!(s, "<tr><td>{label}</td>");
        for m in COMPARED {
            let v = &sum[m];
            // three decimals: a target such as 2.5 is not met by 2.503
            let _ = write!(s, "<td>{:.3} / {:.3}</td>", v.avg_error_pp, v.max_error_pp);
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s.push_str(
        "<h2>Normalised CPI stacks (Figure 11)</h2>\n\
         <p>One group per workload, one bar per method; each bar is the method's stack \
         divided by the real run's cycles. A naive stack can exceed 100 % (its base is \
         then negative, drawn below the axis); the axis is clipped at 150 % and -50 %, and \
         a bar clipped at the top is labelled there in red with the sum of its positive \
         components, one clipped at the bottom inside its foot with the sum of its \
         negative ones. The naive methods' long-latency term (an operation's latency \
         less one) is this project's: the paper's naive method has none, and it \
         accounts for most of naive's error on workloads without misses \
         (<code>balanced</code>, <code>longlat</code>). A chart wider than the page \
         scrolls sideways.</p>\n\
         <div class=\"wide\"><object data=\"stacks.svg\" type=\"image/svg+xml\" aria-label=\"normalised CPI stacks\">normalised CPI stacks (stacks.svg)</object></div>\n\
         <h2>Error per workload (Figure 12)</h2>\n\
         <p>Each method's error on each workload: the largest difference, over the \
         components, between its share of the cycles and the standard-order \
         reference's, in percentage points; the axis stops at 40 and a longer bar is \
         labelled in red with its value. The last two bars of a group are not methods: \
         they are the inverse-order and bpred-last references measured against the \
         standard order, the reference's own uncertainty. A method within that \
         distance of the standard order is as close as the reference can tell.</p>\n\
         <object data=\"errors.svg\" type=\"image/svg+xml\" aria-label=\"errors\">errors (errors.svg)</object>\n\
         <h2>Penalty per event (Figures 4, 6, 9) and overlap (Table 1)</h2>\n\
         <p>Average cycles charged per committed L1 I-miss, per misprediction and per L2 \
         D-miss by each method (the naive method per event on all paths). The committed \
         count leaves out the I-misses the wrong path started, whose lines the correct path \
         may still wait for: a method that counts waits shows more than the miss latency \
         per L1 I-miss for that reason. The reference's cost per misprediction includes \
         decode redirects (perfect prediction removes both). A bar marked n/a has no \
         such event in that run; a zero is drawn one pixel high. An average over a \
         few events says little (the counts are <code>stats.committed</code> in \
         <a href=\"stacks.json\">stacks.json</a>: a workload with no I-side misses \
         to speak of may show a few cold ones). The overlap is \
         the share of cycles in which a frontend penalty (a fetch stall, a refill after a \
         misprediction, or a mispredicted branch waiting to resolve) coincides with a full \
         window (a full ROB, or a full load/store queue reported as <code>backend_full</code>) \
         whose head waits on an L2 D-miss or a D-TLB miss.</p>\n\
         <object data=\"penalties.svg\" type=\"image/svg+xml\" aria-label=\"penalties\">penalties (penalties.svg)</object>\n",
    );
    s.push_str(&census_html(r));
    s.push_str("<h2>Per workload (shares of cycles, %)</h2>\n");
    for st in &r.studies {
        let _ = writeln!(
            s,
            "<details><summary>{} ({}{}, CPI {:.3}, overlap {:.2} %)</summary>{}{}{}</details>",
            esc(&st.name),
            esc(&st.kind),
            st.seed.map(|x| format!(", seed {x}")).unwrap_or_default(),
            st.cpi,
            100.0 * st.overlap.fraction,
            study_table(st),
            census_table(st),
            head_wait_lines(st)
                .iter()
                .map(|l| format!("<p>{} (<code>stats.head_waits</code>)</p>", esc(l)))
                .collect::<String>()
        );
    }
    s.push_str("<p>Files: <a href=\"stacks.csv\">stacks.csv</a>, <a href=\"stacks.json\">stacks.json</a>, <a href=\"penalties.csv\">penalties.csv</a>, <a href=\"census.csv\">census.csv</a>.</p>\n");
    s.push_str(
        "<p>Beyond this study: <code>cpistack phases</code> reads the same runs \
         every N instructions (do the stacks hold over an interval?), and \
         <code>cpistack multiplex</code> reads FMT's counters through fewer physical \
         counters, multiplexed. <code>make paper</code> writes their pages beside \
         this one, in <code>phases/xz/</code>, <code>phases/sqlite3/</code> and \
         <code>multiplex/</code>.</p>\n</body></html>\n",
    );
    s
}

pub mod svg {
    //! Hand-written SVG charts.

    use std::fmt::Write as _;

    use super::super::{Report, COMPARED, COMPONENTS, METHODS, NCOMP};

    /// Fixed colour per component (base, l1i, l2i, itlb, bpred, l1d, l2d, dtlb, longlat).
    pub const COLOURS: [&str; NCOMP] = [
        "#b0b0b0", "#6baed6", "#2171b5", "#08306b", "#fd8d3c", "#a1d99b", "#31a354", "#006d2c",
        "#9e9ac8",
    ];
    /// Fixed colour per method (in [`METHODS`] order): the references in
    /// greys, the methods in hues no component has (red, pink, browns,
    /// olive), so that a colour means one thing on the whole page.
    pub const METHOD_COLOURS: [&str; 8] = [
        "#333333", "#888888", "#bbbbbb", "#d62728", "#e377c2", "#8c564b", "#c49c94", "#bcbd22",
    ];

    use super::esc;

    pub(crate) fn head(w: f64, h: f64) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
             viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        )
    }

    fn short(m: &str) -> &'static str {
        super::short(m)
    }

    /// Upper bound of the width in pixels of `s` at font size `px` in the
    /// charts' sans-serif (a digit or capital is about 0.6 em, most lower-case
    /// letters less): what a label's room is computed from, so that no label
    /// is clipped by the chart's edge or runs into its neighbour.
    fn text_width(s: &str, px: f64) -> f64 {
        s.chars().count() as f64 * 0.62 * px
    }

    /// Slant of the workload labels under grouped bars, in degrees.
    const SLANT: f64 = 40.0;

    /// How far a label slanted by [`SLANT`] and anchored at its end reaches
    /// to the left of its anchor and below it (11-pixel font).
    fn slanted_extent(s: &str) -> (f64, f64) {
        let (w, a) = (text_width(s, 11.0), SLANT.to_radians());
        (w * a.cos(), w * a.sin() + 11.0 * a.cos())
    }

    /// `name` broken into at most `max_lines` lines of at most `fit` pixels
    /// in bold 11-pixel text (bold is about 10 % wider), after a `_`, `-`,
    /// `.` or space where it can be, inside a word where it must; what does
    /// not fit in the last line is cut and ends in `…` (the chart keeps the
    /// whole name in the label's tooltip).
    fn wrap_label(name: &str, fit: f64, max_lines: usize) -> Vec<String> {
        let cap = ((fit / (1.1 * text_width("x", 11.0))).floor() as usize).max(2);
        // pieces that each end after a separator
        let mut pieces: Vec<String> = Vec::new();
        let mut cur = String::new();
        for c in name.chars() {
            cur.push(c);
            if matches!(c, '_' | '-' | '.' | ' ') {
                pieces.push(std::mem::take(&mut cur));
            }
        }
        if !cur.is_empty() {
            pieces.push(cur);
        }
        let mut lines: Vec<String> = vec![String::new()];
        for p in pieces {
            let mut p = p.as_str();
            while !p.is_empty() {
                let last = lines.last_mut().expect("one line at least");
                let room = cap - last.chars().count();
                let n = p.chars().count();
                if n <= room {
                    last.push_str(p);
                    break;
                }
                if last.is_empty() || n > cap {
                    // a piece longer than a line: fill this line with its start
                    let cut = p.char_indices().nth(room).map_or(p.len(), |x| x.0);
                    last.push_str(&p[..cut]);
                    p = &p[cut..];
                }
                lines.push(String::new());
            }
        }
        lines.retain(|l| !l.is_empty());
        if lines.len() > max_lines {
            lines.truncate(max_lines);
            let last = &mut lines[max_lines - 1];
            let keep: String = last.chars().take(cap - 1).collect();
            *last = keep + "…";
        }
        lines
    }

    /// Figure 11: normalised stacked bars, one group per workload, one bar per method.
    pub fn stacks(r: &Report) -> String {
        let bar = 11.0;
        let gap = 2.0;
        let group = METHODS.len() as f64 * (bar + gap) + 14.0;
        let left = 50.0;
        let top = 70.0;
        let ph = 320.0; // 100 % in pixels
                        // room below zero for negative bases, above 100 % for overshooting stacks
        let (mut lo, mut hi) = (0.0f64, 100.0f64);
        for st in &r.studies {
            for m in METHODS {
                let t = st.cycles.max(1) as f64;
                let sk = &st.stacks[m];
                let pos: f64 = sk.iter().filter(|&&v| v > 0).map(|&v| v as f64).sum();
                let neg: f64 = sk.iter().filter(|&&v| v < 0).map(|&v| v as f64).sum();
                hi = hi.max(100.0 * pos / t);
                lo = lo.min(100.0 * neg / t);
            }
        }
        // naive stacks can reach several times the cycles: clip the axis, label the bar
        let hi = ((hi / 25.0).ceil() * 25.0).min(150.0);
        let lo = ((lo / 25.0).floor() * 25.0).max(-50.0);
        let scale = ph / 100.0;
        let plot_h = (hi - lo) * scale;
        let y0 = top + hi * scale; // pixel of 0 %
        let title = "Normalised CPI stacks (share of the real run's cycles)";
        let plot_r = left + r.studies.len() as f64 * group;
        let w = (plot_r + 150.0).max(left + 1.1 * text_width(title, 14.0) + 10.0);
        let h = top + plot_h + 95.0;
        let mut s = head(w, h);
        let _ = writeln!(
            s,
            "<text x=\"{left}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{title}</text>"
        );
        let mut g = lo;
        while g <= hi + 1e-9 {
            let y = y0 - g * scale;
            let _ = writeln!(
                s,
                "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"{}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{g:.0}%</text>",
                plot_r,
                if g == 0.0 { "#000" } else { "#ddd" },
                if g == 0.0 { 1.0 } else { 0.5 },
                left - 4.0,
                y + 4.0
            );
            g += 25.0;
        }
        for (i, st) in r.studies.iter().enumerate() {
            let gx = left + 8.0 + i as f64 * group;
            let t = st.cycles.max(1) as f64;
            for (j, m) in METHODS.iter().enumerate() {
                let x = gx + j as f64 * (bar + gap);
                let sk = &st.stacks[*m];
                let (mut up, mut down) = (0.0f64, 0.0f64);
                for (k, &v) in sk.iter().enumerate() {
                    let p = 100.0 * v as f64 / t;
                    let (y, hgt) = if p >= 0.0 {
                        up += p;
                        (y0 - up * scale, p * scale)
                    } else {
                        let y = y0 - down * scale;
                        down += p;
                        (y, -p * scale)
                    };
                    // clip to the plotted range [lo, hi]
                    let y_top = top;
                    let y_bot = top + plot_h;
                    let (y, hgt) = {
                        let a = y.max(y_top);
                        let b = (y + hgt).min(y_bot);
                        (a, (b - a).max(0.0))
                    };
                    if hgt > 0.0 {
                        let _ = writeln!(
                            s,
                            "<rect x=\"{x:.1}\" y=\"{y:.2}\" width=\"{bar}\" height=\"{hgt:.2}\" fill=\"{}\"><title>{} {} {}: {:.1}%</title></rect>",
                            COLOURS[k],
                            esc(&st.name),
                            m,
                            COMPONENTS[k],
                            super::no_minus_zero(p, 1)
                        );
                    }
                }
                // a bar clipped at an end is labelled there with its extent
                // (the sum of its positive, or negative, components)
                if up > hi + 1e-9 {
                    clip_label(&mut s, x + bar - 2.0, top - 2.0, &format!("{up:.0}%"));
                }
                if down < lo - 1e-9 {
                    clip_label(
                        &mut s,
                        x + bar - 2.0,
                        top + plot_h - 2.0,
                        &format!("{down:.0}%"),
                    );
                }
                let _ = writeln!(
                    s,
                    "<text transform=\"translate({:.1},{:.1}) rotate(-90)\" text-anchor=\"end\" font-size=\"9\">{}</text>",
                    x + bar - 2.0,
                    top + plot_h + 4.0,
                    short(m)
                );
            }
            // the name on up to three lines under the group (a trace's name is
            // often wider than the group); the whole name in its tooltip
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\"><title>{}</title>",
                gx + (group - 14.0) / 2.0,
                top + plot_h + 62.0,
                esc(&st.name)
            );
            for (n, line) in wrap_label(&st.name, group - 4.0, 3).iter().enumerate() {
                let _ = write!(
                    s,
                    "<tspan x=\"{:.1}\" dy=\"{}\">{}</tspan>",
                    gx + (group - 14.0) / 2.0,
                    if n == 0 { 0 } else { 13 },
                    esc(line)
                );
            }
            s.push_str("</text>\n");
        }
        // top to bottom as the bars stack: the last component on top
        let (mut names, mut colours) = (COMPONENTS, COLOURS);
        names.reverse();
        colours.reverse();
        legend(&mut s, plot_r + 10.0, top, &names, &colours);
        s.push_str("</svg>\n");
        s
    }

    /// The red label of a bar clipped by the axis: `text` written upwards
    /// from (`x`, `y`).
    fn clip_label(s: &mut String, x: f64, y: f64, text: &str) {
        let _ = writeln!(
            s,
            "<text transform=\"translate({x:.1},{y:.1}) rotate(-90)\" font-size=\"9\" fill=\"#c00\">{text}</text>"
        );
    }

    pub(crate) fn legend(s: &mut String, x: f64, y: f64, names: &[&str], colours: &[&str]) {
        for (k, (n, c)) in names.iter().zip(colours).enumerate() {
            let yy = y + k as f64 * 18.0;
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{yy:.1}\" width=\"12\" height=\"12\" fill=\"{c}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">{n}</text>",
                x + 18.0,
                yy + 10.0
            );
        }
    }

    /// Narrowest group of bars: labels slanted by [`SLANT`] that far apart
    /// are 19 pixels apart across their slant, clear of an 11-pixel neighbour.
    const MIN_GROUP: f64 = 30.0;

    /// Grouped bars of one value per (workload, series), with a legend. The
    /// axis spans the values, 0 included, clipped to `[-cap, cap]` (a bar
    /// past the clip is labelled in red with its value); a panel with no value
    /// at all says so.
    fn grouped(
        title: &str,
        unit: &str,
        groups: &[String],
        series: &[&str],
        colours: &[&str],
        value: &dyn Fn(usize, usize) -> Option<f64>,
        cap: f64,
    ) -> String {
        let bar = 10.0;
        let group = (series.len() as f64 * bar + 14.0).max(MIN_GROUP);
        let bars = series.len() as f64 * bar;
        // room for the slanted workload labels: on the left for the reach of
        // each (anchored at its group's middle), below for the longest
        let anchor = |i: usize| 8.0 + i as f64 * group + bars / 2.0;
        let (mut left, mut below) = (55.0f64, 80.0f64);
        for (i, name) in groups.iter().enumerate() {
            let (reach, drop) = slanted_extent(name);
            left = left.max(reach - anchor(i) + 6.0);
            below = below.max(14.0 + drop + 8.0);
        }
        let top = 60.0;
        let ph = 260.0;
        let (mut lo, mut hi, mut any) = (0.0f64, 0.0f64, false);
        for i in 0..groups.len() {
            for j in 0..series.len() {
                if let Some(v) = value(i, j).filter(|v| v.is_finite()) {
                    (lo, hi, any) = (lo.min(v), hi.max(v), true);
                }
            }
        }
        let (lo, hi) = (lo.max(-cap), hi.min(cap));
        // whole steps from below the lowest value to above the highest; an
        // all-zero or empty panel gets an axis of one unit
        let step = nice_step(if hi > lo { hi - lo } else { 1.0 });
        let top_k = (hi / step).ceil() as i64;
        let bot_k = (lo / step).floor() as i64;
        let top_k = if top_k > bot_k { top_k } else { bot_k + 5 };
        let (lo, hi) = (bot_k as f64 * step, top_k as f64 * step);
        let scale = ph / (hi - lo);
        let y0 = top + hi * scale; // pixel of 0
        let bottom = top + ph;
        // the plot as wide as its groups, the legend beside it, the title
        // over both if it is wider
        let plot_r = left + groups.len() as f64 * group;
        let w = (plot_r + 170.0).max(left + 1.1 * text_width(title, 14.0) + 10.0);
        let h = top + ph + below;
        let mut s = head(w, h);
        let _ = writeln!(
            s,
            "<text x=\"{left}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>",
            esc(title)
        );
        // enough decimals to tell the ticks apart (a step of 2.5 x 10^k needs
        // one more than its power)
        let decimals = (0..12)
            .find(|&d| {
                let x = step * 10f64.powi(d);
                (x - x.round()).abs() < 1e-6 * x
            })
            .unwrap_or(12) as usize;
        for k in bot_k..=top_k {
            let g = k as f64 * step;
            let y = y0 - g * scale;
            let _ = writeln!(
                s,
                "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"0.5\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{g:.decimals$}{unit}</text>",
                plot_r,
                if k == 0 { "#000" } else { "#ddd" },
                left - 4.0,
                y + 4.0,
            );
        }
        if !any {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#888\">no such events in these runs</text>",
                (left + plot_r) / 2.0,
                top + ph / 2.0
            );
        }
        for (i, name) in groups.iter().enumerate() {
            let gx = left + 8.0 + i as f64 * group;
            for j in 0..series.len() {
                let x = gx + j as f64 * bar;
                let Some(v) = value(i, j).filter(|v| v.is_finite()) else {
                    // no value (no such event in that run): said, so that it
                    // does not read as a zero
                    if any {
                        let _ = writeln!(
                            s,
                            "<text transform=\"translate({:.1},{:.1}) rotate(-90)\" font-size=\"8\" fill=\"#999\"><title>{} {}: no such event</title>n/a</text>",
                            x + bar - 2.0,
                            y0 - 2.0,
                            esc(name),
                            series[j]
                        );
                    }
                    continue;
                };
                let c = v.clamp(lo, hi);
                // a zero (or a value under a pixel) still shows, as a 1-pixel bar
                let (y, hh) = if c >= 0.0 {
                    let hh = (c * scale).max(1.0);
                    (y0 - hh, hh)
                } else {
                    (y0, (-c * scale).max(1.0))
                };
                if v > hi {
                    clip_label(&mut s, x + bar - 2.0, y - 2.0, &format!("{v:.0}"));
                } else if v < lo {
                    // inside the bar's foot: below it are the workload labels
                    clip_label(&mut s, x + bar - 2.0, bottom - 2.0, &format!("{v:.0}"));
                }
                let _ = writeln!(
                    s,
                    "<rect x=\"{x:.1}\" y=\"{y:.2}\" width=\"{bar}\" height=\"{hh:.2}\" fill=\"{}\"><title>{} {}: {v:.2}{unit}</title></rect>",
                    colours[j],
                    esc(name),
                    series[j]
                );
            }
            let _ = writeln!(
                s,
                "<text transform=\"translate({:.1},{:.1}) rotate(-{SLANT})\" text-anchor=\"end\">{}</text>",
                left + anchor(i),
                bottom + 14.0,
                esc(name)
            );
        }
        legend(&mut s, plot_r + 10.0, top, series, colours);
        s.push_str("</svg>\n");
        s
    }

    /// A round step (1, 2, 2.5 or 5 times a power of ten) that divides
    /// `span` into at most five steps.
    pub(crate) fn nice_step(span: f64) -> f64 {
        let raw = span / 5.0;
        let p = 10f64.powf(raw.log10().floor());
        for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
            if m * p >= raw {
                return m * p;
            }
        }
        10.0 * p
    }

    /// Figure 12: each method's error per workload.
    pub fn errors(r: &Report) -> String {
        let names: Vec<String> = r.studies.iter().map(|s| s.name.clone()).collect();
        let colours: Vec<&str> = COMPARED
            .iter()
            .map(|m| METHOD_COLOURS[METHODS.iter().position(|x| x == m).unwrap_or(0)])
            .collect();
        grouped(
            "Max component error against the standard-order reference (percentage points)",
            "",
            &names,
            &COMPARED,
            &colours,
            &|i, j| Some(r.studies[i].errors_pp[COMPARED[j]]),
            40.0,
        )
    }

    /// Figures 4, 6, 9 and Table 1: three panels of penalty per event, one of overlap.
    pub fn penalties(r: &Report) -> String {
        let names: Vec<String> = r.studies.iter().map(|s| s.name.clone()).collect();
        type Pick = fn(&super::super::Penalties) -> Option<f64>;
        let panels: [(&str, Pick); 3] = [
            ("Cycles per L1 I-miss (Figure 4)", |p| p.l1i),
            ("Cycles per misprediction (Figure 6)", |p| p.bpred),
            ("Cycles per L2 D-miss (Figure 9)", |p| p.l2d),
        ];
        let mut parts = Vec::new();
        for (title, f) in panels {
            parts.push(grouped(
                title,
                "",
                &names,
                &METHODS,
                &METHOD_COLOURS,
                &|i, j| f(&r.studies[i].penalties[METHODS[j]]),
                400.0,
            ));
        }
        parts.push(grouped(
            "Cycles with frontend and long backend penalties overlapping (Table 1)",
            "%",
            &names,
            &["overlap"],
            &["#555555"],
            &|i, _| Some(100.0 * r.studies[i].overlap.fraction),
            100.0,
        ));
        stack_panels(&parts)
    }

    /// The sweep's chart (`cpistack sweep`): per machine, each compared
    /// method's average error over the studies, then its maximum.
    pub fn sweep(points: &[(&str, &Report)]) -> String {
        let names: Vec<String> = points.iter().map(|(n, _)| n.to_string()).collect();
        let colours: Vec<&str> = COMPARED
            .iter()
            .map(|m| METHOD_COLOURS[METHODS.iter().position(|x| x == m).unwrap_or(0)])
            .collect();
        let parts: Vec<String> = [
            (
                "Average error over the studies, per machine (percentage points)",
                true,
            ),
            (
                "Maximum error over the studies, per machine (percentage points)",
                false,
            ),
        ]
        .into_iter()
        .map(|(title, avg)| {
            grouped(
                title,
                "",
                &names,
                &COMPARED,
                &colours,
                &|i, j| {
                    let x = points[i].1.summary.get(COMPARED[j])?;
                    Some(if avg { x.avg_error_pp } else { x.max_error_pp })
                },
                40.0,
            )
        })
        .collect();
        stack_panels(&parts)
    }

    /// Whole SVG charts stacked vertically in one.
    fn stack_panels(parts: &[String]) -> String {
        let mut w = 0.0f64;
        let mut h = 0.0f64;
        let mut body = String::new();
        for p in parts {
            let (pw, ph) = size_of(p);
            let inner = p
                .trim_end()
                .strip_suffix("</svg>")
                .unwrap_or(p)
                .split_once('\n')
                .map(|x| x.1)
                .unwrap_or("");
            let _ = writeln!(body, "<g transform=\"translate(0,{h:.0})\">\n{inner}</g>");
            w = w.max(pw);
            h += ph;
        }
        let mut s = head(w, h);
        s.push_str(&body);
        s.push_str("</svg>\n");
        s
    }

    fn size_of(svg: &str) -> (f64, f64) {
        let attr = |name: &str| {
            svg.split_once(&format!("{name}=\""))
                .and_then(|(_, r)| r.split_once('"'))
                .and_then(|(v, _)| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        (attr("width"), attr("height"))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// A colour means one thing on the page: no method shares a hue
        /// family with a component (the components are greys, blues,
        /// orange, greens and lavender; the references are greys, which
        /// the stacks chart never draws as bars of a method), and no two
        /// methods share a colour.
        #[test]
        fn method_colours_are_apart_from_the_components_and_each_other() {
            let hue = |c: &str| {
                let v = |i: usize| u8::from_str_radix(&c[i..i + 2], 16).unwrap() as f64 / 255.0;
                let (r, g, b) = (v(1), v(3), v(5));
                let (max, min) = (r.max(g).max(b), r.min(g).min(b));
                if max - min < 0.1 {
                    return None; // a grey
                }
                let h = if max == r {
                    ((g - b) / (max - min)).rem_euclid(6.0)
                } else if max == g {
                    (b - r) / (max - min) + 2.0
                } else {
                    (r - g) / (max - min) + 4.0
                };
                Some(60.0 * h)
            };
            for (i, m) in METHOD_COLOURS.iter().enumerate() {
                assert!(!METHOD_COLOURS[..i].contains(m), "{m} twice");
                let Some(hm) = hue(m) else { continue };
                for c in COLOURS.iter().filter_map(|c| hue(c)) {
                    let d = (hm - c).abs().min(360.0 - (hm - c).abs());
                    assert!(
                        d > 12.0,
                        "method {m} (hue {hm:.0}) near a component's hue {c:.0}"
                    );
                }
            }
        }

        /// A trace's name is wider than its group of bars in `stacks.svg`: it
        /// is broken after its separators into lines that fit, and nothing is
        /// lost unless three lines cannot hold it.
        #[test]
        fn group_labels_wrap_to_fit_their_group() {
            let fit = 105.0; // the width of a group of 7 bars, less a margin
            let cap = (fit / (1.1 * text_width("x", 11.0))).floor() as usize;
            for name in [
                "balanced",
                "xz6_x86_skip50M_13M",
                "sqlite3_x86_skip100M_13M",
                "a-very.long name_with_many_parts_indeed",
                "oneverylongwordwithoutanyseparatoratall",
            ] {
                let lines = wrap_label(name, fit, 3);
                assert!(lines.len() <= 3, "{name}: {lines:?}");
                for l in &lines {
                    assert!(
                        !l.is_empty() && l.chars().count() <= cap,
                        "{name}: {l:?} is not 1..={cap} characters"
                    );
                }
                if name.chars().count() <= 2 * cap {
                    assert_eq!(lines.concat(), name, "{name}: {lines:?}");
                }
            }
            assert_eq!(wrap_label("balanced", fit, 3), ["balanced"]);
            assert_eq!(
                wrap_label("sqlite3_x86_skip100M_13M", fit, 3),
                ["sqlite3_x86_", "skip100M_13M"]
            );
            let cut = wrap_label(&"ab_".repeat(40), fit, 3);
            assert!(cut[2].ends_with('…'), "{cut:?}");
            assert!(cut.iter().all(|l| l.chars().count() <= cap), "{cut:?}");
            let cut = wrap_label(&"x".repeat(4 * cap), fit, 3);
            assert!(cut[2].ends_with('…'), "{cut:?}");
            assert!(cut.iter().all(|l| l.chars().count() == cap), "{cut:?}");
            // a name of exactly three lines is whole
            let three = format!("{0}_{0}_{0}", "x".repeat(cap - 1));
            assert_eq!(wrap_label(&three, fit, 3).concat(), three);
            // a word that fits a line of its own starts one; a longer word
            // fills the line it starts in and goes on in the next
            let x = |n: usize| "x".repeat(n);
            assert_eq!(
                wrap_label(&format!("ab_{}", x(cap)), fit, 3),
                ["ab_".to_string(), x(cap)]
            );
            assert_eq!(
                wrap_label(&format!("ab_{}", x(cap + 5)), fit, 3),
                [format!("ab_{}", x(cap - 3)), x(8)]
            );
        }

        /// The tick labels of a grouped chart's axis (its `text-anchor="end"`
        /// texts before the first bar), in order.
        fn ticks(svg: &str) -> Vec<String> {
            svg.split("text-anchor=\"end\">")
                .skip(1)
                .map(|t| t.split('<').next().unwrap().to_string())
                .collect()
        }

        fn chart(values: &'static [Option<f64>], cap: f64) -> String {
            let groups: Vec<String> = (0..values.len()).map(|i| format!("w{i}")).collect();
            grouped("t", "%", &groups, &["a"], &["#000"], &|i, _| values[i], cap)
        }

        /// A panel with no value says so over an axis of one unit; values
        /// below zero are drawn below the zero line and the axis reaches them;
        /// tiny values still get ticks that differ; a value clipped at the
        /// bottom is labelled inside the plot, not over the workload labels.
        #[test]
        fn grouped_axes_hold_empty_negative_tiny_and_clipped_values() {
            let empty = chart(&[None, None], 100.0);
            assert!(empty.contains("no such events in these runs"), "{empty}");
            assert_eq!(
                ticks(&empty)[..6],
                ["0.0%", "0.2%", "0.4%", "0.6%", "0.8%", "1.0%"]
            );
            let zero = chart(&[Some(0.0)], 100.0);
            assert!(!zero.contains("no such events"), "{zero}");

            let neg = chart(&[Some(-50.0), Some(100.0), Some(f64::NAN)], 400.0);
            let t = ticks(&neg);
            assert_eq!(t.first().map(String::as_str), Some("-50%"), "{t:?}");
            assert!(t.contains(&"100%".to_string()), "{t:?}");
            let bar = |svg: &str, name: &str| -> (f64, f64) {
                let at = svg.find(&format!("<title>{name} a:")).unwrap();
                let rect = &svg[svg[..at].rfind("<rect").unwrap()..at];
                let num = |k: &str| -> f64 {
                    let v = rect.split(&format!(" {k}=\"")).nth(1).unwrap();
                    v.split('"').next().unwrap().parse().unwrap()
                };
                (num("y"), num("height"))
            };
            let (y_neg, h_neg) = bar(&neg, "w0");
            let (y_pos, h_pos) = bar(&neg, "w1");
            // the negative bar hangs from the zero line, where the positive one stands
            assert!(
                (y_neg - (y_pos + h_pos)).abs() < 0.01,
                "{y_neg} {y_pos} {h_pos}"
            );
            assert!((h_pos / h_neg - 2.0).abs() < 0.01, "{h_pos} {h_neg}");
            // a value that is not there is marked n/a, not drawn
            assert!(!neg.contains("NaN"), "{neg}");
            assert!(
                neg.contains("<title>w2 a: no such event</title>n/a</text>"),
                "{neg}"
            );
            assert_eq!(neg.matches("<title>w2 a:").count(), 1, "{neg}");
            // (a panel with no value at all says so once, with no n/a per bar)
            assert!(!empty.contains("n/a"), "{empty}");
            // a zero stands one pixel high on the zero line
            let (y_zero, h_zero) = bar(&zero, "w0");
            assert_eq!(h_zero, 1.0, "{zero}");
            let (y_one, h_one) = bar(&chart(&[Some(0.0), Some(1.0)], 100.0), "w1");
            assert!(
                (y_zero + 1.0 - (y_one + h_one)).abs() < 0.01,
                "{y_zero} {y_one} {h_one}"
            );

            let tiny = chart(&[Some(2e-7), Some(1e-7)], 100.0);
            let t = ticks(&tiny);
            let distinct: std::collections::BTreeSet<_> = t.iter().collect();
            assert_eq!(distinct.len(), t.len(), "{t:?}");

            let clipped = chart(&[Some(-1000.0), Some(10.0)], 400.0);
            let (_, h) = size_of(&clipped);
            let label = clipped
                .find(">-1000</text>")
                .expect("the clipped bar is labelled");
            let open = clipped[..label].rfind("translate(").unwrap() + "translate(".len();
            let y: f64 = clipped[open..]
                .split([',', ')'])
                .nth(1)
                .unwrap()
                .parse()
                .unwrap();
            assert!(
                y <= 60.0 + 260.0,
                "label at {y}, below the plot (height {h})"
            );
        }

        /// The slanted workload labels of the grouped charts stay inside the
        /// chart: the margins grow with the longest name (a name 60
        /// characters long once reached 100 pixels past the bottom edge and
        /// ran off the left one).
        #[test]
        fn slanted_labels_stay_inside_the_chart() {
            let geometry = |names: &[&str]| {
                let groups: Vec<String> = names.iter().map(|n| n.to_string()).collect();
                let svg = grouped(
                    "t",
                    "",
                    &groups,
                    &["a", "b"],
                    &["#000", "#111"],
                    &|_, _| Some(1.0),
                    10.0,
                );
                let (w, h) = size_of(&svg);
                // the anchors of the labels, in order
                let anchors: Vec<(f64, f64)> = svg
                    .match_indices("rotate(-40)")
                    .map(|(at, _)| {
                        let t = &svg[..at];
                        let open = t.rfind("translate(").unwrap() + "translate(".len();
                        let (x, y) = t[open..].trim_end_matches(") ").split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                (w, h, anchors)
            };
            let long = "x".repeat(60);
            for names in [
                vec!["mlp", "chase"],
                vec![long.as_str(), "mlp"],
                vec!["mlp", long.as_str()],
            ] {
                let (w, h, anchors) = geometry(&names);
                assert_eq!(anchors.len(), names.len());
                let (mut left, mut bottom) = (f64::MAX, 0.0f64);
                for (name, (x, y)) in names.iter().zip(anchors) {
                    // the label's box worked out here, not by `slanted_extent`:
                    // `text_width` long, ending at the anchor, turned up by the
                    // slant; glyphs from a quarter em below the baseline to
                    // three quarters above it
                    let (l, a) = (text_width(name, 11.0), SLANT.to_radians());
                    let (dir, up) = ((a.cos(), -a.sin()), (-a.sin(), -a.cos()));
                    for (t, u) in [(-l, -2.75), (-l, 8.25), (0.0, -2.75), (0.0, 8.25)] {
                        let (cx, cy) = (x + t * dir.0 + u * up.0, y + t * dir.1 + u * up.1);
                        (left, bottom) = (left.min(cx), bottom.max(cy));
                    }
                    assert!(x <= w);
                }
                let long = names.iter().any(|n| n.len() > 30);
                assert!(
                    left >= 0.0,
                    "{names:?}: reaches {:.0} px left of the edge",
                    -left
                );
                assert!(
                    bottom <= h,
                    "{names:?}: reaches {:.0} px below the edge",
                    bottom - h
                );
                // and the margins grow no further than the longest name needs
                if long {
                    assert!(left <= 12.0, "{names:?}: {left:.0} px spare on the left");
                    assert!(
                        h - bottom <= 25.0,
                        "{names:?}: {:.0} px spare below",
                        h - bottom
                    );
                }
            }
            // the margins do not grow for names that already fit
            let (_, h, anchors) = geometry(&["mlp", "chase"]);
            assert_eq!(h, 60.0 + 260.0 + 80.0);
            assert_eq!(anchors[0].0, 55.0 + 8.0 + 10.0);
        }
    }
}

/// The checks of [`check_dir`] that read `stacks.json` alone: its `text` is
/// exactly a whole [`Report`] (no key it does not define), every study has
/// every method, and the numbers agree ([`check_consistent`]).
pub fn check_report_text(text: &str) -> Result<Report> {
    use anyhow::{bail, ensure};
    let r: Report =
        serde_json::from_str(text).context("stacks.json: not a report of `cpistack stacks`")?;
    // the file holds exactly the report read from it, in whatever layout: no
    // key it does not define, and no section serde would take by position (an
    // array for an object), which would read as another report
    let mut file_json: serde_json::Value = serde_json::from_str(text)?;
    // a report written before the unit's widths were keys of the machine
    // (2026-11-28) has no `config.unit`: it was made with the default widths
    if let Some(cfg) = file_json.get_mut("config").and_then(|c| c.as_object_mut()) {
        if !cfg.contains_key("unit") && r.config.unit == sim::config::UnitCfg::default() {
            cfg.insert("unit".into(), serde_json::to_value(&r.config.unit)?);
        }
    }
    if let Some(at) = first_difference(&file_json, &serde_json::to_value(&r)?, "") {
        bail!("stacks.json: {at}");
    }
    ensure!(!r.studies.is_empty(), "stacks.json: no studies");
    for st in &r.studies {
        let name = &st.name;
        for (k, n) in [("instructions", st.instructions), ("cycles", st.cycles)] {
            ensure!(
                n > 0,
                "stacks.json: study `{name}`: `{k}` is 0, expected a positive integer"
            );
        }
        for m in METHODS {
            ensure!(
                st.stacks.contains_key(m) && st.penalties.contains_key(m),
                "stacks.json: study `{name}`: no stack or no penalties of `{m}`"
            );
        }
        for m in COMPARED {
            let e = st.errors_pp.get(m);
            ensure!(
                e.is_some_and(|e| *e >= 0.0),
                "stacks.json: study `{name}`: errors_pp.{m} is {e:?}, expected a number >= 0"
            );
        }
        for (i, m) in st.saturated.iter().enumerate() {
            ensure!(
                ["fmt", "sfmt"].contains(&m.as_str()) && !st.saturated[..i].contains(m),
                "stacks.json: study `{name}`: saturated holds `{m}`, expected fmt and/or sfmt, each once"
            );
        }
        for (key, keys, known) in [
            ("stacks", st.stacks.keys().collect::<Vec<_>>(), &METHODS[..]),
            ("penalties", st.penalties.keys().collect(), &METHODS[..]),
            ("errors_pp", st.errors_pp.keys().collect(), &COMPARED[..]),
        ] {
            if let Some(k) = keys.iter().find(|k| !known.contains(&k.as_str())) {
                bail!(
                    "stacks.json: study `{name}`: {key}.{k}: {key} holds {} only",
                    known.join(", ")
                );
            }
        }
    }
    check_consistent(&r)?;
    Ok(r)
}

/// Every output file but `stacks.json` as [`write_all`] renders it from `r`
/// (name and text).
pub fn render_outputs(r: &Report) -> Result<Vec<(&'static str, String)>> {
    OUTPUTS
        .iter()
        .filter(|(f, _)| *f != "stacks.json")
        .map(|(f, render)| Ok((*f, render(r)?)))
        .collect()
}

/// Check that `dir` holds a complete, well-formed set of outputs: `stacks.json`
/// exactly a whole report ([`Report`]) whose numbers agree
/// ([`check_consistent`]), the two CSV files row for row what [`stacks_csv`]
/// and [`penalties_csv`] make of it, every SVG well-formed XML with an `svg`
/// root, and every file but `stacks.json` byte for byte what the report
/// renders.
pub fn check_dir(dir: &Path) -> Result<()> {
    use anyhow::{bail, ensure};
    let read =
        |n: &str| crate::paths::read_text_capped(&dir.join(n), crate::paths::MAX_REPORT_BYTES);
    let r = check_report_text(&read("stacks.json")?)?;
    let stacks_what = |row: &[&str]| {
        format!(
            "study `{}`, {}, {}: its cycles, CPI and shares, and the error",
            row[0], row[2], row[3]
        )
    };
    let penalties_what = |row: &[&str]| format!("study `{}`, {}", row[0], row[2]);
    same_rows(
        "stacks.csv",
        &read("stacks.csv")?,
        &stacks_csv(&r),
        &stacks_what,
    )?;
    same_rows(
        "penalties.csv",
        &read("penalties.csv")?,
        &penalties_csv(&r),
        &penalties_what,
    )?;
    for file in ["stacks.svg", "errors.svg", "penalties.svg"] {
        let text = read(file)?;
        if let Err(e) = xml_well_formed(&text) {
            bail!("{file}: not well-formed XML: {e}");
        }
        ensure!(
            text.trim_start().starts_with("<svg"),
            "{file}: root is not <svg>"
        );
    }
    // stacks.json holds exactly the report read from it (no key it does not
    // define), in whatever layout; every other file is exactly what that
    // report renders (not a chart or page of another run, no edited number)
    for (file, want) in render_outputs(&r)? {
        let got = read(file)?;
        if let Some((n, g, w)) = got
            .split_inclusive('\n')
            .zip(want.split_inclusive('\n'))
            .enumerate()
            .find(|(_, (g, w))| g != w)
            .map(|(n, (g, w))| (n + 1, g, w))
        {
            if g.trim_end() == w.trim_end() {
                bail!(
                    "{file}: line {n} ends in {:?}, where cpistack writes {:?}",
                    ends(g),
                    ends(w)
                );
            }
            let (g, w) = around_difference(g.trim_end(), w.trim_end());
            bail!("{file}: line {n} is not what stacks.json renders: `{g}`, expected `{w}`");
        }
        ensure!(
            got.len() == want.len(),
            "{file}: {} lines, but stacks.json renders {} (the file is cut short or has more)",
            got.lines().count(),
            want.lines().count()
        );
    }
    Ok(())
}

/// Where the JSON `got` (a file) first differs from `want` (the report read
/// from it, written back), as a message naming the key; `None` if they are
/// equal. `path` is the key of both (`""` at the top).
fn first_difference(
    got: &serde_json::Value,
    want: &serde_json::Value,
    path: &str,
) -> Option<String> {
    use serde_json::Value;
    let key = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            if let Some(k) = g.keys().find(|k| !w.contains_key(*k)) {
                // a field left out when 0 or empty (`branch_full_cycles`,
                // `saturated`, `census`) is written that way only by hand
                let left_out = matches!(&g[k], Value::Number(n) if n.as_f64() == Some(0.0))
                    || matches!(&g[k], Value::Array(a) if a.is_empty());
                return Some(if left_out {
                    format!(
                        "`{}` is {}: not a key of the report, or one that cpistack leaves out when it is 0 or empty",
                        key(k),
                        g[k]
                    )
                } else {
                    format!("`{}`: not a key of the report", key(k))
                });
            }
            // a report written before `layout.*` existed has no
            // `config.layout`: it was the default layout
            let older = |k: &str| {
                key(k) == "config.layout"
                    && w[k] == serde_json::to_value(sim::Layout::default()).expect("serialises")
            };
            if let Some(k) = w.keys().find(|k| !g.contains_key(*k) && !older(k)) {
                return Some(format!("`{}` is missing", key(k)));
            }
            g.iter()
                .find_map(|(k, v)| first_difference(v, &w[k], &key(k)))
        }
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => g
            .iter()
            .zip(w)
            .enumerate()
            .find_map(|(i, (a, b))| first_difference(a, b, &format!("{path}[{i}]"))),
        // a number in another form (`0` for `0.0`, `1e-5`) is the same number
        (Value::Number(g), Value::Number(w)) if g == w || g.as_f64() == w.as_f64() => None,
        (g, w) if g == w => None,
        (g, w) => {
            let show = |v: &Value| {
                let t = v.to_string();
                match t.char_indices().nth(60) {
                    Some((i, _)) => format!("{}...", &t[..i]),
                    None => t,
                }
            };
            let what = if path.is_empty() {
                "the file".to_string()
            } else {
                format!("`{path}`")
            };
            Some(format!(
                "{what} is {}, which the report reads as {} (a value out of its type or form)",
                show(g),
                show(w)
            ))
        }
    }
}

/// The line ending of `line`: what follows its text.
fn ends(line: &str) -> &str {
    &line[line.trim_end().len()..]
}

/// Two lines that differ as an error message quotes them: from 40
/// characters before their first difference to 60 after it, `...` where cut.
fn around_difference(a: &str, b: &str) -> (String, String) {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    let cut = |s: &str| {
        let from = s[..at].char_indices().rev().nth(39).map_or(0, |(i, _)| i);
        let to = s[at..]
            .char_indices()
            .nth(60)
            .map_or(s.len(), |(i, _)| at + i);
        format!(
            "{}{}{}",
            if from > 0 { "..." } else { "" },
            &s[from..to],
            if to < s.len() { "..." } else { "" }
        )
    };
    (cut(a), cut(b))
}

/// A CSV file `text` is `want` line for line; a differing row is named with
/// `what` (of the expected row's fields).
fn same_rows(file: &str, text: &str, want: &str, what: &dyn Fn(&[&str]) -> String) -> Result<()> {
    use anyhow::ensure;
    let (mut got, mut exp) = (text.lines(), want.lines());
    ensure!(got.next() == exp.next(), "{file}: wrong header");
    let (g, w) = (got.clone().count(), exp.clone().count());
    ensure!(g == w, "{file}: {g} rows, expected {w}");
    for (line, want) in got.zip(exp) {
        ensure!(
            line == want,
            "{file}: the row `{line}` does not match stacks.json ({}: it should read `{want}`)",
            what(&want.split(',').collect::<Vec<_>>())
        );
    }
    Ok(())
}

/// Numbers that must agree up to the rounding of their sums.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// `stacks.json` agrees with itself: each order of the reference adds up to
/// the real run's cycles, each error is the largest gap between the method's
/// and the reference's shares ([`super::error_pp`]), each summary is what
/// [`super::summarise`] makes of its studies, each `cpi` and overlap
/// fraction is its quotient, and the overlap is within each of its sides.
/// The relations between a run's counts that hold in every run (`sim::Stats`):
/// committed-path events are among all paths' (never more); committed
/// branches are committed instructions, committed mispredictions committed
/// branches; a cycle is ROB-full, LSQ-full (with the ROB not full) or
/// neither. (Not checked: wrong-path instructions dispatched against those
/// fetched, since an instruction fetched in the warm-up and dispatched after
/// it counts only as dispatched.)
fn check_stats_relations(name: &str, s: &sim::Stats) -> Result<()> {
    for ((k, c), (_, a)) in s.committed.named().into_iter().zip(s.all.named()) {
        anyhow::ensure!(
            c <= a,
            "stacks.json: study `{name}`: stats.committed.{k} is {c}, more than stats.all.{k} ({a}): committed-path events are among all paths'"
        );
    }
    for (k, v, most, of) in [
        ("branches", s.branches, s.instructions, "stats.instructions"),
        (
            "committed.mispredicts",
            s.committed.mispredicts,
            s.branches,
            "stats.branches",
        ),
        (
            "rob_full_cycles + lsq_full_cycles + branch_full_cycles",
            s.rob_full_cycles
                .saturating_add(s.lsq_full_cycles)
                .saturating_add(s.branch_full_cycles),
            s.cycles,
            "stats.cycles",
        ),
    ] {
        anyhow::ensure!(
            v <= most,
            "stacks.json: study `{name}`: stats.{k} is {v}, more than {of} ({most})"
        );
    }
    Ok(())
}

fn check_consistent(r: &Report) -> Result<()> {
    use anyhow::ensure;
    r.config
        .validate()
        .context("stacks.json: config: not a machine `cpistack stacks` runs")?;
    let names: std::collections::BTreeSet<String> = super::ORDERS
        .iter()
        .flat_map(|(_, order)| super::order_masks(order))
        .filter(|&m| m != 0)
        .map(super::ideal_name)
        .collect();
    for st in &r.studies {
        let name = &st.name;
        // a component beyond 2^53 cycles is not a run's (nor exact in a
        // JSON reader's doubles); within it the sums and gaps cannot overflow
        for (m, stack) in &st.stacks {
            for (c, v) in COMPONENTS.iter().zip(stack) {
                ensure!(
                    v.unsigned_abs() <= 1 << 53,
                    "stacks.json: study `{name}`: stacks.{m}.{c} is {v}, not an integer of at most 2^53 cycles"
                );
            }
        }
        for (k, v) in st
            .ideal_runs
            .iter()
            .map(|(k, v)| (format!("ideal_runs.{k}"), *v))
            .chain([
                ("instructions".to_string(), r.instructions),
                ("cycles".to_string(), st.cycles),
            ])
        {
            ensure!(
                v <= 1 << 53,
                "stacks.json: study `{name}`: {k} is {v}, more than a run's 2^53"
            );
        }
        ensure!(
            st.seed.is_some() == (st.kind == "workload"),
            "stacks.json: study `{name}`: a {} with seed {} (a workload has a seed, a trace null)",
            st.kind,
            st.seed.map_or("null".to_string(), |x| x.to_string())
        );
        ensure!(
            close(st.cpi, st.cycles as f64 / st.instructions as f64),
            "stacks.json: study `{name}`: cpi is {}, not cycles / instructions",
            st.cpi
        );
        let o = &st.overlap;
        ensure!(
            close(o.fraction, o.overlap_cycles as f64 / o.cycles.max(1) as f64),
            "stacks.json: study `{name}`: overlap.fraction is {}, not overlap_cycles / cycles",
            o.fraction
        );
        for (m, _) in super::ORDERS {
            let sum: i64 = st.stacks[m].iter().sum();
            ensure!(
                sum == st.cycles as i64,
                "stacks.json: study `{name}`: the components of {m} add up to {sum}, not to the run's {} cycles",
                st.cycles
            );
        }
        if !st.census.is_empty() {
            crate::census::check(&st.census, st.cycles, st.instructions)
                .map_err(|e| anyhow::anyhow!("stacks.json: study `{name}`: census: {e}"))?;
            // the same cycles FMT's counters hold: the census reads the
            // window as the unit's counting step does
            for (c, n) in crate::census::head_waits(&st.census) {
                let k = COMPONENTS
                    .iter()
                    .position(|x| *x == c)
                    .expect("a component per counter");
                let fmt = st.stacks["fmt"][k];
                ensure!(
                    i64::try_from(n) == Ok(fmt),
                    "stacks.json: study `{name}`: census: {n} cycles of a full window whose head waits ({c}), but FMT's {c} is {fmt}"
                );
            }
        }
        for m in COMPARED {
            let want = super::error_pp(&st.stacks[m], &st.stacks["reference"], st.cycles);
            let got = st.errors_pp[m];
            ensure!(
                close(got, want),
                "stacks.json: study `{name}`: errors_pp.{m} is {got}, but its stack against the reference gives {want}"
            );
        }
        ensure!(
            st.instructions == r.instructions,
            "stacks.json: study `{name}`: instructions is {}, but each run measures {}",
            st.instructions,
            r.instructions
        );
        for (k, v) in [
            ("stats.cycles", st.stats.cycles),
            ("overlap.cycles", st.overlap.cycles),
        ] {
            ensure!(
                v == st.cycles,
                "stacks.json: study `{name}`: {k} is {v}, not the run's {} cycles",
                st.cycles
            );
        }
        ensure!(
            st.overlap.overlap_cycles <= st.overlap.frontend_cycles.min(st.overlap.backend_cycles)
                && st.overlap.frontend_cycles.max(st.overlap.backend_cycles) <= st.overlap.cycles,
            "stacks.json: study `{name}`: overlap: {} overlapping of {} frontend and {} long-backend cycles of {}: the overlap is more than one side, or a side more than the cycles",
            st.overlap.overlap_cycles,
            st.overlap.frontend_cycles,
            st.overlap.backend_cycles,
            st.overlap.cycles
        );
        ensure!(
            st.stats.instructions == st.instructions,
            "stacks.json: study `{name}`: stats.instructions is {}, not the run's {}",
            st.stats.instructions,
            st.instructions
        );
        check_stats_relations(name, &st.stats)?;
        // the head-wait split adds up to FMT's data-miss counters (absent:
        // no such wait, or a report from before it was counted)
        let hw = &st.stats.head_waits;
        if let (false, Some(fmt)) = (hw.is_zero(), st.stacks.get("fmt")) {
            for (level, split, comp) in [("l1d", &hw.l1d, Comp::L1d), ("l2d", &hw.l2d, Comp::L2d)] {
                ensure!(
                    i64::try_from(split.total()).ok() == Some(fmt[comp as usize]),
                    "stacks.json: study `{name}`: stats.head_waits.{level} adds up to {}, but FMT's {level} is {}",
                    split.total(),
                    fmt[comp as usize]
                );
            }
        }
        let have: std::collections::BTreeSet<&String> = st.ideal_runs.keys().collect();
        ensure!(
            have == names.iter().collect(),
            "stacks.json: study `{name}`: ideal_runs has the runs {have:?}, expected {names:?}"
        );
        // the stacks that follow from other fields: the reference from the
        // idealised runs, the naive ones from the counts and the machine
        let derived = super::reference_stacks(st.cycles, &st.ideal_runs)?
            .into_iter()
            .chain(
                super::naive_stacks(&r.config, &st.stats)
                    .map_err(|e| anyhow::anyhow!("stacks.json: study `{name}`: {e}"))?,
            );
        for (m, want) in derived {
            ensure!(
                st.stacks[&m] == want,
                "stacks.json: study `{name}`: stacks.{m} is {:?}, but {} give {want:?}",
                st.stacks[&m],
                if m.starts_with("reference") {
                    "ideal_runs"
                } else {
                    "the counts in stats and the config"
                }
            );
        }
        for (m, want) in super::penalties_of(&st.stacks, &st.stats) {
            let got = &st.penalties[&m];
            let same = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => close(a, b),
                (a, b) => a.is_none() && b.is_none(),
            };
            ensure!(
                same(got.l1i, want.l1i) && same(got.bpred, want.bpred) && same(got.l2d, want.l2d),
                "stacks.json: study `{name}`: penalties.{m} is {got:?}, but its stack and the counts give {want:?}"
            );
        }
    }
    let runs: usize = r.studies.iter().map(|st| 1 + st.ideal_runs.len()).sum();
    ensure!(
        r.runs == runs,
        "stacks.json: runs is {}, but the studies hold {runs} (each its real run and its idealised runs)",
        r.runs
    );
    let studies = || r.studies.iter();
    for (key, got, want) in [
        ("summary", &r.summary, super::summarise(studies())),
        (
            "summary_workloads",
            &r.summary_workloads,
            super::summarise(studies().filter(|s| s.kind == "workload")),
        ),
        (
            "summary_traces",
            &r.summary_traces,
            super::summarise(studies().filter(|s| s.kind == "trace")),
        ),
    ] {
        if want.is_empty() {
            ensure!(
                got.is_empty(),
                "stacks.json: {key} should be empty: no study is counted in it"
            );
            continue;
        }
        for (m, w) in &want {
            let g = got.get(m);
            for (k, gv, wv) in [
                ("avg_error_pp", g.map(|s| s.avg_error_pp), w.avg_error_pp),
                ("max_error_pp", g.map(|s| s.max_error_pp), w.max_error_pp),
            ] {
                ensure!(
                    gv.is_some_and(|g| close(g, wv)),
                    "stacks.json: {key}.{m}.{k} is {}, but the studies' errors give {wv}",
                    gv.map_or("missing".to_string(), |g| g.to_string())
                );
            }
        }
    }
    Ok(())
}

/// Whether `s` is well-formed XML (the `roxmltree` parser: tags nest and
/// close, attributes are quoted, entities are defined, one root element).
pub fn xml_well_formed(s: &str) -> std::result::Result<(), String> {
    roxmltree::Document::parse(s)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::{close, machine_html, machine_suffix, no_minus_zero, short, METHODS};

    /// `close` forgives a relative difference of 1e-9 (the rounding of a
    /// sum of shares or quotients), measured against the larger value, or
    /// an absolute one of 1e-9 near zero, and nothing more.
    #[test]
    fn close_forgives_one_part_in_a_billion() {
        for (a, b, want) in [
            (1e6, 1e6 * (1.0 + 5e-10), true),
            (1e6, 1e6 * (1.0 + 2e-9), false),
            (-1e6, -1e6 * (1.0 + 5e-10), true),
            (0.0, 5e-10, true),
            (0.0, 2e-9, false),
            (0.5, 0.5 + 5e-10, true),
            (0.5, 0.5 + 2e-9, false),
        ] {
            assert_eq!(close(a, b), want, "{a} {b}");
            assert_eq!(close(b, a), want, "{b} {a}");
        }
    }

    /// Each method's column label in the text tables and charts is its own
    /// (`ref`, `inverse`, `bp-last` for the three reference orders), and a
    /// name that is no method's reads `?`.
    #[test]
    fn each_method_has_its_own_short_label() {
        let labels = METHODS.map(short);
        assert_eq!(
            labels,
            ["ref", "inverse", "bp-last", "fmt", "sfmt", "naive", "nonspec", "power5"]
        );
        assert_eq!(short("reference_standard"), "?");
    }

    /// A report names its machine: nothing extra in the text for the
    /// default, each changed key as its `--set` otherwise, escaped in a page.
    #[test]
    fn a_report_names_its_machine() {
        let mut c = sim::Config::default();
        assert_eq!(machine_suffix(&c, "machine"), "");
        assert!(machine_html(&c).starts_with("the default machine (the paper's Table 2"));
        c.set("core.lsq_entries=32").unwrap();
        c.set("prefetch.kind=stride").unwrap();
        assert_eq!(
            machine_suffix(&c, "machine"),
            "; machine: the default with core.lsq_entries=32, prefetch.kind=stride"
        );
        assert_eq!(
            machine_html(&c),
            "the default machine (the paper's Table 2) with <code>core.lsq_entries=32</code>, \
             <code>prefetch.kind=stride</code>"
        );
    }

    /// A component of a cycle or two below zero prints as 0.0, not -0.0; a
    /// real negative share keeps its sign.
    #[test]
    fn shares_that_round_to_zero_print_without_a_sign() {
        for (x, want) in [
            (-0.04, "0.0"),
            (-0.0, "0.0"),
            (0.04, "0.0"),
            (-0.06, "-0.1"),
            (-3.2, "-3.2"),
        ] {
            assert_eq!(format!("{:.1}", no_minus_zero(x, 1)), want, "{x}");
        }
    }
}
