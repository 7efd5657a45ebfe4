//! Illegal bundles for robustness tests: a legal bundle mutated so that it breaks
//! some rule of spec section 6, with the violation the unit must latch.

use rand::Rng;

use super::{ProtocolState, Violation};
use crate::{CycleEvents, FetchStall, HeadCause, Squash};

/// A bundle of uniformly random field values (legal or not; mostly not).
pub fn random_bundle<R: Rng + ?Sized>(rng: &mut R) -> CycleEvents {
    let squash = match rng.gen_range(0..3) {
        0 => Squash::None,
        1 => Squash::Mispredict(rng.gen()),
        _ => Squash::Flush(rng.gen()),
    };
    CycleEvents {
        count_enable: rng.gen(),
        fetch_stall: FetchStall::ALL[rng.gen_range(0..4)],
        fetched_branches: small_or_any(rng),
        fe_redirect: rng.gen(),
        fe_squash: small_or_any(rng),
        dispatched: small_or_any(rng),
        dispatched_branches: rng.gen(),
        dispatched_imiss: rng.gen(),
        squash,
        retired: small_or_any(rng),
        head: HeadCause::ALL[rng.gen_range(0..6)],
        backend_full: rng.gen(),
    }
}

fn small_or_any<R: Rng + ?Sized>(rng: &mut R) -> u8 {
    if rng.gen_bool(0.8) {
        rng.gen_range(0..=9)
    } else {
        rng.gen()
    }
}

/// Mutate `ev` (normally a legal bundle for `st`) into a bundle that `st` rejects,
/// aiming at a random rule of section 6 (the first rule the result breaks may be an
/// earlier one). Returns the bundle and the violation the unit must latch.
pub fn mutate_illegal<R: Rng + ?Sized>(
    ev: &CycleEvents,
    st: &ProtocolState,
    rng: &mut R,
) -> (CycleEvents, Violation) {
    for _ in 0..64 {
        let m = mutate_once(ev, st, rng);
        if let Err(v) = st.check(&m) {
            return (m, v);
        }
    }
    // Always illegal: rule 1 (fetch_width is at most 8).
    let mut m = *ev;
    m.fetched_branches = 255;
    let v = st
        .check(&m)
        .expect_err("fetched_branches 255 breaks rule 1");
    (m, v)
}

fn mutate_once<R: Rng + ?Sized>(ev: &CycleEvents, st: &ProtocolState, rng: &mut R) -> CycleEvents {
    let p = st.params();
    let mut m = *ev;
    // rule 9's rarest case, aimed at directly: a row mispredicted again (a
    // unit that accepted it went unseen while it was drawn among all cases)
    let marked: Vec<u16> = st
        .rows()
        .filter(|r| r.mispredict)
        .map(|r| r.rob_id)
        .collect();
    if !marked.is_empty() && rng.gen_bool(0.25) {
        m.squash = Squash::Mispredict(marked[rng.gen_range(0..marked.len())]);
        return m;
    }
    match rng.gen_range(1..=10u8) {
        1 => match rng.gen_range(0..5) {
            0 => m.fetched_branches = rng.gen_range(p.fetch_width + 1..=255) as u8,
            1 => m.dispatched = rng.gen_range(p.dispatch_width + 1..=255) as u8,
            2 if m.dispatched < 8 => m.dispatched_branches |= 1 << rng.gen_range(m.dispatched..8),
            3 if m.dispatched < 8 => m.dispatched_imiss |= 1 << rng.gen_range(m.dispatched..8),
            _ => m.retired = rng.gen_range(p.retire_width + 1..=255) as u8,
        },
        2 => {
            m.retired = (st.rob_count() + rng.gen_range(1..=3)).min(255) as u8;
            m.head = HeadCause::None;
        }
        3 => {
            if m.retired > 0 || st.rob_count() == 0 {
                m.head = HeadCause::ALL[rng.gen_range(1..6)];
            } else {
                m.head = HeadCause::None;
            }
        }
        4 => {
            m.fetch_stall = FetchStall::ALL[rng.gen_range(1..4)];
            m.fetched_branches = m.fetched_branches.max(1);
        }
        5 => {
            if rng.gen_bool(0.5) {
                m.fe_redirect = false;
                m.fe_squash = m.fe_squash.max(1);
            } else {
                m.fe_redirect = true;
                let max = st.fetched_rows() + m.fetched_branches as u32;
                m.fe_squash = (max + rng.gen_range(1..=2)).min(255) as u8;
            }
        }
        6 => {
            let free = st.free_rows() + st.rows_retiring(m.retired as u32);
            m.fetched_branches = (free + rng.gen_range(1..=2)).min(255) as u8;
            m.fetch_stall = FetchStall::None;
        }
        7 => {
            let disp = p.dispatch_width.min(8) as u8;
            let extra = rng.gen_range(1..=disp);
            let bits = ev.dispatched_branches.count_ones() as u8 + extra;
            m.dispatched = m.dispatched.max(bits.min(disp));
            m.dispatched_branches = ((1u16 << m.dispatched) - 1) as u8;
        }
        8 => {
            let room = p.rob_entries - (st.rob_count() - (m.retired as u32).min(st.rob_count()));
            m.dispatched = (room + rng.gen_range(1..=2)).min(255) as u8;
            m.dispatched_branches = 0;
            m.dispatched_imiss = 0;
        }
        9 => {
            let x: u16 = match rng.gen_range(0..4) {
                0 => rng.gen_range(p.rob_entries..=u16::MAX as u32) as u16,
                1 => rng.gen_range(0..p.rob_entries) as u16,
                2 => ((st.rob_head() + st.rob_count()) % p.rob_entries) as u16,
                _ => {
                    // a retiring entry, or a marked row, or a non-branch
                    let rows: Vec<_> = st.rows().collect();
                    match rows.get(rng.gen_range(0..rows.len().max(1))) {
                        Some(row) => row.rob_id,
                        None => st.rob_head() as u16,
                    }
                }
            };
            m.squash = if rng.gen_bool(0.7) {
                Squash::Mispredict(x)
            } else {
                Squash::Flush(x)
            };
        }
        _ => m = random_bundle(rng),
    }
    m
}
