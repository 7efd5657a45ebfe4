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

    /// Every item of both variants for widths that are all off their
    /// defaults, worked out by hand: 8 rows (3-bit row index, 4-bit pointers),
    /// ROB 100 (7-bit ids, a count of 0..=100 in 7 bits), 5-bit locals, 20-bit
    /// globals.
    #[test]
    fn every_item_of_an_odd_sized_unit_by_hand() {
        let params = |variant| Params {
            fmt_rows: 8,
            rob_entries: 100,
            local_bits: 5,
            global_bits: 20,
            ..p(variant)
        };
        // name, count, width, bits, table
        let rows_fmt = [
            ("rows.rob_id", 8, 7, 56, true),
            ("rows.penalty", 8, 5, 40, true),
            ("rows.l1i_l2i_itlb", 8, 15, 120, true),
            ("rows.mispredict_done", 8, 2, 16, true),
        ];
        let rows_sfmt = [
            ("rows.rob_id", 8, 7, 56, true),
            ("rows.penalty", 8, 5, 40, true),
            ("rows.mispredict_done", 8, 2, 16, true),
            ("sfmt.shared_i", 3, 5, 15, true),
            ("sfmt.imiss_bits", 100, 1, 100, true),
        ];
        let shared = [
            ("pointers", 3, 4, 12, false),
            ("rob.head_tail", 2, 7, 14, false),
            ("rob.count", 1, 7, 7, false),
            ("flags.refilling_refill_pending", 2, 1, 2, false),
            ("globals.counters", 10, 20, 200, false),
            ("globals.overflow", 10, 1, 10, false),
            ("flags.saturated", 1, 1, 1, false),
            // valid 1 + bundle index 64 + field 4 + rule 4
            ("error.latch", 1, 73, 73, false),
            ("error.bundle_counter", 1, 64, 64, false),
        ];
        // tables: 56 + 40 + 120 + 16 = 232 and 56 + 40 + 16 + 15 + 100 = 227;
        // shared: 12 + 14 + 7 + 2 + 200 + 10 + 1 + 73 + 64 = 383
        for (variant, rows, table, total) in [
            (Variant::Fmt, &rows_fmt[..], 232, 615),
            (Variant::Sfmt, &rows_sfmt[..], 227, 610),
        ] {
            let c = cost(&params(variant)).unwrap();
            let want: Vec<Item> = rows
                .iter()
                .chain(&shared)
                .map(|&(name, count, width, bits, table)| Item {
                    name,
                    count,
                    width,
                    bits,
                    table,
                })
                .collect();
            assert_eq!(c.items, want, "{variant}");
            assert_eq!((c.table_bits, c.total_bits), (table, total), "{variant}");
            assert_eq!((c.variant, c.params), (variant, params(variant)));
        }
    }

    /// The largest unit: 256 rows (9-bit pointers), ROB 4096 (12-bit ids, a
    /// count of 0..=4096 in 13 bits), 32-bit locals, 64-bit globals.
    #[test]
    fn the_largest_unit_by_hand() {
        let params = |variant| Params {
            fmt_rows: 256,
            rob_entries: 4096,
            local_bits: 32,
            global_bits: 64,
            ..p(variant)
        };
        // shared: 27 + 24 + 13 + 2 + 640 + 10 + 1 + 73 + 64 = 854
        let f = cost(&params(Variant::Fmt)).unwrap();
        // 3072 + 8192 + 24576 + 512
        assert_eq!(f.table_bits, 36352);
        assert_eq!(f.total_bits, 36352 + 854);
        let s = cost(&params(Variant::Sfmt)).unwrap();
        // 3072 + 8192 + 512 + 96 + 4096
        assert_eq!(s.table_bits, 15968);
        assert_eq!(s.total_bits, 15968 + 854);
        assert_eq!(s.bits_of("rob.count"), 13);
        assert_eq!(s.bits_of("pointers"), 27);
    }

    /// The printed table: one line per item (name, count, width, bits, and
    /// whether it is part of the table), then the two totals.
    #[test]
    fn cost_prints_every_item_and_both_totals() {
        let params = Params {
            fmt_rows: 8,
            rob_entries: 100,
            local_bits: 5,
            global_bits: 20,
            ..p(Variant::Sfmt)
        };
        let text = cost(&params).unwrap().to_string();
        let want = "\
sfmt storage (fmt_rows 8, rob_entries 100, local_bits 5, global_bits 20):
  rows.rob_id                          8 x   7 =      56 bits  (table)
  rows.penalty                         8 x   5 =      40 bits  (table)
  rows.mispredict_done                 8 x   2 =      16 bits  (table)
  sfmt.shared_i                        3 x   5 =      15 bits  (table)
  sfmt.imiss_bits                    100 x   1 =     100 bits  (table)
  pointers                             3 x   4 =      12 bits
  rob.head_tail                        2 x   7 =      14 bits
  rob.count                            1 x   7 =       7 bits
  flags.refilling_refill_pending       2 x   1 =       2 bits
  globals.counters                    10 x  20 =     200 bits
  globals.overflow                    10 x   1 =      10 bits
  flags.saturated                      1 x   1 =       1 bits
  error.latch                          1 x  73 =      73 bits
  error.bundle_counter                 1 x  64 =      64 bits
  table total                                            227 bits
  unit total                                             610 bits
";
        assert_eq!(text, want);
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
