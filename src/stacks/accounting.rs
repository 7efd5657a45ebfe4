//! Per-cycle accountants that see only the bundles: the IBM POWER5-style
//! completion-stall stack ([`Power5`]), the frontend/long-backend overlap
//! measurement of the paper's Table 1 ([`Overlap`]), and adapters that drive a
//! counter unit as an [`events::Consumer`] ([`UnitConsumer`]; [`CensusOf`]
//! with the cycle census beside it).

use events::{CounterUnit, CycleEvents, FetchStall, HeadCause, Squash};

use super::{Comp, NCOMP};
use crate::census::Census;

/// A counter unit (`hw::Unit`, `golden::Unit`) as a consumer of the core's bundles.
pub struct UnitConsumer<U: CounterUnit>(pub U);

impl<U: CounterUnit> events::Consumer for UnitConsumer<U> {
    #[inline]
    fn cycle(&mut self, ev: &CycleEvents) {
        self.0.step(ev);
    }
}

/// FMT's unit with the cycle census of the run, read before the unit steps
/// each cycle ([`Census::before_step`]: the window's state at the cycle's
/// start, from the unit's ROB mirror).
pub struct CensusOf(pub hw::Unit, pub Census);

impl events::Consumer for CensusOf {
    #[inline]
    fn cycle(&mut self, ev: &CycleEvents) {
        self.1.before_step(&self.0, ev);
        self.0.step(ev);
    }
}

/// IBM POWER5-style completion-stall accounting (the paper's section 2).
///
/// A cycle in which nothing commits is charged: if the ROB is empty, to the last
/// frontend event seen (an I-miss of the level reported by `fetch_stall`, an I-TLB
/// miss, or a misprediction: a `squash = mispredict` or a decode redirect);
/// otherwise to what blocks the ROB head (`l1d`, `l2d`, `dtlb`, `longlat`;
/// `other` stays in base). Cycles that commit are base. An empty ROB before any
/// frontend event is base.
///
/// The ROB is empty in a cycle exactly when nothing retires and `head = none`
/// (spec section 6, rule 3), so no ROB mirror is needed.
#[derive(Clone, Debug, Default)]
pub struct Power5 {
    /// Counted cycles.
    pub cycles: u64,
    /// Charged cycles per component (index [`Comp`]; `base` is not used here).
    pub charged: [u64; NCOMP],
    last_fe: Option<Comp>,
}

impl Power5 {
    pub fn new() -> Self {
        Self::default()
    }

    /// The stack: components as charged, base = cycles - their sum.
    pub fn stack(&self) -> [i64; NCOMP] {
        let mut s = [0i64; NCOMP];
        for (k, v) in s.iter_mut().enumerate().skip(1) {
            *v = self.charged[k] as i64;
        }
        s[Comp::Base as usize] = self.cycles as i64 - s.iter().skip(1).sum::<i64>();
        s
    }
}

impl events::Consumer for Power5 {
    fn cycle(&mut self, ev: &CycleEvents) {
        match ev.fetch_stall {
            FetchStall::None => {}
            FetchStall::L1i => self.last_fe = Some(Comp::L1i),
            FetchStall::L2i => self.last_fe = Some(Comp::L2i),
            FetchStall::Itlb => self.last_fe = Some(Comp::Itlb),
        }
        if ev.fe_redirect || matches!(ev.squash, Squash::Mispredict(_)) {
            self.last_fe = Some(Comp::Bpred);
        }
        if !ev.count_enable {
            return;
        }
        self.cycles += 1;
        if ev.retired > 0 {
            return;
        }
        let c = match ev.head {
            HeadCause::None => self.last_fe,
            HeadCause::L1d => Some(Comp::L1d),
            HeadCause::L2d => Some(Comp::L2d),
            HeadCause::Dtlb => Some(Comp::Dtlb),
            HeadCause::Longlat => Some(Comp::Longlat),
            HeadCause::Other => None,
        };
        if let Some(c) = c {
            self.charged[c as usize] += 1;
        }
    }
}

/// Cycles in which a frontend miss penalty overlaps a long backend miss penalty
/// (the paper's Table 1), measured from the bundles alone.
///
/// - A cycle is *long-backend* when the window is full at its start as the
///   unit sees it (the ROB, or another backend structure: `backend_full`, so a
///   stream without it measures the paper's full ROB only) and its head waits
///   on an L2 D-miss or a D-TLB miss (what FMT charges to `l2d`/`dtlb`).
/// - A cycle is *frontend* when fetch reports a stall (`fetch_stall != none`), or
///   when the frontend refills after a misprediction or a flush (from the squash
///   to the next dispatch; the core simulator never flushes), or, found afterwards, when a branch that turns out mispredicted
///   is in the ROB unresolved (from its dispatch to its squash: the resolution
///   time, which interval analysis counts in the misprediction penalty).
///
/// `overlap` counts the cycles that are both, each cycle once. The ROB occupancy
/// is mirrored from `dispatched`, `retired` and `squash` exactly as the unit does.
#[derive(Clone, Debug)]
pub struct Overlap {
    rob_entries: u32,
    rob_count: u32,
    rob_head: u32,
    refill: bool,
    /// Per ROB id: `be_only` and `not_fe` at the cycle the instruction was
    /// dispatched.
    at: Vec<(u64, u64)>,
    /// Counted long-backend cycles that were not (yet) known to be frontend cycles.
    be_only: u64,
    /// Counted cycles that were not (yet) known to be frontend cycles.
    not_fe: u64,
    pub cycles: u64,
    pub frontend: u64,
    pub backend: u64,
    pub overlap: u64,
}

impl Overlap {
    pub fn new(rob_entries: u32) -> Self {
        Self {
            rob_entries,
            rob_count: 0,
            rob_head: 0,
            refill: false,
            at: vec![(0, 0); rob_entries as usize],
            be_only: 0,
            not_fe: 0,
            cycles: 0,
            frontend: 0,
            backend: 0,
            overlap: 0,
        }
    }

    /// Overlapping cycles as a fraction of all counted cycles.
    pub fn fraction(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.overlap as f64 / self.cycles as f64
        }
    }
}

impl events::Consumer for Overlap {
    fn cycle(&mut self, ev: &CycleEvents) {
        let full = self.rob_count == self.rob_entries || ev.backend_full;
        let be = full && matches!(ev.head, HeadCause::L2d | HeadCause::Dtlb);
        let fe = ev.fetch_stall != FetchStall::None || self.refill;
        if ev.count_enable {
            self.cycles += 1;
            self.frontend += fe as u64;
            self.backend += be as u64;
            self.not_fe += !fe as u64;
            if be && fe {
                self.overlap += 1;
            } else if be {
                self.be_only += 1;
            }
        }
        // the ROB mirror: retire, dispatch, squash (spec 4.2, 4.4, 4.5)
        let r = self.rob_entries;
        self.rob_head = (self.rob_head + ev.retired as u32) % r;
        self.rob_count -= (ev.retired as u32).min(self.rob_count);
        for k in 0..ev.dispatched as u32 {
            let id = (self.rob_head + self.rob_count + k) % r;
            self.at[id as usize] = (self.be_only, self.not_fe);
        }
        self.rob_count = (self.rob_count + ev.dispatched as u32).min(r);
        if ev.dispatched > 0 {
            self.refill = false;
        }
        match ev.squash {
            Squash::None => {}
            Squash::Mispredict(x) => {
                let x = x as u32 % r;
                self.rob_count = (x + r - self.rob_head) % r + 1;
                self.refill = true;
                // the branch's resolution time was a frontend penalty: its
                // cycles not yet frontend become so, and its long-backend
                // ones overlapped. The counts go back to the stamps, so that
                // an older branch resolved later adds only the cycles before
                // this one's dispatch and after its squash (later stamps are
                // younger than x and squashed).
                let (be_only, not_fe) = self.at[x as usize];
                debug_assert!(
                    be_only <= self.be_only && not_fe <= self.not_fe,
                    "a squash of ROB id {x} whose stamp is younger than the counts"
                );
                self.overlap += self.be_only.saturating_sub(be_only);
                self.be_only = be_only.min(self.be_only);
                self.frontend += self.not_fe.saturating_sub(not_fe);
                self.not_fe = not_fe.min(self.not_fe);
            }
            Squash::Flush(x) => {
                let x = x as u32 % r;
                self.rob_count = (x + r - self.rob_head) % r;
                self.refill = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use events::Consumer;

    fn ev(f: impl FnOnce(&mut CycleEvents)) -> CycleEvents {
        let mut e = CycleEvents::default();
        f(&mut e);
        e
    }

    /// A mispredicted branch's resolution time becomes frontend at its squash,
    /// long-backend or not, so that no overlapping cycle is missing from the
    /// frontend count (cycle by cycle, worked out by hand; ROB of 4).
    #[test]
    fn a_resolution_time_is_frontend_and_overlaps_where_long_backend() {
        let mut o = Overlap::new(4);
        let full_l2d = |e: &mut CycleEvents| e.head = HeadCause::L2d;
        // 0: the branch (id 1) dispatched with id 0; neither side
        o.cycle(&ev(|e| e.dispatched = 2));
        // 1: ids 2, 3: the ROB is full from the next cycle
        o.cycle(&ev(|e| e.dispatched = 2));
        // 2-4: long-backend only, as far as is known yet
        for _ in 2..5 {
            o.cycle(&ev(full_l2d));
        }
        // 5: both (an I-miss under the full ROB)
        o.cycle(&ev(|e| {
            full_l2d(e);
            e.fetch_stall = FetchStall::L1i;
        }));
        assert_eq!((o.frontend, o.backend, o.overlap), (1, 4, 1));
        // 6: long-backend, and the branch resolves mispredicted: cycles 1-6
        // were its resolution time
        o.cycle(&ev(|e| {
            full_l2d(e);
            e.squash = Squash::Mispredict(1);
        }));
        assert_eq!((o.frontend, o.backend, o.overlap), (6, 5, 5));
        // 7: the refill, which ends with a dispatch
        o.cycle(&ev(|e| e.dispatched = 1));
        assert_eq!((o.cycles, o.frontend, o.backend, o.overlap), (8, 7, 5, 5));
        // 8: neither side; then an older branch (id 0) resolves mispredicted:
        // of its resolution time (cycles 1-8) only cycle 8 is new
        o.cycle(&ev(|e| e.squash = Squash::Mispredict(0)));
        assert_eq!((o.cycles, o.frontend, o.backend, o.overlap), (9, 8, 5, 5));
    }

    /// The ROB mirror follows the head around the end of the ROB (ROB of 4,
    /// the head on an L2 D-miss in every cycle from 1, so that each cycle's
    /// fullness shows as long-backend or not): ids wrap, a mispredicted branch
    /// keeps the entries from the head to itself, a flush keeps those before
    /// the flushed id, whatever the head; worked out by hand, cycle by cycle.
    #[test]
    fn the_rob_mirror_wraps_around_with_the_head() {
        let mut o = Overlap::new(4);
        let l2d = |f: fn(&mut CycleEvents)| {
            ev(|e| {
                e.head = HeadCause::L2d;
                f(e);
            })
        };
        let counts = |o: &Overlap| (o.cycles, o.frontend, o.backend, o.overlap);
        // 0: ids 0-3
        o.cycle(&ev(|e| e.dispatched = 4));
        // 1: full: long-backend; head 1, 3 left
        o.cycle(&l2d(|e| e.retired = 1));
        // 2: 3 of 4; the branch gets id 0
        o.cycle(&l2d(|e| e.dispatched = 1));
        // 3: full
        o.cycle(&l2d(|_| {}));
        // 4: full; the branch (id 0, the youngest: head 1 to id 0 is 4
        // entries) resolves mispredicted: cycles 3-4 were its resolution time
        o.cycle(&l2d(|e| e.squash = Squash::Mispredict(0)));
        assert_eq!(counts(&o), (5, 2, 3, 2));
        // 5: still full, and refilling: both
        o.cycle(&l2d(|_| {}));
        // 6: both; a flush of id 3 keeps ids 1 and 2
        o.cycle(&l2d(|e| e.squash = Squash::Flush(3)));
        assert_eq!(counts(&o), (7, 4, 5, 4));
        // 7: 2 of 4, refilling; one retires (head 2), one dispatched (id 3)
        o.cycle(&l2d(|e| {
            e.retired = 1;
            e.dispatched = 1;
        }));
        // 8: 2 of 4; id 0 (a branch)
        o.cycle(&l2d(|e| e.dispatched = 1));
        // 9: 3 of 4; id 1
        o.cycle(&l2d(|e| e.dispatched = 1));
        // 10: full: long-backend only
        o.cycle(&l2d(|_| {}));
        assert_eq!(counts(&o), (11, 5, 6, 4));
        // 11: full; the branch at id 0 (ids 2, 3, 0 stay) resolves
        // mispredicted: cycles 9-11 were its resolution time, 10-11 overlapped
        o.cycle(&l2d(|e| e.squash = Squash::Mispredict(0)));
        // 12: 3 of 4, refilling: frontend only
        o.cycle(&l2d(|_| {}));
        assert_eq!(counts(&o), (13, 9, 7, 6));
    }

    /// A full backend structure other than the ROB (`backend_full`) makes a
    /// long-backend cycle as a full ROB does, and only with a long head.
    #[test]
    fn backend_full_is_a_full_window() {
        let mut o = Overlap::new(8);
        o.cycle(&ev(|e| e.dispatched = 2));
        // 1: ROB 2 of 8, head L2 D-miss: not long-backend
        o.cycle(&ev(|e| e.head = HeadCause::L2d));
        // 2: the same with backend_full: long-backend
        o.cycle(&ev(|e| {
            e.head = HeadCause::L2d;
            e.backend_full = true;
        }));
        // 3: backend_full with an L1 D-miss head: not long-backend; 4: D-TLB under an I-miss
        o.cycle(&ev(|e| {
            e.head = HeadCause::L1d;
            e.backend_full = true;
        }));
        o.cycle(&ev(|e| {
            e.head = HeadCause::Dtlb;
            e.backend_full = true;
            e.fetch_stall = FetchStall::L2i;
        }));
        assert_eq!((o.cycles, o.frontend, o.backend, o.overlap), (5, 1, 2, 1));
    }
}
