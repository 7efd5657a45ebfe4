//! Fuzz targets: coverage-guided tests of everything that takes outside input
//! (`make fuzz` runs them under libFuzzer; docs/fuzzing.md).
//!
//! Each target takes arbitrary bytes and panics only when a property fails, so
//! that a fuzzer reports it as a crash. Bad input itself is not a failure: it
//! must give an error, and the error must print. The targets live here, not
//! in the `fuzz/` crate, so that the stable toolchain builds and runs them too:
//! `tests/it/fuzz.rs` replays every input of `fuzz/seeds/` and
//! `fuzz/regressions/` through its target, and seeded random bytes and
//! changed seeds through each.
//!
//! | target | input | properties |
//! |---|---|---|
//! | [`stream_bin`] | a binary event stream | no panic; the whole-buffer decoder and the streaming reader (odd batch sizes) agree; what reads is written back to the same bundles |
//! | [`stream_jsonl`] | a JSON Lines event stream | no panic; what reads is written and read back to the same bundles |
//! | [`unit`] | unit parameters, a knob preset, a cycle count, an optional illegal bundle, then the random words of the legal-stream generator | `hw` and `golden` agree on every field every cycle, for both variants; every `hw` kernel holds the same registers as the lock-stepped one; the ROB mirror and rows follow the protocol tracker; a legal stream latches nothing and the illegal bundle latches exactly the tracker's rule, after which nothing changes |
//! | [`trace`] | a byte (how many times the records repeat, which machine), then a plain ChampSim trace | the core simulates it or refuses it with an error (never a panic); every bundle it emits is legal; FMT and sFMT in lock step with `golden`; each unit's ROB mirror and retired count equal the core's |
//! | [`config`] | `--set` overrides of the machine | an override or a machine refused with an error, or a core that builds and runs a workload as [`trace`] requires |
//! | [`config_file`] | a byte choosing TOML or JSON and a workload, then a `--config` file's text | the same |
//! | [`report`] | a `stacks.json` (as `stacks --check-only` reads it): its text, or changes to the numbers and studies of a real two-workload report | read and checked, or refused with an error; every chart, table and page renders from any report that reads and has every method, its numbers checked or not |

use std::io::Cursor;
use std::sync::OnceLock;

use events::gen::{mutate_illegal, random_bundle, GenConfig, GenRng, Generator, ProtocolState};
use events::{CounterUnit, CycleEvents, Params, ProtocolError, Variant};
use rand::{RngCore, SeedableRng};

use crate::check::LockStep;

/// A fuzz target: arbitrary bytes in, a panic when a property fails.
pub type Target = fn(&[u8]);

/// The fuzz targets by name (the names of `fuzz/fuzz_targets/*.rs` and of the
/// directories of `fuzz/seeds/` and `fuzz/regressions/`).
pub const TARGETS: [(&str, Target); 7] = [
    ("stream_bin", stream_bin),
    ("stream_jsonl", stream_jsonl),
    ("unit", unit),
    ("trace", trace),
    ("config", config),
    ("config_file", config_file),
    ("report", report),
];

/// The input, read front to back; zeros once it runs out.
struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn u64(&mut self) -> u64 {
        let mut w = [0u8; 8];
        let n = self.data.len().min(8);
        w[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        u64::from_le_bytes(w)
    }
    fn rest(&self) -> &'a [u8] {
        self.data
    }
}

/// A 64-bit FNV-1a hash of the input (the seed of [`FuzzRng`]'s tail).
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Random words for the generator: the fuzzer's bytes, eight to a word, then
/// (so that a short input still gives a long stream) a xoshiro256++ seeded by
/// the hash of those bytes. Deterministic per input.
#[derive(Clone, Debug)]
pub struct FuzzRng {
    words: Vec<u64>,
    at: usize,
    tail: GenRng,
}

impl FuzzRng {
    pub fn new(bytes: &[u8]) -> FuzzRng {
        let words = bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect();
        FuzzRng {
            words,
            at: 0,
            tail: GenRng::seed_from_u64(fnv(bytes)),
        }
    }
}

impl RngCore for FuzzRng {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        match self.words.get(self.at) {
            Some(&w) => {
                self.at += 1;
                w
            }
            None => self.tail.next_u64(),
        }
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for c in dest.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            c.copy_from_slice(&w[..c.len()]);
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

/// A binary event stream: decoded whole and streamed in batches of 1, 7 and
/// 4096 bundles, the same either way; written back, it reads the same.
pub fn stream_bin(data: &[u8]) {
    use events::stream::{decode_bin, BinReader, BinWriter};
    let whole = decode_bin(data);
    for batch in [1usize, 7, 4096] {
        let streamed = BinReader::new(data).and_then(|mut r| {
            let mut out = vec![CycleEvents::default(); batch];
            let mut all = Vec::new();
            loop {
                let k = r.read_batch(&mut out)?;
                if k == 0 {
                    return Ok((*r.params(), all));
                }
                all.extend_from_slice(&out[..k]);
            }
        });
        match (&whole, &streamed) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "batches of {batch}: the decoders disagree"),
            (Err(a), Err(b)) => assert_eq!(
                a.to_string(),
                b.to_string(),
                "batches of {batch}: the decoders refuse differently"
            ),
            (a, b) => panic!("batches of {batch}: one decoder read, one refused: {a:?} / {b:?}"),
        }
    }
    match whole {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok((p, evs)) => {
            let mut w = BinWriter::new(Vec::new(), &p).expect("params that read are legal");
            w.write_batch(&evs).expect("in memory");
            let again = decode_bin(&w.finish().expect("in memory")).expect("written just now");
            assert_eq!(
                again,
                (p, evs),
                "written back, the stream reads differently"
            );
        }
    }
}

/// A JSON Lines event stream: read to its end or its first error; what
/// reads is written back and reads the same.
pub fn stream_jsonl(data: &[u8]) {
    use events::stream::{JsonlReader, JsonlWriter};
    let mut r = match JsonlReader::new(data) {
        Ok(r) => r,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let p = *r.params();
    let mut evs = Vec::new();
    for ev in &mut r {
        match ev {
            Ok(ev) => evs.push(ev),
            Err(e) => {
                assert!(!e.to_string().is_empty());
                break;
            }
        }
    }
    let mut w = JsonlWriter::new(Vec::new(), &p).expect("params that read are legal");
    for ev in &evs {
        w.write(ev).expect("in memory");
    }
    let text = w.finish().expect("in memory");
    let mut back = JsonlReader::new(&text[..]).expect("written just now");
    assert_eq!(
        *back.params(),
        p,
        "written back, the header reads differently"
    );
    let again: Vec<CycleEvents> = (&mut back)
        .collect::<Result<_, _>>()
        .expect("written just now");
    assert_eq!(again, evs, "written back, the bundles read differently");
}

/// Unit parameters from six bytes, all legal: the ROB 2..=257 entries,
/// 2..=256 rows, every local and global width, widths 1..=8.
fn params(b: &mut Bytes) -> Params {
    let widths = b.u16();
    Params {
        rob_entries: 2 + b.u8() as u32,
        fmt_rows: 2 << (b.u8() % 8),
        local_bits: 1 + b.u8() as u32 % 32,
        global_bits: 8 + b.u8() as u32 % 57,
        variant: Variant::Fmt,
        fetch_width: 1 + (widths & 7) as u32,
        dispatch_width: 1 + (widths >> 3 & 7) as u32,
        retire_width: 1 + (widths >> 6 & 7) as u32,
    }
}

/// The counter unit, both variants, on a stream the fuzzer steers: the
/// generator's every decision is a word of the input (the module table).
pub fn unit(data: &[u8]) {
    let mut b = Bytes { data };
    let p = params(&mut b);
    let cfg = match b.u8() % 3 {
        0 => GenConfig::stress(),
        1 => GenConfig::realistic(),
        _ => GenConfig::fill(),
    };
    let cycles = 1 + (b.u16() % 2048) as u64;
    // the cycle of the illegal bundle (none if past the end), and whether it
    // is a legal one mutated or a bundle of random fields
    let bad_at = b.u16() as u64;
    let random = b.u8() & 1 == 1;
    let dice = FuzzRng::new(b.rest());
    // the illegal bundle's own draws: a seed that depends on the whole input
    let seed = fnv(data);
    for v in [Variant::Fmt, Variant::Sfmt] {
        unit_run(
            p.with_variant(v),
            cfg.clone(),
            dice.clone(),
            seed,
            cycles,
            (bad_at, random),
        );
    }
}

fn unit_run(
    p: Params,
    cfg: GenConfig,
    dice: FuzzRng,
    seed: u64,
    cycles: u64,
    (bad_at, random): (u64, bool),
) {
    let ctx = format!("{p:?}, {cycles} cycles, illegal bundle at {bad_at}");
    let mut gen = Generator::with_rng(p, cfg, dice).expect("legal params and presets");
    let mut ls = LockStep::new(p).expect("legal params");
    let mut kernels: Vec<hw::Unit> = hw::Kernel::available()
        .map(|k| {
            let mut u = hw::Unit::new(p).expect("legal params");
            assert!(
                u.set_kernel(k),
                "{ctx}: kernel {k:?} is available but refused"
            );
            u
        })
        .collect();
    let mut st = ProtocolState::new(p);
    let mut rng = GenRng::seed_from_u64(seed);
    let mut latched: Option<ProtocolError> = None;
    for i in 0..cycles {
        let legal = gen.next().expect("infinite");
        let (ev, verdict) = if i == bad_at && latched.is_none() {
            if random {
                let ev = random_bundle(&mut rng);
                (ev, st.check(&ev).err())
            } else {
                let (ev, v) = mutate_illegal(&legal, &st, &mut rng);
                (ev, Some(v))
            }
        } else if latched.is_some() && i % 2 == 1 {
            // after the latch, legal and random bundles alike change nothing
            (random_bundle(&mut rng), None)
        } else {
            (legal, None)
        };
        let before = latched.map(|_| (ls.hw().view(), *ls.hw().regs(), rows(ls.hw())));
        if let Err(m) = ls.step(&ev) {
            panic!("{ctx}: lock step failed:\n{m}");
        }
        for u in &mut kernels {
            u.step(&ev);
            assert_eq!(
                u.view(),
                ls.hw().view(),
                "{ctx}, cycle {i}: kernel {:?} differs",
                u.kernel()
            );
        }
        let h = ls.hw().view();
        if let Some(before) = before {
            assert_eq!(
                (h, *ls.hw().regs(), rows(ls.hw())),
                before,
                "{ctx}, cycle {i}: state changed after the latched error"
            );
            continue;
        }
        if let Some(v) = verdict {
            let want = ProtocolError {
                bundle: i,
                field: v.field,
                rule: v.rule,
            };
            assert_eq!(h.error, Some(want), "{ctx}: bundle {ev:?}");
            let msg = want.to_string();
            assert!(
                msg.contains(&format!("rule {}", want.rule)) && msg.contains(want.field.name()),
                "{ctx}: the message does not name the rule: {msg}"
            );
            latched = Some(want);
            continue;
        }
        assert_eq!(
            h.error, None,
            "{ctx}, cycle {i}: a legal bundle latched an error"
        );
        st.apply(&ev);
        assert_eq!(
            (h.rob_count, h.rob_head, h.dispatched_rows, h.fetched_rows),
            (
                st.rob_count(),
                st.rob_head(),
                st.dispatched_rows(),
                st.fetched_rows()
            ),
            "{ctx}, cycle {i}: ROB count and head, dispatched and fetched rows differ from the protocol's"
        );
        assert_eq!(
            (h.refilling, h.refill_pending),
            (st.refilling(), st.refill_pending()),
            "{ctx}, cycle {i}: refill flags differ from the protocol's"
        );
        assert_eq!(h.rob_full, h.rob_count == p.rob_entries, "{ctx}, cycle {i}");
        assert_eq!(
            h.free_rows,
            p.fmt_rows - 1 - h.dispatched_rows - h.fetched_rows,
            "{ctx}, cycle {i}"
        );
        let mut n = 0;
        let mut rows = st.rows();
        ls.hw().for_each_row(&mut |age, r| {
            if age < h.dispatched_rows as usize {
                let t = rows.next().expect("as many rows as dispatched");
                assert_eq!(
                    (r.rob_id, r.mispredict, r.done),
                    (t.rob_id, t.mispredict, t.done),
                    "{ctx}, cycle {i}: row {age} differs from the protocol's"
                );
            }
            n += 1;
        });
        assert_eq!(
            n,
            h.dispatched_rows + h.fetched_rows + 1,
            "{ctx}, cycle {i}: rows walked"
        );
    }
    for u in &kernels {
        assert_eq!(u.regs(), ls.hw().regs(), "{ctx}: kernel {:?}", u.kernel());
        assert_eq!(u.latch(), ls.hw().latch(), "{ctx}: kernel {:?}", u.kernel());
        for r in 0..p.fmt_rows as usize {
            assert_eq!(
                (u.row_rob_id(r), u.row_penalty(r), u.row_icounts(r)),
                (
                    ls.hw().row_rob_id(r),
                    ls.hw().row_penalty(r),
                    ls.hw().row_icounts(r)
                ),
                "{ctx}: kernel {:?}, physical row {r}",
                u.kernel()
            );
        }
    }
}

/// A unit's live rows, oldest first.
fn rows(u: &hw::Unit) -> Vec<events::RowView> {
    let mut out = Vec::new();
    u.rows_into(&mut out);
    out
}

/// Cycles a [`trace`] or [`config`] run simulates at most.
const SIM_CYCLES: u64 = 5_000;

/// Run `core` up to [`SIM_CYCLES`] with both variants in lock step, checking
/// every bundle is legal and each unit's ROB mirror and retired count follow
/// the core. A simulation error (a malformed record, say) ends the run.
fn simulate<S: sim::InstrSource>(cfg: &sim::Config, mut core: sim::Core<S>, what: &str) {
    let params = cfg.unit_params();
    let mut units: Vec<LockStep> = [Variant::Fmt, Variant::Sfmt]
        .map(|v| LockStep::new(params.with_variant(v)).expect("the core's unit params are legal"))
        .into();
    core.set_warmup(0);
    while core.cycle() < SIM_CYCLES && !core.finished() {
        let ev = match core.step() {
            Ok(ev) => *ev,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                return;
            }
        };
        let cycle = core.cycle() - 1;
        for ls in &mut units {
            if let Err(m) = ls.step(&ev) {
                panic!("{what}: lock step failed at core cycle {cycle}:\n{m}");
            }
            if let Err(e) = crate::run::check_unit_follows_core(ls.hw(), &core, &ev) {
                panic!("{what}: {e}");
            }
        }
    }
}

/// A plain (uncompressed) ChampSim trace after one byte: its low six bits
/// and one are how many times the records repeat (a loop, so that a short
/// input can still train the predictors, miss in a warm cache and fill the
/// ROB), its bit 6 picks a small machine (ROB 32, 8 FMT rows, 16 load/store
/// queue entries) instead of the default one.
pub fn trace(data: &[u8]) {
    use sim::trace::{Format, RecordReader, TraceSource};
    let mut b = Bytes { data };
    let how = b.u8();
    let records = b.rest();
    let repeat = 1 + (how & 63) as usize;
    let mut text = Vec::with_capacity(records.len() * repeat);
    for _ in 0..repeat {
        text.extend_from_slice(records);
    }
    let reader =
        RecordReader::from_reader(Box::new(Cursor::new(text)), Format::Plain, "fuzz".into());
    let src = match TraceSource::from_reader(reader, "fuzz".into(), 0) {
        Ok(s) => s,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let mut cfg = sim::Config::default();
    if how & 64 != 0 {
        cfg.set_all([
            "core.rob_entries=32",
            "core.fmt_rows=8",
            "core.lsq_entries=16",
        ])
        .expect("a legal small machine");
    }
    // the core reads ahead: a bad record just after the first refuses it
    let core = match sim::Core::new(&cfg, src) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    simulate(&cfg, core, "trace");
}

/// Every key of the machine configuration with its default value.
fn config_keys() -> &'static [(String, serde_json::Value)] {
    static KEYS: OnceLock<Vec<(String, serde_json::Value)>> = OnceLock::new();
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            _ => out.push((prefix.to_string(), v.clone())),
        }
    }
    KEYS.get_or_init(|| {
        let mut out = Vec::new();
        let v = serde_json::to_value(sim::Config::default()).expect("config serialises");
        walk("", &v, &mut out);
        out
    })
}

/// Up to eight `--set` overrides of the default machine, then a workload on
/// it: each byte-chosen key gets a value of its own type (numbers from 0 to
/// 2^64 - 1, small ones most often) or, one time in eight, the input's own text.
pub fn config(data: &[u8]) {
    let keys = config_keys();
    let mut b = Bytes { data };
    let names = workload_names();
    let workload = names[b.u8() as usize % names.len()];
    let n = b.u8() % 9;
    let mut sets = Vec::new();
    for _ in 0..n {
        let (key, default) = &keys[b.u16() as usize % keys.len()];
        let how = b.u8();
        let value = if how % 8 == 7 {
            let len = (b.u8() % 16) as usize;
            let raw: Vec<u8> = (0..len).map(|_| b.u8()).collect();
            String::from_utf8_lossy(&raw).into_owned()
        } else if default.is_u64() {
            // 1 to 64 bits, most often few
            let bits = [1u32, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64][how as usize % 14];
            let v = b.u64();
            (if bits == 64 { v } else { v & ((1 << bits) - 1) }).to_string()
        } else if default.is_boolean() {
            (how & 8 != 0).to_string()
        } else {
            // a string key: its default, or a few bytes of text
            match how % 2 {
                0 => default.as_str().unwrap_or("").to_string(),
                _ => {
                    let len = (b.u8() % 8) as usize;
                    let raw: Vec<u8> = (0..len).map(|_| b'a' + b.u8() % 26).collect();
                    String::from_utf8_lossy(&raw).into_owned()
                }
            }
        };
        sets.push(format!("{key}={value}"));
    }
    let mut cfg = sim::Config::default();
    if let Err(e) = cfg.set_all(sets.iter().map(String::as_str)) {
        assert!(!e.to_string().is_empty());
        return;
    }
    simulate_workload(&cfg, workload, &format!("{workload} with {sets:?}"));
}

/// The workloads [`config`] and [`config_file`] pick from: the suite and the
/// limit workloads.
fn workload_names() -> Vec<&'static str> {
    (sim::workloads::names().into_iter())
        .chain(sim::workloads::limit_names())
        .collect()
}

/// A workload on the machine `cfg` as [`simulate`] runs it, or an error.
fn simulate_workload(cfg: &sim::Config, workload: &str, what: &str) {
    let core = match sim::workload_core(cfg, workload, 1) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    simulate(cfg, core, what);
}

/// A configuration file (`--config`): the first byte picks TOML or JSON
/// (its lowest bit) and the workload, the rest is the file's text. Read,
/// validated and run as `cpistack run --config` would.
pub fn config_file(data: &[u8]) {
    let mut b = Bytes { data };
    let how = b.u8();
    let Ok(text) = std::str::from_utf8(b.rest()) else {
        return; // refused before parsing (`not UTF-8`), as `Config::load` does
    };
    let toml = how & 1 == 1;
    let names = workload_names();
    let workload = names[(how >> 1) as usize % names.len()];
    let cfg = match sim::Config::parse(text, toml, "fuzz").and_then(|c| c.validate().map(|()| c)) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    simulate_workload(
        &cfg,
        workload,
        &format!("{workload} with the file {text:?}"),
    );
}

/// A real report to change: `mlp` and `icache`, 3000 instructions after 500,
/// every method and reference order (made once per process).
fn base_report() -> &'static serde_json::Value {
    static BASE: OnceLock<serde_json::Value> = OnceLock::new();
    BASE.get_or_init(|| {
        use crate::stacks::{run_study, Settings, Source};
        let sources = ["mlp", "icache"].map(|w| Source::workload(w, 1).expect("a suite workload"));
        let s = Settings {
            cfg: sim::Config::default(),
            instructions: 3000,
            warmup: 500,
        };
        let r = run_study(&sources, &s, 1, &|_, _| {}).expect("the base study runs");
        serde_json::to_value(&r).expect("a report serialises")
    })
}

/// `stacks.json` as `cpistack stacks --check-only` reads it. The first byte's
/// low bit picks the input's form: the file's text (the rest of the input),
/// or up to 32 changes to a real report ([`base_report`]), each a number
/// replaced (by 0, an integer, a float from any bits, its negation, its
/// double, or 1e300), a study dropped or repeated. What reads is checked
/// ([`check_report_text`](crate::stacks::check_report_text)); every other
/// output, and the text table, is rendered from any report that reads and
/// has every method ([`complete`]), whether or not its numbers passed the
/// checks: no input may panic.
pub fn report(data: &[u8]) {
    use serde_json::Value;
    let mut b = Bytes { data };
    let how = b.u8();
    let text = if how & 1 == 0 {
        match std::str::from_utf8(b.rest()) {
            Ok(t) => t.to_string(),
            Err(_) => return, // `read_to_string` refuses it first
        }
    } else {
        let mut v = base_report().clone();
        for _ in 0..b.u8() % 33 {
            let op = b.u8();
            let at = b.u16() as usize;
            let x = b.u64();
            if op % 8 == 7 {
                if let Some(Value::Array(st)) = v.get_mut("studies") {
                    if !st.is_empty() {
                        let i = at % st.len();
                        if x & 1 == 0 {
                            st.remove(i);
                        } else {
                            let c = st[i].clone();
                            st.push(c);
                        }
                    }
                }
                continue;
            }
            let mut leaves = Vec::new();
            numbers(&mut v, &mut leaves);
            if leaves.is_empty() {
                continue;
            }
            let n = leaves.swap_remove(at % leaves.len());
            let old = n.as_f64().unwrap_or(0.0);
            let new = match op % 8 {
                0 => Some(serde_json::Number::from(0u64)),
                1 => Some(serde_json::Number::from(x >> (x & 63))),
                2 => serde_json::Number::from_f64(f64::from_bits(x)),
                3 => serde_json::Number::from_f64(-old),
                4 => serde_json::Number::from_f64(old * 2.0),
                5 => serde_json::Number::from_f64(1e300),
                _ => serde_json::Number::from_f64(old + 1.0),
            };
            if let Some(new) = new {
                *n = new;
            }
        }
        serde_json::to_string(&v).expect("a value serialises")
    };
    if let Err(e) = crate::stacks::check_report_text(&text) {
        assert!(!e.to_string().is_empty());
    }
    if let Ok(r) = serde_json::from_str::<crate::stacks::Report>(&text) {
        if complete(&r) {
            let outputs = crate::stacks::render_outputs(&r).expect("a report renders");
            assert!(outputs.iter().all(|(_, t)| !t.is_empty()));
            let _ = crate::stacks::text_table(&r);
        }
    }
}

/// Whether `r` has every method's stack, penalties and error in every study,
/// and every compared method in each summary that is not empty: the shape
/// every report a run makes has, and [`check_report_text`] requires (the
/// renderers look methods up by name). Its numbers may be anything.
///
/// [`check_report_text`]: crate::stacks::check_report_text
fn complete(r: &crate::stacks::Report) -> bool {
    use crate::stacks::{COMPARED, METHODS};
    let studies = r.studies.iter().all(|st| {
        METHODS
            .iter()
            .all(|m| st.stacks.contains_key(*m) && st.penalties.contains_key(*m))
            && COMPARED.iter().all(|m| st.errors_pp.contains_key(*m))
    });
    let summaries = [&r.summary, &r.summary_workloads, &r.summary_traces]
        .iter()
        .all(|s| s.is_empty() || COMPARED.iter().all(|m| s.contains_key(*m)));
    studies && summaries
}

/// Every number in `v`.
fn numbers<'a>(v: &'a mut serde_json::Value, out: &mut Vec<&'a mut serde_json::Number>) {
    match v {
        serde_json::Value::Number(n) => out.push(n),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| numbers(x, out)),
        serde_json::Value::Object(m) => m.values_mut().for_each(|x| numbers(x, out)),
        _ => {}
    }
}
