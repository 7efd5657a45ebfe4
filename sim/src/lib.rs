//! Companion out-of-order core simulator. Being written.

pub mod isa;
pub mod trace;
pub use isa::{BranchKind, Instr, InstrSource, OpClass, SourceError};
