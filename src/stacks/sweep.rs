//! `cpistack sweep`: the study of `cpistack stacks` repeated on variants of
//! the machine, one configuration key varied at a time from the base machine,
//! to see whether each method's accuracy holds as the machine changes (the
//! paper evaluates one machine only).
//!
//! Output directory: one subdirectory per point (`base`, then `KEY=VALUE` in
//! the order given) holding the whole `stacks` output of that machine;
//! `sweep.csv` with each point's error summary per method, `sweep.svg` (the
//! same as a chart) and `index.html` (both, each point linked). A point whose
//! machine equals an earlier one's (a value that is the base's own) is run
//! once and written under both names.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

use super::output::{check_dir, esc, page_head, short, svg, write_all, OUTPUT_FILES};
use super::{run_study_reusing, sources, Report, Settings, StacksArgs, Summary, COMPARED};

/// Arguments of `cpistack sweep`: `--vary` and everything `stacks` takes.
#[derive(clap::Args, Debug, Clone)]
#[command(mut_arg("out", |a| a.default_value("sweep").help("Output directory (created if missing): one subdirectory per point, sweep.csv, sweep.svg and index.html")))]
#[command(mut_arg("check_only", |a| a.help("Run nothing: check that `--out` holds a complete sweep (every point's `stacks` outputs, as `stacks --check-only` checks them, and a `sweep.csv`, chart and page that hold their summaries; the only other option it takes is `--out`)")))]
pub struct SweepArgs {
    /// A configuration key and the values it takes, `KEY=V1,V2,...` (e.g.
    /// `core.rob_entries=64,256`; keys as `cpistack config --print` shows
    /// them). Repeatable; each key is varied alone, the others keep the base
    /// machine's values (defaults, `--config`, `--set`).
    #[arg(long = "vary", value_name = "KEY=V1,V2,...")]
    pub vary: Vec<String>,
    #[command(flatten)]
    pub stacks: StacksArgs,
}

/// One machine of the sweep.
#[derive(Clone, Debug)]
pub struct Point {
    /// `base`, or `KEY=VALUE`: the point's name and its directory.
    pub name: String,
    /// The key varied and its value (none for the base).
    pub set: Option<(String, String)>,
    pub cfg: sim::Config,
}

/// Columns of `sweep.csv`.
pub const SWEEP_CSV_HEADER: &str =
    "point,key,value,scope,method,avg_error_pp,max_error_pp,worst_study";

/// The points of a sweep: the base machine, then each `--vary` value in order.
/// Every point is built and validated before anything runs; an error names
/// the `--vary` option and the value.
pub fn points(
    base: &sim::Config,
    vary: &[String],
    set: &[String],
    ideal: Option<&str>,
) -> Result<Vec<Point>> {
    let mut out = vec![Point {
        name: "base".into(),
        set: None,
        cfg: base.clone(),
    }];
    let base_warnings = base.warnings();
    let mut keys: Vec<&str> = Vec::new();
    for v in vary {
        let Some((key, values)) = v.split_once('=') else {
            bail!("--vary `{v}`: expected KEY=V1,V2,... (e.g. core.rob_entries=64,256)");
        };
        let key = key.trim();
        ensure!(!key.is_empty(), "--vary `{v}`: no key before `=`");
        ensure!(
            !keys.contains(&key),
            "--vary: `{key}` is varied twice; give its values in one --vary"
        );
        keys.push(key);
        if let Some(s) = set.iter().find(|s| crate::run::set_key(s) == Some(key)) {
            bail!("--vary `{v}`: `{key}` is also fixed by --set `{s}`; give one of them");
        }
        if let (Some(l), Some(x)) = (ideal, key.strip_prefix("ideal.")) {
            let on = serde_json::to_value(sim::Ideal::parse_list(l)?)?;
            ensure!(
                on[x] != true,
                "--vary `{v}`: `{key}` is also fixed by --ideal {l}; give one of them"
            );
        }
        let values: Vec<&str> = values.split(',').map(str::trim).collect();
        for (i, value) in values.iter().enumerate() {
            ensure!(!value.is_empty(), "--vary `{v}`: an empty value");
            ensure!(
                !values[..i].contains(value),
                "--vary `{v}`: the value `{value}` is given twice"
            );
            // the name is a directory name: nothing that would leave `--out`
            ensure!(
                !value.contains(['/', '\\', '\0']) && !key.contains(['/', '\\', '\0']),
                "--vary `{v}`: a key or value with a path separator cannot name a directory"
            );
            let given = format!("{key}={value}");
            let mut cfg = base.clone();
            cfg.set(&given)
                .and_then(|()| cfg.validate())
                .with_context(|| format!("--vary `{v}`: the point {given}"))?;
            // the point is named by the value as the configuration holds it
            // (`064` is `64`, `"stride"` is `stride`): one value, one name
            let value = cfg.value_text(key)?;
            let name = format!("{key}={value}");
            if let Some(p) = out.iter().find(|p| p.name == name) {
                bail!("--vary `{v}`: `{given}` is the point {} again", p.name);
            }
            for w in cfg.warnings() {
                if !base_warnings.contains(&w) {
                    eprintln!("warning: --vary point {name}: {w}");
                }
            }
            out.push(Point {
                name,
                set: Some((key.to_string(), value)),
                cfg,
            });
        }
    }
    ensure!(
        out.len() > 1,
        "nothing to vary: give at least one --vary KEY=V1,V2,..."
    );
    Ok(out)
}

/// The studies each summary of `sweep.csv` is over: `all`, `workloads`,
/// `traces` (those with at least one study).
fn scopes(
    r: &Report,
) -> Vec<(
    &'static str,
    &std::collections::BTreeMap<String, Summary>,
    Option<&str>,
)> {
    let mut v = Vec::new();
    for (scope, sum, kind) in [
        ("all", &r.summary, None),
        ("workloads", &r.summary_workloads, Some("workload")),
        ("traces", &r.summary_traces, Some("trace")),
    ] {
        if !sum.is_empty() {
            v.push((scope, sum, kind));
        }
    }
    v
}

/// The study of `kind` (any when none) with method `m`'s largest error (the
/// first such in the report's order).
fn worst<'a>(r: &'a Report, m: &str, kind: Option<&str>) -> &'a str {
    let mut best: Option<(&str, f64)> = None;
    for st in r
        .studies
        .iter()
        .filter(|s| kind.is_none() || kind == Some(s.kind.as_str()))
    {
        let e = st.errors_pp[m];
        if !matches!(best, Some((_, b)) if b >= e) {
            best = Some((&st.name, e));
        }
    }
    best.map(|b| b.0).unwrap_or("")
}

/// The subdirectories of `dir` that hold a `stacks` report (a
/// `stacks.json`), by name, sorted: the points a sweep directory has.
fn report_dirs(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("stacks.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

/// What every point of a sweep shares (see [`same_study`]).
type Study = (Vec<(String, String, Option<u64>)>, u64, u64);

/// `sweep.csv`: per point, scope and compared method, the average and
/// maximum error and the study with the maximum.
pub fn sweep_csv(points: &[(Point, Report)]) -> String {
    let mut s = String::from(SWEEP_CSV_HEADER);
    s.push('\n');
    for (p, r) in points {
        let (k, v) = p.set.clone().unwrap_or_default();
        for (scope, sum, kind) in scopes(r) {
            for m in COMPARED {
                let x = &sum[m];
                let _ = writeln!(
                    s,
                    "{},{k},{v},{scope},{m},{:.3},{:.3},{}",
                    p.name,
                    x.avg_error_pp,
                    x.max_error_pp,
                    worst(r, m, kind)
                );
            }
        }
    }
    s
}

/// The text table: per point, each method's average / maximum error over all
/// studies, and FMT's worst study.
pub fn text(points: &[(Point, Report)]) -> String {
    let mut s = String::new();
    let Some((_, r0)) = points.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "Sweep: {} instructions after {} of warm-up per run, {} {} per point{}; error = max over components of |share - reference share| (pp) against the standard-order reference, average / maximum over the studies",
        r0.instructions,
        r0.warmup,
        r0.studies.len(),
        if r0.studies.len() == 1 { "study" } else { "studies" },
        super::output::machine_suffix(&r0.config, "base machine")
    );
    let w = points
        .iter()
        .map(|(p, _)| p.name.len())
        .max()
        .unwrap_or(0)
        .max(24);
    let _ = write!(s, "{:<w$}", "point");
    for m in COMPARED {
        let _ = write!(s, " {:>17}", short(m));
    }
    let _ = writeln!(s, "  fmt worst");
    for (p, r) in points {
        let _ = write!(s, "{:<w$}", p.name);
        for m in COMPARED {
            let x = &r.summary[m];
            let _ = write!(
                s,
                " {:>17}",
                format!("{:.3} / {:.3}", x.avg_error_pp, x.max_error_pp)
            );
        }
        let _ = writeln!(s, "  {}", worst(r, "fmt", None));
    }
    for (p, r) in points {
        if let Some(w) = super::output::saturation_warning(r) {
            let _ = writeln!(s, "warning: point {}: {w}", p.name);
        }
    }
    s.push_str(&spread_text(points));
    s
}

/// The fewest values of one key that get a spread table.
pub const SPREAD_MIN_VALUES: usize = 3;

/// How far the studies move over the base and one key's points.
pub struct Spread {
    pub key: String,
    /// The key's values whose machine is not the base's or an earlier
    /// value's (each machine counts once).
    pub values: usize,
    /// Per study, in the base's order.
    pub rows: Vec<SpreadRow>,
    /// Per scope (`all studies`, `the workloads`, `the traces`; `all`
    /// left out when it repeats the only other): each compared method's
    /// average error, lowest and highest.
    pub scopes: Vec<(String, Vec<MethodRange>)>,
}

/// A compared method's name and its lowest and highest value.
pub type MethodRange = (&'static str, f64, f64);

/// One study's spread.
pub struct SpreadRow {
    pub study: String,
    pub cpi: (f64, f64),
    /// Standard deviation over mean of the CPI, in per cent.
    pub cpi_cv_pct: f64,
    pub fmt: (f64, f64),
    pub sfmt: (f64, f64),
}

fn range(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// For each key varied over at least [`SPREAD_MIN_VALUES`] values, how far
/// each study moves over the base and those points: its CPI (lowest,
/// highest, coefficient of variation) and FMT's and sFMT's error (lowest,
/// highest), then each scope's average errors. Over `layout.seed` values
/// this is the noise a placement in memory puts on every figure (Weaver and
/// McKee; docs/accuracy.md).
pub fn spreads(points: &[(Point, Report)]) -> Vec<Spread> {
    let mut out = Vec::new();
    let Some((base_point, base)) = points.first() else {
        return out;
    };
    let mut keys: Vec<&str> = Vec::new();
    for (p, _) in points {
        if let Some((k, _)) = &p.set {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    for key in keys {
        // each machine once: a value that is the base's own (or an earlier
        // value's machine) is the same run under another name
        let mut machines: Vec<&sim::Config> = vec![&base_point.cfg];
        let mut group: Vec<&Report> = vec![base];
        for (p, r) in points {
            if p.set.as_ref().is_some_and(|(k, _)| k == key) && !machines.contains(&&p.cfg) {
                machines.push(&p.cfg);
                group.push(r);
            }
        }
        if group.len() <= SPREAD_MIN_VALUES {
            continue;
        }
        let mut rows = Vec::new();
        for st in &base.studies {
            let same: Vec<&super::Study> = group
                .iter()
                .filter_map(|r| r.studies.iter().find(|x| x.name == st.name))
                .collect();
            let cpi: Vec<f64> = same.iter().map(|x| x.cpi).collect();
            let mean = cpi.iter().sum::<f64>() / cpi.len() as f64;
            let sd =
                (cpi.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / cpi.len() as f64).sqrt();
            let err = |m: &str| range(&same.iter().map(|x| x.errors_pp[m]).collect::<Vec<_>>());
            rows.push(SpreadRow {
                study: st.name.clone(),
                cpi: range(&cpi),
                cpi_cv_pct: 100.0 * sd / mean,
                fmt: err("fmt"),
                sfmt: err("sfmt"),
            });
        }
        let sc = scopes(base);
        // `all` repeats the one other scope when there is only one
        let skip_all = sc.len() == 2;
        let mut scs = Vec::new();
        for (scope, _, kind) in sc {
            if skip_all && scope == "all" {
                continue;
            }
            let label = if scope == "all" {
                "all studies".to_string()
            } else {
                format!("the {scope}")
            };
            let per = COMPARED
                .iter()
                .map(|&m| {
                    let e: Vec<f64> = group
                        .iter()
                        .filter_map(|r| {
                            scopes(r)
                                .into_iter()
                                .find(|x| x.2 == kind)
                                .map(|x| x.1[m].avg_error_pp)
                        })
                        .collect();
                    let (lo, hi) = range(&e);
                    (m, lo, hi)
                })
                .collect();
            scs.push((label, per));
        }
        out.push(Spread {
            key: key.to_string(),
            values: group.len() - 1,
            rows,
            scopes: scs,
        });
    }
    out
}

/// [`spreads`] as text: a table per key, then a line per scope.
pub fn spread_text(points: &[(Point, Report)]) -> String {
    let mut s = String::new();
    for sp in spreads(points) {
        let _ = writeln!(
            s,
            "\nSpread over the base and the {} values of {} (lowest .. highest; CV = standard deviation / mean of the CPI):",
            sp.values, sp.key
        );
        let w = sp
            .rows
            .iter()
            .map(|r| r.study.len())
            .max()
            .unwrap_or(0)
            .max(8);
        let _ = writeln!(
            s,
            "{:<w$} {:>17} {:>6} {:>15} {:>15}",
            "study", "CPI", "CV %", "fmt error pp", "sfmt error pp"
        );
        for r in &sp.rows {
            let _ = writeln!(
                s,
                "{:<w$} {:>17} {:>6.2} {:>15} {:>15}",
                r.study,
                format!("{:.4} .. {:.4}", r.cpi.0, r.cpi.1),
                r.cpi_cv_pct,
                format!("{:.2} .. {:.2}", r.fmt.0, r.fmt.1),
                format!("{:.2} .. {:.2}", r.sfmt.0, r.sfmt.1),
            );
        }
        for (label, per) in &sp.scopes {
            let parts: Vec<String> = per
                .iter()
                .map(|(m, lo, hi)| format!("{} {lo:.3} .. {hi:.3}", short(m)))
                .collect();
            let _ = writeln!(s, "average error over {label}: {}", parts.join("; "));
        }
    }
    s
}

/// [`spreads`] as HTML: a heading, a table per key and its scopes' line.
fn spread_html(points: &[(Point, Report)]) -> String {
    let mut s = String::new();
    for sp in spreads(points) {
        let _ = writeln!(
            s,
            "<h2>Spread over the base and the {} values of <code>{}</code></h2>\n\
             <p>How far each study moves over these {} machines: lowest .. highest \
             (CV: the CPI's standard deviation over its mean).{}</p>",
            sp.values,
            esc(&sp.key),
            sp.values + 1,
            if sp.key.starts_with("layout.") {
                " The machines differ only in where the program sits in memory: this is \
                 what its place alone does to each figure."
            } else {
                ""
            }
        );
        s.push_str(
            "<table><tr><th>study</th><th>CPI</th><th>CV %</th>\
             <th>fmt error pp</th><th>sfmt error pp</th></tr>\n",
        );
        for r in &sp.rows {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{:.4} .. {:.4}</td><td>{:.2}</td><td>{:.2} .. {:.2}</td><td>{:.2} .. {:.2}</td></tr>",
                esc(&r.study),
                r.cpi.0,
                r.cpi.1,
                r.cpi_cv_pct,
                r.fmt.0,
                r.fmt.1,
                r.sfmt.0,
                r.sfmt.1
            );
        }
        s.push_str("</table>\n");
        for (label, per) in &sp.scopes {
            let parts: Vec<String> = per
                .iter()
                .map(|(m, lo, hi)| format!("{m} {lo:.3} .. {hi:.3}"))
                .collect();
            let _ = writeln!(
                s,
                "<p>Average error over {}: {}.</p>",
                esc(label),
                esc(&parts.join("; "))
            );
        }
    }
    s
}

/// The files of a sweep beside its points' directories.
pub const SWEEP_FILES: [&str; 3] = ["sweep.csv", "sweep.svg", "index.html"];

/// `sweep.svg`: each method's average and maximum error per point.
pub fn sweep_svg(points: &[(Point, Report)]) -> String {
    let v: Vec<(&str, &Report)> = points.iter().map(|(p, r)| (p.name.as_str(), r)).collect();
    svg::sweep(&v)
}

/// `index.html`: the sweep's table and chart, each point linked to its own
/// report.
pub fn sweep_html(points: &[(Point, Report)]) -> String {
    let mut s = page_head("CPI-stack accuracy across machines");
    s.push_str("<h1>CPI-stack accuracy across machines</h1>\n");
    let Some((_, r0)) = points.first() else {
        s.push_str("</body></html>\n");
        return s;
    };
    let _ = writeln!(
        s,
        "<p>The study of <code>cpistack stacks</code> on variants of the machine: the base \
         machine, then one configuration key changed at a time. For each machine, each \
         method's error (the largest difference, over the components, between its share of \
         the cycles and the standard-order reference's, in percentage points), averaged \
         and maximised over the {} {} ({} instructions per run after {} of warm-up). Each \
         point links to its own report. The base machine is {}.</p>",
        r0.studies.len(),
        if r0.studies.len() == 1 {
            "study"
        } else {
            "studies"
        },
        r0.instructions,
        r0.warmup,
        super::output::machine_html(&r0.config)
    );
    s.push_str("<table><tr><th>machine</th>");
    for m in COMPARED {
        let _ = write!(s, "<th>{m}</th>");
    }
    s.push_str("<th>FMT's worst study</th></tr>\n");
    for (p, r) in points {
        let _ = write!(
            s,
            "<tr><td><a href=\"{}/index.html\">{}</a></td>",
            esc(&p.name),
            esc(&p.name)
        );
        for m in COMPARED {
            let x = &r.summary[m];
            let _ = write!(s, "<td>{:.3} / {:.3}</td>", x.avg_error_pp, x.max_error_pp);
        }
        let _ = writeln!(s, "<td>{}</td></tr>", esc(worst(r, "fmt", None)));
    }
    s.push_str("</table>\n");
    for (p, r) in points {
        if let Some(w) = super::output::saturation_warning(r) {
            let _ = writeln!(
                s,
                "<p {}><b>Warning, point {}:</b> {}</p>",
                super::output::WARN_STYLE,
                esc(&p.name),
                esc(&w)
            );
        }
    }
    s.push_str(
        "<p>avg / max over the studies. The naive methods' bars are clipped at \
         40 points (the red label gives the value).</p>\n\
         <object data=\"sweep.svg\" type=\"image/svg+xml\" aria-label=\"error per machine\">error per machine (sweep.svg)</object>\n",
    );
    s.push_str(&spread_html(points));
    s.push_str("</body></html>\n");
    s
}

/// `cpistack sweep`.
pub fn cmd(args: &SweepArgs) -> Result<()> {
    let a = &args.stacks;
    if a.check_only {
        ensure!(
            args.vary.is_empty(),
            "--check-only takes no --vary: the points are read from sweep.csv"
        );
        let n = check_sweep(&a.out)?;
        println!(
            "{}: complete, well-formed and consistent ({n} points)",
            a.out.display()
        );
        return Ok(());
    }
    let base = a.machine.build()?;
    let pts = points(
        &base,
        &args.vary,
        &a.machine.set,
        a.machine.ideal.as_deref(),
    )?;
    let srcs = sources(a)?;
    // no output may be an input, a trace or the --config file, the points'
    // files included
    for t in (srcs.iter())
        .filter_map(|s| match s {
            super::Source::Trace(t) => Some(t),
            super::Source::Workload { .. } => None,
        })
        .chain(&a.machine.config)
    {
        for f in SWEEP_FILES {
            crate::paths::refuse_overwrite(t, &a.out.join(f), "--out")?;
        }
        for p in &pts {
            for f in OUTPUT_FILES {
                crate::paths::refuse_overwrite(t, &a.out.join(&p.name).join(f), "--out")?;
            }
        }
    }
    // an earlier sweep's points beside this one's would read as one sweep
    if a.out.is_dir() {
        let old: Vec<String> = report_dirs(&a.out)?
            .into_iter()
            .filter(|n| !pts.iter().any(|p| &p.name == n))
            .collect();
        ensure!(
            old.is_empty(),
            "--out {} holds points that this sweep does not have ({}): remove them or give another --out",
            a.out.display(),
            old.join(", ")
        );
    }
    // every directory made, so that a failed sweep leaves none of them empty
    let mut made = vec![crate::paths::create_dir_undoable(&a.out, "--out")?];
    let r = (|| {
        for p in &pts {
            made.push(crate::paths::create_dir_undoable(
                &a.out.join(&p.name),
                "--out",
            )?);
        }
        run_points(args, &pts, &srcs)
    })();
    if r.is_err() {
        for m in made.into_iter().rev() {
            m.undo();
        }
    }
    r
}

fn run_points(args: &SweepArgs, pts: &[Point], srcs: &[super::Source]) -> Result<()> {
    let a = &args.stacks;
    for f in SWEEP_FILES {
        crate::paths::output_file(&a.out.join(f), "--out")?;
    }
    for p in pts {
        for f in OUTPUT_FILES {
            crate::paths::output_file(&a.out.join(&p.name).join(f), "--out")?;
        }
    }
    // points with the machine of an earlier one are not run again
    let first_of: Vec<usize> = (0..pts.len())
        .map(|i| {
            (0..=i)
                .find(|&j| pts[j].cfg == pts[i].cfg)
                .expect("i itself")
        })
        .collect();
    let distinct = first_of
        .iter()
        .enumerate()
        .filter(|(i, f)| *i == **f)
        .count();
    let bar =
        super::progress_bar("sweep [{bar:40}] {pos}/{len} runs, {msg} ({elapsed}, eta {eta})");
    let start = std::time::Instant::now();
    let mut done: Vec<(Point, Report)> = Vec::new();
    // runs made (a point that differs from an earlier one only in keys that
    // change no timing takes that point's idealised runs), distinct points run
    let (mut runs, mut point) = (0, 0);
    let reuse = super::IdealRuns::default();
    for (i, p) in pts.iter().enumerate() {
        let report = if first_of[i] == i {
            bar.set_message(p.name.clone());
            let s = Settings {
                cfg: p.cfg.clone(),
                instructions: a.instructions,
                warmup: a.warmup,
            };
            let before = runs;
            let made = std::sync::atomic::AtomicUsize::new(0);
            let r = run_study_reusing(
                srcs,
                &s,
                a.jobs.unwrap_or(0),
                &|n, total| {
                    // (the length a guess: this point's runs for every point left)
                    bar.set_length((before + total * (distinct - point)) as u64);
                    bar.set_position((before + n) as u64);
                    // (the calls may come out of order: the largest is the count)
                    made.fetch_max(n, std::sync::atomic::Ordering::Relaxed);
                },
                &reuse,
            )
            .with_context(|| format!("point {}", p.name))?;
            runs += made.into_inner();
            point += 1;
            r
        } else {
            done[first_of[i]].1.clone()
        };
        let dir = a.out.join(&p.name);
        crate::paths::create_dir(&dir, "--out")?;
        write_all(&report, &dir)?;
        check_dir(&dir).with_context(|| format!("point {}", p.name))?;
        done.push((p.clone(), report));
    }
    bar.finish_and_clear();
    for (f, text) in SWEEP_FILES.iter().zip(render(&done)) {
        let p = a.out.join(f);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    check_sweep(&a.out)?;
    print!("{}", text(&done));
    if a.detail {
        for (p, r) in &done {
            print!("\npoint {}:\n{}", p.name, super::output::detail_text(r));
        }
    }
    eprintln!(
        "{} points ({distinct} {}), {runs} runs in {:.1} s; wrote {} and one directory per point to {}",
        done.len(),
        if distinct == 1 { "machine" } else { "machines" },
        start.elapsed().as_secs_f64(),
        SWEEP_FILES.join(", "),
        a.out.display()
    );
    Ok(())
}

/// The text of each of [`SWEEP_FILES`], in that order.
fn render(points: &[(Point, Report)]) -> [String; 3] {
    [sweep_csv(points), sweep_svg(points), sweep_html(points)]
}

/// Check a sweep directory: `sweep.csv` is well-formed and starts with the
/// base point, each point's directory passes [`check_dir`], each row is
/// its point's summary (and worst study) as `stacks.json` holds it, each
/// point is the base machine with its key changed and the same study, and
/// `sweep.svg` and `index.html` are what the points render. The number of
/// points.
pub fn check_sweep(dir: &Path) -> Result<usize> {
    let p = dir.join("sweep.csv");
    let text = crate::paths::read_text_capped(&p, crate::paths::MAX_REPORT_BYTES)?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("");
    ensure!(
        header == SWEEP_CSV_HEADER,
        "sweep.csv: line 1 is `{header}`, expected `{SWEEP_CSV_HEADER}`"
    );
    // the rows, grouped by point in file order
    // (line number, fields) per point, in file order
    type Rows<'a> = Vec<(usize, Vec<&'a str>)>;
    let mut groups: Vec<(String, Rows)> = Vec::new();
    for (i, line) in lines.enumerate() {
        let at = i + 2;
        let f: Vec<&str> = line.split(',').collect();
        ensure!(
            f.len() == 8,
            "sweep.csv: line {at}: {} fields, expected 8 ({SWEEP_CSV_HEADER})",
            f.len()
        );
        match groups.last_mut() {
            Some((name, rows)) if name == f[0] => rows.push((at, f)),
            _ => {
                ensure!(
                    !groups.iter().any(|(n, _)| n == f[0]),
                    "sweep.csv: line {at}: the rows of point `{}` are not together",
                    f[0]
                );
                groups.push((f[0].to_string(), vec![(at, f)]));
            }
        }
    }
    ensure!(
        groups.first().is_some_and(|(n, _)| n == "base"),
        "sweep.csv: no rows, or the first point is not `base`"
    );
    ensure!(
        groups.len() > 1,
        "sweep.csv: only the base point (a sweep varies at least one key)"
    );
    // a report beside the points that sweep.csv does not list: a point of
    // an earlier sweep, or one whose rows were removed
    let extra: Vec<String> = report_dirs(dir)?
        .into_iter()
        .filter(|n| !groups.iter().any(|(g, _)| g == n))
        .collect();
    ensure!(
        extra.is_empty(),
        "{}: {} not in sweep.csv (a point of an earlier sweep, or one whose rows were removed)",
        dir.display(),
        extra.join(", ")
    );
    let mut base_cfg: Option<(sim::Config, Study)> = None;
    let mut points: Vec<(Point, Report)> = Vec::new();
    for (name, rows) in &groups {
        let sub: PathBuf = dir.join(name);
        ensure!(
            !name.is_empty() && !name.contains(['/', '\\']) && name != "." && name != "..",
            "sweep.csv: line {}: `{name}` cannot name a point's directory",
            rows[0].0
        );
        check_dir(&sub).with_context(|| format!("point {name} ({})", sub.display()))?;
        let text = crate::paths::read_text_capped(
            &sub.join("stacks.json"),
            crate::paths::MAX_REPORT_BYTES,
        )?;
        let r: Report =
            serde_json::from_str(&text).with_context(|| format!("point {name}: stacks.json"))?;
        let point = Point {
            name: name.clone(),
            set: (name != "base").then(|| {
                let (k, v) = name.split_once('=').unwrap_or((name, ""));
                (k.to_string(), v.to_string())
            }),
            cfg: r.config.clone(),
        };
        let want = sweep_csv(&[(point.clone(), r.clone())]);
        let want: Vec<&str> = want.lines().skip(1).collect();
        ensure!(
            rows.len() == want.len(),
            "sweep.csv: point `{name}` has {} rows, its stacks.json gives {}",
            rows.len(),
            want.len()
        );
        for ((at, got), w) in rows.iter().zip(&want) {
            let got = got.join(",");
            ensure!(
                got == *w,
                "sweep.csv: line {at} is `{got}`, but {}/stacks.json gives `{w}`",
                name
            );
        }
        // a varied point differs from the base in its key only, and studies
        // the same sources for as long
        match &base_cfg {
            None => base_cfg = Some((r.config.clone(), same_study(&r))),
            Some((b, study)) => {
                ensure!(
                    same_study(&r) == *study,
                    "point {name}: {name}/stacks.json studies other sources, instructions or warm-up than base/stacks.json"
                );
                let (k, v) = name.split_once('=').with_context(|| {
                    format!("sweep.csv: point `{name}`: expected base or KEY=VALUE")
                })?;
                let mut expect = b.clone();
                expect
                    .set(&format!("{k}={v}"))
                    .with_context(|| format!("sweep.csv: point `{name}`"))?;
                ensure!(
                    expect == r.config,
                    "point {name}: {name}/stacks.json's machine is not the base machine with {name}"
                );
            }
        }
        points.push((point, r));
    }
    // the chart and the page are what the points render
    for (f, want) in SWEEP_FILES.iter().zip(render(&points)).skip(1) {
        let p = dir.join(f);
        let got = crate::paths::read_text_capped(&p, crate::paths::MAX_REPORT_BYTES)?;
        ensure!(
            got == want,
            "{f}: not what the points' stacks.json render (a chart or page of another sweep, or edited)"
        );
    }
    Ok(groups.len())
}

/// What every point of a sweep shares: the sources (name, kind, seed), the
/// instructions and the warm-up.
fn same_study(r: &Report) -> Study {
    let src = r
        .studies
        .iter()
        .map(|s| (s.name.clone(), s.kind.clone(), s.seed))
        .collect();
    (src, r.instructions, r.warmup)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(vary: &[&str], set: &[&str]) -> Result<Vec<Point>> {
        pts_ideal(vary, set, None)
    }

    fn pts_ideal(vary: &[&str], set: &[&str], ideal: Option<&str>) -> Result<Vec<Point>> {
        let vary: Vec<String> = vary.iter().map(|s| s.to_string()).collect();
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        points(&sim::Config::default(), &vary, &set, ideal)
    }

    /// A point is named by its value as the configuration holds it, so one
    /// value spelled two ways is one point, refused the second time.
    #[test]
    fn points_are_named_by_the_value_held() {
        let p = pts(&["core.rob_entries=064", "prefetch.kind=\"stride\""], &[]).unwrap();
        assert_eq!(p[1].name, "core.rob_entries=64");
        assert_eq!(p[2].name, "prefetch.kind=stride");
        assert_eq!(p[2].set, Some(("prefetch.kind".into(), "stride".into())));
        let e = pts(&["core.rob_entries=64,064"], &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--vary `core.rob_entries=64,064`: `core.rob_entries=064` is the point core.rob_entries=64 again"
        );
        let e = pts(&["prefetch.kind=stride,\"stride\""], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is the point prefetch.kind=stride again"), "{e}");
        // an idealisation fixed by --ideal is not varied
        let e = pts_ideal(&["ideal.l1d=false"], &[], Some("l1d,bpred"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("also fixed by --ideal l1d,bpred"), "{e}");
        assert!(pts_ideal(&["ideal.l2d=true"], &[], Some("l1d")).is_ok());
    }

    #[test]
    fn points_are_the_base_then_each_value_in_order() {
        let p = pts(&["core.rob_entries= 64, 256", "memory_latency=100"], &[]).unwrap();
        let names: Vec<&str> = p.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "base",
                "core.rob_entries=64",
                "core.rob_entries=256",
                "memory_latency=100"
            ]
        );
        assert_eq!(p[0].cfg, sim::Config::default());
        assert_eq!(p[2].cfg.core.rob_entries, 256);
        assert_eq!(p[3].cfg.memory_latency, 100);
        // each point differs from the base in its key only
        let mut c = sim::Config::default();
        c.core.rob_entries = 64;
        assert_eq!(p[1].cfg, c);
        assert_eq!(
            p[1].set,
            Some(("core.rob_entries".to_string(), "64".to_string()))
        );
    }

    /// A report of four studies, each method's error the same: `w1` 2 pp,
    /// the trace `t1` 5 pp, `w2` and `w3` 3 pp each.
    fn four_studies() -> Report {
        let study = |name: &str, kind: &str, e: f64| super::super::Study {
            name: name.into(),
            kind: kind.into(),
            seed: (kind == "workload").then_some(1),
            instructions: 1000,
            cycles: 2000,
            cpi: 2.0,
            stacks: Default::default(),
            errors_pp: COMPARED.iter().map(|m| (m.to_string(), e)).collect(),
            penalties: Default::default(),
            overlap: Default::default(),
            ideal_runs: Default::default(),
            stats: Default::default(),
            saturated: Vec::new(),
            census: Vec::new(),
        };
        let studies = vec![
            study("w1", "workload", 2.0),
            study("t1", "trace", 5.0),
            study("w2", "workload", 3.0),
            study("w3", "workload", 3.0),
        ];
        let of = |kind: &str| super::super::summarise(studies.iter().filter(|s| s.kind == kind));
        Report {
            instructions: 1000,
            warmup: 500,
            config: sim::Config::default(),
            summary: super::super::summarise(studies.iter()),
            summary_workloads: of("workload"),
            summary_traces: of("trace"),
            studies,
            runs: 0,
            seconds: 0.0,
        }
    }

    fn base_and_latency(r: &Report) -> Vec<(Point, Report)> {
        let base = Point {
            name: "base".into(),
            set: None,
            cfg: r.config.clone(),
        };
        let lat = Point {
            name: "memory_latency=120".into(),
            set: Some(("memory_latency".into(), "120".into())),
            cfg: r.config.clone(),
        };
        vec![(base, r.clone()), (lat, r.clone())]
    }

    /// A key of three values or more gets a spread table over the base and
    /// its points: per study its CPI's and each unit's error's lowest and
    /// highest, then each scope's average errors; a key of fewer values none.
    #[test]
    fn a_key_of_three_values_gets_the_spread_of_every_study_over_them() {
        let base = four_studies();
        let mut pts = base_and_latency(&base);
        for (k, (cpi, e)) in [(0.5, 1.0), (3.0, 4.0), (2.5, 9.0)].into_iter().enumerate() {
            let mut cfg = base.config.clone();
            cfg.layout.seed = k as u64 + 1;
            let mut r = base.clone();
            r.studies[2].cpi = cpi;
            r.studies[2].errors_pp.insert("sfmt".into(), e);
            r.summary = super::super::summarise(r.studies.iter());
            r.summary_workloads =
                super::super::summarise(r.studies.iter().filter(|s| s.kind == "workload"));
            pts.push((
                Point {
                    name: format!("layout.seed={}", k + 1),
                    set: Some(("layout.seed".into(), format!("{}", k + 1))),
                    cfg,
                },
                r,
            ));
        }
        let t = spread_text(&pts);
        assert!(
            !t.contains("memory_latency"),
            "a key of one value got a table:\n{t}"
        );
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[1].starts_with("Spread over the base and the 3 values of layout.seed"),
            "{t}"
        );
        // w2's CPI 2.0, 0.5, 3.0, 2.5: mean 2.0, standard deviation 0.935
        let w2: Vec<&str> = lines[5].split_whitespace().collect();
        assert_eq!(
            w2,
            ["w2", "0.5000", "..", "3.0000", "46.77", "3.00", "..", "3.00", "1.00", "..", "9.00"],
            "{t}"
        );
        let w1: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(w1[1..6], ["2.0000", "..", "2.0000", "0.00", "2.00"], "{t}");
        // the workloads' sFMT average: (2 + 1 + 3) / 3 = 2 .. (2 + 9 + 3) / 3
        assert!(
            t.contains(
                "average error over the workloads: fmt 2.667 .. 2.667; sfmt 2.000 .. 4.667;"
            ),
            "{t}"
        );
        assert!(
            t.contains("average error over all studies: fmt 3.250 .. 3.250;"),
            "{t}"
        );
        assert!(
            spread_text(&pts[..4]).is_empty(),
            "two values of a key got a table"
        );
        // the page holds the same table
        let page = sweep_html(&pts);
        for want in [
            "<h2>Spread over the base and the 3 values of <code>layout.seed</code></h2>",
            "<tr><td>w2</td><td>0.5000 .. 3.0000</td><td>46.77</td><td>3.00 .. 3.00</td><td>1.00 .. 9.00</td></tr>",
            "<p>Average error over the workloads: fmt 2.667 .. 2.667; sfmt 2.000 .. 4.667;",
        ] {
            assert!(page.contains(want), "no `{want}` in the page:\n{page}");
        }
        assert!(
            !sweep_html(&pts[..4]).contains("Spread"),
            "two values of a key got a table"
        );
        // a value whose machine is the base's, or an earlier value's, is
        // not a machine of its own: it is not counted twice
        let mut with_same = pts[..4].to_vec();
        for (name, cfg) in [
            ("layout.seed=0", base.config.clone()),
            ("again", pts[3].0.cfg.clone()),
        ] {
            with_same.push((
                Point {
                    name: name.into(),
                    set: Some(("layout.seed".into(), "0".into())),
                    cfg,
                },
                base.clone(),
            ));
        }
        assert!(
            spread_text(&with_same).is_empty(),
            "{}",
            spread_text(&with_same)
        );
        with_same.push(pts[4].clone());
        let t = spread_text(&with_same);
        assert!(t.contains("the 3 values of layout.seed"), "{t}");
    }

    /// Each row names the study of its scope with the method's largest
    /// error, the first of two equal ones: over all studies the trace, over
    /// the workloads `w2` (not `w3`, as large, nor the trace).
    #[test]
    fn the_worst_study_of_a_scope_is_its_first_with_the_largest_error() {
        let csv = sweep_csv(&base_and_latency(&four_studies()));
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], SWEEP_CSV_HEADER);
        // per point: three scopes of the seven compared methods
        assert_eq!(lines.len(), 1 + 2 * 3 * COMPARED.len());
        for want in [
            "base,,,all,fmt,3.250,5.000,t1",
            "base,,,workloads,fmt,2.667,3.000,w2",
            "base,,,traces,fmt,5.000,5.000,t1",
            "base,,,workloads,power5,2.667,3.000,w2",
            "memory_latency=120,memory_latency,120,all,sfmt,3.250,5.000,t1",
            "memory_latency=120,memory_latency,120,workloads,naive,2.667,3.000,w2",
        ] {
            assert!(lines.contains(&want), "no row `{want}` in\n{csv}");
        }
        let r = four_studies();
        assert_eq!(worst(&r, "fmt", None), "t1");
        assert_eq!(worst(&r, "fmt", Some("workload")), "w2");
        assert_eq!(worst(&r, "fmt", Some("trace")), "t1");
    }

    /// The text table: the study's size, then per point each method's
    /// average / maximum over all studies and FMT's worst study.
    #[test]
    fn the_text_table_has_a_row_per_point_with_every_method() {
        let t = text(&base_and_latency(&four_studies()));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(
            lines[0].starts_with(
                "Sweep: 1000 instructions after 500 of warm-up per run, 4 studies per point; error = "
            ),
            "{t}"
        );
        assert!(lines[1].starts_with("point ") && lines[1].ends_with("  fmt worst"));
        let cells = "     3.250 / 5.000".repeat(COMPARED.len());
        assert_eq!(lines[2], format!("base{}{cells}  t1", " ".repeat(20)));
        assert_eq!(
            lines[3],
            format!("memory_latency=120{}{cells}  t1", " ".repeat(6))
        );
        assert_eq!(text(&[]), "");
        // a point whose units saturated says so under the table
        let mut pts = base_and_latency(&four_studies());
        pts[1].1.studies[2].saturated = vec!["fmt".into()];
        let t = text(&pts);
        let last = t.lines().last().unwrap();
        assert!(
            last.starts_with("warning: point memory_latency=120: a local counter saturated at unit.local_bits = 16 bits")
                && last.ends_with(": w2 (fmt)"),
            "{t}"
        );
        assert_eq!(t.lines().count(), 5, "{t}");
        let page = sweep_html(&pts);
        assert!(
            page.contains("<b>Warning, point memory_latency=120:</b> a local counter saturated")
                && page.contains(": w2 (fmt)</p>"),
            "{page}"
        );
        assert!(!sweep_html(&base_and_latency(&four_studies())).contains("Warning"));
    }

    #[test]
    fn bad_vary_options_are_refused_naming_the_option() {
        for (vary, set, want) in [
            (&["core.rob_entries"][..], &[][..], "expected KEY=V1,V2"),
            (&["=4"], &[], "no key before `=`"),
            (&["core.rob_entries=64,,256"], &[], "an empty value"),
            (
                &["core.rob_entries=64,64"],
                &[],
                "the value `64` is given twice",
            ),
            (
                &["core.rob_entries=64", "core.rob_entries=256"],
                &[],
                "`core.rob_entries` is varied twice",
            ),
            (
                &["core.rob_entries=64"],
                &["core.rob_entries=256"],
                "also fixed by --set `core.rob_entries=256`",
            ),
            (&["core.nope=1"], &[], "the point core.nope=1"),
            (
                &["core.rob_entries=big"],
                &[],
                "takes a non-negative integer",
            ),
            // illegal machines are found before anything runs
            (&["core.rob_entries=0"], &[], "the point core.rob_entries=0"),
            (&["prefetch.kind=a/b"], &[], "path separator"),
            (&[], &[], "nothing to vary"),
        ] {
            let e = format!("{:#}", pts(vary, set).unwrap_err());
            assert!(e.contains(want), "{vary:?} {set:?}: {e}");
        }
    }
}
