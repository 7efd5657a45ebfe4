//! The input bundle of spec section 3.

use serde::{Deserialize, Serialize};

/// `s` with its control characters escaped (`\u{1b}`), so that a name quoted
/// in a message never sends one to a terminal; everything else as it is.
pub(crate) fn printable(s: &str) -> String {
    let mut t = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            t.extend(c.escape_debug());
        } else {
            t.push(c);
        }
    }
    t
}

/// A field-less enum read and written by its name.
pub(crate) trait Named: Copy + 'static {
    const ALL_NAMED: &'static [Self];
    fn name_of(self) -> &'static str;
}

/// Deserialize a [`Named`] enum from its name, a string, only: serde's derive
/// would also take the object form `{"l1i": null}`, a second spelling of the
/// same value that no writer produces. An unknown name is quoted escaped, so a
/// control character in it never reaches a terminal.
pub(crate) fn by_name<'de, T: Named, D: serde::Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    struct V<T>(std::marker::PhantomData<T>);
    fn names<T: Named>(f: &mut std::fmt::Formatter) -> std::fmt::Result {
        for (i, x) in T::ALL_NAMED.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}`{}`", x.name_of())?;
        }
        Ok(())
    }
    impl<T: Named> serde::de::Visitor<'_> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string, one of ")?;
            names::<T>(f)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
            struct Unknown<'a, T>(&'a str, std::marker::PhantomData<T>);
            impl<T: Named> std::fmt::Display for Unknown<'_, T> {
                fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    write!(
                        f,
                        "unknown variant `{}`, expected one of ",
                        printable(self.0)
                    )?;
                    names::<T>(f)
                }
            }
            T::ALL_NAMED
                .iter()
                .find(|x| x.name_of() == v)
                .copied()
                .ok_or_else(|| E::custom(Unknown::<T>(v, std::marker::PhantomData)))
        }
    }
    d.deserialize_str(V(std::marker::PhantomData))
}

/// `Named` and a `Deserialize` by name for an enum with `ALL` and `name()`.
macro_rules! named {
    ($t:ty) => {
        impl crate::bundle::Named for $t {
            const ALL_NAMED: &'static [Self] = &<$t>::ALL;
            fn name_of(self) -> &'static str {
                self.name()
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                crate::bundle::by_name(d)
            }
        }
    };
}
pub(crate) use named;

named!(FetchStall);
named!(HeadCause);

/// Why no instruction entered the frontend this cycle (spec section 3).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum FetchStall {
    #[default]
    None = 0,
    L1i = 1,
    L2i = 2,
    Itlb = 3,
}

impl FetchStall {
    pub const ALL: [FetchStall; 4] = [Self::None, Self::L1i, Self::L2i, Self::Itlb];
    /// Raw encoding (2 bits).
    #[inline]
    pub fn bits(self) -> u8 {
        self as u8
    }
    /// Decode raw bits; `None` (the Rust option) for an encoding out of range.
    pub fn from_bits(b: u8) -> Option<Self> {
        Self::ALL.get(b as usize).copied()
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::L1i => "l1i",
            Self::L2i => "l2i",
            Self::Itlb => "itlb",
        }
    }
}

/// What the ROB head waits on this cycle (spec section 3).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum HeadCause {
    #[default]
    None = 0,
    L1d = 1,
    L2d = 2,
    Dtlb = 3,
    Longlat = 4,
    Other = 5,
}

impl HeadCause {
    pub const ALL: [HeadCause; 6] = [
        Self::None,
        Self::L1d,
        Self::L2d,
        Self::Dtlb,
        Self::Longlat,
        Self::Other,
    ];
    /// Raw encoding (3 bits).
    #[inline]
    pub fn bits(self) -> u8 {
        self as u8
    }
    pub fn from_bits(b: u8) -> Option<Self> {
        Self::ALL.get(b as usize).copied()
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::L1d => "l1d",
            Self::L2d => "l2d",
            Self::Dtlb => "dtlb",
            Self::Longlat => "longlat",
            Self::Other => "other",
        }
    }
}

/// The oldest squash event of the cycle (spec section 3); takes effect at the end
/// of the cycle.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Squash {
    #[default]
    None,
    /// The branch with this ROB id was found mispredicted; everything younger is squashed.
    Mispredict(u16),
    /// A non-branch event squashes this ROB id itself and everything younger.
    Flush(u16),
}

impl Squash {
    /// Raw kind encoding: 0 none, 1 mispredict, 2 flush.
    #[inline]
    pub fn kind_bits(self) -> u8 {
        match self {
            Squash::None => 0,
            Squash::Mispredict(_) => 1,
            Squash::Flush(_) => 2,
        }
    }
    /// The ROB id named, 0 for `None`.
    #[inline]
    pub fn id(self) -> u16 {
        match self {
            Squash::None => 0,
            Squash::Mispredict(x) | Squash::Flush(x) => x,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Squash::None => "none",
            Squash::Mispredict(_) => "mispredict",
            Squash::Flush(_) => "flush",
        }
    }
}

/// One clock cycle's input to the counter unit (spec section 3).
///
/// Masks are bit-per-slot: bit `i` is the `i`-th instruction dispatched this cycle.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CycleEvents {
    /// Count this cycle (false during warm-up / outside a region of interest).
    pub count_enable: bool,
    /// Why nothing entered the frontend this cycle.
    pub fetch_stall: FetchStall,
    /// Branches whose fetch completed this cycle.
    pub fetched_branches: u8,
    /// The frontend redirected fetch this cycle (decode-time redirect).
    pub fe_redirect: bool,
    /// With `fe_redirect`: how many of the youngest fetched, undispatched branches are squashed.
    pub fe_squash: u8,
    /// Instructions that entered the ROB this cycle.
    pub dispatched: u8,
    /// Bit i: the i-th dispatched instruction is a branch.
    pub dispatched_branches: u8,
    /// Bit i: the i-th dispatched instruction is the one whose fetch waited on an I-miss.
    pub dispatched_imiss: u8,
    /// The oldest squash of the cycle.
    #[serde(deserialize_with = "strict_squash")]
    pub squash: Squash,
    /// Instructions committed this cycle.
    pub retired: u8,
    /// Why the ROB head did not commit this cycle.
    pub head: HeadCause,
    /// A backend structure other than the ROB (the load/store queue; on
    /// another core an issue queue or the physical registers) is full at the
    /// start of this cycle, a state like the unit's own `rob_full`, not
    /// "dispatch stalled this cycle": the unit then treats the instruction
    /// window as full, as it does a full ROB (contract amendment,
    /// docs/spec-decisions.md). Absent from a stream: `false`, the paper's
    /// design.
    pub backend_full: bool,
}

impl Default for CycleEvents {
    /// An idle, counted cycle: nothing happens, the ROB is empty.
    fn default() -> Self {
        Self {
            count_enable: true,
            fetch_stall: FetchStall::None,
            fetched_branches: 0,
            fe_redirect: false,
            fe_squash: 0,
            dispatched: 0,
            dispatched_branches: 0,
            dispatched_imiss: 0,
            squash: Squash::None,
            retired: 0,
            head: HeadCause::None,
            backend_full: false,
        }
    }
}

impl CycleEvents {
    /// An idle counted cycle (same as `Default`).
    pub fn idle() -> Self {
        Self::default()
    }
}

/// A squash's ROB id as the stream writes it: an integer 0..=65535, refused
/// in the wording of the other integer fields (``expected an integer
/// 0..=65535, found `65536` ``).
struct SquashId(u16);

impl<'de> serde::Deserialize<'de> for SquashId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        fn found<E: serde::de::Error>(v: impl std::fmt::Display) -> E {
            E::custom(format_args!("expected an integer 0..=65535, found `{v}`"))
        }
        impl serde::de::Visitor<'_> for V {
            type Value = SquashId;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer 0..=65535")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SquashId, E> {
                u16::try_from(v).map(SquashId).map_err(|_| found(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SquashId, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(found(v)),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<SquashId, E> {
                Err(found(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SquashId, E> {
                Err(found(format_args!("\"{}\"", printable(v))))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<SquashId, E> {
                Err(found(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// `squash` in its documented forms only: `"none"`, `{"mispredict": ID}`,
/// `{"flush": ID}`: how [`CycleEvents`] reads its `squash` (the derived form of
/// [`Squash`] alone would also take `{"none":null}`).
pub(crate) fn strict_squash<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Squash, D::Error> {
    const NAMES: &str = "expected one of `none`, `mispredict`, `flush`";
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Squash;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("\"none\", {\"mispredict\": ID} or {\"flush\": ID}")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Squash, E> {
            match v {
                "none" => Ok(Squash::None),
                "mispredict" | "flush" => Err(E::custom(format_args!(
                    "`{v}` needs a ROB id: {{\"{v}\": ID}}"
                ))),
                _ => Err(E::custom(format_args!(
                    "unknown variant `{}`, {NAMES}",
                    printable(v)
                ))),
            }
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Squash, A::Error> {
            let s = match m.next_key::<String>()?.as_deref() {
                Some("mispredict") => Squash::Mispredict(m.next_value::<SquashId>()?.0),
                Some("flush") => Squash::Flush(m.next_value::<SquashId>()?.0),
                Some(k) => {
                    return Err(serde::de::Error::custom(format_args!(
                        "unknown variant `{}`, expected `mispredict` or `flush` (the object form)",
                        printable(k)
                    )))
                }
                None => {
                    return Err(serde::de::Error::custom(
                        "the object form has one key, `mispredict` or `flush`; found none",
                    ))
                }
            };
            match m.next_key::<String>()? {
                None => {}
                Some(k) if k == s.name() => {
                    return Err(serde::de::Error::custom(format_args!(
                        "duplicate key `{k}` (every key may occur once)"
                    )))
                }
                Some(_) => {
                    return Err(serde::de::Error::custom(
                        "the object form has one key, `mispredict` or `flush`; found more",
                    ))
                }
            }
            Ok(s)
        }
    }
    d.deserialize_any(V)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle_err(text: &str) -> String {
        serde_json::from_str::<CycleEvents>(text)
            .unwrap_err()
            .to_string()
    }

    /// `from_bits` is the inverse of `bits` on every encoding, and refuses
    /// the first encoding past the last kind.
    #[test]
    fn from_bits_inverts_bits_and_refuses_the_next_encoding() {
        for (i, s) in FetchStall::ALL.into_iter().enumerate() {
            assert_eq!(s.bits(), i as u8);
            assert_eq!(FetchStall::from_bits(i as u8), Some(s));
        }
        assert_eq!(FetchStall::from_bits(4), None);
        for (i, h) in HeadCause::ALL.into_iter().enumerate() {
            assert_eq!(h.bits(), i as u8);
            assert_eq!(HeadCause::from_bits(i as u8), Some(h));
        }
        assert_eq!(HeadCause::from_bits(6), None);
    }

    /// An unknown name is refused listing every name of its kind, in order,
    /// separated by commas.
    #[test]
    fn an_unknown_kind_name_is_refused_listing_every_name() {
        assert_eq!(
            bundle_err(r#"{"fetch_stall":"l3i"}"#),
            "unknown variant `l3i`, expected one of `none`, `l1i`, `l2i`, `itlb` \
             at line 1 column 20"
        );
        assert_eq!(
            bundle_err(r#"{"head":"x"}"#),
            "unknown variant `x`, expected one of `none`, `l1d`, `l2d`, `dtlb`, \
             `longlat`, `other` at line 1 column 11"
        );
    }

    /// `squash` in a form that is neither a name nor an object, a squash
    /// kind named without its ROB id, and a ROB id of the wrong type are each
    /// refused saying what is expected.
    #[test]
    fn a_squash_of_the_wrong_form_is_refused_saying_what_is_expected() {
        assert_eq!(
            bundle_err(r#"{"squash":[1]}"#),
            r#"invalid type: sequence, expected "none", {"mispredict": ID} or {"flush": ID} at line 1 column 11"#
        );
        for kind in ["mispredict", "flush"] {
            assert_eq!(
                bundle_err(&format!(r#"{{"squash":"{kind}"}}"#)),
                format!(
                    r#"`{kind}` needs a ROB id: {{"{kind}": ID}} at line 1 column {}"#,
                    12 + kind.len()
                )
            );
        }
        // a second key is a duplicate only when it repeats the first
        assert_eq!(
            bundle_err(r#"{"squash":{"flush":1,"mispredict":2}}"#),
            "the object form has one key, `mispredict` or `flush`; found more at line 1 column 33"
        );
        assert_eq!(
            bundle_err(r#"{"squash":{"flush":1,"flush":2}}"#),
            "duplicate key `flush` (every key may occur once) at line 1 column 28"
        );
        assert_eq!(
            bundle_err(r#"{"squash":{"flush":null}}"#),
            "invalid type: null, expected an integer 0..=65535 at line 1 column 23"
        );
    }
}
