//! One 64-byte ChampSim record: decoding, validation and branch-kind inference.

use super::Problem;
use crate::isa::BranchKind;

/// Bytes per record.
pub const RECORD_BYTES: usize = 64;

/// ChampSim's stack-pointer register number.
pub const REG_SP: u8 = 6;
/// ChampSim's flags register number.
pub const REG_FLAGS: u8 = 25;
/// ChampSim's instruction-pointer register number.
pub const REG_IP: u8 = 26;

/// A record exactly as stored (`input_instr` of ChampSim's `trace_instruction.h`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RawRecord {
    pub ip: u64,
    pub is_branch: u8,
    pub branch_taken: u8,
    /// Registers written, 0 = none.
    pub dst_regs: [u8; 2],
    /// Registers read, 0 = none.
    pub src_regs: [u8; 4],
    /// Data addresses written, 0 = none.
    pub dst_mem: [u64; 2],
    /// Data addresses read, 0 = none.
    pub src_mem: [u64; 4],
}

#[inline(always)]
fn u64_at(b: &[u8; RECORD_BYTES], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

impl RawRecord {
    /// Decode the little-endian layout (offsets 0, 8, 9, 10, 12, 16, 32).
    #[inline]
    pub fn from_bytes(b: &[u8; RECORD_BYTES]) -> RawRecord {
        RawRecord {
            ip: u64_at(b, 0),
            is_branch: b[8],
            branch_taken: b[9],
            dst_regs: [b[10], b[11]],
            src_regs: [b[12], b[13], b[14], b[15]],
            dst_mem: [u64_at(b, 16), u64_at(b, 24)],
            src_mem: [u64_at(b, 32), u64_at(b, 40), u64_at(b, 48), u64_at(b, 56)],
        }
    }

    /// Encode to the on-disk layout (for tests and tools that write traces).
    pub fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.ip.to_le_bytes());
        b[8] = self.is_branch;
        b[9] = self.branch_taken;
        b[10..12].copy_from_slice(&self.dst_regs);
        b[12..16].copy_from_slice(&self.src_regs);
        for (i, m) in self.dst_mem.iter().enumerate() {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&m.to_le_bytes());
        }
        for (i, m) in self.src_mem.iter().enumerate() {
            b[32 + 8 * i..40 + 8 * i].copy_from_slice(&m.to_le_bytes());
        }
        b
    }

    /// The first non-zero source memory address (0 = none).
    #[inline]
    pub fn load_addr(&self) -> u64 {
        first_nonzero(&self.src_mem)
    }

    /// The first non-zero destination memory address (0 = none).
    #[inline]
    pub fn store_addr(&self) -> u64 {
        first_nonzero(&self.dst_mem)
    }

    /// Branch kind inferred from the registers, as ChampSim does.
    #[inline]
    pub fn kind(&self) -> Option<BranchKind> {
        infer_kind(self.dst_regs, self.src_regs)
    }

    /// Check the record for values no trace holds; returns the inferred
    /// branch kind when the record is valid.
    ///
    /// Rejected: `is_branch` or `branch_taken` other than 0/1; `ip` 0. The
    /// kind comes from the registers, as in ChampSim: a record that writes IP
    /// (register 26) is a branch whatever its `is_branch` says, one that does
    /// not is none, and its `branch_taken` is ignored (ChampSim's Pin tracer
    /// flags `is_branch` only where Pin's `INS_IsBranch` holds, not on calls
    /// and returns, and real traces set `branch_taken` on some non-branches;
    /// `TraceStats` counts each disagreement).
    #[inline]
    pub fn validate(&self) -> Result<Option<BranchKind>, Problem> {
        if self.is_branch > 1 {
            return Err(Problem::BadIsBranch(self.is_branch));
        }
        if self.branch_taken > 1 {
            return Err(Problem::BadTaken(self.branch_taken));
        }
        if self.ip == 0 {
            return Err(Problem::ZeroIp);
        }
        Ok(self.kind())
    }
}

#[inline(always)]
fn first_nonzero<const N: usize>(a: &[u64; N]) -> u64 {
    a.iter().copied().find(|&x| x != 0).unwrap_or(0)
}

/// ChampSim's branch-kind inference (`ooo_model_instr` constructor in
/// `inc/instruction.h`), tried in this order; register 0 means "no register":
///
/// | kind | reads SP | reads flags | reads IP | reads other | writes SP | writes IP |
/// |---|---|---|---|---|---|---|
/// | direct jump   | no  | no  | any | no  | any | yes |
/// | indirect jump | no  | no  | no  | yes | any | yes |
/// | conditional   | no  | flags or other | yes | (flags or other) | no | yes |
/// | direct call   | yes | no  | yes | no  | yes | yes |
/// | indirect call | yes | no  | yes | yes | yes | yes |
/// | return        | yes | any | no  | any | yes | yes |
/// | other         | anything else that writes IP |
///
/// `None` when the record does not write IP.
#[inline]
pub fn infer_kind(dst: [u8; 2], src: [u8; 4]) -> Option<BranchKind> {
    let writes_ip = dst[0] == REG_IP || dst[1] == REG_IP;
    if !writes_ip {
        return None;
    }
    let writes_sp = dst[0] == REG_SP || dst[1] == REG_SP;
    let (mut reads_sp, mut reads_flags, mut reads_ip, mut reads_other) =
        (false, false, false, false);
    for &r in &src {
        match r {
            0 => {}
            REG_SP => reads_sp = true,
            REG_FLAGS => reads_flags = true,
            REG_IP => reads_ip = true,
            _ => reads_other = true,
        }
    }
    use BranchKind::*;
    Some(if !reads_sp && !reads_flags && !reads_other {
        DirectJump
    } else if !reads_sp && !reads_ip && !reads_flags && reads_other {
        IndirectJump
    } else if !reads_sp && reads_ip && !writes_sp && (reads_flags || reads_other) {
        Conditional
    } else if reads_sp && reads_ip && writes_sp && !reads_flags && !reads_other {
        DirectCall
    } else if reads_sp && reads_ip && writes_sp && !reads_flags && reads_other {
        IndirectCall
    } else if reads_sp && !reads_ip && writes_sp {
        Return
    } else {
        Other
    })
}

/// Whether a branch of this kind keeps the recorded taken bit (ChampSim forces
/// every other kind taken).
#[inline]
pub fn keeps_taken_bit(kind: BranchKind) -> bool {
    matches!(kind, BranchKind::Conditional | BranchKind::Other)
}
