//! The JSON Lines stream format: a header line, then one bundle a line.
//!
//! ```text
//! {"format":"cpistack-events","version":2,"params":{"rob_entries":128,...}}
//! # a comment
//! {"dispatched":2,"dispatched_branches":1}
//! {}
//! ```
//!
//! A bundle line is a JSON object in the serde form of [`CycleEvents`] (not an array,
//! and `squash` only `"none"`, `{"mispredict":ID}` or `{"flush":ID}`); absent fields
//! take their default (`count_enable` true, everything else zero / `"none"`), unknown
//! and duplicate keys are an error, in the header too. Blank lines and lines whose
//! first non-blank character is `#` are comments, anywhere. Line numbers in errors
//! count every physical line from 1.
//!
//! Version 2 added the bundle field `backend_full`; a version-1 stream reads as
//! it did (`backend_full` false) and may not name the field.

use std::fmt;
use std::io::{BufRead, Read, Write};

use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Serialize;
use serde_json::value::RawValue;

use super::{Format, Location, StreamError, NO_PATH};
use crate::{CycleEvents, FetchStall, HeadCause, Params, Squash};

/// The `format` value of the header line.
pub const FORMAT_NAME: &str = "cpistack-events";
/// The JSONL format version this code writes (it reads 1 to this).
pub const VERSION: u64 = 2;
/// The bundle fields a version-1 stream does not have.
const V2_FIELDS: [&str; 1] = ["backend_full"];
/// The longest line a reader accepts, in bytes (without the line end).
pub const MAX_LINE: usize = 1 << 16;

const BUNDLE_FIELDS: [&str; 12] = [
    "count_enable",
    "fetch_stall",
    "fetched_branches",
    "fe_redirect",
    "fe_squash",
    "dispatched",
    "dispatched_branches",
    "dispatched_imiss",
    "squash",
    "retired",
    "head",
    "backend_full",
];

const PARAM_FIELDS: [&str; 8] = [
    "rob_entries",
    "fmt_rows",
    "local_bits",
    "global_bits",
    "variant",
    "fetch_width",
    "dispatch_width",
    "retire_width",
];

#[derive(Serialize)]
struct Header<'a> {
    format: &'static str,
    version: u64,
    params: &'a Params,
}

/// Streaming writer of the JSONL format. Bundle lines omit fields equal to their
/// default, so an idle counted cycle is `{}`. Wrap `W` in a `BufWriter` for files.
pub struct JsonlWriter<W: Write> {
    inner: W,
    path: String,
    line: Vec<u8>,
}

impl<W: Write> JsonlWriter<W> {
    /// Write the header line for `params` (which must be legal).
    pub fn new(inner: W, params: &Params) -> Result<Self, StreamError> {
        Self::with_path(inner, params, NO_PATH)
    }

    /// Like [`JsonlWriter::new`]; I/O errors name `path`.
    pub fn with_path(inner: W, params: &Params, path: &str) -> Result<Self, StreamError> {
        params.validate().map_err(|e| StreamError::HeaderParams {
            at: Location::Line(1),
            source: e,
        })?;
        let mut w = Self {
            inner,
            path: path.to_string(),
            line: Vec::with_capacity(256),
        };
        let header = Header {
            format: FORMAT_NAME,
            version: VERSION,
            params,
        };
        w.line = serde_json::to_vec(&header).expect("a header always serialises");
        w.line.push(b'\n');
        w.emit()?;
        Ok(w)
    }

    fn emit(&mut self) -> Result<(), StreamError> {
        self.inner
            .write_all(&self.line)
            .map_err(|e| StreamError::io(&self.path, e))
    }

    /// Write a comment line (`# text`); a multi-line text becomes several comment lines.
    pub fn comment(&mut self, text: &str) -> Result<(), StreamError> {
        self.line.clear();
        for l in text.lines() {
            self.line.extend_from_slice(b"# ");
            self.line.extend_from_slice(l.as_bytes());
            self.line.push(b'\n');
        }
        self.emit()
    }

    /// Append one bundle line.
    pub fn write(&mut self, ev: &CycleEvents) -> Result<(), StreamError> {
        self.line.clear();
        encode_line(ev, &mut self.line);
        self.emit()
    }

    /// Flush and return the inner writer.
    pub fn finish(mut self) -> Result<W, StreamError> {
        self.inner
            .flush()
            .map_err(|e| StreamError::io(&self.path, e))?;
        Ok(self.inner)
    }
}

/// One bundle as this format writes it, without the line end: the fields
/// that differ from `CycleEvents::default()`, in declaration order (`{}` for an
/// idle counted cycle). For messages that quote a bundle.
pub fn bundle_json(ev: &CycleEvents) -> String {
    let mut out = Vec::with_capacity(96);
    encode_line(ev, &mut out);
    out.pop();
    // the encoder writes ASCII only
    String::from_utf8_lossy(&out).into_owned()
}

/// The compact line of one bundle (with its `\n`): the fields that differ from
/// `CycleEvents::default()`, in declaration order.
fn encode_line(ev: &CycleEvents, out: &mut Vec<u8>) {
    use std::io::Write as _;
    let d = CycleEvents::default();
    let mut first = true;
    let mut key = |out: &mut Vec<u8>, name: &str| {
        out.extend_from_slice(if first { b"{\"" } else { b",\"" });
        first = false;
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
    };
    // Writes into a Vec cannot fail.
    macro_rules! put {
        ($name:literal, $($arg:tt)*) => {{
            key(out, $name);
            let _ = write!(out, $($arg)*);
        }};
    }
    if ev.count_enable != d.count_enable {
        put!("count_enable", "{}", ev.count_enable);
    }
    if ev.fetch_stall != d.fetch_stall {
        put!("fetch_stall", "\"{}\"", ev.fetch_stall.name());
    }
    if ev.fetched_branches != 0 {
        put!("fetched_branches", "{}", ev.fetched_branches);
    }
    if ev.fe_redirect {
        put!("fe_redirect", "true");
    }
    if ev.fe_squash != 0 {
        put!("fe_squash", "{}", ev.fe_squash);
    }
    if ev.dispatched != 0 {
        put!("dispatched", "{}", ev.dispatched);
    }
    if ev.dispatched_branches != 0 {
        put!("dispatched_branches", "{}", ev.dispatched_branches);
    }
    if ev.dispatched_imiss != 0 {
        put!("dispatched_imiss", "{}", ev.dispatched_imiss);
    }
    match ev.squash {
        Squash::None => {}
        Squash::Mispredict(x) => put!("squash", "{{\"mispredict\":{x}}}"),
        Squash::Flush(x) => put!("squash", "{{\"flush\":{x}}}"),
    }
    if ev.retired != 0 {
        put!("retired", "{}", ev.retired);
    }
    if ev.head != d.head {
        put!("head", "\"{}\"", ev.head.name());
    }
    if ev.backend_full {
        put!("backend_full", "true");
    }
    if first {
        out.push(b'{');
    }
    out.extend_from_slice(b"}\n");
}

/// The UTF-8 byte-order mark, ignored at the start of a JSONL file.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Streaming reader of the JSONL format. Memory is one line.
pub struct JsonlReader<R> {
    inner: R,
    path: String,
    params: Params,
    /// The stream's format version (from its header).
    version: u64,
    /// Physical lines read so far (the number of the last line read).
    line_no: u64,
    buf: Vec<u8>,
    failed: bool,
}

enum Line<'a> {
    End,
    /// The text and its line number.
    Text(&'a str, u64),
}

impl<R: BufRead> JsonlReader<R> {
    /// Read and check the header line.
    pub fn new(inner: R) -> Result<Self, StreamError> {
        Self::with_path(inner, NO_PATH)
    }

    /// Like [`JsonlReader::new`]; I/O errors name `path`.
    pub fn with_path(inner: R, path: &str) -> Result<Self, StreamError> {
        let mut r = Self {
            inner,
            path: path.to_string(),
            params: Params::default(),
            version: VERSION,
            line_no: 0,
            buf: Vec::with_capacity(256),
            failed: false,
        };
        let line = r.line_no + 1;
        // before the header, a line that is not text is a bad header
        let text = match r.next_line().map_err(|e| match e {
            StreamError::BadJson { line, msg } => StreamError::BadHeader { line, msg },
            e => e,
        })? {
            Line::End => {
                return Err(StreamError::BadHeader {
                    line,
                    msg: "the stream has no header line (it is empty or only comments)".into(),
                })
            }
            Line::Text(t, n) => (t, n),
        };
        (r.params, r.version) = parse_header(text.0, text.1)?;
        Ok(r)
    }

    /// The parameters from the header.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The stream's format version (from its header).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The physical line number (from 1, comments included) of the last line
    /// read: after a bundle is returned, that bundle's line.
    pub fn line(&self) -> u64 {
        self.line_no
    }

    /// The next line that is not a comment, without its line end.
    fn next_line(&mut self) -> Result<Line<'_>, StreamError> {
        loop {
            self.buf.clear();
            // the line, its `\r\n`, and on the first line a byte-order mark
            let bom = if self.line_no == 0 { BOM.len() } else { 0 };
            let n = (&mut self.inner)
                .take((MAX_LINE + 2 + bom) as u64)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| StreamError::io(&self.path, e))?;
            if n == 0 {
                return Ok(Line::End);
            }
            self.line_no += 1;
            if self.buf.last() == Some(&b'\n') {
                self.buf.pop();
            }
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
            // a UTF-8 byte-order mark before the first line (editors on
            // Windows write one) is not part of the text
            if self.line_no == 1 && self.buf.starts_with(BOM) {
                self.buf.drain(..BOM.len());
            }
            if self.buf.len() > MAX_LINE {
                return Err(StreamError::LineTooLong {
                    line: self.line_no,
                    max: MAX_LINE,
                });
            }
            let is_comment = match self.buf.iter().find(|b| !b.is_ascii_whitespace()) {
                None | Some(b'#') => true,
                Some(_) => false,
            };
            if !is_comment {
                break;
            }
            // the whole file is UTF-8 text, comments included
            if let Err(e) = std::str::from_utf8(&self.buf) {
                return Err(StreamError::BadJson {
                    line: self.line_no,
                    msg: format!("not UTF-8: {e}"),
                });
            }
        }
        let line = self.line_no;
        std::str::from_utf8(&self.buf)
            .map(|t| Line::Text(t, line))
            .map_err(|e| StreamError::BadJson {
                line,
                msg: format!("not UTF-8: {e}"),
            })
    }

    fn read_one(&mut self) -> Result<Option<CycleEvents>, StreamError> {
        let version = self.version;
        match self.next_line()? {
            Line::End => Ok(None),
            Line::Text(t, line) => {
                let ev = parse_bundle(t, line)?;
                if version < 2 {
                    older_fields(t, line, version)?;
                }
                Ok(Some(ev))
            }
        }
    }
}

impl<R: BufRead> Iterator for JsonlReader<R> {
    type Item = Result<CycleEvents, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.read_one() {
            Ok(Some(ev)) => Some(Ok(ev)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// The members of the JSON object `text`, in order and with every repeat of a
/// key, each value as the text it was written as: so that a message can name a
/// repeated key, and quote a number as written (`Value` keeps the last of two
/// equal keys, reads an integer above `u64::MAX` as a float, and refuses
/// `1e400` without naming its field).
fn members(text: &str) -> Result<Vec<(String, &RawValue)>, serde_json::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<(String, &'de RawValue)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            // a key is quoted in messages: escaped, so that no control
            // character reaches a terminal (a field's name needs no escape)
            while let Some((k, v)) = m.next_entry::<String, &RawValue>()? {
                out.push((crate::bundle::printable(&k), v));
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let out = de.deserialize_map(V)?;
    de.end()?;
    Ok(out)
}

/// What kind of JSON value `raw` is, from its first character.
fn kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// `raw` read as a `T`. The message is serde's without a position (it would
/// count within the value), except for a number that is not a `T`, which is
/// quoted as written: `expected {number}, found `18446744073709551616``.
fn value<T: DeserializeOwned>(raw: &RawValue, number: &str) -> Result<T, String> {
    serde_json::from_str(raw.get()).map_err(|e| {
        if kind(raw) == "a number" {
            format!("expected {number}, found {}", quoted(raw))
        } else {
            bare_msg(&e)
        }
    })
}

/// `raw` read as a `T` that is a number or a boolean: any other value is
/// quoted as written, in one wording (`expected an integer 0..=255, found "3"`).
fn scalar<T: DeserializeOwned>(raw: &RawValue, expected: &str) -> Result<T, String> {
    serde_json::from_str(raw.get())
        .map_err(|_| format!("expected {expected}, found {}", quoted(raw)))
}

/// A value as written, escaped, and cut after 40 characters.
fn quoted(raw: &RawValue) -> String {
    format!("`{}`", shown(raw))
}

/// A value as written, escaped, and cut after 40 characters (`...` then),
/// so that a message never repeats a long line.
fn shown(raw: &RawValue) -> String {
    let t = crate::bundle::printable(raw.get());
    match t.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t,
    }
}

/// A bundle line of a version-`version` stream (before 2) that names a field
/// of a later version is refused, naming the field.
fn older_fields(text: &str, line: u64, version: u64) -> Result<(), StreamError> {
    // the line parsed as a bundle, so it is an object with known keys
    let m = members(text).map_err(|e| StreamError::BadJson {
        line,
        msg: serde_msg(&e),
    })?;
    match m.iter().find(|(k, _)| V2_FIELDS.contains(&k.as_str())) {
        Some((k, _)) => Err(StreamError::BadField {
            line,
            field: k.clone(),
            msg: format!(
                "a field of format version 2, in a stream whose header says version {version}"
            ),
        }),
        None => Ok(()),
    }
}

/// The parameters and the format version of a header line.
fn parse_header(text: &str, line: u64) -> Result<(Params, u64), StreamError> {
    let bad = |msg: String| StreamError::BadHeader { line, msg };
    let expect = format!(
        "the first line must be {{\"format\":\"{FORMAT_NAME}\",\"version\":{VERSION},\"params\":{{...}}}}"
    );
    let first = first_byte(text);
    let top = members(text).map_err(|e| match first {
        Some(b'{') | None => bad(format!("{}; {expect}", serde_msg(&e))),
        _ => bad(format!("expected an object; {expect}")),
    })?;
    if let Some(k) = first_repeat(&top) {
        return Err(bad(format!(
            "duplicate key `{k}` (every key may occur once)"
        )));
    }
    let get = |name: &str| top.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
    match get("format") {
        Some(v) if value::<String>(v, "a string").as_deref() == Ok(FORMAT_NAME) => {}
        Some(v) => {
            return Err(bad(format!(
                "`format` is {}, expected \"{FORMAT_NAME}\"",
                shown(v)
            )))
        }
        None => return Err(bad(format!("no `format` field; {expect}"))),
    }
    let version = match get("version").map(|v| (v, serde_json::from_str::<u64>(v.get()))) {
        Some((_, Ok(v @ 1..=VERSION))) => v,
        Some((_, Ok(found))) => {
            return Err(StreamError::UnsupportedVersion {
                at: super::Location::Line(line),
                format: Format::Jsonl,
                found,
                supported: VERSION,
            })
        }
        Some((v, Err(_))) => {
            return Err(bad(format!(
                "`version` is {}, expected an integer 1..={VERSION}",
                shown(v)
            )))
        }
        None => return Err(bad("no `version` field".into())),
    };
    if let Some((k, _)) = top
        .iter()
        .find(|(k, _)| !["format", "version", "params"].contains(&k.as_str()))
    {
        return Err(StreamError::UnknownField {
            line,
            field: k.clone(),
        });
    }
    let pm = match get("params") {
        Some(v) if kind(v) == "an object" => v,
        Some(v) => return Err(bad(format!("`params` is {}, expected an object", kind(v)))),
        None => return Err(bad("no `params` field".into())),
    };
    let fields = members(pm.get()).map_err(|e| bad(bare_msg(&e)))?;
    if let Some(k) = first_repeat(&fields) {
        return Err(bad(format!(
            "duplicate key `params.{k}` (every key may occur once)"
        )));
    }
    for (k, v) in &fields {
        if !PARAM_FIELDS.contains(&k.as_str()) {
            return Err(StreamError::UnknownField {
                line,
                field: format!("params.{k}"),
            });
        }
        let r = if k == "variant" {
            value::<crate::Variant>(v, "a string").map(drop)
        } else {
            // (the legal range: a value outside it that is a `u32` is
            // refused by `validate` below, in the same words)
            let legal = Params::legal(k).unwrap_or("0..=4294967295");
            let expected = if legal.starts_with(|c: char| c.is_ascii_digit()) {
                format!("an integer {legal}")
            } else {
                legal.to_string()
            };
            scalar::<u32>(v, &expected).map(drop)
        };
        if let Err(msg) = r {
            return Err(StreamError::BadField {
                line,
                field: format!("params.{k}"),
                msg,
            });
        }
    }
    let params: Params = serde_json::from_str(pm.get()).map_err(|e| StreamError::BadField {
        line,
        field: "params".into(),
        msg: bare_msg(&e),
    })?;
    params.validate().map_err(|e| StreamError::HeaderParams {
        at: Location::Line(line),
        source: e,
    })?;
    Ok((params, version))
}

/// The first key of `m` that occurs a second time.
fn first_repeat<'a>(m: &'a [(String, &RawValue)]) -> Option<&'a str> {
    m.iter()
        .enumerate()
        .find(|(i, (k, _))| m[..*i].iter().any(|(j, _)| j == k))
        .map(|(_, (k, _))| k.as_str())
}

/// Parse one bundle line. serde is the definition of the language; when it fails,
/// the line is examined field by field to name the field at fault.
pub(crate) fn parse_bundle(text: &str, line: u64) -> Result<CycleEvents, StreamError> {
    // Only an object is a bundle: serde would also take a struct from an array
    // (`[false,"l1i",3]`). The first byte decides, so the common path stays one parse.
    let first = first_byte(text);
    let serde_err = match first {
        Some(b'{') => match serde_json::from_str::<CycleEvents>(text) {
            Ok(ev) => return Ok(ev),
            Err(e) => Some(e),
        },
        _ => None,
    };
    let m = members(text).map_err(|e| StreamError::BadJson {
        line,
        msg: match first {
            Some(b'{') | None => serde_msg(&e),
            _ => match serde_json::from_str::<&RawValue>(text) {
                Ok(v) => format!("expected an object, found {}", kind(v)),
                Err(e) => serde_msg(&e),
            },
        },
    })?;
    for (i, (k, v)) in m.iter().enumerate() {
        const BYTE: &str = "an integer 0..=255";
        let r = match k.as_str() {
            "count_enable" | "fe_redirect" | "backend_full" => {
                scalar::<bool>(v, "true or false").map(drop)
            }
            "fetch_stall" => value::<FetchStall>(v, "a string").map(drop),
            "head" => value::<HeadCause>(v, "a string").map(drop),
            "squash" => {
                let mut de = serde_json::Deserializer::from_str(v.get());
                crate::bundle::strict_squash(&mut de)
                    .map(drop)
                    .map_err(|e| bare_msg(&e))
            }
            k if BUNDLE_FIELDS.contains(&k) => scalar::<u8>(v, BYTE).map(drop),
            _ => {
                return Err(StreamError::UnknownField {
                    line,
                    field: k.clone(),
                })
            }
        };
        let r = match m[..i].iter().any(|(j, _)| j == k) {
            true => Err("duplicate key (every key may occur once)".into()),
            false => r,
        };
        if let Err(msg) = r {
            return Err(StreamError::BadField {
                line,
                field: k.clone(),
                msg,
            });
        }
    }
    // Every field is fine on its own: something serde alone sees.
    Err(StreamError::BadJson {
        line,
        msg: serde_err.map_or_else(|| "expected an object".into(), |e| serde_msg(&e)),
    })
}

/// The first byte of `text` that is not JSON whitespace.
fn first_byte(text: &str) -> Option<u8> {
    text.bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// serde's message without its position.
fn bare_msg(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    match full.strip_suffix(&at) {
        Some(msg) if e.line() != 0 => msg.to_string(),
        _ => full,
    }
}

/// serde's message with its position given as a column of the stream's line:
/// serde counts lines within the text it was given, which is one line of the
/// file, so its `at line 1 column N` would contradict the file's line number.
fn serde_msg(e: &serde_json::Error) -> String {
    match e.line() {
        0 => e.to_string(),
        _ => format!("{} at column {}", bare_msg(e), e.column()),
    }
}
