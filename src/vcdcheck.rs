//! A strict VCD checker. GTKWave's own converters accept broken files silently,
//! so every VCD the project writes is checked by this instead:
//!
//! - the header parses with the `vcd` crate's parser and has `$date`,
//!   `$version` and `$timescale`;
//! - scopes balance, every variable has a non-zero width and a unique id;
//! - the body starts with `#0` and a `$dumpvars` block that gives every
//!   declared variable a value;
//! - timestamps strictly rise; every id used is declared; every value fits its
//!   declared width (a vector no longer than the width; a scalar only on a
//!   1-bit variable; a string only on a `string` variable);
//! - the file ends with a timestamp (the final time), after the last change.

use std::collections::HashMap;
use std::io::BufRead;

use vcd::{Command, IdCode, ScopeItem, SimulationCommand, VarType};

/// What a checked file holds.
#[derive(Clone, Debug, Default)]
pub struct VcdSummary {
    pub vars: usize,
    pub changes: u64,
    pub timestamps: u64,
    pub last_time: u64,
    pub date: String,
    pub version: String,
}

/// The first rule a file breaks, with the line (1-based) where it was found.
#[derive(Clone, Debug, thiserror::Error)]
#[error("VCD line {line}: {what}")]
pub struct VcdError {
    pub line: u64,
    pub what: String,
}

#[derive(Clone, Copy)]
struct Decl {
    width: u32,
    string: bool,
}

fn collect(items: &[ScopeItem], out: &mut HashMap<IdCode, Decl>, dup: &mut Option<String>) {
    for it in items {
        match it {
            ScopeItem::Scope(s) => collect(&s.items, out, dup),
            ScopeItem::Var(v) => {
                let d = Decl {
                    width: v.size,
                    string: v.var_type == VarType::String,
                };
                if let Some(prev) = out.insert(v.code, d) {
                    // An id may alias another variable only with the same width.
                    if prev.width != d.width && dup.is_none() {
                        *dup = Some(format!(
                            "id `{}` declared twice with widths {} and {} ({})",
                            v.code, prev.width, d.width, v.reference
                        ));
                    }
                }
                if v.size == 0 && !d.string && dup.is_none() {
                    *dup = Some(format!("variable `{}` has width 0", v.reference));
                }
            }
            _ => {}
        }
    }
}

/// Check a whole VCD stream.
pub fn check<R: BufRead>(r: R) -> Result<VcdSummary, VcdError> {
    let mut p = vcd::Parser::new(r);
    let header = p.parse_header().map_err(|e| VcdError {
        line: p.line(),
        what: format!("header does not parse: {e}"),
    })?;
    let err = |line: u64, what: String| VcdError { line, what };
    let date = header
        .date
        .clone()
        .ok_or_else(|| err(p.line(), "no $date".into()))?;
    let version = header
        .version
        .clone()
        .ok_or_else(|| err(p.line(), "no $version".into()))?;
    if header.timescale.is_none() {
        return Err(err(p.line(), "no $timescale".into()));
    }
    let mut decls = HashMap::new();
    let mut dup = None;
    collect(&header.items, &mut decls, &mut dup);
    if let Some(d) = dup {
        return Err(err(p.line(), d));
    }
    if decls.is_empty() {
        return Err(err(p.line(), "no variables declared".into()));
    }

    let mut s = VcdSummary {
        vars: decls.len(),
        date,
        version,
        ..Default::default()
    };
    let mut last_time: Option<u64> = None;
    let mut in_dumpvars = false;
    let mut dumped: HashMap<IdCode, ()> = HashMap::new();
    let mut seen_dumpvars = false;
    let mut last_was_time = false;
    while let Some(cmd) = p.next() {
        let line = p.line();
        let cmd = cmd.map_err(|e| err(line, format!("does not parse: {e}")))?;
        match cmd {
            Command::Timestamp(t) => {
                if let Some(l) = last_time {
                    if t <= l {
                        return Err(err(line, format!("time #{t} does not rise after #{l}")));
                    }
                } else if t != 0 {
                    return Err(err(line, format!("first timestamp is #{t}, expected #0")));
                }
                if in_dumpvars {
                    return Err(err(line, "timestamp inside $dumpvars".into()));
                }
                last_time = Some(t);
                s.timestamps += 1;
                last_was_time = true;
            }
            Command::Begin(SimulationCommand::Dumpvars) => {
                if last_time != Some(0) || seen_dumpvars {
                    return Err(err(line, "$dumpvars must come once, at #0".into()));
                }
                in_dumpvars = true;
                seen_dumpvars = true;
            }
            Command::End(SimulationCommand::Dumpvars) => {
                in_dumpvars = false;
                if let Some((id, _)) = decls.iter().find(|(id, _)| !dumped.contains_key(*id)) {
                    return Err(err(line, format!("$dumpvars gives no value to id `{id}`")));
                }
            }
            Command::Begin(c) | Command::End(c) => {
                return Err(err(line, format!("unexpected ${c}")));
            }
            Command::ChangeScalar(id, _)
            | Command::ChangeVector(id, _)
            | Command::ChangeString(id, _)
            | Command::ChangeReal(id, _) => {
                let Some(d) = decls.get(&id).copied() else {
                    return Err(err(line, format!("id `{id}` is used but never declared")));
                };
                if last_time.is_none() {
                    return Err(err(line, "value change before the first timestamp".into()));
                }
                match &cmd {
                    Command::ChangeScalar(..) if d.width != 1 || d.string => {
                        return Err(err(
                            line,
                            format!("scalar change on id `{id}` declared {} bits wide", d.width),
                        ));
                    }
                    Command::ChangeVector(_, v) if d.string || v.len() > d.width as usize => {
                        return Err(err(
                            line,
                            format!(
                                "{}-bit value on id `{id}` declared {} bits wide",
                                v.len(),
                                d.width
                            ),
                        ));
                    }
                    Command::ChangeString(..) if !d.string => {
                        return Err(err(line, format!("string change on non-string id `{id}`")));
                    }
                    Command::ChangeReal(..) => {
                        return Err(err(line, format!("real value on id `{id}`")));
                    }
                    _ => {}
                }
                if in_dumpvars {
                    dumped.insert(id, ());
                } else if !seen_dumpvars {
                    return Err(err(line, "value change before $dumpvars".into()));
                }
                s.changes += 1;
                last_was_time = false;
            }
            Command::Comment(_) => {}
            other => {
                return Err(err(
                    line,
                    format!("unexpected command in the body: {other:?}"),
                ));
            }
        }
    }
    if in_dumpvars {
        return Err(err(p.line(), "$dumpvars is not closed".into()));
    }
    if !seen_dumpvars {
        return Err(err(p.line(), "no $dumpvars".into()));
    }
    if !last_was_time {
        return Err(err(
            p.line(),
            "the file does not end with a final timestamp".into(),
        ));
    }
    s.last_time = last_time.unwrap_or(0);
    Ok(s)
}

/// Check a file on disk.
pub fn check_file(path: &std::path::Path) -> Result<VcdSummary, VcdError> {
    let f = std::fs::File::open(path).map_err(|e| VcdError {
        line: 0,
        what: format!("{}: {e}", path.display()),
    })?;
    check(std::io::BufReader::new(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "$date fixed $end\n$version t $end\n$timescale 1ns $end\n\
        $scope module top $end\n$var wire 1 ! clk $end\n$var wire 4 \" n [3:0] $end\n\
        $var string 1 # s $end\n$upscope $end\n$enddefinitions $end\n\
        #0\n$dumpvars\n0!\nb0 \"\ns- #\n$end\n#5\n1!\n#10\n0!\nb1010 \"\nsx #\n#20\n";

    fn bad(s: &str, needle: &str) {
        let e = check(s.as_bytes()).expect_err("must be rejected");
        assert!(e.what.contains(needle), "`{}` lacks `{needle}`", e.what);
    }

    #[test]
    fn accepts_a_good_file() {
        let s = check(GOOD.as_bytes()).unwrap();
        assert_eq!(s.vars, 3);
        assert_eq!(s.last_time, 20);
    }

    #[test]
    fn rejects_time_going_back() {
        bad(&GOOD.replace("#10\n", "#5\n"), "does not rise");
    }

    #[test]
    fn rejects_undeclared_id() {
        bad(&GOOD.replace("#10\n0!", "#10\n0%"), "never declared");
    }

    #[test]
    fn rejects_too_wide_value() {
        bad(&GOOD.replace("b1010 \"", "b11010 \""), "declared 4 bits");
    }

    #[test]
    fn rejects_missing_final_timestamp() {
        bad(GOOD.trim_end_matches("#20\n"), "final timestamp");
    }

    #[test]
    fn rejects_incomplete_dumpvars() {
        bad(&GOOD.replace("s- #\n$end", "$end"), "gives no value");
    }

    #[test]
    fn rejects_unbalanced_scopes() {
        assert!(check(GOOD.replace("$upscope $end\n", "").as_bytes()).is_err());
    }

    #[test]
    fn the_summary_counts_what_the_file_holds() {
        let s = check(GOOD.as_bytes()).unwrap();
        // three values in $dumpvars, one at #5, three at #10; times 0, 5, 10, 20
        assert_eq!(
            (s.vars, s.changes, s.timestamps, s.last_time),
            (3, 7, 4, 20)
        );
        assert_eq!((s.date.as_str(), s.version.as_str()), ("fixed", "t"));
    }

    #[test]
    fn check_file_reads_the_file_and_names_one_it_cannot_open() {
        let d = crate::fresh_dir("vcdcheck");
        let f = d.join("good.vcd");
        std::fs::write(&f, GOOD).unwrap();
        let s = check_file(&f).unwrap();
        assert_eq!((s.vars, s.changes, s.last_time), (3, 7, 20));
        std::fs::remove_dir_all(&*d).unwrap();
        let e = check_file(&f).unwrap_err();
        assert_eq!(e.line, 0);
        assert!(e.what.contains("good.vcd"), "{}", e.what);
    }

    /// Two names for one id are legal (GTKWave shows both) only at one width.
    #[test]
    fn an_id_may_name_a_second_variable_of_its_own_width_only() {
        let alias =
            |w: u32| GOOD.replace("$upscope", &format!("$var wire {w} ! clk2 $end\n$upscope"));
        assert_eq!(check(alias(1).as_bytes()).unwrap().vars, 3);
        bad(&alias(2), "id `!` declared twice with widths 1 and 2");
    }

    #[test]
    fn rejects_a_variable_of_width_zero() {
        bad(
            &GOOD.replace("$var wire 4 \" n [3:0]", "$var wire 0 \" n"),
            "`n` has width 0",
        );
    }

    /// A scalar only on a 1-bit variable, a vector never on a string, a
    /// string only on a string, and no real at all.
    #[test]
    fn rejects_a_value_of_the_wrong_kind() {
        bad(
            &GOOD.replace("b1010 \"", "1\""),
            "scalar change on id `\"` declared 4 bits wide",
        );
        bad(&GOOD.replace("sx #", "1#"), "scalar change on id `#`");
        bad(&GOOD.replace("sx #", "b1 #"), "1-bit value on id `#`");
        bad(
            &GOOD.replace("#10\n0!", "#10\nsx !"),
            "string change on non-string id `!`",
        );
        bad(
            &GOOD.replace("#10\n0!", "#10\nr1.5 !"),
            "real value on id `!`",
        );
    }

    #[test]
    fn rejects_dumpvars_after_time_zero() {
        bad(
            &GOOD.replace("#0\n$dumpvars", "#0\n#1\n$dumpvars"),
            "$dumpvars must come once, at #0",
        );
        bad(
            &GOOD.replace("#5\n1!", "#5\n$dumpvars\n1!\n$end"),
            "$dumpvars must come once, at #0",
        );
    }
}
