//! The instruction record every instruction source produces and the timing model
//! consumes, and the instruction-source interface (synthetic programs, ChampSim
//! traces).
//!
//! Owned by the core simulator; the trace reader builds the same records.

/// Kind of a control-transfer instruction (ChampSim's classification).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BranchKind {
    Conditional,
    DirectJump,
    IndirectJump,
    DirectCall,
    IndirectCall,
    Return,
    Other,
}

/// Execution class of an instruction; latencies come from the configuration.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    Alu,
    Mul,
    Div,
    Fp,
    Load,
    Store,
    Branch,
}

/// One dynamic instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    /// Address of the instruction.
    pub pc: u64,
    /// Size in bytes; the next sequential instruction is at `pc + size`.
    pub size: u8,
    pub class: OpClass,
    /// `Some` for a control-transfer instruction.
    pub branch: Option<BranchKind>,
    /// Committed-path outcome of a branch (always true for unconditional kinds).
    pub taken: bool,
    /// Committed-path target when taken (0 when unknown / not a branch).
    pub target: u64,
    /// Architectural registers read (0 = none).
    pub srcs: [u8; 4],
    /// Architectural registers written (0 = none).
    pub dsts: [u8; 2],
    /// Data address read (0 = none).
    pub load_addr: u64,
    /// Data address written (0 = none).
    pub store_addr: u64,
}

impl Instr {
    /// The plain sequential ALU instruction of `size` bytes at `pc` (no registers,
    /// no memory, not a branch): what [`InstrSource::wrong_path`] yields for an
    /// address the source knows nothing about.
    pub const fn plain_alu(pc: u64, size: u8) -> Instr {
        Instr {
            pc,
            size,
            class: OpClass::Alu,
            branch: None,
            taken: false,
            target: 0,
            srcs: [0; 4],
            dsts: [0; 2],
            load_addr: 0,
            store_addr: 0,
        }
    }

    /// Address of the next instruction on the committed path.
    #[inline]
    pub fn next_pc(&self) -> u64 {
        if self.branch.is_some() && self.taken {
            self.target
        } else {
            self.pc.wrapping_add(self.size as u64)
        }
    }
}

/// Where the instructions come from.
pub trait InstrSource {
    /// A short name for reports (workload or trace name).
    fn name(&self) -> &str;
    /// The next instruction on the committed path; `Ok(None)` at the end.
    fn next(&mut self) -> Result<Option<Instr>, SourceError>;
    /// The static instruction at `pc`, for fetching down a mispredicted path. An
    /// address the source knows nothing about yields a plain sequential ALU
    /// instruction.
    fn wrong_path(&mut self, pc: u64) -> Instr;
    /// At the end of a run: check that what was read is intact (a trace's
    /// compressed block checks, [`crate::trace::TraceSource::verify`]); the
    /// source may end afterwards. A generated source has nothing to check.
    fn verify(&mut self) -> Result<(), SourceError> {
        Ok(())
    }
    /// After [`verify`](Self::verify): the decompressed bytes it decoded
    /// without reaching the check that covers the last record read (0:
    /// verified, or nothing to verify).
    fn unverified_bytes(&self) -> u64 {
        0
    }
}

/// An instruction source that cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: record {record} (byte {byte}): {what}")]
    Record {
        path: String,
        record: u64,
        /// Offset of the record in the (uncompressed) source.
        byte: u64,
        what: String,
    },
    #[error("{path}: {what}")]
    Io { path: String, what: String },
}
