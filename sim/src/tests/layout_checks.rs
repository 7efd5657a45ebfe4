//! `layout.*`: the program moved in the address space. The move must be
//! consistent (a location at one address, the wrong path asked for where the
//! source knows it), reach the machine, and refuse an address it would wrap.

use super::config_checks::{accepted, rejection};
use super::{alu, Prog};
use crate::config::{Config, Layout};
use crate::core::{relocate, Core};
use crate::isa::{BranchKind, OpClass};
use crate::workloads::{self, Workload};

fn shifted(code: u64, data: u64) -> Config {
    let mut c = Config::default();
    c.layout.code_shift = code;
    c.layout.data_shift = data;
    c
}

/// `cycles` cycles of `name` (seed 3) on `cfg`: each cycle's bundle and the
/// final statistics.
fn run(cfg: &Config, name: &str, cycles: u64) -> (Vec<events::CycleEvents>, crate::Stats) {
    let spec = workloads::by_name(name).unwrap();
    let mut core = Core::new(cfg, Workload::new(&spec, 3)).unwrap();
    core.set_warmup(1_000);
    let evs = (0..cycles).map(|_| *core.step().unwrap()).collect();
    (evs, core.stats().clone())
}

/// A jump from 0x1000 to 0xffff_ffff_ffff_ffc0 and on (plain instructions).
struct Jump;

impl crate::isa::InstrSource for Jump {
    fn name(&self) -> &str {
        "jump"
    }
    fn next(&mut self) -> Result<Option<crate::isa::Instr>, crate::isa::SourceError> {
        let mut j = alu(0x1000);
        j.class = OpClass::Branch;
        j.branch = Some(BranchKind::DirectJump);
        j.taken = true;
        j.target = 0xffff_ffff_ffff_ffc0;
        Ok(Some(j))
    }
    fn wrong_path(&mut self, pc: u64) -> crate::isa::Instr {
        alu(pc)
    }
}

#[test]
fn relocation_moves_every_address_and_keeps_the_zero_that_means_none() {
    let mut load = alu(0x1000);
    load.class = OpClass::Load;
    load.load_addr = 0x2000;
    assert!(!relocate(&mut load, 0x40, 0x8));
    assert_eq!(
        (load.pc, load.target, load.load_addr, load.store_addr),
        (0x1040, 0, 0x2008, 0)
    );
    let mut br = alu(0x1000);
    br.class = OpClass::Branch;
    br.branch = Some(BranchKind::Conditional);
    br.target = 0x3000;
    assert!(!relocate(&mut br, 0x40, 0x8));
    assert_eq!((br.pc, br.target, br.load_addr), (0x1040, 0x3040, 0));
    // an address carried past 2^64 is reported, landing on 0 included
    let mut st = alu(0x1000);
    st.class = OpClass::Store;
    st.store_addr = u64::MAX - 7;
    assert!(relocate(&mut st.clone(), 0, 8));
    assert!(relocate(&mut st.clone(), 0, 9));
    assert!(!relocate(&mut st, 0, 7));
    assert_eq!(st.store_addr, u64::MAX);
    assert!(relocate(&mut alu(u64::MAX - 3), 4, 0));
}

/// A shift of 2^32 moves only bits above every set index, page offset and
/// predictor hash of the default machine: the run must be the same cycle for
/// cycle. A wrong path asked for at the moved address (the source knows
/// nothing there: plain ALU instructions instead of its loads and branches),
/// a target left unmoved, or a data address moved twice would each change it.
#[test]
fn a_shift_above_every_index_bit_changes_no_bundle() {
    for name in ["branchy", "indirect", "mlp", "icache"] {
        let (ea, sa) = run(&Config::default(), name, 60_000);
        let (eb, sb) = run(&shifted(1 << 32, 3 << 32), name, 60_000);
        assert!(
            sa.committed.mispredicts > 50 || name == "mlp",
            "{name}: {}",
            sa.committed.mispredicts
        );
        assert!(sa.wrong_path_fetched > 0, "{name}: no wrong path fetched");
        if let Some(c) = (0..ea.len()).find(|&c| ea[c] != eb[c]) {
            panic!("{name}: cycle {c}: {:?} against {:?}", ea[c], eb[c]);
        }
        assert_eq!(sa, sb, "{name}");
    }
}

/// Shifts within the index bits reach the machine: code by 32 bytes moves
/// basic blocks across fetch lines and predictor entries, data by 8 bytes
/// moves line boundaries. The program does the same work: the committed
/// branches of the same instructions are the same.
#[test]
fn a_shift_within_the_index_bits_changes_the_timing_not_the_program() {
    let to = |cfg: &Config, name: &str| {
        let spec = workloads::by_name(name).unwrap();
        let mut core = Core::new(cfg, Workload::new(&spec, 3)).unwrap();
        core.set_warmup(1_000);
        while core.counted_retired() < 100_000 {
            core.step().unwrap();
        }
        core.stats().clone()
    };
    for (name, cfg) in [("branchy", shifted(32, 0)), ("l1d", shifted(0, 8))] {
        let (a, b) = (to(&Config::default(), name), to(&cfg, name));
        assert_ne!(a.cycles, b.cycles, "{name}: {:?} moved nothing", cfg.layout);
        let same = a.instructions.min(b.instructions);
        assert!(a.instructions.max(b.instructions) - same < 8, "{name}");
        assert!(
            a.branches.abs_diff(b.branches) < 8,
            "{name}: {} against {}",
            a.branches,
            b.branches
        );
    }
}

#[test]
fn an_address_the_shift_would_wrap_is_an_error_naming_the_shift() {
    let mut p = Prog::segments(&[(0x1000, 8)], BranchKind::DirectJump);
    p.at(0x1008).class = OpClass::Load;
    p.addr = Box::new(|_, _| u64::MAX - 63);
    let mut core = Core::new(&shifted(0, 64), p).unwrap();
    let e = (0..2_000)
        .find_map(|_| core.step().err())
        .expect("the wrapped address was not refused")
        .to_string();
    for want in [
        "prog: the instruction at 0x1008",
        // as the source gave it (the moved address is 0)
        "load 0xffffffffffffffc0",
        "passes the 64-bit address space moved by layout.code_shift 0x0 and layout.data_shift 0x40: give smaller shifts",
    ] {
        assert!(e.contains(want), "`{want}` not in: {e}");
    }
    // a random layout's wrap names the seed
    let mut p = Prog::segments(&[(0x1000, 8)], BranchKind::DirectJump);
    p.at(0x1008).class = OpClass::Load;
    p.addr = Box::new(|_, _| u64::MAX - 100);
    let mut cfg = Config::default();
    cfg.layout.seed = 1;
    let mut core = Core::new(&cfg, p).unwrap();
    let e = (0..2_000)
        .find_map(|_| core.step().err())
        .expect("the wrapped address was not refused")
        .to_string();
    assert!(
        e.contains(
            "by the shifts layout.seed = 1 draws (code 0x5c280, data 0xcaff0): try another seed"
        ),
        "{e}"
    );
    // a taken branch's target that the code shift wraps
    // (the first instruction is taken when the core is made)
    let e = match Core::new(&shifted(0x40, 0), Jump) {
        Ok(_) => panic!("the wrapped target was not refused"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("jump: the instruction at 0x1000 (target 0xffffffffffffffc0"),
        "{e}"
    );
    // one byte less fits
    let mut p = Prog::segments(&[(0x1000, 8)], BranchKind::DirectJump);
    p.at(0x1008).class = OpClass::Load;
    p.addr = Box::new(|_, _| u64::MAX - 63);
    let mut core = Core::new(&shifted(0, 63), p).unwrap();
    for _ in 0..2_000 {
        core.step().unwrap();
    }
}

#[test]
fn a_random_layout_is_drawn_from_its_seed_aligned_and_within_its_span() {
    let mut seen = std::collections::HashSet::new();
    for seed in 1..=64 {
        let l = Layout {
            seed,
            ..Layout::default()
        };
        let (c, d) = l.shifts();
        assert_eq!((c, d), l.shifts(), "seed {seed}: not the same twice");
        for s in [c, d] {
            assert_eq!(s % Layout::RANDOM_ALIGN, 0, "seed {seed}: {s:#x}");
            assert!(s < Layout::RANDOM_SPAN, "seed {seed}: {s:#x}");
        }
        seen.insert((c, d));
    }
    assert_eq!(seen.len(), 64, "seeds drew the same layout");
    // pinned: a seed names the same layout in every version (reports cite seeds)
    let one = Layout {
        seed: 1,
        ..Layout::default()
    };
    assert_eq!(one.shifts(), (377_472, 831_472));
    let l = Layout {
        code_shift: 48,
        data_shift: 4096,
        seed: 0,
    };
    assert_eq!(l.shifts(), (48, 4096));
    assert_eq!(Layout::default().shifts(), (0, 0));
}

#[test]
fn a_layout_is_set_by_key_and_its_impossible_values_are_refused() {
    let c = accepted(&["layout.code_shift=64", "layout.data_shift=4096"]);
    assert_eq!(c.layout.shifts(), (64, 4096));
    let c = accepted(&["layout.seed=7"]);
    assert_eq!(
        c.layout.shifts(),
        Layout {
            seed: 7,
            ..Layout::default()
        }
        .shifts()
    );
    for (sets, want) in [
        (
            &["layout.code_shift=1099511627776"][..],
            "`layout.code_shift` = 1099511627776 is illegal: below 2^40",
        ),
        (
            &["layout.data_shift=18446744073709551615"][..],
            "`layout.data_shift` = 18446744073709551615 is illegal",
        ),
        (
            &["layout.seed=3", "layout.data_shift=16"][..],
            "`layout.data_shift` = 16 and `layout.seed` = 3: a random layout draws both shifts",
        ),
        (&["layout.seed=-1"][..], "layout.seed"),
    ] {
        // (`rejection` also checks that a refused set changed nothing)
        let e = rejection(sets);
        assert!(e.contains(want), "{sets:?}: {e}");
    }
}
