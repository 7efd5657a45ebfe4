//! Streaming record reader: xz, gz or plain by file suffix (or, without one of
//! those, by the file's first bytes), decompressed in
//! fixed-size chunks (never the whole file in memory).

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

use super::record::{RawRecord, RECORD_BYTES};
use super::{Problem, TraceError};

/// Records per refill of the decompressed buffer (64 KiB).
const CHUNK_RECORDS: usize = 1024;
const CHUNK_BYTES: usize = CHUNK_RECORDS * RECORD_BYTES;

/// Container format of a trace file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.xz` (multi-stream xz, as the DPC/CRC traces are).
    Xz,
    /// `.gz` (multi-member gzip).
    Gz,
    /// Anything else: raw records.
    Plain,
}

impl Format {
    /// The format a file name asks for (suffix `.xz`, `.gz`, else plain).
    pub fn from_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("xz") => Format::Xz,
            Some(e) if e.eq_ignore_ascii_case("gz") => Format::Gz,
            _ => Format::Plain,
        }
    }

    /// The format the first bytes of a file show: xz (its 6-byte magic), gzip
    /// (its magic and the deflate method, 3 bytes), else plain. A raw trace
    /// starts with an instruction pointer, which matches neither in practice.
    pub fn sniff(head: &[u8]) -> Format {
        if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Format::Xz
        } else if head.starts_with(&[0x1f, 0x8b, 0x08]) {
            Format::Gz
        } else {
            Format::Plain
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Xz => "xz",
            Format::Gz => "gzip",
            Format::Plain => "plain",
        }
    }
}

/// Reads 64-byte records one at a time from a (decompressed) byte stream.
pub struct RecordReader {
    inner: Box<dyn Read + Send>,
    format: Format,
    path: String,
    buf: Box<[u8]>,
    /// Valid bytes are `buf[pos..len]`.
    pos: usize,
    len: usize,
    eof: bool,
    /// Index (from 0, counted from the start of the file) of the next record.
    record: u64,
}

impl RecordReader {
    /// Open `path`, choosing the decompressor from its suffix; a file whose
    /// suffix is neither `.xz` nor `.gz` but whose content starts with the xz
    /// or gzip magic (a trace renamed, or named `.xz` alone) is decompressed
    /// all the same ([`Format::sniff`]).
    pub fn open(path: &Path) -> Result<RecordReader, TraceError> {
        let label = path.display().to_string();
        let open_error = |e: std::io::Error| TraceError::Open {
            path: label.clone(),
            what: e.to_string(),
        };
        let mut file = File::open(path).map_err(open_error)?;
        let mut format = Format::from_path(path);
        let mut head = Vec::with_capacity(6);
        if format == Format::Plain {
            (&mut file)
                .take(6)
                .read_to_end(&mut head)
                .map_err(open_error)?;
            format = Format::sniff(&head);
        }
        let raw: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(head).chain(file));
        Ok(RecordReader::from_reader(raw, format, label))
    }

    /// Read records from a byte stream in `format` (decompressed here as it is
    /// read); `path` only labels errors.
    pub fn from_reader(raw: Box<dyn Read + Send>, format: Format, path: String) -> RecordReader {
        let inner: Box<dyn Read + Send> = match format {
            Format::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(raw)),
            Format::Gz => Box::new(flate2::read::MultiGzDecoder::new(raw)),
            Format::Plain => raw,
        };
        RecordReader {
            inner,
            format,
            path,
            buf: vec![0u8; CHUNK_BYTES].into_boxed_slice(),
            pos: 0,
            len: 0,
            eof: false,
            record: 0,
        }
    }

    /// The label used in errors (the file path).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Index of the next record to be returned (records consumed so far,
    /// including skipped ones).
    pub fn position(&self) -> u64 {
        self.record
    }

    fn error(&self, problem: Problem) -> TraceError {
        TraceError::Record {
            path: self.path.clone(),
            record: self.record,
            problem,
        }
    }

    /// Refill until at least one whole record is buffered or the stream ends.
    /// Returns false at a clean end (no bytes left over).
    #[cold]
    fn refill(&mut self) -> Result<bool, TraceError> {
        // Keep the partial record, if any, at the front.
        let left = self.len - self.pos;
        self.buf.copy_within(self.pos..self.len, 0);
        self.pos = 0;
        self.len = left;
        while !self.eof && self.len < self.buf.len() {
            match self.inner.read(&mut self.buf[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.len += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let detail = e.to_string();
                    return Err(self.error(match self.format {
                        Format::Plain => Problem::Read { detail },
                        f => Problem::Corrupt {
                            format: f.name(),
                            detail,
                        },
                    }));
                }
            }
        }
        if self.len >= RECORD_BYTES {
            Ok(true)
        } else if self.len == 0 {
            Ok(false)
        } else {
            Err(self.error(Problem::ShortRecord { got: self.len }))
        }
    }

    /// The next record's bytes, or `None` at a clean end of the stream.
    #[inline]
    pub fn next_bytes(&mut self) -> Result<Option<&[u8; RECORD_BYTES]>, TraceError> {
        if self.len - self.pos < RECORD_BYTES && !self.refill()? {
            return Ok(None);
        }
        let at = self.pos;
        self.pos += RECORD_BYTES;
        self.record += 1;
        let bytes: &[u8; RECORD_BYTES] = self.buf[at..at + RECORD_BYTES]
            .try_into()
            .expect("slice of RECORD_BYTES");
        Ok(Some(bytes))
    }

    /// The next record, decoded and validated (see [`RawRecord::validate`]).
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<RawRecord>, TraceError> {
        let Some(bytes) = self.next_bytes()? else {
            return Ok(None);
        };
        let rec = RawRecord::from_bytes(bytes);
        match rec.validate() {
            Ok(_) => Ok(Some(rec)),
            Err(p) => {
                self.record -= 1;
                let e = self.error(p);
                self.record += 1;
                Err(e)
            }
        }
    }

    /// Skip `n` records without decoding them. Returns how many were skipped
    /// (fewer than `n` only when the stream ended first).
    pub fn skip(&mut self, n: u64) -> Result<u64, TraceError> {
        let mut left = n;
        while left > 0 {
            if self.len - self.pos < RECORD_BYTES && !self.refill()? {
                break;
            }
            let avail = ((self.len - self.pos) / RECORD_BYTES) as u64;
            let take = avail.min(left);
            self.pos += take as usize * RECORD_BYTES;
            self.record += take;
            left -= take;
        }
        Ok(n - left)
    }
}
