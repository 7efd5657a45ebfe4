//! Throwaway speed check of `hw::Unit` (the real bench lives in the CLI).
//! `cargo run --release -p hw --example speed [cycles]`

use std::collections::VecDeque;
use std::time::Instant;

use events::{CounterUnit, CycleEvents, FetchStall, HeadCause, Params, Squash, Variant};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

struct Fe {
    avail: u64,
    branch: bool,
    mispred: bool,
    imiss: bool,
}
struct Ent {
    ready: u64,
    branch: bool,
    cause: HeadCause,
}

fn stream(cycles: u64, seed: u64) -> (Vec<CycleEvents>, String) {
    let p = Params::default();
    let (e, f) = (p.rob_entries as usize, p.fmt_rows as usize);
    let mut rng = Rng(seed);
    let mut rob: VecDeque<Ent> = VecDeque::new();
    let mut rob_head_id = 0usize;
    let mut rob_branches = 0usize;
    let mut fe: VecDeque<Fe> = VecDeque::new();
    let mut fe_branches = 0usize;
    let mut wrong_path = false;
    let mut mp_pos: Option<(u64, usize)> = None; // (dispatch seq, ready) of the pending mispredict
    let mut front_seq = 0u64;
    let mut stall = (FetchStall::None, 0u32);
    let mut mark_next = false;
    let mut refill_wait = 0u32;
    let mut out = Vec::with_capacity(cycles as usize);
    let (mut n_instr, mut n_br, mut n_mp, mut n_full, mut n_stall) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for t in 0..cycles {
        let mut ev = CycleEvents::idle();
        if rob.len() == e {
            n_full += 1;
        }
        // Retire.
        let mut r = 0;
        while r < 4 && rob.front().is_some_and(|x| x.ready < t) {
            let x = rob.pop_front().unwrap();
            rob_branches -= x.branch as usize;
            rob_head_id = (rob_head_id + 1) % e;
            front_seq += 1;
            r += 1;
        }
        ev.retired = r as u8;
        if r == 0 {
            if let Some(x) = rob.front() {
                ev.head = x.cause;
            }
        }
        // Resolve the pending mispredict.
        let mut squashed = false;
        if let Some((seq, ready)) = mp_pos {
            if ready as u64 == t {
                let pos = (seq - front_seq) as usize;
                ev.squash = Squash::Mispredict(((rob_head_id + pos) % e) as u16);
                for x in rob.drain(pos + 1..) {
                    rob_branches -= x.branch as usize;
                }
                fe.clear();
                fe_branches = 0;
                wrong_path = false;
                mp_pos = None;
                stall = (FetchStall::None, 0);
                mark_next = false;
                refill_wait = 4;
                squashed = true;
                n_mp += 1;
            }
        }
        if !squashed {
            // Dispatch.
            let mut n = 0u8;
            while n < 4 && rob.len() < e && fe.front().is_some_and(|x| x.avail <= t) {
                let x = fe.pop_front().unwrap();
                let (lat, cause) = if x.branch {
                    (3 + rng.next() % 8, HeadCause::Other)
                } else if rng.one_in(1500) {
                    (200, HeadCause::L2d)
                } else if rng.one_in(60) {
                    (12, HeadCause::L1d)
                } else if rng.one_in(1500) {
                    (30, HeadCause::Dtlb)
                } else if rng.one_in(300) {
                    (20, HeadCause::Longlat)
                } else {
                    (1 + rng.next() % 3, HeadCause::Other)
                };
                if x.branch {
                    ev.dispatched_branches |= 1 << n;
                    fe_branches -= 1;
                    rob_branches += 1;
                    if x.mispred {
                        mp_pos = Some((front_seq + rob.len() as u64, (t + lat) as usize));
                    }
                }
                if x.imiss {
                    ev.dispatched_imiss |= 1 << n;
                }
                rob.push_back(Ent {
                    ready: t + lat,
                    branch: x.branch,
                    cause,
                });
                n += 1;
            }
            ev.dispatched = n;
            // Fetch.
            if refill_wait > 0 {
                refill_wait -= 1;
            } else if stall.1 > 0 {
                ev.fetch_stall = stall.0;
                stall.1 -= 1;
                n_stall += 1;
                if stall.1 == 0 {
                    mark_next = true;
                }
            } else if rng.one_in(300) {
                let k = rng.next() % 3;
                stall = match k {
                    0 => (FetchStall::L1i, 10),
                    1 => (FetchStall::L2i, 60),
                    _ => (FetchStall::Itlb, 30),
                };
            } else if fe.len() < 24 {
                let mut fb = 0u8;
                for _ in 0..8 {
                    let branch = rng.one_in(6);
                    if branch && fe_branches + rob_branches + 1 > f - 1 {
                        break;
                    }
                    let mispred = branch && !wrong_path && rng.one_in(11);
                    wrong_path |= mispred;
                    fe.push_back(Fe {
                        avail: t + 4,
                        branch,
                        mispred,
                        imiss: std::mem::take(&mut mark_next),
                    });
                    n_instr += 1;
                    if branch {
                        fb += 1;
                        n_br += 1;
                        fe_branches += 1;
                        if fb == 8 {
                            break;
                        }
                    }
                }
                ev.fetched_branches = fb;
            }
        }
        out.push(ev);
    }
    let stats = format!(
        "fetched {n_instr} instrs, 1 branch per {:.1}, 1 mispredict per {:.0} instrs, \
         ROB full {:.1}% of cycles, I-stall {:.1}% of cycles",
        n_instr as f64 / n_br as f64,
        n_instr as f64 / n_mp.max(1) as f64,
        100.0 * n_full as f64 / cycles as f64,
        100.0 * n_stall as f64 / cycles as f64
    );
    (out, stats)
}

/// Nanoseconds this thread has run on a CPU (so other processes' load does not
/// count), from /proc/thread-self/schedstat; falls back to wall time.
fn cpu_ns(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or_else(|| wall.elapsed().as_nanos() as f64)
}

fn main() {
    let cycles: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("cycles"))
        .unwrap_or(2_000_000);
    let (evs, stats) = stream(cycles, 1);
    println!("{stats}");
    for v in [Variant::Fmt, Variant::Sfmt] {
        let mut u = hw::Unit::new(Params::default().with_variant(v)).unwrap();
        let mut best = f64::MAX;
        for _ in 0..5 {
            u.reset();
            let wall = Instant::now();
            let t0 = cpu_ns(wall);
            for ev in &evs {
                u.step(ev);
            }
            best = best.min((cpu_ns(wall) - t0) / 1e9);
        }
        let view = u.view();
        assert_eq!(view.error, None, "stream illegal: {:?}", view.error);
        println!(
            "{v}: {:.1} M cycles/s; counters {:?}",
            cycles as f64 / best / 1e6,
            view.counters.value
        );
    }
}
