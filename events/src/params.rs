//! Unit parameters of spec section 2.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// FMT (per-row I-miss counters) or sFMT (shared I-miss counters, I-miss bit per ROB entry).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    #[default]
    Fmt,
    Sfmt,
}

crate::bundle::named!(Variant);

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Fmt, Variant::Sfmt];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Fmt => "fmt",
            Variant::Sfmt => "sfmt",
        }
    }
}

impl std::str::FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fmt" => Ok(Variant::Fmt),
            "sfmt" => Ok(Variant::Sfmt),
            _ => Err(format!("unknown variant `{s}` (expected `fmt` or `sfmt`)")),
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The parameters of one counter unit (spec section 2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub rob_entries: u32,
    pub fmt_rows: u32,
    pub local_bits: u32,
    pub global_bits: u32,
    pub variant: Variant,
    pub fetch_width: u32,
    pub dispatch_width: u32,
    pub retire_width: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            rob_entries: 128,
            fmt_rows: 64,
            local_bits: 16,
            global_bits: 48,
            variant: Variant::Fmt,
            fetch_width: 8,
            dispatch_width: 4,
            retire_width: 4,
        }
    }
}

/// A parameter outside its legal range.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("parameter `{name}` = {value} is illegal: {legal}")]
pub struct ParamError {
    pub name: &'static str,
    pub value: String,
    pub legal: &'static str,
}

impl Params {
    /// The same parameters with another variant.
    pub fn with_variant(mut self, v: Variant) -> Self {
        self.variant = v;
        self
    }

    /// Check every parameter against its legal range (spec section 2).
    pub fn validate(&self) -> Result<(), ParamError> {
        let bad = |name, value: u32, legal| ParamError {
            name,
            value: value.to_string(),
            legal,
        };
        if !(2..=4096).contains(&self.rob_entries) {
            return Err(bad("rob_entries", self.rob_entries, "2..=4096"));
        }
        if !(2..=256).contains(&self.fmt_rows) || !self.fmt_rows.is_power_of_two() {
            return Err(bad("fmt_rows", self.fmt_rows, "a power of two in 2..=256"));
        }
        if !(1..=32).contains(&self.local_bits) {
            return Err(bad("local_bits", self.local_bits, "1..=32"));
        }
        if !(8..=64).contains(&self.global_bits) {
            return Err(bad("global_bits", self.global_bits, "8..=64"));
        }
        for (name, v) in [
            ("fetch_width", self.fetch_width),
            ("dispatch_width", self.dispatch_width),
            ("retire_width", self.retire_width),
        ] {
            if !(1..=8).contains(&v) {
                return Err(bad(name, v, "1..=8"));
            }
        }
        Ok(())
    }

    /// The parameters [`Params::set`] takes by name (all but the variant,
    /// which has an option of its own wherever parameters are set).
    pub const NAMES: [&'static str; 7] = [
        "rob_entries",
        "fmt_rows",
        "local_bits",
        "global_bits",
        "fetch_width",
        "dispatch_width",
        "retire_width",
    ];

    /// Set one numeric parameter by name from a string (`--set NAME=VALUE`;
    /// [`Params::NAMES`]). An unknown name is said so before the value is
    /// looked at.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let slot = match name {
            "rob_entries" => &mut self.rob_entries,
            "fmt_rows" => &mut self.fmt_rows,
            "local_bits" => &mut self.local_bits,
            "global_bits" => &mut self.global_bits,
            "fetch_width" => &mut self.fetch_width,
            "dispatch_width" => &mut self.dispatch_width,
            "retire_width" => &mut self.retire_width,
            _ => {
                return Err(format!(
                    "unknown parameter `{name}` (known: {})",
                    Self::NAMES.join(", ")
                ))
            }
        };
        *slot = match value
            .parse::<u64>()
            .ok()
            .and_then(|v| u32::try_from(v).ok())
        {
            Some(v) => v,
            // an integer too large for the register, however many digits
            None if value.parse::<u64>().is_ok()
                || (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())) =>
            {
                return Err(match Self::above_every_range(name) {
                    Some(e) => ParamError {
                        value: value.to_string(),
                        ..e
                    }
                    .to_string(),
                    None => format!("parameter `{name}` = {value} is too large"),
                });
            }
            None => {
                return Err(format!(
                    "parameter `{name}`: `{value}` is not a non-negative integer"
                ))
            }
        };
        Ok(())
    }

    /// The legal values of the numeric parameter `name` ([`Params::NAMES`]),
    /// as [`Params::validate`] says them (`2..=4096`); `None` for another name.
    pub fn legal(name: &str) -> Option<&'static str> {
        Self::above_every_range(name).map(|e| e.legal)
    }

    /// The error of `validate` for the numeric parameter `name` at
    /// `u32::MAX`, above every range (the defaults are legal, so the error
    /// is that one's); `None` for another name.
    fn above_every_range(name: &str) -> Option<ParamError> {
        let mut t = Params::default();
        t.set(name, &u32::MAX.to_string()).ok()?;
        t.validate().err()
    }

    /// Bits of a ROB id: `ceil(log2(rob_entries))`.
    pub fn rob_id_bits(&self) -> u32 {
        (self.rob_entries - 1).max(1).ilog2() + 1
    }

    /// Bits of a row index: `log2(fmt_rows)`.
    pub fn row_bits(&self) -> u32 {
        self.fmt_rows.ilog2()
    }

    /// Largest local counter value: `2^local_bits - 1`.
    pub fn local_max(&self) -> u64 {
        (1u64 << self.local_bits) - 1
    }

    /// Mask of a global counter: `2^global_bits - 1`.
    pub fn global_mask(&self) -> u64 {
        if self.global_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.global_bits) - 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_legal() {
        Params::default().validate().unwrap();
    }

    #[test]
    fn rob_id_bits_is_ceil_log2() {
        let mut p = Params::default();
        for (n, b) in [
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (128, 7),
            (129, 8),
            (4096, 12),
        ] {
            p.rob_entries = n;
            assert_eq!(p.rob_id_bits(), b, "rob_entries {n}");
        }
    }

    #[test]
    fn rejects_non_power_of_two_rows() {
        let p = Params {
            fmt_rows: 48,
            ..Params::default()
        };
        assert_eq!(p.validate().unwrap_err().name, "fmt_rows");
    }

    /// `set` takes every name of `NAMES`, and says of any other name that it
    /// is unknown, listing the names, whatever the value (once a bad value of
    /// an unknown name was reported as a bad value; and `variant`, which has
    /// an option of its own, was listed as if `--set` took it).
    #[test]
    fn set_takes_the_numeric_names_and_names_an_unknown_one_first() {
        for (i, name) in Params::NAMES.iter().enumerate() {
            let mut p = Params::default();
            p.set(name, &(i + 2).to_string()).unwrap();
            let mut q = Params::default();
            q.set(name, "1").unwrap();
            assert_ne!(p, q, "{name} sets a field");
        }
        for (name, value) in [("foo", "1"), ("foo", "abc"), ("variant", "sfmt")] {
            let e = Params::default().set(name, value).unwrap_err();
            assert_eq!(
                e,
                format!(
                    "unknown parameter `{name}` (known: rob_entries, fmt_rows, local_bits, \
                     global_bits, fetch_width, dispatch_width, retire_width)"
                )
            );
        }
        let e = Params::default().set("fmt_rows", "abc").unwrap_err();
        assert!(e.contains("not a non-negative integer"), "{e}");
    }

    /// Every range of `validate` takes its two ends and refuses the value
    /// just outside each, naming the parameter, the value and the range.
    #[test]
    fn validate_takes_each_range_end_and_refuses_one_past_it() {
        let cases: [(&str, [u32; 2], [u32; 2], &str); 7] = [
            ("rob_entries", [2, 4096], [1, 4097], "2..=4096"),
            ("fmt_rows", [2, 256], [1, 512], "a power of two in 2..=256"),
            ("local_bits", [1, 32], [0, 33], "1..=32"),
            ("global_bits", [8, 64], [7, 65], "8..=64"),
            ("fetch_width", [1, 8], [0, 9], "1..=8"),
            ("dispatch_width", [1, 8], [0, 9], "1..=8"),
            ("retire_width", [1, 8], [0, 9], "1..=8"),
        ];
        for (name, good, bad, legal) in cases {
            for v in good {
                let mut p = Params::default();
                p.set(name, &v.to_string()).unwrap();
                assert_eq!(p.validate(), Ok(()), "{name} = {v}");
            }
            for v in bad {
                let mut p = Params::default();
                p.set(name, &v.to_string()).unwrap();
                assert_eq!(
                    p.validate(),
                    Err(ParamError {
                        name,
                        value: v.to_string(),
                        legal
                    }),
                    "{name} = {v}"
                );
            }
        }
        // the first bad parameter in the order of section 2 is the one named
        let p = Params {
            rob_entries: 1,
            fmt_rows: 3,
            retire_width: 0,
            ..Params::default()
        };
        assert_eq!(p.validate().unwrap_err().name, "rob_entries");
        let p = Params {
            fetch_width: 9,
            retire_width: 0,
            ..Params::default()
        };
        assert_eq!(p.validate().unwrap_err().name, "fetch_width");
    }

    /// A value too large for the 32-bit register is refused as illegal in the
    /// words `validate` uses for that parameter, however many digits it has;
    /// `legal` gives those words, and `None` for a name `set` does not take.
    #[test]
    fn set_refuses_a_value_above_u32_in_the_words_of_its_range() {
        for (name, legal) in [
            ("rob_entries", "2..=4096"),
            ("fmt_rows", "a power of two in 2..=256"),
            ("local_bits", "1..=32"),
            ("global_bits", "8..=64"),
            ("fetch_width", "1..=8"),
            ("dispatch_width", "1..=8"),
            ("retire_width", "1..=8"),
        ] {
            assert_eq!(Params::legal(name), Some(legal), "{name}");
            for value in [
                "4294967296",
                "18446744073709551616",
                "0099999999999999999999",
            ] {
                let mut p = Params::default();
                assert_eq!(
                    p.set(name, value),
                    Err(format!("parameter `{name}` = {value} is illegal: {legal}")),
                    "{name}"
                );
                assert_eq!(p, Params::default(), "{name}: nothing set");
            }
        }
        assert_eq!(Params::legal("variant"), None);
        assert_eq!(Params::legal("foo"), None);
        for value in ["", "-1", "+", "1.5", "4294967296x"] {
            assert_eq!(
                Params::default().set("fmt_rows", value),
                Err(format!(
                    "parameter `fmt_rows`: `{value}` is not a non-negative integer"
                )),
                "`{value}`"
            );
        }
        let mut p = Params::default();
        p.set("rob_entries", "4294967295").unwrap();
        assert_eq!(p.rob_entries, u32::MAX);
    }

    #[test]
    fn widths_and_masks_follow_the_parameters() {
        let mut p = Params::default();
        for (rows, bits) in [(2, 1), (4, 2), (64, 6), (256, 8)] {
            p.fmt_rows = rows;
            assert_eq!(p.row_bits(), bits, "fmt_rows {rows}");
        }
        for (bits, max) in [(1, 1), (3, 7), (16, 0xffff), (32, 0xffff_ffff)] {
            p.local_bits = bits;
            assert_eq!(p.local_max(), max, "local_bits {bits}");
        }
        for (bits, mask) in [
            (8, 0xff),
            (48, (1u64 << 48) - 1),
            (63, u64::MAX >> 1),
            (64, u64::MAX),
        ] {
            p.global_bits = bits;
            assert_eq!(p.global_mask(), mask, "global_bits {bits}");
        }
    }

    #[test]
    fn variants_are_read_and_written_by_name() {
        for (v, name) in [(Variant::Fmt, "fmt"), (Variant::Sfmt, "sfmt")] {
            assert_eq!(v.name(), name);
            assert_eq!(v.to_string(), name);
            assert_eq!(name.parse::<Variant>(), Ok(v));
            assert_eq!(Params::default().with_variant(v).variant, v);
        }
        assert_eq!(Variant::ALL, [Variant::Fmt, Variant::Sfmt]);
        assert_eq!(
            "FMT".parse::<Variant>(),
            Err("unknown variant `FMT` (expected `fmt` or `sfmt`)".to_string())
        );
    }
}
