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
fn impossible_values_are_rejected_with_their_record_number() {
    let mut bad_taken = alu(0x1010);
    bad_taken.branch_taken = 2;
    let mut bad_isb = alu(0x1010);
    bad_isb.is_branch = 255;
    let zero = alu(0);
    let cases = [
        (bad_taken, Problem::BadTaken(2)),
        (bad_isb, Problem::BadIsBranch(255)),
        (zero, Problem::ZeroIp),
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

// ---- reader edges -------------------------------------------------------------

/// A byte source that hands out `steps` in order, each a run of bytes (in
/// reads as large as the buffer offered) or an error, then ends; it records
/// the size of every buffer it is offered.
struct Steps {
    steps: std::collections::VecDeque<Result<Vec<u8>, std::io::ErrorKind>>,
    offered: std::sync::Arc<std::sync::Mutex<Vec<usize>>>,
}

impl std::io::Read for Steps {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.offered.lock().unwrap().push(buf.len());
        match self.steps.pop_front() {
            None => Ok(0),
            Some(Err(kind)) => Err(std::io::Error::new(kind, "injected")),
            Some(Ok(mut data)) => {
                let n = data.len().min(buf.len());
                buf[..n].copy_from_slice(&data[..n]);
                if n < data.len() {
                    self.steps.push_front(Ok(data.split_off(n)));
                }
                Ok(n)
            }
        }
    }
}

/// A plain reader over `steps`, and the sizes of the buffers it offers them.
fn stepped(
    steps: Vec<Result<Vec<u8>, std::io::ErrorKind>>,
) -> (RecordReader, std::sync::Arc<std::sync::Mutex<Vec<usize>>>) {
    let offered = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let src = Steps {
        steps: steps.into(),
        offered: offered.clone(),
    };
    let reader = RecordReader::from_reader(Box::new(src), Format::Plain, "s".into());
    (reader, offered)
}

fn read_error(detail: &str) -> Problem {
    Problem::Read {
        detail: detail.into(),
    }
}

#[test]
fn the_reader_asks_its_source_for_64_kib_at_a_time() {
    // 2048 records: two full 64 KiB chunks, then the end.
    let recs: Vec<_> = (0..2048).map(|i| alu(0x1000 + 4 * i)).collect();
    let (mut r, offered) = stepped(vec![Ok(bytes(&recs))]);
    let mut n = 0;
    while r.next_record().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 2048);
    assert_eq!(*offered.lock().unwrap(), [65536, 65536, 65536]);
}

#[test]
fn an_interrupted_read_is_retried() {
    let (mut r, _) = stepped(vec![
        Ok(bytes(&[alu(0x1000)])),
        Err(std::io::ErrorKind::Interrupted),
        Ok(bytes(&[alu(0x1004)])),
    ]);
    assert_eq!(r.next_record().unwrap(), Some(alu(0x1000)));
    assert_eq!(r.next_record().unwrap(), Some(alu(0x1004)));
    assert_eq!(r.next_record().unwrap(), None);
}

#[test]
fn a_read_error_right_after_one_whole_record_comes_after_that_record() {
    // 64 bytes, then the source fails: record 0 is delivered, record 1 fails.
    let (mut r, _) = stepped(vec![
        Ok(bytes(&[alu(0x1000)])),
        Err(std::io::ErrorKind::Other),
    ]);
    assert_eq!(r.next_record().unwrap(), Some(alu(0x1000)));
    let e = r.next_record().unwrap_err();
    assert_eq!(record_problem(&e), (1, read_error("injected")));
}

#[test]
fn a_bad_record_that_ends_a_chunk_is_named_for_itself_though_the_next_read_fails() {
    // 2048 records, the last of each 64 KiB chunk (1023 and 2047) bad, then
    // a read error. The reader reads no further than the record it hands out
    // needs: record 1023 is handed out before the read that fails and is
    // named for its own fault (a refill with one record left would read on,
    // meet the error and blame the record on it).
    let mut recs: Vec<_> = (0..2048).map(|i| alu(0x1000 + 4 * i)).collect();
    recs[1023].is_branch = 7;
    recs[2047].is_branch = 9;
    let data = bytes(&recs);
    let (mut r, offered) = stepped(vec![
        Ok(data[..65536].to_vec()),
        Err(std::io::ErrorKind::Other),
    ]);
    for _ in 0..1023 {
        r.next_record().unwrap().unwrap();
    }
    let e = r.next_record().unwrap_err();
    assert_eq!(record_problem(&e), (1023, Problem::BadIsBranch(7)));
    assert_eq!(*offered.lock().unwrap(), [65536]);
    // The same after a skip that starts with one record left in the chunk:
    // the skip takes it, and the next chunk (records 1024 to 2047) is read whole.
    let (mut r, offered) = stepped(vec![Ok(data), Err(std::io::ErrorKind::Other)]);
    for _ in 0..1023 {
        r.next_record().unwrap().unwrap();
    }
    assert_eq!(r.skip(1).unwrap(), 1);
    for _ in 1024..2047 {
        r.next_record().unwrap().unwrap();
    }
    let e = r.next_record().unwrap_err();
    assert_eq!(record_problem(&e), (2047, Problem::BadIsBranch(9)));
    assert_eq!(*offered.lock().unwrap(), [65536, 65536]);
}

#[test]
fn position_counts_skipped_delivered_and_rejected_records() {
    let mut bad = alu(0x1008);
    bad.is_branch = 7;
    let data = bytes(&[alu(0x1000), alu(0x1004), bad, alu(0x100c)]);
    let mut r = RecordReader::from_reader(Box::new(Cursor::new(data)), Format::Plain, "t".into());
    assert_eq!(r.position(), 0);
    assert_eq!(r.skip(1).unwrap(), 1);
    assert_eq!(r.position(), 1);
    assert_eq!(r.next_record().unwrap(), Some(alu(0x1004)));
    assert_eq!(r.position(), 2);
    let e = r.next_record().unwrap_err();
    assert_eq!(e.record(), Some(2));
    // the rejected record is consumed: the next one is record 3
    assert_eq!(r.position(), 3);
    assert_eq!(r.next_record().unwrap(), Some(alu(0x100c)));
    assert_eq!(r.position(), 4);
    assert_eq!(r.next_record().unwrap(), None);
    assert_eq!(r.position(), 4);
}

#[test]
fn every_compression_not_decoded_is_named_by_its_magic() {
    let cases: [(&[u8], Option<&str>); 7] = [
        (b"BZh91AY&SY", Some("bzip2")),
        (&[0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x00], Some("zstd")),
        (&[0x04, 0x22, 0x4d, 0x18, 0x64, 0x40], Some("lz4")),
        (b"PK\x03\x04\x14\x00", Some("zip")),
        (&[0x5d, 0x00, 0x00, 0x80, 0x00, 0xff], Some("lzma")),
        // bzip2's block size is a digit 1 to 9
        (b"BZh0AY", None),
        (&0x40_1000_u64.to_le_bytes()[..6], None),
    ];
    for (head, want) in cases {
        assert_eq!(Format::unsupported(head), want, "{head:x?}");
    }
}

#[test]
fn a_raw_trace_that_starts_like_bzip2_names_its_own_later_errors() {
    // Record 0's ip is the bytes "BZh91AY&" (a valid record), record 1 has
    // is_branch 7: that, not "bzip2", is record 1's error.
    let mut bad = alu(0x1004);
    bad.is_branch = 7;
    let first = alu(u64::from_le_bytes(*b"BZh91AY&"));
    let path = temp_path("bzip2-like.champsimtrace");
    std::fs::write(&path, bytes(&[first, bad])).unwrap();
    let mut r = RecordReader::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(r.next_record().unwrap(), Some(first));
    let e = r.next_record().unwrap_err();
    assert_eq!(record_problem(&e), (1, Problem::BadIsBranch(7)));
}

#[test]
fn a_skip_after_records_were_read_passes_over_exactly_the_records_asked() {
    // 3000 records; 10 read, then 2000 skipped: 1014 from the buffered
    // chunk (records 10 to 1023), 986 from the next.
    let recs: Vec<_> = (0..3000).map(|i| alu(0x1000 + 4 * i)).collect();
    let data = bytes(&recs);
    let mut r = RecordReader::from_reader(Box::new(Cursor::new(data)), Format::Plain, "t".into());
    for _ in 0..10 {
        r.next_record().unwrap().unwrap();
    }
    assert_eq!(r.skip(2000).unwrap(), 2000);
    assert_eq!(r.position(), 2010);
    assert_eq!(r.next_record().unwrap(), Some(recs[2010]));
    // past the end: the 989 records left (2011 to 2999)
    assert_eq!(r.skip(5000).unwrap(), 989);
    assert_eq!(r.position(), 3000);
    assert_eq!(r.next_record().unwrap(), None);
}

#[test]
fn a_truncated_xz_stream_is_said_to_end_early() {
    let good = xz(&bytes(&program(20_000)));
    let detail = |data: &[u8]| {
        let reader = RecordReader::from_reader(
            Box::new(Cursor::new(data.to_vec())),
            Format::Xz,
            "t.xz".into(),
        );
        match record_problem(&decode_stream(reader).unwrap_err()).1 {
            Problem::Corrupt {
                format: "xz",
                detail,
            } => detail,
            other => panic!("{other}"),
        }
    };
    // cut in its header, its middle, and just before its end
    for cut in [1, 30, good.len() / 2, good.len() - 7] {
        assert_eq!(detail(&good[..cut]), "premature eof", "cut at {cut}");
    }
    // damaged, not cut: liblzma's own word
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    for b in &mut bad[mid..mid + 8] {
        *b ^= 0x5a;
    }
    assert_eq!(detail(&bad), "lzma data error");
}

// ---- counters and accessors ---------------------------------------------------

#[test]
fn a_record_error_is_at_byte_64_times_its_number() {
    let mut data = bytes(&[alu(0x1000), alu(0x1004), alu(0x1008)]);
    data.extend_from_slice(&[1u8; 17]);
    let mut s = source_from(data, 0).unwrap();
    let (_, e) = until_error(&mut s);
    assert_eq!(e.record(), Some(3));
    let se = crate::isa::SourceError::from(e);
    assert!(
        matches!(&se, crate::isa::SourceError::Record { path, record: 3, byte: 192, what }
            if path == "t" && what.starts_with("short record: the stream ends 17 bytes")),
        "{se:?}"
    );
    // errors not at a record have no record number
    let empty = source_from(Vec::new(), 0).err().unwrap();
    assert_eq!(empty.record(), None);
}

#[test]
fn kind_counts_keep_each_kind_apart() {
    // 1 conditional, 2 direct jumps, ... 7 others: 28 in all.
    let kinds = [
        Conditional,
        DirectJump,
        IndirectJump,
        DirectCall,
        IndirectCall,
        Return,
        Other,
    ];
    let mut c = KindCounts::default();
    for (i, &k) in kinds.iter().enumerate() {
        for _ in 0..=i {
            c.add(k);
        }
    }
    let got: Vec<u64> = kinds.iter().map(|&k| c.get(k)).collect();
    assert_eq!(got, [1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(
        [c.conditional, c.direct_jump, c.indirect_jump, c.direct_call],
        [1, 2, 3, 4]
    );
    assert_eq!([c.indirect_call, c.ret, c.other], [5, 6, 7]);
    assert_eq!(c.total(), 28);
}

#[test]
fn the_wrong_path_fraction_is_none_before_any_lookup() {
    let mut st = TraceStats::default();
    assert_eq!(st.wrong_path_found_fraction(), None);
    st.wrong_path_missing = 3;
    assert_eq!(st.wrong_path_found_fraction(), Some(0.0));
    st.wrong_path_found = 1;
    assert_eq!(st.wrong_path_found_fraction(), Some(0.25));
}

#[test]
fn default_sizes_follow_the_x86_encoding_of_each_kind() {
    // From pc 0x1000 a rel8 reaches pc + 2 - 128 = 0xf82 to pc + 2 + 127 = 0x1081.
    let pc = 0x1000;
    let cases: &[(Option<BranchKind>, u64, u8)] = &[
        (Some(Conditional), 0, 2),
        (Some(Conditional), 0xf82, 2),
        (Some(Conditional), 0x1081, 2),
        (Some(Conditional), 0xf81, 6),
        (Some(Conditional), 0x1082, 6),
        (Some(DirectJump), 0, 2),
        (Some(DirectJump), 0xf82, 2),
        (Some(DirectJump), 0x1081, 2),
        (Some(DirectJump), 0xf81, 5),
        (Some(DirectJump), 0x1082, 5),
        (Some(DirectCall), 0, 5),
        (Some(DirectCall), 0x1010, 5),
        (Some(IndirectCall), 0x1010, 3),
        (Some(IndirectJump), 0x9000, 2),
        (Some(Return), 0x9000, 1),
        (Some(Other), 0x1010, DEFAULT_SIZE),
        (None, 0, DEFAULT_SIZE),
    ];
    for &(kind, target, want) in cases {
        assert_eq!(
            default_size(kind, pc, target),
            want,
            "{kind:?} to {target:#x}"
        );
    }
}

#[test]
fn the_code_image_lists_every_address_it_learned() {
    assert!(CodeImage::new().is_empty());
    let mut s = source(&[alu(0x1000), cond(0x1003, true), alu(0x1100), alu(0x1103)]);
    assert!(s.image().is_empty(), "nothing converted yet");
    let v = all(&mut s);
    assert_eq!(v.len(), 4);
    assert!(!s.image().is_empty());
    let mut seen: Vec<(u64, OpClass, u8)> = s
        .image()
        .iter()
        .map(|(pc, st)| (pc, st.class, st.size))
        .collect();
    seen.sort_unstable_by_key(|e| e.0);
    // sizes: 3 and 3 learned from their successors; the taken branch and the
    // last record are never seen falling through (0 = unknown)
    assert_eq!(
        seen,
        [
            (0x1000, OpClass::Alu, 3),
            (0x1003, OpClass::Branch, 0),
            (0x1100, OpClass::Alu, 3),
            (0x1103, OpClass::Alu, 0),
        ]
    );
}

#[test]
fn the_address_hasher_spreads_nearby_code_addresses_over_low_and_high_bits() {
    use std::collections::HashSet;
    use std::hash::{BuildHasher, BuildHasherDefault};
    // 4096 code addresses 16 bytes apart. The image's map takes a bucket from
    // a hash's low bits and a tag from its top 7: a hasher that leaves either
    // alike for nearby addresses makes lookups crawl.
    let h = BuildHasherDefault::<image::AddrHasher>::default();
    let hashes: Vec<u64> = (0..4096u64)
        .map(|i| h.hash_one(0x40_0000 + 16 * i))
        .collect();
    let distinct = |f: fn(u64) -> u64| hashes.iter().map(|&x| f(x)).collect::<HashSet<_>>().len();
    let (all, low, top) = (
        distinct(|x| x),
        distinct(|x| x & 0xfff),
        distinct(|x| x >> 57),
    );
    assert_eq!(all, 4096);
    assert_eq!(top, 128);
    // 2674 of the 4096 values of the low 12 bits (random hashes: about
    // 4096 * (1 - 1/e) = 2589)
    assert!(low > 2400, "{low} distinct low 12 bits");
}

// ---- call stack, and what the image keeps -------------------------------------

#[test]
fn a_return_may_skip_calls_that_never_returned_and_pops_them() {
    // Calls nest 4 deep (A, B, C, D); D's callee never returns to it: the
    // first return lands at C's fall-through (C is 5 bytes: D is skipped and
    // popped with it), the next ones at B's (3 bytes) and A's (2 bytes).
    let recs = [
        call(0x1000), // A -> 0x2000
        call(0x2000), // B -> 0x3000
        call(0x3000), // C -> 0x4000
        call(0x4000), // D -> 0x5000
        ret(0x5000),  // -> 0x3005
        ret(0x3005),  // -> 0x2003
        ret(0x2003),  // -> 0x1002
        alu(0x1002),
    ];
    let mut s = source(&recs);
    assert_eq!(all(&mut s).len(), 8);
    assert_eq!(s.stats().call_sizes_learned, 3);
    let size = |pc: u64| s.image().get(pc).map(|e| e.size);
    assert_eq!(
        [size(0x1000), size(0x2000), size(0x3000), size(0x4000)],
        [Some(2), Some(3), Some(5), Some(0)]
    );
}

#[test]
fn the_shadow_stack_keeps_the_last_64_calls_of_a_deep_recursion() {
    // main calls f, which calls itself 69 times at 0x2002: 70 calls, of which
    // the stack keeps the last 64. The 70 returns: the first 64 each find a
    // call and teach its size (5); the last 6 find the stack empty (main's
    // call was overwritten), though 0x2002 was pushed 69 times.
    let mut recs = vec![call(0x1000)]; // -> 0x2000
    for _ in 0..69 {
        recs.push(cond(0x2000, false)); // -> 0x2002
        recs.push(call(0x2002)); // -> 0x2000
    }
    recs.push(cond(0x2000, true)); // base case -> 0x2010
    recs.push(ret(0x2010)); // -> 0x2007
    recs.extend(std::iter::repeat_n(ret(0x2007), 69)); // -> 0x2007, the last -> 0x1005
    recs.push(alu(0x1005));
    let mut s = source(&recs);
    assert_eq!(all(&mut s).len(), 1 + 2 * 69 + 2 + 69 + 1);
    assert_eq!(s.stats().call_sizes_learned, 64);
    assert_eq!(s.image().get(0x2002).map(|e| e.size), Some(5));
    assert_eq!(s.image().get(0x1000).map(|e| e.size), Some(0));
}

#[test]
fn a_return_that_ends_the_trace_teaches_no_call_size() {
    // The return at 0x5000 went to 0x1003 once (the call at 0x1000 is 3
    // bytes: 1 learned); as the trace's last record its target is unknown, and
    // the target remembered from before is no evidence: still 1 learned.
    let recs = [
        call(0x1000), // -> 0x5000
        ret(0x5000),  // -> 0x1003
        alu(0x1003),
        jump(0x1006), // -> 0x1000
        call(0x1000), // -> 0x5000
        ret(0x5000),  // the last record
    ];
    let mut s = source(&recs);
    let v = all(&mut s);
    assert_eq!((v[5].taken, v[5].target), (true, 0x1003));
    assert_eq!(s.stats().call_sizes_learned, 1);
}

#[test]
fn an_address_keeps_its_last_taken_target_through_a_non_branch_record() {
    // 0x1000 is a conditional taken to 0x1800, then (code rewritten) a plain
    // instruction, then a conditional again, not taken: its known target is
    // still 0x1800, the last taken target seen there.
    let recs = [
        cond(0x1000, true), // -> 0x1800
        jump(0x1800),       // -> 0x1000
        alu(0x1000),        // -> 0x1002
        jump(0x1002),       // -> 0x1000
        cond(0x1000, false),
        alu(0x1002),
    ];
    let v = all(&mut source(&recs));
    assert_eq!((v[4].taken, v[4].target), (false, 0x1800));
}

#[test]
fn the_wrong_path_sees_the_last_store_address_of_an_instruction() {
    // The store at 0x1000 writes 0x70, then 0x78, then nothing (a masked
    // store): the image keeps 0x78.
    let mut st = alu(0x1000);
    st.dst_mem[0] = 0x70;
    let mut st2 = st;
    st2.dst_mem[0] = 0x78;
    let recs = [
        st,
        jump(0x1003),
        st2,
        jump(0x1003),
        alu(0x1000),
        jump(0x1003),
    ];
    let mut s = source(&recs);
    assert_eq!(all(&mut s).len(), 6);
    let w = s.wrong_path_instr(0x1000);
    assert_eq!((w.load_addr, w.store_addr), (0, 0x78));
}

/// Raw records made as they are read: `n` plain instructions 4 bytes apart
/// from 0x1000 (no buffer of the whole trace).
struct Distinct {
    next: u64,
    n: u64,
    pending: Vec<u8>,
}

impl std::io::Read for Distinct {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pending.len() < buf.len() && self.next < self.n {
            self.pending
                .extend_from_slice(&alu(0x1000 + 4 * self.next).to_bytes());
            self.next += 1;
        }
        let k = self.pending.len().min(buf.len());
        buf[..k].copy_from_slice(&self.pending[..k]);
        self.pending.drain(..k);
        Ok(k)
    }
}

#[test]
fn a_source_whose_image_is_full_counts_the_records_not_learned() {
    // 2^20 + 3 distinct addresses: the image learns 2^20 (1 048 576), and
    // the last 3 records are not learned.
    let n = MAX_IMAGE_ADDRESSES as u64 + 3;
    let reader = RecordReader::from_reader(
        Box::new(Distinct {
            next: 0,
            n,
            pending: Vec::new(),
        }),
        Format::Plain,
        "d".into(),
    );
    let mut s = TraceSource::from_reader(reader, "d".into(), 0).unwrap();
    let mut count = 0;
    while s.next_instr().unwrap().is_some() {
        count += 1;
    }
    assert_eq!(count, n);
    let st = s.stats();
    assert_eq!(st.image_addresses, 1 << 20);
    assert_eq!(st.image_not_learned, 3);
}

/// The registers decide what a record is, as in ChampSim, whatever its flags
/// say: a call and a return flagged `is_branch = 0` (as ChampSim's Pin
/// tracer writes them) are a call and a return, a record flagged
/// `is_branch = 1` that does not write IP is no branch, and `branch_taken = 1`
/// on a non-branch is ignored; each disagreement is counted. The same
/// records with consistent flags give the same instructions.
#[test]
fn the_registers_decide_what_a_record_is_and_flag_disagreements_are_counted() {
    let consistent = vec![
        alu(0x1000),
        call(0x1004),
        alu(0x2000),
        ret(0x2004),
        alu(0x1009),
        cond(0x100d, false),
        alu(0x100f),
        alu(0x1013),
    ];
    let mut pin = consistent.clone();
    for i in [1, 3] {
        pin[i].is_branch = 0; // Pin: a call, a return are not INS_IsBranch
    }
    pin[4].is_branch = 1; // flagged, writes no IP
    pin[6].branch_taken = 1; // taken, writes no IP
    pin[7].is_branch = 1;
    pin[7].branch_taken = 1;
    let want = all(&mut source(&consistent));
    let mut s = source(&pin);
    assert_eq!(all(&mut s), want);
    let st = s.stats();
    assert_eq!(
        (
            st.unflagged_branches,
            st.flagged_non_branches,
            st.taken_non_branches
        ),
        (2, 2, 2)
    );
    assert_eq!(
        (st.kinds.direct_call, st.kinds.ret, st.kinds.conditional),
        (1, 1, 1)
    );
    let mut c = source(&consistent);
    all(&mut c);
    let c = c.stats();
    assert_eq!(
        (
            c.unflagged_branches,
            c.flagged_non_branches,
            c.taken_non_branches
        ),
        (0, 0, 0)
    );
    assert_eq!(want[1].branch, Some(BranchKind::DirectCall));
    assert!(want[1].taken && want[3].taken && !want[5].taken);
    assert!(want[4].branch.is_none() && want[7].branch.is_none());
}

use super::xzindex::xz_blocks;

/// A corrupt xz block decodes to garbage before its check fails at the
/// block's end, so a run that stops inside it read records nothing had
/// verified: `verify` decodes on to the block's end and fails there. On the
/// intact file it passes, and a check too far on (past the limit) is
/// counted, exactly when the block ends are known, as a lower bound when
/// they are not (a single block: the end of the file).
#[test]
fn verify_reaches_the_check_of_the_block_the_last_record_came_from() {
    let plain = bytes(&program(40_000)); // 2.56 MB, blocks of 512 KiB: 5
    let good = xz_blocks(&plain, Some(512 << 10));
    let path = temp_path("verify.champsimtrace.xz");
    std::fs::write(&path, &good).unwrap();
    let mut s = TraceSource::open(&path, 0).unwrap();
    for _ in 0..100 {
        s.next_instr().unwrap().unwrap();
    }
    s.verify().unwrap();
    assert_eq!(s.stats().unverified_bytes, 0);
    // the source has ended
    assert_eq!(s.next_instr().unwrap(), None);
    // the check of block 0 (512 KiB) lies 512 KiB + 1 - 101 records on
    let mut s = TraceSource::open(&path, 0).unwrap();
    for _ in 0..100 {
        s.next_instr().unwrap().unwrap();
    }
    s.verify_within(4096).unwrap();
    // the bytes decoded without reaching it, as when the ends are unknown
    assert_eq!(s.stats().unverified_bytes, 4096);

    // corrupt a byte in the middle of the compressed file: find the first
    // record a full read fails at, then stop a run just before it
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x55;
    std::fs::write(&path, &bad).unwrap();
    let mut s = TraceSource::open(&path, 0).unwrap();
    let (read, e) = until_error(&mut s);
    assert!(
        e.to_string().contains("corrupt or truncated xz stream"),
        "{e}"
    );
    let mut s = TraceSource::open(&path, 0).unwrap();
    for _ in 0..read.len() - 1 {
        s.next_instr().unwrap().unwrap();
    }
    let e = s.verify().unwrap_err();
    assert!(
        e.to_string().contains("corrupt or truncated xz stream"),
        "{e}"
    );
    // the run stopped inside a block whose records already differ from
    // the intact file's: the garbage a check exists to catch
    let first_bad = read
        .iter()
        .zip(all(&mut source(&program(40_000))))
        .position(|(a, b)| *a != b);
    let block_of = |i: usize| (64 * i) / (512 << 10);
    if let Some(i) = first_bad {
        assert_eq!(
            block_of(i),
            block_of(read.len() - 1),
            "garbage in an earlier block"
        );
    }

    // one block: the check is at the end of the file; within the limit it is
    // reached, beyond it the bytes decoded are the bound
    std::fs::write(&path, xz_blocks(&plain, None)).unwrap();
    let mut s = TraceSource::open(&path, 0).unwrap();
    s.next_instr().unwrap().unwrap();
    s.verify().unwrap();
    assert_eq!(s.stats().unverified_bytes, 0);
    let mut s = TraceSource::open(&path, 0).unwrap();
    s.next_instr().unwrap().unwrap();
    s.verify_within(64 << 10).unwrap();
    assert_eq!(s.stats().unverified_bytes, 64 << 10);
    std::fs::remove_file(&path).unwrap();
    // raw records have no check
    let path = temp_path("verify.champsimtrace");
    std::fs::write(&path, &plain).unwrap();
    let mut s = TraceSource::open(&path, 0).unwrap();
    s.next_instr().unwrap().unwrap();
    s.verify_within(0).unwrap();
    assert_eq!(s.stats().unverified_bytes, 0);
    std::fs::remove_file(&path).unwrap();
}

/// Three inputs the verify at a run's end must not turn into errors: an xz
/// trace read from a pipe (which cannot seek to its index: verified to the
/// end of the file instead), and an intact file that ends inside a record
/// the run never reads (a short record is the end of a whole-trace read,
/// not of a verify), in xz and gzip.
#[test]
fn verify_reads_pipes_and_files_that_end_inside_a_record() {
    let mut plain = bytes(&program(20_000));
    #[cfg(unix)]
    {
        let path = temp_path("pipe.champsimtrace.xz");
        std::fs::write(&path, xz_blocks(&plain, Some(256 << 10))).unwrap();
        let mut child = std::process::Command::new("cat")
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::os::fd::AsRawFd;
        let fd = child.stdout.as_ref().unwrap().as_raw_fd();
        let mut s = TraceSource::open(format!("/proc/self/fd/{fd}"), 0).unwrap();
        for _ in 0..100 {
            s.next_instr().unwrap().unwrap();
        }
        s.verify().unwrap();
        assert_eq!(s.stats().unverified_bytes, 0);
        drop(s);
        child.wait().unwrap();
        std::fs::remove_file(&path).unwrap();
    }
    plain.extend([7u8; 10]); // a record cut after 10 bytes
    for (name, data) in [
        ("short.champsimtrace.xz", xz_blocks(&plain, None)),
        ("short.champsimtrace.gz", gz(&plain)),
    ] {
        let path = temp_path(name);
        std::fs::write(&path, data).unwrap();
        let mut s = TraceSource::open(&path, 0).unwrap();
        for _ in 0..100 {
            s.next_instr().unwrap().unwrap();
        }
        s.verify().unwrap();
        assert_eq!(s.stats().unverified_bytes, 0, "{name}");
        // read whole, the same file still ends in a short record
        let mut s = TraceSource::open(&path, 0).unwrap();
        let (_, e) = until_error(&mut s);
        assert!(e.to_string().contains("short record"), "{name}: {e}");
        std::fs::remove_file(&path).unwrap();
    }
}
