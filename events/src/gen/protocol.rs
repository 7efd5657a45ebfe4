//! A tracker of exactly the state spec section 6 needs to judge a bundle: ROB
//! occupancy and head id, the dispatched rows (ROB id, `mispredict`, `done`) in
//! order, the number of fetched rows, and the two refill flags.
//!
//! It is a third, independent reading of the protocol (neither `hw` nor `golden`):
//! the generator asserts every bundle it emits against it in debug builds, the
//! illegal-bundle helpers use it to know which rule a mutated bundle breaks, and
//! [`super::Coverage`] reads it to classify behaviours.

use std::collections::VecDeque;

use crate::{CycleEvents, FetchStall, Field, HeadCause, Params, Squash};

/// The first rule of spec section 6 a bundle breaks, with the field it names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Violation {
    pub field: Field,
    pub rule: u8,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field `{}`, rule {}", self.field.name(), self.rule)
    }
}

/// One dispatched row as the protocol sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TrackedRow {
    pub rob_id: u16,
    pub mispredict: bool,
    pub done: bool,
}

/// Protocol-level state of a counter unit (spec sections 4 and 6), no counters.
#[derive(Clone, Debug)]
pub struct ProtocolState {
    p: Params,
    rob_head: u32,
    rob_count: u32,
    rows: VecDeque<TrackedRow>,
    fetched: u32,
    refilling: bool,
    refill_pending: bool,
    /// sFMT I-miss bit per ROB id (tracked for both variants: it is input state).
    imiss: Vec<bool>,
}

impl ProtocolState {
    /// State after reset. `params` must be valid (see [`Params::validate`]).
    pub fn new(params: Params) -> Self {
        Self {
            p: params,
            rob_head: 0,
            rob_count: 0,
            rows: VecDeque::with_capacity(params.fmt_rows as usize),
            fetched: 0,
            refilling: false,
            refill_pending: false,
            imiss: vec![false; params.rob_entries as usize],
        }
    }

    pub fn params(&self) -> &Params {
        &self.p
    }
    pub fn rob_count(&self) -> u32 {
        self.rob_count
    }
    pub fn rob_head(&self) -> u32 {
        self.rob_head
    }
    pub fn rob_full(&self) -> bool {
        self.rob_count == self.p.rob_entries
    }
    /// Rows in `[head, dtail)`.
    pub fn dispatched_rows(&self) -> u32 {
        self.rows.len() as u32
    }
    /// Rows in `[dtail, ftail)`.
    pub fn fetched_rows(&self) -> u32 {
        self.fetched
    }
    /// `fmt_rows - 1 - (ftail - head)`.
    pub fn free_rows(&self) -> u32 {
        self.p.fmt_rows - 1 - self.rows.len() as u32 - self.fetched
    }
    pub fn refilling(&self) -> bool {
        self.refilling
    }
    pub fn refill_pending(&self) -> bool {
        self.refill_pending
    }
    /// The dispatched rows, oldest first.
    pub fn rows(&self) -> impl Iterator<Item = &TrackedRow> {
        self.rows.iter()
    }
    /// Whether live ROB entry `id` carries an I-miss mark.
    pub fn imiss(&self, id: u16) -> bool {
        self.imiss.get(id as usize).copied().unwrap_or(false)
    }
    /// Age of a ROB id counted from the current ROB head (not checked for liveness).
    #[inline]
    pub fn age(&self, id: u32) -> u32 {
        let r = self.p.rob_entries;
        (id % r + r - self.rob_head) % r
    }
    /// Rows that leave with the first `retired` instructions from the head.
    pub fn rows_retiring(&self, retired: u32) -> u32 {
        self.rows
            .iter()
            .take_while(|row| self.age(row.rob_id as u32) < retired)
            .count() as u32
    }

    /// Judge `ev` against the current state, rules 1 to 9 in order (spec section 6).
    pub fn check(&self, ev: &CycleEvents) -> Result<(), Violation> {
        let v = |field, rule| Err(Violation { field, rule });
        let p = &self.p;
        let fb = ev.fetched_branches as u32;
        let disp = ev.dispatched as u32;
        let ret = ev.retired as u32;
        // Rule 1, fields in the order of section 3.
        if fb > p.fetch_width {
            return v(Field::FetchedBranches, 1);
        }
        if disp > p.dispatch_width {
            return v(Field::Dispatched, 1);
        }
        if (ev.dispatched_branches as u32) >> disp != 0 {
            return v(Field::DispatchedBranches, 1);
        }
        if (ev.dispatched_imiss as u32) >> disp != 0 {
            return v(Field::DispatchedImiss, 1);
        }
        if ret > p.retire_width {
            return v(Field::Retired, 1);
        }
        // Rule 2.
        if ret > self.rob_count {
            return v(Field::Retired, 2);
        }
        // Rule 3.
        let head_none = ev.head == HeadCause::None;
        if (!head_none && (ret > 0 || self.rob_count == 0))
            || (head_none && self.rob_count > 0 && ret == 0)
        {
            return v(Field::Head, 3);
        }
        // Rule 4.
        if ev.fetch_stall != FetchStall::None && fb > 0 {
            return v(Field::FetchedBranches, 4);
        }
        // Rule 5.
        let fsq = ev.fe_squash as u32;
        if (fsq > 0 && !ev.fe_redirect) || fsq > self.fetched + fb {
            return v(Field::FeSquash, 5);
        }
        // Rule 6.
        let free_after = self.free_rows() + self.rows_retiring(ret);
        if fb > free_after {
            return v(Field::FetchedBranches, 6);
        }
        // Rule 7.
        let surviving_old = self.fetched - fsq.saturating_sub(fb);
        if ev.dispatched_branches.count_ones() > surviving_old {
            return v(Field::DispatchedBranches, 7);
        }
        // Rule 8.
        if self.rob_count - ret + disp > p.rob_entries {
            return v(Field::Dispatched, 8);
        }
        // Rule 9.
        match ev.squash {
            Squash::None => {}
            Squash::Mispredict(x) | Squash::Flush(x) => {
                let in_rob = (x as u32) < p.rob_entries && {
                    let a = self.age(x as u32);
                    a >= ret && a < self.rob_count
                };
                if !in_rob {
                    return v(Field::Squash, 9);
                }
                if let Squash::Mispredict(_) = ev.squash {
                    match self.rows.iter().find(|r| r.rob_id == x) {
                        Some(row) if !row.mispredict => {}
                        _ => return v(Field::Squash, 9),
                    }
                }
            }
        }
        Ok(())
    }

    /// Apply a bundle that [`check`](Self::check) accepted (spec 4.2 to 4.5, state only).
    pub fn apply(&mut self, ev: &CycleEvents) {
        let r = self.p.rob_entries;
        // 4.2 retire.
        for _ in 0..ev.retired {
            let id = self.rob_head;
            if self.imiss[id as usize] && self.p.variant == crate::Variant::Sfmt {
                self.imiss.iter_mut().for_each(|b| *b = false);
            }
            self.imiss[id as usize] = false;
            if self.rows.front().is_some_and(|row| row.rob_id as u32 == id) {
                let row = self.rows.pop_front().expect("front exists");
                if row.mispredict && !row.done {
                    self.refill_pending = true;
                }
                if row.mispredict && self.p.variant == crate::Variant::Sfmt {
                    self.imiss.iter_mut().for_each(|b| *b = false);
                }
            }
            self.rob_head = (self.rob_head + 1) % r;
            self.rob_count -= 1;
        }
        // 4.3 fetch, redirect.
        self.fetched += ev.fetched_branches as u32;
        if ev.fe_redirect {
            self.fetched -= ev.fe_squash as u32;
        }
        // 4.4 dispatch.
        for i in 0..ev.dispatched {
            let id = (self.rob_head + self.rob_count) % r;
            self.rob_count += 1;
            self.imiss[id as usize] = ev.dispatched_imiss >> i & 1 == 1;
            if ev.dispatched_branches >> i & 1 == 1 {
                self.rows.push_back(TrackedRow {
                    rob_id: id as u16,
                    mispredict: false,
                    done: false,
                });
                self.fetched -= 1;
            }
        }
        if ev.dispatched > 0 {
            self.refilling = false;
            self.refill_pending = false;
            for row in self.rows.iter_mut() {
                if row.mispredict {
                    row.done = true;
                }
            }
        }
        // 4.5 squash.
        let keep = match ev.squash {
            Squash::None => return,
            Squash::Mispredict(x) => {
                let row = self
                    .rows
                    .iter_mut()
                    .find(|row| row.rob_id == x)
                    .expect("checked: x is a dispatched row");
                row.mispredict = true;
                row.done = false;
                self.refilling = true;
                self.age(x as u32) + 1
            }
            Squash::Flush(x) => {
                self.refilling = false;
                self.age(x as u32)
            }
        };
        for a in keep..self.rob_count {
            self.imiss[((self.rob_head + a) % r) as usize] = false;
        }
        self.rob_count = keep;
        let head = self.rob_head;
        let n = self
            .rows
            .iter()
            .take_while(|row| (row.rob_id as u32 + r - head) % r < keep)
            .count();
        self.rows.truncate(n);
        self.fetched = 0;
    }
}
