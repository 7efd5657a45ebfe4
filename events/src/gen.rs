//! Random legal stimulus: bundles that a real out-of-order core could produce.
//!
//! [`Generator`] models a tiny core at the level of the bundle:
//!
//! - a **frontend**: a queue of fetched, not yet dispatched instructions (each a
//!   branch or not, predicted right or wrong, I-miss-marked or not). Fetch groups
//!   end at a taken branch, at the fetch width, when the queue is full, or before a
//!   branch for which no FMT row would be free after this cycle's retirement.
//!   Fetch stalls (`l1i`, `l2i`, `itlb`, an I-TLB miss possibly followed by an
//!   I-cache miss) are multi-cycle episodes; they happen on any path, wrong paths
//!   and the refill after a squash included (with a boosted probability on the
//!   first fetch after a restart). An episode interrupted by a squash or redirect
//!   either ends or keeps the frontend blocked while reporting `none` (a miss of a
//!   squashed path). The first instruction fetched after an episode is I-miss-marked.
//!   An instruction can dispatch `frontend_depth` cycles after its fetch at the
//!   earliest (so never in its fetch cycle: rule 7).
//! - **decode-time redirects**: a random instruction of the queue (this cycle's
//!   fetch included) finds its target wrong; everything younger is squashed,
//!   `fe_squash` counts the branches among them (0 or more).
//! - a **ROB** of `rob_entries` with ids allocated in order modulo `rob_entries`;
//!   every dispatched instruction gets a completion time and the cause its head
//!   waits on (`other` for short execution, `l1d`, `l2d`, `dtlb` (possibly
//!   followed by `l2d`), `longlat`, or a long `other` episode); in-order retirement
//!   of up to `retire_width` completed instructions. Long head episodes fill the ROB
//!   behind them (ROB-full episodes with each head cause).
//! - **branch resolution out of order**: each branch resolves a random number of
//!   cycles after its dispatch; a mispredicted one then emits `mispredict(x)` (the
//!   oldest of the cycle). An older branch may resolve after a younger one; branches
//!   on a wrong path mispredict too. A branch commits at the earliest the cycle after
//!   it resolves.
//! - **flushes** `flush(x)` of a random live entry (branch or not), **`count_enable`**
//!   off regions (warm-up and random ones), and **lulls** (no fetch, no dispatch) that
//!   make activity bursty.
//! - **backend-full episodes** (a full load/store or issue queue):
//!   `backend_full` is reported, and dispatch stops in about half of the
//!   cycles (the next instruction needs an entry) while fetch and retirement
//!   go on.
//!
//! It only emits legal bundles (spec section 6). In debug builds every bundle is
//! checked against an independent [`ProtocolState`] before it is emitted, and the
//! generator's own occupancies are compared with the tracker's.
//!
//! Deterministic per seed (xoshiro256++). Per cycle it draws two random words for
//! the cycle's events and one per fetched instruction (and, only with a
//! non-zero `backend_full` rate, one more: so that a configuration without
//! backend-full episodes gives the streams it gave before the knob existed).

mod coverage;
mod illegal;
mod protocol;

#[cfg(test)]
mod tests;

pub use coverage::Coverage;
pub use illegal::{mutate_illegal, random_bundle};
pub use protocol::{ProtocolState, TrackedRow, Violation};
/// The random number generator of this module (xoshiro256++), for callers of
/// [`mutate_illegal`] and [`random_bundle`] that do not depend on `rand` themselves.
pub use rand_xoshiro::Xoshiro256PlusPlus as GenRng;

/// A [`GenRng`] seeded from `seed`.
pub fn seeded_rng(seed: u64) -> GenRng {
    GenRng::seed_from_u64(seed)
}

use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::{CycleEvents, FetchStall, HeadCause, ParamError, Params, Squash};

/// An inclusive range of cycles `[min, max]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub min: u32,
    pub max: u32,
}

impl Span {
    pub const fn new(min: u32, max: u32) -> Self {
        Self { min, max }
    }
}

/// A random episode: its probability per opportunity and its length in cycles.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// Probability per opportunity (per fetch attempt, per dispatched
    /// instruction or per cycle; see the knob).
    pub rate: f64,
    /// Length in cycles.
    pub len: Span,
}

impl Episode {
    pub const fn new(rate: f64, min: u32, max: u32) -> Self {
        Self {
            rate,
            len: Span::new(min, max),
        }
    }
    pub const fn never() -> Self {
        Self::new(0.0, 1, 1)
    }
}

/// The knobs of the [`Generator`]. Probabilities are quantised to 1/65536.
///
/// In JSON/TOML, a knob left out takes its [`realistic`](Self::realistic) value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GenConfig {
    /// Fraction of fetched instructions that are branches.
    pub branch_frac: f64,
    /// Fraction of branches that are taken (a taken branch ends the fetch group).
    pub taken_frac: f64,
    /// Probability that a branch is mispredicted (decided at fetch; `mispredict(x)`
    /// is emitted when it resolves). Wrong-path branches mispredict too.
    pub mispredict_rate: f64,
    /// Cycles from a branch's dispatch to its resolution (min 1).
    pub resolve_latency: Span,
    /// Cycles from a normal instruction's dispatch to its completion (min 1).
    pub exec_latency: Span,
    /// Cycles from fetch to the earliest dispatch (min 1).
    pub frontend_depth: u32,
    /// Capacity of the fetch queue in instructions (min 1).
    pub fetch_queue: u32,
    /// Cycles without fetch after a squash or redirect (the redirect bubble).
    pub restart_delay: u32,
    /// I-cache (L1 miss, L2 hit) episodes: rate per fetch attempt, length.
    pub l1i: Episode,
    /// L2 instruction miss episodes: rate per fetch attempt, length.
    pub l2i: Episode,
    /// I-TLB miss episodes: rate per fetch attempt, length.
    pub itlb: Episode,
    /// Probability that an I-TLB miss is followed at once by an I-cache miss
    /// (`l1i` or `l2i`, half each).
    pub itlb_then_icache: f64,
    /// Probability that the first fetch attempt after a restart (squash, redirect)
    /// misses, kind chosen uniformly among `l1i`, `l2i`, `itlb` with their lengths.
    pub imiss_after_restart: f64,
    /// Probability that a squash or redirect during an I-miss episode leaves the
    /// frontend blocked (reporting `none`) for the rest of the episode.
    pub blocked_after_squash: f64,
    /// Per dispatched non-branch instruction: probability that it blocks the ROB
    /// head with an L1 D-miss, and how long from its dispatch.
    pub head_l1d: Episode,
    /// ... with an L2 D-miss.
    pub head_l2d: Episode,
    /// ... with a D-TLB miss.
    pub head_dtlb: Episode,
    /// Probability that a D-TLB miss is followed by an L2 D-miss (`head_l2d` length).
    pub dtlb_then_l2d: f64,
    /// ... with a long-latency operation.
    pub head_longlat: Episode,
    /// ... with another long wait (serialising instruction, store buffer).
    pub head_other: Episode,
    /// Probability per cycle of a decode-time redirect (when the fetch queue is not empty).
    pub redirect_rate: f64,
    /// Probability per cycle of a `flush(x)` of a random live ROB entry.
    pub flush_rate: f64,
    /// `count_enable` off regions: rate per counted cycle, length.
    pub count_off: Episode,
    /// `count_enable` is off for the first `warmup` cycles.
    pub warmup: u32,
    /// Lulls (no fetch, no dispatch, retirement goes on): rate per cycle, length.
    /// Together with full-width fetch otherwise, this makes activity bursty.
    pub lull: Episode,
    /// Backend-full episodes (a full load/store or issue queue: `backend_full`
    /// is reported, dispatch stops in about half of the cycles, fetch and
    /// retirement go on): rate per cycle, length.
    pub backend_full: Episode,
}

impl Default for GenConfig {
    fn default() -> Self {
        Self::realistic()
    }
}

impl GenConfig {
    /// The benchmark mix: about one branch in six instructions, a misprediction
    /// every ~100 instructions (6% of branches), occasional I-miss episodes and
    /// long D-misses that fill the ROB, rare redirects and flushes, counting on.
    pub fn realistic() -> Self {
        Self {
            branch_frac: 1.0 / 6.0,
            taken_frac: 0.6,
            mispredict_rate: 0.06,
            resolve_latency: Span::new(3, 25),
            exec_latency: Span::new(1, 4),
            frontend_depth: 4,
            fetch_queue: 32,
            restart_delay: 1,
            l1i: Episode::new(0.006, 8, 14),
            l2i: Episode::new(0.0008, 60, 200),
            itlb: Episode::new(0.0004, 20, 40),
            itlb_then_icache: 0.2,
            imiss_after_restart: 0.03,
            blocked_after_squash: 0.5,
            head_l1d: Episode::new(0.03, 6, 14),
            head_l2d: Episode::new(0.002, 120, 300),
            head_dtlb: Episode::new(0.0008, 20, 50),
            dtlb_then_l2d: 0.3,
            head_longlat: Episode::new(0.004, 15, 45),
            head_other: Episode::new(0.0005, 20, 60),
            redirect_rate: 0.004,
            flush_rate: 0.0005,
            count_off: Episode::never(),
            warmup: 0,
            lull: Episode::new(0.01, 1, 8),
            backend_full: Episode::never(),
        }
    }

    /// Everything often, to reach every behaviour of the contract quickly (with any
    /// parameters): many short-lived branches and mispredictions, frequent I-miss
    /// episodes of each kind, long head episodes of each cause that fill the ROB,
    /// redirects, flushes, `count_enable` off regions, lulls.
    pub fn stress() -> Self {
        Self {
            branch_frac: 0.3,
            taken_frac: 0.5,
            mispredict_rate: 0.12,
            resolve_latency: Span::new(1, 40),
            exec_latency: Span::new(1, 6),
            frontend_depth: 1,
            fetch_queue: 16,
            restart_delay: 0,
            l1i: Episode::new(0.03, 1, 24),
            l2i: Episode::new(0.015, 1, 70),
            itlb: Episode::new(0.015, 1, 30),
            itlb_then_icache: 0.4,
            imiss_after_restart: 0.25,
            blocked_after_squash: 0.5,
            head_l1d: Episode::new(0.02, 2, 60),
            head_l2d: Episode::new(0.01, 10, 150),
            head_dtlb: Episode::new(0.01, 5, 80),
            dtlb_then_l2d: 0.5,
            head_longlat: Episode::new(0.01, 5, 80),
            head_other: Episode::new(0.01, 5, 80),
            redirect_rate: 0.03,
            flush_rate: 0.01,
            count_off: Episode::new(0.004, 1, 60),
            warmup: 20,
            lull: Episode::new(0.02, 1, 12),
            backend_full: Episode::new(0.003, 1, 40),
        }
    }

    /// Full tables at any size: nearly every instruction a branch, branches
    /// that resolve late and rarely mispredict, and long head stalls, so that
    /// the unresolved branches outnumber the rows (at 64 to 256 rows with a ROB
    /// of twice as many entries) and fetch waits for a free row; with bursts
    /// of everything else the other presets do (the corner that `realistic`
    /// and `stress` reach only at 32 rows or fewer).
    pub fn fill() -> Self {
        Self {
            branch_frac: 0.9,
            taken_frac: 0.3,
            mispredict_rate: 0.01,
            resolve_latency: Span::new(10, 150),
            exec_latency: Span::new(1, 6),
            head_l2d: Episode::new(0.005, 100, 300),
            head_longlat: Episode::new(0.01, 20, 200),
            // dispatch stalls of their own would keep the table from filling
            backend_full: Episode::never(),
            ..Self::stress()
        }
    }

    /// A preset by name: `realistic`, `stress` or `fill`.
    pub fn preset(name: &str) -> Option<Self> {
        match name {
            "realistic" => Some(Self::realistic()),
            "stress" => Some(Self::stress()),
            "fill" => Some(Self::fill()),
            _ => None,
        }
    }

    /// Check every knob (probabilities in `[0, 1]`, spans ordered, latencies >= 1).
    pub fn validate(&self) -> Result<(), GenError> {
        let bad = |knob: &'static str, reason: String| Err(GenError::Config { knob, reason });
        let probs = [
            ("branch_frac", self.branch_frac),
            ("taken_frac", self.taken_frac),
            ("mispredict_rate", self.mispredict_rate),
            ("l1i.rate", self.l1i.rate),
            ("l2i.rate", self.l2i.rate),
            ("itlb.rate", self.itlb.rate),
            ("itlb_then_icache", self.itlb_then_icache),
            ("imiss_after_restart", self.imiss_after_restart),
            ("blocked_after_squash", self.blocked_after_squash),
            ("head_l1d.rate", self.head_l1d.rate),
            ("head_l2d.rate", self.head_l2d.rate),
            ("head_dtlb.rate", self.head_dtlb.rate),
            ("dtlb_then_l2d", self.dtlb_then_l2d),
            ("head_longlat.rate", self.head_longlat.rate),
            ("head_other.rate", self.head_other.rate),
            ("redirect_rate", self.redirect_rate),
            ("flush_rate", self.flush_rate),
            ("count_off.rate", self.count_off.rate),
            ("lull.rate", self.lull.rate),
            ("backend_full.rate", self.backend_full.rate),
        ];
        for (knob, p) in probs {
            if !(0.0..=1.0).contains(&p) {
                return bad(knob, format!("{p} is not a probability in [0, 1]"));
            }
        }
        let l1i_l2i_itlb = self.l1i.rate + self.l2i.rate + self.itlb.rate;
        if l1i_l2i_itlb > 1.0 {
            return bad(
                "l1i.rate",
                format!("l1i + l2i + itlb rates sum to {l1i_l2i_itlb} > 1"),
            );
        }
        let heads = self.head_l1d.rate
            + self.head_l2d.rate
            + self.head_dtlb.rate
            + self.head_longlat.rate
            + self.head_other.rate;
        if heads > 1.0 {
            return bad("head_l1d.rate", format!("head_* rates sum to {heads} > 1"));
        }
        let spans = [
            ("resolve_latency", self.resolve_latency),
            ("exec_latency", self.exec_latency),
            ("l1i.len", self.l1i.len),
            ("l2i.len", self.l2i.len),
            ("itlb.len", self.itlb.len),
            ("head_l1d.len", self.head_l1d.len),
            ("head_l2d.len", self.head_l2d.len),
            ("head_dtlb.len", self.head_dtlb.len),
            ("head_longlat.len", self.head_longlat.len),
            ("head_other.len", self.head_other.len),
            ("count_off.len", self.count_off.len),
            ("lull.len", self.lull.len),
            ("backend_full.len", self.backend_full.len),
        ];
        for (knob, s) in spans {
            if s.min == 0 || s.min > s.max || s.max > 1 << 20 {
                return bad(
                    knob,
                    format!(
                        "[{}, {}] must satisfy 1 <= min <= max <= 2^20",
                        s.min, s.max
                    ),
                );
            }
        }
        if self.frontend_depth == 0 || self.frontend_depth > 1 << 20 {
            return bad("frontend_depth", "must be in 1..=2^20".into());
        }
        if self.fetch_queue == 0 || self.fetch_queue > 4096 {
            return bad("fetch_queue", "must be in 1..=4096".into());
        }
        if self.restart_delay > 1 << 20 {
            return bad("restart_delay", "must be at most 2^20".into());
        }
        Ok(())
    }
}

/// Why a generator could not be built.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum GenError {
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("generator knob `{knob}` is illegal: {reason}")]
    Config { knob: &'static str, reason: String },
}

/// Events only the generator knows (the protocol cannot tell a wrong path).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenStats {
    /// `mispredict(x)` where an older branch that will mispredict is still
    /// unresolved (`x` is on a wrong path).
    pub wrong_path_mispredicts: u64,
    /// Fetch-stall cycles while fetching down a wrong path.
    pub wrong_path_stall_cycles: u64,
    /// Cycles the frontend was blocked by a miss of a squashed path (reported `none`).
    pub blocked_none_cycles: u64,
    /// Fetch groups cut short because no FMT row was free for the next branch.
    pub row_limited_fetches: u64,
}

/// A probability as a threshold on a 16-bit random number (`r < t`).
#[inline]
fn thr(p: f64) -> u32 {
    (p * 65536.0).round().clamp(0.0, 65536.0) as u32
}

#[derive(Copy, Clone, Debug)]
struct Len {
    min: u32,
    width: u32,
}

impl Len {
    fn of(s: Span) -> Self {
        Self {
            min: s.min,
            width: s.max - s.min + 1,
        }
    }
    /// `min + floor(r * width / 2^16)` for a 16-bit `r`.
    #[inline]
    fn draw(self, r16: u32) -> u32 {
        self.min + ((r16 as u64 * self.width as u64) >> 16) as u32
    }
}

/// Knobs compiled to thresholds.
#[derive(Clone, Debug)]
struct Knobs {
    taken: u32,
    branch: u32,
    mispredict: u32,
    resolve: Len,
    exec: Len,
    depth: u64,
    fq_cap: u32,
    restart: u64,
    // cumulative thresholds on one 16-bit number
    imiss_l1i: u32,
    imiss_l2i: u32,
    imiss_itlb: u32,
    imiss_len: [Len; 3],
    itlb_chain: u32,
    after_restart: u32,
    blocked: u32,
    head_cum: [u32; 5],
    head_len: [Len; 5],
    dtlb_l2d: u32,
    redirect: u32,
    flush: u32,
    count_off: u32,
    count_off_len: Len,
    lull: u32,
    lull_len: Len,
    backend_full: u32,
    backend_full_len: Len,
}

impl Knobs {
    fn new(c: &GenConfig) -> Self {
        let branch = thr(c.branch_frac);
        let taken = ((branch as u64 * thr(c.taken_frac) as u64) >> 16) as u32;
        let mut acc = 0;
        let mut cum = |p: f64| {
            acc += thr(p);
            acc
        };
        let head_cum = [
            cum(c.head_l1d.rate),
            cum(c.head_l2d.rate),
            cum(c.head_dtlb.rate),
            cum(c.head_longlat.rate),
            cum(c.head_other.rate),
        ];
        let imiss_l1i = thr(c.l1i.rate);
        let imiss_l2i = imiss_l1i + thr(c.l2i.rate);
        let imiss_itlb = imiss_l2i + thr(c.itlb.rate);
        Self {
            taken,
            branch,
            mispredict: thr(c.mispredict_rate),
            resolve: Len::of(c.resolve_latency),
            exec: Len::of(c.exec_latency),
            depth: c.frontend_depth as u64,
            fq_cap: c.fetch_queue,
            restart: c.restart_delay as u64,
            imiss_l1i,
            imiss_l2i,
            imiss_itlb,
            imiss_len: [Len::of(c.l1i.len), Len::of(c.l2i.len), Len::of(c.itlb.len)],
            itlb_chain: thr(c.itlb_then_icache),
            after_restart: thr(c.imiss_after_restart),
            blocked: thr(c.blocked_after_squash),
            head_cum,
            head_len: [
                Len::of(c.head_l1d.len),
                Len::of(c.head_l2d.len),
                Len::of(c.head_dtlb.len),
                Len::of(c.head_longlat.len),
                Len::of(c.head_other.len),
            ],
            dtlb_l2d: thr(c.dtlb_then_l2d),
            redirect: thr(c.redirect_rate),
            flush: thr(c.flush_rate),
            count_off: thr(c.count_off.rate),
            count_off_len: Len::of(c.count_off.len),
            lull: thr(c.lull.rate),
            lull_len: Len::of(c.lull.len),
            backend_full: thr(c.backend_full.rate),
            backend_full_len: Len::of(c.backend_full.len),
        }
    }
}

const HEAD_CAUSES: [HeadCause; 5] = [
    HeadCause::L1d,
    HeadCause::L2d,
    HeadCause::Dtlb,
    HeadCause::Longlat,
    HeadCause::Other,
];
const IMISS_KINDS: [FetchStall; 3] = [FetchStall::L1i, FetchStall::L2i, FetchStall::Itlb];

/// One ROB entry of the model core.
#[derive(Copy, Clone, Debug, Default)]
struct Entry {
    /// First cycle at which it may commit.
    ready: u64,
    /// The head waits on `c1` before `t1`, on `c2` from `t1` to `ready`.
    t1: u64,
    c1: HeadCause,
    c2: HeadCause,
    branch: bool,
    /// Branches dispatched before it (wrapping counter): its row position.
    br_before: u32,
}

/// One fetched, not yet dispatched instruction.
#[derive(Copy, Clone, Debug, Default)]
struct Slot {
    /// First cycle at which it may dispatch.
    ready: u64,
    /// Random bits for its ROB behaviour (head cause and latency).
    dice: u32,
    branch: bool,
    mispredict: bool,
    imiss: bool,
}

/// A live, unresolved branch that will mispredict.
#[derive(Copy, Clone, Debug)]
struct Pend {
    resolve: u64,
    seq: u64,
    id: u16,
}

/// Random legal bundles; an infinite [`Iterator`]. See the module documentation.
///
/// Every decision comes from the words of `R` (by default the seeded
/// xoshiro256++ of [`new`](Self::new)); [`with_rng`](Self::with_rng) takes any
/// other source, such as a fuzzer's bytes (`cpistack::fuzz`): whatever the
/// words, the bundles are legal.
#[derive(Clone, Debug)]
pub struct Generator<R: RngCore = Xoshiro256PlusPlus> {
    p: Params,
    cfg: GenConfig,
    k: Knobs,
    rng: R,
    now: u64,
    // ROB
    rob: Vec<Entry>,
    rob_head: u32,
    rob_tail: u32,
    rob_count: u32,
    head_seq: u64,
    br_head: u32,
    br_tail: u32,
    pend: Vec<Pend>,
    // frontend
    fq: Vec<Slot>,
    fq_mask: u32,
    fq_head: u32,
    fq_len: u32,
    rows_f: u32,
    fq_mispredicts: u32,
    stall_kind: FetchStall,
    stall_kind2: FetchStall,
    stall_t1: u64,
    stall_until: u64,
    stall_squashed: bool,
    imiss_next: bool,
    fetch_resume: u64,
    restarted: bool,
    lull_until: u64,
    backend_full_until: u64,
    count_enable: bool,
    count_until: u64,
    stats: GenStats,
    #[cfg(debug_assertions)]
    track: ProtocolState,
}

impl Generator {
    /// A generator for a unit with `params`, driven by `cfg`, deterministic per `seed`.
    ///
    /// # Panics
    /// If `params` or `cfg` is invalid; use [`try_new`](Self::try_new) for input
    /// that is not known to be valid (user-given parameters or knobs).
    pub fn new(params: Params, cfg: GenConfig, seed: u64) -> Self {
        match Self::try_new(params, cfg, seed) {
            Ok(g) => g,
            Err(e) => panic!("Generator::new: {e}"),
        }
    }

    /// A generator for a unit with `params`, driven by `cfg`, deterministic per
    /// `seed`; an error names the bad parameter or knob.
    pub fn try_new(params: Params, cfg: GenConfig, seed: u64) -> Result<Self, GenError> {
        Generator::with_rng(params, cfg, Xoshiro256PlusPlus::seed_from_u64(seed))
    }
}

impl<R: RngCore> Generator<R> {
    /// A generator whose decisions are the words of `rng`; an error names the
    /// bad parameter or knob.
    pub fn with_rng(params: Params, cfg: GenConfig, rng: R) -> Result<Self, GenError> {
        params.validate()?;
        cfg.validate()?;
        let k = Knobs::new(&cfg);
        let fq_size = cfg.fetch_queue.next_power_of_two();
        Ok(Self {
            p: params,
            k,
            rng,
            now: 0,
            rob: vec![Entry::default(); params.rob_entries as usize],
            rob_head: 0,
            rob_tail: 0,
            rob_count: 0,
            head_seq: 0,
            br_head: 0,
            br_tail: 0,
            pend: Vec::with_capacity(params.fmt_rows as usize),
            fq: vec![Slot::default(); fq_size as usize],
            fq_mask: fq_size - 1,
            fq_head: 0,
            fq_len: 0,
            rows_f: 0,
            fq_mispredicts: 0,
            stall_kind: FetchStall::None,
            stall_kind2: FetchStall::None,
            stall_t1: 0,
            stall_until: 0,
            stall_squashed: false,
            imiss_next: false,
            fetch_resume: 0,
            restarted: false,
            lull_until: 0,
            backend_full_until: 0,
            count_enable: cfg.warmup == 0,
            count_until: cfg.warmup as u64,
            stats: GenStats::default(),
            #[cfg(debug_assertions)]
            track: ProtocolState::new(params),
            cfg,
        })
    }

    pub fn params(&self) -> &Params {
        &self.p
    }
    pub fn config(&self) -> &GenConfig {
        &self.cfg
    }
    /// Bundles emitted so far. (Not named `cycle`: on an owned generator,
    /// `g.cycle()` would resolve to `Iterator::cycle`.)
    pub fn emitted(&self) -> u64 {
        self.now
    }
    /// The model core's ROB occupancy after the last emitted bundle.
    pub fn rob_occupancy(&self) -> u32 {
        self.rob_count
    }
    /// Branches in the model core's ROB (= dispatched rows) after the last bundle.
    pub fn branches_in_rob(&self) -> u32 {
        self.br_tail.wrapping_sub(self.br_head)
    }
    /// Branches fetched and not yet dispatched (= fetched rows) after the last bundle.
    pub fn branches_in_frontend(&self) -> u32 {
        self.rows_f
    }
    pub fn stats(&self) -> &GenStats {
        &self.stats
    }

    #[inline]
    fn rand(&mut self) -> u64 {
        self.rng.next_u64()
    }

    #[inline]
    fn inc_rob(&self, id: u32) -> u32 {
        if id + 1 == self.p.rob_entries {
            0
        } else {
            id + 1
        }
    }

    /// A squash or redirect ends the path being fetched.
    #[inline]
    fn restart_frontend(&mut self, now: u64, blocked_die: u32) {
        if self.stall_until > now + 1 {
            if blocked_die < self.k.blocked {
                self.stall_squashed = true;
            } else {
                self.stall_until = now + 1;
            }
        }
        self.imiss_next = false;
        self.fetch_resume = now + 1 + self.k.restart;
        self.restarted = true;
    }

    fn start_stall(&mut self, now: u64, kind: usize, r: u64) {
        let len = self.k.imiss_len[kind].draw(r as u32 & 0xffff) as u64;
        self.stall_kind = IMISS_KINDS[kind];
        self.stall_kind2 = IMISS_KINDS[kind];
        self.stall_t1 = now + len;
        self.stall_until = now + len;
        self.stall_squashed = false;
        if kind == 2 && ((r >> 16) as u32 & 0xffff) < self.k.itlb_chain {
            let k2 = (r >> 32 & 1) as usize;
            let len2 = self.k.imiss_len[k2].draw((r >> 40) as u32 & 0xffff) as u64;
            self.stall_kind2 = IMISS_KINDS[k2];
            self.stall_until += len2;
        }
        self.imiss_next = true;
    }

    /// Produce one bundle and advance the model core by one cycle.
    #[inline]
    fn step(&mut self) -> CycleEvents {
        let now = self.now;
        let dice0 = self.rng.next_u64();
        let dice1 = self.rng.next_u64();
        let d = |w: u64, i: u32| (w >> (16 * i)) as u32 & 0xffff;

        let mut ev = CycleEvents::default();

        // count_enable regions.
        if now >= self.count_until {
            self.count_enable = true;
            if d(dice0, 0) < self.k.count_off {
                self.count_enable = false;
                let r = self.rand() as u32 & 0xffff;
                self.count_until = now + self.k.count_off_len.draw(r) as u64;
            }
        }
        ev.count_enable = self.count_enable;
        // Lulls.
        if now >= self.lull_until && d(dice0, 1) < self.k.lull {
            let r = self.rand() as u32 & 0xffff;
            self.lull_until = now + self.k.lull_len.draw(r) as u64;
        }
        let lull = now < self.lull_until;
        // Backend-full episodes (their own random word, drawn only when they
        // can happen: see the module doc). In an episode the queue is full
        // from the start of each cycle; whether the next instruction needs
        // an entry of it is a coin: dispatch stops in about half of the
        // cycles and goes on (the instructions that need none) in the rest.
        let mut backend_blocks = false;
        if self.k.backend_full != 0 {
            let r = self.rand();
            if now >= self.backend_full_until && (r as u32 & 0xffff) < self.k.backend_full {
                self.backend_full_until =
                    now + self.k.backend_full_len.draw((r >> 16) as u32 & 0xffff) as u64;
            }
            ev.backend_full = now < self.backend_full_until;
            backend_blocks = ev.backend_full && (r >> 32) & 1 == 0;
        }

        // Retire (spec 4.2 order: before fetch, which needs the rows it frees).
        let mut ret = 0u32;
        while ret < self.p.retire_width
            && self.rob_count > 0
            && self.rob[self.rob_head as usize].ready <= now
        {
            self.br_head = self
                .br_head
                .wrapping_add(self.rob[self.rob_head as usize].branch as u32);
            self.rob_head = self.inc_rob(self.rob_head);
            self.rob_count -= 1;
            self.head_seq += 1;
            ret += 1;
        }
        ev.retired = ret as u8;
        if ret == 0 && self.rob_count > 0 {
            let e = &self.rob[self.rob_head as usize];
            ev.head = if now < e.t1 { e.c1 } else { e.c2 };
        }

        // Fetch.
        let rows_d = self.br_tail.wrapping_sub(self.br_head);
        let mut fetched = 0u32;
        let mut fb = 0u32;
        if now < self.stall_until {
            if self.stall_squashed {
                self.stats.blocked_none_cycles += 1;
            } else {
                ev.fetch_stall = if now < self.stall_t1 {
                    self.stall_kind
                } else {
                    self.stall_kind2
                };
                if self.fq_mispredicts > 0 || !self.pend.is_empty() {
                    self.stats.wrong_path_stall_cycles += 1;
                }
            }
        } else if now >= self.fetch_resume && !lull && self.fq_len < self.k.fq_cap {
            let r = d(dice1, 0);
            let restarted = std::mem::take(&mut self.restarted);
            let start = if restarted {
                if r < self.k.after_restart {
                    Some((d(dice1, 1) % 3) as usize)
                } else {
                    None
                }
            } else if r < self.k.imiss_l1i {
                Some(0)
            } else if r < self.k.imiss_l2i {
                Some(1)
            } else if r < self.k.imiss_itlb {
                Some(2)
            } else {
                None
            };
            if let Some(kind) = start {
                let r = self.rand();
                self.start_stall(now, kind, r);
                ev.fetch_stall = self.stall_kind;
                if self.fq_mispredicts > 0 || !self.pend.is_empty() {
                    self.stats.wrong_path_stall_cycles += 1;
                }
            } else {
                let rows_free = self.p.fmt_rows - 1 - rows_d - self.rows_f;
                let room = (self.k.fq_cap - self.fq_len).min(self.p.fetch_width);
                let ready = now + self.k.depth;
                while fetched < room {
                    let r = self.rng.next_u64();
                    let rb = r as u32 & 0xffff;
                    let branch = rb < self.k.branch;
                    if branch && fb == rows_free {
                        self.stats.row_limited_fetches += 1;
                        break;
                    }
                    let mispredict = branch && ((r >> 16) as u32 & 0xffff) < self.k.mispredict;
                    let slot = Slot {
                        ready,
                        dice: (r >> 32) as u32,
                        branch,
                        mispredict,
                        imiss: std::mem::take(&mut self.imiss_next),
                    };
                    let pos = (self.fq_head + self.fq_len) & self.fq_mask;
                    self.fq[pos as usize] = slot;
                    self.fq_len += 1;
                    fetched += 1;
                    fb += branch as u32;
                    self.fq_mispredicts += mispredict as u32;
                    if rb < self.k.taken {
                        break;
                    }
                }
                self.rows_f += fb;
            }
        }
        ev.fetched_branches = fb as u8;

        // Decode-time redirect: the instruction at queue position `keep - 1` finds
        // its target wrong; everything younger is squashed.
        if self.fq_len > 0 && d(dice1, 2) < self.k.redirect {
            let keep = 1 + ((d(dice1, 3) as u64 * self.fq_len as u64) >> 16) as u32;
            let mut squashed = 0;
            for i in keep..self.fq_len {
                let s = self.fq[((self.fq_head + i) & self.fq_mask) as usize];
                squashed += s.branch as u32;
                self.fq_mispredicts -= s.mispredict as u32;
            }
            self.fq_len = keep;
            self.rows_f -= squashed;
            ev.fe_redirect = true;
            ev.fe_squash = squashed as u8;
            let r = self.rand() as u32 & 0xffff;
            self.restart_frontend(now, r);
        }

        // Dispatch.
        let old_count = self.rob_count;
        if !lull && !backend_blocks {
            let mut n = 0u32;
            let mut bmask = 0u8;
            let mut imask = 0u8;
            while n < self.p.dispatch_width
                && self.fq_len > 0
                && self.rob_count < self.p.rob_entries
                && self.fq[self.fq_head as usize].ready <= now
            {
                let s = self.fq[self.fq_head as usize];
                self.fq_head = (self.fq_head + 1) & self.fq_mask;
                self.fq_len -= 1;
                let id = self.rob_tail;
                let lat_r = s.dice >> 16;
                let mut e = Entry {
                    ready: 0,
                    t1: 0,
                    c1: HeadCause::Other,
                    c2: HeadCause::Other,
                    branch: s.branch,
                    br_before: self.br_tail,
                };
                if s.branch {
                    let resolve = now + self.k.resolve.draw(lat_r) as u64;
                    e.ready = resolve + 1;
                    bmask |= 1 << n;
                    self.br_tail = self.br_tail.wrapping_add(1);
                    self.rows_f -= 1;
                    if s.mispredict {
                        self.fq_mispredicts -= 1;
                        self.pend.push(Pend {
                            resolve,
                            seq: self.head_seq + self.rob_count as u64,
                            id: id as u16,
                        });
                    }
                } else {
                    let kr = s.dice & 0xffff;
                    let kind = self.k.head_cum.iter().position(|&t| kr < t);
                    match kind {
                        None => e.ready = now + self.k.exec.draw(lat_r) as u64,
                        Some(c) => {
                            e.ready = now + self.k.head_len[c].draw(lat_r) as u64;
                            e.c1 = HEAD_CAUSES[c];
                            e.c2 = HEAD_CAUSES[c];
                            if c == 2 {
                                let r = self.rand();
                                if (r as u32 & 0xffff) < self.k.dtlb_l2d {
                                    e.c2 = HeadCause::L2d;
                                    e.t1 = e.ready;
                                    e.ready +=
                                        self.k.head_len[1].draw((r >> 16) as u32 & 0xffff) as u64;
                                }
                            }
                        }
                    }
                }
                if e.c2 == e.c1 {
                    e.t1 = e.ready;
                }
                if s.imiss {
                    imask |= 1 << n;
                }
                self.rob[id as usize] = e;
                self.rob_tail = self.inc_rob(id);
                self.rob_count += 1;
                n += 1;
            }
            ev.dispatched = n as u8;
            ev.dispatched_branches = bmask;
            ev.dispatched_imiss = imask;
        }

        // Squash: the oldest resolving misprediction, or a flush if older.
        let mut best: Option<Pend> = None;
        for q in &self.pend {
            if q.resolve <= now && !matches!(best, Some(b) if b.seq <= q.seq) {
                best = Some(*q);
            }
        }
        let mut squash = Squash::None;
        let mut cut_seq = 0;
        if let Some(b) = best {
            squash = Squash::Mispredict(b.id);
            cut_seq = b.seq;
        }
        if old_count > 0 && d(dice0, 2) < self.k.flush {
            let r = self.rand();
            let age = ((r & 0xffff) * old_count as u64) >> 16;
            let seq = self.head_seq + age;
            if !matches!(best, Some(b) if b.seq <= seq) {
                let id = (self.rob_head as u64 + age) % self.p.rob_entries as u64;
                squash = Squash::Flush(id as u16);
                cut_seq = seq;
            }
        }
        // counted once the squash is known: an older flush replaces it
        if let Squash::Mispredict(_) = squash {
            if self.pend.iter().any(|q| q.seq < cut_seq) {
                self.stats.wrong_path_mispredicts += 1;
            }
        }
        match squash {
            Squash::None => {}
            Squash::Mispredict(x) => {
                let keep = (cut_seq - self.head_seq + 1) as u32;
                self.rob_count = keep;
                self.rob_tail = self.inc_rob(x as u32);
                self.br_tail = self.rob[x as usize].br_before.wrapping_add(1);
                self.pend.retain(|q| q.seq < cut_seq);
            }
            Squash::Flush(x) => {
                let keep = (cut_seq - self.head_seq) as u32;
                self.rob_count = keep;
                self.rob_tail = x as u32;
                self.br_tail = self.rob[x as usize].br_before;
                self.pend.retain(|q| q.seq < cut_seq);
            }
        }
        if squash != Squash::None {
            self.fq_len = 0;
            self.rows_f = 0;
            self.fq_mispredicts = 0;
            self.restart_frontend(now, d(dice0, 3));
        }
        ev.squash = squash;

        #[cfg(debug_assertions)]
        self.self_check(&ev);

        self.now = now + 1;
        ev
    }

    #[cfg(debug_assertions)]
    fn self_check(&mut self, ev: &CycleEvents) {
        if let Err(v) = self.track.check(ev) {
            panic!(
                "generator emitted an illegal bundle at cycle {}: {v}: {ev:?}",
                self.now
            );
        }
        self.track.apply(ev);
        debug_assert_eq!(self.track.rob_count(), self.rob_count, "rob_count");
        debug_assert_eq!(self.track.rob_head(), self.rob_head, "rob_head");
        debug_assert_eq!(
            self.track.dispatched_rows(),
            self.branches_in_rob(),
            "dispatched rows"
        );
        debug_assert_eq!(self.track.fetched_rows(), self.rows_f, "fetched rows");
        debug_assert_eq!(
            (self.rob_head + self.rob_count) % self.p.rob_entries,
            self.rob_tail,
            "rob_tail"
        );
    }
}

impl<R: RngCore> Iterator for Generator<R> {
    type Item = CycleEvents;
    #[inline]
    fn next(&mut self) -> Option<CycleEvents> {
        Some(self.step())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::MAX, None)
    }
}
