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

#[cfg(test)]
mod tests {
    use super::*;
    use events::{Counter, Params};

    /// What a tracer saw: the bundle counter and `cycles` of the unit it was
    /// shown, and the bundle's `fetched_branches`.
    struct Seen(Vec<(u64, u64, u8)>);

    impl Tracer for Seen {
        fn cycle(&mut self, unit: &Unit, ev: &CycleEvents) {
            let cycles = unit.view().counters.get(Counter::Cycles);
            self.0
                .push((unit.latch().bundles, cycles, ev.fetched_branches));
        }
    }

    /// `step_traced` steps the unit, then shows the tracer the committed
    /// state with the bundle that drove it, once per cycle.
    #[test]
    fn the_tracer_sees_each_cycle_after_it_is_committed() {
        let mut u = Unit::new(Params::default()).unwrap();
        let mut t = Seen(Vec::new());
        for n in [2u8, 0, 1] {
            let ev = CycleEvents {
                fetched_branches: n,
                ..CycleEvents::idle()
            };
            u.step_traced(&ev, &mut t);
        }
        assert_eq!(t.0, [(1, 1, 2), (2, 2, 0), (3, 3, 1)]);
        assert_eq!(u.regs().ftail, 3);
        // `NoTrace` sees nothing and steps all the same
        u.step_traced(&CycleEvents::idle(), &mut NoTrace);
        assert_eq!(u.latch().bundles, 4);
    }
}
