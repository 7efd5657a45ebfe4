//! Core configuration: defaults are the paper's Table 2 machine (see `docs/core.md`).
//!
//! Loaded from TOML or JSON (by file extension) through serde; `--set a.b=v`
//! overrides any key with a dotted path.

use serde::{Deserialize, Serialize};

use crate::SimError;

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
    /// The stage in which decode (and decode-time redirects) happen, 2..frontend_stages.
    pub decode_stage: u32,
    /// Instructions the frontend holds between fetch and dispatch: (frontend_stages - 1) x
    /// dispatch_width = 16 by default, what the pipe needs to dispatch at full width.
    pub fetch_queue: u32,
    /// Rows of the counter unit; the core keeps at most `fmt_rows - 1` branches in flight.
    pub fmt_rows: u32,
    /// Cycles without a commit before the watchdog stops the run.
    pub watchdog_cycles: u64,
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
            fetch_queue: 16,
            fmt_rows: 64,
            watchdog_cycles: 20_000,
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
    /// An operation whose latency is at least this is "long latency" (`head = longlat`).
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

    /// Parse a comma-separated list (`bpred,l1i`, `all`, `none`).
    pub fn parse_list(s: &str) -> Result<Ideal, SimError> {
        let mut i = Ideal::default();
        for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
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
    pub ideal: Ideal,
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
            ideal: Ideal::default(),
        }
    }
}

impl Config {
    /// Read a TOML (`.toml`) or JSON (anything else) configuration file; missing keys keep defaults.
    pub fn from_file(path: &std::path::Path) -> Result<Config, SimError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SimError::Config(format!("{}: {e}", path.display())))?;
        let cfg: Config = if path.extension().is_some_and(|e| e == "toml") {
            toml::from_str(&text)
                .map_err(|e| SimError::Config(format!("{}: {e}", path.display())))?
        } else {
            serde_json::from_str(&text)
                .map_err(|e| SimError::Config(format!("{}: {e}", path.display())))?
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Apply one `key=value` override; `key` is a dotted path (`l2.latency`, `ideal.bpred`).
    pub fn set(&mut self, assignment: &str) -> Result<(), SimError> {
        let (key, value) = assignment.split_once('=').ok_or_else(|| {
            SimError::Config(format!(
                "`{assignment}`: expected KEY=VALUE (e.g. l2.latency=12)"
            ))
        })?;
        let (key, value) = (key.trim(), value.trim());
        let mut root = serde_json::to_value(&*self).expect("config serialises");
        let mut node = &mut root;
        for part in key.split('.') {
            node = node
                .get_mut(part)
                .filter(|_| !part.is_empty())
                .ok_or_else(|| SimError::Config(format!("unknown configuration key `{key}`")))?;
        }
        if node.is_object() {
            return Err(SimError::Config(format!(
                "`{key}` is a section, not a value; set one of its keys"
            )));
        }
        let parsed: serde_json::Value = serde_json::from_str(value)
            .unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        *node = parsed;
        let cfg: Config = serde_json::from_value(root)
            .map_err(|e| SimError::Config(format!("`{key}={value}`: {e}")))?;
        cfg.validate()?;
        *self = cfg;
        Ok(())
    }

    /// The effective configuration as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("config serialises to TOML")
    }

    /// The counter-unit parameters matching this core.
    pub fn unit_params(&self) -> events::Params {
        events::Params {
            rob_entries: self.core.rob_entries,
            fmt_rows: self.core.fmt_rows,
            fetch_width: self.core.fetch_width,
            dispatch_width: self.core.dispatch_width,
            retire_width: self.core.retire_width,
            ..events::Params::default()
        }
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
        for (k, v) in [
            ("core.decode_width", c.decode_width),
            ("core.issue_width", c.issue_width),
            ("core.lsq_entries", c.lsq_entries),
        ] {
            if v == 0 {
                return bad(k, 0, "at least 1");
            }
        }
        if c.frontend_stages < 2 {
            return bad(
                "core.frontend_stages",
                c.frontend_stages as u64,
                "at least 2",
            );
        }
        if c.decode_stage < 2 || c.decode_stage > c.frontend_stages {
            return bad(
                "core.decode_stage",
                c.decode_stage as u64,
                "2..=frontend_stages",
            );
        }
        if c.fetch_queue < c.fetch_width {
            return bad(
                "core.fetch_queue",
                c.fetch_queue as u64,
                "at least fetch_width",
            );
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
        for (k, cc) in [("l1i", &self.l1i), ("l1d", &self.l1d), ("l2", &self.l2)] {
            check_geometry(k, cc.size, cc.ways, cc.line as u64)?;
            if cc.mshrs == 0 || cc.mshrs > 256 {
                return bad(&format!("{k}.mshrs"), cc.mshrs as u64, "1..=256");
            }
            if cc.latency == 0 || cc.latency > 1000 {
                return bad(&format!("{k}.latency"), cc.latency as u64, "1..=1000");
            }
        }
        if self.l1i.line != self.l2.line || self.l1d.line != self.l2.line {
            return bad(
                "l2.line",
                self.l2.line as u64,
                "equal to l1i.line and l1d.line",
            );
        }
        if self.memory_latency == 0 || self.memory_latency > 100_000 {
            return bad("memory_latency", self.memory_latency as u64, "1..=100000");
        }
        for (k, t) in [("itlb", &self.itlb), ("dtlb", &self.dtlb)] {
            check_geometry(k, t.entries as u64 * t.page as u64, t.ways, t.page as u64)?;
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
        if b.btb_ways == 0
            || b.btb_entries / b.btb_ways * b.btb_ways != b.btb_entries
            || b.btb_entries == 0
        {
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
        Ok(())
    }
}

fn check_geometry(k: &str, size: u64, ways: u32, line: u64) -> Result<(), SimError> {
    let err = |what: &str| Err(SimError::Config(format!("`{k}`: {what}")));
    if !line.is_power_of_two() || !(4..=1 << 30).contains(&line) {
        return err("line/page size must be a power of two in 4..=2^30");
    }
    if ways == 0 || ways > 64 {
        return err("ways must be in 1..=64");
    }
    if size == 0 || size / (line * ways as u64) * (line * ways as u64) != size {
        return err("size must be a non-zero multiple of line * ways");
    }
    let sets = size / line / ways as u64;
    if !sets.is_power_of_two() {
        return err("the number of sets (size / line / ways) must be a power of two");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = c.set("l1d.ways=3").unwrap_err().to_string();
        assert!(e.contains("l1d"), "{e}");
        assert!(c.set("l2=3").is_err());
        assert!(c.set("core.rob_entries=abc").is_err());
    }

    #[test]
    fn toml_round_trip() {
        let c = Config::default();
        let t = c.to_toml();
        let back: Config = toml::from_str(&t).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn ideal_list() {
        let i = Ideal::parse_list("bpred, l1d").unwrap();
        assert!(i.bpred && i.l1d && !i.l1i);
        assert!(Ideal::parse_list("all").unwrap().dtlb);
        assert!(Ideal::parse_list("bogus").is_err());
    }
}
