//! The per-cycle interface of the FMT/sFMT counter unit.
//!
//! Everything the core hands the unit each clock cycle ([`CycleEvents`]), the unit
//! parameters ([`Params`]), the protocol-error vocabulary ([`ProtocolError`],
//! [`Field`], rule numbers of spec section 6), the architecturally visible state
//! that the bit-accurate model (`hw`) and the behavioural model (`golden`) both
//! expose ([`UnitView`], [`RowView`], [`CounterUnit`]), the stream formats
//! ([`stream`]) and a random legal stimulus generator ([`gen`]).
//!
//! **Invariant:** this crate depends on no other crate of the workspace.

mod bundle;
mod params;
mod view;

pub mod gen;
pub mod stream;

pub use bundle::{CycleEvents, FetchStall, HeadCause, Squash};
pub use params::{ParamError, Params, Variant};
pub use view::{
    Counter, CounterUnit, Counters, Field, PackedRow, Pending, ProtocolError, RowView, UnitView,
    META_DISPATCHED, META_DONE, META_MISPREDICT, NUM_COUNTERS, ROW_COLUMNS,
};

/// Anything that consumes one bundle per cycle: a counter unit, a checker, a
/// stream writer, a VCD tracer, an accountant of another counter architecture.
pub trait Consumer {
    /// Called once per clock cycle with that cycle's bundle.
    fn cycle(&mut self, ev: &CycleEvents);
}
