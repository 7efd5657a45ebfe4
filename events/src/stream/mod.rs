//! Stream formats for files of [`CycleEvents`]: JSON Lines (for people) and a compact
//! binary format (for machines). Both carry the unit [`Params`] in a header.
//! The full specification, written for producers in other languages, is
//! `docs/event-stream.md`.
//!
//! - [`JsonlWriter`] / [`JsonlReader`]: a header line
//!   `{"format":"cpistack-events","version":2,"params":{...}}`, then one bundle a line.
//! - [`BinWriter`] / [`BinReader`]: a 48-byte header (magic, version, header length,
//!   record size, parameters), then one [`RECORD_SIZE`]-byte little-endian record a cycle.
//!   [`BinReader::read_batch`] and [`decode_records`] are the fast paths.
//! - [`open`] / [`create`]: pick the format by content or suffix.
//!
//! Readers stream (constant memory however long the file), report every problem as a
//! [`StreamError`] naming the line (JSONL, 1-based) or byte offset (binary) and the
//! field, and never panic. After a reader has yielded an error it yields nothing more.

mod bin;
mod jsonl;
#[cfg(test)]
mod tests;

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use thiserror::Error;

use crate::{CycleEvents, ParamError, Params};

pub use bin::{
    decode_bin, decode_records, decode_records_of, encode_record, parse_header,
    parse_header_version, BinReader, BinWriter, HEADER_LEN, MAGIC, MIN_VERSION as BIN_MIN_VERSION,
    RECORD_SIZE, VERSION as BIN_VERSION,
};
pub use jsonl::{
    bundle_json, JsonlReader, JsonlWriter, FORMAT_NAME, MAX_LINE, VERSION as JSONL_VERSION,
};

/// One of the two stream formats.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// JSON Lines (`.jsonl`).
    Jsonl,
    /// The compact binary format (`.bin`).
    Bin,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Bin => "bin",
        }
    }

    /// The format a file name's suffix names: `.jsonl` / `.json` or `.bin`, in
    /// any case (`.JSONL`).
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "jsonl" | "json" => Some(Format::Jsonl),
            "bin" => Some(Format::Bin),
            _ => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "jsonl" => Ok(Format::Jsonl),
            "bin" => Ok(Format::Bin),
            _ => Err(format!(
                "unknown stream format `{s}` (expected `jsonl` or `bin`)"
            )),
        }
    }
}

/// Where in a stream an error was found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// JSONL: a physical line, counting from 1 (comment and blank lines included).
    Line(u64),
    /// Binary: a byte offset from the start of the file.
    Offset(u64),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(n) => write!(f, "line {n}"),
            Location::Offset(n) => write!(f, "byte offset {n}"),
        }
    }
}

/// Everything that can go wrong reading or writing a stream.
#[derive(Debug, Error)]
pub enum StreamError {
    /// The operating system failed a read or write (`path` is `<stream>` when unknown).
    #[error("I/O error on {path}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    /// The binary magic bytes are wrong (this is not a binary event stream).
    #[error(
        "byte offset 0: bad magic {found:02x?}, expected {:02x?} (not a binary event stream)",
        MAGIC
    )]
    BadMagic { found: Vec<u8> },
    /// The JSONL header line is missing or is not a header.
    #[error("line {line}: bad header: {msg}")]
    BadHeader { line: u64, msg: String },
    /// A format version this reader does not know.
    #[error("{at}: {format} stream format version {found} is not supported (this reader reads versions 1 to {supported})")]
    UnsupportedVersion {
        /// The header line (JSONL) or the version field's byte (binary).
        at: Location,
        format: Format,
        found: u64,
        supported: u64,
    },
    /// The file ends inside the header.
    #[error("truncated header: the stream ends after {got} bytes, the header needs {need}")]
    TruncatedHeader { got: u64, need: u64 },
    /// The binary file ends inside a record: its length is not a whole number of records.
    #[error("truncated record at byte offset {offset} (record {index}): the stream ends after {got} of its {size} bytes")]
    TruncatedRecord {
        offset: u64,
        index: u64,
        got: u64,
        size: u64,
    },
    /// A field holds a value its encoding does not allow (binary enums, flags, reserved bytes).
    #[error("{at}: field `{field}` = {value} is out of range (legal: {legal})")]
    OutOfRange {
        at: Location,
        field: &'static str,
        value: u64,
        legal: &'static str,
    },
    /// A JSONL line that is not valid JSON, not an object, or not UTF-8.
    #[error("line {line}: bad JSON: {msg}")]
    BadJson { line: u64, msg: String },
    /// A JSONL field whose value has the wrong type or range.
    #[error("line {line}: field `{field}`: {msg}")]
    BadField {
        line: u64,
        field: String,
        msg: String,
    },
    /// A JSONL object with a field the format does not define.
    #[error("line {line}: unknown field `{field}`")]
    UnknownField { line: u64, field: String },
    /// A JSONL line longer than [`MAX_LINE`] bytes.
    #[error("line {line}: longer than {max} bytes")]
    LineTooLong { line: u64, max: usize },
    /// The header's parameters fail [`Params::validate`]. Which one, and why, is the
    /// error's [`source`](std::error::Error::source) (like the OS error of `Io`), so an
    /// error chain (`anyhow`'s `{:#}`) prints it once.
    #[error("{at}: header parameters are illegal")]
    HeaderParams {
        at: Location,
        #[source]
        source: ParamError,
    },
    /// [`open`] cannot tell which format a file is in.
    #[error("{path}: cannot tell the stream format: {why}")]
    UnknownFormat { path: String, why: String },
}

impl StreamError {
    pub(crate) fn io(path: &str, source: io::Error) -> Self {
        StreamError::Io {
            path: path.to_string(),
            source,
        }
    }
}

/// The name used for I/O errors when a reader or writer was not given a path.
pub(crate) const NO_PATH: &str = "<stream>";

/// A boxed stream of bundles, as [`open`] returns it.
pub type EventIter = Box<dyn Iterator<Item = Result<CycleEvents, StreamError>> + Send>;

/// Open a stream file for reading; return its parameters and its bundles.
///
/// The format is taken from the content when it is recognisable (the binary magic's
/// first byte `0x89`; `{`, `#`, whitespace or a UTF-8 byte-order mark for JSONL), else from the suffix
/// (`.jsonl`/`.json`, `.bin`); otherwise [`StreamError::UnknownFormat`].
pub fn open(path: impl AsRef<Path>) -> Result<(Params, EventIter), StreamError> {
    Ok(match open_reader(path.as_ref())? {
        Reader::Jsonl(r) => (*r.params(), Box::new(r)),
        Reader::Bin(r) => (*r.params(), Box::new(r)),
    })
}

/// Where the bundle of index `index` (from 0) is in the stream file at `path`:
/// its JSONL line or the byte offset of its binary record; `None` when the
/// stream holds fewer bundles, or when `path` is not a regular file (a pipe
/// cannot be read twice). For messages that point into a file already read,
/// such as a protocol violation's. JSONL: the file is read again up to that
/// bundle, and a read error before it is returned as the reader returns it.
/// Binary: only the header and the file's length are read (the records
/// before it are not decoded again).
pub fn locate(path: impl AsRef<Path>, index: u64) -> Result<Option<Location>, StreamError> {
    // only a regular file can be read again (a named pipe's second open
    // would wait for a writer that has gone)
    let len = match std::fs::metadata(path.as_ref()) {
        Ok(m) if m.is_file() => m.len(),
        _ => return Ok(None),
    };
    match open_reader(path.as_ref())? {
        Reader::Jsonl(mut r) => {
            for _ in 0..=index {
                match r.next() {
                    None => return Ok(None),
                    Some(Err(e)) => return Err(e),
                    Some(Ok(_)) => {}
                }
            }
            Ok(Some(Location::Line(r.line())))
        }
        Reader::Bin(r) => {
            let at = index
                .checked_mul(RECORD_SIZE as u64)
                .and_then(|b| b.checked_add(r.header_len()));
            Ok(at
                .filter(|&a| a.saturating_add(RECORD_SIZE as u64) <= len)
                .map(Location::Offset))
        }
    }
}

/// A reader of either format, its format told as [`open`] tells it.
enum Reader {
    Jsonl(JsonlReader<BufReader<File>>),
    Bin(BinReader<BufReader<File>>),
}

fn open_reader(path: &Path) -> Result<Reader, StreamError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| StreamError::io(&name, e))?;
    let mut rd = BufReader::with_capacity(1 << 16, file);
    let first = rd
        .fill_buf()
        .map_err(|e| StreamError::io(&name, e))?
        .first()
        .copied();
    let format = match first {
        Some(MAGIC_FIRST) => Format::Bin,
        // a byte-order mark's first byte is enough (a pipe's first read may
        // hold only it)
        Some(b'{' | b'#' | b' ' | b'\t' | b'\r' | b'\n' | 0xEF) => Format::Jsonl,
        _ => match Format::from_path(path) {
            Some(f) => f,
            None => {
                let why = match first {
                    None => "it is empty, and a stream has at least a header \
                             (a JSON Lines header line, or the binary format's 48 bytes)"
                        .to_string(),
                    Some(b) => format!(
                        "it starts with byte 0x{b:02x}, where a JSON Lines stream starts \
                         with `{{`, `#` or white space and a binary one with \
                         0x{MAGIC_FIRST:02x} (a file named `.jsonl` or `.bin` is read as \
                         that format)"
                    ),
                };
                return Err(StreamError::UnknownFormat { path: name, why });
            }
        },
    };
    Ok(match format {
        Format::Jsonl => Reader::Jsonl(JsonlReader::with_path(rd, &name)?),
        Format::Bin => Reader::Bin(BinReader::with_path(rd, &name)?),
    })
}

const MAGIC_FIRST: u8 = MAGIC[0];

/// A writer of either format, as [`create`] returns it.
pub enum StreamWriter {
    Jsonl(JsonlWriter<BufWriter<File>>),
    Bin(BinWriter<File>),
}

impl StreamWriter {
    /// Append one bundle.
    pub fn write(&mut self, ev: &CycleEvents) -> Result<(), StreamError> {
        match self {
            StreamWriter::Jsonl(w) => w.write(ev),
            StreamWriter::Bin(w) => w.write(ev),
        }
    }

    /// Write a comment (`# text`, one line per line of `text`) into a JSONL stream,
    /// e.g. provenance such as `seed 42`. The binary format has no comments: there
    /// this does nothing.
    pub fn comment(&mut self, text: &str) -> Result<(), StreamError> {
        match self {
            StreamWriter::Jsonl(w) => w.comment(text),
            StreamWriter::Bin(_) => Ok(()),
        }
    }

    /// Flush everything to the file and close it. Dropping a writer without calling
    /// `finish` may lose the last bundles.
    pub fn finish(self) -> Result<(), StreamError> {
        match self {
            StreamWriter::Jsonl(w) => w.finish().map(drop),
            StreamWriter::Bin(w) => w.finish().map(drop),
        }
    }
}

/// Create (or truncate) a stream file in the given format and write its header.
pub fn create(
    path: impl AsRef<Path>,
    format: Format,
    params: &Params,
) -> Result<StreamWriter, StreamError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::create(path).map_err(|e| StreamError::io(&name, e))?;
    Ok(match format {
        Format::Jsonl => StreamWriter::Jsonl(JsonlWriter::with_path(
            BufWriter::with_capacity(1 << 16, file),
            params,
            &name,
        )?),
        Format::Bin => StreamWriter::Bin(BinWriter::with_path(file, params, &name)?),
    })
}

/// Write a whole slice of bundles to `w` in the given format (header included).
pub fn write_all<W: Write>(
    w: W,
    format: Format,
    params: &Params,
    events: &[CycleEvents],
) -> Result<W, StreamError> {
    match format {
        Format::Jsonl => {
            let mut jw = JsonlWriter::new(w, params)?;
            for ev in events {
                jw.write(ev)?;
            }
            jw.finish()
        }
        Format::Bin => {
            let mut bw = BinWriter::new(w, params)?;
            bw.write_batch(events)?;
            bw.finish()
        }
    }
}
