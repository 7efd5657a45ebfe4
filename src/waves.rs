//! VCD waveforms of the bit-accurate unit: [`VcdTracer`] implements
//! [`hw::Tracer`] and writes every register of the unit and every field of the
//! input bundle, cycle by cycle, for GTKWave (save files and filters in `waves/`,
//! see `docs/waves.md`).
//!
//! # What a timestamp shows
//!
//! One clock cycle is 10 ns (`$timescale 1ns`). `clk` rises at `10*k` and falls
//! at `10*k + 5`, where `k = c - first` counts the cycles of the dump (`first` is
//! the first dumped cycle: 0, the start of `--window FROM:TO`, or the first cycle
//! of a failure waveform; the header's `$comment` says which, and `top.bundles`
//! holds the absolute bundle index). At time `10*k`:
//!
//! - `top.in.*` shows the input bundle **of cycle `c`**;
//! - every register (`top.rob`, `top.fmt`, `top.counters`, `top.err`,
//!   `top.bundles`) shows its value **at the start of cycle `c`** (the state `S` of
//!   spec section 4 that the bundle is applied to), so the outputs the spec calls
//!   combinational (`free_rows`, `rob_full`, the counters) are what the core sees
//!   during cycle `c`.
//!
//! So the effect of a bundle appears one clock edge later: a branch fetched in
//! the cycle at `10*k` moves `ftail` at `10*(k+1)`, like a flip-flop fed by it.
//! After the last dumped cycle `c_last`, the registers at `10*(c_last+1-first)`
//! hold the final state (after the last bundle), and the inputs go to `x` there
//! (there is no bundle for that cycle). The file ends with a final timestamp
//! 10 ns later.
//!
//! # Format
//!
//! Fixed `$date` (identical runs give byte-identical files), `$version` naming
//! `cpistack` and its version, every variable in `$dumpvars` at `#0`, then only
//! changes. Vectors are declared with their range (`[6:0]`) at their register
//! width; 8-bit input fields are dumped at 8 bits so an illegal value shows as it
//! was given. Enumerations (`fetch_stall`, `head`, the squash kind, the error
//! field and rule) are dumped as their raw bits plus a `string` variable with
//! the name (suffix `_s`).
//!
//! The header is written with the `vcd` crate's [`vcd::Writer`]; value changes are
//! formatted by hand into a buffer (no allocation per cycle, only the values that
//! changed since the previous cycle are compared and written).
//!
//! # Speed
//!
//! Per cycle the tracer compares every register with its previous value (rows:
//! a few loads per row; the row bit vectors word by word) and formats only what
//! changed. Output is buffered (64 KiB chunks).

use std::io::{self, Write};
use std::path::Path;

use events::{Counter, CounterUnit, CycleEvents, Params, Variant, NUM_COUNTERS};
use vcd::{IdCode, ReferenceIndex, TimescaleUnit, VarType};

/// The `$date` of every file (fixed so that files are reproducible).
pub const DATE: &str = "1970-01-01 00:00:00 UTC (fixed, reproducible output)";
/// Nanoseconds per clock cycle.
pub const CYCLE_NS: u64 = 10;

/// Errors of the waveform writer.
#[derive(Debug, thiserror::Error)]
pub enum WavesError {
    /// Not `#[source]`: the message holds the cause already (an error chain
    /// printed with `{:#}` would show it twice).
    #[error("writing the VCD: {0}")]
    Io(io::Error),
    /// The directory of the file cannot be made (the message names why).
    #[error("{0}")]
    Dir(String),
    /// The window given, and what is wrong with it.
    #[error("`--window {0}`: {1}expected FROM:TO (cycles, FROM < TO), e.g. 1000:2000")]
    BadWindow(String, String),
    #[error("{}", not_reached(*window, *cycles))]
    WindowNotReached { window: Window, cycles: u64 },
}

/// Why a waveform has nothing in it: the run had no cycle, or none in `window`.
fn not_reached(window: Window, cycles: u64) -> String {
    if cycles == 0 {
        "the run had no cycle: nothing to dump".into()
    } else {
        format!(
            "the window {window} starts after the last cycle of the run (it had {cycles} cycles): nothing to dump"
        )
    }
}

impl From<io::Error> for WavesError {
    fn from(e: io::Error) -> Self {
        WavesError::Io(e)
    }
}

/// Cycles `[from, to)` to dump (the bundle indices from the start of the run).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub from: u64,
    pub to: u64,
}

impl Window {
    /// Everything.
    pub const ALL: Window = Window {
        from: 0,
        to: u64::MAX,
    };
}

/// `FROM:TO` as `--window` takes it, an open end empty (`1000:`, `:500`).
impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.from > 0 {
            write!(f, "{}", self.from)?;
        }
        f.write_str(":")?;
        if self.to < u64::MAX {
            write!(f, "{}", self.to)?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Window {
    type Err = WavesError;
    /// `FROM:TO` (cycles, `TO` exclusive); either side may be empty (`:500`, `1000:`).
    fn from_str(s: &str) -> Result<Self, WavesError> {
        let bad = |why: String| WavesError::BadWindow(s.to_string(), why);
        let (a, b) = s.split_once(':').ok_or_else(|| bad(String::new()))?;
        let num = |x: &str, d: u64| -> Result<u64, WavesError> {
            let x = x.trim().replace('_', "");
            if x.is_empty() {
                return Ok(d);
            }
            x.parse().map_err(|_| {
                bad(if x.bytes().all(|c| c.is_ascii_digit()) {
                    format!("{x} is past the last cycle a run can have ({}); ", u64::MAX)
                } else {
                    format!("`{x}` is not a cycle number; ")
                })
            })
        };
        let w = Window {
            from: num(a, 0)?,
            to: num(b, u64::MAX)?,
        };
        if w.from >= w.to {
            return Err(bad(format!("FROM {} is not below TO {}; ", w.from, w.to)));
        }
        Ok(w)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// 1-bit wire: `0!`.
    Scalar,
    /// Vector: `b101 !`.
    Vector,
    /// `string` variable; the value is an index into the table.
    Str(&'static [&'static str]),
}

struct Var {
    id: [u8; 4],
    id_len: u8,
    kind: Kind,
}

const FETCH_STALL_NAMES: &[&str] = &["none", "l1i", "l2i", "itlb"];
const HEAD_NAMES: &[&str] = &["none", "l1d", "l2d", "dtlb", "longlat", "other"];
/// A row's place in the table (`rowNN_state`, derived from the pointers):
/// outside `[head, ftail]`, dispatched (`[head, dtail)`), fetched
/// (`[dtail, ftail)`), or the accumulation row `ftail`.
pub const ROW_STATE_NAMES: &[&str] = &["free", "dispatched", "fetched", "accum"];
const SQUASH_NAMES: &[&str] = &["none", "mispredict", "flush"];
const FIELD_NAMES: &[&str] = &[
    "none",
    "fetched_branches",
    "fe_squash",
    "dispatched",
    "dispatched_branches",
    "dispatched_imiss",
    "squash",
    "retired",
    "head",
];
const RULE_NAMES: &[&str] = &[
    "none", "rule1", "rule2", "rule3", "rule4", "rule5", "rule6", "rule7", "rule8", "rule9",
];

/// The name of physical row `r` of a table of `rows` rows: `row` and the
/// number zero-padded to the digits of the largest (at least 2: `row07`,
/// `row127`, `row007` at 128 rows), so that the rows sort in order by name
/// in a waveform viewer's signal list.
pub fn row_name(r: usize, rows: u32) -> String {
    let digits = (rows.saturating_sub(1).max(1).ilog10() + 1).max(2) as usize;
    format!("row{r:0digits$}")
}

/// Indices of the variables (in declaration order).
#[derive(Default)]
struct Ix {
    clk: usize,
    bundles: usize,
    // top.in
    count_enable: usize,
    fetch_stall: usize,
    fetched_branches: usize,
    fe_redirect: usize,
    fe_squash: usize,
    dispatched: usize,
    dispatched_branches: usize,
    dispatched_imiss: usize,
    squash_kind: usize,
    squash_id: usize,
    retired: usize,
    head: usize,
    backend_full: usize,
    // top.rob
    rob_count: usize,
    rob_head: usize,
    rob_tail: usize,
    rob_full: usize,
    imiss: Option<usize>,
    // top.fmt
    head_ptr: usize,
    dtail: usize,
    ftail: usize,
    free_rows: usize,
    dispatched_rows: usize,
    fetched_rows: usize,
    refilling: usize,
    refill_pending: usize,
    shared_i: Option<usize>,
    row0: usize,
    // top.counters
    counters: usize,
    saturated: usize,
    // top.err
    err_valid: usize,
    err_bundle: usize,
    err_field: usize,
    err_rule: usize,
}

/// Variables per row: rob_id, penalty, mispredict, done (+ l1i, l2i, itlb in
/// FMT), then state and its string.
fn row_vars(fmt: bool) -> usize {
    if fmt {
        9
    } else {
        6
    }
}

/// Header builder: declares variables through the `vcd` crate's writer.
struct Decl<'a> {
    w: vcd::Writer<&'a mut Vec<u8>>,
    vars: Vec<Var>,
    /// `(scope path, name, width)` of every variable, for tests and tools.
    names: Vec<(String, u32)>,
    path: Vec<String>,
}

impl Decl<'_> {
    fn scope(&mut self, name: &str) -> io::Result<()> {
        self.path.push(name.to_string());
        self.w.add_module(name)
    }
    fn up(&mut self) -> io::Result<()> {
        self.path.pop();
        self.w.upscope()
    }
    fn push(&mut self, id: IdCode, kind: Kind, name: &str, width: u32) -> usize {
        let s = id.to_string();
        let mut b = [0u8; 4];
        b[..s.len()].copy_from_slice(s.as_bytes());
        self.vars.push(Var {
            id: b,
            id_len: s.len() as u8,
            kind,
        });
        self.names
            .push((format!("{}.{name}", self.path.join(".")), width));
        self.vars.len() - 1
    }
    /// A wire of `width` bits (a scalar when 1).
    fn wire(&mut self, name: &str, width: u32) -> io::Result<usize> {
        if width == 1 {
            let id = self.w.add_var(VarType::Wire, 1, name, None)?;
            Ok(self.push(id, Kind::Scalar, name, 1))
        } else {
            let idx = ReferenceIndex::Range(width as i32 - 1, 0);
            let id = self.w.add_var(VarType::Wire, width, name, Some(idx))?;
            Ok(self.push(id, Kind::Vector, name, width))
        }
    }
    /// A register (`reg`) of `width` bits.
    fn reg(&mut self, name: &str, width: u32) -> io::Result<usize> {
        if width == 1 {
            let id = self.w.add_var(VarType::Reg, 1, name, None)?;
            Ok(self.push(id, Kind::Scalar, name, 1))
        } else {
            let idx = ReferenceIndex::Range(width as i32 - 1, 0);
            let id = self.w.add_var(VarType::Reg, width, name, Some(idx))?;
            Ok(self.push(id, Kind::Vector, name, width))
        }
    }
    /// An enumeration: raw bits `name` (wire or reg) then `name_s`, a string.
    fn enumeration(
        &mut self,
        name: &str,
        width: u32,
        table: &'static [&'static str],
        reg: bool,
    ) -> io::Result<usize> {
        let i = if reg {
            self.reg(name, width)?
        } else {
            self.wire(name, width)?
        };
        let sname = format!("{name}_s");
        let id = self.w.add_var(VarType::String, 1, &sname, None)?;
        self.push(id, Kind::Str(table), &sname, 0);
        Ok(i)
    }
}

/// Writes a VCD of a [`hw::Unit`]; plug it into [`hw::Unit::step_traced`].
///
/// Create it with the unit in the state it has before the first traced cycle,
/// call [`hw::Tracer::cycle`] (through `step_traced`) once per cycle, then
/// [`VcdTracer::finish`]. I/O errors are kept and returned by `finish`.
pub struct VcdTracer<W: Write> {
    out: W,
    buf: Vec<u8>,
    vars: Vec<Var>,
    names: Vec<(String, u32)>,
    prev: Vec<u64>,
    ix: Ix,
    /// Words of the previous sFMT I-miss vector and the previous row bits.
    prev_imiss: Vec<u64>,
    prev_mis: [u64; 4],
    /// Previous `(rob_id, penalty, [l1i, l2i, itlb])` of every row.
    prev_row: Vec<(u16, u32, [u32; 3])>,
    /// `(head, ftail)` at the start of the last sampled cycle.
    row_scan: (u16, u16),
    /// `(head, dtail, ftail)` the row states were last derived from.
    state_ptrs: Option<(u16, u16, u16)>,
    prev_done: [u64; 4],
    params: Params,
    fmt: bool,
    rows: usize,
    row_words: usize,
    rob_words: usize,
    ptr_mask: u16,
    window: Window,
    /// Index of the cycle the next `cycle` call reports.
    next: u64,
    started: bool,
    ended: bool,
    err: Option<io::Error>,
}

const CHUNK: usize = 1 << 16;

impl<W: Write> VcdTracer<W> {
    /// A tracer for `unit`, whose next step is cycle `first_cycle` of the run;
    /// dumps the cycles of `window` (the part of it at or after `first_cycle`).
    pub fn new(out: W, unit: &hw::Unit, first_cycle: u64, window: Window) -> io::Result<Self> {
        let params = *unit.params();
        let fmt = params.variant == Variant::Fmt;
        let w = unit.widths();
        let from = window.from.max(first_cycle);
        let mut head = Vec::with_capacity(64 * 1024);
        let mut d = Decl {
            w: vcd::Writer::new(&mut head),
            vars: Vec::new(),
            names: Vec::new(),
            path: Vec::new(),
        };
        d.w.date(DATE)?;
        d.w.version(&format!(
            "cpistack {} (bit-accurate {} counter unit, crate hw)",
            env!("CARGO_PKG_VERSION"),
            params.variant.name()
        ))?;
        d.w.comment(&format!(
            "time 0 = cycle {from}; one cycle = {CYCLE_NS} ns, clk rises at 10*k. At 10*k: \
             top.in = the bundle of cycle {from}+k, registers = their value at the start \
             of that cycle. params: variant={} rob_entries={} fmt_rows={} local_bits={} \
             global_bits={} fetch_width={} dispatch_width={} retire_width={}",
            params.variant.name(),
            params.rob_entries,
            params.fmt_rows,
            params.local_bits,
            params.global_bits,
            params.fetch_width,
            params.dispatch_width,
            params.retire_width
        ))?;
        d.w.timescale(1, TimescaleUnit::NS)?;
        let mut ix = Ix::default();
        d.scope("top")?;
        ix.clk = d.wire("clk", 1)?;
        ix.bundles = d.reg("bundles", w.bundle)?;

        d.scope("in")?;
        ix.count_enable = d.wire("count_enable", 1)?;
        ix.fetch_stall = d.enumeration("fetch_stall", 2, FETCH_STALL_NAMES, false)?;
        ix.fetched_branches = d.wire("fetched_branches", 8)?;
        ix.fe_redirect = d.wire("fe_redirect", 1)?;
        ix.fe_squash = d.wire("fe_squash", 8)?;
        ix.dispatched = d.wire("dispatched", 8)?;
        ix.dispatched_branches = d.wire("dispatched_branches", 8)?;
        ix.dispatched_imiss = d.wire("dispatched_imiss", 8)?;
        ix.squash_kind = d.enumeration("squash_kind", 2, SQUASH_NAMES, false)?;
        ix.squash_id = d.wire("squash_id", 16)?;
        ix.retired = d.wire("retired", 8)?;
        ix.head = d.enumeration("head", 3, HEAD_NAMES, false)?;
        ix.backend_full = d.wire("backend_full", 1)?;
        d.up()?;

        d.scope("rob")?;
        ix.rob_count = d.reg("rob_count", w.rob_count)?;
        ix.rob_head = d.reg("rob_head", w.rob_id)?;
        ix.rob_tail = d.reg("rob_tail", w.rob_id)?;
        ix.rob_full = d.wire("rob_full", 1)?;
        if !fmt {
            ix.imiss = Some(d.reg("imiss", params.rob_entries)?);
        }
        d.up()?;

        d.scope("fmt")?;
        ix.head_ptr = d.reg("head", w.ptr)?;
        ix.dtail = d.reg("dtail", w.ptr)?;
        ix.ftail = d.reg("ftail", w.ptr)?;
        ix.free_rows = d.wire("free_rows", w.ptr)?;
        ix.dispatched_rows = d.wire("dispatched_rows", w.ptr)?;
        ix.fetched_rows = d.wire("fetched_rows", w.ptr)?;
        ix.refilling = d.reg("refilling", 1)?;
        ix.refill_pending = d.reg("refill_pending", 1)?;
        if !fmt {
            let i = d.reg("shared_l1i", w.local)?;
            d.reg("shared_l2i", w.local)?;
            d.reg("shared_itlb", w.local)?;
            ix.shared_i = Some(i);
        }
        let rows = params.fmt_rows as usize;
        for r in 0..rows {
            let g = row_name(r, params.fmt_rows);
            let i = d.reg(&format!("{g}_rob_id"), w.rob_id)?;
            if r == 0 {
                ix.row0 = i;
            }
            d.reg(&format!("{g}_penalty"), w.local)?;
            d.reg(&format!("{g}_mispredict"), 1)?;
            d.reg(&format!("{g}_done"), 1)?;
            if fmt {
                d.reg(&format!("{g}_l1i"), w.local)?;
                d.reg(&format!("{g}_l2i"), w.local)?;
                d.reg(&format!("{g}_itlb"), w.local)?;
            }
            d.enumeration(&format!("{g}_state"), 2, ROW_STATE_NAMES, false)?;
        }
        d.up()?;

        d.scope("counters")?;
        for c in Counter::ALL {
            let i = d.reg(c.name(), w.global)?;
            if c == Counter::Cycles {
                ix.counters = i;
            }
        }
        for c in Counter::ALL {
            d.reg(&format!("{}_ovf", c.name()), 1)?;
        }
        ix.saturated = d.reg("saturated", 1)?;
        d.up()?;

        d.scope("err")?;
        ix.err_valid = d.reg("valid", 1)?;
        ix.err_bundle = d.reg("bundle", 64)?;
        ix.err_field = d.enumeration("field", 4, FIELD_NAMES, true)?;
        ix.err_rule = d.enumeration("rule", 4, RULE_NAMES, true)?;
        d.up()?;
        d.up()?;
        d.w.enddefinitions()?;
        let Decl { vars, names, .. } = d;

        let n = vars.len();
        let mut t = Self {
            out,
            buf: head,
            vars,
            names,
            prev: vec![0; n],
            ix,
            prev_imiss: vec![0; hw::MAX_ROB / 64],
            prev_mis: [0; 4],
            prev_row: vec![(0, 0, [0; 3]); rows],
            row_scan: (0, 0),
            state_ptrs: None,
            prev_done: [0; 4],
            params,
            fmt,
            rows,
            row_words: rows.div_ceil(64),
            rob_words: (params.rob_entries as usize).div_ceil(64),
            ptr_mask: (2 * rows - 1) as u16,
            window: Window {
                from,
                to: window.to,
            },
            next: first_cycle,
            started: false,
            ended: from >= window.to,
            err: None,
        };
        if from == first_cycle {
            t.regs(unit, 0, false);
        }
        Ok(t)
    }

    /// `(scope.name, width)` of every variable in declaration order (`width` 0 for
    /// a `string` variable), e.g. `("top.fmt.row07_penalty", 16)`.
    pub fn var_names(&self) -> &[(String, u32)] {
        &self.names
    }

    /// The first cycle dumped (time 0).
    pub fn first_cycle(&self) -> u64 {
        self.window.from
    }

    /// How many cycles have been dumped so far.
    pub fn cycles_dumped(&self) -> u64 {
        if self.started {
            self.next.min(self.window.to) - self.window.from
        } else {
            0
        }
    }

    // ---- formatting -------------------------------------------------------

    #[inline(always)]
    fn id(&mut self, i: usize) {
        let v = &self.vars[i];
        self.buf.extend_from_slice(&v.id[..v.id_len as usize]);
        self.buf.push(b'\n');
    }

    #[inline]
    fn put_bits(&mut self, v: u64) {
        self.buf.push(b'b');
        let n = (64 - v.leading_zeros()).max(1);
        let start = self.buf.len();
        self.buf.resize(start + n as usize, b'0');
        let out = &mut self.buf[start..];
        for (k, o) in out.iter_mut().enumerate() {
            *o = b'0' + ((v >> (n as usize - 1 - k)) & 1) as u8;
        }
        self.buf.push(b' ');
    }

    /// Write the current value of variable `i` (`v`).
    #[inline]
    fn put(&mut self, i: usize, v: u64) {
        match self.vars[i].kind {
            Kind::Scalar => self.buf.push(b'0' + (v & 1) as u8),
            Kind::Vector => self.put_bits(v),
            Kind::Str(t) => {
                self.buf.push(b's');
                self.buf
                    .extend_from_slice(t.get(v as usize).unwrap_or(&"invalid").as_bytes());
                self.buf.push(b' ');
            }
        }
        self.id(i);
    }

    /// Set variable `i` to `v`; write it if `emit` and it changed.
    #[inline(always)]
    fn set(&mut self, i: usize, v: u64, emit: bool) {
        if self.prev[i] != v {
            self.prev[i] = v;
            if emit {
                self.put(i, v);
            }
        }
    }

    /// An enumeration: raw bits at `i`, its string at `i + 1`.
    #[inline(always)]
    fn set_enum(&mut self, i: usize, v: u64, emit: bool) {
        if self.prev[i] != v {
            self.set(i, v, emit);
            self.set(i + 1, v, emit);
        }
    }

    fn put_imiss(&mut self) {
        let i = self.ix.imiss.expect("sFMT");
        let words = &self.prev_imiss[..self.rob_words];
        self.buf.push(b'b');
        match words.iter().rposition(|&w| w != 0) {
            None => self.buf.push(b'0'),
            Some(top) => {
                let hi = words[top];
                let n = 64 - hi.leading_zeros() as usize;
                for k in (0..n).rev() {
                    self.buf.push(b'0' + (hi >> k & 1) as u8);
                }
                for w in (0..top).rev() {
                    let x = self.prev_imiss[w];
                    for k in (0..64).rev() {
                        self.buf.push(b'0' + (x >> k & 1) as u8);
                    }
                }
            }
        }
        self.buf.push(b' ');
        self.id(i);
    }

    fn time(&mut self, t: u64) {
        self.buf.push(b'#');
        let mut tmp = [0u8; 20];
        let mut k = tmp.len();
        let mut x = t;
        loop {
            k -= 1;
            tmp[k] = b'0' + (x % 10) as u8;
            x /= 10;
            if x == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&tmp[k..]);
        self.buf.push(b'\n');
    }

    // ---- sampling ---------------------------------------------------------

    fn inputs(&mut self, ev: &CycleEvents, emit: bool) {
        let x = &self.ix;
        let (ce, fs, fb, fr, fq, d, db, di, sk, si, re, hd) = (
            x.count_enable,
            x.fetch_stall,
            x.fetched_branches,
            x.fe_redirect,
            x.fe_squash,
            x.dispatched,
            x.dispatched_branches,
            x.dispatched_imiss,
            x.squash_kind,
            x.squash_id,
            x.retired,
            x.head,
        );
        self.set(ce, ev.count_enable as u64, emit);
        self.set_enum(fs, ev.fetch_stall.bits() as u64, emit);
        self.set(fb, ev.fetched_branches as u64, emit);
        self.set(fr, ev.fe_redirect as u64, emit);
        self.set(fq, ev.fe_squash as u64, emit);
        self.set(d, ev.dispatched as u64, emit);
        self.set(db, ev.dispatched_branches as u64, emit);
        self.set(di, ev.dispatched_imiss as u64, emit);
        self.set_enum(sk, ev.squash.kind_bits() as u64, emit);
        self.set(si, ev.squash.id() as u64, emit);
        self.set(re, ev.retired as u64, emit);
        self.set_enum(hd, ev.head.bits() as u64, emit);
        self.set(self.ix.backend_full, ev.backend_full as u64, emit);
    }

    fn regs(&mut self, u: &hw::Unit, fetched: u8, emit: bool) {
        let q = u.regs();
        let l = u.latch();
        let m = self.ptr_mask;
        let x = &self.ix;
        let (bu, rc, rh, rt, rf, hp, dt, ft, fr, dr, fe, rl, rp, c0, sat, ev, eb, ef, er) = (
            x.bundles,
            x.rob_count,
            x.rob_head,
            x.rob_tail,
            x.rob_full,
            x.head_ptr,
            x.dtail,
            x.ftail,
            x.free_rows,
            x.dispatched_rows,
            x.fetched_rows,
            x.refilling,
            x.refill_pending,
            x.counters,
            x.saturated,
            x.err_valid,
            x.err_bundle,
            x.err_field,
            x.err_rule,
        );
        self.set(bu, l.bundles, emit);
        self.set(rc, q.rob_count as u64, emit);
        self.set(rh, q.rob_head as u64, emit);
        self.set(rt, q.rob_tail as u64, emit);
        self.set(
            rf,
            (q.rob_count as u32 == self.params.rob_entries) as u64,
            emit,
        );
        self.set(hp, q.head as u64, emit);
        self.set(dt, q.dtail as u64, emit);
        self.set(ft, q.ftail as u64, emit);
        let live = q.ftail.wrapping_sub(q.head) & m;
        self.set(fr, (self.rows as u64 - 1).wrapping_sub(live as u64), emit);
        self.set(dr, (q.dtail.wrapping_sub(q.head) & m) as u64, emit);
        self.set(fe, (q.ftail.wrapping_sub(q.dtail) & m) as u64, emit);
        self.set(rl, q.refilling as u64, emit);
        self.set(rp, q.refill_pending as u64, emit);
        for k in 0..NUM_COUNTERS {
            self.set(c0 + k, q.counters[k], emit);
            self.set(c0 + NUM_COUNTERS + k, (q.overflow >> k & 1) as u64, emit);
        }
        self.set(sat, q.saturated as u64, emit);
        let (valid, bundle, field, rule) = match l.error {
            Some(e) => (1, e.bundle, e.field.bits() as u64, e.rule as u64),
            None => (0, 0, 0, 0),
        };
        self.set(ev, valid, emit);
        self.set(eb, bundle, emit);
        self.set_enum(ef, field, emit);
        self.set_enum(er, rule, emit);
        if let Some(s) = self.ix.shared_i {
            for k in 0..3 {
                self.set(s + k, q.shared_i[k] as u64, emit);
            }
        }
        if self.ix.imiss.is_some() {
            let cur = &u.imiss_vec().as_raw_slice()[..self.rob_words];
            if cur != &self.prev_imiss[..self.rob_words] {
                self.prev_imiss[..self.rob_words].copy_from_slice(cur);
                if emit {
                    self.put_imiss();
                }
            }
        }
        self.rows(u, fetched, emit);
    }

    fn rows(&mut self, u: &hw::Unit, fetched: u8, emit: bool) {
        let per = row_vars(self.fmt);
        let base = self.ix.row0;
        // Rows the cycle may have written: from the old `head` up to the farther
        // of the new `ftail` and the old `ftail` plus the branches fetched (spec
        // 4.1-4.5 write no other row: 4.1/4.2/4.4/4.5 touch dispatched or fetched
        // rows of the old state, 4.3 zeroes the rows fetch claims, even when a
        // redirect drops them again, and a squash zeroes the new `ftail`). The
        // round-trip test checks every row every cycle on stress streams. At the
        // snapshot (`!emit`) every row is read.
        let q = u.regs();
        let (from, n) = if emit {
            let m = self.ptr_mask;
            let h0 = self.row_scan.0;
            let d0 = (self.row_scan.1.wrapping_sub(h0) & m) + fetched as u16;
            let d1 = q.ftail.wrapping_sub(h0) & m;
            (
                (h0 as usize) & (self.rows - 1),
                (d0.max(d1) as usize + 1).min(self.rows),
            )
        } else {
            (0, self.rows)
        };
        self.row_scan = (q.head, q.ftail);
        for k in 0..n {
            let r = (from + k) & (self.rows - 1);
            let id = u.row_rob_id(r);
            let pen = u.row_penalty(r);
            let ic = if self.fmt { u.row_icounts(r) } else { [0; 3] };
            let p = &mut self.prev_row[r];
            if p.0 != id || p.1 != pen || p.2 != ic {
                *p = (id, pen, ic);
                let i = base + r * per;
                self.set(i, id as u64, emit);
                self.set(i + 1, pen as u64, emit);
                if self.fmt {
                    self.set(i + 4, ic[0] as u64, emit);
                    self.set(i + 5, ic[1] as u64, emit);
                    self.set(i + 6, ic[2] as u64, emit);
                }
            }
        }
        // The row bits, word by word: only changed bits are visited.
        let mis = u.mispredict_bits().as_raw_slice();
        let done = u.done_bits().as_raw_slice();
        for w in 0..self.row_words {
            for (cur, prev, off) in [
                (mis[w], self.prev_mis[w], 2),
                (done[w], self.prev_done[w], 3),
            ] {
                let mut ch = cur ^ prev;
                if w == self.row_words - 1 && !self.rows.is_multiple_of(64) {
                    ch &= (1u64 << (self.rows % 64)) - 1;
                }
                while ch != 0 {
                    let b = ch.trailing_zeros() as usize;
                    ch &= ch - 1;
                    let i = base + (64 * w + b) * per + off;
                    self.set(i, cur >> b & 1, emit);
                }
            }
            self.prev_mis[w] = mis[w];
            self.prev_done[w] = done[w];
        }
        // Each row's state, derived again when a pointer moved.
        let ptrs = (q.head, q.dtail, q.ftail);
        if self.state_ptrs != Some(ptrs) {
            let mask = self.rows - 1;
            let m = self.ptr_mask;
            let h = q.head as usize & mask;
            let nd = (q.dtail.wrapping_sub(q.head) & m) as usize;
            let nf = (q.ftail.wrapping_sub(q.head) & m) as usize;
            let state_of = |r: usize| {
                let k = r.wrapping_sub(h) & mask;
                if k < nd {
                    1
                } else if k < nf {
                    2
                } else if k == nf {
                    3
                } else {
                    0
                }
            };
            // A row changes state only when a pointer crosses it: the rows
            // from each pointer's old place to its new one, both included, by
            // the shorter way round (a squash moves `dtail`, `ftail` back).
            let arc = |old: u16, new: u16| {
                let fwd = (new.wrapping_sub(old) & m) as usize;
                let (start, len) = if fwd <= mask + 1 {
                    (old, fwd)
                } else {
                    (new, (old.wrapping_sub(new) & m) as usize)
                };
                (start as usize & mask, (len + 1).min(mask + 1))
            };
            let runs = match self.state_ptrs.replace(ptrs) {
                None => [(0, self.rows), (0, 0), (0, 0)],
                Some((h0, d0, f0)) => [arc(h0, q.head), arc(d0, q.dtail), arc(f0, q.ftail)],
            };
            for (start, n) in runs {
                for k in 0..n {
                    let r = (start + k) & mask;
                    self.set_enum(base + r * per + per - 2, state_of(r), emit);
                }
            }
        }
    }

    fn flush_if_big(&mut self) {
        if self.buf.len() >= CHUNK && self.err.is_none() {
            if let Err(e) = self.out.write_all(&self.buf) {
                self.err = Some(e);
            }
            self.buf.clear();
        }
    }

    /// Time of dump cycle `c` (absolute index).
    #[inline]
    fn t(&self, c: u64) -> u64 {
        (c - self.window.from) * CYCLE_NS
    }

    fn observe(&mut self, u: &hw::Unit, ev: &CycleEvents) {
        let c = self.next;
        self.next += 1;
        if self.ended || c < self.window.from {
            if c + 1 == self.window.from {
                self.regs(u, 0, false);
            }
            return;
        }
        // Cycle c is in the window; the registers at the start of c are in `prev`.
        if !self.started {
            self.started = true;
            self.inputs(ev, false);
            self.time(0);
            self.buf.extend_from_slice(b"$dumpvars\n");
            self.prev[self.ix.clk] = 1;
            for i in 0..self.vars.len() {
                if i == self.ix.imiss.unwrap_or(usize::MAX) {
                    self.put_imiss();
                } else {
                    self.put(i, self.prev[i]);
                }
            }
            self.buf.extend_from_slice(b"$end\n");
        } else {
            self.inputs(ev, true);
        }
        let t = self.t(c);
        self.time(t + CYCLE_NS / 2);
        self.put(self.ix.clk, 0);
        self.time(t + CYCLE_NS);
        self.put(self.ix.clk, 1);
        self.regs(u, ev.fetched_branches, true);
        if c + 1 >= self.window.to {
            self.ended = true;
        }
        self.flush_if_big();
    }

    /// End the file: inputs go to `x` after the last cycle, a final clock fall
    /// and a final timestamp; flush. Fails if the window was never reached or an
    /// earlier write failed.
    pub fn finish(mut self) -> Result<W, WavesError> {
        if !self.started {
            return Err(WavesError::WindowNotReached {
                window: self.window,
                cycles: self.next,
            });
        }
        let last = self.next.min(self.window.to); // one past the last dumped cycle
        let t = self.t(last);
        // inputs: every variable of top.in, declared from count_enable to backend_full
        for i in self.ix.count_enable..=self.ix.backend_full {
            match self.vars[i].kind {
                Kind::Scalar => self.buf.push(b'x'),
                Kind::Vector => self.buf.extend_from_slice(b"bx "),
                Kind::Str(_) => self.buf.extend_from_slice(b"s- "),
            }
            self.id(i);
        }
        self.time(t + CYCLE_NS / 2);
        self.put(self.ix.clk, 0);
        self.time(t + CYCLE_NS);
        if let Some(e) = self.err.take() {
            return Err(e.into());
        }
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> hw::Tracer for VcdTracer<W> {
    #[inline]
    fn cycle(&mut self, unit: &hw::Unit, ev: &CycleEvents) {
        self.observe(unit, ev);
    }
}

/// A tracer writing to a file (buffered).
pub type FileTracer = VcdTracer<io::BufWriter<std::fs::File>>;

/// Create `path` (and its directory) and a tracer writing to it.
pub fn create(
    path: &Path,
    unit: &hw::Unit,
    first_cycle: u64,
    window: Window,
) -> Result<FileTracer, WavesError> {
    crate::paths::create_parent(path, "the VCD's directory")
        .map_err(|e| WavesError::Dir(format!("{e:#}")))?;
    let f = std::fs::File::create(path)?;
    Ok(VcdTracer::new(
        io::BufWriter::with_capacity(1 << 17, f),
        unit,
        first_cycle,
        window,
    )?)
}

/// With `--variant both`, the second variant's file: `x.vcd` -> `x-sfmt.vcd`
/// (the variant name before the extension). The first variant uses `path` as given.
pub fn variant_path(path: &Path, v: Variant) -> std::path::PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_string());
    let ext = path.extension().map(|s| s.to_string_lossy().to_string());
    let name = match (stem, ext) {
        (Some(s), Some(e)) => format!("{s}-{}.{e}", v.name()),
        (Some(s), None) => format!("{s}-{}", v.name()),
        _ => format!("{}.vcd", v.name()),
    };
    path.with_file_name(name)
}

/// Drive a fresh unit of `params` with `bundles`, writing the VCD to `path`
/// (e.g. one scenario). Returns the unit after the last bundle.
pub fn dump_stream(
    path: &Path,
    params: Params,
    bundles: &[CycleEvents],
    window: Window,
) -> anyhow::Result<hw::Unit> {
    let mut u = hw::Unit::new(params)?;
    let mut t = create(path, &u, 0, window)?;
    for ev in bundles {
        u.step_traced(ev, &mut t);
    }
    t.finish()?;
    Ok(u)
}

/// GTKWave translate-filter files: `(file name, contents)`; values in decimal
/// (the traces using them are shown in decimal).
pub fn filter_files() -> Vec<(&'static str, String)> {
    let table = |names: &[&str]| -> String {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{i} {n}\n"))
            .collect()
    };
    let mut rules = String::from("0 none\n");
    for r in 1..=9u8 {
        rules.push_str(&format!(
            "{r} rule{r}: {}\n",
            events::ProtocolError::rule_text(r).replace('`', "")
        ));
    }
    vec![
        ("fetch_stall.txt", table(FETCH_STALL_NAMES)),
        ("head.txt", table(HEAD_NAMES)),
        ("squash_kind.txt", table(SQUASH_NAMES)),
        ("err_field.txt", table(FIELD_NAMES)),
        ("err_rule.txt", rules),
        ("row_state.txt", table(ROW_STATE_NAMES)),
    ]
}

/// What a layout shows when GTKWave opens it: the VCD's length, and a
/// cycle to open near and put the marker on (a lock-step mismatch).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// Cycles the VCD holds (its time 0 is the first; `u64::MAX`: unknown).
    pub cycles: u64,
    /// A cycle of the VCD (counted from its first) to show and mark.
    pub mark: Option<u64>,
}

/// Width in pixels of GTKWave's wave pane in a layout's window (`[size]`
/// 1600 wide, less the tree and signal panes and borders; measured).
const WAVE_PANE_PX: f64 = 1060.0;
/// GTKWave draws `200 * 2^zoom` pixels per time unit (1 ns here) at a save
/// file's zoom `*zoom` (its `pixelsperframe`; measured: zoom -6 draws 110 ns
/// in 344 pixels).
const PX_PER_NS_AT_ZOOM_0: f64 = 200.0;

impl View {
    /// Cycles a layout shows at once: all of a shorter VCD.
    pub const SHOWN: u64 = 48;
    /// A VCD of unknown length: its first [`View::SHOWN`] cycles.
    pub const START: View = View {
        cycles: u64::MAX,
        mark: None,
    };

    /// A whole VCD of `cycles`, or its first [`View::SHOWN`].
    pub fn of(cycles: u64) -> View {
        View { cycles, mark: None }
    }

    /// The cycles on screen.
    fn shown(self) -> u64 {
        self.cycles.clamp(1, Self::SHOWN)
    }

    /// The first cycle on screen: 0, or with a mark, the one that puts the
    /// mark three quarters of the way across (the cycles before it are the
    /// story), within the VCD.
    fn first(self) -> u64 {
        self.mark.map_or(0, |m| {
            m.saturating_sub(self.shown() * 3 / 4)
                .min(self.cycles.saturating_sub(self.shown()))
        })
    }

    /// GTKWave's zoom that fits the cycles on screen (and the last one's
    /// end) in the wave pane.
    fn zoom(self) -> f64 {
        let ns = ((self.shown() + 1) * CYCLE_NS) as f64;
        (WAVE_PANE_PX / (PX_PER_NS_AT_ZOOM_0 * ns)).log2()
    }
}

/// The GTKWave save file of a variant (`waves/fmt.gtkw`, `waves/sfmt.gtkw`), for a
/// VCD of the default parameters (64 rows, 128 ROB entries, 16-bit locals, 48-bit
/// globals) whose file name is `dumpfile` (relative to the save file), itself
/// named `savefile`.
pub fn gtkw(variant: Variant, dumpfile: &str, savefile: &str, view: View) -> String {
    gtkw_for(
        &Params::default().with_variant(variant),
        dumpfile,
        savefile,
        view,
    )
}

/// The GTKWave save file `savefile` for a VCD of the unit `p` (its
/// variant, the widths of its registers, all its rows) whose file name is
/// `dumpfile`, opening on `view`. GTKWave finds the VCD beside the save file
/// from any working directory (`[savefile]` names the save file, so a
/// relative `[dumpfile]` is taken relative to it).
pub fn gtkw_for(p: &Params, dumpfile: &str, savefile: &str, view: View) -> String {
    let variant = p.variant;
    let w = hw::Widths::of(p);
    let fmt = variant == Variant::Fmt;
    let mut s = String::new();
    let mut line = |x: &str| {
        s.push_str(x);
        s.push('\n');
    };
    line(&format!(
        "{LAYOUT_FIRST_LINE}{} counter unit: layout for `cpistack` VCDs (written by `cpistack waves`)",
        variant.name()
    ));
    line(&format!("[dumpfile] \"{dumpfile}\""));
    line(&format!("[savefile] \"{savefile}\""));
    line(&format!("[timestart] {}", view.first() * CYCLE_NS));
    line("[size] 1600 1000");
    line("[pos] -1 -1");
    // the zoom, the primary marker (-1: none), then 26 named markers
    let marker = view.mark.map_or(-1, |m| (m * CYCLE_NS) as i64);
    line(&format!("*{:.6} {marker}{}", view.zoom(), " -1".repeat(26)));
    line("[treeopen] top.");
    line("[sst_width] 220");
    line("[signals_width] 300");
    line("[sst_expanded] 0");
    line("[sst_vpaned_height] 300");
    const BIN: &str = "@28";
    const DEC: &str = "@24";
    const HEX: &str = "@22";
    let range = |n: &str, width: u32| {
        if width == 1 {
            n.to_string()
        } else {
            format!("{n}[{}:0]", width - 1)
        }
    };
    let mut out: Vec<String> = Vec::new();
    // GTKWave's flags: 0x800000 a group's start, 0x1000000 its end,
    // 0x400000 closed, 0x200 blank (0x1000, "collapsed", would hide the
    // group's own line: a closed group then could not be opened)
    let group = |out: &mut Vec<String>, name: &str, closed: bool| {
        out.push(if closed { "@c00200" } else { "@800200" }.into());
        out.push(format!("-{name}"));
    };
    let end = |out: &mut Vec<String>, name: &str, closed: bool| {
        out.push(if closed { "@1401200" } else { "@1000200" }.into());
        out.push(format!("-{name}"));
    };
    let trace = |out: &mut Vec<String>, flags: &str, name: String| {
        out.push(flags.into());
        out.push(name);
    };
    // An enumeration is shown by its `string` variable, which needs no
    // translate filter (GTKWave looks a filter up relative to its working
    // directory, so a layout that used them lost the names anywhere else).
    let named = |out: &mut Vec<String>, name: &str| {
        out.push(BIN.into());
        out.push(format!("{name}_s"));
    };
    trace(&mut out, BIN, "top.clk".into());
    trace(&mut out, DEC, "top.bundles[63:0]".into());
    group(&mut out, "inputs", false);
    trace(&mut out, BIN, "top.in.count_enable".into());
    named(&mut out, "top.in.fetch_stall");
    trace(&mut out, DEC, "top.in.fetched_branches[7:0]".into());
    trace(&mut out, BIN, "top.in.fe_redirect".into());
    trace(&mut out, DEC, "top.in.fe_squash[7:0]".into());
    trace(&mut out, DEC, "top.in.dispatched[7:0]".into());
    trace(&mut out, BIN, "top.in.dispatched_branches[7:0]".into());
    trace(&mut out, BIN, "top.in.dispatched_imiss[7:0]".into());
    named(&mut out, "top.in.squash_kind");
    trace(&mut out, DEC, "top.in.squash_id[15:0]".into());
    trace(&mut out, DEC, "top.in.retired[7:0]".into());
    // shown as `head_cause`: the input says why the ROB head waits (the
    // FMT's and the ROB's head pointers are `head` and `rob_head`)
    out.push(BIN.into());
    out.push("+{head_cause} top.in.head_s".into());
    trace(&mut out, BIN, "top.in.backend_full".into());
    end(&mut out, "inputs", false);

    group(&mut out, "ROB", false);
    trace(&mut out, DEC, range("top.rob.rob_count", w.rob_count));
    trace(&mut out, DEC, range("top.rob.rob_head", w.rob_id));
    trace(&mut out, DEC, range("top.rob.rob_tail", w.rob_id));
    trace(&mut out, BIN, "top.rob.rob_full".into());
    if !fmt {
        trace(&mut out, HEX, range("top.rob.imiss", p.rob_entries));
    }
    end(&mut out, "ROB", false);

    group(&mut out, "pointers", false);
    for n in [
        "head",
        "dtail",
        "ftail",
        "free_rows",
        "dispatched_rows",
        "fetched_rows",
    ] {
        trace(&mut out, DEC, range(&format!("top.fmt.{n}"), w.ptr));
    }
    end(&mut out, "pointers", false);

    group(&mut out, "refill", false);
    trace(&mut out, BIN, "top.fmt.refilling".into());
    trace(&mut out, BIN, "top.fmt.refill_pending".into());
    end(&mut out, "refill", false);
    if !fmt {
        group(&mut out, "shared I-counters", false);
        for n in ["shared_l1i", "shared_l2i", "shared_itlb"] {
            trace(&mut out, DEC, range(&format!("top.fmt.{n}"), w.local));
        }
        end(&mut out, "shared I-counters", false);
    }

    group(&mut out, "rows", false);
    // every row: the first three open, the rest closed, in a closed group
    // of their own (one line, so that the counters stay near)
    const OPEN_ROWS: u32 = 3;
    let more = (p.fmt_rows > OPEN_ROWS).then(|| {
        format!(
            "{} to {}",
            row_name(OPEN_ROWS as usize, p.fmt_rows),
            row_name(p.fmt_rows as usize - 1, p.fmt_rows)
        )
    });
    for r in 0..p.fmt_rows {
        let closed = r >= OPEN_ROWS;
        if let (OPEN_ROWS, Some(m)) = (r, &more) {
            group(&mut out, m, true);
        }
        let g = row_name(r as usize, p.fmt_rows);
        group(&mut out, &g, closed);
        named(&mut out, &format!("top.fmt.{g}_state"));
        trace(
            &mut out,
            DEC,
            range(&format!("top.fmt.{g}_rob_id"), w.rob_id),
        );
        trace(
            &mut out,
            DEC,
            range(&format!("top.fmt.{g}_penalty"), w.local),
        );
        trace(&mut out, BIN, format!("top.fmt.{g}_mispredict"));
        trace(&mut out, BIN, format!("top.fmt.{g}_done"));
        if fmt {
            for f in ["l1i", "l2i", "itlb"] {
                trace(&mut out, DEC, range(&format!("top.fmt.{g}_{f}"), w.local));
            }
        }
        end(&mut out, &g, closed);
    }
    if let Some(m) = &more {
        end(&mut out, m, true);
    }
    end(&mut out, "rows", false);

    group(&mut out, "counters", false);
    for c in Counter::ALL {
        trace(
            &mut out,
            DEC,
            range(&format!("top.counters.{}", c.name()), w.global),
        );
    }
    trace(&mut out, BIN, "top.counters.saturated".into());
    group(&mut out, "overflow", true);
    for c in Counter::ALL {
        trace(&mut out, BIN, format!("top.counters.{}_ovf", c.name()));
    }
    end(&mut out, "overflow", true);
    end(&mut out, "counters", false);

    group(&mut out, "error", false);
    trace(&mut out, BIN, "top.err.valid".into());
    trace(&mut out, DEC, "top.err.bundle[63:0]".into());
    named(&mut out, "top.err.field");
    named(&mut out, "top.err.rule");
    end(&mut out, "error", false);

    for o in out {
        line(&o);
    }
    line("[pattern_trace] 1");
    line("[pattern_trace] 0");
    s
}

/// Write the GTKWave layout into `dir`: `fmt.gtkw` (pointing at
/// `mispredict.vcd`), `sfmt.gtkw` (at `mispredict-sfmt.vcd`) and the filter files.
pub fn write_layout(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    write_layout_for(dir, "mispredict", &Params::default())
}

/// [`write_layout`] for the waveforms `<scenario>.vcd` and
/// `<scenario>-sfmt.vcd` of a unit of parameters `p` (either variant).
pub fn write_layout_for(
    dir: &Path,
    scenario: &str,
    p: &Params,
) -> anyhow::Result<Vec<std::path::PathBuf>> {
    crate::paths::create_dir(dir, "the layout's directory")?;
    let mut files = Vec::new();
    let view =
        View::of(crate::scenarios::by_name(scenario).map_or(u64::MAX, |s| s.bundles.len() as u64));
    for (name, text) in filter_files().into_iter().chain([
        (
            "fmt.gtkw",
            gtkw_for(
                &p.with_variant(Variant::Fmt),
                &format!("{scenario}.vcd"),
                "fmt.gtkw",
                view,
            ),
        ),
        (
            "sfmt.gtkw",
            gtkw_for(
                &p.with_variant(Variant::Sfmt),
                &format!("{scenario}-sfmt.vcd"),
                "sfmt.gtkw",
                view,
            ),
        ),
    ]) {
        let p = dir.join(name);
        crate::paths::write_whole(&p, text.as_bytes())?;
        files.push(p);
    }
    Ok(files)
}

/// The GTKWave layout of the VCD `vcd`: the same name with `.gtkw` for its
/// extension; `None` for a VCD itself named `.gtkw`.
pub fn layout_path(vcd: &Path) -> Option<std::path::PathBuf> {
    match vcd.extension() {
        Some(e) if e.eq_ignore_ascii_case("gtkw") => None,
        _ => Some(vcd.with_extension("gtkw")),
    }
}

/// The layout file beside the VCD `vcd` ([`layout_path`]); `None` for a VCD
/// written directly (a pipe, `/dev/stdout`), which gets none.
fn layout_beside(vcd: &Path) -> Option<std::path::PathBuf> {
    layout_path(vcd).filter(|_| !crate::paths::written_directly(vcd))
}

/// Fails if `layout` holds a file that is not a `cpistack` layout, by the
/// rule `cpistack waves` applies to its outputs ([`ours_or_free`]: an empty
/// file is written over).
fn refuse_foreign(layout: &Path, vcd: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        ours_or_free(layout),
        "{}: not overwritten with the GTKWave layout of {}: it is not a cpistack layout \
         (move it, or write the VCD under another name)",
        layout.display(),
        vcd.display()
    );
    Ok(())
}

/// Write, beside the VCD `vcd` of a unit of parameters `p`, its layout
/// ([`layout_path`], [`gtkw_for`]: the unit's variant, register widths and
/// rows, the VCD named by its file name), so that every VCD opens with a
/// layout that shows all of its signals. Nothing for a VCD written directly
/// (a pipe, `/dev/stdout`); a file of the layout's name that is not a
/// `cpistack` layout is not overwritten (an error). It opens on `view`.
pub fn write_vcd_layout(
    vcd: &Path,
    p: &Params,
    view: View,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let Some(path) = layout_beside(vcd) else {
        return Ok(None);
    };
    refuse_foreign(&path, vcd)?;
    let name = vcd.file_name().unwrap_or_default().to_string_lossy();
    let save = path.file_name().unwrap_or_default().to_string_lossy();
    crate::paths::write_whole(&path, gtkw_for(p, &name, &save, view).as_bytes())?;
    Ok(Some(path))
}

/// Fails if the layout of the VCD `vcd` would overwrite a file that is not a
/// `cpistack` layout: checked before a run starts, and again when writing.
pub fn check_layout_free(vcd: &Path) -> anyhow::Result<()> {
    layout_beside(vcd).map_or(Ok(()), |l| refuse_foreign(&l, vcd))
}

/// What every layout `cpistack` writes starts with.
const LAYOUT_FIRST_LINE: &str = "[*] cpistack ";

/// `s` as one shell word, so that a printed command can be pasted.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-+=:@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `--vcd FILE` and `--window FROM:TO`, shared by `check`, `replay` and `run`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WaveArgs {
    /// Write a VCD waveform of the bit-accurate unit to FILE, and its GTKWave
    /// layout beside it (FILE with the extension `.gtkw`; open both with
    /// `gtkwave FILE LAYOUT`). With `--variant both`, FILE holds FMT and FILE
    /// with `-sfmt` before its extension holds sFMT.
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<std::path::PathBuf>,
    /// Dump only cycles FROM to TO (TO excluded; bundle indices from 0). Time 0 of
    /// the file is cycle FROM.
    #[arg(long, value_name = "FROM:TO", requires = "vcd")]
    pub window: Option<Window>,
}

impl WaveArgs {
    /// The file of the `k`-th attached variant (`k == 0`: FILE as given).
    pub fn path(&self, k: usize, v: Variant) -> Option<std::path::PathBuf> {
        let p = self.vcd.as_ref()?;
        Some(if k == 0 {
            p.clone()
        } else {
            variant_path(p, v)
        })
    }

    /// A tracer for the `k`-th attached unit (`None` without `--vcd`). `unit` is in
    /// its state before cycle 0. It writes `FILE.part`, renamed to FILE when
    /// [`Traced::finish`] succeeds, so that a run that never reaches its window
    /// (or is killed) leaves an earlier FILE as it was.
    pub fn tracer(&self, k: usize, unit: &hw::Unit) -> anyhow::Result<Option<Traced>> {
        let Some(path) = self.path(k, unit.params().variant) else {
            return Ok(None);
        };
        crate::paths::output_file(&path, "--vcd")?;
        Traced::create(path, unit, self.window.unwrap_or(Window::ALL)).map(Some)
    }

    /// Fails, before any work, if the VCDs of `variants` cannot all be
    /// written (or a layout beside one would overwrite a file that is not a
    /// layout: [`check_layout_free`]): with two variants the second goes to FILE with `-sfmt` before
    /// its extension, which is not a place for a FILE written directly
    /// (`/dev/stdout`, a named pipe: its `-sfmt` sibling would be a new file
    /// in `/dev`, or beside the pipe, that nobody reads).
    pub fn check_variants(&self, variants: &[Variant]) -> anyhow::Result<()> {
        match &self.vcd {
            Some(p) if variants.len() > 1 && crate::paths::written_directly(p) => {
                anyhow::bail!(
                    "--vcd {}: two variants need a file each, and this one is written \
                     directly (a pipe, a device, or a path through /dev or /proc); \
                     choose one with --variant fmt or --variant sfmt, or give a regular file",
                    p.display()
                )
            }
            _ => {
                // each VCD is a legal output, and the layout beside it must
                // not overwrite someone's file
                for p in self.paths(variants) {
                    crate::paths::output_file(&p, "--vcd")?;
                    check_layout_free(&p)?;
                }
                Ok(())
            }
        }
    }

    /// Fails if a VCD this run would write, or its layout, is the input
    /// file `input`.
    pub fn refuse_overwrite(&self, input: &Path, variants: &[Variant]) -> anyhow::Result<()> {
        for p in self.paths(variants) {
            crate::paths::refuse_overwrite(input, &p, "--vcd")?;
        }
        for p in self.layouts(variants) {
            crate::paths::refuse_overwrite(input, &p, "--vcd's GTKWave layout")?;
        }
        Ok(())
    }

    /// The GTKWave layouts written beside the VCDs of `variants`
    /// ([`write_vcd_layout`]; none without `--vcd`, or for a VCD written
    /// directly).
    pub fn layouts(&self, variants: &[Variant]) -> Vec<std::path::PathBuf> {
        (self.paths(variants).iter())
            .filter_map(|p| layout_beside(p))
            .collect()
    }

    /// The files of the VCDs of `variants`, in order ([`WaveArgs::path`];
    /// none without `--vcd`).
    pub fn paths(&self, variants: &[Variant]) -> Vec<std::path::PathBuf> {
        (variants.iter().enumerate())
            .filter_map(|(k, &v)| self.path(k, v))
            .collect()
    }
}

/// A file tracer and its path.
pub struct Traced {
    /// The file the VCD ends up in (written to `FILE.part` until it is
    /// finished: [`crate::paths::part_path`]).
    pub path: std::path::PathBuf,
    /// The unit's parameters, for the layout written beside the VCD.
    pub params: Params,
    pub tracer: FileTracer,
}

impl Traced {
    /// A tracer of `unit` (from its cycle 0) writing `path` through
    /// `path.part`, so that an interrupted run leaves no cut-off VCD; the
    /// error names the file.
    pub fn create(
        path: std::path::PathBuf,
        unit: &hw::Unit,
        window: Window,
    ) -> anyhow::Result<Traced> {
        let tracer = create(&crate::paths::part_path(&path), unit, 0, window)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(Traced {
            path,
            params: *unit.params(),
            tracer,
        })
    }

    /// Finish the file and move it to its name; the error names it. If the
    /// window was never reached, or the file could not be finished, nothing
    /// is left behind (an earlier file of the name is kept).
    /// Beside the VCD it writes its GTKWave layout ([`write_vcd_layout`]);
    /// returns the files.
    pub fn finish(self) -> anyhow::Result<(std::path::PathBuf, Option<std::path::PathBuf>)> {
        let view = View::of(self.tracer.cycles_dumped());
        match self.tracer.finish() {
            Ok(_) => {
                crate::paths::move_into_place(&self.path, "--vcd")?;
                let layout = write_vcd_layout(&self.path, &self.params, view)?;
                Ok((self.path, layout))
            }
            Err(e) => {
                crate::paths::remove_part(&self.path);
                Err(anyhow::anyhow!(
                    "{}: {e} (no file written)",
                    self.path.display()
                ))
            }
        }
    }
}

/// Finish every tracer of a run and report the files on stderr; all are
/// finished (or removed) before the first error, if any, is returned, and the
/// others are reported as warnings.
pub fn finish_all(ts: Vec<Option<Traced>>) -> anyhow::Result<()> {
    finish_each(ts, "waveform").map_or(Ok(()), Err)
}

/// After the run failed with `err`: finish every tracer (the waveform of the
/// cycles up to the failure), reporting each file, or why it could not be
/// written, on stderr, and return `err`: a problem with a waveform never
/// hides the failure itself.
pub fn finish_after_failure(ts: Vec<Option<Traced>>, err: anyhow::Error) -> anyhow::Error {
    if let Some(e) = finish_each(ts, "waveform (up to the failure)") {
        eprintln!("warning: {e:#}");
    }
    err
}

/// Finish every tracer, each file reported on stderr as `done: FILE`; returns
/// the first error, after reporting any later ones as warnings.
fn finish_each(ts: Vec<Option<Traced>>, done: &str) -> Option<anyhow::Error> {
    let mut first = None;
    for t in ts.into_iter().flatten() {
        match t.finish() {
            Ok((p, None)) => eprintln!("{done}: {}", p.display()),
            Ok((p, Some(l))) => eprintln!(
                "{done}: {} (its GTKWave layout: {}; open with: gtkwave {} {})",
                p.display(),
                l.display(),
                shell_word(&p.display().to_string()),
                shell_word(&l.display().to_string())
            ),
            Err(e) if first.is_none() => first = Some(e),
            Err(e) => eprintln!("warning: {e:#}"),
        }
    }
    first
}

/// `cpistack waves`: one VCD per scenario of the scenario table.
#[derive(clap::Args, Debug, Clone)]
pub struct WavesCmdArgs {
    /// Output directory.
    #[arg(long, default_value = "waves")]
    pub out: std::path::PathBuf,
    /// Only these scenarios (repeatable; default: all).
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,
}

/// Every `--scenario` is a scenario of the table, named once.
fn check_scenario_names(names: &[String]) -> anyhow::Result<()> {
    let all = crate::scenarios::all();
    for (i, n) in names.iter().enumerate() {
        if !all.iter().any(|s| s.name == n) {
            let names: Vec<&str> = all.iter().map(|s| s.name).collect();
            anyhow::bail!("no scenario `{n}`; the scenarios are: {}", names.join(", "));
        }
        if names[..i].contains(n) {
            anyhow::bail!("--scenario: `{n}` is named twice");
        }
    }
    Ok(())
}

/// The VCD of scenario `sc` for variant `v`: `<sc>.vcd` (FMT) or
/// `<sc>-sfmt.vcd` (sFMT).
fn scenario_vcd(sc: &str, v: Variant) -> String {
    match v {
        Variant::Fmt => format!("{sc}.vcd"),
        Variant::Sfmt => format!("{sc}-sfmt.vcd"),
    }
}

/// Whether the file at `path` may be written over by `cpistack waves`: it
/// does not exist, is empty, or is one of the kinds `waves` writes, written
/// by `cpistack` (a layout, a VCD of the unit), or a translate filter (lines
/// `0 name`, `1 name`, ... in order).
fn ours_or_free(path: &Path) -> bool {
    let Ok(mut f) = std::fs::File::open(path) else {
        return !path.exists();
    };
    let mut head = Vec::new();
    if io::Read::read_to_end(&mut io::Read::take(&mut f, 4096), &mut head).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    match path.extension().and_then(|e| e.to_str()) {
        // (empty: left by an older version's interrupted run)
        _ if head.is_empty() => true,
        Some("gtkw") => text.starts_with(LAYOUT_FIRST_LINE),
        Some("vcd") => text.starts_with("$date") && text.contains("\n    cpistack "),
        // a translate filter as `filter_files` writes one: `0 name`, `1 name`, ...
        Some("txt") => (text.lines().enumerate()).all(|(i, l)| {
            l.split_once(' ')
                .is_some_and(|(n, name)| n == i.to_string() && !name.is_empty())
        }),
        _ => false,
    }
}

/// Every file `cpistack waves` would write into `--out`: the scenarios' VCDs
/// and their layouts, the filters and the two variants' layouts.
fn waves_outputs(a: &WavesCmdArgs) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for sc in selected(a) {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let vcd = a.out.join(scenario_vcd(sc.name, v));
            out.extend(layout_path(&vcd));
            out.push(vcd);
        }
    }
    let fixed = filter_files().into_iter().map(|(n, _)| n);
    out.extend(
        fixed
            .chain(["fmt.gtkw", "sfmt.gtkw"])
            .map(|n| a.out.join(n)),
    );
    out
}

/// Fails, before anything is written, if `--out` holds a file of a name
/// `waves` writes that `waves` did not write ([`ours_or_free`]): earlier
/// output is regenerated, someone's own file is never replaced.
fn refuse_foreign_outputs(a: &WavesCmdArgs) -> anyhow::Result<()> {
    for p in waves_outputs(a) {
        if p.is_dir() || !ours_or_free(&p) {
            anyhow::bail!(
                "--out {}: {} exists and is not a file that `cpistack waves` writes; \
                 not overwritten (move it, or give --out another directory)",
                a.out.display(),
                p.display()
            );
        }
    }
    Ok(())
}

/// The scenarios `--scenario` names (all of them without one), in the
/// table's order.
fn selected(a: &WavesCmdArgs) -> Vec<crate::scenarios::Scenario> {
    (crate::scenarios::all().into_iter())
        .filter(|s| a.scenarios.is_empty() || a.scenarios.iter().any(|n| n == s.name))
        .collect()
}

/// Write `<out>/<scenario>.vcd` (FMT) and `<out>/<scenario>-sfmt.vcd` (sFMT) for
/// every scenario; returns the files written. A bad name, or someone's file
/// in the way, is found before `--out` is made.
pub fn write_scenarios(a: &WavesCmdArgs) -> anyhow::Result<Vec<std::path::PathBuf>> {
    check_scenario_names(&a.scenarios)?;
    refuse_foreign_outputs(a)?;
    crate::paths::create_dir(&a.out, "--out")?;
    let mut out = Vec::new();
    for sc in selected(a) {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let path = a.out.join(scenario_vcd(sc.name, v));
            let ctx = || format!("scenario {}", sc.name);
            let mut u = hw::Unit::new(sc.params.with_variant(v))?;
            // as `--vcd`: through FILE.part, and with its layout
            let mut t = anyhow::Context::with_context(Traced::create(path, &u, Window::ALL), ctx)?;
            for ev in &sc.bundles {
                u.step_traced(ev, &mut t.tracer);
            }
            let (path, layout) = anyhow::Context::with_context(t.finish(), ctx)?;
            out.extend(layout);
            out.push(path);
        }
    }
    Ok(out)
}

/// `cpistack waves`. The layout points at `mispredict.vcd` when it is among
/// the scenarios written, else at the first one named, and has that
/// scenario's register widths and rows.
pub fn cmd(a: &WavesCmdArgs) -> anyhow::Result<()> {
    let mut files = write_scenarios(a)?;
    let shown = if a.scenarios.is_empty() || a.scenarios.iter().any(|n| n == "mispredict") {
        "mispredict"
    } else {
        &a.scenarios[0]
    };
    let shown = crate::scenarios::by_name(shown).expect("write_scenarios checked every name");
    files.extend(write_layout_for(&a.out, shown.name, &shown.params)?);
    let dir = a.out.display().to_string();
    println!(
        "wrote {} files (scenario waveforms, each with its GTKWave layout, and filters) to {dir}; open one with: cd {} && gtkwave {}.gtkw",
        files.len(),
        shell_word(&dir),
        shown.name
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use events::{FetchStall, Field, HeadCause};

    /// A scenario that does not exist, or one named twice, is refused
    /// before anything is written.
    #[test]
    fn scenario_names_are_checked_before_writing() {
        let out = std::env::temp_dir().join(format!("cpistack-waves-names-{}", std::process::id()));
        let args = |s: &[&str]| WavesCmdArgs {
            out: out.to_path_buf(),
            scenarios: s.iter().map(|s| s.to_string()).collect(),
        };
        let e = write_scenarios(&args(&["mispredict", "nope"])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("no scenario `nope`; the scenarios are: "),
            "{e}"
        );
        let e = write_scenarios(&args(&["mispredict", "flush", "mispredict"])).unwrap_err();
        assert_eq!(e.to_string(), "--scenario: `mispredict` is named twice");
        assert!(!out.exists());
        // through the command: --out is not made either
        let e = cmd(&args(&["nope"])).unwrap_err();
        assert!(e.to_string().starts_with("no scenario `nope`"), "{e}");
        assert!(!out.exists());
    }

    /// `waves` writes over its own earlier output, and refuses, before
    /// writing anything, a file of one of its names that it did not write.
    #[test]
    fn waves_regenerates_its_own_files_and_refuses_foreign_ones() {
        let out = crate::fresh_dir("waves-foreign");
        let args = WavesCmdArgs {
            out: out.to_path_buf(),
            scenarios: vec!["mispredict".into()],
        };
        cmd(&args).unwrap();
        let vcd = std::fs::read(out.join("mispredict.vcd")).unwrap();
        cmd(&args).unwrap(); // its own files: regenerated
        assert_eq!(std::fs::read(out.join("mispredict.vcd")).unwrap(), vcd);
        for (name, foreign) in [
            ("mispredict-sfmt.gtkw", "mine"),
            ("head.txt", "mydata"),
            ("head.txt", "1 check rob\n"),
            ("fmt.gtkw", "[*] a layout of my own"),
            ("mispredict.vcd", "$date\n today\n$end\n"),
        ] {
            std::fs::remove_file(out.join("mispredict-sfmt.vcd")).unwrap();
            let keep = std::fs::read(out.join(name)).unwrap();
            std::fs::write(out.join(name), foreign).unwrap();
            let e = cmd(&args).unwrap_err().to_string();
            assert!(
                e.contains("is not a file that `cpistack waves` writes"),
                "{name}: {e}"
            );
            assert_eq!(std::fs::read_to_string(out.join(name)).unwrap(), foreign);
            assert!(
                !out.join("mispredict-sfmt.vcd").exists(),
                "{name}: nothing written"
            );
            std::fs::write(out.join(name), keep).unwrap();
            cmd(&args).unwrap();
        }
        // an empty file (an interrupted older run) is regenerated, a VCD's
        // layout too (it was refused after the check let it through)
        let layout = std::fs::read(out.join("mispredict.gtkw")).unwrap();
        std::fs::write(out.join("mispredict.vcd"), "").unwrap();
        std::fs::write(out.join("mispredict.gtkw"), "").unwrap();
        cmd(&args).unwrap();
        assert_eq!(std::fs::read(out.join("mispredict.vcd")).unwrap(), vcd);
        assert_eq!(std::fs::read(out.join("mispredict.gtkw")).unwrap(), layout);
        assert!(!out.join("mispredict.vcd.part").exists());
    }

    #[test]
    fn enum_tables_follow_the_encodings() {
        for f in FetchStall::ALL {
            assert_eq!(FETCH_STALL_NAMES[f.bits() as usize], f.name());
        }
        for h in HeadCause::ALL {
            assert_eq!(HEAD_NAMES[h.bits() as usize], h.name());
        }
        for f in Field::ALL {
            assert_eq!(FIELD_NAMES[f.bits() as usize], f.name());
        }
        for s in [
            events::Squash::None,
            events::Squash::Mispredict(1),
            events::Squash::Flush(1),
        ] {
            assert_eq!(SQUASH_NAMES[s.kind_bits() as usize], s.name());
        }
    }

    #[test]
    fn window_parses() {
        assert_eq!(
            "10:20".parse::<Window>().unwrap(),
            Window { from: 10, to: 20 }
        );
        assert_eq!(":5".parse::<Window>().unwrap(), Window { from: 0, to: 5 });
        assert_eq!("7:".parse::<Window>().unwrap().to, u64::MAX);
        // each refusal says what is wrong
        for (w, why) in [
            (
                "5:5",
                "`--window 5:5`: FROM 5 is not below TO 5; expected FROM:TO",
            ),
            ("x", "`--window x`: expected FROM:TO"),
            (
                "1:2x",
                "`--window 1:2x`: `2x` is not a cycle number; expected",
            ),
            (
                "1:99999999999999999999",
                "99999999999999999999 is past the last cycle a run can have (18446744073709551615)",
            ),
        ] {
            let e = w.parse::<Window>().unwrap_err().to_string();
            assert!(e.contains(why), "{w}: {e}");
        }
        // shown as written, an open end empty (not 18446744073709551615)
        for w in ["10:20", ":5", "7:", ":"] {
            assert_eq!(w.parse::<Window>().unwrap().to_string(), w);
        }
        assert_eq!("0:1_000".parse::<Window>().unwrap().to_string(), ":1000");
        let e =
            |window: Window, cycles| WavesError::WindowNotReached { window, cycles }.to_string();
        for w in [Window::ALL, Window { from: 0, to: 100 }] {
            assert_eq!(e(w, 0), "the run had no cycle: nothing to dump");
        }
        let w = Window {
            from: 5,
            to: u64::MAX,
        };
        assert!(e(w, 3).starts_with("the window 5: starts after"));
    }

    #[test]
    fn variant_path_inserts_the_name() {
        assert_eq!(
            variant_path(Path::new("a/b.vcd"), Variant::Sfmt),
            Path::new("a/b-sfmt.vcd")
        );
    }

    /// A VCD read back naively from its text: every variable's full name
    /// and declared width (a `string` 0) in declaration order, its id, and
    /// the changes at each time (`$dumpvars` at time 0) in file order.
    struct Dump {
        vars: Vec<(String, u32)>,
        ids: std::collections::BTreeMap<String, String>,
        times: Vec<(u64, Vec<(String, String)>)>,
    }

    fn read_dump(bytes: &[u8]) -> Dump {
        let text = std::str::from_utf8(bytes).unwrap();
        let mut lines = text.lines();
        let (mut path, mut vars) = (Vec::new(), Vec::new());
        let mut ids = std::collections::BTreeMap::new();
        for l in lines.by_ref() {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w.first().copied() {
                Some("$scope") => path.push(w[2]),
                Some("$upscope") => drop(path.pop()),
                Some("$var") => {
                    let name = format!("{}.{}", path.join("."), w[4]);
                    let width = if w[1] == "string" {
                        0
                    } else {
                        w[2].parse().unwrap()
                    };
                    vars.push((name.clone(), width));
                    ids.insert(name, w[3].to_string());
                }
                Some("$enddefinitions") => break,
                _ => {}
            }
        }
        let mut times: Vec<(u64, Vec<(String, String)>)> = Vec::new();
        for l in lines {
            if let Some(t) = l.strip_prefix('#') {
                times.push((t.parse().unwrap(), Vec::new()));
            } else if l != "$dumpvars" && l != "$end" {
                let (v, id) = match l.split_once(' ') {
                    Some((v, id)) => (v.to_string(), id.to_string()),
                    None => (l[..1].to_string(), l[1..].to_string()),
                };
                times
                    .last_mut()
                    .expect("a change before #0")
                    .1
                    .push((id, v));
            }
        }
        Dump { vars, ids, times }
    }

    impl Dump {
        /// The changes written at time `t` to the variable `name`.
        fn changes(&self, name: &str, t: u64) -> Vec<&str> {
            let id = &self.ids[name];
            (self.times.iter().filter(|(u, _)| *u == t))
                .flat_map(|(_, c)| c.iter().filter(|(i, _)| i == id).map(|(_, v)| v.as_str()))
                .collect()
        }
    }

    /// Trace `bundles` on a fresh unit of `p` from cycle 0 into memory.
    fn traced(p: Params, bundles: &[CycleEvents], w: Window) -> Vec<u8> {
        let mut u = hw::Unit::new(p).unwrap();
        let mut t = VcdTracer::new(Vec::new(), &u, 0, w).unwrap();
        for ev in bundles {
            u.step_traced(ev, &mut t);
        }
        t.finish().unwrap()
    }

    /// `var_names` lists, in order, the names and widths the header
    /// declares: at the default parameters 633 variables (2 at the top, 13
    /// inputs and 3 of their names, 4 of the ROB, 8 pointers and flags and
    /// 9 for each of the 64 rows, 21 counters and flags, 6 of the error).
    #[test]
    fn var_names_are_the_variables_the_header_declares() {
        let p = Params::default();
        let mut u = hw::Unit::new(p).unwrap();
        let mut t = VcdTracer::new(Vec::new(), &u, 0, Window::ALL).unwrap();
        let names = t.var_names().to_vec();
        u.step_traced(&CycleEvents::idle(), &mut t);
        let d = read_dump(&t.finish().unwrap());
        assert_eq!(names, d.vars);
        assert_eq!(names.len(), 2 + 16 + 4 + 8 + 64 * 9 + 21 + 6);
        for (name, width) in [
            ("top.clk", 1),
            ("top.bundles", 64),
            ("top.in.squash_id", 16),
            ("top.in.head_s", 0),
            ("top.rob.rob_head", 7),
            ("top.fmt.ftail", 7),
            ("top.fmt.row63_penalty", 16),
            ("top.fmt.row63_state_s", 0),
            ("top.counters.bpred", 48),
            ("top.rob.rob_count", 8),
            ("top.err.rule", 4),
        ] {
            assert!(
                names.contains(&(name.to_string(), width)),
                "{name} of width {width}"
            );
        }
    }

    /// Time 0 is the later of the window's start and the cycle the tracer
    /// starts at, and the header says which cycle it is.
    #[test]
    fn the_first_cycle_is_the_later_of_the_window_start_and_the_start_of_tracing() {
        let u = hw::Unit::new(Params::default()).unwrap();
        for (from, first) in [(3, 5), (8, 8)] {
            let t = VcdTracer::new(Vec::new(), &u, 5, Window { from, to: 20 }).unwrap();
            assert_eq!(t.first_cycle(), first, "window {from}:20 from cycle 5");
            let head = String::from_utf8(t.buf.clone()).unwrap();
            assert!(head.contains(&format!("time 0 = cycle {first};")), "{head}");
        }
    }

    /// After the last of three cycles, at time 30, every input (the 13
    /// fields and the names of the 3 enumerations) goes to `x` (`-` for a
    /// name), the clock falls once more at 35 and the file ends at 40.
    /// (`backend_full`, declared last, used to keep its value there.)
    #[test]
    fn after_the_last_cycle_every_input_goes_to_x() {
        let p = Params::default();
        let ev = CycleEvents {
            fetched_branches: 1,
            head: HeadCause::L1d,
            ..CycleEvents::idle()
        };
        let d = read_dump(&traced(p, &[ev, ev, ev], Window::ALL));
        let inputs: Vec<&String> = (d.vars.iter().map(|v| &v.0))
            .filter(|n| n.starts_with("top.in."))
            .collect();
        assert_eq!(inputs.len(), 16);
        for n in inputs {
            let want = match d.vars.iter().find(|v| &v.0 == n).unwrap().1 {
                0 => "s-",
                1 => "x",
                _ => "bx",
            };
            assert_eq!(d.changes(n, 30), [want], "{n} at 30");
        }
        assert_eq!(d.changes("top.clk", 35), ["0"]);
        let last = d.times.last().unwrap();
        assert_eq!((last.0, last.1.len()), (40, 0));
    }

    /// A writer that records the size of each write, or fails each one.
    struct Sink {
        writes: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
        fail: bool,
    }

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.writes.borrow_mut().push(b.len());
            if self.fail {
                return Err(io::Error::other("disk full"));
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn stress(p: Params, n: usize) -> Vec<CycleEvents> {
        events::gen::Generator::new(p, events::gen::GenConfig::stress(), 3)
            .take(n)
            .collect()
    }

    /// A long run does not keep its waveform in memory: the file reaches
    /// its writer while the run goes on, in writes of at least 64 KiB (2000
    /// stress cycles of the default unit are several hundred KiB), and
    /// holds the bytes a tracer writing into memory makes.
    #[test]
    fn the_vcd_reaches_its_writer_in_64_kib_chunks_while_the_run_goes_on() {
        let p = Params::default();
        let s = stress(p, 2000);
        let writes = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut u = hw::Unit::new(p).unwrap();
        let sink = Sink {
            writes: writes.clone(),
            fail: false,
        };
        let mut t = VcdTracer::new(sink, &u, 0, Window::ALL).unwrap();
        for ev in &s {
            u.step_traced(ev, &mut t);
        }
        let during = writes.borrow().clone();
        assert!(during.len() >= 3, "{during:?}");
        assert!(during.iter().all(|&n| n >= 65536), "{during:?}");
        t.finish().unwrap();
        let total: usize = writes.borrow().iter().sum();
        assert_eq!(total, traced(p, &s, Window::ALL).len());
    }

    /// A write that fails is not tried again: the tracer stops writing and
    /// `finish` returns the error.
    #[test]
    fn a_failed_write_is_not_retried_and_finish_returns_it() {
        let p = Params::default();
        let writes = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut u = hw::Unit::new(p).unwrap();
        let sink = Sink {
            writes: writes.clone(),
            fail: true,
        };
        let mut t = VcdTracer::new(sink, &u, 0, Window::ALL).unwrap();
        for ev in &stress(p, 2000) {
            u.step_traced(ev, &mut t);
        }
        let e = t.finish().err().expect("the write error");
        assert!(matches!(e, WavesError::Io(_)), "{e}");
        assert_eq!(e.to_string(), "writing the VCD: disk full");
        assert_eq!(writes.borrow().len(), 1);
    }

    /// A VCD named without an extension gets the variant after its name.
    #[test]
    fn variant_path_of_a_file_without_an_extension_appends_the_name() {
        assert_eq!(
            variant_path(Path::new("a/b"), Variant::Sfmt),
            Path::new("a/b-sfmt")
        );
    }

    /// A printed file name is one shell word: a plain one as it is, any
    /// other in single quotes, a quote in it closed, escaped and reopened.
    #[test]
    fn shell_word_quotes_only_names_the_shell_would_split_or_expand() {
        for plain in ["waves/mispredict-sfmt.vcd", "a_b.c+d=e:f@g%h", "X9"] {
            assert_eq!(shell_word(plain), plain);
        }
        assert_eq!(shell_word("my waves/x.vcd"), "'my waves/x.vcd'");
        assert_eq!(shell_word("$HOME/x.vcd"), "'$HOME/x.vcd'");
        assert_eq!(shell_word("it's.vcd"), r"'it'\''s.vcd'");
        assert_eq!(shell_word(""), "''");
    }

    /// The layouts of the default unit (`waves/fmt.gtkw`, `waves/sfmt.gtkw`)
    /// show its registers at their widths: 7-bit pointers and ROB ids (64
    /// rows, 128 entries), 16-bit rows, 48-bit counters, rows 00 to 63; sFMT
    /// with the 128-bit I-miss vector and no I-counters in its rows.
    #[test]
    fn the_default_layouts_show_the_default_units_registers_at_their_widths() {
        for (v, vcd) in [(Variant::Fmt, "m.vcd"), (Variant::Sfmt, "m-sfmt.vcd")] {
            let text = gtkw(v, vcd, "m.gtkw", View::START);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(
                lines[0],
                format!(
                    "[*] cpistack {} counter unit: layout for `cpistack` VCDs (written by `cpistack waves`)",
                    v.name()
                )
            );
            assert_eq!(lines[1], format!("[dumpfile] \"{vcd}\""));
            assert_eq!(lines[2], "[savefile] \"m.gtkw\"");
            for l in [
                "top.fmt.head[6:0]",
                "top.rob.rob_head[6:0]",
                "top.rob.rob_count[7:0]",
                "top.fmt.row07_penalty[15:0]",
                "top.fmt.row63_penalty[15:0]",
                "top.counters.bpred[47:0]",
                "+{head_cause} top.in.head_s",
            ] {
                assert!(lines.contains(&l), "{v:?}: {l}");
            }
            assert!(!text.contains("row64"), "{v:?}");
            // the rows come before the counters, the error latch last
            let at = |l: &str| lines.iter().position(|x| *x == l).unwrap();
            assert!(at("-rows") < at("-counters") && at("-counters") < at("-error"));
            let sfmt = v == Variant::Sfmt;
            assert_eq!(lines.contains(&"top.rob.imiss[127:0]"), sfmt, "{v:?}");
            assert_eq!(lines.contains(&"top.fmt.row00_l1i[15:0]"), !sfmt, "{v:?}");
        }
    }

    /// A closed group is written as GTKWave writes one (`@c00200` ...
    /// `@1401200`), its own line shown: with 0x1000 ("collapsed") on the
    /// start line GTKWave hides that line, and the group cannot be opened.
    /// The first three rows are open, the rest and `overflow` closed.
    #[test]
    fn closed_groups_keep_their_own_line_and_only_the_first_rows_are_open() {
        let text = gtkw(Variant::Fmt, "m.vcd", "m.gtkw", View::START);
        let lines: Vec<&str> = text.lines().collect();
        let mut starts = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            if let Some(flags) = l.strip_prefix('@') {
                let f = u64::from_str_radix(flags, 16).unwrap();
                if f & 0x80_0000 != 0 {
                    assert_eq!(f & 0x1000, 0, "line {}: {l}", i + 1);
                    starts.push((lines[i + 1], f & 0x40_0000 != 0));
                }
            }
        }
        let closed: Vec<&str> = (starts.iter()).filter(|s| s.1).map(|s| s.0).collect();
        assert_eq!(closed.len(), 1 + 1 + 61, "{closed:?}");
        assert!(closed.contains(&"-overflow") && closed.contains(&"-row03"));
        assert!(closed.contains(&"-row03 to row63"));
        assert!(starts.contains(&("-row02", false)) && starts.contains(&("-row63", true)));
        assert_eq!(text.matches("@c00200\n").count(), 63);
        assert_eq!(text.matches("@1401200\n").count(), 63);
        // two rows: both open, no group of the rest
        let two = gtkw_for(
            &Params {
                fmt_rows: 2,
                ..Params::default()
            },
            "m.vcd",
            "m.gtkw",
            View::START,
        );
        assert!(two.contains("-row01\n") && !two.contains(" to row"));
        assert_eq!(two.matches("@c00200\n").count(), 1, "overflow only");
    }

    /// A layout opens on the whole of a short VCD, on the first 48 cycles
    /// of a longer one, and on a mismatch with the cycles before it: the
    /// zoom fits the cycles shown in the wave pane (GTKWave draws
    /// 200 * 2^zoom pixels per ns), the marker is on the marked cycle.
    #[test]
    fn a_layout_opens_on_the_cycles_it_should_show() {
        let zoom_line = |v: View| {
            let t = gtkw(Variant::Fmt, "m.vcd", "m.gtkw", v);
            let z = t.lines().find(|l| l.starts_with('*')).unwrap().to_string();
            let start = t
                .lines()
                .find(|l| l.starts_with("[timestart]"))
                .unwrap()
                .to_string();
            (z, start)
        };
        let px = |z: &str| {
            let zoom: f64 = z[1..].split(' ').next().unwrap().parse().unwrap();
            200.0 * zoom.exp2()
        };
        // 11 cycles (and the last one's end): 120 ns across the pane
        let (z, start) = zoom_line(View::of(11));
        assert!((px(&z) * 120.0 - WAVE_PANE_PX).abs() < 0.5, "{z}");
        assert_eq!(start, "[timestart] 0");
        assert!(z.ends_with(&" -1".repeat(27)), "no marker: {z}");
        for v in [View::START, View::of(10_000)] {
            let (z, _) = zoom_line(v);
            assert!((px(&z) * 490.0 - WAVE_PANE_PX).abs() < 0.5, "{z}");
        }
        // a mismatch at the last cycle (230 of 231): the file's last 48
        // cycles, marked (not past the file's end)
        let (z, start) = zoom_line(View {
            cycles: 231,
            mark: Some(230),
        });
        assert_eq!(start, "[timestart] 1830");
        assert!(z.contains(" 2300 -1 "), "{z}");
        // in the middle: three quarters of the way across
        let (_, start) = zoom_line(View {
            cycles: 1000,
            mark: Some(500),
        });
        assert_eq!(start, "[timestart] 4640");
        // near the start, or in a short file: from 0
        let (_, start) = zoom_line(View {
            cycles: 231,
            mark: Some(20),
        });
        assert_eq!(start, "[timestart] 0");
        let (_, start) = zoom_line(View {
            cycles: 30,
            mark: Some(29),
        });
        assert_eq!(start, "[timestart] 0");
    }

    /// `write_layout` writes the six translate filters and the two layouts,
    /// which name the `mispredict` scenario's VCDs, and returns them.
    #[test]
    fn write_layout_writes_the_six_filters_and_both_layouts() {
        let dir = crate::fresh_dir("waves-layout");
        let files = write_layout(&dir).unwrap();
        let names: Vec<&str> = (files.iter())
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "fetch_stall.txt",
                "head.txt",
                "squash_kind.txt",
                "err_field.txt",
                "err_rule.txt",
                "row_state.txt",
                "fmt.gtkw",
                "sfmt.gtkw"
            ]
        );
        for p in &files {
            assert_eq!(p.parent(), Some(&*dir));
        }
        let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
        // opening on the whole `mispredict` scenario
        let view = View::of(
            crate::scenarios::by_name("mispredict")
                .unwrap()
                .bundles
                .len() as u64,
        );
        assert_eq!(
            read("fmt.gtkw"),
            gtkw(Variant::Fmt, "mispredict.vcd", "fmt.gtkw", view)
        );
        assert_eq!(
            read("sfmt.gtkw"),
            gtkw(Variant::Sfmt, "mispredict-sfmt.vcd", "sfmt.gtkw", view)
        );
        assert_eq!(
            read("head.txt"),
            "0 none\n1 l1d\n2 l2d\n3 dtlb\n4 longlat\n5 other\n"
        );
    }

    /// `replay FILE --vcd W` is refused when a file it would write is FILE:
    /// either variant's VCD, the part file one is written through, or the
    /// layout beside one; the sFMT files are not written with FMT alone,
    /// and nothing is without `--vcd`.
    #[test]
    fn a_vcd_its_part_or_its_layout_that_is_the_input_is_refused() {
        let d = crate::fresh_dir("waves-input");
        let a = WaveArgs {
            vcd: Some(d.join("w.vcd")),
            window: None,
        };
        let both = [Variant::Fmt, Variant::Sfmt];
        for (input, what) in [
            ("w.vcd", "--vcd "),
            ("w-sfmt.vcd.part", "--vcd "),
            ("w.gtkw", "--vcd's GTKWave layout "),
            ("w-sfmt.gtkw", "--vcd's GTKWave layout "),
        ] {
            let f = d.join(input);
            std::fs::write(&f, "the input").unwrap();
            let e = a.refuse_overwrite(&f, &both).unwrap_err().to_string();
            assert!(
                e.starts_with(what) && e.contains("would overwrite the input file"),
                "{input}: {e}"
            );
            let fmt_only = a.refuse_overwrite(&f, &[Variant::Fmt]);
            assert_eq!(fmt_only.is_err(), !input.contains("sfmt"), "{input}");
            assert!(WaveArgs::default().refuse_overwrite(&f, &both).is_ok());
            std::fs::remove_file(&f).unwrap();
        }
    }

    /// Finishing a run's waveforms finishes every one and returns the first
    /// error: of three, the first and last never reaching their window, the
    /// error names the first, the second is written with its layout, and no
    /// part file is left.
    #[test]
    fn finishing_the_waveforms_finishes_each_and_returns_the_first_error() {
        let d = crate::fresh_dir("waves-finish");
        let mut u = hw::Unit::new(Params::default()).unwrap();
        let late = Window { from: 100, to: 200 };
        let mut ts: Vec<Traced> = [("a.vcd", late), ("b.vcd", Window::ALL), ("c.vcd", late)]
            .map(|(n, w)| Traced::create(d.join(n), &u, w).unwrap())
            .into();
        let ev = CycleEvents::idle();
        for _ in 0..3 {
            u.step(&ev);
            for t in &mut ts {
                hw::Tracer::cycle(&mut t.tracer, &u, &ev);
            }
        }
        let e = finish_all(ts.into_iter().map(Some).collect()).unwrap_err();
        let e = e.to_string();
        assert!(
            e.starts_with(&format!(
                "{}: the window 100:200 starts after",
                d.join("a.vcd").display()
            )) && e.ends_with("(no file written)"),
            "{e}"
        );
        assert!(d.join("b.vcd").exists() && d.join("b.gtkw").exists());
        for n in ["a.vcd", "a.vcd.part", "b.vcd.part", "c.vcd", "c.vcd.part"] {
            assert!(!d.join(n).exists(), "{n}");
        }
    }
}
