//! Core configuration: defaults are the paper's Table 2 machine (see `docs/core.md`).
//!
//! Loaded from TOML or JSON (by file extension) through serde; `--set a.b=v`
//! overrides any key with a dotted path.

use serde::{Deserialize, Serialize};

use crate::SimError;

/// Largest `core.fetch_queue` (instructions between fetch and dispatch): as many as
/// the largest ROB holds.
pub const MAX_FETCH_QUEUE: u32 = 4096;
/// Most frontend stages (`core.frontend_stages`): deeper than any real
/// pipeline; the frontend's per-cycle work grows with it (a million stages
/// ran 20 000 instructions in minutes).
pub const MAX_FRONTEND_STAGES: u32 = 64;
/// Largest `core.watchdog_cycles`: 2^40 (a core that commits nothing for
/// that long is stuck; and a configuration file's integers are TOML's,
/// signed 64-bit, so `config --print` can write every legal machine).
pub const MAX_WATCHDOG_CYCLES: u64 = 1 << 40;
/// Largest cache (`l1i.size`, `l1d.size`, `l2.size`): 1 GiB.
pub const MAX_CACHE_BYTES: u64 = 1 << 30;
/// Most lines in one cache (`size / line`): 2^24, 26 bytes of state each (about
/// 440 MB), reached by a 1 GiB cache of 64-byte lines.
pub const MAX_CACHE_LINES: u64 = 1 << 24;
/// Most entries in one TLB (`itlb.entries`, `dtlb.entries`): 2^20 (26 MB of state).
pub const MAX_TLB_ENTRIES: u32 = 1 << 20;
/// Most BTB entries (`bpred.btb_entries`): 2^24 (24 bytes each, about 400 MB), as
/// the direction tables (`bpred.*_bits` at most 24).
pub const MAX_BTB_ENTRIES: u32 = 1 << 24;
/// Most ways of a BTB (`bpred.btb_ways`), as of a cache (a lookup scans the set).
pub const MAX_BTB_WAYS: u32 = 64;
/// `core.watchdog_cycles` must be at least this many times the worst chained
/// stall ([`Config::worst_stall`]): either half of the chain may first wait as long
/// for a page walker or an MSHR held by another miss, and a factor of 2 is margin.
pub const WATCHDOG_MARGIN: u64 = 4;

/// Widths, buffer sizes and the frontend depth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoreCfg {
    pub rob_entries: u32,
    pub lsq_entries: u32,
    pub fetch_width: u32,
    pub decode_width: u32,
    pub dispatch_width: u32,
    pub issue_width: u32,
    pub retire_width: u32,
    /// Frontend stages from fetch to dispatch (fetch is stage 1, dispatch stage `frontend_stages`).
    pub frontend_stages: u32,
    /// The stage in which decode (and decode-time redirects) happen,
    /// 2..frontend_stages (before dispatch's stage).
    pub decode_stage: u32,
    /// Instructions the frontend holds between fetch and dispatch; 0 (the
    /// default): derived, (frontend_stages - 1) x dispatch_width and at least
    /// fetch_width ([`CoreCfg::fetch_queue_entries`]): what the pipe needs to
    /// dispatch at full width, 16 for the paper's machine, so that a deeper or
    /// wider frontend is not starved by a queue sized for another one.
    pub fetch_queue: u32,
    /// Rows of the counter unit; the core keeps at most `fmt_rows - 1` branches in flight.
    pub fmt_rows: u32,
    /// Cycles without a commit before the watchdog stops the run; at least
    /// [`WATCHDOG_MARGIN`] times [`Config::worst_stall`] (checked by `validate`).
    pub watchdog_cycles: u64,
    /// Report `backend_full` to the counter unit in every cycle that starts
    /// with the load/store queue full (the contract amendment of
    /// docs/spec-decisions.md: the unit then counts the cycle as it counts one
    /// with a full ROB). `false`: the paper's design, in which the unit sees
    /// only a full ROB. It changes no timing.
    pub report_backend_full: bool,
}

impl CoreCfg {
    /// The fetch queue's size: `fetch_queue`, or if 0, (frontend_stages - 1) x
    /// dispatch_width, at least fetch_width.
    pub fn fetch_queue_entries(&self) -> u32 {
        match self.fetch_queue {
            0 => self.fetch_queue_needed().max(self.fetch_width),
            n => n,
        }
    }

    /// What the pipe needs between fetch and dispatch to dispatch at full
    /// width: (frontend_stages - 1) x dispatch_width.
    pub fn fetch_queue_needed(&self) -> u32 {
        self.frontend_stages
            .saturating_sub(1)
            .saturating_mul(self.dispatch_width)
    }
}

impl Default for CoreCfg {
    fn default() -> Self {
        Self {
            rob_entries: 128,
            lsq_entries: 64,
            fetch_width: 8,
            decode_width: 4,
            dispatch_width: 4,
            issue_width: 8,
            retire_width: 4,
            frontend_stages: 5,
            decode_stage: 3,
            fetch_queue: 0,
            fmt_rows: 64,
            watchdog_cycles: 20_000,
            report_backend_full: true,
        }
    }
}

/// Execution latencies in cycles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LatencyCfg {
    pub alu: u32,
    pub mul: u32,
    pub div: u32,
    pub fp: u32,
    pub branch: u32,
    pub store: u32,
    /// An operation whose latency is at least this is "long latency" (`head = longlat`);
    /// 2..=1000 (a one-cycle operation has no latency to expose).
    pub longlat_min: u32,
}

impl Default for LatencyCfg {
    fn default() -> Self {
        Self {
            alu: 1,
            mul: 3,
            div: 20,
            fp: 4,
            branch: 1,
            store: 1,
            longlat_min: 3,
        }
    }
}

/// One cache level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheCfg {
    pub size: u64,
    pub ways: u32,
    pub line: u32,
    /// Hit latency (L1D: the load-to-use latency; L2: added to the L1 latency on an L1 miss).
    pub latency: u32,
    /// Outstanding misses (MSHRs); later accesses to a line in flight merge (pending hits).
    pub mshrs: u32,
}

impl CacheCfg {
    fn new(size: u64, ways: u32, latency: u32, mshrs: u32) -> Self {
        Self {
            size,
            ways,
            line: 64,
            latency,
            mshrs,
        }
    }
}

impl Default for CacheCfg {
    fn default() -> Self {
        Self::new(16 * 1024, 4, 2, 8)
    }
}

/// A TLB.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlbCfg {
    pub entries: u32,
    pub ways: u32,
    pub page: u32,
    pub miss_latency: u32,
    /// Concurrent page walks.
    pub walkers: u32,
}

impl Default for TlbCfg {
    fn default() -> Self {
        Self {
            entries: 64,
            ways: 4,
            page: 4096,
            miss_latency: 30,
            walkers: 2,
        }
    }
}

/// Branch predictor: hybrid bimodal/gshare with a chooser, BTB, RAS.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BpredCfg {
    /// log2 of the bimodal table (2-bit counters).
    pub bimodal_bits: u32,
    /// log2 of the gshare table; also the global history length.
    pub gshare_bits: u32,
    /// log2 of the chooser table.
    pub chooser_bits: u32,
    pub btb_entries: u32,
    pub btb_ways: u32,
    pub ras_entries: u32,
}

impl Default for BpredCfg {
    fn default() -> Self {
        Self {
            bimodal_bits: 12,
            gshare_bits: 14,
            chooser_bits: 12,
            btb_entries: 2048,
            btb_ways: 4,
            ras_entries: 16,
        }
    }
}

/// Data prefetcher kind.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrefetchKind {
    #[default]
    None,
    /// Next line on a miss.
    NextLine,
    /// Next line on a miss and on the first hit to a prefetched line.
    Tagged,
    /// Stride prefetching with a reference prediction table indexed by PC.
    Stride,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PrefetchCfg {
    pub kind: PrefetchKind,
    /// Lines (next-line, tagged) or strides (stride) ahead.
    pub degree: u32,
    /// Reference prediction table entries (stride).
    pub rpt_entries: u32,
}

impl Default for PrefetchCfg {
    fn default() -> Self {
        Self {
            kind: PrefetchKind::None,
            degree: 1,
            rpt_entries: 64,
        }
    }
}

/// The counter unit's counter widths (spec section 2). They change no timing:
/// the core runs the same whatever they are, and only what the unit can hold
/// changes (a local counter stops at `2^local_bits - 1` and sets the sticky
/// `saturated` flag; a global counter wraps modulo `2^global_bits` and sets its
/// sticky overflow flag). The unit's rows are `core.fmt_rows`, a key of the core
/// because the core keeps at most `fmt_rows - 1` branches in flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UnitCfg {
    /// Bits of every local counter (a row's penalty and I-counters, sFMT's
    /// shared I-counters), 1..=32.
    pub local_bits: u32,
    /// Bits of every global counter, 8..=64.
    pub global_bits: u32,
}

impl Default for UnitCfg {
    fn default() -> Self {
        let p = events::Params::default();
        Self {
            local_bits: p.local_bits,
            global_bits: p.global_bits,
        }
    }
}

/// Idealisation switches, each independent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ideal {
    /// Perfect branch prediction (no mispredictions, no decode redirects).
    pub bpred: bool,
    /// Every instruction fetch hits in the L1 I-cache.
    pub l1i: bool,
    /// Every L1 I-miss hits in the L2.
    pub l2i: bool,
    pub itlb: bool,
    /// Every data access hits in the L1 D-cache.
    pub l1d: bool,
    /// Every L1 D-miss hits in the L2.
    pub l2d: bool,
    pub dtlb: bool,
    /// Long-latency operations (latency >= `latency.longlat_min`) execute in one
    /// cycle. Not part of `all` (the paper's perfect machine has real units); the
    /// CPI-stack reference uses it to split the paper's base into base and longlat.
    pub longlat: bool,
}

impl Ideal {
    /// The structures `all` idealises.
    pub const NAMES: [&'static str; 7] = ["bpred", "l1i", "l2i", "itlb", "l1d", "l2d", "dtlb"];

    /// Parse a comma-separated list (`bpred,l1i`, `all`, `all,longlat`,
    /// `none`). A name given twice, `none` beside another name, a structure
    /// beside the `all` that includes it, and an empty list are errors (each
    /// says one thing twice, or another than it seems).
    pub fn parse_list(s: &str) -> Result<Ideal, SimError> {
        let words: Vec<&str> = s.split(',').map(str::trim).collect();
        let err = |m: String| Err(SimError::Config(format!("idealisations `{s}`: {m}")));
        if words.iter().any(|w| w.is_empty()) {
            return err("an empty name (use `none` for no idealisation)".into());
        }
        for (k, w) in words.iter().enumerate() {
            if words[..k].contains(w) {
                return err(format!("`{w}` is named twice"));
            }
        }
        if words.contains(&"none") && words.len() > 1 {
            return err("`none` cannot be combined with other names".into());
        }
        if words.contains(&"all") {
            if let Some(w) = words.iter().find(|w| Self::NAMES.contains(w)) {
                return err(format!("`all` already includes `{w}`"));
            }
        }
        let mut i = Ideal::default();
        for w in words {
            match w {
                "all" => i.set_all(true),
                "none" => {}
                "bpred" => i.bpred = true,
                "l1i" => i.l1i = true,
                "l2i" => i.l2i = true,
                "itlb" => i.itlb = true,
                "l1d" => i.l1d = true,
                "l2d" => i.l2d = true,
                "dtlb" => i.dtlb = true,
                "longlat" => i.longlat = true,
                _ => {
                    return Err(SimError::Config(format!(
                        "unknown idealisation `{w}` (known: all, none, {}, longlat)",
                        Self::NAMES.join(", ")
                    )))
                }
            }
        }
        Ok(i)
    }

    /// Every structure of `NAMES` (not `longlat`, which stays as it was).
    pub fn set_all(&mut self, v: bool) {
        *self = Ideal {
            longlat: self.longlat,
            bpred: v,
            l1i: v,
            l2i: v,
            itlb: v,
            l1d: v,
            l2d: v,
            dtlb: v,
        };
    }

    /// Merge: a switch on in either is on.
    pub fn or(&self, o: &Ideal) -> Ideal {
        Ideal {
            bpred: self.bpred | o.bpred,
            l1i: self.l1i | o.l1i,
            l2i: self.l2i | o.l2i,
            itlb: self.itlb | o.itlb,
            l1d: self.l1d | o.l1d,
            l2d: self.l2d | o.l2d,
            dtlb: self.dtlb | o.dtlb,
            longlat: self.longlat | o.longlat,
        }
    }
}

/// Where the program sits in the address space (Weaver and McKee's and
/// Mytkowicz et al.'s point: the same program at other addresses can run
/// differently). Every code address the source yields (`pc`, taken targets)
/// moves by the code shift and every data address by the data shift, in the
/// core, before any cache, TLB or predictor sees them; the wrong path is asked
/// for at the unshifted address. A location stays at one address, so the program
/// does exactly the same work; only set indices, page boundaries and predictor
/// hashes change. All zero (the default): the addresses as generated or recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Layout {
    /// Bytes added to every code address, below 2^40.
    pub code_shift: u64,
    /// Bytes added to every data address, below 2^40.
    pub data_shift: u64,
    /// Nonzero: a random layout, both shifts drawn from this seed (multiples
    /// of 16 bytes below 1 MiB, [`Layout::shifts`]); the two shifts must then
    /// be 0. Below 2^40.
    pub seed: u64,
}

impl Layout {
    /// The largest shift and seed, exclusive.
    pub const MAX_SHIFT: u64 = 1 << 40;
    /// A random layout's shifts are multiples of this (a function's and a
    /// `malloc` block's usual alignment on x86-64)...
    pub const RANDOM_ALIGN: u64 = 16;
    /// ... below this: 1 MiB spans every index bit of the default machine's
    /// caches (the L2's 128 KiB way), TLBs and predictor tables.
    pub const RANDOM_SPAN: u64 = 1 << 20;

    /// The shifts in effect, `(code, data)`: the explicit ones, or the ones
    /// `seed` draws (the same for a seed on every machine, as long as
    /// `rand_xoshiro`'s generator and `rand` 0.8's `gen_range` stay as they
    /// are; a test pins seed 1's draw).
    pub fn shifts(&self) -> (u64, u64) {
        if self.seed == 0 {
            return (self.code_shift, self.data_shift);
        }
        use rand::{Rng, SeedableRng};
        let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(self.seed ^ 0x1a70_0000_0003);
        let n = Self::RANDOM_SPAN / Self::RANDOM_ALIGN;
        let code = r.gen_range(0..n) * Self::RANDOM_ALIGN;
        let data = r.gen_range(0..n) * Self::RANDOM_ALIGN;
        (code, data)
    }
}

/// The whole machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub core: CoreCfg,
    pub latency: LatencyCfg,
    pub l1i: CacheCfg,
    pub l1d: CacheCfg,
    pub l2: CacheCfg,
    pub memory_latency: u32,
    pub itlb: TlbCfg,
    pub dtlb: TlbCfg,
    pub bpred: BpredCfg,
    pub prefetch: PrefetchCfg,
    pub unit: UnitCfg,
    pub ideal: Ideal,
    pub layout: Layout,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            core: CoreCfg::default(),
            latency: LatencyCfg::default(),
            l1i: CacheCfg::new(8 * 1024, 1, 1, 4),
            l1d: CacheCfg::new(16 * 1024, 4, 2, 8),
            l2: CacheCfg::new(1024 * 1024, 8, 9, 16),
            memory_latency: 250,
            itlb: TlbCfg {
                entries: 64,
                ..TlbCfg::default()
            },
            dtlb: TlbCfg {
                entries: 128,
                ..TlbCfg::default()
            },
            bpred: BpredCfg::default(),
            prefetch: PrefetchCfg::default(),
            unit: UnitCfg::default(),
            ideal: Ideal::default(),
            layout: Layout::default(),
        }
    }
}

/// A configuration value as a `--set` writes it (a string without its quotes).
fn set_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The largest configuration file read: a full configuration is about 2 KB.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The text of a configuration file of at most [`MAX_CONFIG_BYTES`] (a pipe,
/// as `--config <(...)`, is fine; a device such as `/dev/zero` is not read
/// until memory runs out).
fn read_config_text(path: &std::path::Path) -> std::io::Result<String> {
    read_text_capped(path, MAX_CONFIG_BYTES, "; a configuration is a few KB")
}

/// The text of the file `path` if it holds at most `max` bytes, read no
/// further than one byte past them: larger is `InvalidInput`, "larger than
/// `max` bytes" and `note`; not UTF-8 is `InvalidData`. For the files a user
/// names that are never large (a configuration, a report read back).
pub fn read_text_capped(path: &std::path::Path, max: u64, note: &str) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    let f = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes)?;
    // the size first: a cut in the middle of a character is not the problem
    if bytes.len() as u64 > max {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("larger than {max} bytes{note}"),
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| Error::new(ErrorKind::InvalidData, format!("not UTF-8: {e}")))?;
    Ok(text)
}

impl Config {
    /// Read a TOML (`.toml`, any case) or JSON (anything else) configuration file; missing keys
    /// keep defaults. The result is validated ([`validate`](Self::validate)).
    pub fn from_file(path: &std::path::Path) -> Result<Config, SimError> {
        let cfg = Config::load(path)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Read a configuration file like [`from_file`](Self::from_file) without
    /// validating it, for a caller that applies overrides
    /// ([`set_all`](Self::set_all)) and validates the result once.
    ///
    /// A key the file leaves out keeps the machine's default ([`Config::default`]),
    /// also in a section the file gives in part: `[l2] latency = 12` keeps the
    /// 1 MB, 8-way L2 (not the 16 KB of a default-constructed [`CacheCfg`]).
    pub fn load(path: &std::path::Path) -> Result<Config, SimError> {
        let text = read_config_text(path)
            .map_err(|e| SimError::Config(format!("{}: {e}", path.display())))?;
        let toml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
        Config::parse(&text, toml, &path.display().to_string())
    }

    /// The configuration a file's `text` gives, read as TOML if `toml` and as
    /// JSON otherwise, unvalidated, as [`load`](Self::load) reads a file;
    /// errors begin with `name`.
    pub fn parse(text: &str, toml: bool, name: &str) -> Result<Config, SimError> {
        let err = |e: &dyn std::fmt::Display| SimError::Config(format!("{name}: {e}"));
        // a byte-order mark some editors put first is not part of the text
        // (TOML allows one; JSON parsers refuse it)
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // a typed parse first, for its errors (unknown keys, wrong types, with the
        // place in the file); then the given keys laid over the machine's defaults
        let given: serde_json::Value = if toml {
            toml::from_str::<Config>(text).map_err(|e| err(&e))?;
            let t: toml::Table = toml::from_str(text).map_err(|e| err(&e))?;
            serde_json::to_value(t).map_err(|e| err(&e))?
        } else {
            // say how the file was read: a YAML or TOML file named otherwise
            // would get a JSON parser's message alone
            let json = |e: serde_json::Error| {
                err(&format_args!(
                    "{e} (read as JSON: the name does not end in `.toml`)"
                ))
            };
            serde_json::from_str::<Config>(text).map_err(json)?;
            serde_json::from_str(text).map_err(json)?
        };
        let mut v = serde_json::to_value(Config::default()).expect("config serialises");
        overlay(&mut v, given, "").map_err(|e| err(&e))?;
        serde_json::from_value(v).map_err(|e| err(&e))
    }

    /// Apply one `key=value` override; `key` is a dotted path (`l2.latency`, `ideal.bpred`).
    ///
    /// Checks only that the key exists and that the value has the key's type (the
    /// error names the assignment); the configuration is *not* validated, since a
    /// change of several related keys passes through illegal states (`l1i.line`,
    /// `l1d.line` and `l2.line` must be equal): validate after the last override,
    /// or use [`set_all`](Self::set_all).
    pub fn set(&mut self, assignment: &str) -> Result<(), SimError> {
        let (key, value) = assignment.split_once('=').ok_or_else(|| {
            SimError::Config(format!(
                "`{assignment}`: expected KEY=VALUE (e.g. l2.latency=12)"
            ))
        })?;
        let (key, value) = (key.trim(), value.trim());
        let current = self.value_at(key)?;
        let new = if current.is_u64() {
            // every number of the configuration is a u32 or a u64
            let max = if self.with_value(key, (u32::MAX as u64 + 1).into()).is_ok() {
                u64::MAX
            } else {
                u32::MAX as u64
            };
            if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(SimError::Config(format!(
                    "`{key}={value}`: {key} takes a non-negative integer (at most {max})"
                )));
            }
            match value.parse::<u128>() {
                Ok(n) if n <= max as u128 => serde_json::Value::from(n as u64),
                _ => {
                    return Err(SimError::Config(format!(
                        "`{key}={value}`: {value} is too large for {key} (max {max})"
                    )))
                }
            }
        } else {
            serde_json::from_str(value)
                .unwrap_or_else(|_| serde_json::Value::String(value.to_string()))
        };
        *self = self
            .with_value(key, new)
            .map_err(|e| SimError::Config(format!("`{key}={value}`: {e}")))?;
        Ok(())
    }

    /// Apply `key=value` overrides in order (each as [`set`](Self::set): an unknown
    /// key or a value of the wrong type fails at once, naming the assignment), then
    /// validate the result once. On an error `self` is left unchanged.
    pub fn set_all<'a>(
        &mut self,
        assignments: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), SimError> {
        let mut cfg = self.clone();
        for a in assignments {
            cfg.set(a)?;
        }
        cfg.validate()?;
        *self = cfg;
        Ok(())
    }

    /// The current value of dotted `key` (an error if there is no such key or it
    /// names a section).
    pub fn value_at(&self, key: &str) -> Result<serde_json::Value, SimError> {
        let root = serde_json::to_value(self).expect("config serialises");
        let mut node = &root;
        for part in key.split('.') {
            node = node
                .get(part)
                .filter(|_| !part.is_empty())
                .ok_or_else(|| SimError::Config(unknown_key(&root, key)))?;
        }
        if node.is_object() {
            return Err(SimError::Config(format!(
                "`{key}` is a section, not a value; set one of its keys"
            )));
        }
        Ok(node.clone())
    }

    /// The current value of dotted `key` as a `--set` writes it: a number's
    /// digits, a string's characters, `true` or `false` (`064` is read and
    /// shown as `64`, `"stride"` as `stride`).
    pub fn value_text(&self, key: &str) -> Result<String, SimError> {
        self.value_at(key).map(|v| set_text(&v))
    }

    /// The dotted keys whose values differ from `other`'s, in the order of
    /// their names (sections and keys alphabetically), each with this
    /// configuration's value as written in a `--set` (`core.rob_entries=256`,
    /// `prefetch.kind=stride`).
    pub fn differences(&self, other: &Config) -> Vec<String> {
        fn walk(a: &serde_json::Value, b: &serde_json::Value, path: &str, out: &mut Vec<String>) {
            match (a, b) {
                (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
                    for (k, v) in x {
                        let p = if path.is_empty() {
                            k.clone()
                        } else {
                            format!("{path}.{k}")
                        };
                        walk(v, y.get(k).unwrap_or(&serde_json::Value::Null), &p, out);
                    }
                }
                _ if a != b => out.push(format!("{path}={}", set_text(a))),
                _ => {}
            }
        }
        let a = serde_json::to_value(self).expect("config serialises");
        let b = serde_json::to_value(other).expect("config serialises");
        let mut out = Vec::new();
        walk(&a, &b, "", &mut out);
        out
    }

    /// This configuration with (existing) dotted `key` set to `v`, if `v` has its type.
    fn with_value(&self, key: &str, v: serde_json::Value) -> Result<Config, serde_json::Error> {
        let mut root = serde_json::to_value(self).expect("config serialises");
        let mut node = &mut root;
        for part in key.split('.') {
            node = node.get_mut(part).expect("key checked by value_at");
        }
        *node = v;
        serde_json::from_value(root)
    }

    /// The effective configuration as TOML.
    pub fn to_toml(&self) -> String {
        let t = toml::to_string(self).expect("config serialises to TOML");
        // a derived fetch queue stays derived in a file written from this
        // (a number here would pin it for every other depth), and says its size
        t.replacen(
            "\nfetch_queue = 0\n",
            &format!(
                "\nfetch_queue = 0 # derived: {} = (frontend_stages - 1) x dispatch_width\n",
                self.core.fetch_queue_entries()
            ),
            1,
        )
    }

    /// A warning for a configuration that is legal but starves the core: a
    /// fetch queue set below what the frontend's depth needs to dispatch at
    /// full width (a file written for another depth, say).
    pub fn warnings(&self) -> Vec<String> {
        let c = &self.core;
        let need = c.fetch_queue_needed();
        if c.fetch_queue != 0 && c.fetch_queue < need {
            vec![format!(
                "core.fetch_queue = {} is below the {need} that {} frontend stages need to \
                 dispatch {} wide: dispatch will starve, and the loss shows as base CPI \
                 (0 derives it)",
                c.fetch_queue, c.frontend_stages, c.dispatch_width
            )]
        } else {
            Vec::new()
        }
    }

    /// This configuration with the keys that change no timing set to their
    /// defaults (`unit.*`, the counter unit's widths, and
    /// `core.report_backend_full`, what the core tells the unit): two
    /// configurations with equal `timing()` run the same cycles, commit for
    /// commit, so an idealised run of one stands for the other's.
    pub fn timing(&self) -> Config {
        let mut c = self.clone();
        c.unit = UnitCfg::default();
        c.core.report_backend_full = CoreCfg::default().report_backend_full;
        c
    }

    /// The counter-unit parameters matching this core.
    pub fn unit_params(&self) -> events::Params {
        events::Params {
            rob_entries: self.core.rob_entries,
            fmt_rows: self.core.fmt_rows,
            fetch_width: self.core.fetch_width,
            dispatch_width: self.core.dispatch_width,
            retire_width: self.core.retire_width,
            local_bits: self.unit.local_bits,
            global_bits: self.unit.global_bits,
            ..events::Params::default()
        }
    }

    /// The worst chained stall between two commits, as its terms (key, cycles): a
    /// squash's refill whose first line misses everywhere (I-TLB walk, then L2 and
    /// memory: the I-side has no L1 hit latency; then the frontend stages to
    /// dispatch), then the new ROB head's own longest operation: a load's D-TLB walk,
    /// L1D, L2 and memory latencies, a store's walk and latency, or the longest
    /// execution latency. Idealisations are ignored (they only shorten the chain).
    /// `core.watchdog_cycles` must be at least [`WATCHDOG_MARGIN`] times the sum.
    pub fn worst_stall(&self) -> Vec<(&'static str, u64)> {
        let l = &self.latency;
        let refill = [
            ("itlb.miss_latency", self.itlb.miss_latency),
            ("l2.latency", self.l2.latency),
            ("memory_latency", self.memory_latency),
            ("core.frontend_stages", self.core.frontend_stages),
        ];
        let load = vec![
            ("dtlb.miss_latency", self.dtlb.miss_latency),
            ("l1d.latency", self.l1d.latency),
            ("l2.latency", self.l2.latency),
            ("memory_latency", self.memory_latency),
        ];
        let store = vec![
            ("dtlb.miss_latency", self.dtlb.miss_latency),
            ("latency.store", l.store),
        ];
        let head = [
            load,
            store,
            vec![("latency.alu", l.alu)],
            vec![("latency.mul", l.mul)],
            vec![("latency.div", l.div)],
            vec![("latency.fp", l.fp)],
            vec![("latency.branch", l.branch)],
        ]
        .into_iter()
        .rev()
        .max_by_key(|t| t.iter().map(|&(_, v)| v as u64).sum::<u64>())
        .expect("alternatives");
        refill
            .into_iter()
            .chain(head)
            .map(|(k, v)| (k, v as u64))
            .collect()
    }

    /// Check every value; the error names the key.
    pub fn validate(&self) -> Result<(), SimError> {
        let c = &self.core;
        let bad = |k: &str, v: u64, legal: &str| {
            Err(SimError::Config(format!("`{k}` = {v} is illegal: {legal}")))
        };
        if !(2..=4096).contains(&c.rob_entries) {
            return bad("core.rob_entries", c.rob_entries as u64, "2..=4096");
        }
        if !(2..=256).contains(&c.fmt_rows) || !c.fmt_rows.is_power_of_two() {
            return bad(
                "core.fmt_rows",
                c.fmt_rows as u64,
                "a power of two in 2..=256",
            );
        }
        for (k, v) in [
            ("core.fetch_width", c.fetch_width),
            ("core.dispatch_width", c.dispatch_width),
            ("core.retire_width", c.retire_width),
        ] {
            if !(1..=8).contains(&v) {
                return bad(k, v as u64, "1..=8 (the unit's bundle widths)");
            }
        }
        for (k, v, max) in [
            ("core.decode_width", c.decode_width, 64),
            ("core.issue_width", c.issue_width, 64),
            ("core.lsq_entries", c.lsq_entries, 4096),
        ] {
            if !(1..=max).contains(&v) {
                return bad(k, v as u64, &format!("1..={max}"));
            }
        }
        if !(3..=MAX_FRONTEND_STAGES).contains(&c.frontend_stages) {
            return bad(
                "core.frontend_stages",
                c.frontend_stages as u64,
                &format!("3..={MAX_FRONTEND_STAGES} (fetch, decode and dispatch are a stage each)"),
            );
        }
        if c.decode_stage < 2 || c.decode_stage >= c.frontend_stages {
            return bad(
                "core.decode_stage",
                c.decode_stage as u64,
                &format!(
                    "2..={} (after fetch's stage, before dispatch's: core.frontend_stages is {})",
                    c.frontend_stages - 1,
                    c.frontend_stages
                ),
            );
        }
        if c.fetch_queue != 0 && (c.fetch_queue < c.fetch_width || c.fetch_queue > MAX_FETCH_QUEUE)
        {
            return bad(
                "core.fetch_queue",
                c.fetch_queue as u64,
                &format!(
                    "0 (derived) or at least core.fetch_width ({}), at most {MAX_FETCH_QUEUE}",
                    c.fetch_width
                ),
            );
        }
        if !(1..=32).contains(&self.unit.local_bits) {
            return bad(
                "unit.local_bits",
                self.unit.local_bits as u64,
                "1..=32 (the unit's local counters)",
            );
        }
        if !(8..=64).contains(&self.unit.global_bits) {
            return bad(
                "unit.global_bits",
                self.unit.global_bits as u64,
                "8..=64 (the unit's global counters)",
            );
        }
        let lay = &self.layout;
        if lay.seed >= Layout::MAX_SHIFT {
            return bad("layout.seed", lay.seed, "below 2^40 (1099511627776)");
        }
        for (k, v) in [
            ("layout.code_shift", lay.code_shift),
            ("layout.data_shift", lay.data_shift),
        ] {
            if v >= Layout::MAX_SHIFT {
                return bad(k, v, "below 2^40 (1099511627776)");
            }
            if v != 0 && lay.seed != 0 {
                return Err(SimError::Config(format!(
                    "`{k}` = {v} and `layout.seed` = {}: a random layout draws both shifts; \
                     give the seed or the shifts",
                    lay.seed
                )));
            }
        }
        if c.watchdog_cycles < 1000 {
            return bad("core.watchdog_cycles", c.watchdog_cycles, "at least 1000");
        }
        for (k, v) in [
            ("latency.alu", self.latency.alu),
            ("latency.mul", self.latency.mul),
            ("latency.div", self.latency.div),
            ("latency.fp", self.latency.fp),
            ("latency.branch", self.latency.branch),
            ("latency.store", self.latency.store),
        ] {
            if !(1..=1000).contains(&v) {
                return bad(k, v as u64, "1..=1000");
            }
        }
        if !(2..=1000).contains(&self.latency.longlat_min) {
            return bad(
                "latency.longlat_min",
                self.latency.longlat_min as u64,
                "2..=1000 (operations of at least this latency are long-latency; \
                 a one-cycle operation cannot be)",
            );
        }
        for (k, cc) in [("l1i", &self.l1i), ("l1d", &self.l1d), ("l2", &self.l2)] {
            if cc.size > MAX_CACHE_BYTES {
                return bad(
                    &format!("{k}.size"),
                    cc.size,
                    &format!("at most {MAX_CACHE_BYTES} (1 GiB)"),
                );
            }
            check_geometry(k, false, cc.size, cc.ways, cc.line as u64)?;
            if cc.size / cc.line as u64 > MAX_CACHE_LINES {
                return bad(
                    &format!("{k}.size"),
                    cc.size,
                    &format!(
                        "at most {MAX_CACHE_LINES} lines (size / line; line = {})",
                        cc.line
                    ),
                );
            }
            if cc.mshrs == 0 || cc.mshrs > 256 {
                return bad(&format!("{k}.mshrs"), cc.mshrs as u64, "1..=256");
            }
            if cc.latency == 0 || cc.latency > 1000 {
                return bad(&format!("{k}.latency"), cc.latency as u64, "1..=1000");
            }
        }
        if self.l1i.latency != 1 {
            return bad(
                "l1i.latency",
                self.l1i.latency as u64,
                "it must be 1 (an L1I hit delivers in the fetch cycle; the \
                 frontend's depth is core.frontend_stages)",
            );
        }
        if self.l1i.line != self.l2.line || self.l1d.line != self.l2.line {
            return Err(SimError::Config(format!(
                "`l1i.line` = {}, `l1d.line` = {} and `l2.line` = {} are illegal together: \
                 the three line sizes must be equal",
                self.l1i.line, self.l1d.line, self.l2.line
            )));
        }
        if self.memory_latency == 0 || self.memory_latency > 100_000 {
            return bad("memory_latency", self.memory_latency as u64, "1..=100000");
        }
        for (k, t) in [("itlb", &self.itlb), ("dtlb", &self.dtlb)] {
            if !(1..=MAX_TLB_ENTRIES).contains(&t.entries) {
                return bad(
                    &format!("{k}.entries"),
                    t.entries as u64,
                    &format!("1..={MAX_TLB_ENTRIES}"),
                );
            }
            check_geometry(
                k,
                true,
                t.entries as u64 * t.page as u64,
                t.ways,
                t.page as u64,
            )?;
            if t.walkers == 0 || t.walkers > 64 {
                return bad(&format!("{k}.walkers"), t.walkers as u64, "1..=64");
            }
            if t.miss_latency == 0 || t.miss_latency > 100_000 {
                return bad(
                    &format!("{k}.miss_latency"),
                    t.miss_latency as u64,
                    "1..=100000",
                );
            }
        }
        let b = &self.bpred;
        for (k, v) in [
            ("bpred.bimodal_bits", b.bimodal_bits),
            ("bpred.gshare_bits", b.gshare_bits),
            ("bpred.chooser_bits", b.chooser_bits),
        ] {
            if !(1..=24).contains(&v) {
                return bad(k, v as u64, "1..=24");
            }
        }
        if !(1..=MAX_BTB_WAYS).contains(&b.btb_ways) {
            return bad(
                "bpred.btb_ways",
                b.btb_ways as u64,
                &format!("1..={MAX_BTB_WAYS}"),
            );
        }
        if !(1..=MAX_BTB_ENTRIES).contains(&b.btb_entries) {
            return bad(
                "bpred.btb_entries",
                b.btb_entries as u64,
                &format!("1..={MAX_BTB_ENTRIES}"),
            );
        }
        if b.btb_entries / b.btb_ways * b.btb_ways != b.btb_entries {
            return bad(
                "bpred.btb_entries",
                b.btb_entries as u64,
                "a non-zero multiple of btb_ways",
            );
        }
        if !(b.btb_entries / b.btb_ways).is_power_of_two() {
            return bad(
                "bpred.btb_entries",
                b.btb_entries as u64,
                "btb_entries / btb_ways a power of two",
            );
        }
        if !(1..=1024).contains(&b.ras_entries) {
            return bad("bpred.ras_entries", b.ras_entries as u64, "1..=1024");
        }
        if !(1..=16).contains(&self.prefetch.degree) {
            return bad("prefetch.degree", self.prefetch.degree as u64, "1..=16");
        }
        if !(1..=4096).contains(&self.prefetch.rpt_entries)
            || !self.prefetch.rpt_entries.is_power_of_two()
        {
            return bad(
                "prefetch.rpt_entries",
                self.prefetch.rpt_entries as u64,
                "a power of two in 1..=4096",
            );
        }
        if self.core.watchdog_cycles > MAX_WATCHDOG_CYCLES {
            return bad(
                "core.watchdog_cycles",
                self.core.watchdog_cycles,
                &format!("at most {MAX_WATCHDOG_CYCLES} (2^40)"),
            );
        }
        self.check_watchdog()
    }

    /// `core.watchdog_cycles` against [`worst_stall`](Self::worst_stall); the error
    /// names the largest term of the stall and the watchdog.
    fn check_watchdog(&self) -> Result<(), SimError> {
        let terms = self.worst_stall();
        let stall: u64 = terms.iter().map(|&(_, v)| v).sum();
        let need = WATCHDOG_MARGIN * stall;
        let w = self.core.watchdog_cycles;
        if need <= w {
            return Ok(());
        }
        let (k, v) = terms
            .iter()
            .copied()
            .reduce(|a, b| if b.1 > a.1 { b } else { a })
            .expect("terms");
        let chain = terms
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(" + ");
        Err(SimError::Config(format!(
            "`{k}` = {v} is illegal: must be below core.watchdog_cycles ({w}) with a margin: \
             a commit can wait {stall} cycles for a squash's refill then the head's own \
             operation ({chain}), and core.watchdog_cycles must be at least \
             {WATCHDOG_MARGIN} x {stall} = {need}; lower `{k}` or raise core.watchdog_cycles \
             to at least {need}"
        )))
    }
}

/// Lay `over` on `base`: objects key by key (recursively), anything else replaced.
/// Lay the keys `over` gives on `base` (the defaults), section by section;
/// `path` is the dotted key of `base` (`""` at the top). A section given as
/// anything but a table is refused: serde would take an array for a section,
/// its fields by position and the rest at their type's defaults (`l2 = []` was
/// a 16 KB L2), a machine that is neither the file's nor the default.
fn overlay(
    base: &mut serde_json::Value,
    over: serde_json::Value,
    path: &str,
) -> Result<(), String> {
    use serde_json::Value;
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                let key = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match b.get_mut(&k) {
                    Some(bv) => overlay(bv, v, &key)?,
                    None => {
                        b.insert(k, v);
                    }
                }
            }
            Ok(())
        }
        (Value::Object(_), o) => {
            let found = match o {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                Value::Null => "null",
                Value::Object(_) => "a table",
            };
            Err(if path.is_empty() {
                format!(
                    "expected a table of sections (`[l2]`, `{{\"l2\": {{...}}}}`), found {found}"
                )
            } else {
                format!("`{path}` is a section: expected a table of its keys, found {found}")
            })
        }
        (b, o) => {
            *b = o;
            Ok(())
        }
    }
}

/// The geometry of cache `k` (`size`, `line`, `ways`; `tlb` false) or TLB
/// `k` (`entries` = `size / line`, `page` = `line`, `ways`; `tlb` true): each
/// error names the key at fault, its value, and the values it depends on.
fn check_geometry(k: &str, tlb: bool, size: u64, ways: u32, line: u64) -> Result<(), SimError> {
    let bad = |key: &str, v: u64, legal: String| {
        Err(SimError::Config(format!(
            "`{k}.{key}` = {v} is illegal: {legal}"
        )))
    };
    let unit = if tlb { "page" } else { "line" };
    if !line.is_power_of_two() || !(4..=1 << 30).contains(&line) {
        return bad(unit, line, "a power of two in 4..=2^30".into());
    }
    if ways == 0 || ways > 64 {
        return bad("ways", ways.into(), "1..=64".into());
    }
    let ways = ways as u64;
    if tlb {
        let entries = size / line;
        if entries == 0 || !entries.is_multiple_of(ways) {
            return bad(
                "entries",
                entries,
                format!("a non-zero multiple of `{k}.ways` ({ways})"),
            );
        }
        if !(entries / ways).is_power_of_two() {
            return bad(
                "entries",
                entries,
                format!(
                    "`{k}.entries` / `{k}.ways` ({entries} / {ways} = {} sets) must be a power of two",
                    entries / ways
                ),
            );
        }
    } else {
        if size == 0 || !size.is_multiple_of(line * ways) {
            return bad(
                "size",
                size,
                format!(
                    "a non-zero multiple of `{k}.line` * `{k}.ways` ({line} * {ways} = {})",
                    line * ways
                ),
            );
        }
        let sets = size / line / ways;
        if !sets.is_power_of_two() {
            return bad(
                "size",
                size,
                format!(
                    "`{k}.size` / `{k}.line` / `{k}.ways` ({size} / {line} / {ways} = {sets} sets) \
                     must be a power of two"
                ),
            );
        }
    }
    Ok(())
}

/// The error for `key`, which `root` (a configuration as JSON) does not
/// have: with the dotted keys whose last part is `key`'s last part, if any
/// (`rob_entries` is `core.rob_entries`).
fn unknown_key(root: &serde_json::Value, key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    let mut like = Vec::new();
    if let Some(sections) = root.as_object() {
        for (sec, v) in sections {
            if v.as_object().is_some_and(|m| m.contains_key(last)) {
                like.push(format!("`{sec}.{last}`"));
            }
        }
    }
    if like.is_empty() || last.is_empty() {
        format!("unknown configuration key `{key}`")
    } else {
        format!(
            "unknown configuration key `{key}` (did you mean {}?)",
            like.join(" or ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key given without its section is answered with the keys it may mean.
    #[test]
    fn an_unknown_key_names_the_keys_of_that_name() {
        let mut c = Config::default();
        let e = c.set_all(["rob_entries=64"]).unwrap_err().to_string();
        assert!(
            e.contains(
                "unknown configuration key `rob_entries` (did you mean `core.rob_entries`?)"
            ),
            "{e}"
        );
        let e = c.set_all(["latency.size=1"]).unwrap_err().to_string();
        assert!(e.contains("did you mean `l1d.size` or `l1i.size`"), "{e}");
        let e = c.set_all(["no_such_key=1"]).unwrap_err().to_string();
        assert!(
            e.ends_with("unknown configuration key `no_such_key`"),
            "{e}"
        );
        assert_eq!(c, Config::default(), "nothing set");
    }

    #[test]
    fn defaults_are_table_2() {
        let c = Config::default();
        c.validate().unwrap();
        assert_eq!(c.core.rob_entries, 128);
        assert_eq!(c.l1i.size, 8192);
        assert_eq!(c.l1i.ways, 1);
        assert_eq!(c.l2.latency, 9);
        assert_eq!(c.memory_latency, 250);
    }

    #[test]
    fn differences_name_each_changed_key_as_a_set() {
        let mut c = Config::default();
        assert_eq!(c.differences(&Config::default()), Vec::<String>::new());
        for kv in [
            "prefetch.kind=stride",
            "core.report_backend_full=false",
            "core.rob_entries=256",
            "ideal.l2d=true",
        ] {
            c.set(kv).unwrap();
        }
        let d = c.differences(&Config::default());
        // in the order of the names, not of the assignments
        assert_eq!(
            d,
            [
                "core.report_backend_full=false",
                "core.rob_entries=256",
                "ideal.l2d=true",
                "prefetch.kind=stride",
            ]
        );
        // each reads back as the `--set` that makes it
        let mut back = Config::default();
        for kv in &d {
            back.set(kv).unwrap();
        }
        assert_eq!(back, c);
    }

    #[test]
    fn set_dotted_keys() {
        let mut c = Config::default();
        c.set("l2.latency=12").unwrap();
        c.set("ideal.bpred=true").unwrap();
        c.set("prefetch.kind=stride").unwrap();
        assert_eq!(c.l2.latency, 12);
        assert!(c.ideal.bpred);
        assert_eq!(c.prefetch.kind, PrefetchKind::Stride);
        let e = c.set("l2.latencyy=3").unwrap_err().to_string();
        assert!(e.contains("l2.latencyy"), "{e}");
        // `set` checks the type only; the illegal geometry is `validate`'s
        c.set("l1d.ways=3").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("l1d"), "{e}");
        c.set("l1d.ways=4").unwrap();
        assert!(c.set("l2=3").is_err());
        assert!(c.set("core.rob_entries=abc").is_err());
    }

    #[test]
    fn toml_round_trip() {
        let c = Config::default();
        let t = c.to_toml();
        let back: Config = toml::from_str(&t).unwrap();
        assert_eq!(back, c);
        // the derived fetch queue stays derived, its size in a comment; one
        // set explicitly is written as set
        assert!(t.contains("\nfetch_queue = 0 # derived: 16 = "), "{t}");
        let mut deep = c.clone();
        deep.core.frontend_stages = 10;
        let back: Config = toml::from_str(&deep.to_toml()).unwrap();
        assert_eq!(back.core.fetch_queue_entries(), 36);
        assert!(back.warnings().is_empty());
        deep.core.fetch_queue = 16;
        let t = deep.to_toml();
        assert!(t.contains("\nfetch_queue = 16\n"), "{t}");
        let w = toml::from_str::<Config>(&t).unwrap().warnings();
        assert!(w.len() == 1 && w[0].contains("below the 36"), "{w:?}");
        // the largest legal watchdog is written and read back (TOML's
        // integers are i64: a u64 above them made `config --print` panic);
        // one above it is refused, naming the key and the bound
        let mut big = c.clone();
        big.core.watchdog_cycles = MAX_WATCHDOG_CYCLES;
        big.validate().unwrap();
        let back: Config = toml::from_str(&big.to_toml()).unwrap();
        assert_eq!(back, big);
        for w in [MAX_WATCHDOG_CYCLES + 1, 1 << 63, u64::MAX] {
            big.core.watchdog_cycles = w;
            let e = big.validate().unwrap_err().to_string();
            assert!(
                e.contains(&format!("`core.watchdog_cycles` = {w}"))
                    && e.contains("at most 1099511627776"),
                "{e}"
            );
        }
        // the same for the layout's keys (a seed of 2^63 made it panic)
        let mut far = c.clone();
        far.layout.code_shift = Layout::MAX_SHIFT - 1;
        far.layout.data_shift = Layout::MAX_SHIFT - 1;
        far.validate().unwrap();
        assert_eq!(toml::from_str::<Config>(&far.to_toml()).unwrap(), far);
        let mut seeded = c.clone();
        seeded.layout.seed = Layout::MAX_SHIFT - 1;
        seeded.validate().unwrap();
        assert_eq!(toml::from_str::<Config>(&seeded.to_toml()).unwrap(), seeded);
        for v in [Layout::MAX_SHIFT, 1 << 63, u64::MAX] {
            seeded.layout.seed = v;
            let e = seeded.validate().unwrap_err().to_string();
            assert!(
                e.contains(&format!("`layout.seed` = {v} is illegal: below 2^40")),
                "{e}"
            );
        }
    }

    #[test]
    fn ideal_list() {
        let i = Ideal::parse_list("bpred, l1d").unwrap();
        assert!(i.bpred && i.l1d && !i.l1i);
        assert!(Ideal::parse_list("all").unwrap().dtlb);
        assert!(Ideal::parse_list("bogus").is_err());
        let i = Ideal::parse_list("all, longlat").unwrap();
        assert!(i.longlat && i.bpred && i.dtlb);
        assert_eq!(Ideal::parse_list("none").unwrap(), Ideal::default());
        for (list, why) in [
            ("", "an empty name"),
            ("bpred,,l1d", "an empty name"),
            ("bpred,bpred", "`bpred` is named twice"),
            ("none,bpred", "`none` cannot be combined"),
            ("all,none", "`none` cannot be combined"),
            ("all,l2d", "`all` already includes `l2d`"),
        ] {
            let e = Ideal::parse_list(list).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.contains(&format!("`{list}`")),
                "{list}: {e}"
            );
        }
    }

    /// Each name of the list turns on its own switch and no other.
    #[test]
    fn each_idealisation_name_turns_on_its_own_switch() {
        for name in Ideal::NAMES.iter().chain(&["longlat"]) {
            let i = serde_json::to_value(Ideal::parse_list(name).unwrap()).unwrap();
            let on: Vec<&String> = i
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, v)| **v == true)
                .map(|(k, _)| k)
                .collect();
            assert_eq!(on, [name], "{name}");
        }
    }

    /// `or` turns on a switch that is on in either or both configurations.
    #[test]
    fn or_keeps_a_switch_that_is_on_in_either_or_both() {
        for name in Ideal::NAMES.iter().chain(&["longlat"]) {
            let x = Ideal::parse_list(name).unwrap();
            let none = Ideal::default();
            assert_eq!(x.or(&none), x, "{name} or none");
            assert_eq!(none.or(&x), x, "none or {name}");
            assert_eq!(x.or(&x), x, "{name} or {name}");
            assert_eq!(none.or(&none), none);
        }
    }

    /// The counter unit is built for the core's ROB, rows and bundle widths.
    #[test]
    fn the_unit_takes_the_cores_rob_rows_and_widths() {
        let mut c = Config::default();
        c.set_all([
            "core.rob_entries=100",
            "core.fmt_rows=32",
            "core.fetch_width=2",
            "core.dispatch_width=3",
            "core.retire_width=5",
            "unit.local_bits=9",
            "unit.global_bits=20",
        ])
        .unwrap();
        let p = c.unit_params();
        assert_eq!(
            (
                p.rob_entries,
                p.fmt_rows,
                p.fetch_width,
                p.dispatch_width,
                p.retire_width,
                p.local_bits,
                p.global_bits
            ),
            (100, 32, 2, 3, 5, 9, 20)
        );
        assert_eq!(p.validate(), Ok(()));
        // the defaults are the unit's
        let d = Config::default().unit_params();
        let e = events::Params::default();
        assert_eq!((d.local_bits, d.global_bits), (e.local_bits, e.global_bits));
    }

    /// `timing()` forgets exactly the keys that change no timing: the unit's
    /// widths and what the core tells the unit.
    #[test]
    fn timing_forgets_only_the_keys_that_change_no_timing() {
        let base = Config::default();
        for set in [
            "unit.local_bits=6",
            "unit.global_bits=20",
            "core.report_backend_full=false",
        ] {
            let mut c = base.clone();
            c.set_all([set]).unwrap();
            assert_ne!(c, base, "{set}");
            assert_eq!(c.timing(), base.timing(), "{set}");
        }
        for set in [
            "core.fmt_rows=16",
            "core.rob_entries=64",
            "ideal.l1d=true",
            "l2.latency=12",
        ] {
            let mut c = base.clone();
            c.set_all([set]).unwrap();
            assert_ne!(c.timing(), base.timing(), "{set}");
        }
    }

    /// The unit's widths are checked against the unit's legal ranges, naming the key.
    #[test]
    fn unit_widths_outside_the_units_ranges_are_refused_naming_the_key() {
        for (set, key) in [
            ("unit.local_bits=0", "`unit.local_bits` = 0"),
            ("unit.local_bits=33", "`unit.local_bits` = 33"),
            ("unit.global_bits=7", "`unit.global_bits` = 7"),
            ("unit.global_bits=65", "`unit.global_bits` = 65"),
        ] {
            let mut c = Config::default();
            let e = c.set_all([set]).unwrap_err().to_string();
            assert!(e.contains(key), "{set}: {e}");
        }
        for set in [
            "unit.local_bits=1",
            "unit.local_bits=32",
            "unit.global_bits=8",
            "unit.global_bits=64",
        ] {
            let mut c = Config::default();
            c.set_all([set]).unwrap();
            assert_eq!(c.unit_params().validate(), Ok(()), "{set}");
        }
    }

    /// A fetch queue set to exactly what the frontend needs (16 for 5 stages
    /// of 4-wide dispatch) draws no warning; one entry less does.
    #[test]
    fn a_fetch_queue_one_below_what_the_frontend_needs_is_warned_about() {
        let mut c = Config::default();
        c.core.fetch_queue = 16;
        assert_eq!(c.warnings(), Vec::<String>::new());
        c.core.fetch_queue = 15;
        let w = c.warnings();
        assert!(w.len() == 1 && w[0].contains("15 is below the 16"), "{w:?}");
    }
}
