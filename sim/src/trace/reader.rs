//! Streaming record reader: xz, gz or plain by the file's first bytes (else
//! by its suffix), decompressed in
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
    /// (its magic, the deflate method and a flag byte with its reserved bits
    /// clear: 4 bytes), else plain. A raw trace starts with an instruction
    /// pointer, which matches neither in practice (a gzip-like one, ending in
    /// `...088b1f`, also needs a byte 3 below 0x20).
    pub fn sniff(head: &[u8]) -> Format {
        if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Format::Xz
        } else if head.starts_with(&[0x1f, 0x8b, 0x08])
            && head.get(3).is_some_and(|f| f & 0xe0 == 0)
        {
            Format::Gz
        } else {
            Format::Plain
        }
    }

    /// A compression this reader does not decode, recognised by its magic:
    /// named when a file read as raw records fails on its first record.
    pub fn unsupported(head: &[u8]) -> Option<&'static str> {
        match head {
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Some("bzip2"),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some("zstd"),
            [0x04, 0x22, 0x4d, 0x18, ..] => Some("lz4"),
            [0x50, 0x4b, 0x03, 0x04, ..] => Some("zip"),
            // LZMA-alone (`.lzma`, `xz --format=lzma`): no magic, but the
            // properties byte of every preset (lc 3, lp 0, pb 2) and a
            // dictionary size of at least 64 KiB (its two low bytes zero)
            [0x5d, 0x00, 0x00, ..] => Some("lzma"),
            _ => None,
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
    /// A read error met after whole records were buffered: reported when those
    /// are consumed, so that it names the record the decoder broke in.
    pending: Option<Problem>,
    /// Read as raw records, the file starts with the magic of this compression.
    unsupported: Option<&'static str>,
    /// Index (from 0, counted from the start of the file) of the next record.
    record: u64,
    /// Where each xz block ends in the decompressed stream ([`block_ends`]);
    /// empty when unknown (gzip, raw, or an xz file whose end is not
    /// well-formed).
    ///
    /// [`block_ends`]: super::xzindex::block_ends
    block_ends: Vec<u64>,
}

/// How far [`RecordReader::verify`] decodes on past the last record read
/// to reach the end of its block (or, without block ends, of the file).
pub const VERIFY_LIMIT_BYTES: u64 = 64 << 20;

/// What [`RecordReader::verify`] found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verified {
    /// The records read are covered by checks that were verified (or the
    /// file is raw, which has none).
    Yes,
    /// The check that covers the last record read lies further on than
    /// the run decoded to reach it: this many decompressed bytes (the
    /// limit, rounded up to whole records).
    Beyond(u64),
}

impl RecordReader {
    /// Open `path`, choosing the decompressor from its content: the xz or
    /// gzip magic ([`Format::sniff`]) wins over the suffix, so a trace renamed,
    /// or named `.xz` when it is gzip, is read all the same; the magic of a
    /// compression not decoded ([`Format::unsupported`]) is read as raw
    /// records, whose first failure names it; other content is read as the
    /// suffix says (`.xz`, `.gz`; the decoder then says the format is not
    /// recognised), else as raw records.
    pub fn open(path: &Path) -> Result<RecordReader, TraceError> {
        let label = path.display().to_string();
        let open_error = |e: std::io::Error| TraceError::Open {
            path: label.clone(),
            what: e.to_string(),
        };
        let mut file = File::open(path).map_err(open_error)?;
        let mut head = Vec::with_capacity(6);
        (&mut file)
            .take(6)
            .read_to_end(&mut head)
            .map_err(open_error)?;
        // A compression not decoded (its magic is none the sniff knows) is
        // read as raw records whatever the suffix says: a bzip2 file named
        // `.xz` is not handed to the xz decoder.
        let unsupported = Format::unsupported(&head);
        let sniffed = Format::sniff(&head);
        let empty = head.is_empty();
        let format = match sniffed {
            // (an empty file holds no records, whatever its name)
            Format::Plain if unsupported.is_none() && !empty => Format::from_path(path),
            f => f,
        };
        // (a pipe cannot seek: its blocks' ends stay unknown, and a run
        // verifies up to the end of the file, as for a file of one block)
        let seekable = file.metadata().is_ok_and(|m| m.is_file());
        let block_ends = if format == Format::Xz && seekable {
            use std::io::{Seek, SeekFrom};
            let ends = super::xzindex::block_ends(&mut file);
            file.seek(SeekFrom::Start(head.len() as u64))
                .map_err(open_error)?;
            ends.unwrap_or_default()
        } else {
            Vec::new()
        };
        let raw: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(head).chain(file));
        let mut r = RecordReader::from_reader(raw, format, label);
        r.unsupported = unsupported;
        r.block_ends = block_ends;
        if format != sniffed {
            // named `.xz` or `.gz` without that magic: said so at record 0,
            // not as the decoder would say it ("premature eof" for a short
            // file, "format not recognized" for a longer one)
            let suffix = if format == Format::Xz { "xz" } else { "gz" };
            r.pending = Some(Problem::NotCompressed {
                format: format.name(),
                suffix,
            });
            r.eof = true;
        }
        Ok(r)
    }

    /// Read records from a byte stream in `format` (decompressed here as it is
    /// read); `path` only labels errors.
    pub fn from_reader(raw: Box<dyn Read + Send>, format: Format, path: String) -> RecordReader {
        let inner: Box<dyn Read + Send> = match format {
            Format::Xz => Box::new(XzRead::new(raw)),
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
            pending: None,
            unsupported: None,
            record: 0,
            block_ends: Vec::new(),
        }
    }

    /// Decode on past the end of the xz block (gzip member, for gzip: the
    /// file) that holds the last record read, so that its integrity check
    /// is verified: a corrupt block decodes to garbage before its check
    /// fails, and records read from it would otherwise go into a result
    /// unverified. A failed check is the error of the record the reader
    /// stopped at. Decodes at most [`VERIFY_LIMIT_BYTES`] further; beyond
    /// that (`limit`, [`VERIFY_LIMIT_BYTES`] in a run), says how far the
    /// check lies. Raw records have no check.
    pub fn verify(&mut self, limit: u64) -> Result<Verified, TraceError> {
        if self.format == Format::Plain {
            return Ok(Verified::Yes);
        }
        let at = self.record * RECORD_BYTES as u64;
        // past the end of the block holding byte `at - 1`: the first byte of
        // the next block, or the end of the file
        let target = match self.block_ends.iter().find(|&&e| e >= at) {
            Some(&e) if self.block_ends.last() != Some(&e) => Some(e + 1),
            _ => None, // the last block, or unknown: the end of the file
        };
        let mut drained = 0u64;
        loop {
            let here = self.record * RECORD_BYTES as u64;
            if target.is_some_and(|t| here >= t) {
                return Ok(Verified::Yes);
            }
            if drained >= limit {
                return Ok(Verified::Beyond(drained));
            }
            let want = target
                .map_or(u64::MAX, |t| t - here)
                .min(limit - drained)
                .div_ceil(RECORD_BYTES as u64)
                .min(CHUNK_RECORDS as u64);
            let got = match self.skip(want) {
                Ok(got) => got,
                // a file that ends inside a record (which a run that stops
                // before it never reads) ends cleanly here: a decoder's
                // error is always reported before it
                Err(TraceError::Record {
                    problem: Problem::ShortRecord { .. },
                    ..
                }) => return Ok(Verified::Yes),
                Err(e) => return Err(e),
            };
            drained += got * RECORD_BYTES as u64;
            if got < want {
                // a clean end of the file: every check was read
                return Ok(Verified::Yes);
            }
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

    /// `p`, met at record `record`; on the first record of a file that
    /// starts with the magic of a compression not decoded, that instead.
    fn on_first(&self, record: u64, p: Problem) -> Problem {
        match self.unsupported {
            Some(format) if record == 0 => Problem::Unsupported { format },
            _ => p,
        }
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
                    self.pending = Some(match self.format {
                        Format::Plain => Problem::Read { detail },
                        f => Problem::Corrupt {
                            format: f.name(),
                            detail,
                        },
                    });
                    self.eof = true;
                }
            }
        }
        // the whole records decoded before a read error are delivered first
        if self.len < RECORD_BYTES {
            if let Some(p) = self.pending.take() {
                return Err(self.error(p));
            }
        }
        if self.len >= RECORD_BYTES {
            Ok(true)
        } else if self.len == 0 {
            Ok(false)
        } else {
            let p = self.on_first(self.record, Problem::ShortRecord { got: self.len });
            Err(self.error(p))
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
                // The decoder hands out what it decoded before it found an
                // error, and a corrupt block decodes to garbage before its
                // check fails: a bad record there is the corruption's doing.
                let p = self.pending.take().unwrap_or(p);
                let p = self.on_first(self.record - 1, p);
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

/// An xz decoder (concatenated streams, as `xz` writes and reads them) that
/// hands out the bytes it decoded before an error, then the error: liblzma
/// returns both from one call, and `xz2::read::XzDecoder` drops the bytes, so
/// an error would name a record up to a read buffer early.
struct XzRead {
    inner: std::io::BufReader<Box<dyn Read + Send>>,
    stream: xz2::stream::Stream,
    /// The error of the call that also returned bytes.
    err: Option<std::io::Error>,
    ended: bool,
}

impl XzRead {
    fn new(raw: Box<dyn Read + Send>) -> XzRead {
        // no memory limit: the decoder's dictionary is what the file's writer chose
        let stream = xz2::stream::Stream::new_stream_decoder(u64::MAX, xz2::stream::CONCATENATED);
        XzRead {
            inner: std::io::BufReader::with_capacity(CHUNK_BYTES, raw),
            stream: stream.expect("liblzma initialises a stream decoder"),
            err: None,
            ended: false,
        }
    }
}

impl Read for XzRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::{BufRead, Error};
        use xz2::stream::{Action, Status};
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        loop {
            let input = self.inner.fill_buf()?;
            let eof = input.is_empty();
            let (in0, out0) = (self.stream.total_in(), self.stream.total_out());
            let action = if eof { Action::Finish } else { Action::Run };
            let ret = self.stream.process(input, buf, action);
            let read = (self.stream.total_out() - out0) as usize;
            let consumed = (self.stream.total_in() - in0) as usize;
            self.inner.consume(consumed);
            let problem = match ret {
                Ok(Status::StreamEnd) => {
                    self.ended = true;
                    return Ok(read);
                }
                Ok(_) if read > 0 => return Ok(read),
                Ok(_) if eof => Error::new(ErrorKind::UnexpectedEof, "premature eof"),
                Ok(_) if consumed == 0 => Error::new(ErrorKind::InvalidData, "corrupt xz stream"),
                Ok(_) => continue,
                Err(e) => Error::new(ErrorKind::InvalidData, e),
            };
            if read == 0 {
                return Err(problem);
            }
            self.err = Some(problem);
            return Ok(read);
        }
    }
}
