//! Bit-accurate, clocked model of the FMT/sFMT counter unit (spec
//! `counter-unit.md`, sections 2-6).
//!
//! [`Unit`] holds the registers of the unit at their hardware widths and advances
//! one clock cycle per [`events::CounterUnit::step`]. [`cost()`] gives the storage
//! bits of each structure for a parameter set.
//!
//! **Invariant:** `hw` does no I/O and allocates nothing after [`Unit::new`].

pub mod cost;
mod trace;
mod unit;

pub use cost::{cost, Cost};
pub use trace::{NoTrace, Tracer};
pub use unit::{Kernel, Latch, Regs, RobBits, RowBits, Unit, Widths, MAX_ROB, MAX_ROWS, ROW_SPILL};
