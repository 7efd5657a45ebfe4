//! The tracing hook: a [`Tracer`] sees the unit once per clock cycle, right after
//! the cycle's registers are committed, together with the bundle that drove it.
//! [`NoTrace`] does nothing and compiles away, so an untraced run pays nothing.
//!
//! `hw` itself does no I/O: a VCD writer lives in the `cpistack` crate and
//! implements this trait.

use events::{CounterUnit, CycleEvents};

use crate::Unit;

/// Observes the unit every cycle.
pub trait Tracer {
    /// Called after `unit` has stepped with `ev`: `unit` holds the registers at the
    /// start of the next cycle.
    fn cycle(&mut self, unit: &Unit, ev: &CycleEvents);
}

/// The tracer that traces nothing.
#[derive(Copy, Clone, Debug, Default)]
pub struct NoTrace;

impl Tracer for NoTrace {
    #[inline(always)]
    fn cycle(&mut self, _unit: &Unit, _ev: &CycleEvents) {}
}

impl Unit {
    /// One clock cycle, then the tracer sees the committed state.
    #[inline]
    pub fn step_traced<T: Tracer + ?Sized>(&mut self, ev: &CycleEvents, t: &mut T) {
        CounterUnit::step(self, ev);
        t.cycle(self, ev);
    }
}
