//! The contract fixtures: small hand-written event streams in
//! `tests/fixtures/contract/`, each with its expected final state worked out
//! by hand from the contract (`counter-unit.md` v3 and `docs/spec-decisions.md`)
//! by an independent audit that did not read the code, written into the file
//! as `# expect` comment lines. Where the audit's list left a value out (the
//! counts before a rejected bundle in 10 fixtures, one pending sum in `s29`),
//! it was worked out by hand when the fixture was made, and a `# note:` line
//! in the file says so.
//!
//! Every fixture is replayed through `hw` and `golden` in lock step
//! ([`LockStep`]) for every variant it has an `# expect` line for (the header
//! gives the other parameters), every bundle of it, those after a rejected
//! one included (the latch must ignore them); the final view of both models
//! must then match the expectation.
//!
//! # The `# expect` line
//!
//! ```text
//! # expect VARIANT: ITEM ITEM ...
//! ```
//!
//! `VARIANT` is `fmt` or `sfmt` (it overrides the header's variant); at most one
//! line per variant per file, anywhere in the file. Items are separated by
//! spaces, each key at most once, at least one item:
//!
//! | item | meaning | unlisted |
//! |---|---|---|
//! | `COUNTER=N` (`cycles`, `retired`, `l1i`, `l2i`, `itlb`, `bpred`, `l1d`, `l2d`, `dtlb`, `longlat`) | the global counter's final value, already wrapped to `global_bits` | 0 |
//! | `pending.K=N` (`K`: `l1i`, `l2i`, `itlb`, `bpred`) | the pending sum of spec 4.6 | 0 |
//! | `saturated=true` / `saturated=false` | the sticky `saturated` flag | false |
//! | `overflow=COUNTER,COUNTER,...` | the counters whose sticky overflow flag is set | none set |
//! | `error=bundle:N,field:FIELD,rule:R` | the latched protocol error (`FIELD` as in spec 6, e.g. `dispatched_branches`) | no error |
//!
//! Every field of the list is compared, listed or not. Any comment line whose
//! text starts with `expect` (in any case) must be a well-formed `# expect`
//! line: a malformed one fails the test, naming the file and line.
//! Example: `# expect sfmt: cycles=9 retired=2 bpred=5 pending.bpred=6 saturated=true overflow=cycles,bpred`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cpistack::check::LockStep;
use events::{
    Counter, CounterUnit, CycleEvents, Field, Params, Pending, ProtocolError, UnitView, Variant,
    NUM_COUNTERS,
};

/// The fixture directory must hold at least this many streams.
const MIN_FIXTURES: usize = 50;

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/contract")
}

/// One parsed `# expect` line: the full expected final state of one variant.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Expect {
    /// 1-based physical line of the file.
    line: usize,
    variant: Variant,
    counters: [u64; NUM_COUNTERS],
    /// Bit `Counter::idx()` set: that counter's overflow flag is expected set.
    overflow: u16,
    saturated: bool,
    pending: Pending,
    error: Option<ProtocolError>,
}

/// Whether a physical line is meant as an `# expect` line: a comment whose
/// text starts with `expect`, in any case (so a misspelt one is not skipped).
fn is_expect_line(line: &str) -> bool {
    line.trim_start().strip_prefix('#').is_some_and(|rest| {
        rest.trim_start()
            .get(..6)
            .is_some_and(|w| w.eq_ignore_ascii_case("expect"))
    })
}

fn parse_u64(key: &str, s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{key}`: `{s}` is not a decimal integer"));
    }
    s.parse()
        .map_err(|e| format!("`{key}`: `{s}` is not a u64 ({e})"))
}

fn parse_counter(s: &str) -> Option<Counter> {
    Counter::ALL.into_iter().find(|c| c.name() == s)
}

fn parse_error(s: &str) -> Result<ProtocolError, String> {
    let parts: Vec<&str> = s.split(',').collect();
    let [b, f, r] = parts[..] else {
        return Err(format!(
            "`error`: `{s}` is not `bundle:N,field:FIELD,rule:R`"
        ));
    };
    let part = |p: &str, name: &str| -> Result<String, String> {
        p.strip_prefix(name)
            .and_then(|x| x.strip_prefix(':'))
            .map(str::to_string)
            .ok_or_else(|| format!("`error`: `{p}` should be `{name}:...` (in `{s}`)"))
    };
    let bundle = parse_u64("error bundle", &part(b, "bundle")?)?;
    let fname = part(f, "field")?;
    let field = Field::ALL
        .into_iter()
        .find(|x| x.name() == fname)
        .ok_or_else(|| format!("`error`: unknown field `{fname}`"))?;
    let rule = parse_u64("error rule", &part(r, "rule")?)?;
    if !(1..=9).contains(&rule) {
        return Err(format!("`error`: rule {rule} is not in 1..=9"));
    }
    Ok(ProtocolError {
        bundle,
        field,
        rule: rule as u8,
    })
}

/// Parse one `# expect` line (`line` is its 1-based number, for the result).
fn parse_expect(text: &str, line: usize) -> Result<Expect, String> {
    let rest = text
        .trim()
        .strip_prefix('#')
        .map(str::trim_start)
        .and_then(|r| r.strip_prefix("expect "))
        .ok_or("not of the form `# expect VARIANT: ITEM ...`")?;
    let (variant, items) = rest
        .split_once(':')
        .ok_or("no `:` after the variant (`# expect VARIANT: ITEM ...`)")?;
    let variant: Variant = variant.trim().parse()?;
    let mut e = Expect {
        line,
        variant,
        counters: [0; NUM_COUNTERS],
        overflow: 0,
        saturated: false,
        pending: Pending::default(),
        error: None,
    };
    let mut seen: Vec<&str> = Vec::new();
    for item in items.split_whitespace() {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("item `{item}` is not `KEY=VALUE`"))?;
        if seen.contains(&key) {
            return Err(format!("key `{key}` given twice"));
        }
        seen.push(key);
        if let Some(c) = parse_counter(key) {
            e.counters[c.idx()] = parse_u64(key, value)?;
        } else if let Some(k) = key.strip_prefix("pending.") {
            let v = parse_u64(key, value)?;
            match k {
                "l1i" => e.pending.l1i = v,
                "l2i" => e.pending.l2i = v,
                "itlb" => e.pending.itlb = v,
                "bpred" => e.pending.bpred = v,
                _ => return Err(format!("unknown pending sum `{key}`")),
            }
        } else {
            match key {
                "saturated" => {
                    e.saturated = match value {
                        "true" => true,
                        "false" => false,
                        _ => return Err(format!("`saturated`: `{value}` is not true or false")),
                    }
                }
                "overflow" => {
                    for name in value.split(',') {
                        let c = parse_counter(name).ok_or_else(|| {
                            format!("`overflow`: `{name}` is not a counter (in `{value}`)")
                        })?;
                        let bit = 1u16 << c.idx();
                        if e.overflow & bit != 0 {
                            return Err(format!("`overflow`: `{name}` given twice"));
                        }
                        e.overflow |= bit;
                    }
                }
                "error" => e.error = Some(parse_error(value)?),
                _ => return Err(format!("unknown key `{key}`")),
            }
        }
    }
    if seen.is_empty() {
        return Err("no items".into());
    }
    Ok(e)
}

/// Every `# expect` line of a fixture, or the first malformed one as
/// `FILE:LINE: message`.
fn expectations(path: &Path, text: &str) -> Result<Vec<Expect>, String> {
    let mut out: Vec<Expect> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if !is_expect_line(l) {
            continue;
        }
        let e = parse_expect(l, i + 1).map_err(|m| {
            format!(
                "{}:{}: malformed `# expect` line: {m}\n  {l}",
                path.display(),
                i + 1
            )
        })?;
        if let Some(prev) = out.iter().find(|p| p.variant == e.variant) {
            return Err(format!(
                "{}:{}: a second `# expect` line for {} (the first is line {})",
                path.display(),
                i + 1,
                e.variant,
                prev.line
            ));
        }
        out.push(e);
    }
    if out.is_empty() {
        return Err(format!("{}: no `# expect` line", path.display()));
    }
    Ok(out)
}

/// Every field of `view` that differs from `e`, as `name: expected X, actual Y`.
fn differences(e: &Expect, view: &UnitView) -> Vec<String> {
    let mut d = Vec::new();
    let mut cmp = |name: &str, want: String, got: String| {
        if want != got {
            d.push(format!("{name}: expected {want}, actual {got}"));
        }
    };
    for c in Counter::ALL {
        cmp(
            c.name(),
            e.counters[c.idx()].to_string(),
            view.counters.get(c).to_string(),
        );
    }
    for c in Counter::ALL {
        cmp(
            &format!("overflow.{}", c.name()),
            (e.overflow >> c.idx() & 1 == 1).to_string(),
            view.counters.overflowed(c).to_string(),
        );
    }
    cmp(
        "saturated",
        e.saturated.to_string(),
        view.saturated.to_string(),
    );
    let p = [
        ("l1i", e.pending.l1i, view.pending.l1i),
        ("l2i", e.pending.l2i, view.pending.l2i),
        ("itlb", e.pending.itlb, view.pending.itlb),
        ("bpred", e.pending.bpred, view.pending.bpred),
    ];
    for (k, want, got) in p {
        cmp(&format!("pending.{k}"), want.to_string(), got.to_string());
    }
    let err = |x: Option<ProtocolError>| match x {
        Some(x) => format!(
            "bundle:{},field:{},rule:{}",
            x.bundle,
            x.field.name(),
            x.rule
        ),
        None => "none".into(),
    };
    cmp("error", err(e.error), err(view.error));
    d
}

/// Replay every bundle with `params` through `hw` and `golden` in lock step,
/// those after a rejected one included (the latched unit must ignore them:
/// the expectation is the state at the rejection); the final views (hw, golden).
fn replay(params: Params, bundles: &[CycleEvents]) -> Result<(UnitView, UnitView), String> {
    let mut ls = LockStep::new(params)
        .map_err(|e| format!("illegal parameters: {e}"))?
        .with_waves_dir(None);
    for (i, ev) in bundles.iter().enumerate() {
        ls.step(ev)
            .map_err(|m| format!("lock-step mismatch at bundle {i}: {m}"))?;
    }
    Ok((ls.hw().view(), ls.golden().view()))
}

/// Check one fixture; its failures (one message each) go to `fails`.
fn check_fixture(path: &Path, fails: &mut Vec<String>) {
    let file = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return fails.push(format!("{file}: cannot read: {e}")),
    };
    let expects = match expectations(path, &text) {
        Ok(x) => x,
        Err(m) => return fails.push(m),
    };
    let (params, iter) = match events::stream::open(path) {
        Ok(x) => x,
        Err(e) => return fails.push(format!("{file}: cannot open the stream: {e}")),
    };
    let bundles: Vec<CycleEvents> = match iter.collect() {
        Ok(b) => b,
        Err(e) => return fails.push(format!("{file}: bad stream: {e}")),
    };
    let max = params.global_mask();
    for e in &expects {
        let ctx = format!("{file} ({}, `# expect` line {})", e.variant, e.line);
        if let Some(c) = Counter::ALL.into_iter().find(|c| e.counters[c.idx()] > max) {
            fails.push(format!(
                "{ctx}: malformed: `{}={}` does not fit global_bits {} (write the wrapped value and `overflow=`)",
                c.name(),
                e.counters[c.idx()],
                params.global_bits
            ));
            continue;
        }
        let (hw, golden) = match replay(params.with_variant(e.variant), &bundles) {
            Ok(v) => v,
            Err(m) => {
                fails.push(format!("{ctx}: {m}"));
                continue;
            }
        };
        let (dh, dg) = (differences(e, &hw), differences(e, &golden));
        let mut msg = String::new();
        if dh == dg {
            for d in &dh {
                let _ = write!(msg, "\n    {d} (hw and golden)");
            }
        } else {
            for (model, ds) in [("hw", &dh), ("golden", &dg)] {
                for d in ds {
                    let _ = write!(msg, "\n    {model}: {d}");
                }
            }
        }
        if !msg.is_empty() {
            fails.push(format!(
                "{ctx}: final state differs from the expectation:{msg}"
            ));
        }
    }
}

/// Every fixture against its expectations, both models in lock step.
#[test]
fn contract_fixtures_match_their_expectations() {
    let dir = fixture_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    files.sort();
    assert!(
        files.len() >= MIN_FIXTURES,
        "{} holds {} files, expected at least {MIN_FIXTURES}",
        dir.display(),
        files.len()
    );
    let mut fails = Vec::new();
    for f in &files {
        if f.extension().and_then(|x| x.to_str()) != Some("jsonl") {
            fails.push(format!("{}: not a `.jsonl` fixture", f.display()));
            continue;
        }
        check_fixture(f, &mut fails);
    }
    assert!(
        fails.is_empty(),
        "{} of the contract fixture checks failed:\n{}",
        fails.len(),
        fails.join("\n")
    );
}

/// The parser takes every item of the syntax and refuses anything else
/// (a malformed `# expect` line is never skipped).
#[test]
fn contract_expect_lines_parse_strictly() {
    let e = parse_expect(
        "# expect sfmt: cycles=9 retired=2 bpred=5 pending.bpred=6 saturated=true \
         overflow=cycles,bpred error=bundle:1,field:dispatched_branches,rule:7",
        3,
    )
    .unwrap();
    let mut counters = [0; NUM_COUNTERS];
    counters[Counter::Cycles.idx()] = 9;
    counters[Counter::Retired.idx()] = 2;
    counters[Counter::Bpred.idx()] = 5;
    assert_eq!(
        e,
        Expect {
            line: 3,
            variant: Variant::Sfmt,
            counters,
            overflow: 1 << Counter::Cycles.idx() | 1 << Counter::Bpred.idx(),
            saturated: true,
            pending: Pending {
                bpred: 6,
                ..Pending::default()
            },
            error: Some(ProtocolError {
                bundle: 1,
                field: Field::DispatchedBranches,
                rule: 7
            }),
        }
    );
    for bad in [
        "# expect fmt cycles=9",
        "# expect: cycles=9",
        "# expect xfmt: cycles=9",
        "# expect fmt:",
        "# expect fmt: cycles",
        "# expect fmt: cycles=9 cycles=9",
        "# expect fmt: cycle=9",
        "# expect fmt: cycles=-1",
        "# expect fmt: cycles=+1",
        "# expect fmt: cycles=9x",
        "# expect fmt: pending.l3i=1",
        "# expect fmt: saturated=yes",
        "# expect fmt: overflow=",
        "# expect fmt: overflow=cycles,cycles",
        "# expect fmt: overflow=cycles;bpred",
        "# expect fmt: error=bundle:1,field:head",
        "# expect fmt: error=bundle:1,field:heads,rule:3",
        "# expect fmt: error=bundle:1,field:head,rule:10",
        "# expect fmt: error=rule:3,field:head,bundle:1",
        "#expect: fmt cycles=1",
        "# expected fmt: cycles=1",
        "# Expect fmt: cycles=1",
    ] {
        assert!(is_expect_line(bad), "`{bad}` not seen as an expect line");
        assert!(
            parse_expect(bad, 1).is_err(),
            "`{bad}` accepted: {:?}",
            parse_expect(bad, 1)
        );
    }
    for other in ["# tests: something", "# note: expect this", "{}", "  #  "] {
        assert!(!is_expect_line(other), "`{other}` seen as an expect line");
    }
    // a second line for one variant, and no line at all, are refused too
    let p = Path::new("x.jsonl");
    assert!(expectations(p, "# expect fmt: cycles=1\n# expect fmt: cycles=1\n").is_err());
    assert!(expectations(p, "{}\n# tests: nothing\n").is_err());
    let two = expectations(
        p,
        "# t\n{}\n# expect fmt: cycles=1\n  # expect sfmt: cycles=2\n",
    )
    .unwrap();
    assert_eq!(
        two.iter().map(|e| (e.line, e.variant)).collect::<Vec<_>>(),
        [(3, Variant::Fmt), (4, Variant::Sfmt)]
    );
}
