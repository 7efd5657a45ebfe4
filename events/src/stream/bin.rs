//! The binary stream format: a 48-byte header, then 12-byte little-endian records.
//!
//! Header (all integers little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `89 43 50 49 45 56 0D 0A` (`\x89CPIEV\r\n`) |
//! | 8 | 2 | format version: 2 when written; 1 and 2 are read |
//! | 10 | 2 | header length in bytes, >= 48 (48 when written; readers skip extra bytes) |
//! | 12 | 2 | record size in bytes, 12 |
//! | 14 | 2 | reserved, 0 |
//! | 16 | 4 x 8 | `rob_entries`, `fmt_rows`, `local_bits`, `global_bits`, `variant` (0 fmt, 1 sfmt), `fetch_width`, `dispatch_width`, `retire_width`, each `u32` |
//!
//! Record (one per cycle, 12 bytes): bytes 0..6 are the counts and masks, stored
//! as given; bytes 6..12 the flags and enums, checked by the reader.
//!
//! | offset | field | encoding |
//! |---|---|---|
//! | 0 | `fetched_branches` | any `u8` |
//! | 1 | `fe_squash` | any `u8` |
//! | 2 | `dispatched` | any `u8` |
//! | 3 | `dispatched_branches` | any `u8` (mask) |
//! | 4 | `dispatched_imiss` | any `u8` (mask) |
//! | 5 | `retired` | any `u8` |
//! | 6 | flags | bit 0 `count_enable`, bit 1 `fe_redirect`, bit 2 `backend_full` (version 2; zero in version 1), bits 3..7 zero |
//! | 7 | `fetch_stall` | 0 none, 1 l1i, 2 l2i, 3 itlb |
//! | 8 | `head` | 0 none, 1 l1d, 2 l2d, 3 dtlb, 4 longlat, 5 other |
//! | 9 | `squash_kind` | 0 none, 1 mispredict, 2 flush |
//! | 10 | `squash_id` | `u16`; 0 when `squash_kind` is 0 |
//!
//! Counts and masks take every `u8` value, so a count above its width reaches the
//! unit, which rejects it (protocol rule 1). Enum fields, flags and reserved bits are
//! checked here.
//!
//! Version 2 added `backend_full` in a bit that version 1 reserved as zero, so
//! every version-1 stream reads as it did, with `backend_full` false; a
//! version-1 stream with the bit set is refused, as before.

use std::io::{self, Read, Write};

use super::{Location, StreamError, NO_PATH};
use crate::{CycleEvents, FetchStall, HeadCause, ParamError, Params, Squash, Variant};

/// The magic bytes that open every binary stream.
pub const MAGIC: [u8; 8] = *b"\x89CPIEV\r\n";
/// The binary format version this code writes (it reads 1 to this).
pub const VERSION: u16 = 2;
/// The oldest binary format version this code reads.
pub const MIN_VERSION: u16 = 1;
/// Length of the version-1 header.
pub const HEADER_LEN: usize = 48;
/// Size of one record.
pub const RECORD_SIZE: usize = 12;

/// Records per internal buffer (reader and writer).
const BUF_RECORDS: usize = 8192;
/// Records decoded per validation block (see [`decode_block`]).
const BLOCK: usize = 64;

const FIXED_LEN: usize = 16;

/// Offsets of the parameters in the header, in order.
const PARAM_NAMES: [&str; 8] = [
    "rob_entries",
    "fmt_rows",
    "local_bits",
    "global_bits",
    "variant",
    "fetch_width",
    "dispatch_width",
    "retire_width",
];

fn param_offset(name: &str) -> u64 {
    let i = PARAM_NAMES.iter().position(|n| *n == name).unwrap_or(0);
    (FIXED_LEN + 4 * i) as u64
}

/// Encode a header for `params`.
fn encode_header(params: &Params) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
    h[12..14].copy_from_slice(&(RECORD_SIZE as u16).to_le_bytes());
    let variant = match params.variant {
        Variant::Fmt => 0u32,
        Variant::Sfmt => 1,
    };
    let vals = [
        params.rob_entries,
        params.fmt_rows,
        params.local_bits,
        params.global_bits,
        variant,
        params.fetch_width,
        params.dispatch_width,
        params.retire_width,
    ];
    for (i, v) in vals.iter().enumerate() {
        let o = FIXED_LEN + 4 * i;
        h[o..o + 4].copy_from_slice(&v.to_le_bytes());
    }
    h
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// Check the first `got` bytes of a header that ended early: a wrong magic prefix
/// is `BadMagic`, anything else is `TruncatedHeader`.
fn short_header(b: &[u8], need: usize) -> StreamError {
    let m = b.len().min(MAGIC.len());
    if b[..m] != MAGIC[..m] {
        return StreamError::BadMagic {
            found: b[..m].to_vec(),
        };
    }
    StreamError::TruncatedHeader {
        got: b.len() as u64,
        need: need as u64,
    }
}

/// Check the fixed first 16 bytes; return the header length and the version.
fn check_fixed(b: &[u8]) -> Result<(usize, u16), StreamError> {
    if b.len() < FIXED_LEN {
        return Err(short_header(b, HEADER_LEN));
    }
    if b[..8] != MAGIC {
        return Err(StreamError::BadMagic {
            found: b[..8].to_vec(),
        });
    }
    let version = u16_at(b, 8);
    if !(MIN_VERSION..=VERSION).contains(&version) {
        return Err(StreamError::UnsupportedVersion {
            at: super::Location::Offset(8),
            format: super::Format::Bin,
            found: version.into(),
            supported: VERSION.into(),
        });
    }
    let header_len = u16_at(b, 10) as usize;
    if header_len < HEADER_LEN {
        return Err(StreamError::OutOfRange {
            at: Location::Offset(10),
            field: "header_len",
            value: header_len as u64,
            legal: ">= 48",
        });
    }
    let record_size = u16_at(b, 12);
    if record_size as usize != RECORD_SIZE {
        return Err(StreamError::OutOfRange {
            at: Location::Offset(12),
            field: "record_size",
            value: record_size.into(),
            legal: "12",
        });
    }
    let reserved = u16_at(b, 14);
    if reserved != 0 {
        return Err(StreamError::OutOfRange {
            at: Location::Offset(14),
            field: "reserved",
            value: reserved.into(),
            legal: "0",
        });
    }
    Ok((header_len, version))
}

/// The flag bits a record of `version` may use (bit 2, `backend_full`, from
/// version 2 on).
#[inline]
fn flag_bits(version: u16) -> u32 {
    if version >= 2 {
        3
    } else {
        2
    }
}

/// Decode and validate the parameters (header bytes 16..48).
fn parse_params(b: &[u8]) -> Result<Params, StreamError> {
    let v = |i: usize| u32_at(b, FIXED_LEN + 4 * i);
    let variant = match v(4) {
        0 => Variant::Fmt,
        1 => Variant::Sfmt,
        x => {
            return Err(StreamError::OutOfRange {
                at: Location::Offset(param_offset("variant")),
                field: "variant",
                value: x.into(),
                legal: "0 (fmt) or 1 (sfmt)",
            })
        }
    };
    let params = Params {
        rob_entries: v(0),
        fmt_rows: v(1),
        local_bits: v(2),
        global_bits: v(3),
        variant,
        fetch_width: v(5),
        dispatch_width: v(6),
        retire_width: v(7),
    };
    params
        .validate()
        .map_err(|e: ParamError| StreamError::HeaderParams {
            at: Location::Offset(param_offset(e.name)),
            source: e,
        })?;
    Ok(params)
}

/// Parse a binary header at the start of `bytes`; return the parameters and the
/// header length (where the first record starts). The records of a stream of
/// an older version decode with [`decode_records_of`] and the version from
/// [`parse_header_version`].
pub fn parse_header(bytes: &[u8]) -> Result<(Params, usize), StreamError> {
    parse_header_version(bytes).map(|(p, len, _)| (p, len))
}

/// [`parse_header`], and the stream's format version.
pub fn parse_header_version(bytes: &[u8]) -> Result<(Params, usize, u16), StreamError> {
    let (header_len, version) = check_fixed(bytes)?;
    if bytes.len() < header_len {
        return Err(StreamError::TruncatedHeader {
            got: bytes.len() as u64,
            need: header_len as u64,
        });
    }
    Ok((parse_params(bytes)?, header_len, version))
}

/// Encode one bundle as a record.
#[inline]
pub fn encode_record(ev: &CycleEvents) -> [u8; RECORD_SIZE] {
    let id = ev.squash.id().to_le_bytes();
    [
        ev.fetched_branches,
        ev.fe_squash,
        ev.dispatched,
        ev.dispatched_branches,
        ev.dispatched_imiss,
        ev.retired,
        ev.count_enable as u8 | (ev.fe_redirect as u8) << 1 | (ev.backend_full as u8) << 2,
        ev.fetch_stall.bits(),
        ev.head.bits(),
        ev.squash.kind_bits(),
        id[0],
        id[1],
    ]
}

/// Nonzero if the record breaks an encoding rule, for a stream whose records
/// may use the low `FLAG_BITS` bits of the flags ([`flag_bits`]; a constant,
/// so that the shift is one: a shift by a variable measured 10 % slower
/// decoding). Branch-free.
#[inline(always)]
fn record_bad<const FLAG_BITS: u32>(r: &[u8; RECORD_SIZE]) -> u32 {
    let flags = r[6] as u32;
    let fs = r[7] as u32;
    let head = r[8] as u32;
    let kind = r[9] as u32;
    let id = u16::from_le_bytes([r[10], r[11]]);
    // flags below 2^flag_bits, fetch_stall < 4, head < 6, kind < 3, no squash
    // id without a kind.
    (flags >> FLAG_BITS)
        | (fs >> 2)
        | ((head + 2) >> 3)
        | ((kind + 1) >> 2)
        | ((kind == 0) & (id != 0)) as u32
}

/// Build the bundle from a record; enum codes out of range are clamped (the caller
/// has checked them with [`record_bad`] and discards the result if they were bad).
#[inline(always)]
fn record_value(r: &[u8; RECORD_SIZE]) -> CycleEvents {
    let id = u16::from_le_bytes([r[10], r[11]]);
    CycleEvents {
        count_enable: r[6] & 1 != 0,
        fetch_stall: match r[7] & 3 {
            0 => FetchStall::None,
            1 => FetchStall::L1i,
            2 => FetchStall::L2i,
            _ => FetchStall::Itlb,
        },
        fetched_branches: r[0],
        fe_redirect: r[6] & 2 != 0,
        backend_full: r[6] & 4 != 0,
        fe_squash: r[1],
        dispatched: r[2],
        dispatched_branches: r[3],
        dispatched_imiss: r[4],
        squash: match r[9] {
            1 => Squash::Mispredict(id),
            2 => Squash::Flush(id),
            _ => Squash::None,
        },
        retired: r[5],
        head: match r[8] {
            0 => HeadCause::None,
            1 => HeadCause::L1d,
            2 => HeadCause::L2d,
            3 => HeadCause::Dtlb,
            4 => HeadCause::Longlat,
            _ => HeadCause::Other,
        },
    }
}

/// The precise error of a record known to be bad; `offset` is the record's offset.
fn record_error(r: &[u8; RECORD_SIZE], offset: u64, flag_bits: u32) -> StreamError {
    let at = |o: u64, field, value: u64, legal| StreamError::OutOfRange {
        at: Location::Offset(offset + o),
        field,
        value,
        legal,
    };
    if r[6] >> flag_bits != 0 {
        return at(
            6,
            "flags",
            r[6].into(),
            if flag_bits == 2 {
                "bit 0 count_enable, bit 1 fe_redirect, bits 2..7 zero (format version 1)"
            } else {
                "bit 0 count_enable, bit 1 fe_redirect, bit 2 backend_full, bits 3..7 zero"
            },
        );
    }
    if r[7] > 3 {
        return at(
            7,
            "fetch_stall",
            r[7].into(),
            "0..=3 (none, l1i, l2i, itlb)",
        );
    }
    if r[8] > 5 {
        return at(
            8,
            "head",
            r[8].into(),
            "0..=5 (none, l1d, l2d, dtlb, longlat, other)",
        );
    }
    if r[9] > 2 {
        return at(
            9,
            "squash_kind",
            r[9].into(),
            "0..=2 (none, mispredict, flush)",
        );
    }
    let id = u16::from_le_bytes([r[10], r[11]]);
    at(10, "squash_id", id.into(), "0 when squash_kind is 0 (none)")
}

/// Decode up to `out.len()` whole records from `bytes`, stopping at the first bad one.
/// Returns how many were decoded and, if it stopped early, the error.
fn decode_inner<const COPY: bool>(
    bytes: &[u8],
    offset: u64,
    out: &mut [CycleEvents],
    flag_bits: u32,
) -> (usize, Option<StreamError>) {
    if flag_bits == 3 {
        decode_inner_v::<COPY, 3>(bytes, offset, out)
    } else {
        decode_inner_v::<COPY, 2>(bytes, offset, out)
    }
}

/// [`decode_inner`] for records whose flags have `FLAG_BITS` bits.
fn decode_inner_v<const COPY: bool, const FLAG_BITS: u32>(
    bytes: &[u8],
    offset: u64,
    out: &mut [CycleEvents],
) -> (usize, Option<StreamError>) {
    let n = (bytes.len() / RECORD_SIZE).min(out.len());
    let recs = &bytes[..n * RECORD_SIZE];
    let out = &mut out[..n];
    let mut done = 0;
    for (rb, ob) in recs.chunks(BLOCK * RECORD_SIZE).zip(out.chunks_mut(BLOCK)) {
        // Decoding from a copy in cache: the copy loads the block's cache lines all
        // at once, where the decode loop alone, reading a large in-memory buffer,
        // waits on them one by one (measured: twice as fast).
        // `BinReader` decodes from its own buffer, which is in cache already.
        let bad = if COPY {
            let mut local = [0u8; BLOCK * RECORD_SIZE];
            let local = &mut local[..rb.len()];
            local.copy_from_slice(rb);
            decode_block::<FLAG_BITS>(local, ob)
        } else {
            decode_block::<FLAG_BITS>(rb, ob)
        };
        if bad != 0 {
            for (i, r) in rb.chunks_exact(RECORD_SIZE).enumerate() {
                let r: &[u8; RECORD_SIZE] = r.try_into().expect("chunks_exact");
                if record_bad::<FLAG_BITS>(r) != 0 {
                    let off = offset + ((done + i) * RECORD_SIZE) as u64;
                    return (done + i, Some(record_error(r, off, FLAG_BITS)));
                }
            }
        }
        done += ob.len();
    }
    (done, None)
}

/// Decode a block without branching on validity; return nonzero if any record was bad.
#[inline]
fn decode_block<const FLAG_BITS: u32>(rb: &[u8], ob: &mut [CycleEvents]) -> u32 {
    let mut bad = 0;
    for (r, o) in rb.chunks_exact(RECORD_SIZE).zip(ob.iter_mut()) {
        let r: &[u8; RECORD_SIZE] = r.try_into().expect("chunks_exact");
        bad |= record_bad::<FLAG_BITS>(r);
        *o = record_value(r);
    }
    bad
}

/// Decode `min(out.len(), bytes.len() / 12)` whole records of the current
/// format version ([`VERSION`]) from `bytes` into `out` (the records of an
/// older stream: [`decode_records_of`]).
///
/// `offset` is the byte offset of `bytes[0]` in the file (for error messages).
/// On a bad record returns its error; `out` before it holds the decoded bundles.
/// Trailing bytes that do not make a whole record are left alone (the caller
/// decides whether they are a truncation).
pub fn decode_records(
    bytes: &[u8],
    offset: u64,
    out: &mut [CycleEvents],
) -> Result<usize, StreamError> {
    decode_records_of(VERSION, bytes, offset, out)
}

/// [`decode_records`] for records of a stream of format `version` (from
/// [`parse_header_version`] or [`BinReader::version`]): a version-1 record
/// with `backend_full`'s bit set is refused, as version 1 reserved it; a
/// version this code does not read is `UnsupportedVersion` (`offset` names
/// the first record's byte, the header not being at hand).
pub fn decode_records_of(
    version: u16,
    bytes: &[u8],
    offset: u64,
    out: &mut [CycleEvents],
) -> Result<usize, StreamError> {
    if !(MIN_VERSION..=VERSION).contains(&version) {
        return Err(StreamError::UnsupportedVersion {
            at: Location::Offset(offset),
            format: super::Format::Bin,
            found: version.into(),
            supported: VERSION.into(),
        });
    }
    match decode_inner::<true>(bytes, offset, out, flag_bits(version)) {
        (n, None) => Ok(n),
        (_, Some(e)) => Err(e),
    }
}

/// Decode a whole binary stream held in memory (header and records).
pub fn decode_bin(bytes: &[u8]) -> Result<(Params, Vec<CycleEvents>), StreamError> {
    let (params, header_len, version) = parse_header_version(bytes)?;
    let recs = &bytes[header_len..];
    let n = recs.len() / RECORD_SIZE;
    let mut out = vec![CycleEvents::default(); n];
    decode_records_of(version, recs, header_len as u64, &mut out)?;
    let rest = recs.len() % RECORD_SIZE;
    if rest != 0 {
        return Err(StreamError::TruncatedRecord {
            offset: (header_len + n * RECORD_SIZE) as u64,
            index: n as u64,
            got: rest as u64,
            size: RECORD_SIZE as u64,
        });
    }
    Ok((params, out))
}

/// Read until `buf` is full or the reader is at its end; return the bytes read.
fn read_up_to<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Streaming reader of the binary format. Memory is one fixed buffer (96 KiB).
pub struct BinReader<R> {
    inner: R,
    path: String,
    params: Params,
    header_len: u64,
    /// The stream's format version.
    version: u16,
    buf: Box<[u8]>,
    /// Unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    offset: u64,
    eof: bool,
    /// An error found after a batch's good prefix, reported by the next call.
    pending: Option<StreamError>,
    /// An error has been reported: nothing more is read.
    failed: bool,
    /// Decoded bundles for the `Iterator`: `evs[ev_pos..ev_len]` not yet returned.
    evs: Vec<CycleEvents>,
    ev_pos: usize,
    ev_len: usize,
}

impl<R: Read> BinReader<R> {
    /// Read and check the header.
    pub fn new(inner: R) -> Result<Self, StreamError> {
        Self::with_path(inner, NO_PATH)
    }

    /// Like [`BinReader::new`]; I/O errors name `path`.
    pub fn with_path(mut inner: R, path: &str) -> Result<Self, StreamError> {
        let mut fixed = [0u8; FIXED_LEN];
        let got = read_up_to(&mut inner, &mut fixed).map_err(|e| StreamError::io(path, e))?;
        let (header_len, version) = check_fixed(&fixed[..got])?;
        let mut header = vec![0u8; header_len];
        header[..FIXED_LEN].copy_from_slice(&fixed);
        let got = FIXED_LEN
            + read_up_to(&mut inner, &mut header[FIXED_LEN..])
                .map_err(|e| StreamError::io(path, e))?;
        if got < header_len {
            return Err(StreamError::TruncatedHeader {
                got: got as u64,
                need: header_len as u64,
            });
        }
        let params = parse_params(&header)?;
        Ok(Self {
            inner,
            path: path.to_string(),
            params,
            header_len: header_len as u64,
            version,
            buf: vec![0u8; BUF_RECORDS * RECORD_SIZE].into_boxed_slice(),
            start: 0,
            end: 0,
            offset: header_len as u64,
            eof: false,
            pending: None,
            failed: false,
            evs: Vec::new(),
            ev_pos: 0,
            ev_len: 0,
        })
    }

    /// The parameters from the header.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The stream's format version (from its header).
    pub fn version(&self) -> u16 {
        self.version
    }

    /// The header's length in bytes: the byte offset of the first record.
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// Move the unread bytes to the front and read more, until at least `want`
    /// bytes are buffered or the reader ends.
    fn fill(&mut self, want: usize) -> Result<(), StreamError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end < want && !self.eof {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(StreamError::io(&self.path, e)),
            }
        }
        Ok(())
    }

    /// Decode up to `out.len()` bundles into `out`; `Ok(0)` at the clean end of the
    /// stream (or when `out` is empty). A bad record is reported after the good
    /// bundles before it: this call returns those, the next call the error.
    pub fn read_batch(&mut self, out: &mut [CycleEvents]) -> Result<usize, StreamError> {
        if let Some(e) = self.pending.take() {
            self.failed = true;
            return Err(e);
        }
        if self.failed || out.is_empty() {
            return Ok(0);
        }
        let want = (out.len() * RECORD_SIZE).min(self.buf.len());
        if self.end - self.start < want && !self.eof {
            self.fill(want).inspect_err(|_| self.failed = true)?;
        }
        let avail = self.end - self.start;
        if avail < RECORD_SIZE {
            if avail == 0 {
                return Ok(0);
            }
            self.failed = true;
            return Err(StreamError::TruncatedRecord {
                offset: self.offset,
                index: (self.offset - self.header_len) / RECORD_SIZE as u64,
                got: avail as u64,
                size: RECORD_SIZE as u64,
            });
        }
        let (n, err) = decode_inner::<false>(
            &self.buf[self.start..self.end],
            self.offset,
            out,
            flag_bits(self.version),
        );
        self.start += n * RECORD_SIZE;
        self.offset += (n * RECORD_SIZE) as u64;
        if let Some(e) = err {
            if n == 0 {
                self.failed = true;
                return Err(e);
            }
            self.pending = Some(e);
        }
        Ok(n)
    }
}

impl<R: Read> Iterator for BinReader<R> {
    type Item = Result<CycleEvents, StreamError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.ev_pos < self.ev_len {
            let ev = self.evs[self.ev_pos];
            self.ev_pos += 1;
            return Some(Ok(ev));
        }
        if self.evs.is_empty() {
            self.evs = vec![CycleEvents::default(); 1024];
        }
        let mut evs = std::mem::take(&mut self.evs);
        let r = self.read_batch(&mut evs);
        self.evs = evs;
        match r {
            Ok(0) => None,
            Ok(n) => {
                self.ev_len = n;
                self.ev_pos = 1;
                Some(Ok(self.evs[0]))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

/// Streaming writer of the binary format (buffers 96 KiB itself; `W` need not be buffered).
pub struct BinWriter<W: Write> {
    inner: W,
    path: String,
    buf: Vec<u8>,
}

impl<W: Write> BinWriter<W> {
    /// Write the header for `params` (which must be legal).
    pub fn new(inner: W, params: &Params) -> Result<Self, StreamError> {
        Self::with_path(inner, params, NO_PATH)
    }

    /// Like [`BinWriter::new`]; I/O errors name `path`.
    pub fn with_path(inner: W, params: &Params, path: &str) -> Result<Self, StreamError> {
        params.validate().map_err(|e| StreamError::HeaderParams {
            at: Location::Offset(param_offset(e.name)),
            source: e,
        })?;
        let mut buf = Vec::with_capacity(BUF_RECORDS * RECORD_SIZE);
        buf.extend_from_slice(&encode_header(params));
        Ok(Self {
            inner,
            path: path.to_string(),
            buf,
        })
    }

    fn flush_buf(&mut self) -> Result<(), StreamError> {
        self.inner
            .write_all(&self.buf)
            .map_err(|e| StreamError::io(&self.path, e))?;
        self.buf.clear();
        Ok(())
    }

    /// Append one bundle.
    #[inline]
    pub fn write(&mut self, ev: &CycleEvents) -> Result<(), StreamError> {
        if self.buf.len() + RECORD_SIZE > self.buf.capacity() {
            self.flush_buf()?;
        }
        self.buf.extend_from_slice(&encode_record(ev));
        Ok(())
    }

    /// Append many bundles.
    pub fn write_batch(&mut self, evs: &[CycleEvents]) -> Result<(), StreamError> {
        evs.iter().try_for_each(|ev| self.write(ev))
    }

    /// Write out everything buffered, flush, and return the inner writer.
    pub fn finish(mut self) -> Result<W, StreamError> {
        self.flush_buf()?;
        self.inner
            .flush()
            .map_err(|e| StreamError::io(&self.path, e))?;
        Ok(self.inner)
    }
}
