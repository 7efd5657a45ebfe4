//! Reading a unit's counters as a CPI stack, for people (text) and machines (JSON).

use serde::Serialize;

use events::{Counter, CounterUnit, Params, UnitView};

/// A CPI stack as read from one unit's global counters.
#[derive(Clone, Debug, Serialize)]
pub struct StackReport {
    pub variant: String,
    pub params: Params,
    /// Every global counter by name.
    pub counters: std::collections::BTreeMap<String, u64>,
    /// Names of the counters whose sticky overflow flag is set.
    pub overflowed: Vec<String>,
    pub saturated: bool,
    /// `cycles` minus the eight components (may be negative for sFMT); `None`
    /// when a counter wrapped (no difference of wrapped counts means anything).
    pub base: Option<i128>,
    /// CPI of `cycles`, `base` and each component (counter / retired); empty if
    /// nothing retired or a counter wrapped.
    pub cpi: std::collections::BTreeMap<String, f64>,
    /// Penalties still held in rows, not charged (spec 4.6).
    pub pending: events::Pending,
    pub error: Option<String>,
}

impl StackReport {
    pub fn from_unit(u: &dyn CounterUnit) -> Self {
        Self::from_view(u.params(), &u.view())
    }

    pub fn from_view(p: &Params, v: &UnitView) -> Self {
        let c = &v.counters;
        let retired = c.get(Counter::Retired);
        let mut cpi = std::collections::BTreeMap::new();
        // a wrapped counter holds its count modulo 2^global_bits: no ratio of it means anything
        let wrapped = Counter::ALL.iter().any(|&k| c.overflowed(k));
        if retired > 0 && !wrapped {
            let r = retired as f64;
            cpi.insert("cycles".into(), c.get(Counter::Cycles) as f64 / r);
            cpi.insert("base".into(), c.base() as f64 / r);
            for k in Counter::COMPONENTS {
                cpi.insert(k.name().into(), c.get(k) as f64 / r);
            }
        }
        Self {
            variant: p.variant.name().into(),
            params: *p,
            counters: Counter::ALL
                .iter()
                .map(|&k| (k.name().to_string(), c.get(k)))
                .collect(),
            overflowed: Counter::ALL
                .iter()
                .filter(|&&k| c.overflowed(k))
                .map(|k| k.name().to_string())
                .collect(),
            saturated: v.saturated,
            base: (!wrapped).then(|| c.base()),
            cpi,
            pending: v.pending,
            error: v.error.map(|e| e.to_string()),
        }
    }

    /// A readable table: component, cycles, share of cycles, CPI.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let cycles = self.counters["cycles"];
        let retired = self.counters["retired"];
        // wrapped counters hold their counts modulo 2^global_bits: no share, no CPI
        let ratios = self.overflowed.is_empty();
        let _ = writeln!(
            s,
            "{} (rows {}, ROB {}, local {} b, global {} b): {}, {} retired{}",
            // as the paper writes them: FMT, sFMT
            match self.variant.as_str() {
                "sfmt" => "sFMT".to_string(),
                v => v.to_uppercase(),
            },
            self.params.fmt_rows,
            self.params.rob_entries,
            self.params.local_bits,
            self.params.global_bits,
            crate::console::count(cycles, "cycle"),
            crate::console::count(retired, "instruction"),
            if retired > 0 && ratios {
                format!(", CPI {:.4}", cycles as f64 / retired as f64)
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            s,
            "  {:<10} {:>14} {:>8} {:>9}",
            "component", "cycles", "share", "CPI"
        );
        let share = |x: f64| {
            if cycles > 0 && ratios {
                format!("{:>7.2}%", 100.0 * x / cycles as f64)
            } else {
                "       -".into()
            }
        };
        let cpi = |x: f64| {
            if retired > 0 && ratios {
                format!("{:>9.4}", x / retired as f64)
            } else {
                "        -".into()
            }
        };
        let _ = writeln!(
            s,
            "  {:<10} {:>14} {} {}",
            "base",
            self.base.map_or("-".into(), |b| b.to_string()),
            share(self.base.unwrap_or(0) as f64),
            cpi(self.base.unwrap_or(0) as f64)
        );
        for k in Counter::COMPONENTS {
            let v = self.counters[k.name()];
            let _ = writeln!(
                s,
                "  {:<10} {:>14} {} {}",
                k.name(),
                v,
                share(v as f64),
                cpi(v as f64)
            );
        }
        let p = &self.pending;
        if p.l1i + p.l2i + p.itlb + p.bpred > 0 {
            let _ = writeln!(
                s,
                "  pending (in rows, not charged): l1i {} l2i {} itlb {} bpred {}",
                p.l1i, p.l2i, p.itlb, p.bpred
            );
        }
        if !self.overflowed.is_empty() {
            let _ = writeln!(
                s,
                "  OVERFLOWED (wrapped) counters: {}; they hold their counts modulo 2^{}, so base, shares and CPI cannot be derived",
                self.overflowed.join(", "),
                self.params.global_bits
            );
        }
        if self.saturated {
            let _ = writeln!(
                s,
                "  a local counter SATURATED: some penalties are understated"
            );
        }
        if let Some(e) = &self.error {
            let _ = writeln!(s, "  ERROR LATCHED: {e}");
        }
        s
    }
}
