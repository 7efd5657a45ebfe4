//! ChampSim trace input: a streaming reader of 64-byte records (xz, gz or
//! plain), ChampSim's branch-kind inference, conversion to [`Instr`], and a static
//! code image built as the trace streams by, from which mispredicted paths are
//! fetched. `docs/traces.md` describes the format and every decision.
//!
//! Memory: one 64 KiB decompressed chunk, the decompressor's own state, a
//! 64-entry shadow call stack and the code image, which grows with distinct code
//! addresses only. Nothing grows per instruction.
//!
//! [`Instr`]: crate::isa::Instr

mod image;
mod reader;
mod record;
mod source;
mod xzindex;

#[cfg(test)]
mod tests;

pub use image::{
    default_size, CodeImage, StaticInstr, DEFAULT_SIZE, MAX_ADDRESSES as MAX_IMAGE_ADDRESSES,
    UNSEEN_SIZE,
};
pub use reader::{Format, RecordReader, Verified, VERIFY_LIMIT_BYTES};
pub use record::{infer_kind, keeps_taken_bit, RawRecord, RECORD_BYTES, REG_FLAGS, REG_IP, REG_SP};
pub use source::{trace_name, TraceSource, MAX_INSTR_BYTES};

use crate::isa::{BranchKind, SourceError};

/// What is wrong with a record (or with the stream at that record).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("short record: the stream ends {got} bytes into it (a record is 64 bytes)")]
    ShortRecord { got: usize },
    #[error("corrupt or truncated {format} stream: {detail}")]
    Corrupt {
        format: &'static str,
        detail: String,
    },
    #[error("read error: {detail}")]
    Read { detail: String },
    #[error("the file is named `.{suffix}` but is not {format} data (it does not start with {format}'s magic bytes)")]
    NotCompressed {
        format: &'static str,
        suffix: &'static str,
    },
    #[error("the file is {format}-compressed, which cpistack does not decode (it reads raw, xz and gzip traces): decompress it first")]
    Unsupported { format: &'static str },
    #[error("is_branch is {0}, must be 0 or 1")]
    BadIsBranch(u8),
    #[error("branch_taken is {0}, must be 0 or 1")]
    BadTaken(u8),
    #[error("ip is 0")]
    ZeroIp,
}

/// A trace that cannot be read (on).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: cannot open: {what}")]
    Open { path: String, what: String },
    /// `record` counts from 0 at the start of the file (skipped records
    /// included); the record starts at decompressed byte `64 * record`.
    #[error("{path}: record {record} (byte {}): {problem}", record * 64)]
    Record {
        path: String,
        record: u64,
        problem: Problem,
    },
    #[error("{path}: {}", empty_message(*skip, *records))]
    Empty {
        path: String,
        skip: u64,
        records: u64,
    },
}

impl TraceError {
    /// The record number, for record errors.
    pub fn record(&self) -> Option<u64> {
        match self {
            TraceError::Record { record, .. } => Some(*record),
            _ => None,
        }
    }
}

impl From<TraceError> for SourceError {
    fn from(e: TraceError) -> SourceError {
        match e {
            TraceError::Record {
                path,
                record,
                problem,
            } => SourceError::Record {
                path,
                record,
                byte: record * 64,
                what: problem.to_string(),
            },
            TraceError::Open { path, what } => SourceError::Io { path, what },
            TraceError::Empty {
                path,
                skip,
                records,
            } => SourceError::Io {
                path,
                what: empty_message(skip, records),
            },
        }
    }
}

/// Committed branches by inferred kind.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct KindCounts {
    pub conditional: u64,
    pub direct_jump: u64,
    pub indirect_jump: u64,
    pub direct_call: u64,
    pub indirect_call: u64,
    #[serde(rename = "return")]
    pub ret: u64,
    pub other: u64,
}

impl KindCounts {
    #[inline]
    pub fn add(&mut self, k: BranchKind) {
        *self.get_mut(k) += 1;
    }

    #[inline]
    fn get_mut(&mut self, k: BranchKind) -> &mut u64 {
        match k {
            BranchKind::Conditional => &mut self.conditional,
            BranchKind::DirectJump => &mut self.direct_jump,
            BranchKind::IndirectJump => &mut self.indirect_jump,
            BranchKind::DirectCall => &mut self.direct_call,
            BranchKind::IndirectCall => &mut self.indirect_call,
            BranchKind::Return => &mut self.ret,
            BranchKind::Other => &mut self.other,
        }
    }

    pub fn get(&self, k: BranchKind) -> u64 {
        let mut c = *self;
        *c.get_mut(k)
    }

    pub fn total(&self) -> u64 {
        self.conditional
            + self.direct_jump
            + self.indirect_jump
            + self.direct_call
            + self.indirect_call
            + self.ret
            + self.other
    }
}

/// Why a trace gives nothing to simulate: it holds no record, or `--skip
/// SKIP` passed over all `records` it holds.
fn empty_message(skip: u64, records: u64) -> String {
    if skip == 0 {
        "the trace holds no records".to_string()
    } else {
        format!("no records left to simulate: --skip {skip}, and the trace holds {records}")
    }
}

/// Counters of a trace source.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TraceStats {
    /// Records skipped before the first instruction (`--skip`).
    pub skipped: u64,
    /// Committed instructions delivered.
    pub records: u64,
    /// Committed branches by kind.
    pub kinds: KindCounts,
    /// Unconditional branches recorded with `branch_taken = 0` (made taken).
    pub forced_taken: u64,
    /// Records that write IP with `is_branch = 0`, read as branches (the
    /// calls and returns of ChampSim's Pin tracer, which flags only what
    /// Pin calls a branch).
    pub unflagged_branches: u64,
    /// Records with `is_branch = 1` that do not write IP, read as no branch.
    pub flagged_non_branches: u64,
    /// Non-branches recorded with `branch_taken = 1` (the bit is ignored).
    pub taken_non_branches: u64,
    /// Non-taken records followed by a record at the same address (x86 `rep`
    /// iterations).
    pub repeats: u64,
    /// Non-taken records followed by a record more than 15 bytes away or
    /// backwards (the trace skips code: signals, tracer gaps).
    pub discontinuities: u64,
    /// Committed instructions delivered with an assumed size.
    pub size_defaulted: u64,
    /// Call sizes learned from the return address of a matching return.
    pub call_sizes_learned: u64,
    /// Wrong-path lookups served from the code image.
    pub wrong_path_found: u64,
    /// Wrong-path lookups at addresses the trace had not shown (plain ALU
    /// instructions were returned).
    pub wrong_path_missing: u64,
    /// Distinct code addresses in the image.
    pub image_addresses: u64,
    /// After [`TraceSource::verify`]: 0 when the integrity checks covering
    /// every record read were verified (or the file is raw); else the
    /// decompressed bytes decoded on without reaching the check
    /// ([`VERIFY_LIMIT_BYTES`], rounded up to whole records: a large
    /// single-block xz file, a gzip file).
    pub unverified_bytes: u64,
    /// Committed records whose address the image did not learn because it
    /// was full ([`MAX_IMAGE_ADDRESSES`] addresses; 0 on real programs).
    pub image_not_learned: u64,
}

/// What to tell a user whose run used records of a compressed block whose
/// check lies `bytes` further on than the run decoded
/// ([`TraceStats::unverified_bytes`]).
pub fn unverified_warning(bytes: u64) -> String {
    format!(
        "the integrity check of the compressed block holding the last records read lies more than {} MiB further on, past what a run decodes to reach it; these records were not verified (`xz -t` or `gzip -t` verifies the whole file)",
        bytes >> 20
    )
}

impl TraceStats {
    /// Fraction of wrong-path lookups served from the image (`None` before any).
    pub fn wrong_path_found_fraction(&self) -> Option<f64> {
        let looked = self.wrong_path_found + self.wrong_path_missing;
        (looked > 0).then(|| self.wrong_path_found as f64 / looked as f64)
    }
}
