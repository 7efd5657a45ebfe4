//! The two shared ChampSim traces through `sim::trace`, checked record by record
//! against an independent decoding of the raw 64-byte records written here (its
//! own xz stream, field offsets and kind rules; nothing from `sim::trace` but the
//! source under test).

use std::io::Read;
use std::path::PathBuf;

use sim::trace::TraceSource;
use sim::{BranchKind, Instr, InstrSource, OpClass};

/// Records compared per trace.
const RECORDS: u64 = 2_000_000;
/// Records in each shared trace (see `shared/traces/README.md`).
const TRACE_RECORDS: u64 = 13_000_000;

const TRACES: [&str; 2] = [
    "xz6_x86_skip50M_13M.champsimtrace.xz",
    "sqlite3_x86_skip100M_13M.champsimtrace.xz",
];

fn trace_path(name: &str) -> PathBuf {
    // The `shared` directory beside the repository.
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/traces")
        .join(name);
    assert!(
        p.is_file(),
        "shared trace {} not found: the tests expect the `shared/traces` directory \
         beside the repository (../shared/traces from the repository root)",
        p.display()
    );
    p
}

/// One raw record, decoded independently.
#[derive(Clone, Copy)]
struct Raw {
    ip: u64,
    taken_bit: u8,
    dst: [u8; 2],
    src: [u8; 4],
    dst_mem: [u64; 2],
    src_mem: [u64; 4],
}

fn le64(b: &[u8]) -> u64 {
    b.iter().rev().fold(0, |acc, &x| (acc << 8) | x as u64)
}

fn decode(b: &[u8; 64]) -> Raw {
    let mut dst_mem = [0; 2];
    let mut src_mem = [0; 4];
    for (i, m) in dst_mem.iter_mut().enumerate() {
        *m = le64(&b[16 + 8 * i..24 + 8 * i]);
    }
    for (i, m) in src_mem.iter_mut().enumerate() {
        *m = le64(&b[32 + 8 * i..40 + 8 * i]);
    }
    Raw {
        ip: le64(&b[0..8]),
        taken_bit: b[9],
        dst: [b[10], b[11]],
        src: [b[12], b[13], b[14], b[15]],
        dst_mem,
        src_mem,
    }
}

/// The rules as a table on (reads SP, reads IP, reads flags, reads
/// another register, writes SP), for a record that writes IP (register 26).
fn kind_of(r: &Raw) -> Option<BranchKind> {
    if !r.dst.contains(&26) {
        return None;
    }
    let reads = |x: u8| r.src.contains(&x);
    let other = r.src.iter().any(|&x| !matches!(x, 0 | 6 | 25 | 26));
    Some(
        match (reads(6), reads(26), reads(25), other, r.dst.contains(&6)) {
            (false, _, false, false, _) => BranchKind::DirectJump,
            (false, false, false, true, _) => BranchKind::IndirectJump,
            (false, true, true, _, false) | (false, true, false, true, false) => {
                BranchKind::Conditional
            }
            (true, true, false, false, true) => BranchKind::DirectCall,
            (true, true, false, true, true) => BranchKind::IndirectCall,
            (true, false, _, _, true) => BranchKind::Return,
            _ => BranchKind::Other,
        },
    )
}

fn kind_index(k: BranchKind) -> usize {
    match k {
        BranchKind::Conditional => 0,
        BranchKind::DirectJump => 1,
        BranchKind::IndirectJump => 2,
        BranchKind::DirectCall => 3,
        BranchKind::IndirectCall => 4,
        BranchKind::Return => 5,
        BranchKind::Other => 6,
    }
}

/// Compare the first `RECORDS` instructions of a trace with the raw records.
fn check_trace(name: &str) {
    let path = trace_path(name);
    let file = std::fs::File::open(&path).expect("open trace");
    let mut raw =
        std::io::BufReader::with_capacity(1 << 16, xz2::read::XzDecoder::new_multi_decoder(file));
    let mut src = TraceSource::open(&path, 0).expect("open trace source");
    let mut read = |buf: &mut [u8; 64]| raw.read_exact(buf).map(|_| decode(buf));
    let mut buf = [0u8; 64];
    let mut cur = read(&mut buf).expect("first record");
    let mut counts = [0u64; 7];
    let mut memory_ops = [0u64; 2];
    for n in 0..RECORDS {
        let next = read(&mut buf).expect("trace shorter than expected");
        let got: Instr = src
            .next_instr()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap_or_else(|| panic!("{name}: ended at {n}"));
        let kind = kind_of(&cur);
        if let Some(k) = kind {
            counts[kind_index(k)] += 1;
        }
        let taken = match kind {
            None => false,
            Some(BranchKind::Conditional | BranchKind::Other) => cur.taken_bit == 1,
            Some(_) => true,
        };
        let first = |m: &[u64]| m.iter().copied().find(|&a| a != 0).unwrap_or(0);
        let (ld, st) = (first(&cur.src_mem), first(&cur.dst_mem));
        memory_ops[0] += (ld != 0) as u64;
        memory_ops[1] += (st != 0) as u64;
        let class = match (kind, ld, st) {
            (Some(_), _, _) => OpClass::Branch,
            (None, 1.., _) => OpClass::Load,
            (None, 0, 1..) => OpClass::Store,
            (None, 0, 0) => OpClass::Alu,
        };
        let ctx = || format!("{name}: record {n} ip {:#x}: got {got:x?}", cur.ip);
        assert_eq!(got.pc, cur.ip, "{}", ctx());
        assert_eq!(got.branch, kind, "{}", ctx());
        assert_eq!(got.taken, taken, "{}", ctx());
        assert_eq!(got.class, class, "{}", ctx());
        assert_eq!((got.load_addr, got.store_addr), (ld, st), "{}", ctx());
        assert_eq!((got.srcs, got.dsts), (cur.src, cur.dst), "{}", ctx());
        if taken {
            assert_eq!(got.target, next.ip, "{}", ctx());
        } else {
            let gap = next.ip.wrapping_sub(cur.ip);
            if (1..=15).contains(&gap) {
                assert_eq!(got.size as u64, gap, "{}", ctx());
            }
        }
        assert!((1..=15).contains(&got.size), "{}", ctx());
        cur = next;
    }
    let stats = src.stats();
    let k = stats.kinds;
    let mine = [
        k.conditional,
        k.direct_jump,
        k.indirect_jump,
        k.direct_call,
        k.indirect_call,
        k.ret,
        k.other,
    ];
    println!(
        "{name}: {RECORDS} records; branches cond/jmp/ijmp/call/icall/ret/other {counts:?}; \
         loads {} stores {}; image {} addresses",
        memory_ops[0], memory_ops[1], stats.image_addresses
    );
    assert_eq!(mine, counts, "{name}: branch kinds (source vs raw count)");
    assert_eq!(stats.records, RECORDS);
    // Real programs: branches are a plausible share of the instructions, and
    // these x86 binaries have every kind but "other".
    let branches: u64 = counts.iter().sum();
    assert!(
        branches * 100 > RECORDS * 5 && branches * 100 < RECORDS * 40,
        "{name}: {branches} branches"
    );
    assert!(counts[..6].iter().all(|&c| c > 0), "{name}: {counts:?}");
}

#[test]
fn xz_trace_matches_an_independent_decoding() {
    check_trace(TRACES[0]);
}

#[test]
fn sqlite3_trace_matches_an_independent_decoding() {
    check_trace(TRACES[1]);
}

#[test]
fn skipping_to_the_last_records_ends_cleanly() {
    let mut s = TraceSource::open(trace_path(TRACES[0]), TRACE_RECORDS - 10).expect("open");
    let mut n = 0;
    let mut last = None;
    while let Some(i) = s.next().expect("valid tail") {
        n += 1;
        last = Some(i);
    }
    assert_eq!(n, 10);
    assert_eq!(s.stats().skipped, TRACE_RECORDS - 10);
    assert!(last.is_some());
    assert!(s.next().expect("still at the end").is_none());
    let e = TraceSource::open(trace_path(TRACES[0]), TRACE_RECORDS)
        .err()
        .expect("nothing left to simulate");
    assert!(e.to_string().contains("--skip 13000000"), "{e}");
}

/// Both shared traces through the core with FMT, sFMT and the golden model in
/// lock step (ROB mirror and retired count checked every cycle), and the rates a
/// real program on this machine should show: IPC, branch MPKI and L1I MPKI within
/// a plausible band around what ChampSim measures on the same traces (xz: IPC
/// 1.20, 12 branch MPKI; sqlite3: IPC 1.24, 6.6 branch MPKI, about 75 L1I MPKI),
/// and most of the wrong path found in the code image (over the whole traces 99.6%
/// and 97%; less this early, while the image is still filling). `make verify` also runs
/// one million instructions of each with `--check` in release mode.
#[test]
fn traces_run_in_lock_step_with_plausible_rates() {
    use cpistack::run::{simulate, RunArgs};
    // (trace, IPC band, branch MPKI band, L1I MPKI band)
    let cases = [
        (TRACES[0], (0.6, 3.0), (4.0, 25.0), (1.0, 40.0)),
        (TRACES[1], (0.4, 2.5), (2.0, 15.0), (30.0, 150.0)),
    ];
    for (name, ipc_band, bmpki_band, impki_band) in cases {
        let a = RunArgs {
            trace: Some(trace_path(name)),
            warmup: 50_000,
            ..crate::sim::args("balanced", 200_000, 1)
        };
        let r = simulate(&a).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let k = 1000.0 / r.instructions as f64;
        let ipc = 1.0 / r.cpi;
        let bmpki = r.stats.committed.mispredicts as f64 * k;
        let impki = r.stats.committed.l1i as f64 * k;
        let t = r.trace.as_ref().expect("a trace run reports trace stats");
        let found =
            t.wrong_path_found as f64 / (t.wrong_path_found + t.wrong_path_missing).max(1) as f64;
        eprintln!(
            "{name}: IPC {ipc:.2}, branch MPKI {bmpki:.1}, L1I MPKI {impki:.1}, wrong path found {:.1}%",
            100.0 * found
        );
        assert_eq!(
            r.instructions, 200_000,
            "{name}: stops at exactly --instructions"
        );
        let within = |x: f64, (lo, hi): (f64, f64)| (lo..=hi).contains(&x);
        assert!(
            within(ipc, ipc_band),
            "{name}: IPC {ipc:.2} outside {ipc_band:?}"
        );
        assert!(
            within(bmpki, bmpki_band),
            "{name}: branch MPKI {bmpki:.1} outside {bmpki_band:?}"
        );
        assert!(
            within(impki, impki_band),
            "{name}: L1I MPKI {impki:.1} outside {impki_band:?}"
        );
        assert!(
            found > 0.85,
            "{name}: only {:.1}% of the wrong path found in the image",
            100.0 * found
        );
    }
}

/// `layout.*` on the traces: a shift above every index bit (2^32, code and
/// data) runs the same cycles and finds the same wrong path in the code image
/// (the image is asked at the source's own addresses); a random layout moves
/// the timing while the run commits the same instructions, in lock step.
#[test]
fn a_moved_trace_runs_the_same_program() {
    use cpistack::run::{simulate, RunArgs};
    for name in TRACES {
        let run = |set: &[&str]| {
            let mut a = RunArgs {
                trace: Some(trace_path(name)),
                warmup: 20_000,
                ..crate::sim::args("balanced", 100_000, 1)
            };
            a.machine.set = set.iter().map(|s| s.to_string()).collect();
            simulate(&a).unwrap_or_else(|e| panic!("{name} {set:?}: {e:#}"))
        };
        let base = run(&[]);
        let high = run(&[
            "layout.code_shift=4294967296",
            "layout.data_shift=8589934592",
        ]);
        assert_eq!(base.stats, high.stats, "{name}");
        let (t0, t1) = (base.trace.as_ref().unwrap(), high.trace.as_ref().unwrap());
        assert_eq!(
            (t0.wrong_path_found, t0.wrong_path_missing),
            (t1.wrong_path_found, t1.wrong_path_missing),
            "{name}"
        );
        assert!(
            t0.wrong_path_found > 1000,
            "{name}: {}",
            t0.wrong_path_found
        );
        for v in ["fmt", "sfmt"] {
            assert_eq!(base.units[v].counters, high.units[v].counters, "{name} {v}");
        }
        let moved = run(&["layout.seed=3"]);
        assert_ne!(
            base.cycles, moved.cycles,
            "{name}: layout.seed=3 moved nothing"
        );
        assert_eq!(moved.instructions, base.instructions, "{name}");
        assert_eq!(moved.stats.branches, base.stats.branches, "{name}");
    }
}
