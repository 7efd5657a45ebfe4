//! Unit tests on hand-built records.

use std::io::{Cursor, Write};
use std::path::PathBuf;

use rand::{RngCore, SeedableRng};

use super::*;
use crate::isa::{BranchKind::*, Instr, InstrSource, OpClass};

// ---- record builders -------------------------------------------------------

fn alu(ip: u64) -> RawRecord {
    RawRecord {
        ip,
        dst_regs: [3, 0],
        src_regs: [4, 5, 0, 0],
        ..RawRecord::default()
    }
}

fn branch(ip: u64, taken: bool, dst: [u8; 2], src: [u8; 4]) -> RawRecord {
    RawRecord {
        ip,
        is_branch: 1,
        branch_taken: taken as u8,
        dst_regs: dst,
        src_regs: src,
        ..RawRecord::default()
    }
}

fn cond(ip: u64, taken: bool) -> RawRecord {
    branch(ip, taken, [REG_IP, 0], [REG_IP, REG_FLAGS, 0, 0])
}
fn jump(ip: u64) -> RawRecord {
    branch(ip, true, [REG_IP, 0], [REG_IP, 0, 0, 0])
}
fn call(ip: u64) -> RawRecord {
    branch(ip, true, [REG_IP, REG_SP], [REG_IP, REG_SP, 0, 0])
}
fn icall(ip: u64) -> RawRecord {
    branch(ip, true, [REG_IP, REG_SP], [REG_IP, REG_SP, 7, 0])
}
fn ret(ip: u64) -> RawRecord {
    branch(ip, true, [REG_IP, REG_SP], [REG_SP, 0, 0, 0])
}

fn bytes(records: &[RawRecord]) -> Vec<u8> {
    records.iter().flat_map(|r| r.to_bytes()).collect()
}

fn source_from(data: Vec<u8>, skip: u64) -> Result<TraceSource, TraceError> {
    let reader = RecordReader::from_reader(Box::new(Cursor::new(data)), Format::Plain, "t".into());
    TraceSource::from_reader(reader, "t".into(), skip)
}

fn source(records: &[RawRecord]) -> TraceSource {
    source_from(bytes(records), 0).expect("valid records")
}

fn all(src: &mut TraceSource) -> Vec<Instr> {
    let mut v = Vec::new();
    while let Some(i) = src.next_instr().expect("valid stream") {
        v.push(i);
    }
    v
}

/// Every instruction delivered, then the error that stopped the stream.
fn until_error(src: &mut TraceSource) -> (Vec<Instr>, TraceError) {
    let mut v = Vec::new();
    loop {
        match src.next_instr() {
            Ok(Some(i)) => v.push(i),
            Ok(None) => panic!("stream ended without the expected error"),
            Err(e) => return (v, e),
        }
    }
}

fn record_problem(e: &TraceError) -> (u64, Problem) {
    match e {
        TraceError::Record {
            record, problem, ..
        } => (*record, problem.clone()),
        other => panic!("expected a record error, got {other}"),
    }
}

// ---- layout and inference --------------------------------------------------

#[test]
fn record_layout_round_trips_at_champsim_offsets() {
    let r = RawRecord {
        ip: 0x1122_3344_5566_7788,
        is_branch: 1,
        branch_taken: 1,
        dst_regs: [26, 6],
        src_regs: [1, 2, 3, 4],
        dst_mem: [0xaa, 0xbb],
        src_mem: [0xc1, 0xc2, 0xc3, 0xc4],
    };
    let b = r.to_bytes();
    assert_eq!(b[0], 0x88);
    assert_eq!(b[7], 0x11);
    assert_eq!(
        (b[8], b[9], b[10], b[11], b[12], b[15]),
        (1, 1, 26, 6, 1, 4)
    );
    assert_eq!(b[16], 0xaa);
    assert_eq!(b[24], 0xbb);
    assert_eq!(b[32], 0xc1);
    assert_eq!(b[56], 0xc4);
    assert_eq!(RawRecord::from_bytes(&b), r);
}

#[test]
fn inference_matches_champsim_for_each_kind() {
    let ip = REG_IP;
    let sp = REG_SP;
    let fl = REG_FLAGS;
    let cases: &[([u8; 2], [u8; 4], Option<BranchKind>)] = &[
        ([ip, 0], [0, 0, 0, 0], Some(DirectJump)),
        ([ip, 0], [ip, 0, 0, 0], Some(DirectJump)),
        // A direct jump may write SP (ChampSim does not look at it there).
        ([ip, sp], [0, 0, 0, 0], Some(DirectJump)),
        ([ip, 0], [3, 0, 0, 0], Some(IndirectJump)),
        ([0, ip], [0, 0, 3, 9], Some(IndirectJump)),
        ([ip, 0], [ip, fl, 0, 0], Some(Conditional)),
        ([ip, 0], [ip, 2, 0, 0], Some(Conditional)), // jrcxz-like
        ([ip, sp], [ip, sp, 0, 0], Some(DirectCall)),
        ([sp, ip], [sp, 0, 0, ip], Some(DirectCall)),
        ([ip, sp], [ip, sp, 3, 0], Some(IndirectCall)),
        ([ip, sp], [sp, 0, 0, 0], Some(Return)),
        ([ip, sp], [sp, fl, 0, 0], Some(Return)),
        // Conditional shape but writes SP: other.
        ([ip, sp], [ip, fl, 0, 0], Some(Other)),
        // Reads IP and flags and another register and SP: other.
        ([ip, 0], [sp, fl, 0, 0], Some(Other)),
        // Indirect jump shape that also reads flags: other.
        ([ip, 0], [3, fl, 0, 0], Some(Other)),
        // Call shape that reads flags: other.
        ([ip, sp], [ip, sp, fl, 0], Some(Other)),
        ([3, 0], [ip, sp, fl, 4], None),
        ([0, 0], [0, 0, 0, 0], None),
    ];
    for (dst, src, want) in cases {
        assert_eq!(infer_kind(*dst, *src), *want, "dst {dst:?} src {src:?}");
    }
}

// ---- conversion -------------------------------------------------------------

#[test]
fn each_kind_converts_and_only_conditional_and_other_keep_the_taken_bit() {
    let other_nt = branch(0x1030, false, [REG_IP, 0], [REG_SP, 0, 0, 0]);
    let other_t = branch(0x1040, true, [REG_IP, 0], [REG_SP, 0, 0, 0]);
    // Unconditional kinds recorded with branch_taken = 0 still come out taken.
    let mut j = jump(0x1050);
    j.branch_taken = 0;
    let recs = [
        cond(0x1000, false), // -> 0x1002
        cond(0x1002, true),  // -> 0x1010
        call(0x1010),        // -> 0x2000
        ret(0x2000),         // -> 0x1015
        alu(0x1015),
        icall(0x1018), // -> 0x3000
        ret(0x3000),   // -> 0x101b
        jump(0x101b),  // -> 0x1030
        other_nt,      // -> 0x1034
        alu(0x1034),
        other_t,                                         // -> 0x1050
        j,                                               // -> 0x1060
        branch(0x1060, true, [REG_IP, 0], [9, 0, 0, 0]), // indirect -> 0x1070
        alu(0x1070),
    ];
    let mut s = source(&recs);
    let v = all(&mut s);
    let kinds: Vec<_> = v.iter().map(|i| i.branch).collect();
    assert_eq!(
        kinds,
        [
            Some(Conditional),
            Some(Conditional),
            Some(DirectCall),
            Some(Return),
            None,
            Some(IndirectCall),
            Some(Return),
            Some(DirectJump),
            Some(Other),
            None,
            Some(Other),
            Some(DirectJump),
            Some(IndirectJump),
            None
        ]
    );
    let taken: Vec<_> = v.iter().map(|i| i.taken).collect();
    assert_eq!(
        taken,
        [false, true, true, true, false, true, true, true, false, false, true, true, true, false]
    );
    // Taken targets are the next record's ip.
    assert_eq!(v[1].target, 0x1010);
    assert_eq!(v[2].target, 0x2000);
    assert_eq!(v[3].target, 0x1015);
    assert_eq!(v[7].target, 0x1030);
    assert_eq!(v[11].target, 0x1060);
    assert_eq!(v[12].target, 0x1070);
    // next_pc follows the committed path everywhere.
    for w in v.windows(2) {
        assert_eq!(w[0].next_pc(), w[1].pc, "{:x?}", w[0]);
    }
    assert!(v
        .iter()
        .all(|i| i.branch.is_none() || i.class == OpClass::Branch));
    let st = s.stats();
    assert_eq!(st.forced_taken, 1);
    assert_eq!(st.kinds.conditional, 2);
    assert_eq!(st.kinds.direct_call, 1);
    assert_eq!(st.kinds.indirect_call, 1);
    assert_eq!(st.kinds.ret, 2);
    assert_eq!(st.kinds.direct_jump, 2);
    assert_eq!(st.kinds.indirect_jump, 1);
    assert_eq!(st.kinds.other, 2);
    assert_eq!(st.kinds.total(), 11);
    assert_eq!(st.records, 14);
}

#[test]
fn sizes_come_from_the_next_sequential_record_else_memory_else_default() {
    let recs = [
        alu(0x1000),         // -> 0x1003: size 3
        cond(0x1003, true),  // -> 0x1100: size unknown, far target: jcc rel32, 6
        alu(0x1100),         // -> 0x1107: size 7
        jump(0x1107),        // -> 0x1003: far target: jmp rel32, 5
        cond(0x1003, false), // -> 0x1009: size 6 learned
        jump(0x1009),        // -> 0x1003: near target: jmp rel8, 2
        cond(0x1003, true),  // -> 0x1100: taken, remembered 6
        alu(0x1100),         // last record: remembered 7
    ];
    let mut s = source(&recs);
    let v = all(&mut s);
    let sizes: Vec<_> = v.iter().map(|i| i.size).collect();
    assert_eq!(sizes, [3, 6, 7, 5, 6, 2, 6, 7]);
    assert_eq!(s.stats().size_defaulted, 3);
    assert_eq!(v[6].target, 0x1100);
    // A record that is the trace's last and never seen before gets the default.
    let v = all(&mut source(&[alu(0x1000), alu(0x1003)]));
    assert_eq!((v[0].size, v[1].size), (3, DEFAULT_SIZE));
}

#[test]
fn rep_iterations_and_discontinuities_are_counted_and_keep_sizes() {
    let mut rep = alu(0x1000);
    rep.src_mem[0] = 0x8000;
    rep.dst_mem[0] = 0x9000;
    let recs = [rep, rep, rep, alu(0x1002), alu(0x5000), alu(0x5004)];
    let mut s = source(&recs);
    let v = all(&mut s);
    // The first two iterations cannot know the size; the third learns 2.
    assert_eq!(v[0].size, DEFAULT_SIZE);
    assert_eq!(v[2].size, 2);
    assert_eq!(v[3].size, DEFAULT_SIZE); // 0x1002 -> 0x5000 is a gap
    assert_eq!(v[4].size, 4);
    let st = s.stats();
    assert_eq!(st.repeats, 2);
    assert_eq!(st.discontinuities, 1);
}

#[test]
fn memory_operands_choose_the_class_and_the_first_nonzero_address() {
    let mut load = alu(0x1000);
    load.src_mem = [0, 0x50, 0x60, 0];
    let mut store = alu(0x1004);
    store.dst_mem = [0, 0x70];
    let mut both = alu(0x1008);
    both.src_mem = [0x80, 0, 0, 0];
    both.dst_mem = [0x90, 0x98];
    let mut ret_with_load = ret(0x100c);
    ret_with_load.src_mem[0] = 0x7ff0;
    let v = all(&mut source(&[
        load,
        store,
        both,
        ret_with_load,
        alu(0x2000),
    ]));
    assert_eq!(
        (v[0].class, v[0].load_addr, v[0].store_addr),
        (OpClass::Load, 0x50, 0)
    );
    assert_eq!(
        (v[1].class, v[1].load_addr, v[1].store_addr),
        (OpClass::Store, 0, 0x70)
    );
    assert_eq!(
        (v[2].class, v[2].load_addr, v[2].store_addr),
        (OpClass::Load, 0x80, 0x90)
    );
    assert_eq!((v[3].class, v[3].load_addr), (OpClass::Branch, 0x7ff0));
    assert_eq!(v[4].class, OpClass::Alu);
    assert_eq!(v[4].srcs, [4, 5, 0, 0]);
    assert_eq!(v[4].dsts, [3, 0]);
}

#[test]
fn call_sizes_are_learned_from_matching_returns() {
    let recs = [
        icall(0x1000), // -> 0x5000: size unknown, default 3
        alu(0x5000),
        ret(0x5004),   // -> 0x1006: the call at 0x1000 is 6 bytes
        icall(0x1006), // -> 0x6000: default 3
        ret(0x6000),   // -> 0x1008: the call at 0x1006 is 2 bytes
        jump(0x1008),  // -> 0x1000
        icall(0x1000), // -> 0x5000: size now remembered
        ret(0x5000),   // -> 0x1006
        icall(0x1006), // last record: remembered size and target
    ];
    let mut s = source(&recs);
    let v = all(&mut s);
    assert_eq!(v[0].size, 3);
    assert_eq!(v[3].size, 3);
    assert_eq!((v[6].size, v[6].next_pc()), (6, 0x5000));
    assert_eq!((v[8].size, v[8].taken, v[8].target), (2, true, 0x6000));
    assert_eq!(s.stats().call_sizes_learned, 3);
    // The wrong path at the first call's fall-through knows the second call.
    let w = s.wrong_path_instr(0x1006);
    assert_eq!(
        (w.branch, w.size, w.target),
        (Some(IndirectCall), 2, 0x6000)
    );
}

#[test]
fn a_last_taken_branch_uses_the_last_target_seen() {
    let recs = [jump(0x1000), jump(0x2000), jump(0x1000)];
    let v = all(&mut source(&recs));
    assert_eq!(v[0].target, 0x2000);
    assert_eq!(v[1].target, 0x1000);
    assert_eq!(v[2].target, 0x2000); // from the image
    let v = all(&mut source(&[jump(0x1000)]));
    assert_eq!((v[0].taken, v[0].target), (true, 0));
}

#[test]
fn a_not_taken_conditional_carries_its_known_target() {
    let recs = [
        cond(0x1000, true),
        alu(0x1800),
        jump(0x1804),
        cond(0x1000, false),
        alu(0x1006),
    ];
    let v = all(&mut source(&recs));
    assert_eq!(
        (v[3].taken, v[3].target, v[3].next_pc()),
        (false, 0x1800, 0x1006)
    );
}

// ---- wrong path -------------------------------------------------------------

#[test]
fn wrong_path_serves_seen_addresses_from_the_image_and_counts() {
    let mut ld = alu(0x1004);
    ld.src_mem[0] = 0xdead0;
    let mut ld2 = ld;
    ld2.src_mem[0] = 0xbeef0;
    let recs = [
        alu(0x1000),
        ld,
        cond(0x1008, true),
        ld2,
        cond(0x1008, false),
        alu(0x100a),
    ];
    // Path: 0x1000, 0x1004 (ld), 0x1008 taken -> 0x1004, ld2, 0x1008 nt -> 0x100a
    let mut s = source(&recs);
    let v = all(&mut s);
    assert_eq!(v.len(), 6);
    let w = s.wrong_path_instr(0x1004);
    assert_eq!((w.class, w.load_addr, w.size), (OpClass::Load, 0xbeef0, 4));
    let b = s.wrong_path_instr(0x1008);
    assert_eq!(
        (b.branch, b.taken, b.target, b.size),
        (Some(Conditional), false, 0x1004, 2)
    );
    assert_eq!(b.srcs, [REG_IP, REG_FLAGS, 0, 0]);
    let u = s.wrong_path_instr(0x7777);
    assert_eq!(
        u,
        Instr {
            pc: 0x7777,
            size: UNSEEN_SIZE,
            class: OpClass::Alu,
            branch: None,
            taken: false,
            target: 0,
            srcs: [0; 4],
            dsts: [0; 2],
            load_addr: 0,
            store_addr: 0
        }
    );
    // Through the trait too.
    let _ = InstrSource::wrong_path(&mut s, 0x1000);
    let st = s.stats();
    assert_eq!((st.wrong_path_found, st.wrong_path_missing), (3, 1));
    assert_eq!(st.image_addresses, 4);
    assert!((st.wrong_path_found_fraction().unwrap() - 0.75).abs() < 1e-12);
}

// ---- skip --------------------------------------------------------------------

#[test]
fn skip_drops_records_and_record_numbers_count_them() {
    let mut recs: Vec<RawRecord> = (0..5000).map(|i| alu(0x1000 + 4 * i)).collect();
    recs[4321].is_branch = 7;
    let mut s = source_from(bytes(&recs), 3000).unwrap();
    assert_eq!(s.stats().skipped, 3000);
    let (v, e) = until_error(&mut s);
    assert_eq!(v[0].pc, 0x1000 + 4 * 3000);
    assert_eq!(v.len(), 4321 - 3000 - 1);
    assert_eq!(record_problem(&e), (4321, Problem::BadIsBranch(7)));
    assert!(e.to_string().contains("record 4321 (byte 276544)"), "{e}");
}

#[test]
fn skip_to_or_past_the_end_is_an_error() {
    let recs = [alu(0x1000), alu(0x1004)];
    assert!(source_from(bytes(&recs), 1).is_ok());
    for skip in [2, 10] {
        let e = source_from(bytes(&recs), skip).err().expect("error");
        assert_eq!(
            e,
            TraceError::Empty {
                path: "t".into(),
                skip,
                records: 2
            }
        );
        assert_eq!(
            e.to_string(),
            format!("t: no records left to simulate: --skip {skip}, and the trace holds 2")
        );
    }
    let e = source_from(Vec::new(), 0).err().expect("error");
    assert!(matches!(e, TraceError::Empty { .. }));
    // no `--skip` in the message of a run that skipped nothing (`stacks` has no such option)
    assert_eq!(e.to_string(), "t: the trace holds no records");
}

// ---- errors -------------------------------------------------------------------

#[test]
fn a_short_last_record_names_its_number() {
    let mut data = bytes(&[alu(0x1000), alu(0x1004), alu(0x1008)]);
    data.extend_from_slice(&[1u8; 17]);
    let mut s = source_from(data, 0).unwrap();
    let (v, e) = until_error(&mut s);
    assert_eq!(v.len(), 2); // the lookahead hit the short record
    assert_eq!(record_problem(&e), (3, Problem::ShortRecord { got: 17 }));
    // The error sticks.
    assert_eq!(s.next_instr().unwrap_err(), e);
    let se: crate::isa::SourceError = e.into();
    assert!(se.to_string().contains("record 3"), "{se}");
}

#[test]
fn impossible_patterns_are_rejected_with_their_record_number() {
    let mut bad_taken = alu(0x1010);
    bad_taken.branch_taken = 2;
    let mut bad_isb = alu(0x1010);
    bad_isb.is_branch = 255;
    let zero = alu(0);
    let mut flagged = alu(0x1010);
    flagged.is_branch = 1;
    let mut unflagged = jump(0x1010);
    unflagged.is_branch = 0;
    unflagged.branch_taken = 0;
    let mut taken_alu = alu(0x1010);
    taken_alu.branch_taken = 1;
    let cases = [
        (bad_taken, Problem::BadTaken(2)),
        (bad_isb, Problem::BadIsBranch(255)),
        (zero, Problem::ZeroIp),
        (flagged, Problem::BranchWithoutIpWrite),
        (unflagged, Problem::IpWriteWithoutBranch),
        (taken_alu, Problem::TakenNonBranch),
    ];
    for (bad, want) in cases {
        for at in [0usize, 4] {
            let mut recs: Vec<_> = (0..8).map(|i| alu(0x1000 + 4 * i)).collect();
            recs[at] = bad;
            let r = source_from(bytes(&recs), 0);
            let e = match r {
                Err(e) => e, // record 0 fails at open
                Ok(mut s) => until_error(&mut s).1,
            };
            assert_eq!(record_problem(&e), (at as u64, want.clone()));
            assert!(e.to_string().contains(&format!("record {at} ")), "{e}");
        }
    }
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut enc = xz2::write::XzEncoder::new(Vec::new(), 6);
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// A path of `n` records that exercises every kind.
fn program(n: usize) -> Vec<RawRecord> {
    let mut v = Vec::new();
    let mut i = 0u64;
    while v.len() < n {
        let base = 0x40_0000 + (i % 97) * 0x40;
        let mut ld = alu(base);
        ld.src_mem[0] = 0x7000_0000 + i * 8;
        v.push(ld);
        let taken = matches!(i % 3, 0);
        v.push(cond(base + 3, taken));
        let next = if taken { base + 0x20 } else { base + 5 };
        v.push(call(next));
        v.push(ret(0x9000));
        v.push(jump(next + 5));
        i += 1;
    }
    v.truncate(n);
    v
}

fn decode_stream(reader: RecordReader) -> Result<Vec<Instr>, TraceError> {
    let mut s = TraceSource::from_reader(reader, "t".into(), 0)?;
    let mut v = Vec::new();
    while let Some(i) = s.next_instr()? {
        v.push(i);
    }
    Ok(v)
}

#[test]
fn corrupt_and_truncated_xz_streams_name_a_record() {
    let plain = bytes(&program(20_000));
    let good = xz(&plain);
    let reader = |data: Vec<u8>| {
        RecordReader::from_reader(Box::new(Cursor::new(data)), Format::Xz, "t.xz".into())
    };
    assert_eq!(decode_stream(reader(good.clone())).unwrap().len(), 20_000);
    // Flip bytes in the middle of the compressed data.
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    for b in &mut bad[mid..mid + 8] {
        *b ^= 0x5a;
    }
    let e = decode_stream(reader(bad)).unwrap_err();
    let (rec, p) = record_problem(&e);
    assert!(matches!(p, Problem::Corrupt { format: "xz", .. }), "{e}");
    assert!(rec < 20_000, "{e}");
    // Cut the stream short.
    let cut = good[..good.len() * 2 / 3].to_vec();
    let e = decode_stream(reader(cut)).unwrap_err();
    assert!(
        matches!(record_problem(&e).1, Problem::Corrupt { format: "xz", .. }),
        "{e}"
    );
    // Not xz at all.
    let e = decode_stream(reader(plain.clone())).unwrap_err();
    assert_eq!(record_problem(&e).0, 0, "{e}");
    // Where the stream breaks, not where the read buffer began: every whole
    // record decoded before the error is delivered first.
    for cut in [good.len() / 3, good.len() / 2, good.len() - 7] {
        let data = good[..cut].to_vec();
        let whole = decodable(xz2::read::XzDecoder::new_multi_decoder(Cursor::new(&data))) / 64;
        let e = decode_stream(reader(data)).unwrap_err();
        let (rec, p) = record_problem(&e);
        assert!(matches!(p, Problem::Corrupt { format: "xz", .. }), "{e}");
        assert!(
            rec.abs_diff(whole as u64) <= 1,
            "cut at {cut}: {e}, {whole} whole records"
        );
    }
    // Garbage after a whole stream: all 20 000 records, then the error.
    let mut trailing = good.clone();
    trailing.extend_from_slice(b"not an xz stream at all!");
    let e = decode_stream(reader(trailing)).unwrap_err();
    assert_eq!(record_problem(&e).0, 20_000, "{e}");
}

/// The bytes a decoder yields before it fails, read one at a time (so that
/// at most one is lost with the error).
fn decodable(mut d: impl std::io::Read) -> usize {
    let mut b = [0u8; 1];
    let mut n = 0;
    while let Ok(1) = d.read(&mut b) {
        n += 1;
    }
    n
}

#[test]
fn corrupt_gz_stream_names_a_record() {
    let plain = bytes(&program(20_000));
    let good = gz(&plain);
    let reader = |data: Vec<u8>| {
        RecordReader::from_reader(Box::new(Cursor::new(data)), Format::Gz, "t.gz".into())
    };
    assert_eq!(decode_stream(reader(good.clone())).unwrap().len(), 20_000);
    let cut = good[..good.len() / 2].to_vec();
    let whole = decodable(flate2::read::MultiGzDecoder::new(Cursor::new(&cut))) / 64;
    let e = decode_stream(reader(cut)).unwrap_err();
    let (rec, p) = record_problem(&e);
    assert!(matches!(p, Problem::Corrupt { format: "gzip", .. }), "{e}");
    assert!(
        rec.abs_diff(whole as u64) <= 1,
        "{e}, {whole} whole records"
    );
}

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("cpistack-trace-{}-{name}", std::process::id()))
}

#[test]
fn files_are_decompressed_by_suffix_and_named_without_it() {
    let plain = bytes(&program(3000));
    let files = [
        (temp_path("p.champsimtrace.xz"), xz(&plain)),
        (temp_path("p.champsimtrace.gz"), gz(&plain)),
        (temp_path("p.champsimtrace"), plain.clone()),
        // no suffix that says so: the content's magic does
        (temp_path("p.trace"), xz(&plain)),
        (temp_path("p"), gz(&plain)),
        // a suffix that says otherwise: the content's magic wins
        (temp_path("p.xz"), gz(&plain)),
        (temp_path("p.gz"), xz(&plain)),
    ];
    let mut outs = Vec::new();
    for (path, data) in &files {
        std::fs::write(path, data).unwrap();
        let mut s = TraceSource::open(path, 10).unwrap();
        assert!(s.name().ends_with("-p"), "{}", s.name());
        outs.push(all(&mut s));
        std::fs::remove_file(path).unwrap();
    }
    assert_eq!(outs[0].len(), 2990);
    for o in &outs[1..] {
        assert_eq!(&outs[0], o);
    }
    assert_eq!(Format::sniff(&plain[..6]), Format::Plain);
    assert_eq!(Format::sniff(&[0xfd, b'7', b'z']), Format::Plain);
    // a raw trace whose first ip looks like the gzip magic (0x555555088b1f):
    // byte 3 has a reserved gzip flag set, so it is raw
    assert_eq!(
        Format::sniff(&0x5555_5508_8b1f_u64.to_le_bytes()),
        Format::Plain
    );
    assert_eq!(Format::sniff(&[0x1f, 0x8b, 0x08, 0x00]), Format::Gz);
    // compressions that are not decoded are named, not read as records, and
    // not handed to the decoder a suffix names either
    for ((magic, name), suffix) in [
        (&b"BZh91AY&SY"[..], "bzip2"),
        (&[0x28, 0xb5, 0x2f, 0xfd, 0, 0][..], "zstd"),
        (&[0x5d, 0, 0, 0x80, 0, 0xff][..], "lzma"),
    ]
    .into_iter()
    .flat_map(|m| ["other", "xz", "gz"].map(|s| (m, s)))
    {
        let path = temp_path(&format!("p.trace.{suffix}"));
        let mut data = magic.to_vec();
        data.resize(4096, 0x55);
        std::fs::write(&path, &data).unwrap();
        let e = TraceSource::open(&path, 0).err().unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(
            matches!(record_problem(&e), (0, Problem::Unsupported { format }) if format == name),
            "{e}"
        );
    }
    // a file named `.xz` or `.gz` without that magic, short or long, is said
    // to be no such data (a short one got the decoder's "premature eof")
    for (suffix, format) in [("xz", "xz"), ("gz", "gzip")] {
        for data in [&b"hello\n"[..], &[0x41; 4096][..]] {
            let path = temp_path(&format!("not.{suffix}"));
            std::fs::write(&path, data).unwrap();
            let e = TraceSource::open(&path, 0).err().unwrap();
            std::fs::remove_file(&path).unwrap();
            assert!(
                matches!(record_problem(&e), (0, Problem::NotCompressed { format: f, suffix: s })
                    if f == format && s == suffix),
                "{e}"
            );
            assert!(
                e.to_string()
                    .contains(&format!("named `.{suffix}` but is not {format} data")),
                "{e}"
            );
        }
    }
    // an empty one holds no records, as an empty raw trace does
    let path = temp_path("empty.xz");
    std::fs::write(&path, b"").unwrap();
    let mut r = RecordReader::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(r.next_record().unwrap().is_none());
    let e = TraceSource::open(temp_path("missing.xz"), 0).err().unwrap();
    assert!(matches!(e, TraceError::Open { .. }), "{e}");
}

#[test]
fn random_bytes_never_panic() {
    let seed = 0x5eed_7ace_u64;
    println!("seed {seed:#x}");
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let good = bytes(&program(200));
    for round in 0..300 {
        let mut data = good.clone();
        let len = (rng.next_u32() as usize) % (data.len() + 1);
        data.truncate(len);
        for _ in 0..(round % 20) {
            if data.is_empty() {
                break;
            }
            let at = rng.next_u32() as usize % data.len();
            data[at] = rng.next_u32() as u8;
        }
        let compressed = if round % 3 == 1 {
            xz(&data)
        } else {
            data.clone()
        };
        for (fmt, d) in [(Format::Plain, data), (Format::Xz, compressed)] {
            let reader = RecordReader::from_reader(Box::new(Cursor::new(d)), fmt, "r".into());
            if let Ok(mut s) = TraceSource::from_reader(reader, "r".into(), round % 4) {
                let mut n = 0;
                while let Ok(Some(i)) = s.next_instr() {
                    let _ = s.wrong_path_instr(i.next_pc());
                    n += 1;
                }
                assert!(n <= 200);
            }
        }
    }
}

#[test]
fn a_full_image_learns_no_new_address_and_counts_them() {
    use crate::isa::OpClass;
    let mut im = CodeImage::with_max(2);
    for pc in [0x10, 0x20, 0x30, 0x10, 0x40, 0x20] {
        im.entry(pc, OpClass::Alu, None).size = 3;
    }
    assert_eq!(im.len(), 2);
    assert_eq!(im.not_learned(), 2, "0x30 and 0x40");
    assert_eq!(im.get(0x10).map(|s| s.size), Some(3));
    assert!(im.get(0x30).is_none());
}
