//! Bundle validation, spec section 6, written from the rule text: the bundle is
//! checked against the state at the start of the cycle before anything changes,
//! and the first rule it breaks (in rule order) names the error.

use events::{CycleEvents, FetchStall, Field, HeadCause, Squash};

use crate::model::Unit;

impl Unit {
    /// `Err((field, rule))` for the first rule of spec 6 the bundle breaks.
    pub(crate) fn check(&self, ev: &CycleEvents) -> Result<(), (Field, u8)> {
        let p = &self.p;
        let fetched = ev.fetched_branches as u32;
        let dispatched = ev.dispatched as u32;
        let retired = ev.retired as u32;
        let fe_squash = ev.fe_squash as u32;

        // 1. Counts above their widths, mask bits at or above `dispatched`, in the
        //    order of the fields in spec 3.
        if fetched > p.fetch_width {
            return Err((Field::FetchedBranches, 1));
        }
        if dispatched > p.dispatch_width {
            return Err((Field::Dispatched, 1));
        }
        if (ev.dispatched_branches as u32) >> dispatched != 0 {
            return Err((Field::DispatchedBranches, 1));
        }
        if (ev.dispatched_imiss as u32) >> dispatched != 0 {
            return Err((Field::DispatchedImiss, 1));
        }
        if retired > p.retire_width {
            return Err((Field::Retired, 1));
        }

        // 2. Retiring more than the ROB holds.
        if retired > self.rob_count {
            return Err((Field::Retired, 2));
        }

        // 3. `head` is `none` exactly when something retires or the ROB is empty.
        let head_none = ev.head == HeadCause::None;
        if head_none != (retired > 0 || self.rob_count == 0) {
            return Err((Field::Head, 3));
        }

        // 4. Fetching branches in a cycle that reports a fetch stall.
        if ev.fetch_stall != FetchStall::None && fetched > 0 {
            return Err((Field::FetchedBranches, 4));
        }

        // 5. `fe_squash` without a redirect, or more than the fetched (not
        //    dispatched) branches after this cycle's fetch.
        let fetched_before = (self.branches.len() - self.n_disp) as u32;
        if (fe_squash > 0 && !ev.fe_redirect) || fe_squash > fetched_before + fetched {
            return Err((Field::FeSquash, 5));
        }

        // 6. More fetched branches than free rows once this cycle's retirement
        //    has released the rows of the branches it commits.
        let end = self.rob_head_seq + retired as u64;
        let live = self.branches.len() as u32;
        if fetched > p.fmt_rows - 1 - live {
            // Only then does it matter which rows this cycle's retirement frees.
            let committing = self
                .branches
                .iter()
                .take(self.n_disp)
                .take_while(|b| b.seq < end)
                .count() as u32;
            if fetched > p.fmt_rows - 1 - (live - committing) {
                return Err((Field::FetchedBranches, 6));
            }
        }

        // 7. Dispatching more branches than were fetched in earlier cycles and
        //    survive this cycle's redirect (a redirect squashes this cycle's
        //    fetches first).
        let surviving = fetched_before - fe_squash.saturating_sub(fetched);
        if ev.dispatched_branches.count_ones() > surviving {
            return Err((Field::DispatchedBranches, 7));
        }

        // 8. Dispatch overflowing the ROB.
        if self.rob_count - retired + dispatched > p.rob_entries {
            return Err((Field::Dispatched, 8));
        }

        // 9. The squash must name an instruction still in the ROB after this
        //    cycle's retirement; a misprediction must name a dispatched branch
        //    not already found mispredicted.
        let x = match ev.squash {
            Squash::None => return Ok(()),
            Squash::Mispredict(x) | Squash::Flush(x) => x,
        };
        if x as u32 >= p.rob_entries {
            return Err((Field::Squash, 9));
        }
        let seq = self.seq_of(end, x);
        if seq >= self.rob_head_seq + self.rob_count as u64 {
            return Err((Field::Squash, 9));
        }
        if let Squash::Mispredict(_) = ev.squash {
            let i = self.branches.partition_point(|b| b.seq < seq);
            let is_live_unmarked_branch = i < self.n_disp
                && self.branches[i].seq == seq
                && self.branches[i].resolved.is_none();
            if !is_live_unmarked_branch {
                return Err((Field::Squash, 9));
            }
        }
        Ok(())
    }
}
