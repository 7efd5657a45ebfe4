//! Core tests: every bundle checked against spec section 6 (by the protocol
//! tracker of `events::gen`, independent of the counter models), subsystem tests and interval-analysis
//! microbenchmarks. Every loop is bounded.

use events::gen::ProtocolState;
use events::{CycleEvents, FetchStall, HeadCause, Squash};

use crate::config::Config;
use crate::core::Core;
use crate::isa::{BranchKind, Instr, InstrSource, OpClass, SourceError};
use crate::workloads::{self, Workload};

/// Every bundle the core emits, checked against rules 1-9 of spec section 6 by
/// `events::gen::ProtocolState` (a reading of the contract independent of both
/// counter models), which also mirrors the ROB occupancy and the rows in flight.
pub(crate) struct Mirror {
    st: ProtocolState,
    bundles: u64,
}

impl Mirror {
    pub(crate) fn new(cfg: &Config) -> Mirror {
        Mirror {
            st: ProtocolState::new(cfg.unit_params()),
            bundles: 0,
        }
    }

    /// Check and apply one bundle; `Err` names the bundle, the field and the rule.
    pub(crate) fn step(&mut self, e: &CycleEvents) -> Result<(), String> {
        let n = self.bundles;
        self.st
            .check(e)
            .map_err(|v| format!("bundle {n}: {v}: {e:?}"))?;
        self.st.apply(e);
        self.bundles += 1;
        Ok(())
    }

    pub(crate) fn rob_count(&self) -> u32 {
        self.st.rob_count()
    }

    /// Branches fetched and not yet retired (dispatched plus fetched rows).
    pub(crate) fn live_rows(&self) -> u32 {
        self.st.dispatched_rows() + self.st.fetched_rows()
    }
}

/// Run `core` for `instructions` counted instructions (bounded by `max_cycles`),
/// checking every bundle against the mirror and the core's own occupancy.
/// Returns the bundles' head-cause histogram.
pub(crate) fn run_checked<S: InstrSource>(
    core: &mut Core<S>,
    cfg: &Config,
    instructions: u64,
    max_cycles: u64,
) -> [u64; 6] {
    let mut m = Mirror::new(cfg);
    let mut heads = [0u64; 6];
    let start = core.cycle();
    while core.counted_retired() < instructions && !core.finished() {
        assert!(core.cycle() - start < max_cycles, "ran out of cycles");
        let ev = *core.step().unwrap_or_else(|e| panic!("{e}"));
        m.step(&ev)
            .unwrap_or_else(|e| panic!("illegal bundle: {e}"));
        assert_eq!(
            m.rob_count(),
            core.rob_occupancy(),
            "ROB mirror at cycle {}",
            core.cycle()
        );
        assert_eq!(
            m.live_rows(),
            core.branches_in_flight(),
            "rows at cycle {}",
            core.cycle()
        );
        heads[ev.head as usize] += 1;
    }
    heads
}

// ------------------------------------------------------------ test programs

/// A hand-written static program: `code` by address; the committed path follows
/// `taken(branch index, dynamic count)` for conditionals and `addr(load pc, count)` for memory.
struct Prog {
    code: Vec<Instr>,
    base: u64,
    cur: usize,
    count: u64,
    taken: Box<dyn FnMut(u64, u64) -> bool>,
    addr: Box<dyn FnMut(u64, u64) -> u64>,
}

fn alu(pc: u64) -> Instr {
    Instr::plain_alu(pc, 4)
}

impl Prog {
    /// Straight-line segments: each `(start, len, end_kind)`; the last instruction of a
    /// segment is a branch to the next segment's start (wrapping).
    fn segments(segs: &[(u64, usize)], last_kind: BranchKind) -> Prog {
        let base = segs.iter().map(|s| s.0).min().unwrap();
        let top = segs.iter().map(|s| s.0 + s.1 as u64 * 4).max().unwrap();
        let mut code: Vec<Instr> = (0..(top - base) / 4).map(|i| alu(base + i * 4)).collect();
        for (k, &(start, len)) in segs.iter().enumerate() {
            let next = segs[(k + 1) % segs.len()].0;
            let i = ((start - base) / 4) as usize + len - 1;
            code[i].class = OpClass::Branch;
            code[i].branch = Some(if k + 1 == segs.len() {
                last_kind
            } else {
                BranchKind::DirectJump
            });
            code[i].target = next;
        }
        Prog {
            code,
            base,
            cur: ((segs[0].0 - base) / 4) as usize,
            count: 0,
            taken: Box::new(|_, _| true),
            addr: Box::new(|_, _| 0),
        }
    }
    fn at(&mut self, pc: u64) -> &mut Instr {
        &mut self.code[((pc - self.base) / 4) as usize]
    }
}

impl InstrSource for Prog {
    fn name(&self) -> &str {
        "prog"
    }
    fn next(&mut self) -> Result<Option<Instr>, SourceError> {
        let mut i = self.code[self.cur];
        self.count += 1;
        match i.class {
            OpClass::Load => i.load_addr = (self.addr)(i.pc, self.count),
            OpClass::Store => i.store_addr = (self.addr)(i.pc, self.count),
            _ => {}
        }
        if let Some(k) = i.branch {
            i.taken = k != BranchKind::Conditional || (self.taken)(i.pc, self.count);
        }
        let next = i.next_pc();
        self.cur = ((next - self.base) / 4) as usize;
        Ok(Some(i))
    }
    fn wrong_path(&mut self, pc: u64) -> Instr {
        match pc.checked_sub(self.base).map(|o| (o / 4) as usize) {
            Some(k) if k < self.code.len() && pc & 3 == 0 => {
                let mut i = self.code[k];
                i.load_addr = 0;
                i.store_addr = 0;
                i
            }
            _ => alu(pc),
        }
    }
}

/// Branch outcomes at random (a xorshift from `seed`), for a `Prog`'s `taken`.
fn coin_flips(seed: u64) -> Box<dyn FnMut(u64, u64) -> bool> {
    let mut x = seed;
    Box::new(move |_, _| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x & 1 == 1
    })
}

fn cycles_for(cfg: &Config, prog: Prog, warm: u64, n: u64) -> (u64, crate::Stats) {
    let mut core = Core::new(cfg, prog).unwrap();
    core.set_warmup(warm);
    run_checked(&mut core, cfg, n, n * 400 + 100_000);
    (core.stats().cycles, core.stats().clone())
}

fn quiet_cfg() -> Config {
    let mut c = Config::default();
    c.ideal.itlb = true;
    c.ideal.dtlb = true;
    c
}

// ------------------------------------------------------------ subsystem tests

#[test]
fn straight_line_code_reaches_commit_width() {
    let mut cfg = quiet_cfg();
    cfg.ideal.set_all(true);
    let p = Prog::segments(&[(0x1000, 512)], BranchKind::DirectJump);
    let (cycles, st) = cycles_for(&cfg, p, 2000, 20_000);
    let ipc = st.instructions as f64 / cycles as f64;
    assert!(ipc > 3.8 && ipc <= 4.0, "ipc {ipc}");
}

/// A loop of `len - 1` loads and a jump at 0x1000, a chain: every load reads
/// register 5 and writes it (addresses: the caller's `addr`, 0 unless set).
fn load_chain(len: usize) -> Prog {
    let mut p = Prog::segments(&[(0x1000, len)], BranchKind::DirectJump);
    for k in 0..len as u64 - 1 {
        let i = p.at(0x1000 + k * 4);
        i.class = OpClass::Load;
        i.srcs = [5, 0, 0, 0];
        i.dsts = [5, 0];
    }
    p
}

/// [`load_chain`] of 255 loads, all at one address (L1 hits once the line is in).
fn hit_chain() -> Prog {
    let mut p = load_chain(256);
    p.addr = Box::new(|_, _| 0x10_0000);
    p
}

#[test]
fn load_to_use_latency_on_a_chain_of_hits() {
    let cfg = quiet_cfg();
    let p = hit_chain();
    let (cycles, st) = cycles_for(&cfg, p, 1000, 5000);
    let cpi = cycles as f64 / st.instructions as f64;
    assert!((1.9..2.2).contains(&cpi), "cpi {cpi} (load latency 2)");
}

/// A load whose data and translation hit waits at the ROB head on its
/// load-to-use latency alone: its head cause is `Other`, never a miss type
/// (the chain of L1 hits, the D-TLB ideal).
#[test]
fn a_load_hitting_the_l1_waits_at_the_head_as_other() {
    let mut cfg = quiet_cfg();
    cfg.ideal.l1d = true; // no cold miss either
    let p = hit_chain();
    let mut core = Core::new(&cfg, p).unwrap();
    core.set_warmup(1000);
    let heads = run_checked(&mut core, &cfg, 5000, 2_100_000);
    // each load waits one cycle at the head before it commits
    assert!(heads[HeadCause::Other as usize] >= 5000, "{heads:?}");
    for c in [
        HeadCause::L1d,
        HeadCause::L2d,
        HeadCause::Dtlb,
        HeadCause::Longlat,
    ] {
        assert_eq!(heads[c as usize], 0, "{c:?}: {heads:?}");
    }
}

/// A loop of 64 instructions with 8 independent memory accesses of `class`,
/// each to a new line.
fn new_lines(class: OpClass) -> Prog {
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    for k in 0..8u64 {
        p.at(0x1000 + k * 32).class = class;
    }
    p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
    p
}

#[test]
fn mshr_limit_serialises_misses() {
    let run = |mshrs: u32| {
        let mut cfg = quiet_cfg();
        cfg.l1d.mshrs = mshrs;
        cfg.l2.mshrs = mshrs;
        cycles_for(&cfg, new_lines(OpClass::Load), 500, 4000).0
    };
    let one = run(1);
    let eight = run(8);
    assert!(one > eight * 3, "1 MSHR {one} cycles vs 8 MSHRs {eight}");
}

/// A store that finds no free MSHR does not wait for one (it is written
/// without allocating its line): with one MSHR, independent stores to new
/// lines run several times faster than the same loads, which serialise.
#[test]
fn a_store_does_not_wait_for_a_free_mshr() {
    let run = |class: OpClass| {
        let mut cfg = quiet_cfg();
        cfg.l1d.mshrs = 1;
        cfg.l2.mshrs = 1;
        cycles_for(&cfg, new_lines(class), 500, 4000).0
    };
    let loads = run(OpClass::Load);
    let stores = run(OpClass::Store);
    // measured: 130 500 cycles against 1 000 (and the same 130 500 for
    // stores made loads)
    assert!(
        loads > stores * 3,
        "loads {loads} cycles vs stores {stores}"
    );
}

#[test]
fn pending_hits_merge_into_one_miss() {
    let mut cfg = quiet_cfg();
    cfg.l1d.mshrs = 1;
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    for k in 0..8u64 {
        p.at(0x1000 + k * 32).class = OpClass::Load;
    }
    // eight loads per line: one miss, seven pending hits
    let mut c = 0u64;
    p.addr = Box::new(move |_, _| {
        c += 1;
        0x1000_0000 + c * 8
    });
    let (_, st) = cycles_for(&cfg, p, 500, 4000);
    let loads = st.instructions / 8;
    assert!(
        st.all.l1d * 6 < loads,
        "misses {} for {loads} loads",
        st.all.l1d
    );
}

/// The core runs the configured data prefetcher: a chain of loads, each
/// waiting for the one before and each the next line, misses on every line
/// with no prefetcher; with next-line (a miss prefetches the next line) on
/// every other line; with tagged (the first use of a prefetched line
/// prefetches the next too) on none once the stream runs.
#[test]
fn the_data_prefetcher_turns_a_stream_of_misses_into_hits() {
    use crate::config::PrefetchKind;
    let l1d_misses = |kind: PrefetchKind| {
        let mut cfg = quiet_cfg();
        cfg.prefetch.kind = kind;
        let mut p = load_chain(64);
        let mut line = 0u64;
        p.addr = Box::new(move |_, _| {
            line += 1;
            0x1000_0000 + line * 64
        });
        let (_, st) = cycles_for(&cfg, p, 1000, 4000);
        // 63 loads and a jump per 64 instructions
        let loads = st.instructions - st.branches;
        (st.all.l1d, loads)
    };
    let (none, loads) = l1d_misses(PrefetchKind::None);
    assert_eq!(none, loads, "no prefetcher");
    let (next_line, loads) = l1d_misses(PrefetchKind::NextLine);
    assert!(
        next_line.abs_diff(loads / 2) <= 1,
        "next-line: {next_line} misses, {loads} loads"
    );
    let (tagged, _) = l1d_misses(PrefetchKind::Tagged);
    assert!(tagged <= 1, "tagged: {tagged} misses");
}

#[test]
fn dtlb_misses_show_at_the_head() {
    let cfg = Config::default();
    let mut core = crate::workload_core(&cfg, "dtlb", 1).unwrap();
    core.set_warmup(2000);
    let heads = run_checked(&mut core, &cfg, 20_000, 2_000_000);
    assert!(core.stats().committed.dtlb > 100, "{:?}", core.stats());
    assert!(heads[HeadCause::Dtlb as usize] > 1000, "{heads:?}");
}

/// The stream digest follows what commits, not when: the same workload
/// under another idealisation (other timing, other wrong paths) has the same
/// digest, another seed (another program) or a longer run another.
#[test]
fn the_stream_digest_depends_on_what_commits_only() {
    let digest = |seed: u64, ideal: &str, n: u64| {
        let cfg = Config {
            ideal: crate::Ideal::parse_list(ideal).unwrap(),
            ..Config::default()
        };
        let mut core = crate::workload_core(&cfg, "server", seed).unwrap();
        core.set_warmup(1_000);
        core.run(n, &mut []).unwrap();
        core.stream_digest()
    };
    let d = digest(1, "none", 5_000);
    assert_eq!(d, digest(1, "all", 5_000));
    assert_eq!(d, digest(1, "bpred,l2d", 5_000));
    assert_ne!(d, digest(2, "none", 5_000));
    assert_ne!(d, digest(1, "none", 5_001));
}

/// A load/store queue smaller than the memory instructions a full ROB holds
/// fills first: the backend stalls with the ROB not full (`lsq_full_cycles`),
/// and with a large enough queue the same stall shows as a full ROB.
#[test]
fn a_small_load_store_queue_fills_before_the_rob() {
    let mut cycles = vec![];
    for lsq in [16, 64] {
        let mut cfg = Config::default();
        cfg.core.lsq_entries = lsq;
        let mut core = crate::workload_core(&cfg, "l1d", 1).unwrap();
        core.set_warmup(2000);
        run_checked(&mut core, &cfg, 20_000, 2_000_000);
        let st = core.stats();
        cycles.push((st.lsq_full_cycles, st.rob_full_cycles, st.cycles));
    }
    let [(lsq16, rob16, n16), (lsq64, rob64, n64)] = cycles[..] else {
        unreachable!()
    };
    assert!(lsq16 > n16 / 2 && rob16 < n16 / 10, "{cycles:?}");
    assert!(lsq64 == 0 && rob64 > n64 / 2, "{cycles:?}");
}

#[test]
fn rob_fills_behind_a_long_miss() {
    let cfg = Config::default();
    let mut core = crate::workload_core(&cfg, "chase", 1).unwrap();
    core.set_warmup(2000);
    let heads = run_checked(&mut core, &cfg, 10_000, 3_000_000);
    assert!(
        core.stats().rob_full_cycles > core.stats().cycles / 3,
        "{:?}",
        core.stats()
    );
    assert!(
        heads[HeadCause::L2d as usize] > core.stats().cycles / 2,
        "{heads:?}"
    );
}

#[test]
fn misprediction_squashes_and_refetches() {
    let cfg = quiet_cfg();
    let mut core = crate::workload_core(&cfg, "branchy", 3).unwrap();
    let mut m = Mirror::new(&cfg);
    let mut squashes = 0;
    let mut wp_dispatch_before_squash = false;
    for _ in 0..50_000 {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        assert_eq!(m.rob_count(), core.rob_occupancy());
        if let Squash::Mispredict(_) = ev.squash {
            squashes += 1;
        }
        wp_dispatch_before_squash |= core.stats().wrong_path_dispatched > 0 && squashes > 0;
    }
    let st = core.stats();
    assert!(squashes > 100, "{squashes}");
    assert!(
        st.wrong_path_fetched > 0 && st.wrong_path_dispatched > 0,
        "{st:?}"
    );
    assert!(wp_dispatch_before_squash);
    assert_eq!(
        st.committed.mispredicts,
        st.all.mispredicts.min(st.committed.mispredicts)
    );
}

#[test]
fn wrong_path_fetch_touches_the_icache() {
    // a 50/50 branch whose taken side skips a cold stretch: the wrong path fetches
    // lines that the correct path later finds present (all-path misses exceed
    // committed-path misses)
    let mut cfg = quiet_cfg();
    cfg.ideal.l2i = true;
    let mut p = Prog::segments(&[(0x1000, 4096)], BranchKind::DirectJump);
    for k in 0..32u64 {
        let pc = 0x1000 + k * 512;
        let b = p.at(pc);
        b.class = OpClass::Branch;
        b.branch = Some(BranchKind::Conditional);
        b.target = pc + 256;
    }
    p.taken = coin_flips(12345);
    let (_, st) = cycles_for(&cfg, p, 2000, 40_000);
    assert!(st.all.l1i > st.committed.l1i, "{st:?}");
}

#[test]
fn decode_redirects_are_reported() {
    // cold BTB: direct jumps are redirected at decode
    let mut cfg = quiet_cfg();
    cfg.ideal.l1i = true;
    let segs: Vec<(u64, usize)> = (0..64).map(|k| (0x1000 + k * 0x100, 6)).collect();
    let p = Prog::segments(&segs, BranchKind::DirectJump);
    let mut core = Core::new(&cfg, p).unwrap();
    let mut m = Mirror::new(&cfg);
    let mut redirects = 0;
    for _ in 0..2000 {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        redirects += ev.fe_redirect as u32;
    }
    assert!(redirects >= 60, "{redirects}");
}

#[test]
fn commit_width_bounds_retirement() {
    let mut cfg = quiet_cfg();
    cfg.core.retire_width = 2;
    cfg.ideal.set_all(true);
    let p = Prog::segments(&[(0x1000, 512)], BranchKind::DirectJump);
    let (cycles, st) = cycles_for(&cfg, p, 1000, 10_000);
    let ipc = st.instructions as f64 / cycles as f64;
    assert!(ipc > 1.9 && ipc <= 2.0, "ipc {ipc}");
}

#[test]
fn watchdog_reports_a_stuck_pipeline() {
    // `validate` rejects a memory latency the watchdog cannot wait for; this test
    // wants exactly that stall, so it builds the core without validating
    let mut cfg = quiet_cfg();
    cfg.core.watchdog_cycles = 1000;
    cfg.memory_latency = 5000;
    assert!(cfg.validate().is_err());
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    p.at(0x1000).class = OpClass::Load;
    p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
    let mut core = Core::new_unvalidated(&cfg, p).unwrap();
    let mut err = None;
    for _ in 0..10_000 {
        if let Err(e) = core.step() {
            err = Some(e.to_string());
            break;
        }
    }
    let e = err.expect("watchdog fires");
    assert!(e.contains("stuck") && e.contains("wait_until"), "{e}");
}

/// Returns are predicted by the RAS alone: commit puts no return in the BTB,
/// so a return with nothing pushed (a loop closed by a return, no calls)
/// falls through in prediction and is mispredicted every time it runs.
#[test]
fn a_return_with_an_empty_ras_is_never_predicted_from_the_btb() {
    let cfg = quiet_cfg();
    let p = Prog::segments(&[(0x1000, 32)], BranchKind::Return);
    let (_, st) = cycles_for(&cfg, p, 320, 3200);
    assert_eq!(st.branches, 100, "one return per 32 instructions");
    assert_eq!(st.committed.mispredicts, st.branches, "{st:?}");
}

/// A core whose fifth instruction, a load, waits 5000 cycles for memory,
/// with a watchdog of 1000 cycles (so the watchdog fires first).
fn stuck_on_a_load() -> Core<Prog> {
    let mut cfg = quiet_cfg();
    cfg.ideal.l1i = true;
    cfg.core.watchdog_cycles = 1000;
    cfg.memory_latency = 5000;
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    p.at(0x1010).class = OpClass::Load;
    p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
    Core::new_unvalidated(&cfg, p).unwrap()
}

/// The watchdog lets a run go `core.watchdog_cycles` cycles without a commit
/// and stops it in the last of them, not one earlier: four instructions
/// commit, then a load waits 5000 cycles for memory with a watchdog of 1000.
#[test]
fn the_watchdog_fires_after_exactly_its_cycles_without_a_commit() {
    let mut core = stuck_on_a_load();
    let mut last_commit = None;
    let stopped_in = (0..10_000u64)
        .find(|&t| {
            assert_eq!(core.cycle(), t, "a step is a cycle");
            match core.step() {
                Ok(ev) => {
                    if ev.retired > 0 {
                        last_commit = Some(t);
                    }
                    false
                }
                Err(_) => true,
            }
        })
        .expect("the watchdog fires");
    let c = last_commit.expect("the instructions before the load commit");
    assert_eq!(core.committed(), 4);
    assert_eq!(stopped_in - c, 1000, "last commit in cycle {c}");
}

// ----------------------------------------------- interval-analysis checks

#[test]
fn isolated_l1i_miss_costs_about_the_l2_latency() {
    // two 1 KB halves 8 KB apart: their first lines conflict in the direct-mapped
    // L1I, so every iteration (512 instructions) has two isolated L1I misses (L2 hits)
    let run = |ideal: bool| {
        let mut cfg = quiet_cfg();
        cfg.ideal.l1i = ideal;
        // the last line of the first half and the first of the second share a set
        let p = Prog::segments(
            &[(0x10000, 256), (0x10000 + 8192 + 960, 256)],
            BranchKind::DirectJump,
        );
        let (c, st) = cycles_for(&cfg, p, 5120, 51_200);
        (c, st)
    };
    let (real, st) = run(false);
    let (ideal, _) = run(true);
    let misses = st.committed.l1i;
    assert!((190..=210).contains(&misses), "misses {misses}");
    let per = (real - ideal) as f64 / misses as f64;
    assert!(
        (7.0..=11.0).contains(&per),
        "penalty per L1I miss {per} (L2 latency 9)"
    );
}

#[test]
fn isolated_long_dmiss_costs_memory_latency_minus_rob_fill() {
    // one cold load per 1024 independent instructions
    let run = |ideal: bool| {
        let mut cfg = quiet_cfg();
        cfg.ideal.l2d = ideal;
        let mut p = Prog::segments(&[(0x10000, 1024)], BranchKind::DirectJump);
        p.at(0x10000).class = OpClass::Load;
        p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
        cycles_for(&cfg, p, 4096, 40_960)
    };
    let (real, st) = run(false);
    let (ideal, _) = run(true);
    let misses = st.committed.l2d;
    assert!((38..=41).contains(&misses), "misses {misses}");
    let per = (real - ideal) as f64 / misses as f64;
    // 250 memory cycles minus the ~128/4 = 32 cycles to fill the ROB
    assert!(
        (200.0..=240.0).contains(&per),
        "penalty per long miss {per}"
    );
}

#[test]
fn independent_long_misses_overlap() {
    let run = |loads: u64| {
        let mut cfg = quiet_cfg();
        let mut p = Prog::segments(&[(0x10000, 1024)], BranchKind::DirectJump);
        for k in 0..loads {
            p.at(0x10000 + k * 40).class = OpClass::Load;
        }
        p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
        cfg.ideal.l1i = true;
        cycles_for(&cfg, p, 4096, 40_960).0
    };
    let one = run(1);
    let four = run(4);
    assert!(
        (four as f64) < one as f64 * 1.15,
        "1 miss/iter {one} cycles, 4 misses/iter {four}"
    );
}

#[test]
fn misprediction_costs_resolution_plus_frontend() {
    // a 50/50 branch every 256 independent instructions, resolving at once
    let run = |ideal: bool, chain: u64| {
        let mut cfg = quiet_cfg();
        cfg.ideal.bpred = ideal;
        let mut p = Prog::segments(&[(0x10000, 256)], BranchKind::DirectJump);
        let b = 0x10000 + 200 * 4;
        // a dependence chain of `chain` ALU ops feeding the branch
        for k in 0..chain {
            let i = p.at(b - (chain - k) * 4);
            i.srcs = [7, 0, 0, 0];
            i.dsts = [7, 0];
        }
        let br = p.at(b);
        br.class = OpClass::Branch;
        br.branch = Some(BranchKind::Conditional);
        br.target = b + 8;
        br.srcs = [7, 0, 0, 0];
        let mut x = 99u64;
        p.taken = Box::new(move |_, _| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & 1 == 1
        });
        cycles_for(&cfg, p, 2560, 51_200)
    };
    let (real, st) = run(false, 0);
    let (ideal, _) = run(true, 0);
    let mis = st.committed.mispredicts;
    assert!(mis > 50, "mispredictions {mis}");
    let per = (real - ideal) as f64 / mis as f64;
    assert!(
        (5.0..=14.0).contains(&per),
        "penalty per misprediction {per}"
    );
    // a longer resolution time costs more, about one cycle per chain link
    let (real_c, st_c) = run(false, 24);
    let (ideal_c, _) = run(true, 24);
    let per_c = (real_c - ideal_c) as f64 / st_c.committed.mispredicts as f64;
    assert!(
        per_c > per + 10.0,
        "with a 24-op chain {per_c}, without {per}"
    );
}

// ------------------------------------------------------------ suite checks

#[test]
fn every_suite_workload_runs_legally() {
    let cfg = Config::default();
    for spec in workloads::suite() {
        let mut core = Core::new(&cfg, Workload::new(&spec, 7)).unwrap();
        core.set_warmup(3000);
        run_checked(&mut core, &cfg, 12_000, 5_000_000);
        let st = core.stats();
        assert_eq!(st.instructions, core.counted_retired(), "{}", spec.name);
        assert!(st.instructions >= 12_000, "{}", spec.name);
        // the committed path's events are some of all paths' events, also
        // across the warm-up's edge (an event before it is in neither)
        for ((k, c), (_, a)) in st.committed.named().into_iter().zip(st.all.named()) {
            assert!(
                c <= a,
                "{}: {k}: {c} committed, {a} on all paths",
                spec.name
            );
        }
    }
}

#[test]
fn runs_are_deterministic() {
    let cfg = Config::default();
    let run = || {
        let mut core = crate::workload_core(&cfg, "server", 11).unwrap();
        let mut evs = Vec::new();
        for _ in 0..20_000 {
            evs.push(*core.step().unwrap());
        }
        (evs, core.stats().clone())
    };
    assert_eq!(run(), run());
}

#[test]
fn all_ideal_balanced_runs_near_width() {
    let mut cfg = Config::default();
    cfg.ideal.set_all(true);
    let mut core = crate::workload_core(&cfg, "balanced", 1).unwrap();
    core.set_warmup(5000);
    run_checked(&mut core, &cfg, 50_000, 1_000_000);
    let ipc = 1.0 / core.stats().cpi();
    assert!(ipc > 3.3, "ipc {ipc} with every idealisation on");
}

#[test]
fn suite_names_are_unique_and_at_least_twelve() {
    let names = workloads::names();
    assert!(names.len() >= 12);
    let mut s = names.clone();
    s.sort();
    s.dedup();
    assert_eq!(s.len(), names.len());
    assert!(workloads::by_name("nope").is_none());
    // the limit workloads are runnable by name, distinct from the suite's
    let limits = workloads::limit_names();
    assert!(!limits.is_empty());
    for l in &limits {
        assert!(!names.contains(l), "{l} is in both lists");
        assert_eq!(workloads::by_name(l).unwrap().name, *l);
    }
}

mod config_checks;
mod layout_checks;
mod workload_checks;

/// After a misprediction's squash, the first correct-path instruction is
/// fetched the next cycle and dispatched `frontend_stages` cycles after the
/// squash, wherever decode is (decode in dispatch's own stage, once allowed,
/// added a stage: 4 cycles at 3 stages).
#[test]
fn a_refill_takes_the_frontend_depth_wherever_decode_is() {
    for (fs, ds) in [(3, 2), (4, 2), (4, 3), (5, 3), (5, 4), (10, 2), (10, 9)] {
        let mut cfg = Config::default();
        cfg.core.frontend_stages = fs;
        cfg.core.decode_stage = ds;
        cfg.validate().unwrap();
        let mut core = crate::workload_core(&cfg, "branchy", 3).unwrap();
        let mut m = Mirror::new(&cfg);
        let (mut squash_at, mut gaps) = (None, Vec::new());
        for t in 0..20_000u64 {
            let ev = *core.step().unwrap();
            m.step(&ev).unwrap();
            if let (Some(s), true) = (squash_at, ev.dispatched > 0) {
                gaps.push(t - s);
                squash_at = None;
            }
            if let Squash::Mispredict(_) = ev.squash {
                squash_at = Some(t);
            }
        }
        assert!(
            gaps.len() > 100,
            "stages {fs}, decode {ds}: {} refills",
            gaps.len()
        );
        let min = *gaps.iter().min().unwrap();
        assert_eq!(min, fs as u64, "stages {fs}, decode {ds}: shortest refill");
    }
    // decode in dispatch's stage is refused, naming the range
    let mut cfg = Config::default();
    cfg.core.decode_stage = 5;
    let e = cfg.validate().unwrap_err().to_string();
    assert!(
        e.contains("`core.decode_stage` = 5") && e.contains("2..=4"),
        "{e}"
    );
}

/// The derived fetch queue grows with the frontend's depth and width, so that
/// a deeper pipeline is not starved of instructions: without misses its CPI
/// is no worse than the machine's (a fixed 16-entry queue doubled it at 10
/// stages).
#[test]
fn a_deeper_or_wider_frontend_is_not_starved_by_the_fetch_queue() {
    let cpi = |sets: &[&str]| {
        let mut cfg = Config::default();
        cfg.ideal.set_all(true);
        cfg.set_all(sets.iter().copied()).unwrap();
        let mut core = crate::workload_core(&cfg, "balanced", 1).unwrap();
        core.set_warmup(5000);
        run_checked(&mut core, &cfg, 30_000, 1_000_000);
        core.stats().cpi()
    };
    let base = cpi(&[]);
    for sets in [
        &["core.frontend_stages=10"][..],
        &["core.frontend_stages=20"],
        &["core.frontend_stages=10", "core.decode_stage=6"],
    ] {
        let c = cpi(sets);
        // (a larger queue hides more fetch bubbles: a little faster)
        assert!(c < 1.05 * base, "{sets:?}: CPI {c}, 5 stages {base}");
    }
    let mut c = Config::default();
    assert_eq!(c.core.fetch_queue_entries(), 16);
    c.core.frontend_stages = 10;
    assert_eq!(c.core.fetch_queue_entries(), 36);
    c.core.fetch_queue = 20;
    assert_eq!(c.core.fetch_queue_entries(), 20);
    // a wider dispatch than the paper's is fed too (8 wide: IPC beyond 4)
    let wide = cpi(&[
        "core.decode_width=8",
        "core.dispatch_width=8",
        "core.retire_width=8",
        "core.rob_entries=256",
    ]);
    assert!(wide < 0.8 * base, "8 wide: CPI {wide}, 4 wide {base}");
}

// ------------------------------------------ the statistics and the bundle fields, event for event

/// What the statistics say agrees with the bundles, event for event: every
/// counted `squash = mispredict` is one all-path misprediction, every counted
/// `fe_redirect` one redirect, every counted `retired` one instruction; a
/// counted `backend_full` with a ROB that is not full is one `lsq_full_cycles`
/// or, the queue not full either, one `branch_full_cycles` (the core holds
/// `core.fmt_rows - 1` branches: `stream` with 8 rows);
/// the I-TLB misses of the `itlb` workload are mostly on the committed path
/// (its committed count is not dropped); and counting starts in the cycle right after the one that commits the warm-up's last
/// instruction.
#[test]
fn the_statistics_agree_with_the_bundles() {
    for (w, lsq, rows) in [
        ("branchy", 64, 64),
        ("itlb", 64, 64),
        ("server", 64, 64),
        ("l1d", 16, 64),
        ("stream", 64, 8),
    ] {
        let mut cfg = Config::default();
        cfg.core.lsq_entries = lsq;
        cfg.core.fmt_rows = rows;
        let warmup = 3_001;
        let mut core = crate::workload_core(&cfg, w, 1).unwrap();
        core.set_warmup(warmup);
        let mut m = Mirror::new(&cfg);
        let (mut mispredicts, mut redirects, mut retired) = (0u64, 0u64, 0u64);
        // cycles with `backend_full` and a ROB not full; of them, those that
        // start with the most branches in flight
        let (mut window_full, mut branches_full) = (0u64, 0u64);
        // the bundle that commits the warm-up's last instruction, and the first counted one
        let (mut warm, mut warm_done_at, mut first_counted) = (0u64, None, None);
        let mut n = 0u64;
        while core.counted_retired() < 20_000 {
            assert!(n < 1_000_000, "{w}: ran out of cycles");
            // (start-of-cycle states, as the bundle's `backend_full`)
            let at_branch_limit = core.branches_in_flight() + 1 >= rows;
            let ev = *core.step().unwrap();
            let rob_full = m.rob_count() == cfg.core.rob_entries;
            m.step(&ev).unwrap();
            if ev.count_enable {
                mispredicts += matches!(ev.squash, Squash::Mispredict(_)) as u64;
                redirects += ev.fe_redirect as u64;
                retired += ev.retired as u64;
                window_full += (ev.backend_full && !rob_full) as u64;
                branches_full += (ev.backend_full && !rob_full && at_branch_limit) as u64;
                first_counted.get_or_insert(n);
            } else {
                warm += ev.retired as u64;
                if warm == warmup {
                    warm_done_at.get_or_insert(n);
                }
            }
            n += 1;
        }
        assert_eq!(
            first_counted,
            warm_done_at.map(|k| k + 1),
            "{w}: counting starts right after the warm-up"
        );
        let st = core.stats();
        assert_eq!(st.all.mispredicts, mispredicts, "{w}");
        assert_eq!(st.fe_redirects, redirects, "{w}");
        assert_eq!(st.instructions, retired, "{w}");
        assert_eq!(
            st.lsq_full_cycles + st.branch_full_cycles,
            window_full,
            "{w}"
        );
        // (a cycle with both full counts as a full queue)
        assert!(st.branch_full_cycles <= branches_full, "{w}");
        assert_eq!(st.lsq_full_cycles > 0, w == "l1d" || w == "server", "{w}");
        assert_eq!(st.branch_full_cycles > 0, w == "stream", "{w}");
        // (committed <= all, field by field: every_suite_workload_runs_legally)
        let (a, c) = (st.all, st.committed);
        if w == "itlb" {
            // the workload's I-TLB misses are on the committed path
            assert!(c.itlb * 2 > a.itlb, "{w}: committed {c:?} all {a:?}");
        }
    }
}

/// A load at the ROB head that cannot start for want of an MSHR waits on the
/// miss it is about to make (one MSHR per level, every load a new line): the
/// head is `l2d`, and `other` only in a cycle whose head was dispatched in the
/// cycle before (commit runs before issue, so such a load has not yet tried
/// to issue: after the fetch waits of a cold I-cache, here in the warm-up).
#[test]
fn a_load_waiting_for_an_mshr_at_the_head_waits_on_its_miss() {
    let mut cfg = quiet_cfg();
    cfg.l1d.mshrs = 1;
    cfg.l2.mshrs = 1;
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    for k in 0..63u64 {
        p.at(0x1000 + k * 4).class = OpClass::Load;
    }
    p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
    let mut core = Core::new(&cfg, p).unwrap();
    core.set_warmup(200);
    let mut m = Mirror::new(&cfg);
    // the bundle each instruction in the ROB was dispatched in, oldest first
    let mut rob = std::collections::VecDeque::new();
    let mut heads = [0u64; 6];
    let mut k = 0u64;
    while core.counted_retired() < 2000 {
        let ev = *core.step().unwrap();
        if ev.head == HeadCause::Other {
            assert_eq!(rob.front(), Some(&(k - 1)), "bundle {k}: head `other`");
        }
        heads[ev.head as usize] += 1;
        m.step(&ev).unwrap();
        rob.drain(..ev.retired as usize);
        for _ in 0..ev.dispatched {
            rob.push_back(k);
        }
        rob.truncate(m.rob_count() as usize);
        k += 1;
    }
    assert!(heads[HeadCause::L2d as usize] > 100_000, "{heads:?}");
}

/// A D-TLB walk at the ROB head is `dtlb` for exactly the cycles of the walk:
/// a chain of loads, each a new page and a new line, each issued in the cycle
/// its producer completes and commits, so at the head from the next cycle:
/// `miss_latency - 1` cycles of `dtlb`, then `l2d` (the miss after the walk).
#[test]
fn a_walk_at_the_head_is_dtlb_for_exactly_its_cycles() {
    let mut cfg = quiet_cfg();
    cfg.ideal.dtlb = false;
    let mut p = load_chain(64);
    p.addr = Box::new(|_, n| 0x1000_0000 + n * 0x1_0040);
    let mut core = Core::new(&cfg, p).unwrap();
    let mut m = Mirror::new(&cfg);
    let (mut run, mut runs) = (0u64, vec![]);
    for _ in 0..100_000 {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        if ev.head == HeadCause::Dtlb {
            run += 1;
        } else if run > 0 {
            assert_eq!(ev.head, HeadCause::L2d, "after the walk, its L2 miss");
            runs.push(run);
            run = 0;
        }
    }
    let want = cfg.dtlb.miss_latency as u64 - 1;
    assert!(runs.len() > 100, "{runs:?}");
    assert!(runs.iter().all(|&r| r == want), "want {want}: {runs:?}");
}

/// A store waits at the head for its D-TLB walk and then its latency, never
/// for its line: the cycle after the walk is `dtlb` whether the line hits or
/// misses (it was `other` on a miss, so a perfect L1D moved a cycle per store
/// from base to `dtlb`). A store to a new page and a new line, then 300
/// independent operations: the head causes are the same with the L1D real
/// and ideal.
#[test]
fn a_store_after_its_walk_waits_as_dtlb_whatever_its_lines_level() {
    let heads = |ideal_l1d: bool| {
        let mut cfg = quiet_cfg();
        cfg.ideal.dtlb = false;
        cfg.ideal.l1d = ideal_l1d;
        cfg.dtlb.miss_latency = 100;
        let mut p = Prog::segments(&[(0x1000, 302)], BranchKind::DirectJump);
        p.at(0x1000).class = OpClass::Store;
        p.addr = Box::new(|_, n| 0x4000_0000 + n * 4096 + (n % 64) * 64);
        let mut core = Core::new(&cfg, p).unwrap();
        core.set_warmup(3_000);
        run_checked(&mut core, &cfg, 30_000, 3_000_000)
    };
    let (real, ideal) = (heads(false), heads(true));
    assert_eq!(real, ideal, "real L1D {real:?}, ideal {ideal:?}");
    assert!(real[HeadCause::Dtlb as usize] > 5_000, "{real:?}");
    // (a few cycles of `other`: the loop's jump and the cold start)
    assert!(real[HeadCause::Other as usize] < 100, "{real:?}");
}

/// `dispatched_imiss` marks the instruction whose fetch waited on an I-TLB
/// miss as well as on an I-cache miss: with a perfect I-cache every wait is
/// a walk, and every committed instruction charged with an I-TLB miss was
/// dispatched with the bit.
#[test]
fn an_itlb_only_wait_marks_the_instruction_it_delivers() {
    let mut cfg = quiet_cfg();
    cfg.ideal.itlb = false;
    cfg.ideal.l1i = true;
    // 256 one-line blocks, one per page: more pages than I-TLB entries
    let segs: Vec<(u64, usize)> = (0..256).map(|k| (0x10_0000 + k * 4160, 16)).collect();
    let p = Prog::segments(&segs, BranchKind::DirectJump);
    let mut core = Core::new(&cfg, p).unwrap();
    core.set_warmup(5_000);
    let mut m = Mirror::new(&cfg);
    let mut bits = 0u64;
    while core.counted_retired() < 20_000 {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        if ev.count_enable {
            bits += ev.dispatched_imiss.count_ones() as u64;
        }
    }
    let st = core.stats();
    assert!(st.committed.itlb > 100, "{st:?}");
    assert!(bits >= st.committed.itlb, "{bits} bits, {st:?}");
}

/// `dispatched_imiss` marks, in its own place in the dispatch group, the one
/// instruction whose fetch waited on each I-miss. A loop one line longer than
/// the (direct-mapped) L1 I-cache misses twice an iteration, on the two lines
/// that share a set; the fetch queue is deep enough that the waiting line
/// arrives behind instructions still to dispatch, and the loop's length (one
/// more than a multiple of the dispatch width) moves the line's first
/// instruction to another place in its group each iteration.
#[test]
fn the_imiss_bit_marks_the_waiting_instruction_in_its_place() {
    let mut cfg = quiet_cfg();
    cfg.ideal.l2i = true;
    cfg.ideal.bpred = true;
    cfg.core.fetch_queue = 256;
    let c = &cfg.l1i;
    assert_eq!(c.ways, 1, "the default L1 I-cache is direct mapped");
    let lines = c.size / c.line as u64;
    let n = ((lines + 1) * c.line as u64 / 4) as usize + 1;
    let p = Prog::segments(&[(0x10_0000, n)], BranchKind::DirectJump);
    let mut core = Core::new(&cfg, p).unwrap();
    core.set_warmup(40_000);
    let mut m = Mirror::new(&cfg);
    let (mut bits, mut later) = (0u64, 0u64);
    while core.counted_retired() < 100_000 {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        if ev.count_enable {
            bits += ev.dispatched_imiss.count_ones() as u64;
            later += (ev.dispatched_imiss & !1).count_ones() as u64;
        }
    }
    let st = core.stats();
    assert!(st.committed.l1i > 100, "{st:?}");
    // no wrong path: one bit per miss, on the committed path
    assert_eq!(bits, st.committed.l1i, "{st:?}");
    // a quarter of the groups start with the line, the rest have it later
    assert!(
        later >= bits / 2 && later < bits,
        "{later} of {bits} bits past the first place"
    );
}

/// A misprediction inside a called function restores the return stack the
/// branch saw (the call still on it), so the return after it is predicted
/// right: a loop calls a function whose one conditional branch goes either
/// way at random, and mispredicts as often as the same loop with the call
/// and return made plain jumps, whose mispredictions are the conditional's.
#[test]
fn a_misprediction_in_a_function_keeps_its_return_predicted() {
    let mispredicts = |call: bool| {
        let cfg = quiet_cfg();
        let mut p = Prog::segments(
            &[(0x1000, 8), (0x2000, 8), (0x1020, 8)],
            BranchKind::DirectJump,
        );
        if call {
            p.at(0x101c).branch = Some(BranchKind::DirectCall);
            p.at(0x201c).branch = Some(BranchKind::Return);
        }
        let c = p.at(0x2008);
        c.class = OpClass::Branch;
        c.branch = Some(BranchKind::Conditional);
        c.target = 0x2010;
        p.taken = coin_flips(0x2545_f491_4f6c_dd1d);
        let (_, st) = cycles_for(&cfg, p, 2000, 20_000);
        (st.committed.mispredicts, st.branches)
    };
    let (jumps, b) = mispredicts(false);
    let (calls, _) = mispredicts(true);
    assert!(
        jumps > b / 8,
        "the conditional is unpredictable: {jumps} of {b}"
    );
    // with the return stack lost at each recovery: twice as many (measured)
    assert_eq!(calls, jumps);
}

// ------------------------------------------------ the core's rules, case by case

/// A finite committed stream, in order, then the end of the source; the
/// wrong path finds the listed instruction at its pc, else a plain ALU op.
struct Listing {
    code: Vec<Instr>,
    k: usize,
    /// Start again from the first instruction after the last (a loop,
    /// when the last is a branch to the first).
    repeat: bool,
}

impl Listing {
    fn new(code: Vec<Instr>) -> Listing {
        Listing {
            code,
            k: 0,
            repeat: false,
        }
    }
}

impl InstrSource for Listing {
    fn name(&self) -> &str {
        "listing"
    }
    fn next(&mut self) -> Result<Option<Instr>, SourceError> {
        if self.repeat && self.k == self.code.len() {
            self.k = 0;
        }
        self.k += 1;
        Ok(self.code.get(self.k - 1).copied())
    }
    fn wrong_path(&mut self, pc: u64) -> Instr {
        match self.code.iter().find(|i| i.pc == pc) {
            Some(i) => *i,
            None => Instr::plain_alu(pc, 4),
        }
    }
}

/// A chain of 63 divides (each reads and writes register 5) and a jump: the
/// chain takes the divide latency per divide, 63 * 20 = 1260 cycles an
/// iteration, and each divide is one long-latency operation of 19 cycles
/// beyond the first, on all paths as on the committed one. The window's
/// first divide issued in the warm-up (so it is in neither count) and the
/// divide after its last one issued in it (on all paths only): of the 630
/// divides committed, 629 are counted committed and 630 on all paths.
#[test]
fn a_divide_chain_takes_the_divide_latency_and_counts_each_as_long_latency() {
    let mut cfg = quiet_cfg();
    cfg.ideal.l1i = true;
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    for k in 0..63u64 {
        let i = p.at(0x1000 + k * 4);
        i.class = OpClass::Div;
        i.srcs = [5, 0, 0, 0];
        i.dsts = [5, 0];
    }
    let (cycles, st) = cycles_for(&cfg, p, 640, 640);
    assert_eq!(cycles, 12_600, "10 iterations of 1260 cycles");
    assert_eq!((st.committed.longlat, st.all.longlat), (629, 630));
    assert_eq!(st.committed.longlat_cycles, 629 * 19);
    assert_eq!(st.all.longlat_cycles, 630 * 19);
}

/// With one MSHR where a miss needs one, misses to memory serialise, each
/// starting in the cycle the one before it fills: 2 (L1) + 9 (L2) + 250
/// (memory) = 261 cycles a load (one MSHR in the L1 and the L2, or eight
/// in the L1 and one in the L2). Every load misses both levels, none the
/// (ideal) D-TLB: 128 loads in 1024 instructions.
#[test]
fn misses_to_memory_serialise_on_a_single_mshr_at_261_cycles_each() {
    for l1_mshrs in [1, 8] {
        let mut cfg = quiet_cfg();
        cfg.l1d.mshrs = l1_mshrs;
        cfg.l2.mshrs = 1;
        let (cycles, st) = cycles_for(&cfg, new_lines(OpClass::Load), 512, 1024);
        assert_eq!(cycles, 128 * 261, "{l1_mshrs} L1 MSHRs");
        let a = st.all;
        assert_eq!((a.l1d, a.l2d, a.dtlb), (128, 128, 0), "{l1_mshrs} L1 MSHRs");
    }
}

/// The quiet machine with one D-TLB walker and the L1D ideal (`walker`), or
/// one L1D MSHR and the L2 ideal: one resource a miss must hold.
fn one_walker_or_l1_mshr(walker: bool) -> Config {
    let mut cfg = quiet_cfg();
    if walker {
        cfg.ideal.l1d = true;
        cfg.ideal.dtlb = false;
        cfg.dtlb.walkers = 1;
    } else {
        cfg.ideal.l2d = true;
        cfg.l1d.mshrs = 1;
    }
    cfg
}

/// A load that hits does not wait for the MSHR or the page walker its
/// neighbours' misses hold: a loop of one independent load to a new line on
/// a new page, 62 loads in a chain on one line, and a jump takes the chain's
/// 62 * 2 = 124 cycles an iteration while the one MSHR (the L2 ideal: busy
/// 11 cycles) or the one walker (the L1D ideal: busy 30 cycles) is taken
/// by the other load. No load misses the L2.
#[test]
fn a_load_that_hits_does_not_wait_for_a_free_mshr_or_walker() {
    for walker in [false, true] {
        let cfg = one_walker_or_l1_mshr(walker);
        let mut p = load_chain(64);
        let i = p.at(0x1000);
        i.srcs = [0; 4];
        i.dsts = [6, 0];
        p.addr = Box::new(|pc, n| {
            if pc == 0x1000 {
                0x1000_0000 + n * 0x1040
            } else {
                0x10_0000
            }
        });
        let (cycles, st) = cycles_for(&cfg, p, 640, 1280);
        assert_eq!(cycles, 20 * 124, "walker {walker}");
        assert_eq!(st.all.l2d, 0, "walker {walker}");
        let misses = if walker { st.all.dtlb } else { st.all.l1d };
        assert_eq!(misses, 20, "walker {walker}");
    }
}

/// With one page walker (the L1D ideal) or one L1 MSHR (the L2 ideal),
/// independent loads each to a new page and line serialise on it: 30 cycles
/// a walk, 2 + 9 = 11 an L1 miss, 128 loads in 1024 instructions. The ROB
/// head waits on the walks (`dtlb`) or on lines from the L2 (`l1d`), never
/// on `l2d`.
#[test]
fn a_single_walker_or_l1_mshr_serialises_the_misses_that_need_it() {
    for walker in [false, true] {
        let cfg = one_walker_or_l1_mshr(walker);
        let mut p = new_lines(OpClass::Load);
        p.addr = Box::new(|_, n| 0x1000_0000 + n * 0x1040);
        let mut core = Core::new(&cfg, p).unwrap();
        core.set_warmup(512);
        let heads = run_checked(&mut core, &cfg, 1024, 100_000);
        let (st, h) = (core.stats(), |c: HeadCause| heads[c as usize]);
        if walker {
            assert_eq!(st.cycles, 128 * 30);
            assert_eq!((st.all.dtlb, st.all.l1d), (128, 0));
            assert!(h(HeadCause::Dtlb) > 128 * 20, "{heads:?}");
        } else {
            assert_eq!(st.cycles, 128 * 11);
            assert_eq!((st.all.dtlb, st.all.l1d, st.all.l2d), (0, 128, 0));
            assert!(h(HeadCause::L1d) > 128 * 8, "{heads:?}");
        }
        assert_eq!(h(HeadCause::L2d), 0, "walker {walker}: {heads:?}");
    }
}

/// Fetch, decode and issue each bound the rate at their width: with every
/// idealisation on, straight-line code runs at exactly two instructions a
/// cycle when any one of them is two wide, nothing goes down a wrong path
/// and no event is counted (fetch accesses each line, and the ideal caches
/// and TLB miss none of them).
#[test]
fn a_fetch_decode_or_issue_width_of_two_bounds_the_rate_at_two() {
    for key in ["core.fetch_width", "core.decode_width", "core.issue_width"] {
        let mut cfg = quiet_cfg();
        cfg.ideal.set_all(true);
        cfg.set(&format!("{key}=2")).unwrap();
        let p = Prog::segments(&[(0x1000, 512)], BranchKind::DirectJump);
        let (cycles, st) = cycles_for(&cfg, p, 1024, 10_240);
        assert_eq!(cycles, 5120, "{key}");
        assert_eq!(
            (st.wrong_path_fetched, st.wrong_path_dispatched),
            (0, 0),
            "{key}"
        );
        assert_eq!(st.all, crate::MissCounts::default(), "{key}");
    }
}

/// A load or store without an address (address 0) has the plain L1 latency and
/// touches no cache or TLB: a chain of such loads with a real D-TLB and L1D
/// misses nothing in either, from a cold start.
#[test]
fn a_memory_instruction_without_an_address_touches_no_cache_or_tlb() {
    let mut cfg = quiet_cfg();
    cfg.ideal.dtlb = false;
    let (_, st) = cycles_for(&cfg, load_chain(64), 0, 640);
    let a = st.all;
    assert_eq!((a.dtlb, a.l1d, a.l2d), (0, 0, 0), "{a:?}");
}

/// A store that misses and finds a free MSHR allocates its line like a load:
/// one store to a new line every 256 instructions (never more than one MSHR
/// busy) misses the L1D and the L2 each time, 10 in 2560 instructions.
#[test]
fn a_store_with_a_free_mshr_allocates_its_line() {
    let mut p = Prog::segments(&[(0x10000, 256)], BranchKind::DirectJump);
    p.at(0x10000).class = OpClass::Store;
    p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
    let (_, st) = cycles_for(&quiet_cfg(), p, 2560, 2560);
    assert_eq!((st.all.l1d, st.all.l2d), (10, 10), "{:?}", st.all);
}

/// Stores do not drive the data prefetcher: with next-line prefetching, a
/// store to line 3k and a load to line 3k + 1 (each 256 instructions apart)
/// both miss, 20 misses in 2560 instructions (a store's miss prefetching the
/// load's line would halve that).
#[test]
fn a_store_miss_does_not_prefetch() {
    let mut cfg = quiet_cfg();
    cfg.prefetch.kind = crate::config::PrefetchKind::NextLine;
    let mut p = Prog::segments(&[(0x10000, 256)], BranchKind::DirectJump);
    p.at(0x10000).class = OpClass::Store;
    p.at(0x10200).class = OpClass::Load;
    p.addr = Box::new(|pc, n| 0x1000_0000 + ((n / 256) * 3 + (pc == 0x10200) as u64) * 64);
    let (_, st) = cycles_for(&cfg, p, 2560, 2560);
    assert_eq!(st.all.l1d, 20, "{:?}", st.all);
}

/// A load that misses the L1D and hits the L2 needs no L2 MSHR: with one L2
/// MSHR, a chain of 62 loads cycling over 512 lines (32 KB: they miss the
/// 16 KB L1D and hit the L2 once warm) takes 2 + 9 = 11 cycles a load, 682
/// an iteration, although the iteration's other load (independent, to a new
/// line) holds the L2 MSHR for 259 of them: 10 iterations in 6820 cycles.
#[test]
fn an_l2_hit_does_not_wait_for_the_l2_mshr_a_miss_to_memory_holds() {
    let mut cfg = quiet_cfg();
    cfg.l2.mshrs = 1;
    let mut p = load_chain(64);
    let i = p.at(0x1000);
    i.srcs = [0; 4];
    i.dsts = [6, 0];
    let mut m = 0u64;
    p.addr = Box::new(move |pc, n| {
        if pc == 0x1000 {
            0x1000_0000 + n * 64
        } else {
            m += 1;
            0x2000_0000 + (m % 512) * 64
        }
    });
    let (cycles, st) = cycles_for(&cfg, p, 1280, 640);
    assert_eq!(cycles, 6820);
    assert_eq!((st.all.l1d, st.all.l2d), (630, 10), "{:?}", st.all);
}

/// Issue looks at every ROB slot, oldest first from the head's, wherever the
/// ROB wraps: a loop of 256 independent instructions with a load missing to
/// memory takes 294 cycles an iteration (the miss's 261 and 33 for the 128
/// instructions that do not fit in the ROB behind it), and a second miss `k`
/// instructions after the first
/// (both in the 128-entry ROB together) hides under it for every `k`, its
/// slot in the head's half of the ROB or in the other.
#[test]
fn a_second_miss_anywhere_in_the_rob_overlaps_the_first() {
    for k in [1u64, 31, 60, 64, 100, 127] {
        let mut p = Prog::segments(&[(0x10000, 256)], BranchKind::DirectJump);
        p.at(0x10000).class = OpClass::Load;
        p.at(0x10000 + 4 * k).class = OpClass::Load;
        p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
        let (cycles, st) = cycles_for(&quiet_cfg(), p, 2560, 2560);
        assert_eq!(cycles, 2940, "second load at +{k}");
        assert_eq!(st.all.l2d, 20, "second load at +{k}");
    }
}

/// A ROB whose size is not a power of two (100 entries: slots by remainder,
/// not by mask) runs the `branchy` workload legally, its squashes included.
#[test]
fn a_rob_of_100_entries_runs_legally() {
    let mut cfg = Config::default();
    cfg.core.rob_entries = 100;
    let mut core = crate::workload_core(&cfg, "branchy", 3).unwrap();
    core.set_warmup(2000);
    core.set_limit(20_000);
    run_checked(&mut core, &cfg, 20_000, 1_000_000);
    let st = core.stats();
    assert_eq!(st.instructions, 20_000);
    assert!(st.all.mispredicts > 100, "{st:?}");
}

/// `set_limit` stops commit at exactly the limit, and a core at its limit
/// (committing nothing) is not stuck: 30 000 cycles, beyond the 20 000 of
/// the watchdog, step without an error. Each step's bundle is the one
/// `last_events` returns.
#[test]
fn a_core_at_its_limit_commits_no_more_and_is_not_stuck() {
    let cfg = quiet_cfg();
    let p = Prog::segments(&[(0x1000, 512)], BranchKind::DirectJump);
    let mut core = Core::new(&cfg, p).unwrap();
    core.set_warmup(100);
    core.set_limit(1000);
    for _ in 0..30_000 {
        let ev = *core.step().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(*core.last_events(), ev);
    }
    assert!(core.limit_reached());
    assert_eq!((core.committed(), core.counted_retired()), (1100, 1000));
}

/// A source that ends is run to its last instruction and the run reports
/// what it measured: 48 instructions (three lines from 0x1000) commit and
/// `run(100)` fails with `SourceEnded`. Fetch stops with the source: with a
/// real L1I the three lines are its only misses (no access to the line after
/// the end); and a last instruction mispredicted (a taken conditional,
/// predicted not taken, the L1I ideal) still has its wrong path fetched
/// until it resolves: 20 instructions, four a cycle (the rate dispatch
/// frees the full fetch queue at) in the five cycles from its fetch to its
/// resolution (dispatch four cycles after fetch, issue, one cycle to execute).
#[test]
fn a_source_that_ends_runs_to_its_last_instruction_and_reports_it() {
    for branch_last in [false, true] {
        let mut code: Vec<Instr> = (0..48).map(|k| alu(0x1000 + 4 * k)).collect();
        let mut cfg = quiet_cfg();
        if branch_last {
            cfg.ideal.l1i = true;
            let b = &mut code[47];
            b.class = OpClass::Branch;
            b.branch = Some(BranchKind::Conditional);
            b.taken = true;
            b.target = 0x2000;
        }
        let mut core = Core::new(&cfg, Listing::new(code)).unwrap();
        match core.run(100, &mut []) {
            Err(crate::SimError::SourceEnded {
                committed,
                measured,
                warmup,
                wanted,
                ..
            }) => assert_eq!((committed, measured, warmup, wanted), (48, 48, 0, 100)),
            r => panic!("branch last {branch_last}: {r:?}"),
        }
        assert!(core.finished());
        let st = core.stats();
        if branch_last {
            assert_eq!(st.committed.mispredicts, 1);
            assert_eq!(st.wrong_path_fetched, 20);
        } else {
            assert_eq!((st.all.l1i, st.wrong_path_fetched), (3, 0), "{st:?}");
        }
    }
}

/// The watchdog's report lists the eight oldest instructions in the ROB: here
/// the load that waits for memory (after four instructions committed) and
/// the seven behind it, sequence numbers 4 to 11.
#[test]
fn the_watchdog_report_lists_the_eight_oldest_instructions() {
    let mut core = stuck_on_a_load();
    let e = (0..10_000)
        .find_map(|_| core.step().err())
        .expect("the watchdog fires")
        .to_string();
    let seqs: Vec<&str> = e
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rob seq "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(seqs, ["4", "5", "6", "7", "8", "9", "10", "11"], "{e}");
}

/// The global history is repaired after a misprediction, so a branch that
/// repeats the outcome of the branch before it is predicted from the history
/// even after that one mispredicted: in a 16-instruction loop, B1 (0x1010)
/// goes either way at random and B2 (0x1020) the way B1 went. B1 mispredicts
/// about half of its 2131 runs in the window and B2 seldom: 1132
/// mispredictions in all (measured), between 40 % and 60 % of B1's runs. A
/// history wrong after B1's misprediction (not restored, its last bit lost
/// or wrong, or checkpointed as 0) makes B2 a coin flip too: 1582 to 2152.
#[test]
fn a_branch_repeating_a_mispredicted_one_is_predicted_from_the_repaired_history() {
    let cfg = quiet_cfg();
    let mut p = Prog::segments(&[(0x1000, 16)], BranchKind::DirectJump);
    for (pc, target) in [(0x1010, 0x1018), (0x1020, 0x1028)] {
        let b = p.at(pc);
        b.class = OpClass::Branch;
        b.branch = Some(BranchKind::Conditional);
        b.target = target;
    }
    let (mut flip, mut last) = (coin_flips(0x2545_f491_4f6c_dd1d), true);
    p.taken = Box::new(move |pc, n| {
        if pc == 0x1010 {
            last = flip(pc, n);
        }
        last
    });
    let (_, st) = cycles_for(&cfg, p, 3200, 32_000);
    // three branches an iteration: B1, B2 and the loop's jump
    let b1 = st.branches / 3;
    assert_eq!(b1, 2131);
    let m = st.committed.mispredicts;
    assert!(
        m * 10 > b1 * 4 && m * 10 < b1 * 6,
        "{m} mispredictions, {b1} runs of B1"
    );
}

/// A misprediction or a decode redirect leaves the return stack as the
/// committed path has it. A calls O (push 0x1020), O calls F (push 0x2020),
/// F returns to 0x2040, not to 0x2020 (mispredicted), and O returns from
/// there to 0x1020: the repair after F's return pops F's entry, so O's
/// return is predicted right. With a one-entry BTB every call (and the loop's
/// jump) misses the BTB and is redirected at decode, whose repair pushes the
/// call's return address again: of 5000 branches (1000 iterations), 1000 mispredict (F's returns)
/// and 3000 are redirected at decode.
#[test]
fn a_mispredicted_return_and_redirected_calls_leave_the_return_stack_right() {
    let mut cfg = quiet_cfg();
    cfg.bpred.btb_entries = 1;
    cfg.bpred.btb_ways = 1;
    let mut p = Prog::segments(
        &[
            (0x1000, 8),
            (0x2000, 8),
            (0x3000, 8),
            (0x2040, 8),
            (0x1020, 8),
        ],
        BranchKind::DirectJump,
    );
    p.at(0x101c).branch = Some(BranchKind::DirectCall);
    p.at(0x201c).branch = Some(BranchKind::DirectCall);
    p.at(0x301c).branch = Some(BranchKind::Return);
    p.at(0x205c).branch = Some(BranchKind::Return);
    let (_, st) = cycles_for(&cfg, p, 4000, 40_000);
    assert_eq!(st.branches, 5000);
    assert_eq!(st.committed.mispredicts, 1000);
    assert_eq!(st.fe_redirects, 3000);
}

/// The next sequential pc is `pc + size`: a loop of 63 two-byte instructions
/// and a two-byte jump (32 to a line), with every idealisation on, runs at
/// the full width of four, 6400 instructions in 1600 cycles (a fetch that
/// took them for four bytes would end its group after each).
#[test]
fn a_loop_of_two_byte_instructions_runs_at_full_width() {
    let mut cfg = quiet_cfg();
    cfg.ideal.set_all(true);
    let mut code: Vec<Instr> = (0..64)
        .map(|k| Instr::plain_alu(0x1000 + 2 * k, 2))
        .collect();
    let j = &mut code[63];
    j.class = OpClass::Branch;
    j.branch = Some(BranchKind::DirectJump);
    j.taken = true;
    j.target = 0x1000;
    let src = Listing {
        repeat: true,
        ..Listing::new(code)
    };
    let mut core = Core::new(&cfg, src).unwrap();
    core.set_warmup(640);
    run_checked(&mut core, &cfg, 6400, 100_000);
    assert_eq!(core.stats().cycles, 1600);
}

/// Fetch keeps at most `fmt_rows - 1` branches in flight: with 4 rows, a
/// loop of one ALU operation and a jump, three times, never has more than 3
/// (and has 3).
#[test]
fn branches_in_flight_stop_at_the_fmt_rows_less_one() {
    let mut cfg = quiet_cfg();
    cfg.ideal.set_all(true);
    cfg.core.fmt_rows = 4;
    let p = Prog::segments(
        &[(0x1000, 2), (0x1010, 2), (0x1020, 2)],
        BranchKind::DirectJump,
    );
    assert_eq!(most_branches_in_flight(&cfg, p, 2000), 3);
}

/// The most branches in flight over `cycles` cycles of `p` (each bundle
/// checked by the mirror).
fn most_branches_in_flight(cfg: &Config, p: Prog, cycles: u32) -> u32 {
    let mut core = Core::new(cfg, p).unwrap();
    let mut m = Mirror::new(cfg);
    let mut most = 0;
    for _ in 0..cycles {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        most = most.max(core.branches_in_flight());
    }
    most
}

/// The fetch queue holds exactly its entries: behind a load that waits for
/// memory the ROB and the fetch queue fill with branches (jumps to the next
/// instruction, counted by the rows: 256 of them), and stay full once it
/// commits (four commit, four dispatch, four are fetched a cycle): 128 + 16
/// = 144 branches in flight at most.
#[test]
fn the_rob_and_the_fetch_queue_hold_144_branches() {
    let mut cfg = quiet_cfg();
    cfg.ideal.l1i = true;
    cfg.ideal.bpred = true;
    cfg.core.fmt_rows = 256;
    let mut p = Prog::segments(&[(0x1000, 1024)], BranchKind::DirectJump);
    p.at(0x1000).class = OpClass::Load;
    for k in 1..1023u64 {
        let j = p.at(0x1000 + 4 * k);
        j.class = OpClass::Branch;
        j.branch = Some(BranchKind::DirectJump);
        j.target = 0x1000 + 4 * k + 4;
    }
    p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
    assert_eq!(cfg.core.fetch_queue_entries(), 16);
    assert_eq!(most_branches_in_flight(&cfg, p, 1000), 128 + 16);
}

/// Cold code misses the L1I and the L2 once a line, and fetch waits on
/// memory (`l2i`, never `l1i`) for every line: 4096 instructions, 256 lines
/// of 16, committed from a cold start with each line's miss charged once (the
/// line after them is fetched too: 257 on all paths). The instruction that
/// waited is each line's first, dispatched first in its group (the
/// queue empties while fetch waits): `dispatched_imiss` is 1 in 256 bundles
/// and 0 in all others.
#[test]
fn cold_code_waits_on_memory_once_a_line() {
    let cfg = quiet_cfg();
    let p = Prog::segments(&[(0x10_0000, 16384)], BranchKind::DirectJump);
    let mut core = Core::new(&cfg, p).unwrap();
    let mut m = Mirror::new(&cfg);
    let (mut stall, mut imiss) = ([0u64; 4], [0u64; 2]);
    while core.counted_retired() < 4096 {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        stall[ev.fetch_stall as usize] += 1;
        match ev.dispatched_imiss {
            0 | 1 => imiss[ev.dispatched_imiss as usize] += 1,
            b => panic!("dispatched_imiss {b:#b}"),
        }
    }
    let st = core.stats();
    assert_eq!((st.committed.l1i, st.committed.l2i), (256, 256));
    assert_eq!((st.all.l1i, st.all.l2i), (257, 257));
    assert_eq!(stall[FetchStall::L1i as usize], 0);
    assert!(stall[FetchStall::L2i as usize] > 256 * 259, "{stall:?}");
    assert_eq!(imiss[1], 256);
}

/// An idealised L2 on the instruction side still installs the code it
/// serves, so the data side finds it there: a loop of 64 instructions whose
/// four loads each read their own instruction's line misses the L1D four
/// times and the L2 never (from a cold start).
#[test]
fn code_fetched_through_an_ideal_l2i_is_in_the_l2_for_loads() {
    let mut cfg = quiet_cfg();
    cfg.ideal.l2i = true;
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    for k in 0..4u64 {
        p.at(0x1000 + 64 * k).class = OpClass::Load;
    }
    p.addr = Box::new(|pc, _| pc);
    let (_, st) = cycles_for(&cfg, p, 0, 640);
    assert_eq!((st.all.l1d, st.all.l2d), (4, 0), "{:?}", st.all);
}

/// With a perfect L1I the code still goes through the unified L2 (installed
/// without timing, as a real L1I's misses would install it), so loads of the
/// code's own lines find them there: 4 L1 D-misses, no L2 D-miss. (Until
/// 2026-11-28 a perfect L1I skipped the L2, which then held no code: each
/// load missed in the L2, and on `bigcode` `--ideal l1i` removed 11 % of the
/// L2 D-misses, which the inverse-order reference charged to l1i.)
#[test]
fn code_fetched_through_an_ideal_l1i_is_in_the_l2_for_loads() {
    let mut cfg = quiet_cfg();
    cfg.ideal.l1i = true;
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    for k in 0..4u64 {
        p.at(0x1000 + 64 * k).class = OpClass::Load;
    }
    p.addr = Box::new(|pc, _| pc);
    let (_, st) = cycles_for(&cfg, p, 0, 640);
    assert_eq!((st.all.l1i, st.all.l2i), (0, 0), "{:?}", st.all);
    assert_eq!((st.all.l1d, st.all.l2d), (4, 0), "{:?}", st.all);
}

/// The other side: with a perfect L1D, data still goes through the L2, so code
/// that was loaded as data before it is fetched hits there. Segment A loads
/// the four lines of segment B, then jumps to B: A's four lines miss in the
/// L2, B's do not (8 L1 I-misses, 4 L2 I-misses; with the L2 skipped, 8).
#[test]
fn data_loaded_through_an_ideal_l1d_is_in_the_l2_for_fetch() {
    let mut cfg = quiet_cfg();
    cfg.ideal.l1d = true;
    let mut p = Prog::segments(&[(0x1000, 64), (0x2000, 64)], BranchKind::DirectJump);
    for k in 0..4u64 {
        p.at(0x1000 + 64 * k).class = OpClass::Load;
    }
    p.addr = Box::new(|pc, _| pc - 0x1000 + 0x2000);
    let (_, st) = cycles_for(&cfg, p, 0, 640);
    assert_eq!((st.all.l1d, st.all.l2d), (0, 0), "{:?}", st.all);
    // (on the committed path: the wrong path fetched past A's jump before
    // decode redirects it misses two more lines)
    let c = &st.committed;
    assert_eq!((c.l1i, c.l2i), (8, 4), "{c:?}");
}

/// A load of a line that the L2 is still bringing from memory (for someone
/// else) waits on memory: in cold code, the last instruction of each line
/// loads the next line, which fetch has just requested from memory, so the
/// load finds it pending in the L2 and waits at the ROB head as `l2d` (never
/// `l1d`), although it made no L2 miss itself.
#[test]
fn a_load_of_a_line_on_its_way_from_memory_waits_as_l2d() {
    let cfg = quiet_cfg();
    let mut p = Prog::segments(&[(0x10_0000, 16384)], BranchKind::DirectJump);
    for k in 0..256u64 {
        p.at(0x10_0000 + 64 * k + 60).class = OpClass::Load;
    }
    p.addr = Box::new(|pc, _| pc + 4);
    let mut core = Core::new(&cfg, p).unwrap();
    let heads = run_checked(&mut core, &cfg, 4096, 1_000_000);
    let st = core.stats();
    assert_eq!((st.all.l1d, st.all.l2d), (256, 0), "{:?}", st.all);
    assert_eq!(heads[HeadCause::L1d as usize], 0, "{heads:?}");
    assert!(heads[HeadCause::L2d as usize] > 256 * 200, "{heads:?}");
}

/// [`load_chain`] of 63 loads, each to the line after the one before.
fn consecutive_lines() -> Prog {
    let mut p = load_chain(64);
    let mut line = 0u64;
    p.addr = Box::new(move |_, _| {
        line += 1;
        0x1000_0000 + line * 64
    });
    p
}

/// A prefetch needs a free L1 MSHR: with one, held by the demand miss that
/// triggers the next-line prefetch, no prefetch is made, and each of a
/// chain of loads to consecutive lines misses: 630 misses for 630 loads.
#[test]
fn a_prefetch_without_a_free_mshr_is_dropped() {
    let mut cfg = quiet_cfg();
    cfg.prefetch.kind = crate::config::PrefetchKind::NextLine;
    cfg.l1d.mshrs = 1;
    let (_, st) = cycles_for(&cfg, consecutive_lines(), 128, 640);
    assert_eq!(st.instructions - st.branches, 630);
    assert_eq!(st.all.l1d, 630);
}

/// A prefetch from memory arrives 2 + 9 + 250 = 261 cycles after it starts,
/// as a demand miss: in a chain of loads to consecutive lines with tagged
/// prefetching, each line is prefetched when the load before it issues
/// (its first use of a prefetched line) and each load issues when the one
/// before has its data, so two loads take 261 cycles: 630 in 82 215.
#[test]
fn a_prefetched_line_arrives_after_the_latency_of_a_miss() {
    let mut cfg = quiet_cfg();
    cfg.prefetch.kind = crate::config::PrefetchKind::Tagged;
    let (cycles, st) = cycles_for(&cfg, consecutive_lines(), 1280, 640);
    assert_eq!(st.all.l1d, 0);
    assert_eq!(cycles, 630 / 2 * 261);
}

/// [`Prog`] whose wrong-path loads read new lines (its own give address 0).
struct WrongPathLoads {
    p: Prog,
    lines: u64,
}

impl InstrSource for WrongPathLoads {
    fn name(&self) -> &str {
        "wrong-path loads"
    }
    fn next(&mut self) -> Result<Option<Instr>, SourceError> {
        self.p.next()
    }
    fn wrong_path(&mut self, pc: u64) -> Instr {
        let mut i = self.p.wrong_path(pc);
        if i.class == OpClass::Load {
            self.lines += 1;
            i.load_addr = 0x3000_0000 + self.lines * 64;
        }
        i
    }
}

/// Instructions squashed in a cycle do not issue in it: a conditional branch
/// at 0x1000 goes either way at random, its taken side (0x1080) starting with
/// eight loads. Predicted taken and not taken, the taken side is a wrong path
/// fetched the cycle after the branch (fetch ends its group at a predicted
/// taken branch), so dispatched at the earliest the cycle after it, the cycle
/// before the branch resolves (it issues the cycle after its dispatch and
/// executes in one): the squash at the start of the resolving cycle removes
/// those loads before they issue. Given addresses of their own on the wrong
/// path (new lines), they never reach the L1D: 0 misses on all paths (the
/// committed path's loads have no address).
#[test]
fn instructions_squashed_in_a_cycle_do_not_issue_in_it() {
    let cfg = quiet_cfg();
    let mut p = Prog::segments(&[(0x1000, 64)], BranchKind::DirectJump);
    let b = p.at(0x1000);
    b.class = OpClass::Branch;
    b.branch = Some(BranchKind::Conditional);
    b.target = 0x1080;
    for k in 0..8u64 {
        p.at(0x1080 + 4 * k).class = OpClass::Load;
    }
    p.taken = coin_flips(77);
    let mut core = Core::new(&cfg, WrongPathLoads { p, lines: 0 }).unwrap();
    core.set_warmup(2000);
    run_checked(&mut core, &cfg, 20_000, 1_000_000);
    let st = core.stats();
    assert!(
        st.all.mispredicts > 100 && st.wrong_path_dispatched > 1000,
        "{st:?}"
    );
    assert_eq!(st.all.l1d, 0);
}

/// Runs cold code laid out as 8-instruction blocks, block `k` in the last 32
/// bytes of the `gap` bytes from 0x10_0000 + `k` * `stride` (the end of a
/// line or a page), each ending with a jump to the next block; the BTB has
/// never seen the jumps, so fetch goes on sequentially and decode redirects
/// it. Returns the bundles' fetch stalls (by `FetchStall`) and the core,
/// after `n` commits.
fn redirected_blocks(cfg: &Config, gap: u64, stride: u64, n: u64) -> ([u64; 4], Core<Prog>) {
    let segs: Vec<(u64, usize)> = (0..1024)
        .map(|k| (0x10_0000 + stride * k + gap - 32, 8))
        .collect();
    let mut core = Core::new(cfg, Prog::segments(&segs, BranchKind::DirectJump)).unwrap();
    (fetch_stalls(cfg, &mut core, n), core)
}

/// The cycles of each `fetch_stall` kind (`none`, `l1i`, `l2i`, `itlb`)
/// until `n` instructions are committed and counted, each bundle checked by
/// the mirror.
fn fetch_stalls(cfg: &Config, core: &mut Core<Prog>, n: u64) -> [u64; 4] {
    let mut m = Mirror::new(cfg);
    let mut stall = [0u64; 4];
    while core.counted_retired() < n {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        stall[ev.fetch_stall as usize] += 1;
    }
    stall
}

/// A decode redirect into the line that fetch, going on sequentially, has
/// already requested finds the line in flight: a pending hit, waited for
/// to its end and reported as the level of that fill. Blocks in the second
/// half of each line jump to the second half of the next; 1600 instructions
/// (200 lines, 200 redirects) wait on memory (`l2i`, never `l1i`) for each
/// line, about 259 cycles; the misses (201 on all paths: the line after the
/// last too) are the sequential fetch's, so the committed path, which merges
/// with them, is charged only the first line's (fetched directly).
#[test]
fn a_decode_redirect_into_the_line_in_flight_waits_for_it_as_a_pending_hit() {
    let (stall, core) = redirected_blocks(&quiet_cfg(), 64, 64, 1600);
    let st = core.stats();
    assert_eq!(st.fe_redirects, 200);
    assert_eq!((st.all.l1i, st.committed.l1i), (201, 1), "{st:?}");
    assert_eq!(stall[FetchStall::L1i as usize], 0, "{stall:?}");
    assert!(stall[FetchStall::L2i as usize] > 200 * 250, "{stall:?}");
}

/// A fetch access needs the I-TLB walker, L1I MSHR and L2 MSHR its misses
/// take, and an access abandoned at a redirect keeps its own until its fill:
/// blocks at the end of every other line (page), each jumping over the next
/// one, which fetch requests before decode redirects it. 800 instructions
/// (100 blocks) take 26 304 cycles with 4 L1I and 16 L2 MSHRs (the two
/// misses of a block overlap); with one L1I MSHR or one L2 MSHR, the
/// redirected fetch's miss waits for the abandoned one's: 51 648. With the
/// L1I ideal, blocks at the end of every other page take 3404 cycles with the
/// two I-TLB walkers, 6077 with one. The cycles spent waiting for a resource
/// the abandoned miss holds report `fetch_stall = none` (the contract's rule
/// for a frontend blocked by a squashed path's miss): the stalls reported as
/// the fetch's own misses stay the same, and `none` grows by the extra wait.
#[test]
fn a_redirected_fetch_waits_for_the_mshr_or_walker_an_abandoned_miss_holds() {
    for (set, want, want_stall) in [
        ("l1i.mshrs=4", 26_304, [200, 0, 26_104, 0]),
        ("l1i.mshrs=1", 51_648, [25_548, 0, 26_100, 0]),
        ("l2.mshrs=1", 51_648, [25_548, 0, 26_100, 0]),
        ("itlb.walkers=2", 3404, [200, 0, 0, 3204]),
        ("itlb.walkers=1", 6077, [2877, 0, 0, 3200]),
    ] {
        let mut cfg = quiet_cfg();
        cfg.set(set).unwrap();
        let stride = if set.starts_with("itlb") {
            cfg.ideal.itlb = false;
            cfg.ideal.l1i = true;
            4096
        } else {
            64
        };
        let (stall, core) = redirected_blocks(&cfg, stride, 2 * stride, 800);
        assert_eq!(stall, want_stall, "{set}: none, l1i, l2i, itlb cycles");
        assert_eq!(core.stats().fe_redirects, 100, "{set}");
        assert_eq!(core.stats().cycles, want, "{set}");
    }
}

/// A straight-line loop of `len` instructions at 0x10_0000 with a load every
/// `every` instructions, each to a new line (a miss to memory).
fn code_with_loads(len: usize, every: u64) -> Prog {
    let mut p = Prog::segments(&[(0x10_0000, len)], BranchKind::DirectJump);
    for k in 0..len as u64 / every {
        p.at(0x10_0000 + 4 * every * k).class = OpClass::Load;
    }
    p.addr = Box::new(|_, n| 0x1000_0000 + n * 64);
    p
}

/// An instruction fetch that misses the L1I and hits the L2 needs no L2 MSHR:
/// a 16 KB loop (it misses the 8 KB L1I on every line, hits the L2 once warm)
/// with one L2 MSHR, which its loads (one every 64 instructions, each to a new
/// line) hold one after the other, runs at the loads' pace, 261 cycles each:
/// 128 loads in 8192 instructions take 33 408 cycles.
#[test]
fn an_instruction_fetch_that_hits_the_l2_needs_no_l2_mshr() {
    let mut cfg = quiet_cfg();
    cfg.l2.mshrs = 1;
    let p = code_with_loads(4096, 64);
    let (cycles, st) = cycles_for(&cfg, p, 8192, 8192);
    assert_eq!((st.all.l1i, st.all.l2i, st.all.l2d), (512, 0, 128));
    assert_eq!(cycles, 128 * 261);
}

/// An instruction fetch that must start an L2 miss while the data side holds
/// every L2 MSHR waits on its own miss of the path being fetched: `l2i` from
/// the first cycle it cannot start (it was `none`, which the contract keeps
/// for a squashed path's miss). Cold straight-line code (no branch to
/// mispredict, so no abandoned instruction miss) with a load to a new line
/// every 32 instructions and one L2 MSHR: each code line that misses the L2
/// waits for a load's miss to free the MSHR and then for its own, so fetch
/// stalls on `l2i` for longer than the misses themselves take.
#[test]
fn a_fetch_that_waits_for_an_l2_mshr_the_data_side_holds_waits_as_l2i() {
    let mut cfg = quiet_cfg();
    cfg.l2.mshrs = 1;
    let p = code_with_loads(8192, 32);
    let mut core = Core::new(&cfg, p).unwrap();
    let mut m = Mirror::new(&cfg);
    let mut stall = [0u64; 4];
    while core.counted_retired() < 8000 {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        stall[ev.fetch_stall as usize] += 1;
    }
    let misses = core.stats().all.l2i;
    let own = (cfg.l2.latency + cfg.memory_latency) as u64;
    assert!(misses > 100, "{misses} L2 instruction misses");
    assert!(
        stall[FetchStall::L2i as usize] > misses * own,
        "{stall:?}: {misses} misses of {own} cycles each"
    );
    assert_eq!(core.stats().fe_redirects, 0);
}

/// Fetch waiting for a line that the L2 is bringing from memory for a load
/// waits on memory (`l2i`): in cold code, each line ends with five chained
/// divides (100 cycles) and a load, fed by them, of the line after the next,
/// so the load requests that line from memory before fetch gets there and
/// fetch then finds it on its way. Fetch waits on `l2i` and never `l1i`,
/// though the code side misses the L2 only twice (the first two lines).
#[test]
fn fetch_waiting_for_a_line_a_load_brings_from_memory_waits_as_l2i() {
    let mut p = Prog::segments(&[(0x10_0000, 16384)], BranchKind::DirectJump);
    for k in 0..1024u64 {
        let line = 0x10_0000 + 64 * k;
        for d in 0..5u64 {
            let i = p.at(line + 40 + 4 * d);
            i.class = OpClass::Div;
            i.srcs = [if d == 0 { 0 } else { 9 }, 0, 0, 0];
            i.dsts = [9, 0];
        }
        let l = p.at(line + 60);
        l.class = OpClass::Load;
        l.srcs = [9, 0, 0, 0];
    }
    p.addr = Box::new(|pc, _| pc + 68);
    let cfg = quiet_cfg();
    let mut core = Core::new(&cfg, p).unwrap();
    let stall = fetch_stalls(&cfg, &mut core, 4096);
    assert_eq!(core.stats().all.l2i, 2);
    assert_eq!(stall[FetchStall::L1i as usize], 0, "{stall:?}");
    assert!(stall[FetchStall::L2i as usize] > 256 * 150, "{stall:?}");
}

/// The stream digest tells apart streams that differ in one field of one
/// instruction (its pc, its next pc, its address or its class) or in an
/// earlier instruction: 16 ALU operations at different pcs, 16 jumps to
/// different targets, 64 loads of addresses of one bit each, the seven
/// classes at one pc (the branch not taken, the memory operations without
/// an address) alone and after each of three instructions, and 16 different
/// instructions each followed by one same instruction: 140 streams, one of
/// them twice (the ALU operation at 0x1000, a pc and a class), so 139
/// digests; and a stream's digest is a function of the stream.
#[test]
fn the_stream_digest_tells_apart_streams_that_differ_in_one_field() {
    let digest = |code: Vec<Instr>| {
        let n = code.len() as u64;
        let mut core = Core::new(&quiet_cfg(), Listing::new(code)).unwrap();
        assert!(core.run(n, &mut []).is_ok());
        core.stream_digest()
    };
    let at = |pc: u64| alu(pc);
    let jump = |target: u64| Instr {
        class: OpClass::Branch,
        branch: Some(BranchKind::DirectJump),
        taken: true,
        target,
        ..at(0x1000)
    };
    let load = |addr: u64| Instr {
        class: OpClass::Load,
        load_addr: addr,
        ..at(0x1000)
    };
    let class = |c: OpClass| Instr {
        class: c,
        branch: (c == OpClass::Branch).then_some(BranchKind::Conditional),
        target: 0x1040,
        ..at(0x1000)
    };
    let mut streams: Vec<Vec<Instr>> = vec![];
    for k in 0..16u64 {
        streams.push(vec![at(0x1000 + 4 * k)]);
        streams.push(vec![jump(0x2000 + 0x40 * k)]);
        streams.push(vec![at(0x3000 + 0x40 * k), at(0x1000)]);
    }
    for b in 0..64 {
        streams.push(vec![load(1 << b)]);
    }
    for c in [
        OpClass::Alu,
        OpClass::Mul,
        OpClass::Div,
        OpClass::Fp,
        OpClass::Load,
        OpClass::Store,
        OpClass::Branch,
    ] {
        streams.push(vec![class(c)]);
        for before in [0x5000, 0x6000, 0x7000] {
            streams.push(vec![at(before), class(c)]);
        }
    }
    let mut digests: Vec<u64> = streams.iter().map(|s| digest(s.clone())).collect();
    assert_eq!(digests[0], digest(streams[0].clone()));
    digests.sort();
    digests.dedup();
    assert_eq!((streams.len(), digests.len()), (140, 139));
}

/// A load that cannot start for want of an MSHR is tried again when a fill
/// changes what the caches hold, not only when an MSHR frees: with the
/// instruction side's L2 ideal (fetch installs its lines without an MSHR) and
/// one L2 MSHR, every 256 instructions of cold code load A misses to memory,
/// holding the MSHR for 259 cycles, and load B after it reads the code line
/// three lines on: B misses the L2 and cannot start, fetch installs that
/// line some 30 cycles later, and B starts then, long before A's MSHR frees.
/// So B is done when A commits, and the ROB head never waits on it (`l1d`,
/// its line coming from the L2): 32 pairs in 8192 instructions, the head
/// waits `l2d` (on A) and never `l1d`.
#[test]
fn a_load_without_an_mshr_starts_when_a_fill_brings_its_line() {
    let mut cfg = quiet_cfg();
    cfg.ideal.l2i = true;
    cfg.l2.mshrs = 1;
    let mut p = Prog::segments(&[(0x10_0000, 16384)], BranchKind::DirectJump);
    for k in 0..64u64 {
        p.at(0x10_0000 + 1024 * k).class = OpClass::Load;
        p.at(0x10_0000 + 1024 * k + 4).class = OpClass::Load;
    }
    p.addr = Box::new(|pc, n| {
        if pc % 1024 == 0 {
            0x1000_0000 + n * 64
        } else {
            pc + 188
        }
    });
    let mut core = Core::new(&cfg, p).unwrap();
    let heads = run_checked(&mut core, &cfg, 8192, 1_000_000);
    let st = core.stats();
    assert_eq!((st.all.l1d, st.all.l2d), (64, 32), "{:?}", st.all);
    assert_eq!(heads[HeadCause::L1d as usize], 0, "{heads:?}");
    assert!(heads[HeadCause::L2d as usize] > 32 * 250, "{heads:?}");
}

/// A load waiting for a line that a prefetch brings from the L2 waits on the
/// L2 (`l1d`), as a load whose own miss hits the L2 does, not on memory:
/// tagged prefetching down a chain of loads over 512 lines (32 KB: in the L2
/// once warm, not in the 16 KB L1D), measured after 6400 instructions of
/// warm-up, makes no L2 miss, and the ROB head waits `l1d`, never `l2d`
/// (the prefetch used to take the level the L2's copy had once come from,
/// memory, for every line: 25 104 of the 34 674 cycles waited `l2d`).
#[test]
fn a_load_waiting_for_a_prefetch_from_the_l2_waits_as_l1d() {
    let mut cfg = quiet_cfg();
    cfg.prefetch.kind = crate::config::PrefetchKind::Tagged;
    let mut p = load_chain(64);
    let mut line = 0u64;
    p.addr = Box::new(move |_, _| {
        line += 1;
        0x1000_0000 + (line % 512) * 64
    });
    let mut core = Core::new(&cfg, p).unwrap();
    core.set_warmup(6400);
    let mut m = Mirror::new(&cfg);
    let mut heads = [0u64; 6];
    while core.counted_retired() < 6400 {
        let ev = *core.step().unwrap();
        m.step(&ev).unwrap();
        if ev.count_enable {
            heads[ev.head as usize] += 1;
        }
    }
    assert_eq!(core.stats().all.l2d, 0);
    assert_eq!(heads[HeadCause::L2d as usize], 0, "{heads:?}");
    assert!(heads[HeadCause::L1d as usize] > 20_000, "{heads:?}");
}

/// `stats.head_waits` when a prefetch merges with a demand miss in flight
/// in the L2: the loads that merge with the prefetch's L1 fill wait on the
/// demand's request, so they are pending hits, not late prefetches. Each
/// iteration, on a 2-set direct-mapped L1D with the next-line prefetcher:
/// load C waits 20 cycles for its address (a divide); load A misses on line
/// n; load Q, on the same set, evicts n from the L1 (both go to memory);
/// load B misses on line n - 1 and prefetches line n, which the L2 has in
/// flight for A. C then finds n coming with the prefetch's fill, and waits
/// at the ROB head for A's request. 150 ALU instructions keep the next
/// iteration out of the window until C commits.
#[test]
fn a_prefetch_merging_with_a_demand_miss_in_the_l2_leaves_its_loads_pending_hits() {
    let mut cfg = quiet_cfg();
    cfg.prefetch.kind = crate::config::PrefetchKind::NextLine;
    cfg.l1d.size = 128;
    cfg.l1d.ways = 1;
    let body = 156usize;
    let mut p = Prog::segments(&[(0x1000, body)], BranchKind::DirectJump);
    let div = p.at(0x1000);
    div.class = OpClass::Div;
    div.srcs = [2, 0, 0, 0];
    div.dsts = [1, 0];
    let c = p.at(0x1004);
    c.class = OpClass::Load;
    c.srcs = [1, 0, 0, 0];
    c.dsts = [3, 0];
    for pc in [0x1008, 0x100c, 0x1010] {
        p.at(pc).class = OpClass::Load;
    }
    let mut k = 0u64;
    p.addr = Box::new(move |pc, _| {
        if pc == 0x1004 {
            k += 1;
        }
        // line n descends by 4 lines an iteration, keeping its set (even)
        let n = 0x20_0000 - 4 * k;
        match pc {
            0x1004 => n * 64 + 8,            // C
            0x1008 => n * 64,                // A
            0x100c => 0x4000_0000 + k * 256, // Q: same set, a new line
            _ => (n - 1) * 64,               // B
        }
    });
    let (_, st) = cycles_for(&cfg, p, 20 * body as u64, 200 * body as u64);
    let w = st.head_waits.l2d;
    // measured: 45 800 cycles, 229 an iteration, all pending hits (all late
    // prefetches when the L1 fill keeps the prefetch as its origin)
    assert!(w.pending_hit > 200 * 200, "{w:?}");
    assert_eq!(w.late_prefetch, 0, "{w:?}");
}
