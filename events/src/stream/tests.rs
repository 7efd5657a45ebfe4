//! Round trips, truncations and corruptions of both stream formats.

use std::io::{BufReader, Cursor, Read};

use super::*;
use crate::{FetchStall, HeadCause, Squash, Variant};

/// A small xorshift generator: the tests print their seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}

fn odd_params() -> Params {
    Params {
        rob_entries: 37,
        fmt_rows: 8,
        local_bits: 5,
        global_bits: 9,
        variant: Variant::Sfmt,
        fetch_width: 3,
        dispatch_width: 2,
        retire_width: 7,
    }
}

/// Bundles covering every enum value, every squash kind, the u8 extremes of every
/// count and mask, both booleans, plus pseudo-random ones.
fn sample_bundles(seed: u64) -> Vec<CycleEvents> {
    let mut v = Vec::new();
    let squashes = [
        Squash::None,
        Squash::Mispredict(0),
        Squash::Mispredict(17),
        Squash::Mispredict(u16::MAX),
        Squash::Flush(0),
        Squash::Flush(3),
        Squash::Flush(u16::MAX),
    ];
    v.push(CycleEvents::default());
    for fs in FetchStall::ALL {
        for head in HeadCause::ALL {
            for (i, &squash) in squashes.iter().enumerate() {
                let x = [0u8, 1, 127, 128, 254, 255][(i + head.bits() as usize) % 6];
                v.push(CycleEvents {
                    count_enable: i % 2 == 0,
                    fetch_stall: fs,
                    fetched_branches: x,
                    fe_redirect: i % 3 == 0,
                    fe_squash: x.wrapping_add(1),
                    dispatched: x.wrapping_mul(3),
                    dispatched_branches: !x,
                    dispatched_imiss: x ^ 0x55,
                    squash,
                    retired: x.rotate_left(3),
                    head,
                    backend_full: i % 5 == 1,
                });
            }
        }
    }
    for x in [0u8, 255] {
        v.push(CycleEvents {
            count_enable: x == 0,
            fetch_stall: FetchStall::Itlb,
            fetched_branches: x,
            fe_redirect: x != 0,
            fe_squash: x,
            dispatched: x,
            dispatched_branches: x,
            dispatched_imiss: x,
            squash: Squash::Flush(u16::from(x) * 257),
            retired: x,
            head: HeadCause::Other,
            backend_full: x != 0,
        });
    }
    let mut rng = Rng(seed | 1);
    for _ in 0..500 {
        let r = rng.next();
        v.push(CycleEvents {
            count_enable: r & 1 != 0,
            fetch_stall: FetchStall::ALL[(r >> 1) as usize % 4],
            fetched_branches: rng.byte(),
            fe_redirect: r & 8 != 0,
            fe_squash: rng.byte(),
            dispatched: rng.byte(),
            dispatched_branches: rng.byte(),
            dispatched_imiss: rng.byte(),
            squash: match (r >> 4) % 3 {
                0 => Squash::None,
                1 => Squash::Mispredict((r >> 16) as u16),
                _ => Squash::Flush((r >> 32) as u16),
            },
            retired: rng.byte(),
            head: HeadCause::ALL[(r >> 8) as usize % 6],
            backend_full: r & (1 << 40) != 0,
        });
    }
    v
}

fn to_bin(params: &Params, evs: &[CycleEvents]) -> Vec<u8> {
    write_all(Vec::new(), Format::Bin, params, evs).unwrap()
}

fn to_jsonl(params: &Params, evs: &[CycleEvents]) -> Vec<u8> {
    write_all(Vec::new(), Format::Jsonl, params, evs).unwrap()
}

fn read_bin_all(bytes: &[u8]) -> Result<(Params, Vec<CycleEvents>), StreamError> {
    let r = BinReader::new(bytes)?;
    let p = *r.params();
    Ok((p, r.collect::<Result<Vec<_>, _>>()?))
}

/// Every record `r` has left, read by `read_batch` calls of room for `batch`
/// bundles until it returns 0.
fn read_in_batches<R: Read>(r: &mut BinReader<R>, batch: usize) -> Vec<CycleEvents> {
    let mut out = vec![CycleEvents::default(); batch];
    let mut got = Vec::new();
    loop {
        let n = r.read_batch(&mut out).unwrap();
        if n == 0 {
            return got;
        }
        got.extend_from_slice(&out[..n]);
    }
}

fn read_jsonl_all(bytes: &[u8]) -> Result<(Params, Vec<CycleEvents>), StreamError> {
    let r = JsonlReader::new(bytes)?;
    let p = *r.params();
    Ok((p, r.collect::<Result<Vec<_>, _>>()?))
}

/// A reader that hands out at most `step` bytes per call, cycling 1..=step.
struct Dribble<'a> {
    data: &'a [u8],
    step: usize,
    k: usize,
}
impl Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.k = self.k % self.step + 1;
        let n = self.k.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn jsonl_round_trip_is_identical() {
    let seed = 0x5eed_0001;
    println!("seed {seed:#x}");
    let evs = sample_bundles(seed);
    for p in [Params::default(), odd_params()] {
        let bytes = to_jsonl(&p, &evs);
        let (p2, evs2) = read_jsonl_all(&bytes).unwrap();
        assert_eq!(p2, p);
        assert_eq!(evs2, evs);
    }
}

#[test]
fn jsonl_reads_full_serde_form_and_writes_compact_lines() {
    let seed = 0x5eed_0002;
    println!("seed {seed:#x}");
    let evs = sample_bundles(seed);
    let mut text = format!(
        "{{\"format\":\"cpistack-events\",\"version\":2,\"params\":{}}}\n",
        serde_json::to_string(&odd_params()).unwrap()
    );
    for ev in &evs {
        text.push_str(&serde_json::to_string(ev).unwrap());
        text.push('\n');
    }
    let (p, evs2) = read_jsonl_all(text.as_bytes()).unwrap();
    assert_eq!(p, odd_params());
    assert_eq!(evs2, evs);

    let out = String::from_utf8(to_jsonl(
        &Params::default(),
        &[
            CycleEvents::default(),
            CycleEvents {
                dispatched: 2,
                dispatched_branches: 1,
                squash: Squash::Mispredict(17),
                ..CycleEvents::default()
            },
            CycleEvents {
                count_enable: false,
                squash: Squash::Flush(3),
                head: HeadCause::L2d,
                ..CycleEvents::default()
            },
            CycleEvents {
                head: HeadCause::L1d,
                backend_full: true,
                ..CycleEvents::default()
            },
        ],
    ))
    .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "{\"format\":\"cpistack-events\",\"version\":2,\"params\":{\"rob_entries\":128,\
         \"fmt_rows\":64,\"local_bits\":16,\"global_bits\":48,\"variant\":\"fmt\",\
         \"fetch_width\":8,\"dispatch_width\":4,\"retire_width\":4}}"
    );
    assert_eq!(lines[1], "{}");
    assert_eq!(
        lines[2],
        "{\"dispatched\":2,\"dispatched_branches\":1,\"squash\":{\"mispredict\":17}}"
    );
    assert_eq!(
        lines[3],
        "{\"count_enable\":false,\"squash\":{\"flush\":3},\"head\":\"l2d\"}"
    );
    assert_eq!(lines[4], "{\"head\":\"l1d\",\"backend_full\":true}");
}

/// A version-1 stream (before `backend_full`) reads as it did, with
/// `backend_full` false, in both formats; one that uses the field is refused,
/// naming the line or byte and the field.
#[test]
fn version_1_streams_read_as_before_and_may_not_use_backend_full() {
    let seed = 0x5eed_0011;
    println!("seed {seed:#x}");
    let evs: Vec<CycleEvents> = sample_bundles(seed)
        .into_iter()
        .map(|ev| CycleEvents {
            backend_full: false,
            ..ev
        })
        .collect();
    // JSONL: the same lines under a version-1 header
    let v2 = String::from_utf8(to_jsonl(&odd_params(), &evs)).unwrap();
    let v1 = v2.replacen("\"version\":2", "\"version\":1", 1);
    assert_ne!(v1, v2);
    let mut r = JsonlReader::new(v1.as_bytes()).unwrap();
    assert_eq!(r.version(), 1);
    let got: Vec<_> = r.by_ref().map(Result::unwrap).collect();
    assert_eq!(got, evs);
    let bad = format!("{}{{}}\n{{\"backend_full\":false}}\n", HDR);
    match read_jsonl_all(bad.as_bytes()).unwrap_err() {
        StreamError::BadField {
            line: 3,
            field,
            msg,
        } => {
            assert_eq!(field, "backend_full");
            assert!(
                msg.contains("version 2") && msg.contains("version 1"),
                "{msg}"
            );
        }
        e => panic!("{e}"),
    }
    // binary: the same records under a version-1 header
    let mut b = to_bin(&odd_params(), &evs);
    set_u16(&mut b, 8, 1);
    let r = BinReader::new(&b[..]).unwrap();
    assert_eq!(r.version(), 1);
    assert_eq!(read_bin_all(&b).unwrap().1, evs);
    assert_eq!(decode_bin(&b).unwrap().1, evs);
    let rec = 7;
    b[HEADER_LEN + rec * RECORD_SIZE + 6] |= 4;
    let (_, len, version) = parse_header_version(&b).unwrap();
    assert_eq!((len, version), (HEADER_LEN, 1));
    let mut out = vec![CycleEvents::default(); evs.len()];
    let recs = &b[HEADER_LEN..];
    // the same records as version 2 are fine; as version 1, record 7 is not;
    // versions the format does not have are refused
    assert_eq!(decode_records_of(2, recs, 0, &mut out).unwrap(), evs.len());
    for v in [0u16, 3, 99] {
        assert!(matches!(
            decode_records_of(v, recs, 48, &mut out),
            Err(StreamError::UnsupportedVersion { found, supported: 2, .. }) if found == v as u64
        ));
    }
    assert!(out[rec].backend_full);
    for e in [
        read_bin_all(&b).unwrap_err(),
        decode_bin(&b).unwrap_err(),
        decode_records_of(1, recs, HEADER_LEN as u64, &mut out).unwrap_err(),
    ] {
        match e {
            StreamError::OutOfRange {
                at: Location::Offset(o),
                field: "flags",
                legal,
                ..
            } => {
                assert_eq!(o as usize, HEADER_LEN + rec * RECORD_SIZE + 6);
                assert!(legal.contains("version 1"), "{legal}");
            }
            e => panic!("{e}"),
        }
    }
}

/// A reader reports the version its stream's header gives: 2 for what this
/// code writes, 1 for a version-1 header (the binary reader too).
#[test]
fn readers_report_the_version_of_their_header() {
    let evs = sample_bundles(0x5eed_0012);
    let v2 = to_jsonl(&odd_params(), &evs);
    assert_eq!(JsonlReader::new(&v2[..]).unwrap().version(), 2);
    let v1 = String::from_utf8(v2)
        .unwrap()
        .replacen("\"version\":2", "\"version\":1", 1);
    assert_eq!(JsonlReader::new(v1.as_bytes()).unwrap().version(), 1);
}

#[test]
fn jsonl_comments_blank_lines_crlf_and_missing_final_newline() {
    let text = "# made by hand\n\n  \t\n{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"fmt_rows\":4}}\r\n\
                # idle\r\n   # indented comment\n{}\n\n{\"retired\":2,\"head\":\"none\"}";
    let (p, evs) = read_jsonl_all(text.as_bytes()).unwrap();
    assert_eq!(p.fmt_rows, 4);
    assert_eq!(p.rob_entries, 128, "absent params take their defaults");
    assert_eq!(
        evs,
        vec![
            CycleEvents::default(),
            CycleEvents {
                retired: 2,
                ..CycleEvents::default()
            }
        ]
    );
}

#[test]
fn jsonl_comment_writer() {
    let mut w = JsonlWriter::new(Vec::new(), &Params::default()).unwrap();
    w.comment("seed 7\ncycles 2").unwrap();
    w.write(&CycleEvents::default()).unwrap();
    let bytes = w.finish().unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains("\n# seed 7\n# cycles 2\n{}\n"), "{text}");
    assert_eq!(
        read_jsonl_all(&bytes).unwrap().1,
        vec![CycleEvents::default()]
    );
}

const HDR: &str = "{\"format\":\"cpistack-events\",\"version\":1,\"params\":{}}\n";

/// Read a JSONL text made of the default header and `body`; return the error.
fn jsonl_err(body: &str) -> StreamError {
    let text = format!("{HDR}{body}");
    let mut items: Vec<_> = JsonlReader::new(text.as_bytes()).unwrap().collect();
    let last = items.pop().expect("at least the error");
    assert!(items.iter().all(|x| x.is_ok()), "only the last item fails");
    let e = last.expect_err(body);
    println!("{e}");
    e
}

#[test]
fn jsonl_bad_line_names_the_line() {
    // serde's own position (always its "line 1") becomes a column of the file's line
    match jsonl_err("{}\n# c\n{\"dispatched\":1,\n{}\n") {
        StreamError::BadJson { line, msg } => {
            assert_eq!(line, 4);
            assert!(msg.ends_with(" at column 16"), "{msg}");
            assert!(!msg.contains("line"), "{msg}");
        }
        e => panic!("{e}"),
    }
    match jsonl_err("[1,2]\n") {
        StreamError::BadJson { line, msg } => {
            assert_eq!(line, 2);
            assert!(msg.contains("an array"), "{msg}");
        }
        e => panic!("{e}"),
    }
    // a repeated key is named as such, whatever its second value
    for body in [
        "{\"retired\":1,\"retired\":2}",
        "{\"retired\":1,\"retired\":\"x\"}",
    ] {
        match jsonl_err(&format!("{body}\n")) {
            StreamError::BadField { line, field, msg } => {
                assert_eq!((line, field.as_str()), (2, "retired"));
                assert!(msg.contains("duplicate key"), "{msg}");
            }
            e => panic!("{e}"),
        }
    }
    let text = [HDR.as_bytes(), b"{}\n{\"head\":\"l1d\xff\"}\n"].concat();
    match JsonlReader::new(&text[..])
        .unwrap()
        .find_map(|x| x.err())
        .unwrap()
    {
        StreamError::BadJson { line, msg } => {
            assert_eq!(line, 3);
            assert!(msg.contains("UTF-8"), "{msg}");
        }
        e => panic!("{e}"),
    }
}

#[test]
fn jsonl_unknown_field_is_named() {
    match jsonl_err("{}\n{\"dispatched\":1,\"dispached_branches\":1}\n") {
        StreamError::UnknownField { line, field } => {
            assert_eq!((line, field.as_str()), (3, "dispached_branches"))
        }
        e => panic!("{e}"),
    }
}

#[test]
fn jsonl_out_of_range_values_name_the_field() {
    for (body, want) in [
        ("{\"dispatched\":300}", "dispatched"),
        ("{\"retired\":-1}", "retired"),
        ("{\"fe_squash\":1.5}", "fe_squash"),
        ("{\"fetch_stall\":\"l3i\"}", "fetch_stall"),
        ("{\"fetch_stall\":7}", "fetch_stall"),
        ("{\"head\":\"l3d\"}", "head"),
        ("{\"squash\":{\"mispredict\":70000}}", "squash"),
        ("{\"squash\":{\"retry\":1}}", "squash"),
        ("{\"squash\":\"flush\"}", "squash"),
        ("{\"count_enable\":1}", "count_enable"),
    ] {
        match jsonl_err(&format!("{body}\n")) {
            StreamError::BadField { line, field, msg } => {
                assert_eq!((line, field.as_str()), (2, want), "{body}: {msg}")
            }
            e => panic!("{body}: {e}"),
        }
    }
    // a number that is not a field's type is quoted as written, however large
    for (body, found) in [
        ("{\"dispatched\":300}", "300"),
        (
            "{\"dispatched\":18446744073709551616}",
            "18446744073709551616",
        ),
        ("{\"dispatched\":1e400}", "1e400"),
        ("{\"dispatched\":-0}", "-0"),
    ] {
        assert_eq!(
            jsonl_err(&format!("{body}\n")).to_string(),
            format!("line 2: field `dispatched`: expected an integer 0..=255, found `{found}`")
        );
    }
    // a squash's ROB id in the same wording, with its own range
    for (body, found) in [
        ("{\"squash\":{\"mispredict\":65536}}", "65536"),
        ("{\"squash\":{\"flush\":-1}}", "-1"),
        ("{\"squash\":{\"flush\":1.5}}", "1.5"),
        ("{\"squash\":{\"flush\":\"3\"}}", "\"3\""),
        ("{\"squash\":{\"flush\":true}}", "true"),
    ] {
        assert_eq!(
            jsonl_err(&format!("{body}\n")).to_string(),
            format!("line 2: field `squash`: expected an integer 0..=65535, found `{found}`"),
            "{body}"
        );
    }
}

/// A bundle line with a legal `head` and a bad field after it names the bad
/// field, and an unknown `head` name is refused as one (not as a number out
/// of range).
#[test]
fn jsonl_a_legal_head_is_not_blamed_for_a_later_field() {
    assert_eq!(
        jsonl_err("{\"head\":\"l2d\",\"retired\":300}\n").to_string(),
        "line 2: field `retired`: expected an integer 0..=255, found `300`"
    );
    match jsonl_err("{\"head\":\"l3d\"}\n") {
        StreamError::BadField {
            line: 2,
            field,
            msg,
        } => {
            assert_eq!(field, "head");
            assert!(
                msg.starts_with("unknown variant `l3d`, expected one of"),
                "{msg}"
            );
        }
        e => panic!("{e}"),
    }
}

/// A bundle line that starts as an object but is not valid JSON is described
/// as serde finds it: a key with a lone leading surrogate escape, which a
/// string cannot hold (serde wants the trailing one at column 9, where the
/// key ends), is not "an object where an object was expected" (a value only
/// skimmed over, not read as a string, would pass the escape).
#[test]
fn jsonl_a_malformed_bundle_object_is_described_as_serde_finds_it() {
    match jsonl_err("{\"\\ud800\":1}\n") {
        StreamError::BadJson { line: 2, msg } => {
            assert_eq!(msg, "unexpected end of hex escape at column 9")
        }
        e => panic!("{e}"),
    }
}

#[test]
fn jsonl_names_are_strings_only() {
    // serde's derive also reads a field-less variant from `{"l1i": null}`; a
    // stream has one spelling of each value
    for (body, field) in [
        ("{\"fetch_stall\":{\"l1i\":null}}", "fetch_stall"),
        ("{\"head\":{\"none\":null}}", "head"),
        ("{\"squash\":{\"none\":null}}", "squash"),
    ] {
        match jsonl_err(&format!("{body}\n")) {
            StreamError::BadField {
                line,
                field: f,
                msg,
            } => {
                assert_eq!((line, f.as_str()), (2, field), "{msg}");
                assert!(!msg.contains("line"), "{msg}");
            }
            e => panic!("{body}: {e}"),
        }
    }
    let hdr = HDR.replace("{}", "{\"variant\":{\"sfmt\":null}}");
    assert_ne!(hdr, HDR);
    match JsonlReader::new(hdr.as_bytes()).map(drop).unwrap_err() {
        StreamError::BadField { line, field, msg } => {
            assert_eq!((line, field.as_str()), (1, "params.variant"));
            assert!(msg.contains("expected a string"), "{msg}");
        }
        e => panic!("{e}"),
    }
    // an unknown name is quoted escaped: no control character reaches a terminal
    let e = jsonl_err("{\"fetch_stall\":\"l1i\\u0000\"}\n").to_string();
    assert!(e.contains("`l1i\\0`") && !e.contains('\0'), "{e}");
    for body in [
        "{\"x\\u001b[31m\":1}",
        "{\"squash\":\"\\u001b\"}",
        "{\"squash\":{\"fl\\u001b\":1}}",
    ] {
        let e = jsonl_err(&format!("{body}\n")).to_string();
        assert!(e.contains("\\u{1b}") && !e.contains('\u{1b}'), "{e}");
    }
    // a value of the wrong type in an integer field: one wording, the value quoted
    assert_eq!(
        jsonl_err("{\"dispatched\":\"3\"}\n").to_string(),
        "line 2: field `dispatched`: expected an integer 0..=255, found `\"3\"`"
    );
}

#[test]
fn jsonl_header_errors() {
    let cases: &[(&str, &str)] = &[
        ("", "no header line"),
        ("# only a comment\n\n", "no header line"),
        ("{}\n", "no `format` field"),
        ("{\"dispatched\":1}\n", "no `format` field"),
        (
            "{\"format\":\"other\",\"version\":1,\"params\":{}}\n",
            "`format` is \"other\"",
        ),
        (
            "{\"format\":\"cpistack-events\",\"params\":{}}\n",
            "no `version`",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":\"1\",\"params\":{}}\n",
            "`version` is \"1\"",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":1}\n",
            "no `params`",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":1,\"params\":3}\n",
            "`params` is a number",
        ),
        ("not json\n", "bad header"),
        // a number is quoted as written, however large
        (
            "{\"format\":\"cpistack-events\",\"version\":18446744073709551616,\"params\":{}}\n",
            "`version` is 18446744073709551616, expected an integer 1..=2",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":1,\"params\":{},\"version\":1}\n",
            "duplicate key `version`",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"fmt_rows\":4,\"fmt_rows\":8}}\n",
            "duplicate key `params.fmt_rows`",
        ),
        ("[1]\n", "expected an object"),
        // a long value is cut, not repeated whole
        (
            "{\"format\":[[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],2]],\"version\":1,\"params\":{}}\n",
            "`format` is [[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1..., expected",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":\"0123456789012345678901234567890123456789\",\"params\":{}}\n",
            "`version` is \"012345678901234567890123456789012345678..., expected",
        ),
    ];
    for (text, want) in cases {
        let e = JsonlReader::new(text.as_bytes()).err().expect(text);
        let s = e.to_string();
        assert!(matches!(e, StreamError::BadHeader { .. }), "{text}: {s}");
        assert!(s.contains(want), "{text}: {s}");
    }
    // before the header, a line that is not UTF-8 (a cut byte-order mark, a comment)
    for text in [&b"\xef\xbb"[..], b"# \xff\n{}\n"] {
        match JsonlReader::new(text) {
            Err(StreamError::BadHeader { line: 1, msg }) => assert!(msg.contains("not UTF-8")),
            r => panic!("{:?}", r.map(drop)),
        }
    }
    // a number out of f64's range names its field
    let text =
        "{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"rob_entries\":1e400}}\n";
    assert_eq!(
        JsonlReader::new(text.as_bytes())
            .map(drop)
            .unwrap_err()
            .to_string(),
        "line 1: field `params.rob_entries`: expected an integer 2..=4096, found `1e400`"
    );
    // a value that is no `u32` is answered with the parameter's legal range
    for (field, value, legal) in [
        (
            "rob_entries",
            "-5",
            "expected an integer 2..=4096, found `-5`",
        ),
        (
            "fmt_rows",
            "\"8\"",
            "expected a power of two in 2..=256, found `\"8\"`",
        ),
        (
            "local_bits",
            "2.5",
            "expected an integer 1..=32, found `2.5`",
        ),
    ] {
        let text = format!(
            "{{\"format\":\"cpistack-events\",\"version\":1,\"params\":{{\"{field}\":{value}}}}}\n"
        );
        let e = JsonlReader::new(text.as_bytes()).map(drop).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("line 1: field `params.{field}`: {legal}")
        );
    }
    assert_eq!(Params::legal("retire_width"), Some("1..=8"));
    assert_eq!(Params::legal("variant"), None);
    // comments are text too
    let text = [HDR.as_bytes(), b"# \xff\xfe\n{}\n"].concat();
    match JsonlReader::new(&text[..]).unwrap().find_map(|x| x.err()) {
        Some(StreamError::BadJson { line: 2, msg }) => assert!(msg.contains("not UTF-8")),
        e => panic!("{e:?}"),
    }
    let e =
        JsonlReader::new(&b"\n{\"format\":\"cpistack-events\",\"version\":3,\"params\":{}}\n"[..])
            .err()
            .unwrap();
    assert!(
        matches!(
            e,
            StreamError::UnsupportedVersion {
                at: Location::Line(2),
                format: Format::Jsonl,
                found: 3,
                supported: 2
            }
        ),
        "{e}"
    );
    let e = JsonlReader::new(
        &b"{\"format\":\"cpistack-events\",\"version\":1,\"params\":{},\"seed\":3}\n"[..],
    )
    .err()
    .unwrap();
    assert!(
        matches!(e, StreamError::UnknownField { line: 1, ref field } if field == "seed"),
        "{e}"
    );
    let e = JsonlReader::new(
        &b"{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"rows\":4}}\n"[..],
    )
    .err()
    .unwrap();
    assert!(
        matches!(e, StreamError::UnknownField { line: 1, ref field } if field == "params.rows"),
        "{e}"
    );
    let e = JsonlReader::new(
        &b"{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"variant\":\"smt\"}}\n"[..],
    )
    .err()
    .unwrap();
    assert!(
        matches!(e, StreamError::BadField { line: 1, ref field, .. } if field == "params.variant"),
        "{e}"
    );
    let e = JsonlReader::new(
        &b"# c\n{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"fmt_rows\":48}}\n"[..],
    )
    .err()
    .unwrap();
    match e {
        StreamError::HeaderParams { at, source } => {
            assert_eq!(at, Location::Line(2));
            assert_eq!(source.name, "fmt_rows");
        }
        e => panic!("{e}"),
    }
}

#[test]
fn jsonl_too_long_line() {
    let long = format!("{{\"dispatched\":1{}}}\n", " ".repeat(MAX_LINE));
    match jsonl_err(&long) {
        StreamError::LineTooLong { line: 2, max } => assert_eq!(max, MAX_LINE),
        e => panic!("{e}"),
    }
}

/// The limit holds for a first line after a byte-order mark too: its
/// `MAX_LINE` bytes are allowed, one more is `LineTooLong` of line 1 (not a
/// silent cut that would shift every later line number).
#[test]
fn jsonl_line_limit_after_a_byte_order_mark() {
    let header = |pad: usize| {
        let h = format!(
            "{{\"format\":\"cpistack-events\",\"version\":1,\"params\":{{}}{}}}",
            " ".repeat(pad)
        );
        let pad = pad + MAX_LINE - h.len();
        format!(
            "\u{feff}{{\"format\":\"cpistack-events\",\"version\":1,\"params\":{{}}{}}}\r\n{{\"retired\":300}}\n",
            " ".repeat(pad)
        )
    };
    // exactly MAX_LINE bytes of text: read, and the bad field is on line 2
    let text = header(0);
    let e = JsonlReader::new(text.as_bytes())
        .unwrap()
        .find_map(Result::err)
        .expect("an error on line 2");
    assert!(matches!(e, StreamError::BadField { line: 2, .. }), "{e}");
    // one byte more: too long, line 1
    let text = text.replacen("{}", "{} ", 1);
    match JsonlReader::new(text.as_bytes()).err().expect("refused") {
        StreamError::LineTooLong { line: 1, max } => assert_eq!(max, MAX_LINE),
        e => panic!("{e}"),
    }
}

/// Memory is one line: a line longer than `MAX_LINE` is refused after the
/// reader has taken at most `MAX_LINE` bytes and a line end (`\r\n`) of it from
/// its source, not after reading on to a newline that may never come.
#[test]
fn jsonl_a_too_long_line_is_refused_after_reading_only_the_limit() {
    let body = vec![b' '; 4 * MAX_LINE];
    let text = [HDR.as_bytes(), b"{\"dispatched\":1", &body, b"}\n"].concat();
    let mut rest = &text[..];
    let mut r = JsonlReader::new(&mut rest).unwrap();
    match r.next() {
        Some(Err(StreamError::LineTooLong { line: 2, max })) => assert_eq!(max, MAX_LINE),
        other => panic!("{other:?}"),
    }
    drop(r);
    assert_eq!(text.len() - rest.len(), HDR.len() + MAX_LINE + 2);
}

#[test]
fn jsonl_truncated_at_every_byte_is_an_error_or_a_prefix() {
    let seed = 0x5eed_0003;
    println!("seed {seed:#x}");
    let evs: Vec<_> = sample_bundles(seed).into_iter().take(40).collect();
    let bytes = to_jsonl(&odd_params(), &evs);
    for cut in 0..=bytes.len() {
        let part = &bytes[..cut];
        match read_jsonl_all(part) {
            Ok((p, got)) => {
                assert_eq!(p, odd_params());
                assert_eq!(got[..], evs[..got.len()], "cut {cut}");
                // Only a cut after a line's closing brace reads cleanly.
                let complete = part.iter().filter(|&&b| b == b'\n').count()
                    + usize::from(part.last() == Some(&b'}'));
                assert_eq!(got.len() + 1, complete, "cut {cut}");
            }
            Err(e) => assert!(
                matches!(
                    e,
                    StreamError::BadJson { .. } | StreamError::BadHeader { .. }
                ),
                "cut {cut}: {e}"
            ),
        }
    }
}

#[test]
fn bin_round_trip_is_identical() {
    let seed = 0x5eed_0004;
    println!("seed {seed:#x}");
    let evs = sample_bundles(seed);
    for p in [Params::default(), odd_params()] {
        let bytes = to_bin(&p, &evs);
        assert_eq!(bytes.len(), HEADER_LEN + evs.len() * RECORD_SIZE);
        assert_eq!(read_bin_all(&bytes).unwrap(), (p, evs.clone()));
        assert_eq!(decode_bin(&bytes).unwrap(), (p, evs.clone()));
        // Odd batch sizes and a reader that hands out a few bytes at a time.
        for (batch, step) in [(1, 1), (7, 5), (1000, 13), (5000, 100_000)] {
            let mut r = BinReader::new(Dribble {
                data: &bytes,
                step,
                k: 0,
            })
            .unwrap();
            assert_eq!(*r.params(), p);
            let got = read_in_batches(&mut r, batch);
            assert_eq!(got, evs, "batch {batch} step {step}");
            assert_eq!(
                r.read_batch(&mut vec![CycleEvents::default(); batch])
                    .unwrap(),
                0
            );
        }
    }
    // A long stream crosses many buffer refills.
    let long: Vec<_> = evs.iter().cycle().take(50_000).copied().collect();
    assert_eq!(read_bin_all(&to_bin(&odd_params(), &long)).unwrap().1, long);
}

/// The bundle of docs/event-stream.md's binary example (with `odd_params`):
/// every field set, the counts out of width on purpose.
fn documented_bundle() -> CycleEvents {
    CycleEvents {
        count_enable: true,
        fetch_stall: FetchStall::L2i,
        fetched_branches: 1,
        fe_redirect: true,
        fe_squash: 2,
        dispatched: 3,
        dispatched_branches: 4,
        dispatched_imiss: 5,
        squash: Squash::Flush(0x1234),
        retired: 6,
        head: HeadCause::Longlat,
        backend_full: true,
    }
}

#[test]
fn bin_header_layout_is_as_documented() {
    let bytes = to_bin(&odd_params(), &[documented_bundle()]);
    let want_header: [u8; 48] = [
        0x89, b'C', b'P', b'I', b'E', b'V', b'\r', b'\n', // magic
        2, 0, 48, 0, 12, 0, 0, 0, // version, header length, record size, reserved
        37, 0, 0, 0, 8, 0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0, // rob, rows, local, global
        1, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, // variant sfmt, widths
    ];
    assert_eq!(bytes[..48], want_header);
    assert_eq!(bytes[48..], [1, 2, 3, 4, 5, 6, 0b111, 2, 4, 2, 0x34, 0x12]);
}

#[test]
fn bin_truncated_at_every_byte_is_an_error_or_a_clean_end() {
    let evs = &sample_bundles(1)[..5];
    let bytes = to_bin(&odd_params(), evs);
    for cut in 0..=bytes.len() {
        let part = &bytes[..cut];
        let streamed = read_bin_all(part);
        let whole = decode_bin(part);
        if cut < HEADER_LEN {
            for r in [streamed, whole] {
                match r {
                    Err(StreamError::TruncatedHeader { got, need: 48 }) => {
                        assert_eq!(got as usize, cut)
                    }
                    r => panic!("cut {cut}: {r:?}"),
                }
            }
            continue;
        }
        let k = (cut - HEADER_LEN) / RECORD_SIZE;
        let rem = (cut - HEADER_LEN) % RECORD_SIZE;
        if rem == 0 {
            assert_eq!(streamed.unwrap().1, evs[..k], "cut {cut}");
            assert_eq!(whole.unwrap().1, evs[..k], "cut {cut}");
        } else {
            // The streaming reader yields the whole records, then the error.
            let items: Vec<_> = BinReader::new(part).unwrap().collect();
            assert_eq!(items.len(), k + 1, "cut {cut}");
            for (i, it) in items[..k].iter().enumerate() {
                assert_eq!(it.as_ref().unwrap(), &evs[i]);
            }
            for r in [items[k].as_ref().map(drop), whole.as_ref().map(drop)] {
                match r {
                    Err(StreamError::TruncatedRecord {
                        offset,
                        index,
                        got,
                        size: 12,
                    }) => {
                        assert_eq!(*offset as usize, HEADER_LEN + k * RECORD_SIZE, "cut {cut}");
                        assert_eq!(*index as usize, k);
                        assert_eq!(*got as usize, rem);
                    }
                    r => panic!("cut {cut}: {r:?}"),
                }
            }
        }
    }
    let e = read_bin_all(&bytes[..HEADER_LEN + 30]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "truncated record at byte offset 72 (record 2): the stream ends after 6 of its 12 bytes"
    );
}

fn set_u16(b: &mut [u8], o: usize, v: u16) {
    b[o..o + 2].copy_from_slice(&v.to_le_bytes());
}

fn set_u32(b: &mut [u8], o: usize, v: u32) {
    b[o..o + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn bin_corrupted_header() {
    let good = to_bin(&Params::default(), &sample_bundles(2)[..3]);
    for i in 0..8 {
        let mut b = good.clone();
        b[i] ^= 0x20;
        let e = read_bin_all(&b).unwrap_err();
        assert!(matches!(e, StreamError::BadMagic { .. }), "byte {i}: {e}");
        assert!(matches!(decode_bin(&b), Err(StreamError::BadMagic { .. })));
    }
    // A JSONL file handed to the binary reader, even a short one.
    let e = read_bin_all(HDR.as_bytes()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("byte offset 0: bad magic [7b, 22,"),
        "{e}"
    );
    assert!(matches!(
        read_bin_all(b"{}"),
        Err(StreamError::BadMagic { .. })
    ));

    let mut b = good.clone();
    set_u16(&mut b, 8, 3);
    let e = read_bin_all(&b).unwrap_err();
    assert!(
        matches!(
            e,
            StreamError::UnsupportedVersion {
                at: Location::Offset(8),
                format: Format::Bin,
                found: 3,
                supported: 2
            }
        ),
        "{e}"
    );
    for (off, v, field) in [
        (10, 47u16, "header_len"),
        (12, 16, "record_size"),
        (14, 1, "reserved"),
    ] {
        let mut b = good.clone();
        set_u16(&mut b, off, v);
        match read_bin_all(&b).unwrap_err() {
            StreamError::OutOfRange {
                at,
                field: f,
                value,
                ..
            } => {
                assert_eq!(
                    (at, f, value),
                    (Location::Offset(off as u64), field, v as u64)
                )
            }
            e => panic!("{e}"),
        }
    }
    let mut b = good.clone();
    set_u32(&mut b, 32, 2);
    match read_bin_all(&b).unwrap_err() {
        StreamError::OutOfRange {
            at, field, value, ..
        } => {
            assert_eq!((at, field, value), (Location::Offset(32), "variant", 2))
        }
        e => panic!("{e}"),
    }
    for (off, v, name) in [
        (16, 1u32, "rob_entries"),
        (20, 48, "fmt_rows"),
        (24, 0, "local_bits"),
        (28, 65, "global_bits"),
        (36, 9, "fetch_width"),
        (40, 0, "dispatch_width"),
        (44, u32::MAX, "retire_width"),
    ] {
        let mut b = good.clone();
        set_u32(&mut b, off, v);
        for e in [read_bin_all(&b).unwrap_err(), decode_bin(&b).unwrap_err()] {
            match e {
                StreamError::HeaderParams { at, source } => {
                    assert_eq!((at, source.name), (Location::Offset(off as u64), name))
                }
                e => panic!("{e}"),
            }
        }
    }
    // A longer header (future extension bytes) is skipped.
    let mut b = good[..HEADER_LEN].to_vec();
    set_u16(&mut b, 10, 52);
    b.extend_from_slice(&[9, 9, 9, 9]);
    b.extend_from_slice(&good[HEADER_LEN..]);
    assert_eq!(read_bin_all(&b).unwrap(), read_bin_all(&good).unwrap());
    assert_eq!(decode_bin(&b).unwrap(), read_bin_all(&good).unwrap());
    assert!(matches!(
        read_bin_all(&b[..50]),
        Err(StreamError::TruncatedHeader { got: 50, need: 52 })
    ));
}

#[test]
fn bin_corrupted_record_names_offset_and_field() {
    let evs = &sample_bundles(3)[..300];
    let good = to_bin(&Params::default(), evs);
    let rec = 200;
    let base = HEADER_LEN + rec * RECORD_SIZE;
    for (pos, val, field) in [
        (6usize, 0x08u8, "flags"),
        (6, 0x80, "flags"),
        (7, 4, "fetch_stall"),
        (7, 7, "fetch_stall"),
        (8, 6, "head"),
        (8, 255, "head"),
        (9, 3, "squash_kind"),
        (9, 255, "squash_kind"),
    ] {
        let mut b = good.clone();
        b[base + pos] = val;
        let items: Vec<_> = BinReader::new(&b[..]).unwrap().collect();
        assert_eq!(items.len(), rec + 1, "{field}");
        assert!(items[..rec]
            .iter()
            .zip(evs)
            .all(|(a, b)| a.as_ref().unwrap() == b));
        for e in [
            items[rec].as_ref().unwrap_err(),
            &decode_bin(&b).unwrap_err(),
        ] {
            match e {
                StreamError::OutOfRange {
                    at,
                    field: f,
                    value,
                    ..
                } => {
                    assert_eq!(*at, Location::Offset((base + pos) as u64));
                    assert_eq!((*f, *value), (field, u64::from(val)));
                }
                e => panic!("{e}"),
            }
        }
    }
    // An id without a squash kind would be lost: rejected.
    let mut b = good.clone();
    b[base + 9] = 0;
    set_u16(&mut b, base + 10, 5);
    match decode_bin(&b).unwrap_err() {
        StreamError::OutOfRange {
            at, field, value, ..
        } => {
            assert_eq!(
                (at, field, value),
                (Location::Offset(base as u64 + 10), "squash_id", 5)
            )
        }
        e => panic!("{e}"),
    }
    let mut b = good.clone();
    b[base + 7] = 7;
    assert_eq!(
        decode_bin(&b).unwrap_err().to_string(),
        format!(
            "byte offset {}: field `fetch_stall` = 7 is out of range (legal: 0..=3 (none, l1i, l2i, itlb))",
            base + 7
        )
    );
    // read_batch returns the good prefix first, then the error, then nothing.
    let mut r = BinReader::new(&b[..]).unwrap();
    let mut out = vec![CycleEvents::default(); 1000];
    assert_eq!(r.read_batch(&mut out).unwrap(), rec);
    assert!(r.read_batch(&mut out).is_err());
    assert_eq!(r.read_batch(&mut out).unwrap(), 0);
    assert!(r.next().is_none());
}

#[test]
fn bin_every_byte_value_in_every_record_position_is_exact_or_rejected() {
    // Whatever a record holds, the reader either rejects it or decodes it to a
    // bundle that encodes back to the same bytes: nothing is silently changed.
    let base = encode_record(&CycleEvents {
        squash: Squash::Mispredict(0x0102),
        head: HeadCause::Dtlb,
        dispatched: 3,
        ..CycleEvents::default()
    });
    let mut accepted = 0;
    for pos in 0..RECORD_SIZE {
        for v in 0..=255u8 {
            let mut r = base;
            r[pos] = v;
            let mut out = [CycleEvents::default()];
            match decode_records(&r, 100, &mut out) {
                Ok(1) => {
                    assert_eq!(encode_record(&out[0]), r, "pos {pos} value {v}");
                    accepted += 1;
                }
                Ok(n) => panic!("decoded {n}"),
                Err(StreamError::OutOfRange {
                    at: Location::Offset(o),
                    ..
                }) => {
                    assert!((100..112).contains(&o))
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    // 8 free bytes x 256 (the id is free with a squash kind), flags 8, fetch_stall 4,
    // squash_kind 2 (0 is rejected while the id is nonzero), head 6.
    assert_eq!(accepted, 8 * 256 + 8 + 4 + 2 + 6);
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("events-stream-{}-{name}", std::process::id()))
}

#[test]
fn open_and_create_pick_the_format() {
    let seed = 0x5eed_0005;
    println!("seed {seed:#x}");
    let evs: Vec<_> = sample_bundles(seed).into_iter().take(100).collect();
    for (name, fmt) in [("a.jsonl", Format::Jsonl), ("a.bin", Format::Bin)] {
        let path = temp(name);
        let mut w = create(&path, fmt, &odd_params()).unwrap();
        for ev in &evs {
            w.write(ev).unwrap();
        }
        w.finish().unwrap();
        let (p, it) = open(&path).unwrap();
        assert_eq!(p, odd_params());
        assert_eq!(it.collect::<Result<Vec<_>, _>>().unwrap(), evs);
        // Content wins over a wrong or missing suffix.
        for other in ["swapped.data", "swapped"] {
            let p2 = temp(&format!("{name}.{other}"));
            std::fs::copy(&path, &p2).unwrap();
            let (_, it) = open(&p2).unwrap();
            assert_eq!(it.count(), evs.len());
            std::fs::remove_file(&p2).unwrap();
        }
        std::fs::remove_file(&path).unwrap();
    }
    // A JSONL text in a `.bin` file is read as JSONL.
    let path = temp("text.bin");
    std::fs::write(&path, to_jsonl(&Params::default(), &evs)).unwrap();
    assert_eq!(open(&path).unwrap().1.count(), evs.len());
    // Unrecognisable content: the suffix decides, else an error.
    std::fs::write(&path, b"garbage").unwrap();
    assert!(matches!(open(&path), Err(StreamError::BadMagic { .. })));
    let plain = temp("garbage");
    std::fs::write(&plain, b"garbage").unwrap();
    let e = open(&plain).err().unwrap();
    assert!(matches!(e, StreamError::UnknownFormat { .. }), "{e}");
    // (what each format starts with, since a pipe cannot be renamed)
    let m = e.to_string();
    assert!(
        m.contains("starts with byte 0x67") && m.contains("0x89"),
        "{m}"
    );
    std::fs::write(&plain, b"").unwrap();
    let m = open(&plain).err().unwrap().to_string();
    assert!(
        m.contains("it is empty, and a stream has at least a header"),
        "{m}"
    );
    let empty_jsonl = temp("empty.jsonl");
    std::fs::write(&empty_jsonl, b"").unwrap();
    assert!(matches!(
        open(&empty_jsonl),
        Err(StreamError::BadHeader { line: 1, .. })
    ));
    for p in [&path, &plain, &empty_jsonl] {
        std::fs::remove_file(p).unwrap();
    }
    // I/O errors name the path.
    let missing = temp("missing.bin");
    let e = open(&missing).err().unwrap();
    assert!(matches!(e, StreamError::Io { .. }), "{e}");
    assert!(
        e.to_string().contains(&missing.display().to_string()),
        "{e}"
    );
    let e = create(temp("no/such/dir.bin"), Format::Bin, &Params::default())
        .err()
        .unwrap();
    assert!(matches!(e, StreamError::Io { .. }), "{e}");
}

/// `locate` finds a bundle by its index: the physical JSONL line (header,
/// comments and blank lines counted) and the binary record's byte offset;
/// `None` past the last bundle. `bundle_json` quotes the bundle as the stream
/// holds it, so the line at the location is the quoted text.
#[test]
fn locate_names_a_bundles_line_or_byte_offset() {
    let seed = 0x5eed_0006;
    println!("seed {seed:#x}");
    let evs: Vec<_> = sample_bundles(seed).into_iter().take(40).collect();
    let path = temp("locate.jsonl");
    let mut w = create(&path, Format::Jsonl, &Params::default()).unwrap();
    w.comment("two comment\nlines after the header").unwrap();
    for (i, ev) in evs.iter().enumerate() {
        if i == 10 {
            w.comment("one more").unwrap();
        }
        w.write(ev).unwrap();
    }
    w.finish().unwrap();
    // Blank lines and a CRLF line end count as lines too.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text = text.replacen(
        &format!("{}\n", bundle_json(&evs[20])),
        &format!("\n  \n{}\r\n", bundle_json(&evs[20])),
        1,
    );
    std::fs::write(&path, &text).unwrap();
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, ev) in evs.iter().enumerate() {
        // header 1, comments 2 (+1 from bundle 10), blank 2 before bundle 20
        let want = 1 + 2 + i as u64 + 1 + u64::from(i >= 10) + 2 * u64::from(i >= 20);
        assert_eq!(
            locate(&path, i as u64).unwrap(),
            Some(Location::Line(want)),
            "bundle {i}"
        );
        assert_eq!(
            lines[want as usize - 1].trim_end_matches('\r'),
            bundle_json(ev),
            "bundle {i}"
        );
    }
    assert_eq!(locate(&path, evs.len() as u64).unwrap(), None);
    assert_eq!(locate(&path, u64::MAX).unwrap(), None);

    let bin = temp("locate.bin");
    let mut w = create(&bin, Format::Bin, &Params::default()).unwrap();
    for ev in &evs {
        w.write(ev).unwrap();
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&bin).unwrap();
    let (_, header_len) = parse_header(&bytes).unwrap();
    for (i, ev) in evs.iter().enumerate() {
        let at = header_len + i * RECORD_SIZE;
        assert_eq!(
            locate(&bin, i as u64).unwrap(),
            Some(Location::Offset(at as u64))
        );
        assert_eq!(bytes[at..at + RECORD_SIZE], encode_record(ev), "bundle {i}");
    }
    assert_eq!(locate(&bin, evs.len() as u64).unwrap(), None);
    assert_eq!(locate(&bin, u64::MAX).unwrap(), None);
    // The idle counted cycle is the empty object, and reads back as itself.
    assert_eq!(bundle_json(&CycleEvents::default()), "{}");
    for ev in &evs {
        assert_eq!(jsonl::parse_bundle(&bundle_json(ev), 1).unwrap(), *ev);
    }
    // A read error before the bundle is the reader's error.
    let bad = temp("locate-bad.jsonl");
    let mut broken: Vec<&str> = lines.clone();
    broken[8] = "{\"retired\":"; // bundle 5's line
    std::fs::write(&bad, broken.join("\n")).unwrap();
    assert!(matches!(locate(&bad, 30), Err(StreamError::BadJson { .. })));
    assert_eq!(locate(&bad, 4).unwrap(), Some(Location::Line(8)));
    for p in [&path, &bin, &bad] {
        std::fs::remove_file(p).unwrap();
    }
}

/// A UTF-8 byte-order mark before the header (as Windows editors write it)
/// is ignored, whatever the suffix, CRLF line ends too; one anywhere else is
/// an error of its line.
#[test]
fn a_byte_order_mark_before_the_header_is_ignored() {
    let seed = 0x5eed_0007;
    println!("seed {seed:#x}");
    let evs: Vec<_> = sample_bundles(seed).into_iter().take(30).collect();
    let text = to_jsonl(&Params::default(), &evs);
    let crlf = String::from_utf8(text.clone())
        .unwrap()
        .replace('\n', "\r\n");
    for (name, body) in [("bom.jsonl", text.clone()), ("bom.data", crlf.into_bytes())] {
        let path = temp(name);
        std::fs::write(&path, [b"\xef\xbb\xbf".as_slice(), &body].concat()).unwrap();
        let (p, it) = open(&path).unwrap();
        assert_eq!(p, Params::default(), "{name}");
        assert_eq!(it.collect::<Result<Vec<_>, _>>().unwrap(), evs, "{name}");
        assert_eq!(locate(&path, 0).unwrap(), Some(Location::Line(2)), "{name}");
        std::fs::remove_file(&path).unwrap();
    }
    let mut lines: Vec<Vec<u8>> = text.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    lines[3].splice(0..0, *b"\xef\xbb\xbf");
    let path = temp("bom-inside.jsonl");
    std::fs::write(&path, lines.join(&b'\n')).unwrap();
    let e = open(&path)
        .unwrap()
        .1
        .find_map(Result::err)
        .expect("an error");
    assert!(matches!(e, StreamError::BadJson { line: 4, .. }), "{e}");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn writers_refuse_illegal_params() {
    let p = Params {
        fmt_rows: 3,
        ..Params::default()
    };
    assert!(matches!(
        BinWriter::new(Vec::new(), &p).err().unwrap(),
        StreamError::HeaderParams {
            at: Location::Offset(20),
            ..
        }
    ));
    assert!(matches!(
        JsonlWriter::new(Vec::new(), &p).err().unwrap(),
        StreamError::HeaderParams {
            at: Location::Line(1),
            ..
        }
    ));
}

#[test]
fn readers_report_io_errors() {
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let e = BinReader::new(Broken).err().unwrap();
    // The cause is the error's source (printed once by an error chain), not
    // repeated in its own message.
    assert_eq!(e.to_string(), "I/O error on <stream>");
    assert_eq!(
        std::error::Error::source(&e).map(|s| s.to_string()),
        Some("disk on fire".to_string())
    );
    let e = JsonlReader::new(BufReader::new(Broken)).err().unwrap();
    assert!(matches!(e, StreamError::Io { .. }));
    // Failing after the header: the reader reports once, then ends.
    let good = to_bin(&Params::default(), &sample_bundles(5)[..3]);
    let mut r = BinReader::new(Cursor::new(good[..HEADER_LEN].to_vec()).chain(Broken)).unwrap();
    assert!(matches!(r.next(), Some(Err(StreamError::Io { .. }))));
    assert!(r.next().is_none());
}

#[test]
fn the_documented_jsonl_example_reads() {
    let doc = include_str!("../../../docs/event-stream.md");
    let start = doc.find("```text\n{\"format\"").expect("example block") + "```text\n".len();
    let len = doc[start..].find("```").unwrap();
    let (p, evs) = read_jsonl_all(&doc.as_bytes()[start..start + len]).unwrap();
    assert_eq!(p, Params::default());
    assert_eq!(evs.len(), 6);
    assert_eq!(evs[3].squash, Squash::Mispredict(0));
    assert_eq!(evs[4].fetch_stall, FetchStall::L1i);
}

/// The binary example's hexdump in docs/event-stream.md is the file this code
/// writes for the bundle and parameters it describes.
#[test]
fn the_documented_bin_example_is_what_is_written() {
    let doc = include_str!("../../../docs/event-stream.md");
    let start = doc.find("```text\n00000000  ").expect("hexdump block") + "```text\n".len();
    let len = doc[start..].find("```").unwrap();
    let mut bytes = Vec::new();
    for line in doc[start..start + len].lines() {
        // offset, then up to 16 hex bytes in two groups of 8; the comment after
        let hex = &line[10..line.len().min(10 + 49)];
        bytes.extend(
            hex.split_whitespace()
                .map(|h| u8::from_str_radix(h, 16).expect(line)),
        );
    }
    let ev = documented_bundle();
    assert_eq!(bytes.len(), HEADER_LEN + RECORD_SIZE);
    assert_eq!(bytes, to_bin(&odd_params(), &[ev]));
    // and the bundle it quotes in JSON is that bundle
    let q = doc
        .find("one bundle `{\"fetch_stall\"")
        .expect("quoted bundle")
        + "one bundle `".len();
    let qlen = doc[q..].find('`').unwrap();
    let quoted: String = doc[q..q + qlen].split_whitespace().collect();
    assert_eq!(bundle_json(&ev), quoted);
}

/// Bug: serde takes a struct from a JSON array too, so `[]` replayed as an idle
/// cycle and `[false,"l1i",3]` as a bundle; and the derived `Squash` takes
/// `{"none":null}`, which the format does not define.
#[test]
fn jsonl_only_an_object_is_a_bundle() {
    for body in [
        "[]",
        "[false,\"l1i\",3]",
        " [true]",
        "[{}]",
        "\"{}\"",
        "3",
        "null",
    ] {
        match jsonl_err(&format!("{{}}\n{body}\n{{}}\n")) {
            StreamError::BadJson { line, msg } => {
                assert_eq!(line, 3, "{body}: {msg}");
                assert!(msg.contains("expected an object"), "{body}: {msg}");
            }
            e => panic!("{body}: {e}"),
        }
    }
    let e = jsonl_err("[]\n");
    assert_eq!(
        e.to_string(),
        "line 2: bad JSON: expected an object, found an array"
    );
    for body in [
        "{\"squash\":{\"none\":null}}",
        "{\"squash\":{\"none\":0}}",
        "{\"squash\":{}}",
        "{\"squash\":{\"flush\":1,\"mispredict\":2}}",
        "{\"squash\":[\"flush\",1]}",
        "{\"squash\":null}",
        "{\"dispatched\":1,\"squash\":{\"\\u006eone\":null}}",
    ] {
        match jsonl_err(&format!("{body}\n")) {
            StreamError::BadField { line, field, msg } => {
                assert_eq!((line, field.as_str()), (2, "squash"), "{body}: {msg}")
            }
            e => panic!("{body}: {e}"),
        }
    }
    // A duplicate key inside `squash` is named as one.
    match jsonl_err("{\"squash\":{\"flush\":1,\"flush\":2}}\n") {
        StreamError::BadField { line, field, msg } => {
            assert_eq!((line, field.as_str()), (2, "squash"));
            assert!(msg.contains("duplicate key `flush`"), "{msg}");
        }
        e => panic!("{e}"),
    }
    let e = jsonl_err("{\"squash\":{\"none\":null}}\n");
    assert!(e.to_string().contains("unknown variant `none`"), "{e}");
    // The documented forms, with space and escapes, still read.
    let text = format!(
        "{HDR} {{ \"squash\" : \"none\" }}\n{{\"squash\":{{\"mispredict\":65535}}}}\n\
         {{\"squash\":{{\"\\u0066lush\":0}},\"retired\":1}}\n"
    );
    assert_eq!(
        read_jsonl_all(text.as_bytes()).unwrap().1,
        vec![
            CycleEvents::default(),
            CycleEvents {
                squash: Squash::Mispredict(65535),
                ..CycleEvents::default()
            },
            CycleEvents {
                squash: Squash::Flush(0),
                retired: 1,
                ..CycleEvents::default()
            },
        ]
    );
}

/// A line that is JSON but not an object is refused naming what it is, and
/// so is a header's `params` that is not an object: booleans and null
/// included, which are neither numbers nor strings.
#[test]
fn jsonl_a_value_that_is_not_an_object_is_named_by_its_kind() {
    for (body, kind) in [
        ("[1]", "an array"),
        ("\"{}\"", "a string"),
        ("true", "a boolean"),
        ("false", "a boolean"),
        ("null", "null"),
        ("-3", "a number"),
    ] {
        assert_eq!(
            jsonl_err(&format!("{body}\n")).to_string(),
            format!("line 2: bad JSON: expected an object, found {kind}"),
            "{body}"
        );
        let header =
            format!("{{\"format\":\"cpistack-events\",\"version\":2,\"params\":{body}}}\n");
        match JsonlReader::new(header.as_bytes()).err().expect("refused") {
            StreamError::BadHeader { line: 1, msg } => {
                assert_eq!(
                    msg,
                    format!("`params` is {kind}, expected an object"),
                    "{body}"
                )
            }
            e => panic!("{body}: {e}"),
        }
    }
}

/// A header line that starts as an object but is not valid JSON is described
/// as serde finds it, at its column, not as a line that is no object.
#[test]
fn jsonl_a_malformed_header_object_names_the_column_at_fault() {
    let text = "{\"format\" \"cpistack-events\"}\n";
    match JsonlReader::new(text.as_bytes()).err().expect("refused") {
        StreamError::BadHeader { line: 1, msg } => assert!(
            msg.starts_with("expected `:` at column 11; the first line must be {\"format\""),
            "{msg}"
        ),
        e => panic!("{e}"),
    }
}

/// Bug: the header went through `serde_json::Value`, which keeps the last of two
/// equal keys, so `"rob_entries":100,"rob_entries":3` replayed with a ROB of 3.
#[test]
fn jsonl_header_duplicate_keys_are_rejected() {
    for (text, key) in [
        (
            "{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"rob_entries\":100,\"rob_entries\":3}}\n",
            "params.rob_entries",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":1,\"version\":1,\"params\":{}}\n",
            "version",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":2,\"version\":1,\"params\":{}}\n",
            "version",
        ),
        (
            "{\"format\":\"x\",\"format\":\"cpistack-events\",\"version\":1,\"params\":{}}\n",
            "format",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":1,\"params\":{},\"params\":{\"fmt_rows\":4}}\n",
            "params",
        ),
        (
            "{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"variant\":\"fmt\",\"\\u0076ariant\":\"sfmt\"}}\n",
            "params.variant",
        ),
    ] {
        let e = JsonlReader::new(text.as_bytes()).err().expect(text);
        assert!(matches!(e, StreamError::BadHeader { line: 1, .. }), "{text}: {e}");
        assert!(
            e.to_string()
                .starts_with(&format!("line 1: bad header: duplicate key `{key}`")),
            "{text}: {e}"
        );
    }
    // The header's own line is named, after comments.
    let e = JsonlReader::new(
        &b"# c\n\n{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"fmt_rows\":4,\"retire_width\":2,\"fmt_rows\":8}}\n{}\n"[..],
    )
    .err()
    .unwrap();
    assert!(
        matches!(e, StreamError::BadHeader { line: 3, ref msg } if msg.contains("`params.fmt_rows`")),
        "{e}"
    );
    // Equal keys in different objects are not duplicates.
    let (p, _) = read_jsonl_all(
        b"{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"fmt_rows\":4}}\n{}\n",
    )
    .unwrap();
    assert_eq!(p.fmt_rows, 4);
}

/// What `anyhow`'s `{:#}` prints: the message, then each source, joined by ": ".
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

/// Bug: `HeaderParams` put its source into its own message too, so an error chain
/// printed `header parameters are illegal: X: X`.
#[test]
fn error_chains_print_each_cause_once() {
    let cause = "parameter `fmt_rows` = 48 is illegal: a power of two in 2..=256";
    let mut bin = to_bin(&Params::default(), &[]);
    set_u32(&mut bin, 20, 48);
    let p = Params {
        fmt_rows: 48,
        ..Params::default()
    };
    let errors = [
        JsonlReader::new(
            &b"{\"format\":\"cpistack-events\",\"version\":1,\"params\":{\"fmt_rows\":48}}\n"[..],
        )
        .err()
        .unwrap(),
        read_bin_all(&bin).unwrap_err(),
        decode_bin(&bin).unwrap_err(),
        JsonlWriter::new(Vec::new(), &p).err().unwrap(),
        BinWriter::new(Vec::new(), &p).err().unwrap(),
    ];
    let want = [
        format!("line 1: header parameters are illegal: {cause}"),
        format!("byte offset 20: header parameters are illegal: {cause}"),
        format!("byte offset 20: header parameters are illegal: {cause}"),
        format!("line 1: header parameters are illegal: {cause}"),
        format!("byte offset 20: header parameters are illegal: {cause}"),
    ];
    for (e, want) in errors.iter().zip(&want) {
        assert!(matches!(e, StreamError::HeaderParams { .. }), "{e}");
        assert_eq!(&chain(e), want);
    }
    // No variant repeats its source in its own message.
    let missing = temp("chain-missing.bin");
    let mut all: Vec<StreamError> = errors.into_iter().collect();
    all.push(open(&missing).err().unwrap());
    all.push(jsonl_err("{\"dispatched\":300}\n"));
    all.push(read_bin_all(&bin[..20]).unwrap_err());
    for e in &all {
        if let Some(src) = std::error::Error::source(e) {
            assert!(!e.to_string().contains(&src.to_string()), "{}", chain(e));
        }
        let c = chain(e);
        let parts: Vec<&str> = c.split(": ").collect();
        for w in parts.windows(2) {
            assert_ne!(w[0], w[1], "{c}");
        }
    }
}

/// Bug: the doc said the writer adds `# seed` comments; it writes comments only
/// when asked, and the writer `create` returns had no way to ask.
#[test]
fn stream_writer_writes_comments_in_jsonl_only() {
    let evs = sample_bundles(0x5eed_0006);
    let evs = &evs[..10];
    for (name, fmt) in [("c.jsonl", Format::Jsonl), ("c.bin", Format::Bin)] {
        let path = temp(name);
        let mut w = create(&path, fmt, &odd_params()).unwrap();
        w.comment("seed 42\ncycles 10").unwrap();
        for ev in evs {
            w.write(ev).unwrap();
        }
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        match fmt {
            Format::Jsonl => {
                let text = String::from_utf8(bytes.clone()).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(&lines[1..3], &["# seed 42", "# cycles 10"], "{text}");
            }
            Format::Bin => assert_eq!(bytes, to_bin(&odd_params(), evs)),
        }
        let (p, it) = open(&path).unwrap();
        assert_eq!(p, odd_params());
        assert_eq!(it.collect::<Result<Vec<_>, _>>().unwrap(), evs);
        std::fs::remove_file(&path).unwrap();
    }
}

/// The suffix names the format in any case; other suffixes name none.
#[test]
fn the_format_follows_the_suffix_in_any_case() {
    use std::path::Path;
    for (name, f) in [
        ("a.jsonl", Some(Format::Jsonl)),
        ("a.JSONL", Some(Format::Jsonl)),
        ("a.Json", Some(Format::Jsonl)),
        ("a.BIN", Some(Format::Bin)),
        ("a.txt", None),
        ("jsonl", None),
    ] {
        assert_eq!(Format::from_path(Path::new(name)), f, "{name}");
    }
}

/// Every byte of every header parameter is read: a parameter whose high bytes
/// are set (a legal value above 255, or an illegal value above 65535) is read
/// as written or refused naming it, never read as another, legal value.
/// (Kills the `u32_at` mutants `b[o + k]` -> `b[o - k]`, which read a
/// neighbouring byte and so accept e.g. rob_entries 65573 as 37.)
#[test]
fn bin_header_parameters_read_all_four_bytes() {
    // legal values with a nonzero second byte round-trip
    let mut big = odd_params();
    big.rob_entries = 300;
    big.fmt_rows = 256;
    let evs = &sample_bundles(9)[..3];
    let bytes = to_bin(&big, evs);
    assert_eq!(read_bin_all(&bytes).unwrap(), (big, evs.to_vec()));
    assert_eq!(decode_bin(&bytes).unwrap(), (big, evs.to_vec()));
    // one byte (1..=3) of one parameter flipped: read exactly, or refused naming it
    let good = to_bin(&odd_params(), evs);
    for i in 0..8 {
        let off = 16 + 4 * i;
        for j in 1..4 {
            let mut b = good.clone();
            b[off + j] ^= 1;
            let v = |k: usize| u32::from_le_bytes(b[16 + 4 * k..20 + 4 * k].try_into().unwrap());
            let ctx = format!("parameter {i} byte {j}");
            let want = match v(4) {
                0 | 1 => {
                    let p = Params {
                        rob_entries: v(0),
                        fmt_rows: v(1),
                        local_bits: v(2),
                        global_bits: v(3),
                        variant: if v(4) == 0 {
                            Variant::Fmt
                        } else {
                            Variant::Sfmt
                        },
                        fetch_width: v(5),
                        dispatch_width: v(6),
                        retire_width: v(7),
                    };
                    p.validate().map(|()| p).map_err(|e| e.name)
                }
                _ => Err("variant"),
            };
            for got in [read_bin_all(&b), decode_bin(&b)] {
                match (&want, got) {
                    (Ok(p), Ok((q, e))) => {
                        assert_eq!((*p, &e[..]), (q, evs), "{ctx}")
                    }
                    (Err(name), Err(StreamError::HeaderParams { at, source })) => {
                        assert_eq!(
                            (at, source.name),
                            (Location::Offset(off as u64), *name),
                            "{ctx}"
                        )
                    }
                    (
                        Err("variant"),
                        Err(StreamError::OutOfRange {
                            at, field, value, ..
                        }),
                    ) => {
                        assert_eq!(
                            (at, field, value),
                            (Location::Offset(32), "variant", v(4).into()),
                            "{ctx}"
                        )
                    }
                    (w, g) => panic!("{ctx}: want {w:?}, got {g:?}"),
                }
            }
        }
    }
}

/// Two checked bytes of a record changed at once (values 0..=8 and the top of
/// the range, in every pair of positions 6..12, on records with and without a
/// squash): the record decodes to a bundle that encodes back to the same bytes,
/// or is refused naming the first bad field (flags, fetch_stall, head,
/// squash_kind, squash_id, in that order) at its offset, in both format
/// versions. (Kills `record_bad`'s `|` -> `^` mutants on lines 278-280, under
/// which two violations cancel and a bad record is decoded, clamped, as a
/// wrong bundle; and `record_error`'s `r[8] > 5` -> `>= 5`, which blames a
/// legal head `other` for a bad squash_kind.)
#[test]
fn bin_records_with_two_bad_or_odd_fields_are_rejected_naming_the_first() {
    let bases = [
        encode_record(&CycleEvents::default()),
        encode_record(&CycleEvents {
            squash: Squash::Mispredict(0x0102),
            head: HeadCause::Dtlb,
            dispatched: 3,
            ..CycleEvents::default()
        }),
    ];
    let values: Vec<u8> = (0..=8).chain([127, 128, 254, 255]).collect();
    let mut checked = 0;
    for version in [1u16, 2] {
        let flag_limit = if version == 1 { 4 } else { 8 };
        for base in bases {
            for p1 in 6..RECORD_SIZE {
                for p2 in p1 + 1..RECORD_SIZE {
                    for &v1 in &values {
                        for &v2 in &values {
                            let mut r = base;
                            r[p1] = v1;
                            r[p2] = v2;
                            let id = u16::from_le_bytes([r[10], r[11]]);
                            let first_bad = if r[6] >= flag_limit {
                                Some((6, "flags", u64::from(r[6])))
                            } else if r[7] > 3 {
                                Some((7, "fetch_stall", r[7].into()))
                            } else if r[8] > 5 {
                                Some((8, "head", r[8].into()))
                            } else if r[9] > 2 {
                                Some((9, "squash_kind", r[9].into()))
                            } else if r[9] == 0 && id != 0 {
                                Some((10, "squash_id", id.into()))
                            } else {
                                None
                            };
                            let ctx = format!("v{version} record {r:?}");
                            let mut out = [CycleEvents::default()];
                            match (first_bad, decode_records_of(version, &r, 100, &mut out)) {
                                (None, Ok(1)) => assert_eq!(encode_record(&out[0]), r, "{ctx}"),
                                (
                                    Some((o, f, v)),
                                    Err(StreamError::OutOfRange {
                                        at, field, value, ..
                                    }),
                                ) => assert_eq!(
                                    (at, field, value),
                                    (Location::Offset(100 + o), f, v),
                                    "{ctx}"
                                ),
                                (want, got) => panic!("{ctx}: want {want:?}, got {got:?}"),
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(checked, 2 * 2 * 15 * values.len() * values.len());
}

/// A read interrupted by a signal (`ErrorKind::Interrupted`) is retried, in the
/// header and in the records: the stream reads as if it had not happened.
/// (Kills the `read_up_to` and `BinReader::fill` mutants that replace the
/// `e.kind() == io::ErrorKind::Interrupted` match guard with `false`, which
/// turn a harmless EINTR into an I/O error.)
#[test]
fn bin_reader_retries_interrupted_reads() {
    /// Every other call is interrupted; the others hand out at most 7 bytes.
    struct Eintr<'a> {
        data: &'a [u8],
        calls: usize,
    }
    impl Read for Eintr<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls % 2 == 1 {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let m = buf.len().min(7);
            self.data.read(&mut buf[..m])
        }
    }
    let evs = sample_bundles(11);
    let bytes = to_bin(&odd_params(), &evs);
    let r = BinReader::new(Eintr {
        data: &bytes,
        calls: 0,
    })
    .unwrap();
    assert_eq!(*r.params(), odd_params());
    assert_eq!(r.collect::<Result<Vec<_>, _>>().unwrap(), evs);
}

/// `read_batch` with room for the reader's whole buffer (8192 records) or more
/// reads every record of a longer stream: a buffer filled to the brim is not
/// taken for the end of the stream. (Kills `BinReader::fill`'s
/// `self.end < want` -> `<=`, which then reads into an empty slice, takes its
/// `Ok(0)` for the end of the stream and silently drops every record after
/// the first 8192.)
#[test]
fn bin_read_batch_of_a_whole_buffer_reads_every_record() {
    let evs: Vec<_> = sample_bundles(13)
        .into_iter()
        .cycle()
        .take(20_000)
        .collect();
    let bytes = to_bin(&odd_params(), &evs);
    for batch in [8192, 10_000, 30_000] {
        let mut r = BinReader::new(&bytes[..]).unwrap();
        let got = read_in_batches(&mut r, batch);
        assert_eq!(got.len(), evs.len(), "batch {batch}");
        assert!(got == evs, "batch {batch}");
    }
}

/// An I/O error other than `Interrupted` is reported, not retried, even when
/// the reader would succeed if asked again (in the header and in the
/// records). (Turns the `read_up_to` / `BinReader::fill` mutants that retry
/// every error — match guard `true`, or `==` -> `!=` — from a hang that only
/// the test timeout catches into a prompt failure.)
#[test]
fn bin_reader_reports_an_io_error_once_instead_of_retrying() {
    /// Fails once, on call `fail_at`, with a non-retryable error; otherwise a
    /// plain reader of `data`.
    struct FailsOnce<'a> {
        data: &'a [u8],
        calls: usize,
        fail_at: usize,
    }
    impl Read for FailsOnce<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls == self.fail_at {
                return Err(std::io::Error::other("disk on fire"));
            }
            self.data.read(buf)
        }
    }
    let bytes = to_bin(&Params::default(), &sample_bundles(5)[..3]);
    // the first call (the header)
    let e = BinReader::new(FailsOnce {
        data: &bytes,
        calls: 0,
        fail_at: 1,
    })
    .err()
    .expect("the error is reported");
    assert!(matches!(e, StreamError::Io { .. }), "{e}");
    // the first call after the header (the records): reported once, then nothing
    let mut r = BinReader::new(FailsOnce {
        data: &bytes,
        calls: 0,
        fail_at: 3,
    })
    .unwrap();
    assert!(matches!(r.next(), Some(Err(StreamError::Io { .. }))));
    assert!(r.next().is_none());
}

/// The reader never reads again after its source said end of file (a
/// terminal would wait for a second end-of-input; a source that fails when
/// read past its end reads cleanly), whether records are taken one at a time
/// or in batches of every size around the buffer's. (Turns `fill`'s
/// `end < want && !eof` as `||`, which read the ended source forever, from a
/// hang that only a timeout found into a prompt failure.)
#[test]
fn bin_reader_never_reads_past_the_end_of_its_source() {
    /// A source that fails if read again after returning 0 bytes.
    struct StrictEof<'a> {
        data: &'a [u8],
        ended: bool,
    }
    impl Read for StrictEof<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.ended {
                return Err(std::io::Error::other("read after end of file"));
            }
            let m = buf.len().min(1000);
            let n = self.data.read(&mut buf[..m])?;
            self.ended = n == 0 && !buf.is_empty();
            Ok(n)
        }
    }
    let evs: Vec<_> = sample_bundles(17).into_iter().cycle().take(9000).collect();
    let bytes = to_bin(&odd_params(), &evs);
    let src = || StrictEof {
        data: &bytes,
        ended: false,
    };
    let one_by_one: Vec<_> = BinReader::new(src())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(one_by_one == evs);
    for batch in [1, 100, 8191, 8192, 8193, 20_000] {
        let mut r = BinReader::new(src()).unwrap();
        let got = read_in_batches(&mut r, batch);
        assert!(got == evs, "batch {batch}");
        assert_eq!(
            r.read_batch(&mut vec![CycleEvents::default(); batch])
                .unwrap(),
            0,
            "batch {batch}, after the end"
        );
    }
}
