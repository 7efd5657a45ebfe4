//! The synthetic workloads as instruction sources, read instruction by
//! instruction (no core): the program's layout, the classes' weights, each
//! data stream's addresses, each branch behaviour's outcomes, calls and
//! returns, and the wrong path's view of the code.

use std::collections::HashMap;

use crate::isa::{BranchKind, Instr, InstrSource, OpClass};
use crate::workloads::{self, Branches, Mix, Pattern, Spec, Stream, Workload};

/// The committed path's first `n` instructions.
fn trace(w: &mut Workload, n: usize) -> Vec<Instr> {
    (0..n).map(|_| w.next().unwrap().unwrap()).collect()
}

/// A packed program of 16 blocks of 3 to 6 instructions, each ending in a
/// branch of the behaviours `branches` weighs (the last in a jump back).
fn only(branches: Branches, bias: f64) -> Spec {
    Spec {
        blocks: 16,
        block_len: (3, 6),
        functions: 0,
        branches,
        bias,
        ..Spec::base("only", "")
    }
}

const NONE: Branches = Branches {
    biased: 0,
    looped: 0,
    pattern: 0,
    random: 0,
    indirect: 0,
    call: 0,
};

/// Each conditional branch's outcomes, by address, in the order they commit.
fn outcomes(t: &[Instr]) -> HashMap<u64, Vec<bool>> {
    let mut m: HashMap<u64, Vec<bool>> = HashMap::new();
    for i in t {
        if i.branch == Some(BranchKind::Conditional) {
            m.entry(i.pc).or_default().push(i.taken);
        }
    }
    m
}

/// Blocks spaced 64 bytes apart (8 instructions each, so half of each 64 bytes is
/// a gap) run in order, each ending in a jump to the next, the last to the first:
/// a pass over 64 blocks commits every static instruction once.
#[test]
fn spaced_blocks_run_in_order_and_take_each_class_by_its_weight() {
    let spec = Spec {
        blocks: 64,
        block_len: (8, 8),
        block_spacing: 64,
        // weights 0 first and between: a class of weight 0 never appears
        mix: Mix {
            alu: 0,
            mul: 3,
            div: 0,
            fp: 1,
            load: 2,
            store: 2,
        },
        streams: vec![Stream {
            pattern: Pattern::Seq,
            footprint: 1 << 20,
            dependent: false,
            weight: 1,
        }],
        ..Spec::base("spaced", "")
    };
    let mut w = Workload::new(&spec, 5);
    assert_eq!(w.name(), "spaced");
    assert_eq!(w.code_bytes(), 64 * 8 * 4);
    let t = trace(&mut w, 2 * 64 * 8);
    let mut counts: HashMap<OpClass, u32> = HashMap::new();
    for (k, i) in t.iter().enumerate() {
        let (b, j) = ((k / 8 % 64) as u64, (k % 8) as u64);
        assert_eq!(i.pc, 0x40_0000 + b * 64 + j * 4, "instruction {k}");
        if j == 7 {
            assert_eq!(i.branch, Some(BranchKind::DirectJump), "{i:?}");
            assert!(i.taken, "{i:?}");
            assert_eq!(i.target, 0x40_0000 + (b + 1) % 64 * 64, "{i:?}");
        } else {
            assert_eq!(i.branch, None, "{i:?}");
            if k < 64 * 8 {
                *counts.entry(i.class).or_default() += 1;
            }
        }
    }
    // 448 instructions drawn 3 : 1 : 2 : 2 (168, 56, 112, 112 expected)
    for (class, want) in [
        (OpClass::Mul, 168.0),
        (OpClass::Fp, 56.0),
        (OpClass::Load, 112.0),
        (OpClass::Store, 112.0),
    ] {
        let n = counts.get(&class).copied().unwrap_or(0) as f64;
        assert!(
            (n - want).abs() < want * 0.3,
            "{class:?}: {n} of 448 {counts:?}"
        );
    }
    for class in [OpClass::Alu, OpClass::Div] {
        assert!(!counts.contains_key(&class), "{class:?}: {counts:?}");
    }
}

/// Each stream steps from its base (0x1000_0000, then 1 GiB apart) through its
/// footprint: sequential by 8 bytes, strided by the stride, both wrapping at
/// the footprint; random over every 8-byte word of it.
#[test]
fn each_stream_walks_its_footprint_by_its_pattern() {
    let st = |pattern, footprint, weight| Stream {
        pattern,
        footprint,
        dependent: false,
        weight,
    };
    let spec = Spec {
        blocks: 64,
        block_len: (8, 8),
        mix: Mix {
            alu: 1,
            mul: 0,
            div: 0,
            fp: 0,
            load: 2,
            store: 2,
        },
        streams: vec![
            st(Pattern::Seq, 40, 1),
            st(Pattern::Stride(24), 64, 1),
            st(Pattern::Random, 64, 1),
        ],
        ..Spec::base("streams", "")
    };
    let mut w = Workload::new(&spec, 3);
    let mut seen: [Vec<u64>; 3] = Default::default();
    for i in trace(&mut w, 20_000) {
        let a = match i.class {
            OpClass::Load => {
                assert_eq!(i.store_addr, 0, "{i:?}");
                i.load_addr
            }
            OpClass::Store => {
                assert_eq!(i.load_addr, 0, "{i:?}");
                i.store_addr
            }
            _ => {
                assert_eq!((i.load_addr, i.store_addr), (0, 0), "{i:?}");
                continue;
            }
        };
        let s = ((a - 0x1000_0000) / 0x4000_0000) as usize;
        seen[s].push(a - 0x1000_0000 - s as u64 * 0x4000_0000);
    }
    for (s, offs) in seen.iter().enumerate() {
        assert!(offs.len() > 500, "stream {s}: {} accesses", offs.len());
    }
    for (k, &o) in seen[0].iter().enumerate() {
        assert_eq!(o, k as u64 * 8 % 40, "sequential access {k}");
    }
    for (k, &o) in seen[1].iter().enumerate() {
        assert_eq!(o, k as u64 * 24 % 64, "strided access {k}");
    }
    assert_eq!(seen[2][0], 0, "a random stream starts at its base");
    let mut words = [0u32; 8];
    for &o in &seen[2] {
        assert!(o % 8 == 0 && o < 64, "random offset {o}");
        words[(o / 8) as usize] += 1;
    }
    assert!(words.iter().all(|&n| n > 20), "{words:?}");
}

/// The wrong path reads the static program as the committed path will run
/// it, except for the outcome (not taken) and a return's or indirect
/// branch's target (unknown); a memory instruction with the
/// address its stream gives next. An address that holds no instruction (a gap
/// between spaced blocks, past the end, below the code, not 4-aligned) is a
/// plain ALU instruction.
#[test]
fn the_wrong_path_sees_each_instruction_as_it_will_commit_but_not_taken() {
    for (spacing, fns) in [(64, 0), (0, 4)] {
        let spec = Spec {
            block_len: (4, 8),
            block_spacing: spacing,
            functions: fns,
            streams: vec![
                Stream {
                    pattern: Pattern::Random,
                    footprint: 1 << 16,
                    dependent: false,
                    weight: 1,
                },
                Stream {
                    pattern: Pattern::Stride(72),
                    footprint: 1 << 12,
                    dependent: true,
                    weight: 1,
                },
            ],
            ..Spec::base("wrong", "")
        };
        let mut w = Workload::new(&spec, 9);
        let mut pc = 0x40_0000;
        let mut memory = 0;
        for _ in 0..5_000 {
            let seen = w.wrong_path(pc);
            let i = w.next().unwrap().unwrap();
            assert_eq!(i.pc, pc);
            // a return's or an indirect branch's target is not in the code
            let target = match i.branch {
                Some(BranchKind::Return | BranchKind::IndirectJump | BranchKind::IndirectCall) => 0,
                _ => i.target,
            };
            assert_eq!(
                seen,
                Instr {
                    taken: false,
                    target,
                    ..i
                },
                "{spacing}"
            );
            memory += (i.load_addr | i.store_addr != 0) as u32;
            pc = i.next_pc();
        }
        assert!(memory > 500, "{memory}");
        let end = 0x40_0000 + if spacing > 0 { 48 * 64 } else { w.code_bytes() };
        let mut nowhere = vec![0x3f_fffc, 0x40_0002, end, end + 4];
        if spacing > 0 {
            // the gap after the first block, which has at most 8 instructions
            nowhere.push(0x40_0000 + 32);
            nowhere.push(0x40_0000 + 60);
        }
        for pc in nowhere {
            assert_eq!(w.wrong_path(pc), Instr::plain_alu(pc, 4), "{pc:#x}");
        }
    }
}

/// A call's return goes to the instruction after the call: in a program of
/// calls to one-block functions, each return comes back to the block after
/// the calling one.
#[test]
fn a_return_goes_back_to_the_instruction_after_its_call() {
    let spec = Spec {
        functions: 8,
        fn_blocks: 1,
        ..only(Branches { call: 1, ..NONE }, 0.5)
    };
    let mut w = Workload::new(&spec, 2);
    let t = trace(&mut w, 5_000);
    let mut calls = 0;
    let mut ret_to = None;
    for i in &t {
        match i.branch {
            Some(BranchKind::DirectCall) => {
                assert!(ret_to.is_none(), "a call inside a function: {i:?}");
                ret_to = Some(i.pc + 4);
                calls += 1;
            }
            Some(BranchKind::Return) => {
                assert!(i.taken, "{i:?}");
                assert_eq!(Some(i.target), ret_to.take(), "{i:?}");
            }
            _ => {}
        }
    }
    assert!(calls > 100, "{calls}");
}

/// A loop branch of trip count 5 is taken 4 times, then falls through once,
/// and so on.
#[test]
fn a_loop_branch_is_taken_trip_count_less_one_times_then_not() {
    let spec = Spec {
        loop_trip: (5, 5),
        ..only(Branches { looped: 1, ..NONE }, 0.5)
    };
    let t = trace(&mut Workload::new(&spec, 4), 20_000);
    let o = outcomes(&t);
    // (loops nest, so the outer ones run far less often)
    let often = o.values().filter(|v| v.len() >= 10).count();
    assert!(
        often >= 3,
        "{} loop branches, {often} run 10 times",
        o.len()
    );
    for (pc, v) in &o {
        for (k, &taken) in v.iter().enumerate() {
            assert_eq!(taken, k % 5 != 4, "{pc:#x}: {v:?}");
        }
    }
}

/// A pattern branch repeats a period of 2 to 12 outcomes drawn at random:
/// about half of all its outcomes are taken, and most branches go both ways.
#[test]
fn a_pattern_branch_repeats_a_random_period_of_two_to_twelve() {
    let spec = only(Branches { pattern: 1, ..NONE }, 0.5);
    let t = trace(&mut Workload::new(&spec, 6), 50_000);
    let o = outcomes(&t);
    assert!(o.len() >= 10, "{} pattern branches", o.len());
    let (mut taken, mut all, mut both_ways) = (0, 0, 0);
    for (pc, v) in &o {
        assert!(v.len() >= 100, "{pc:#x}: {} outcomes", v.len());
        assert!(
            (2..=12).any(|p| (p..v.len()).all(|k| v[k] == v[k - p])),
            "{pc:#x}: {v:?}"
        );
        taken += v.iter().filter(|&&x| x).count();
        all += v.len();
        both_ways += (v.contains(&true) && v.contains(&false)) as usize;
    }
    let f = taken as f64 / all as f64;
    assert!((0.3..0.7).contains(&f), "{taken} of {all} taken");
    assert!(both_ways * 2 > o.len(), "{both_ways} of {}", o.len());
}

/// A biased branch is taken at its bias or at one less its bias (each branch
/// one of the two); a random one half the time.
#[test]
fn a_biased_branch_is_taken_at_its_bias_or_its_complement() {
    for (branches, bias, rates) in [
        (Branches { biased: 1, ..NONE }, 0.8, [0.2, 0.8]),
        (Branches { random: 1, ..NONE }, 0.8, [0.5, 0.5]),
    ] {
        let spec = Spec {
            block_len: (2, 2),
            ..only(branches, bias)
        };
        let t = trace(&mut Workload::new(&spec, 8), 200_000);
        let o = outcomes(&t);
        assert!(o.len() >= 5, "{} branches", o.len());
        let mut near = [0; 2];
        for (pc, v) in &o {
            assert!(v.len() >= 250, "{pc:#x}: {} outcomes", v.len());
            let f = v.iter().filter(|&&x| x).count() as f64 / v.len() as f64;
            let k = rates
                .iter()
                .position(|r| (f - r).abs() < 0.1)
                .unwrap_or_else(|| panic!("{pc:#x}: taken {f}, not near {rates:?}"));
            near[k] += 1;
        }
        if rates[0] != rates[1] {
            assert!(near[0] > 0 && near[1] > 0, "{near:?}");
        }
    }
}

/// The data sizes the descriptions of the suite and the limits give are the
/// specs' footprints.
#[test]
fn each_workload_has_the_footprints_its_description_gives() {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * 1024;
    for (name, size, footprint) in [
        ("mlp", "64 MB", 64 * MB),
        ("chase", "64 MB", 64 * MB),
        ("l1d", "128 KB", 128 * KB),
        ("stream", "128 MB", 128 * MB),
        ("bigcode", "2 MB", 2 * MB),
        ("dtlb_l1miss", "768 KB", 768 * KB),
    ] {
        let spec = workloads::by_name(name).unwrap();
        assert!(
            spec.description.contains(size),
            "{name}: {}",
            spec.description
        );
        assert_eq!(spec.streams[0].footprint, footprint, "{name}");
    }
}
