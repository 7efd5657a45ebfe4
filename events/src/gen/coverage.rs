//! Which behaviours of the contract a stream reached, read from the bundles and a
//! [`ProtocolState`] (so it works on any stream, not only generated ones).

use serde::{Deserialize, Serialize};

use super::ProtocolState;
use crate::{CycleEvents, FetchStall, Squash, Variant};

/// Counts of the behaviours of the contract seen in a stream. Call
/// [`observe`](Self::observe) with the state *before* the bundle is applied.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    pub cycles: u64,
    pub count_off: u64,
    /// Fetch-stall cycles per kind `[l1i, l2i, itlb]`.
    pub fetch_stall: [u64; 3],
    /// Fetch-stall cycles while `refilling` (after a misprediction, before dispatch).
    pub stall_while_refilling: u64,
    /// Fetch-stall cycles while `refill_pending` (the mispredicted branch committed first).
    pub stall_while_refill_pending: u64,
    /// Cycles with each head cause `[none, l1d, l2d, dtlb, longlat, other]` while the
    /// ROB is not full.
    pub head: [u64; 6],
    /// Cycles with a full ROB and each head cause (`none`: the full ROB retires).
    pub rob_full: [u64; 6],
    /// Cycles with `backend_full`, a ROB not full, and each head cause.
    pub backend_full: [u64; 6],
    /// Fetch-stall cycles with `backend_full` (and a ROB not full).
    pub backend_full_with_stall: u64,
    /// Cycles with `backend_full` (and a ROB not full) that dispatch.
    pub backend_full_with_dispatch: u64,
    /// Cycles with `backend_full` (and a ROB not full) while `refilling` or
    /// `refill_pending`.
    pub backend_full_while_refill: u64,
    pub rob_empty: u64,
    pub mispredicts: u64,
    /// `mispredict(x)` while a younger row is already marked mispredict (an older
    /// branch resolving after a younger one).
    pub mispredict_older_than_marked: u64,
    /// `mispredict(x)` while an older row is marked mispredict (back to back).
    pub mispredict_younger_than_marked: u64,
    /// `mispredict(x)` of an I-miss-marked branch.
    pub mispredict_imiss_marked: u64,
    pub flush_branch: u64,
    pub flush_non_branch: u64,
    /// `flush(x)` of the oldest remaining entry (empties the ROB).
    pub flush_oldest: u64,
    pub redirect_squash_none: u64,
    pub redirect_squash_some: u64,
    /// A redirect keeping some of this cycle's fetched branches (`fe_squash < fetched_branches`).
    pub redirect_keeps_this_cycle: u64,
    /// A redirect squashing rows fetched in earlier cycles.
    pub redirect_squash_older: u64,
    /// Commits of a mispredicted branch with `done == 0` (sets `refill_pending`).
    pub refill_pending_set: u64,
    /// Cycles with no free row at the start.
    pub no_free_row: u64,
    /// Cycles whose fetch used every free row left after retirement.
    pub fetch_took_last_row: u64,
    pub imiss_dispatched: u64,
    /// sFMT: commits of an I-miss-marked instruction.
    pub imiss_committed: u64,
    pub squash_with_dispatch: u64,
    pub full_width_dispatch: u64,
    pub full_width_retire: u64,
}

impl Coverage {
    /// Account for `ev`, to be applied to `st` (the state before it).
    pub fn observe(&mut self, st: &ProtocolState, ev: &CycleEvents) {
        let p = st.params();
        self.cycles += 1;
        self.count_off += !ev.count_enable as u64;
        let stall = ev.fetch_stall != FetchStall::None;
        if stall {
            self.fetch_stall[ev.fetch_stall.bits() as usize - 1] += 1;
            self.stall_while_refilling += st.refilling() as u64;
            self.stall_while_refill_pending += st.refill_pending() as u64;
        }
        if st.rob_full() {
            self.rob_full[ev.head.bits() as usize] += 1;
        } else {
            self.head[ev.head.bits() as usize] += 1;
            if ev.backend_full {
                self.backend_full[ev.head.bits() as usize] += 1;
                self.backend_full_with_stall += stall as u64;
                self.backend_full_with_dispatch += (ev.dispatched > 0) as u64;
                self.backend_full_while_refill += (st.refilling() || st.refill_pending()) as u64;
            }
        }
        self.rob_empty += (st.rob_count() == 0) as u64;
        let ret = ev.retired as u32;
        let head = st.rob_head();
        let r = p.rob_entries;
        for row in st.rows() {
            let a = st.age(row.rob_id as u32);
            if a >= ret {
                break;
            }
            if row.mispredict && !row.done {
                self.refill_pending_set += 1;
            }
        }
        if p.variant == Variant::Sfmt {
            for a in 0..ret {
                self.imiss_committed += st.imiss(((head + a) % r) as u16) as u64;
            }
        }
        match ev.squash {
            Squash::None => {}
            Squash::Mispredict(x) => {
                self.mispredicts += 1;
                let ax = st.age(x as u32);
                let marked = |older: bool| {
                    st.rows()
                        .any(|row| row.mispredict && (st.age(row.rob_id as u32) < ax) == older)
                };
                self.mispredict_older_than_marked += marked(false) as u64;
                self.mispredict_younger_than_marked += marked(true) as u64;
                self.mispredict_imiss_marked += st.imiss(x) as u64;
            }
            Squash::Flush(x) => {
                if st.rows().any(|row| row.rob_id == x) {
                    self.flush_branch += 1;
                } else {
                    self.flush_non_branch += 1;
                }
                self.flush_oldest += (st.age(x as u32) == ret) as u64;
            }
        }
        if ev.squash != Squash::None && ev.dispatched > 0 {
            self.squash_with_dispatch += 1;
        }
        if ev.fe_redirect {
            if ev.fe_squash == 0 {
                self.redirect_squash_none += 1;
            } else {
                self.redirect_squash_some += 1;
            }
            if ev.fetched_branches > ev.fe_squash {
                self.redirect_keeps_this_cycle += 1;
            }
            if ev.fe_squash > ev.fetched_branches {
                self.redirect_squash_older += 1;
            }
        }
        let free = st.free_rows();
        self.no_free_row += (free == 0) as u64;
        if ev.fetched_branches > 0 && ev.fetched_branches as u32 == free + st.rows_retiring(ret) {
            self.fetch_took_last_row += 1;
        }
        self.imiss_dispatched += ev.dispatched_imiss.count_ones() as u64;
        self.full_width_dispatch += (ev.dispatched as u32 == p.dispatch_width) as u64;
        self.full_width_retire += (ret == p.retire_width) as u64;
    }

    /// Every behaviour with its count, for reports and tests.
    pub fn items(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("cycles", self.cycles),
            ("count_enable off", self.count_off),
            ("fetch_stall l1i", self.fetch_stall[0]),
            ("fetch_stall l2i", self.fetch_stall[1]),
            ("fetch_stall itlb", self.fetch_stall[2]),
            ("fetch stall while refilling", self.stall_while_refilling),
            (
                "fetch stall while refill_pending",
                self.stall_while_refill_pending,
            ),
            ("head none", self.head[0]),
            ("head l1d", self.head[1]),
            ("head l2d", self.head[2]),
            ("head dtlb", self.head[3]),
            ("head longlat", self.head[4]),
            ("head other", self.head[5]),
            ("rob full, retiring", self.rob_full[0]),
            ("rob full, head l1d", self.rob_full[1]),
            ("rob full, head l2d", self.rob_full[2]),
            ("rob full, head dtlb", self.rob_full[3]),
            ("rob full, head longlat", self.rob_full[4]),
            ("rob full, head other", self.rob_full[5]),
            ("backend full, head none", self.backend_full[0]),
            ("backend full, head l1d", self.backend_full[1]),
            ("backend full, head l2d", self.backend_full[2]),
            ("backend full, head dtlb", self.backend_full[3]),
            ("backend full, head longlat", self.backend_full[4]),
            ("backend full, head other", self.backend_full[5]),
            (
                "backend full during a fetch stall",
                self.backend_full_with_stall,
            ),
            (
                "backend full in a cycle that dispatches",
                self.backend_full_with_dispatch,
            ),
            (
                "backend full while refilling or refill_pending",
                self.backend_full_while_refill,
            ),
            ("rob empty", self.rob_empty),
            ("mispredict", self.mispredicts),
            (
                "mispredict older than a marked row",
                self.mispredict_older_than_marked,
            ),
            (
                "mispredict younger than a marked row",
                self.mispredict_younger_than_marked,
            ),
            (
                "mispredict of an I-miss-marked branch",
                self.mispredict_imiss_marked,
            ),
            ("flush of a branch", self.flush_branch),
            ("flush of a non-branch", self.flush_non_branch),
            ("flush of the oldest entry", self.flush_oldest),
            ("redirect, fe_squash 0", self.redirect_squash_none),
            ("redirect, fe_squash > 0", self.redirect_squash_some),
            (
                "redirect keeping this cycle's branches",
                self.redirect_keeps_this_cycle,
            ),
            (
                "redirect squashing older fetched rows",
                self.redirect_squash_older,
            ),
            ("refill_pending set", self.refill_pending_set),
            ("no free row", self.no_free_row),
            ("fetch took the last free row", self.fetch_took_last_row),
            ("I-miss-marked dispatch", self.imiss_dispatched),
            ("squash with dispatch", self.squash_with_dispatch),
            ("full-width dispatch", self.full_width_dispatch),
            ("full-width retire", self.full_width_retire),
        ]
    }
}
