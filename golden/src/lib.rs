//! Behavioural ("golden") model of the FMT/sFMT counter unit.
//!
//! It implements the contract of `shared/design/counter-unit.md` (sections 3-6)
//! in the plainest terms it can, so that agreeing with the bit-accurate `hw`
//! model every cycle is evidence, not the same formulation written twice.
//! **Invariant:** this crate never depends on `hw`.
//!
//! # The formulation
//!
//! Nothing here is a register or a pointer. The model keeps:
//!
//! * **Prefix counts of countable cycles.** Every accepted cycle adds one to a
//!   handful of running totals, each the number of cycles *so far* that had some
//!   property, read from the bundle and the state at the start of the cycle:
//!   counted cycles (`count_enable`); counted cycles with a full window (a full
//!   ROB, or `backend_full`: docs/spec-decisions.md), by head cause; counted
//!   cycles with the window not full ("open" cycles), by fetch-stall kind
//!   (`none`, `l1i`, `l2i`, `itlb`); and, for sFMT, the same but only while the
//!   frontend was not refilling. The global `cycles` and the four D-side counters
//!   *are* such prefix counts.
//!
//! * **A queue of in-flight branches** ([`std::collections::VecDeque`]), oldest
//!   first, each carrying the moments at which things happened to it: fetched at,
//!   dispatched at, found mispredicted at, done at (the first correct-path
//!   dispatch after that). A moment is a `Stamp`: the cycle number and the
//!   prefix counts right after that cycle's counting step. The first
//!   `dispatched` branches of the queue are in the ROB, the rest are fetched only.
//!
//! * **A ROB mirror**: the sequence number of the oldest live instruction (the
//!   count of instructions ever retired) and the occupancy. Instruction `s` has ROB
//!   id `s mod rob_entries`; a squash sets the occupancy back, so ids are reused.
//!   sFMT keeps the sequence numbers of the live instructions with an I-miss bit
//!   in a sorted queue.
//!
//! A quantity the hardware increments every cycle is, here, a difference of
//! prefix counts, taken when it is read or charged:
//!
//! * a branch's penalty is `open(resolved or now) - open(dispatched)` plus, once
//!   it is found mispredicted, `refill(done or now) - refill(resolved)`, where
//!   `refill` counts the open cycles in which nothing dispatched, and (FMT) no
//!   fetch stall. With no full-window and no stall cycles this is `done -
//!   dispatched - 1` cycles: the misprediction penalty of the paper's interval
//!   analysis without the cycle the correct path enters the ROB
//!   (docs/spec-decisions.md);
//! * FMT's I-stall cycles of a basic block are `open_by_stall(fetch of its
//!   branch) - open_by_stall(the block's first cycle)`;
//! * sFMT's shared I-counters are `shared_by_stall(now) - shared_by_stall(last clear)`;
//! * refill cycles after a mispredicted branch committed before its correct path
//!   arrived are `refill(now) - refill(commit)`, charged to `bpred` as they pass.
//!
//! Width rules are applied when a value is read or charged, in `u64`/`u128`:
//! a local value is `min(raw, 2^local_bits - 1)`; a global counter is the
//! unbounded total charged so far, read modulo `2^global_bits`, and its sticky
//! overflow flag is `total >= 2^global_bits` (totals only grow, so that is the
//! same as "some addition carried out"). The unit-wide sticky `saturated` flag is
//! set in the cycle a raw local value first exceeds the maximum; the only
//! candidates are the value being accumulated (FMT's accumulation row, sFMT's
//! shared counters) and the oldest branch whose penalty still grows, because
//! all growing penalties grow together and an older one started earlier (or,
//! for the one mispredicted branch awaiting its correct path, grows no faster).
//!
//! Per cycle the model does a few dozen operations plus work per event
//! (per fetched, dispatched, retired or squashed branch); it allocates nothing
//! in steady state.

mod check;
mod model;

#[cfg(test)]
mod random_tests;
#[cfg(test)]
mod tests;

pub use model::{BranchTimes, Unit};
