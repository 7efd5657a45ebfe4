//! Storage cost of the unit: the bits of every register structure of
//! [`crate::Unit`] for a parameter set (widths as in the `unit` module doc).
//!
//! `table_bits` is what distinguishes FMT from sFMT in the paper (section 4.1.2):
//! the row table plus, for sFMT, the shared I-counters and the I-miss bit per ROB
//! entry. `total_bits` adds what both variants share (pointers, the ROB mirror,
//! global counters and flags, the error latch). It counts every register the
//! model holds, FMT's `refilling` included: no FMT logic reads it (only sFMT's
//! 4.1 does), but it is a visible field that the lock-step checker compares and
//! the waveforms show; a synthesis of FMT alone would drop that one bit.

use serde::Serialize;

use crate::Widths;
use events::{Params, Variant, NUM_COUNTERS};

/// One structure and its storage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    /// Structure name (`rows.rob_id`, `pointers`, ...).
    pub name: &'static str,
    /// How many copies (rows, counters, entries).
    pub count: u64,
    /// Bits of each copy.
    pub width: u64,
    /// `count * width`.
    pub bits: u64,
    /// Part of the variant-specific table (`table_bits`)?
    pub table: bool,
}

/// Storage bits of one unit, per structure, with totals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cost {
    pub variant: Variant,
    pub params: Params,
    pub items: Vec<Item>,
    /// Row table plus sFMT's shared counters and I-miss bits.
    pub table_bits: u64,
    /// Every register of the unit.
    pub total_bits: u64,
}

impl Cost {
    /// Bits of the named structure (0 if absent).
    pub fn bits_of(&self, name: &str) -> u64 {
        self.items
            .iter()
            .filter(|i| i.name == name)
            .map(|i| i.bits)
            .sum()
    }
}

/// The storage bits of a unit with these parameters, or the parameter that no
/// unit can have ([`Params::validate`]: the widths of an impossible unit, such
/// as one of 0 or 6 rows, mean nothing).
pub fn cost(p: &Params) -> Result<Cost, events::ParamError> {
    p.validate()?;
    let w = Widths::of(p);
    let rows = p.fmt_rows as u64;
    let rob = p.rob_entries as u64;
    let local = w.local as u64;
    let sfmt = p.variant == Variant::Sfmt;
    let mut items = Vec::new();
    let mut add = |name, count: u64, width: u64, table| {
        if count * width > 0 {
            items.push(Item {
                name,
                count,
                width,
                bits: count * width,
                table,
            })
        }
    };
    add("rows.rob_id", rows, w.rob_id as u64, true);
    add("rows.penalty", rows, local, true);
    if !sfmt {
        add("rows.l1i_l2i_itlb", rows, 3 * local, true);
    }
    add("rows.mispredict_done", rows, 2, true);
    if sfmt {
        add("sfmt.shared_i", 3, local, true);
        add("sfmt.imiss_bits", rob, 1, true);
    }
    add("pointers", 3, w.ptr as u64, false);
    add("rob.head_tail", 2, w.rob_id as u64, false);
    add("rob.count", 1, w.rob_count as u64, false);
    add("flags.refilling_refill_pending", 2, 1, false);
    add(
        "globals.counters",
        NUM_COUNTERS as u64,
        w.global as u64,
        false,
    );
    add("globals.overflow", NUM_COUNTERS as u64, 1, false);
    add("flags.saturated", 1, 1, false);
    // valid + bundle index + field (4 bits, codes 1..=8) + rule (4 bits, 1..=9)
    add("error.latch", 1, 1 + w.bundle as u64 + 4 + 4, false);
    add("error.bundle_counter", 1, w.bundle as u64, false);
    let table_bits = items.iter().filter(|i| i.table).map(|i| i.bits).sum();
    let total_bits = items.iter().map(|i| i.bits).sum();
    Ok(Cost {
        variant: p.variant,
        params: *p,
        items,
        table_bits,
        total_bits,
    })
}

impl std::fmt::Display for Cost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.params;
        writeln!(
            f,
            "{} storage (fmt_rows {}, rob_entries {}, local_bits {}, global_bits {}):",
            self.variant.name(),
            p.fmt_rows,
            p.rob_entries,
            p.local_bits,
            p.global_bits
        )?;
        for i in &self.items {
            writeln!(
                f,
                "  {:<32} {:>5} x {:>3} = {:>7} bits{}",
                i.name,
                i.count,
                i.width,
                i.bits,
                if i.table { "  (table)" } else { "" }
            )?;
        }
        writeln!(f, "  {:<32} {:>25} bits", "table total", self.table_bits)?;
        writeln!(f, "  {:<32} {:>25} bits", "unit total", self.total_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(variant: Variant) -> Params {
        Params::default().with_variant(variant)
    }

    #[test]
    fn fmt_default_bits_by_hand() {
        // 64 rows, ROB 128 (7-bit ids), 16-bit locals, 48-bit globals.
        let c = cost(&p(Variant::Fmt)).unwrap();
        assert_eq!(c.bits_of("rows.rob_id"), 64 * 7);
        assert_eq!(c.bits_of("rows.penalty"), 64 * 16);
        assert_eq!(c.bits_of("rows.l1i_l2i_itlb"), 64 * 48);
        assert_eq!(c.bits_of("rows.mispredict_done"), 128);
        assert_eq!(c.bits_of("sfmt.shared_i"), 0);
        assert_eq!(c.bits_of("sfmt.imiss_bits"), 0);
        // table: 448 + 1024 + 3072 + 128
        assert_eq!(c.table_bits, 4672);
        assert_eq!(c.bits_of("pointers"), 3 * 7);
        assert_eq!(c.bits_of("rob.head_tail"), 14);
        assert_eq!(c.bits_of("rob.count"), 8); // 0..=128
        assert_eq!(c.bits_of("globals.counters"), 480);
        assert_eq!(c.bits_of("error.latch"), 73);
        // shared: 21 + 14 + 8 + 2 + 480 + 10 + 1 + 73 + 64 = 673
        assert_eq!(c.total_bits, 4672 + 673);
    }

    #[test]
    fn sfmt_default_bits_by_hand() {
        let c = cost(&p(Variant::Sfmt)).unwrap();
        assert_eq!(c.bits_of("rows.l1i_l2i_itlb"), 0);
        assert_eq!(c.bits_of("sfmt.shared_i"), 48);
        assert_eq!(c.bits_of("sfmt.imiss_bits"), 128);
        // 448 + 1024 + 128 + 48 + 128
        assert_eq!(c.table_bits, 1776);
        assert_eq!(c.total_bits, 1776 + 673);
    }

    #[test]
    fn sfmt_table_is_a_fraction_of_fmt() {
        let f = cost(&p(Variant::Fmt)).unwrap();
        let s = cost(&p(Variant::Sfmt)).unwrap();
        assert!(
            s.table_bits * 2 < f.table_bits,
            "{} vs {}",
            s.table_bits,
            f.table_bits
        );
        assert!(s.total_bits < f.total_bits);
    }

    #[test]
    fn small_odd_rob_widths() {
        // 4 rows (3-bit pointers), ROB 5 (3-bit ids, count 0..=5 in 3 bits), 1-bit locals.
        let params = Params {
            fmt_rows: 4,
            rob_entries: 5,
            local_bits: 1,
            global_bits: 8,
            ..p(Variant::Sfmt)
        };
        let c = cost(&params).unwrap();
        assert_eq!(c.bits_of("rows.rob_id"), 12);
        assert_eq!(c.bits_of("rows.penalty"), 4);
        assert_eq!(c.bits_of("rows.mispredict_done"), 8);
        assert_eq!(c.bits_of("sfmt.shared_i"), 3);
        assert_eq!(c.bits_of("sfmt.imiss_bits"), 5);
        assert_eq!(c.table_bits, 12 + 4 + 8 + 3 + 5);
        assert_eq!(c.bits_of("pointers"), 9);
        assert_eq!(c.bits_of("rob.head_tail"), 6);
        assert_eq!(c.bits_of("rob.count"), 3);
        assert_eq!(c.bits_of("globals.counters"), 80);
    }

    /// No width is made up for a unit that cannot exist.
    #[test]
    fn impossible_parameters_have_no_cost() {
        let with = |v: Variant, f: fn(&mut Params)| {
            let mut q = p(v);
            f(&mut q);
            q
        };
        for (name, q) in [
            ("fmt_rows", with(Variant::Fmt, |q| q.fmt_rows = 0)),
            ("fmt_rows", with(Variant::Fmt, |q| q.fmt_rows = 6)),
            ("rob_entries", with(Variant::Sfmt, |q| q.rob_entries = 0)),
            ("local_bits", with(Variant::Fmt, |q| q.local_bits = 0)),
        ] {
            let e = cost(&q).unwrap_err();
            assert_eq!(e.name, name, "{e}");
        }
    }

    #[test]
    fn cost_serializes_with_totals() {
        let c = cost(&p(Variant::Sfmt)).unwrap();
        let v: serde_json::Value = serde_json::to_value(&c).unwrap();
        assert_eq!(v["variant"], "sfmt");
        assert_eq!(v["table_bits"], 1776);
        assert_eq!(v["total_bits"], 1776 + 673);
        assert_eq!(v["items"][0]["name"], "rows.rob_id");
        assert_eq!(v["items"][0]["bits"], 448);
    }
}
