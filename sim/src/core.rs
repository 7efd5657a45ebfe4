//! The out-of-order core: a cycle-level timing model in the ChampSim style.
//!
//! Every cycle the stages run once, in reverse pipeline order (retire, execute
//! (resolve, then issue), dispatch, decode, fetch), so each stage sees what the
//! upstream stage produced in an earlier cycle. Timing of memory accesses is by
//! timestamps (see [`crate::cache`]). Fetch follows the predicted path: after a
//! misprediction it fetches, dispatches and executes wrong-path instructions from
//! the same static program ([`InstrSource::wrong_path`]) until the branch
//! resolves and squashes them.
//!
//! The core fills one [`CycleEvents`] per cycle exactly as the counter-unit spec
//! (section 3) defines it. ROB ids are sequence numbers modulo `rob_entries`.
//!
//! Correct-path instructions squashed by a decode-time redirect (possible when the
//! redirect itself is a misprediction) are kept in a replay queue and fetched again.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use events::{CycleEvents, FetchStall, HeadCause, Squash};

use crate::bpred::{Btb, DirPred, Hybrid, Ras, RasCkpt};
use crate::cache::{Cache, Level, Lookup};
use crate::config::{Config, Ideal};
use crate::isa::{BranchKind, Instr, InstrSource, OpClass};
use crate::prefetch::Prefetcher;
use crate::stats::Stats;
use crate::SimError;

const NONE: u64 = u64::MAX;

// miss bits kept with an instruction (for committed-path statistics)
const M_L1I: u8 = 1;
const M_L2I: u8 = 2;
const M_ITLB: u8 = 4;
const M_L1D: u8 = 8;
const M_L2D: u8 = 16;
const M_DTLB: u8 = 32;
/// The instruction's fetch waited on an I-miss (`dispatched_imiss`).
const M_IWAIT: u8 = 64;
/// A load whose line was on its way, requested by a prefetch (a late
/// prefetch; `Stats::head_waits`).
const M_LATE_PF: u8 = 128;
// events counted in the all-path statistics (`Uop::counted`, a field of its
// own): the miss bits above but `M_IWAIT` and `M_LATE_PF` (never counted),
// and these two in their places
const C_LONGLAT: u8 = 64;
const C_MISPRED: u8 = 128;

/// One in-flight instruction (in the frontend queue, then in the ROB).
#[derive(Copy, Clone, Debug)]
struct Uop {
    pc: u64,
    size: u8,
    class: OpClass,
    kind: Option<BranchKind>,
    /// Wrong-path instruction.
    wp: bool,
    /// Correct-path branch whose final prediction differs from its outcome.
    mispred: bool,
    longlat: bool,
    level: Level,
    miss: u8,
    /// Which of its events were counted on all paths (`M_L1I`..`M_DTLB`,
    /// `C_LONGLAT`, `C_MISPRED`): the committed-path statistics count those
    /// only, so that an event before counting started is in neither.
    counted: u8,
    srcs: [u8; 4],
    dsts: [u8; 2],
    addr: u64,
    is_store: bool,
    fetch_cycle: u64,
    /// Predicted next pc (after decode, the final prediction).
    pred_next: u64,
    /// Committed-path next pc (0 on the wrong path).
    actual_next: u64,
    /// Target decode will redirect to (0: none).
    redirect: u64,
    ghr: u64,
    dir: DirPred,
    ras: RasCkpt,
    // backend
    src_prod: [u64; 4],
    prev: [u64; 2],
    done: u64,
    tlb_until: u64,
    /// A load that could not start (no MSHR or walker) is not retried while the
    /// memory epoch is `blk_epoch` and the cycle is before `blk_until`.
    blk_epoch: u64,
    blk_until: u64,
    /// What the last failed start of this load waited for (a D-TLB walker, an L1D
    /// or L2 MSHR); `Other` if it never failed. Reported as the head cause while
    /// the load has not started.
    blk: HeadCause,
    /// The committed-path record (for replay after a decode redirect).
    instr: Instr,
}

impl Uop {
    /// No instruction: a free ROB slot, and the state every fetched instruction
    /// starts its backend life with (not predicted, not issued, not blocked).
    fn empty() -> Uop {
        Uop {
            pc: 0,
            size: 4,
            class: OpClass::Alu,
            kind: None,
            wp: false,
            mispred: false,
            longlat: false,
            level: Level::Hit,
            miss: 0,
            counted: 0,
            srcs: [0; 4],
            dsts: [0; 2],
            addr: 0,
            is_store: false,
            fetch_cycle: 0,
            pred_next: 0,
            actual_next: 0,
            redirect: 0,
            ghr: 0,
            dir: DirPred::default(),
            ras: RasCkpt::default(),
            src_prod: [NONE; 4],
            prev: [NONE; 2],
            done: NONE,
            tlb_until: 0,
            blk_epoch: 0,
            blk_until: 0,
            blk: HeadCause::Other,
            instr: Instr::plain_alu(0, 4),
        }
    }
    #[inline]
    fn fall(&self) -> u64 {
        self.pc.wrapping_add(self.size as u64)
    }
    #[inline]
    fn is_mem(&self) -> bool {
        matches!(self.class, OpClass::Load | OpClass::Store)
    }
}

/// Fixed numbers copied out of the configuration.
#[derive(Clone, Debug)]
struct Geo {
    rob: u64,
    /// `rob - 1` when `rob` is a power of two (slot = seq & mask), else 0.
    rob_mask: u64,
    lsq: u32,
    /// `core.report_backend_full`.
    report_backend_full: bool,
    fetch_w: u32,
    decode_w: u32,
    dispatch_w: u32,
    issue_w: u32,
    retire_w: u32,
    decode_delay: u64,
    dispatch_delay: u64,
    fq_cap: usize,
    max_branches: u32,
    line_shift: u32,
    lat: [u32; 7],
    longlat_min: u32,
    l1d_lat: u64,
    l2_lat: u64,
    mem_lat: u64,
    itlb_lat: u64,
    dtlb_lat: u64,
    watchdog: u64,
    /// `layout.shifts()`: added to every code and every data address.
    code_shift: u64,
    data_shift: u64,
    /// `layout.seed` (0: the shifts were given), for the error of a wrap.
    layout_seed: u64,
}

impl Geo {
    /// The layout moves the program (either shift is nonzero).
    #[inline]
    fn shifted(&self) -> bool {
        self.code_shift | self.data_shift != 0
    }
}

/// `i` moved by the layout's shifts ([`crate::Layout`]): its `pc` and a taken
/// branch's nonzero `target` by `code`, its nonzero data addresses by `data`
/// (0 means none and stays 0), each modulo 2^64. Also whether an address
/// passed 2^64 (wrapped).
#[inline]
pub(crate) fn relocate(i: &mut Instr, code: u64, data: u64) -> bool {
    let mut wrapped = false;
    let mut add = |a: &mut u64, s: u64| {
        let (v, o) = a.overflowing_add(s);
        *a = v;
        wrapped |= o;
    };
    add(&mut i.pc, code);
    if i.target != 0 {
        add(&mut i.target, code);
    }
    if i.load_addr != 0 {
        add(&mut i.load_addr, data);
    }
    if i.store_addr != 0 {
        add(&mut i.store_addr, data);
    }
    // a nonzero address that lands on 0 (it would read as none) wrapped too
    wrapped
}

fn class_idx(c: OpClass) -> usize {
    match c {
        OpClass::Alu => 0,
        OpClass::Mul => 1,
        OpClass::Div => 2,
        OpClass::Fp => 3,
        OpClass::Load => 4,
        OpClass::Store => 5,
        OpClass::Branch => 6,
    }
}

/// The core, pulling instructions from `S`.
pub struct Core<S: InstrSource> {
    g: Geo,
    ideal: Ideal,
    src: S,
    now: u64,
    // memory system
    l1i: Cache,
    l1d: Cache,
    l2: Cache,
    itlb: Cache,
    dtlb: Cache,
    pf: Prefetcher,
    pf_buf: Vec<u64>,
    // prediction
    hyb: Hybrid,
    btb: Btb,
    ras: Ras,
    ghr: u64,
    // frontend
    fq: VecDeque<Uop>,
    /// Entries at the front of `fq` already decoded.
    decoded: usize,
    fetch_pc: u64,
    wp: bool,
    /// Line whose fetch access has completed (instructions can be delivered), or NONE.
    fline_ok: u64,
    /// Line whose access is under way, or NONE.
    fwait_line: u64,
    fwait_itlb_until: u64,
    fwait_until: u64,
    fwait_kind: FetchStall,
    /// When the last of the L2 MSHRs taken by instruction misses frees (an
    /// instruction miss in flight while fetch cannot start one is a
    /// squashed path's, fetch having abandoned it).
    il2_until: u64,
    /// Miss bits of the current fetch access, given to the first instruction delivered.
    fmiss: u8,
    /// Those of them counted on all paths.
    fcounted: u8,
    replay: VecDeque<Instr>,
    peeked: Option<Instr>,
    src_done: bool,
    fe_blocked: bool,
    // backend
    rob: Vec<Uop>,
    head: u64,
    tail: u64,
    /// Instructions in the ROB whose source operands are all available (they
    /// issue oldest first), one bit per ROB slot.
    ready: Vec<u64>,
    /// Per ROB slot: source operands still waiting for their producer.
    waiting: Vec<u8>,
    /// Per ROB slot: sequence numbers of the dispatched consumers waiting for the
    /// instruction in that slot (ascending).
    deps: Vec<Vec<u64>>,
    /// (completion cycle, sequence number) of issued producers whose waiting
    /// consumers have not been woken yet, earliest first.
    wake: BinaryHeap<Reverse<(u64, u64)>>,
    lsq: u32,
    producer: [u64; 256],
    resolve: Option<(u64, u64)>,
    branches_in_flight: u32,
    squashed_pending: u32,
    // accounting
    ev: CycleEvents,
    warmup: u64,
    /// Commits with counting on stop at this many (`u64::MAX`: no limit).
    limit: u64,
    committed: u64,
    counted_retired: u64,
    last_commit: u64,
    stats: Stats,
    /// Digest of the committed instruction stream (see [`Core::stream_digest`]).
    digest: u64,
}

impl<S: InstrSource> Core<S> {
    /// A core with configuration `cfg` (validated here) fetching from `src`.
    pub fn new(cfg: &Config, src: S) -> Result<Self, SimError> {
        cfg.validate()?;
        Self::new_unvalidated(cfg, src)
    }

    /// [`Core::new`] without [`Config::validate`]: for a configuration that
    /// was validated already, or (tests) one that breaks a rule on purpose,
    /// such as a memory latency the watchdog cannot wait for.
    pub(crate) fn new_unvalidated(cfg: &Config, src: S) -> Result<Self, SimError> {
        let c = &cfg.core;
        let l = &cfg.latency;
        // `ideal.longlat`: long-latency operations take one cycle
        let ll = |x: u32| {
            if cfg.ideal.longlat && x >= l.longlat_min {
                1
            } else {
                x
            }
        };
        let (code_shift, data_shift) = cfg.layout.shifts();
        let g = Geo {
            rob: c.rob_entries as u64,
            rob_mask: if c.rob_entries.is_power_of_two() {
                c.rob_entries as u64 - 1
            } else {
                0
            },
            lsq: c.lsq_entries,
            report_backend_full: c.report_backend_full,
            fetch_w: c.fetch_width,
            decode_w: c.decode_width,
            dispatch_w: c.dispatch_width,
            issue_w: c.issue_width,
            retire_w: c.retire_width,
            decode_delay: c.decode_stage as u64 - 1,
            dispatch_delay: c.frontend_stages as u64 - 1,
            fq_cap: c.fetch_queue_entries() as usize,
            max_branches: c.fmt_rows - 1,
            line_shift: cfg.l1i.line.trailing_zeros(),
            lat: [
                ll(l.alu),
                ll(l.mul),
                ll(l.div),
                ll(l.fp),
                cfg.l1d.latency,
                l.store,
                l.branch,
            ],
            longlat_min: l.longlat_min,
            l1d_lat: cfg.l1d.latency as u64,
            l2_lat: cfg.l2.latency as u64,
            mem_lat: cfg.memory_latency as u64,
            itlb_lat: cfg.itlb.miss_latency as u64,
            dtlb_lat: cfg.dtlb.miss_latency as u64,
            watchdog: c.watchdog_cycles,
            code_shift,
            data_shift,
            layout_seed: cfg.layout.seed,
        };
        let cache = |cc: &crate::config::CacheCfg| Cache::new(cc.size, cc.ways, cc.line, cc.mshrs);
        let tlb = |t: &crate::config::TlbCfg| {
            Cache::new(t.entries as u64 * t.page as u64, t.ways, t.page, t.walkers)
        };
        let mut core = Core {
            ideal: cfg.ideal.clone(),
            src,
            now: 0,
            l1i: cache(&cfg.l1i),
            l1d: cache(&cfg.l1d),
            l2: cache(&cfg.l2),
            itlb: tlb(&cfg.itlb),
            dtlb: tlb(&cfg.dtlb),
            pf: Prefetcher::new(&cfg.prefetch, cfg.l1d.line),
            pf_buf: Vec::with_capacity(16),
            hyb: Hybrid::new(&cfg.bpred),
            btb: Btb::new(&cfg.bpred),
            ras: Ras::new(cfg.bpred.ras_entries),
            ghr: 0,
            fq: VecDeque::with_capacity(g.fq_cap),
            decoded: 0,
            fetch_pc: 0,
            wp: false,
            fline_ok: NONE,
            fwait_line: NONE,
            fwait_itlb_until: 0,
            fwait_until: 0,
            fwait_kind: FetchStall::None,
            il2_until: 0,
            fmiss: 0,
            fcounted: 0,
            replay: VecDeque::new(),
            peeked: None,
            src_done: false,
            fe_blocked: false,
            rob: vec![Uop::empty(); g.rob as usize],
            head: 0,
            tail: 0,
            ready: vec![0; (g.rob as usize).div_ceil(64)],
            waiting: vec![0; g.rob as usize],
            deps: (0..g.rob).map(|_| Vec::with_capacity(8)).collect(),
            wake: BinaryHeap::with_capacity(2 * g.rob as usize),
            lsq: 0,
            producer: [NONE; 256],
            resolve: None,
            branches_in_flight: 0,
            squashed_pending: 0,
            ev: CycleEvents::default(),
            warmup: 0,
            limit: u64::MAX,
            committed: 0,
            counted_retired: 0,
            last_commit: 0,
            stats: Stats::default(),
            digest: 0,
            g,
        };
        if core.g.shifted() {
            core.peek::<true>()?;
        } else {
            core.peek::<false>()?;
        }
        if let Some(i) = core.peeked {
            core.fetch_pc = i.pc;
        }
        Ok(core)
    }

    /// The ROB slot of sequence number `seq`.
    #[inline(always)]
    fn slot(&self, seq: u64) -> usize {
        (if self.g.rob_mask != 0 {
            seq & self.g.rob_mask
        } else {
            seq % self.g.rob
        }) as usize
    }

    /// Instructions to commit with `count_enable` off before counting starts.
    pub fn set_warmup(&mut self, n: u64) {
        self.warmup = n;
    }

    /// Commit exactly `n` instructions with counting on, then stop committing: the
    /// cycle that reaches `n` retires only up to it (as the warm-up's last cycle
    /// retires only up to the warm-up), so a run of `n` measures exactly `n`.
    pub fn set_limit(&mut self, n: u64) {
        self.limit = n;
    }

    /// Whether the limit set with [`set_limit`](Self::set_limit) has been reached.
    pub fn limit_reached(&self) -> bool {
        self.counted_retired >= self.limit
    }

    /// The current cycle (cycles simulated so far).
    pub fn cycle(&self) -> u64 {
        self.now
    }
    /// Instructions in the ROB now (at the cycle boundary).
    pub fn rob_occupancy(&self) -> u32 {
        (self.tail - self.head) as u32
    }
    /// Instructions committed since the start (warm-up included).
    pub fn committed(&self) -> u64 {
        self.committed
    }
    /// Instructions committed in cycles with `count_enable` on.
    pub fn counted_retired(&self) -> u64 {
        self.counted_retired
    }
    /// Branches fetched and not yet retired (squashed ones leave at the end of the cycle).
    pub fn branches_in_flight(&self) -> u32 {
        self.branches_in_flight
    }
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// A digest of every instruction committed so far, warm-up included, in
    /// order: its pc, its operation class, its branch outcome (next pc) and
    /// its memory address (the one the core models; a trace record's second
    /// address is not). Two runs of one source that committed the same
    /// instructions have the same digest whatever their timing, so runs with
    /// different idealisations can be checked to have executed the same
    /// program path (a source that let the wrong path or the timing change
    /// what commits would differ).
    pub fn stream_digest(&self) -> u64 {
        self.digest
    }
    /// The source ran dry and everything fetched from it has committed.
    pub fn finished(&self) -> bool {
        self.src_done
            && self.peeked.is_none()
            && self.replay.is_empty()
            && self.head == self.tail
            && self.fq.is_empty()
    }
    pub fn source(&self) -> &S {
        &self.src
    }
    /// The last cycle's bundle.
    pub fn last_events(&self) -> &CycleEvents {
        &self.ev
    }

    /// Simulate one clock cycle and return its bundle.
    pub fn step(&mut self) -> Result<&CycleEvents, SimError> {
        let counting = self.committed >= self.warmup;
        // the window is full although the ROB may not be: the load/store
        // queue is full, or the core holds its most branches in flight
        // (fetch stops at the next one), at the start of the cycle, as the
        // unit's `rob_full` is a start-of-cycle state (docs/spec-decisions.md)
        let lsq_full = self.lsq == self.g.lsq;
        let branches_full = self.branches_in_flight >= self.g.max_branches;
        self.ev = CycleEvents {
            count_enable: counting,
            backend_full: self.g.report_backend_full && (lsq_full || branches_full),
            ..CycleEvents::default()
        };
        self.fe_blocked = false;
        let rob_full = self.tail - self.head == self.g.rob;
        let window_full = rob_full || self.ev.backend_full;
        if counting {
            self.stats.cycles += 1;
            if rob_full {
                self.stats.rob_full_cycles += 1;
            } else if lsq_full {
                self.stats.lsq_full_cycles += 1;
            } else if branches_full {
                self.stats.branch_full_cycles += 1;
            }
        }
        self.retire(counting);
        if counting && window_full && self.ev.retired == 0 {
            self.count_head_wait();
        }
        self.execute(counting);
        self.dispatch(counting);
        self.decode(counting);
        if self.g.shifted() {
            self.fetch::<true>(counting)?;
        } else {
            self.fetch::<false>(counting)?;
        }
        self.branches_in_flight_end_of_cycle();
        self.now += 1;
        if self.now - self.last_commit > self.g.watchdog
            && !self.finished()
            && !self.limit_reached()
        {
            return Err(SimError::Stuck(self.dump()));
        }
        Ok(&self.ev)
    }

    fn branches_in_flight_end_of_cycle(&mut self) {
        self.squashed_pending = 0;
    }

    /// Run until `instructions` have been committed with counting on (after the
    /// warm-up set with [`set_warmup`](Self::set_warmup)), handing each bundle
    /// to every consumer. Fails ([`SimError::SourceEnded`]) if the source ends
    /// first: a run that measured less than it was asked is not a result.
    pub fn run(
        &mut self,
        instructions: u64,
        consumers: &mut [&mut dyn events::Consumer],
    ) -> Result<(), SimError> {
        self.limit = instructions;
        while self.counted_retired < instructions && !self.finished() {
            let ev = *self.step()?;
            for c in consumers.iter_mut() {
                c.cycle(&ev);
            }
        }
        self.finish(instructions)
    }

    /// The end of a run: [`require_complete`](Self::require_complete),
    /// then the source's [`verify`](InstrSource::verify) (a trace's
    /// compressed blocks holding the records read pass their checks). Step
    /// no further afterwards: the source may have ended.
    pub fn finish(&mut self, instructions: u64) -> Result<(), SimError> {
        self.require_complete(instructions)?;
        self.src.verify()?;
        Ok(())
    }

    /// `Ok` if `instructions` were measured (committed with counting on);
    /// else the source ended early ([`SimError::SourceEnded`], naming what
    /// was asked and what was measured).
    pub fn require_complete(&self, instructions: u64) -> Result<(), SimError> {
        if self.counted_retired >= instructions {
            return Ok(());
        }
        Err(SimError::SourceEnded {
            name: self.src.name().to_string(),
            committed: self.committed,
            measured: self.counted_retired,
            warmup: self.warmup,
            wanted: instructions,
        })
    }

    // ---------------------------------------------------------------- retire

    #[inline(always)]
    fn retire(&mut self, counting: bool) {
        // the warm-up ends, and the measurement stops, at exactly their counts
        let budget = if counting {
            self.limit - self.counted_retired.min(self.limit)
        } else {
            self.warmup - self.committed
        };
        let width = (self.g.retire_w as u64).min(budget) as u32;
        let mut n = 0u32;
        while n < width && self.head < self.tail {
            let i = self.slot(self.head);
            let u = &self.rob[i];
            // a mispredicted branch commits only after its squash (execute, a later cycle)
            if u.done > self.now || self.resolve.is_some_and(|(s, _)| s == self.head) {
                break;
            }
            debug_assert!(!u.wp, "wrong-path instruction at the ROB head");
            if let Some(k) = u.kind {
                let taken = u.actual_next != u.fall();
                if k == BranchKind::Conditional {
                    self.hyb.update(u.pc, u.ghr, u.dir, taken);
                }
                if taken && k != BranchKind::Return {
                    self.btb.update(u.pc, u.actual_next);
                }
                self.branches_in_flight -= 1;
            }
            if u.is_mem() {
                self.lsq -= 1;
            }
            self.digest = stream_mix(self.digest, u.pc, u.actual_next, u.addr, u.class as u64);
            if counting {
                let s = &mut self.stats;
                s.instructions += 1;
                // the events counted on all paths, of an instruction that commits
                let m = u.miss & u.counted;
                s.committed.l1i += (m & M_L1I != 0) as u64;
                s.committed.l2i += (m & M_L2I != 0) as u64;
                s.committed.itlb += (m & M_ITLB != 0) as u64;
                s.committed.l1d += (m & M_L1D != 0) as u64;
                s.committed.l2d += (m & M_L2D != 0) as u64;
                s.committed.dtlb += (m & M_DTLB != 0) as u64;
                let longlat = u.counted & C_LONGLAT != 0;
                s.committed.longlat += longlat as u64;
                if longlat {
                    s.committed.longlat_cycles += self.g.lat[class_idx(u.class)] as u64 - 1;
                }
                if u.kind.is_some() {
                    s.branches += 1;
                    s.committed.mispredicts += (u.counted & C_MISPRED != 0) as u64;
                }
            }
            self.head += 1;
            n += 1;
        }
        if n > 0 {
            self.last_commit = self.now;
            self.committed += n as u64;
            if counting {
                self.counted_retired += n as u64;
            }
        }
        self.ev.retired = n as u8;
        self.ev.head = if n > 0 || self.head == self.tail {
            HeadCause::None
        } else {
            self.head_cause(&self.rob[self.slot(self.head)])
        };
    }

    /// A counted cycle whose window was full at its start and that commits
    /// nothing: if the head waits on the D-cache (FMT charges the cycle to
    /// `l1d` or `l2d`), count why (`Stats::head_waits`).
    fn count_head_wait(&mut self) {
        let own = match self.ev.head {
            HeadCause::L1d => M_L1D,
            HeadCause::L2d => M_L2D,
            _ => return,
        };
        let u = &self.rob[self.slot(self.head)];
        debug_assert_eq!(u.class, OpClass::Load, "only a load waits on the D-cache");
        let hw = &mut self.stats.head_waits;
        let split = if own == M_L1D {
            &mut hw.l1d
        } else {
            &mut hw.l2d
        };
        if u.done == NONE {
            split.mshr_wait += 1;
        } else if u.miss & own != 0 {
            split.miss += 1;
        } else if u.miss & M_LATE_PF != 0 {
            split.late_prefetch += 1;
        } else {
            split.pending_hit += 1;
        }
    }

    fn head_cause(&self, u: &Uop) -> HeadCause {
        if u.done == NONE {
            // a load waiting for a page walker or an MSHR waits on that miss type
            return u.blk;
        }
        // the walk, and the L1 hit that the walk delayed (its load-to-use latency
        // is exposed only because the translation missed), wait on the D-TLB; so
        // does a store's last cycle after its walk, whatever its line's level (a
        // store never waits for its line: `other` there made the cause depend
        // on a line nothing waits for)
        let after_walk =
            u.miss & M_DTLB != 0 && (u.level == Level::Hit || u.class == OpClass::Store);
        if u.is_mem() && (self.now < u.tlb_until || after_walk) {
            return HeadCause::Dtlb;
        }
        if u.class == OpClass::Load {
            return match u.level {
                Level::Memory => HeadCause::L2d,
                Level::Next => HeadCause::L1d,
                Level::Hit => HeadCause::Other,
            };
        }
        if u.longlat {
            HeadCause::Longlat
        } else {
            HeadCause::Other
        }
    }

    // --------------------------------------------------------------- execute

    fn execute(&mut self, counting: bool) {
        // wake-ups first: the producers whose events remain have not completed, so
        // they are still in the ROB, where a squash can find their consumers
        self.wake_consumers();
        if let Some((seq, t)) = self.resolve {
            if t <= self.now {
                self.resolve = None;
                self.squash_after(seq, counting);
            }
        }
        if self.ready.iter().all(|&w| w == 0) {
            return;
        }
        // oldest first: ROB slots from the head's to the end, then from 0 to it
        let h = self.slot(self.head);
        let base = self.head - h as u64;
        let (hw, hb) = (h >> 6, h & 63);
        let nw = self.ready.len();
        let mut issued = 0;
        let low = (1u64 << hb) - 1;
        // visit j: word (hw + j) mod nw, masked to the slots at or after the head's in
        // the first visit and before it in the last (visit nw)
        let mut j = 0;
        while j <= nw {
            let (mut w, mut off) = (hw + j, base);
            if w >= nw {
                w -= nw;
                off += self.g.rob;
            }
            let mask = if j == 0 {
                !low
            } else if j == nw {
                low
            } else {
                !0
            };
            j += 1;
            let mut bits = self.ready[w] & mask;
            while bits != 0 {
                let slot = (w << 6) | bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.issue(off + slot as u64, counting) {
                    self.ready[w] &= !(1u64 << (slot & 63));
                    issued += 1;
                    if issued == self.g.issue_w {
                        return;
                    }
                }
            }
        }
    }

    #[inline]
    fn set_ready(&mut self, seq: u64) {
        let slot = self.slot(seq);
        self.ready[slot >> 6] |= 1u64 << (slot & 63);
    }

    /// Producers completing by now make their waiting consumers' operands available
    /// (a consumer issues no earlier than its producers' completion cycle).
    fn wake_consumers(&mut self) {
        while let Some(&Reverse((t, p))) = self.wake.peek() {
            if t > self.now {
                break;
            }
            self.wake.pop();
            let slot = self.slot(p);
            let mut d = std::mem::take(&mut self.deps[slot]);
            for &c in &d {
                let cs = self.slot(c);
                debug_assert!(c < self.tail && self.waiting[cs] > 0, "stale consumer {c}");
                self.waiting[cs] -= 1;
                if self.waiting[cs] == 0 {
                    self.set_ready(c);
                }
            }
            d.clear();
            self.deps[slot] = d;
        }
    }

    /// Issue `seq`; false if it cannot issue this cycle (no MSHR or page walker).
    fn issue(&mut self, seq: u64, counting: bool) -> bool {
        let i = self.slot(seq);
        let u = &self.rob[i];
        let now = self.now;
        let (done, tlb_until, level, miss) = match u.class {
            OpClass::Load | OpClass::Store if u.addr != 0 => {
                // a blocked access stays blocked until a fill changes the D-TLB, L1D
                // or L2 contents or an MSHR or walker frees (skipping the retry is
                // exact: a failed attempt changes nothing)
                if u.blk_epoch == self.mem_epoch() && now < u.blk_until {
                    return false;
                }
                let (pc, addr, store) = (u.pc, u.addr, u.is_store);
                match self.data_access(pc, addr, store, counting) {
                    Ok(r) => r,
                    Err(cause) => {
                        let e = self.mem_epoch();
                        let t = self
                            .dtlb
                            .next_release(now)
                            .min(self.l1d.next_release(now))
                            .min(self.l2.next_release(now));
                        let u = &mut self.rob[i];
                        u.blk_epoch = e;
                        u.blk_until = t;
                        u.blk = cause;
                        return false;
                    }
                }
            }
            c => (now + self.g.lat[class_idx(c)] as u64, now, Level::Hit, 0),
        };
        let u = &mut self.rob[i];
        u.done = done;
        u.tlb_until = tlb_until;
        u.level = level;
        u.miss |= miss;
        if counting {
            u.counted |= miss & (M_L1D | M_L2D | M_DTLB) | if u.longlat { C_LONGLAT } else { 0 };
        }
        debug_assert!(done > now, "every latency is at least one cycle");
        if u.dsts != [0; 2] {
            self.wake.push(Reverse((done, seq)));
        }
        if u.longlat && counting {
            self.stats.all.longlat += 1;
            self.stats.all.longlat_cycles += self.g.lat[class_idx(u.class)] as u64 - 1;
        }
        if u.mispred && !u.wp {
            self.resolve = Some((seq, done));
        }
        true
    }

    /// Changes whenever the D-TLB, L1D or L2 contents change (a fill).
    #[inline]
    fn mem_epoch(&self) -> u64 {
        self.dtlb.fills() + self.l1d.fills() + self.l2.fills()
    }

    /// A load or store: D-TLB, then L1D, L2, memory. Returns (done, tlb_until,
    /// level waited on, miss bits), or, when a needed walker or MSHR is busy, the
    /// miss type it waits for (`Dtlb`, `L1d`, `L2d`).
    fn data_access(
        &mut self,
        pc: u64,
        addr: u64,
        store: bool,
        counting: bool,
    ) -> Result<(u64, u64, Level, u8), HeadCause> {
        let now = self.now;
        let mut miss = 0u8;
        // resources first, so that a load that cannot start changes nothing
        let tlb_miss = !self.ideal.dtlb && self.dtlb.probe(addr) == Lookup::Miss;
        if tlb_miss && !self.dtlb.mshr_free(now) {
            return Err(HeadCause::Dtlb);
        }
        let l1_miss = !self.ideal.l1d && self.l1d.probe(addr) == Lookup::Miss;
        let l2_miss = l1_miss && !self.ideal.l2d && self.l2.probe(addr) == Lookup::Miss;
        let cache_ok =
            !l1_miss || (self.l1d.mshr_free(now) && (!l2_miss || self.l2.mshr_free(now)));
        if !cache_ok && !store {
            return Err(if l2_miss {
                HeadCause::L2d
            } else {
                HeadCause::L1d
            });
        }
        // D-TLB
        let mut t0 = now;
        if !self.ideal.dtlb {
            match self.dtlb.access(addr).0 {
                Lookup::Present { ready, .. } => t0 = t0.max(ready),
                Lookup::Miss => {
                    t0 = now + self.g.dtlb_lat;
                    self.dtlb.mshr_alloc(now, t0);
                    self.dtlb.fill(addr, t0, Level::Next, false);
                    miss |= M_DTLB;
                }
            }
        }
        let l1 = self.g.l1d_lat;
        let (arrival, level) = if self.ideal.l1d {
            Self::ideal_l1_touch(&mut self.l1d, &mut self.l2, addr, t0 + l1);
            (t0 + l1, Level::Hit)
        } else if store && !cache_ok {
            (t0 + l1, Level::Hit)
        } else {
            let (look, first_use) = self.l1d.access(addr);
            let r = match look {
                Lookup::Present { ready, level } => {
                    if ready > t0 + l1 {
                        if self.l1d.filled_by_prefetch(addr) {
                            miss |= M_LATE_PF;
                        }
                        (ready, level)
                    } else {
                        (t0 + l1, Level::Hit)
                    }
                }
                Lookup::Miss => {
                    miss |= M_L1D;
                    let (arr, lvl) = self.l2_access(addr, t0 + l1, &mut miss);
                    self.l1d.mshr_alloc(now, arr);
                    self.l1d.fill(addr, arr, lvl, false);
                    if miss & M_LATE_PF != 0 {
                        // merged with a prefetch's line in flight in the L2:
                        // the loads that merge with this fill wait on it too
                        self.l1d.set_prefetch_origin(addr, true);
                    }
                    (arr, lvl)
                }
            };
            if !store && self.pf.enabled() {
                self.prefetch(pc, addr, look == Lookup::Miss, first_use);
            }
            r
        };
        if counting {
            let a = &mut self.stats.all;
            a.dtlb += (miss & M_DTLB != 0) as u64;
            a.l1d += (miss & M_L1D != 0) as u64;
            a.l2d += (miss & M_L2D != 0) as u64;
        }
        let done = if store {
            t0 + self.g.lat[class_idx(OpClass::Store)] as u64
        } else {
            arrival
        };
        Ok((done, t0, level, miss))
    }

    /// An idealised L1 access (`ideal.l1d`, `ideal.l1i`: `l1` is that cache):
    /// it hits, but what a real L1 would miss is installed in it and in the
    /// unified L2 ([`Cache::ideal_touch`]), so that a perfect L1 does not
    /// leave the L2 to the other side. No prefetch is trained.
    fn ideal_l1_touch(l1: &mut Cache, l2: &mut Cache, addr: u64, ready: u64) {
        if l1.ideal_touch(addr, ready) {
            l2.ideal_touch(addr, ready);
        }
    }

    /// An L1 miss reaching the L2 at `t`: returns the arrival cycle at L1 and the
    /// level it comes from; allocates an L2 MSHR on an L2 miss.
    fn l2_access(&mut self, addr: u64, t: u64, miss: &mut u8) -> (u64, Level) {
        let hit_at = t + self.g.l2_lat;
        if self.ideal.l2d {
            self.l2.ideal_touch(addr, hit_at);
            return (hit_at, Level::Next);
        }
        match self.l2.access(addr).0 {
            Lookup::Present { ready, level } => {
                let r = from_l2(hit_at, ready, level);
                if r.1 == Level::Memory && self.l2.filled_by_prefetch(addr) {
                    *miss |= M_LATE_PF;
                }
                r
            }
            Lookup::Miss => {
                *miss |= M_L2D;
                let arr = hit_at + self.g.mem_lat;
                self.l2.mshr_alloc(self.now, arr);
                self.l2.fill(addr, arr, Level::Memory, false);
                (arr, Level::Memory)
            }
        }
    }

    fn prefetch(&mut self, pc: u64, addr: u64, miss: bool, first_use: bool) {
        let mut buf = std::mem::take(&mut self.pf_buf);
        self.pf.observe(pc, addr, miss, first_use, &mut buf);
        let now = self.now;
        for &a in &buf {
            if self.l1d.probe(a) != Lookup::Miss || !self.l1d.mshr_free(now) {
                continue;
            }
            let t = now + self.g.l1d_lat + self.g.l2_lat;
            // the prefetch merges with a demand miss in flight in the L2:
            // the loads that merge with its fill wait on a demand's request
            let mut on_demand = false;
            let (arr, lvl) = if self.ideal.l2d {
                self.l2.ideal_touch(a, t);
                (t, Level::Next)
            } else {
                match self.l2.access(a).0 {
                    Lookup::Present { ready, level } => {
                        let r = from_l2(t, ready, level);
                        on_demand = r.1 == Level::Memory && !self.l2.filled_by_prefetch(a);
                        r
                    }
                    Lookup::Miss => {
                        if !self.l2.mshr_free(now) {
                            continue;
                        }
                        let arr = t + self.g.mem_lat;
                        self.l2.mshr_alloc(now, arr);
                        // marked as a prefetch's, for `Stats::head_waits`
                        // (the L2's first-use bit is read by nothing)
                        self.l2.fill(a, arr, Level::Memory, true);
                        (arr, Level::Memory)
                    }
                }
            };
            self.l1d.mshr_alloc(now, arr);
            self.l1d.fill(a, arr, lvl, true);
            if on_demand {
                self.l1d.set_prefetch_origin(a, false);
            }
        }
        self.pf_buf = buf;
    }

    /// The correct-path branch `seq` was found mispredicted: squash everything
    /// younger and restart fetch at its outcome.
    fn squash_after(&mut self, seq: u64, counting: bool) {
        let mut branches = 0;
        while self.tail > seq + 1 {
            self.tail -= 1;
            let u = self.rob[self.slot(self.tail)];
            debug_assert!(u.wp);
            for k in (0..2).rev() {
                if u.dsts[k] != 0 {
                    self.producer[u.dsts[k] as usize] = u.prev[k];
                }
            }
            branches += u.kind.is_some() as u32;
            self.lsq -= u.is_mem() as u32;
            let slot = self.slot(self.tail);
            self.ready[slot >> 6] &= !(1u64 << (slot & 63));
            self.waiting[slot] = 0;
            self.deps[slot].clear();
        }
        // the survivors forget their squashed consumers; squashed producers wake nobody
        // (every producer with a pending wake-up is in the ROB: see `execute`)
        for s in self.head..=seq {
            let i = self.slot(s);
            let d = &mut self.deps[i];
            while d.last().is_some_and(|&c| c > seq) {
                d.pop();
            }
        }
        self.wake.retain(|&Reverse((_, p))| p <= seq);
        for u in self.fq.drain(..) {
            debug_assert!(u.wp);
            branches += u.kind.is_some() as u32;
        }
        self.decoded = 0;
        self.branches_in_flight -= branches;
        self.squashed_pending += branches;
        let b = self.rob[self.slot(seq)];
        self.repair_prediction_state(&b, b.actual_next);
        self.fetch_pc = b.actual_next;
        self.wp = false;
        self.reset_fetch_access();
        self.fe_blocked = true;
        self.ev.squash = Squash::Mispredict((seq % self.g.rob) as u16);
        if counting {
            self.stats.all.mispredicts += 1;
            let i = self.slot(seq);
            self.rob[i].counted |= C_MISPRED;
        }
    }

    /// Restore the global history and the RAS to just after branch `b`, which now
    /// goes to `next`.
    fn repair_prediction_state(&mut self, b: &Uop, next: u64) {
        self.ghr = b.ghr;
        if b.kind == Some(BranchKind::Conditional) {
            self.ghr = self.ghr << 1 | (next != b.fall()) as u64;
        }
        self.ras.restore(b.ras);
        match b.kind {
            Some(BranchKind::DirectCall) | Some(BranchKind::IndirectCall) => {
                self.ras.push(b.fall())
            }
            Some(BranchKind::Return) => {
                self.ras.pop();
            }
            _ => {}
        }
    }

    fn reset_fetch_access(&mut self) {
        self.fline_ok = NONE;
        self.fwait_line = NONE;
        self.fwait_until = 0;
        self.fwait_itlb_until = 0;
        self.fmiss = 0;
        self.fcounted = 0;
    }

    // -------------------------------------------------------------- dispatch

    fn dispatch(&mut self, counting: bool) {
        let mut n = 0u8;
        while (n as u32) < self.g.dispatch_w && self.decoded > 0 {
            let f = &self.fq[0];
            if f.fetch_cycle + self.g.dispatch_delay > self.now
                || self.tail - self.head == self.g.rob
                || (f.is_mem() && self.lsq == self.g.lsq)
            {
                break;
            }
            let mut u = self.fq.pop_front().expect("decoded entry");
            self.decoded -= 1;
            let seq = self.tail;
            let mut waiting = 0u8;
            for k in 0..4 {
                let r = u.srcs[k];
                let p = if r == 0 {
                    NONE
                } else {
                    self.producer[r as usize]
                };
                u.src_prod[k] = p;
                // a producer still in the ROB and not complete: wait for its wake-up
                if p != NONE && p >= self.head && self.rob[self.slot(p)].done > self.now {
                    let i = self.slot(p);
                    self.deps[i].push(seq);
                    waiting += 1;
                }
            }
            for k in 0..2 {
                let d = u.dsts[k];
                if d != 0 {
                    u.prev[k] = self.producer[d as usize];
                    self.producer[d as usize] = seq;
                }
            }
            u.done = NONE;
            if u.kind.is_some() {
                self.ev.dispatched_branches |= 1 << n;
            }
            if u.miss & M_IWAIT != 0 {
                self.ev.dispatched_imiss |= 1 << n;
            }
            self.lsq += u.is_mem() as u32;
            if counting && u.wp {
                self.stats.wrong_path_dispatched += 1;
            }
            let i = self.slot(seq);
            self.rob[i] = u;
            self.tail += 1;
            let slot = self.slot(seq);
            self.waiting[slot] = waiting;
            self.deps[slot].clear();
            if waiting == 0 {
                self.set_ready(seq);
            }
            n += 1;
        }
        self.ev.dispatched = n;
    }

    // ---------------------------------------------------------------- decode

    fn decode(&mut self, counting: bool) {
        let mut n = 0;
        while n < self.g.decode_w && self.decoded < self.fq.len() {
            let i = self.decoded;
            if self.fq[i].fetch_cycle + self.g.decode_delay > self.now {
                break;
            }
            self.decoded += 1;
            n += 1;
            let u = self.fq[i];
            if u.redirect != 0 && u.redirect != u.pred_next {
                self.decode_redirect(i, counting);
                break;
            }
        }
    }

    /// The branch at frontend position `i` had its target computed at decode.
    fn decode_redirect(&mut self, i: usize, counting: bool) {
        let mut branches = 0u8;
        while self.fq.len() > i + 1 {
            let y = self.fq.pop_back().expect("younger entry");
            branches += y.kind.is_some() as u8;
            if !y.wp {
                self.replay.push_front(y.instr);
            }
        }
        let u = &mut self.fq[i];
        let r = u.redirect;
        u.pred_next = r;
        if !u.wp {
            u.mispred = r != u.actual_next;
        }
        let u = *u;
        self.wp = u.wp || r != u.actual_next;
        self.repair_prediction_state(&u, r);
        self.fetch_pc = r;
        self.reset_fetch_access();
        self.fe_blocked = true;
        self.branches_in_flight -= branches as u32;
        self.squashed_pending += branches as u32;
        self.ev.fe_redirect = true;
        self.ev.fe_squash = branches;
        if counting {
            self.stats.fe_redirects += 1;
        }
    }

    // ----------------------------------------------------------------- fetch

    /// Take the next committed-path instruction from the source if none is
    /// waiting; `MOVED` (the layout shifts a nonzero) moves it
    /// ([`relocate`]). A compile-time switch, so that a run without a layout
    /// runs the fetch stage without a trace of it (docs/performance.md).
    fn peek<const MOVED: bool>(&mut self) -> Result<(), SimError> {
        if self.peeked.is_none() && !self.src_done {
            self.peeked = self.src.next()?;
            self.src_done = self.peeked.is_none();
            if MOVED {
                self.relocate_peeked()?;
            }
        }
        Ok(())
    }

    /// The wrong-path instruction at (moved) `pc`: asked of the source at
    /// its own address, then moved ([`relocate`]). A wrong path is never
    /// committed, so an address that wraps just wraps.
    fn moved_wrong_path(&mut self, pc: u64) -> Instr {
        let (cs, ds) = (self.g.code_shift, self.g.data_shift);
        let mut i = self.src.wrong_path(pc.wrapping_sub(cs));
        relocate(&mut i, cs, ds);
        i
    }

    /// The peeked instruction moved by the layout ([`relocate`]).
    fn relocate_peeked(&mut self) -> Result<(), SimError> {
        let (cs, ds) = (self.g.code_shift, self.g.data_shift);
        if let Some(i) = &mut self.peeked {
            let at = *i;
            if relocate(i, cs, ds) {
                self.peeked = None;
                return Err(self.wrapped(at));
            }
        }
        Ok(())
    }

    /// The error for committed-path instruction `i` (as the source gave
    /// it), whose relocation ([`relocate`]) carries an address past 2^64.
    #[cold]
    #[inline(never)]
    fn wrapped(&self, i: Instr) -> SimError {
        let (cs, ds) = (self.g.code_shift, self.g.data_shift);
        let by = if self.g.layout_seed != 0 {
            format!(
                "by the shifts layout.seed = {} draws (code {cs:#x}, data {ds:#x}): try another seed",
                self.g.layout_seed
            )
        } else {
            format!(
                "by layout.code_shift {cs:#x} and layout.data_shift {ds:#x}: give smaller shifts"
            )
        };
        SimError::Config(format!(
            "{}: the instruction at {:#x} (target {:#x}, load {:#x}, store {:#x}) passes the \
             64-bit address space moved {by}",
            self.src.name(),
            i.pc,
            i.target,
            i.load_addr,
            i.store_addr,
        ))
    }

    /// The next committed-path instruction, without taking it.
    fn next_committed<const MOVED: bool>(&mut self) -> Result<Option<Instr>, SimError> {
        if let Some(i) = self.replay.front() {
            return Ok(Some(*i));
        }
        self.peek::<MOVED>()?;
        Ok(self.peeked)
    }

    fn take_committed(&mut self) {
        if self.replay.pop_front().is_none() {
            self.peeked = None;
        }
    }

    /// Start the access for the line at `pc` (I-TLB, L1I, L2, memory). False when
    /// no MSHR or walker is free (fetch retries next cycle).
    fn start_fetch_access(&mut self, pc: u64, counting: bool) -> bool {
        let now = self.now;
        let tlb_miss = !self.ideal.itlb && self.itlb.probe(pc) == Lookup::Miss;
        if tlb_miss && !self.itlb.mshr_free(now) {
            return false;
        }
        let l1_miss = !self.ideal.l1i && self.l1i.probe(pc) == Lookup::Miss;
        let l2_miss = l1_miss && !self.ideal.l2i && self.l2.probe(pc) == Lookup::Miss;
        if l1_miss && !self.l1i.mshr_free(now) {
            return false;
        }
        if l2_miss && !self.l2.mshr_free(now) {
            // every L2 MSHR is busy: with none held by an abandoned instruction
            // miss they are the data side's, and fetch waits to start its own
            // L2 miss on the path being fetched: `l2i`, as a load waiting for
            // an MSHR reports its miss (a squashed path's miss among them keeps
            // the contract's `none`)
            if self.il2_until <= now {
                self.ev.fetch_stall = FetchStall::L2i;
            }
            return false;
        }
        let mut miss = 0u8;
        let mut t = now;
        if !self.ideal.itlb {
            match self.itlb.access(pc).0 {
                Lookup::Present { ready, .. } => t = t.max(ready),
                Lookup::Miss => {
                    t = now + self.g.itlb_lat;
                    self.itlb.mshr_alloc(now, t);
                    self.itlb.fill(pc, t, Level::Next, false);
                    miss |= M_ITLB;
                }
            }
        }
        let itlb_until = t;
        let mut kind = FetchStall::None;
        if self.ideal.l1i {
            Self::ideal_l1_touch(&mut self.l1i, &mut self.l2, pc, t);
        } else {
            match self.l1i.access(pc).0 {
                Lookup::Present { ready, level } => {
                    if ready > t {
                        kind = if level == Level::Memory {
                            FetchStall::L2i
                        } else {
                            FetchStall::L1i
                        };
                        t = ready;
                    }
                }
                Lookup::Miss => {
                    miss |= M_L1I;
                    let hit_at = t + self.g.l2_lat;
                    let (arr, lvl) = if self.ideal.l2i {
                        self.l2.ideal_touch(pc, hit_at);
                        (hit_at, Level::Next)
                    } else {
                        match self.l2.access(pc).0 {
                            Lookup::Present { ready, level } => from_l2(hit_at, ready, level),
                            Lookup::Miss => {
                                miss |= M_L2I;
                                let arr = hit_at + self.g.mem_lat;
                                self.l2.mshr_alloc(now, arr);
                                self.il2_until = self.il2_until.max(arr);
                                self.l2.fill(pc, arr, Level::Memory, false);
                                (arr, Level::Memory)
                            }
                        }
                    };
                    self.l1i.mshr_alloc(now, arr);
                    self.l1i.fill(pc, arr, lvl, false);
                    kind = if lvl == Level::Memory {
                        FetchStall::L2i
                    } else {
                        FetchStall::L1i
                    };
                    t = arr;
                }
            }
        }
        if counting {
            let a = &mut self.stats.all;
            a.itlb += (miss & M_ITLB != 0) as u64;
            a.l1i += (miss & M_L1I != 0) as u64;
            a.l2i += (miss & M_L2I != 0) as u64;
        }
        if t > now {
            miss |= M_IWAIT;
        }
        self.fcounted = if counting {
            miss & (M_L1I | M_L2I | M_ITLB)
        } else {
            0
        };
        self.fmiss = miss;
        self.fwait_line = pc >> self.g.line_shift;
        self.fwait_itlb_until = itlb_until;
        self.fwait_until = t;
        self.fwait_kind = kind;
        true
    }

    fn fetch<const MOVED: bool>(&mut self, counting: bool) -> Result<(), SimError> {
        if self.fe_blocked || self.fq.len() >= self.g.fq_cap {
            return Ok(());
        }
        if !self.wp && self.replay.is_empty() {
            self.peek::<MOVED>()?;
            if self.peeked.is_none() {
                return Ok(());
            }
        }
        let line = self.fetch_pc >> self.g.line_shift;
        if line != self.fline_ok {
            if line != self.fwait_line && !self.start_fetch_access(self.fetch_pc, counting) {
                return Ok(());
            }
            if self.now < self.fwait_until {
                self.ev.fetch_stall = if self.now < self.fwait_itlb_until {
                    FetchStall::Itlb
                } else {
                    self.fwait_kind
                };
                return Ok(());
            }
            self.fline_ok = line;
        }
        // deliver
        let mut n = 0;
        let mut fb = 0u8;
        while n < self.g.fetch_w && self.fq.len() < self.g.fq_cap {
            let pc = self.fetch_pc;
            if pc >> self.g.line_shift != line {
                break;
            }
            let instr = if self.wp {
                if MOVED {
                    self.moved_wrong_path(pc)
                } else {
                    self.src.wrong_path(pc)
                }
            } else {
                match self.next_committed::<MOVED>()? {
                    Some(i) => i,
                    None => break,
                }
            };
            if instr.branch.is_some()
                && self.branches_in_flight + self.squashed_pending >= self.g.max_branches
            {
                break;
            }
            let actual_next = if self.wp {
                0
            } else {
                self.take_committed();
                match self.next_committed::<MOVED>()? {
                    Some(nx) => nx.pc,
                    None => instr.next_pc(),
                }
            };
            let mut u = self.make_uop(instr, actual_next);
            if n == 0 {
                u.miss |= self.fmiss;
                u.counted |= self.fcounted;
                self.fmiss = 0;
                self.fcounted = 0;
            }
            if u.kind.is_some() {
                self.predict(&mut u);
                fb += 1;
                self.branches_in_flight += 1;
            } else {
                u.pred_next = if self.wp { u.fall() } else { actual_next };
            }
            if !self.wp && u.pred_next != actual_next {
                self.wp = true;
                if u.kind.is_some() {
                    u.mispred = true;
                }
            }
            if counting && u.wp {
                self.stats.wrong_path_fetched += 1;
            }
            self.fetch_pc = u.pred_next;
            self.fq.push_back(u);
            n += 1;
            if u.pred_next != u.fall() {
                break;
            }
        }
        self.ev.fetched_branches = fb;
        Ok(())
    }

    fn make_uop(&self, i: Instr, actual_next: u64) -> Uop {
        let longlat = match i.class {
            OpClass::Load | OpClass::Store | OpClass::Branch => false,
            c => self.g.lat[class_idx(c)] >= self.g.longlat_min,
        };
        let is_store = i.class == OpClass::Store;
        Uop {
            pc: i.pc,
            size: i.size.max(1),
            class: if i.branch.is_some() && i.class != OpClass::Load && i.class != OpClass::Store {
                OpClass::Branch
            } else {
                i.class
            },
            kind: i.branch,
            wp: self.wp,
            longlat,
            srcs: i.srcs,
            dsts: i.dsts,
            addr: if is_store { i.store_addr } else { i.load_addr },
            is_store,
            fetch_cycle: self.now,
            actual_next,
            ghr: self.ghr,
            ras: self.ras.checkpoint(),
            instr: i,
            ..Uop::empty()
        }
    }

    /// Fetch-time prediction of branch `u` (sets `pred_next`, and `redirect` when
    /// decode will find a direct target the BTB did not supply).
    fn predict(&mut self, u: &mut Uop) {
        let fall = u.fall();
        let kind = u.kind.expect("branch");
        let target = u.instr.target;
        if self.ideal.bpred && !self.wp {
            u.pred_next = u.actual_next;
            let taken = u.actual_next != fall;
            if kind == BranchKind::Conditional {
                u.dir = self.hyb.predict(u.pc, self.ghr);
                self.ghr = self.ghr << 1 | taken as u64;
            }
            match kind {
                BranchKind::DirectCall | BranchKind::IndirectCall => self.ras.push(fall),
                BranchKind::Return => {
                    self.ras.pop();
                }
                _ => {}
            }
            return;
        }
        let btb = self.btb.lookup(u.pc);
        u.pred_next = match kind {
            BranchKind::Conditional => {
                let d = self.hyb.predict(u.pc, self.ghr);
                u.dir = d;
                self.ghr = self.ghr << 1 | d.taken as u64;
                if !d.taken {
                    fall
                } else if let Some(t) = btb {
                    t
                } else {
                    u.redirect = target;
                    fall
                }
            }
            BranchKind::DirectJump | BranchKind::DirectCall => match btb {
                Some(t) => t,
                None => {
                    u.redirect = target;
                    fall
                }
            },
            BranchKind::IndirectJump | BranchKind::IndirectCall | BranchKind::Other => {
                btb.unwrap_or(fall)
            }
            BranchKind::Return => {
                let r = self.ras.pop();
                if r != 0 {
                    r
                } else {
                    btb.unwrap_or(fall)
                }
            }
        };
        if matches!(kind, BranchKind::DirectCall | BranchKind::IndirectCall) {
            self.ras.push(fall);
        }
    }

    /// A description of the pipeline state (for the watchdog).
    pub fn dump(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "no commit for {} cycles at cycle {}: committed {}, ROB {} (head seq {}, tail seq {}), \
             IQ {}, LSQ {}, frontend {} ({} decoded), fetch pc {:#x} wrong_path {} wait_until {} \
             kind {:?}, branches in flight {}, resolve {:?}, source done {}",
            self.now - self.last_commit,
            self.now,
            self.committed,
            self.tail - self.head,
            self.head,
            self.tail,
            (self.head..self.tail)
                .filter(|&q| self.rob[self.slot(q)].done == NONE)
                .count(),
            self.lsq,
            self.fq.len(),
            self.decoded,
            self.fetch_pc,
            self.wp,
            self.fwait_until,
            self.fwait_kind,
            self.branches_in_flight,
            self.resolve,
            self.src_done
        );
        for seq in self.head..self.tail.min(self.head + 8) {
            let u = &self.rob[self.slot(seq)];
            let _ = writeln!(
                s,
                "  rob seq {seq} pc {:#x} {:?} wp {} done {} tlb_until {} level {:?} srcs {:?}",
                u.pc, u.class, u.wp, u.done as i64, u.tlb_until, u.level, u.src_prod
            );
        }
        s
    }
}

/// An access reaching the L2 at `at` finds its line present (filled by
/// `ready`, from `level`): the arrival cycle and the level waited on. The L2's
/// own hit, unless the line is still on its way from memory (then memory, as
/// for the miss that fetches it). Data misses (`l2_access`), prefetches
/// (`prefetch`) and instruction fetches (`start_fetch_access`) all decide so.
fn from_l2(at: u64, ready: u64, level: Level) -> (u64, Level) {
    if ready > at && level == Level::Memory {
        (ready, Level::Memory)
    } else {
        (at.max(ready), Level::Next)
    }
}

/// One committed instruction folded into a stream digest (a multiply-xorshift
/// mix of its fields: order-sensitive, and any one field changed changes it).
fn stream_mix(h: u64, pc: u64, next: u64, addr: u64, class: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut x = h ^ pc.wrapping_mul(K) ^ class;
    x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ next;
    x = (x ^ (x >> 32)).wrapping_mul(0x94d0_49bb_1331_11eb) ^ addr.rotate_left(17);
    x ^ (x >> 31)
}
