//! The batched lock-step checker (`LockStep::run_batch`, hw and golden on two
//! threads) against the per-cycle one (`LockStep::step`): the same mismatch
//! (cycle, field, values, seed, history, waveform bytes) for a fault injected
//! anywhere, chunk boundaries included, and the same verdict and final state on
//! long random streams of both variants and several parameter sets.

use std::path::{Path, PathBuf};

use cpistack::check::{LockStep, Mismatch, CHUNK, MIN_PAR};
use events::gen::{GenConfig, Generator};
use events::{CounterUnit, CycleEvents, Params, Variant};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cpistack-it-batch-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stream(p: Params, cfg: GenConfig, seed: u64, n: usize) -> Vec<CycleEvents> {
    Generator::new(p, cfg, seed).take(n).collect()
}

/// The per-cycle checker over `s`: the first mismatch, if any.
fn per_cycle(ls: &mut LockStep, s: &[CycleEvents]) -> Option<Box<Mismatch>> {
    s.iter().find_map(|ev| ls.step(ev).err())
}

/// The batched checker over `s`, fed in calls of the sizes in `cuts` (cycled).
fn batched(ls: &mut LockStep, s: &[CycleEvents], cuts: &[usize]) -> Option<Box<Mismatch>> {
    let mut at = 0;
    for &k in cuts.iter().cycle() {
        if at >= s.len() {
            return None;
        }
        let end = (at + k).min(s.len());
        if let Err(m) = ls.run_batch(&s[at..end]) {
            return Some(m);
        }
        at = end;
    }
    None
}

fn first_cycle(vcd: &Path) -> u64 {
    std::fs::read_to_string(vcd)
        .unwrap()
        .split("time 0 = cycle ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .and_then(|x| x.parse().ok())
        .expect("the header names the first cycle")
}

#[test]
fn an_injected_fault_gives_the_same_mismatch_batched_and_per_cycle() {
    let c = CHUNK as u64;
    let faults = [
        3,
        150,
        c - 1,
        c,
        c + 1,
        c + 199,
        2 * c - 1,
        2 * c + 777,
        3 * c,
    ];
    for v in [Variant::Fmt, Variant::Sfmt] {
        let p = Params::default().with_variant(v);
        let seed = 42;
        eprintln!("seed {seed}, variant {v}");
        let s = stream(p, GenConfig::realistic(), seed, 4 * CHUNK + 50);
        for &fault in &faults {
            for cuts in [&[s.len()][..], &[CHUNK / 2 + 3, 17, CHUNK + 5][..]] {
                let (da, db) = (tmp("a"), tmp("b"));
                let mut a = LockStep::new(p)
                    .unwrap()
                    .with_seed(seed)
                    .with_waves_dir(Some(da.clone()));
                a.inject_golden_fault_at(fault);
                let mut b = LockStep::new(p)
                    .unwrap()
                    .with_seed(seed)
                    .with_waves_dir(Some(db.clone()));
                b.inject_golden_fault_at(fault);
                let ma = per_cycle(&mut a, &s).expect("per-cycle finds the fault");
                let mb = batched(&mut b, &s, cuts).expect("batched finds the fault");
                let ctx = format!("{v} fault at {fault}, cuts {cuts:?}");
                assert_eq!(ma.cycle, fault, "{ctx}");
                let (wa, wb) = (ma.waves.clone().unwrap(), mb.waves.clone().unwrap());
                let name = format!("mismatch-{}-seed{seed}-cycle{fault}.vcd", v.name());
                assert_eq!(Path::new(&wa), da.join(&name), "{ctx}");
                assert_eq!(Path::new(&wb), db.join(&name), "{ctx}");
                // everything but the directory of the waveform is identical
                let mut mb2 = (*mb).clone();
                mb2.waves = ma.waves.clone();
                assert_eq!(*ma, mb2, "{ctx}");
                assert_eq!(mb.last.len(), (fault + 1).min(16) as usize, "{ctx}");
                assert_eq!(mb.last.last().map(|x| x.0), Some(fault), "{ctx}");
                assert_eq!(
                    std::fs::read(&wa).unwrap(),
                    std::fs::read(&wb).unwrap(),
                    "{ctx}: the waveforms differ"
                );
                cpistack::vcdcheck::check_file(Path::new(&wb))
                    .unwrap_or_else(|e| panic!("{ctx}: {wb}: {e}"));
                let start = first_cycle(Path::new(&wb));
                assert!(
                    start <= fault && (fault - start >= 200 || start == 0),
                    "{ctx}: the waveform covers {start}..={fault}"
                );
                // the checker stays failed, batched or not
                assert_eq!(b.run_batch(&s[..MIN_PAR * 2]).unwrap_err(), mb, "{ctx}");
                assert_eq!(b.step(&s[0]).unwrap_err(), mb, "{ctx}");
                let _ = std::fs::remove_dir_all(&da);
                let _ = std::fs::remove_dir_all(&db);
            }
        }
    }
}

#[test]
fn batched_without_waves_dir_reports_no_file() {
    let p = Params::default();
    let s = stream(p, GenConfig::realistic(), 1, 3 * CHUNK);
    let mut ls = LockStep::new(p).unwrap().with_waves_dir(None);
    ls.inject_golden_fault_at(CHUNK as u64 + 5);
    let m = ls.run_batch(&s).unwrap_err();
    assert_eq!(m.cycle, CHUNK as u64 + 5);
    assert_eq!(m.waves, None);
}

/// Everything visible of both models of `ls`.
fn state(ls: &LockStep) -> String {
    let mut s = format!(
        "{} {:?} {:?}",
        ls.cycles(),
        ls.hw().view(),
        ls.golden().view()
    );
    for u in [ls.hw() as &dyn CounterUnit, ls.golden() as &dyn CounterUnit] {
        u.for_each_row(&mut |i, r| s.push_str(&format!(" {i}:{r:?}")));
    }
    s
}

#[test]
fn batched_and_per_cycle_accept_the_same_long_streams() {
    let n: usize = std::env::var("CPISTACK_BATCH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60_000);
    let base = Params::default();
    let mut small = base;
    small.set("fmt_rows", "4").unwrap();
    small.set("local_bits", "3").unwrap();
    small.set("global_bits", "10").unwrap();
    let mut two = base;
    two.set("fmt_rows", "2").unwrap();
    two.set("rob_entries", "16").unwrap();
    let mut big = base;
    big.set("rob_entries", "300").unwrap();
    big.set("fmt_rows", "128").unwrap();
    for (k, params) in [base, small, two, big].into_iter().enumerate() {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let p = params.with_variant(v);
            p.validate().unwrap();
            for (mix, cfg) in [
                ("realistic", GenConfig::realistic()),
                ("stress", GenConfig::stress()),
            ] {
                let seed = 1000 + k as u64;
                eprintln!("seed {seed}, params #{k}, {v}, {mix}");
                let mut s = stream(p, cfg, seed, n);
                let mut a = LockStep::new(p).unwrap().with_waves_dir(None);
                let mut b = LockStep::new(p).unwrap().with_waves_dir(None);
                assert!(
                    per_cycle(&mut a, &s).is_none(),
                    "seed {seed}: per-cycle failed"
                );
                assert!(
                    batched(&mut b, &s, &[CHUNK * 3 + 11, 40, 999]).is_none(),
                    "seed {seed}: batched failed"
                );
                assert_eq!(state(&a), state(&b), "seed {seed}");
                // an illegal bundle: both models latch the same error, both accept
                s.truncate(n / 2);
                let mut bad = s[s.len() - 1];
                bad.retired = u8::MAX;
                s.push(bad);
                s.extend(stream(p, GenConfig::realistic(), seed + 7, 3 * CHUNK));
                let mut a = LockStep::new(p).unwrap().with_waves_dir(None);
                let mut b = LockStep::new(p).unwrap().with_waves_dir(None);
                assert!(
                    per_cycle(&mut a, &s).is_none(),
                    "seed {seed}: per-cycle failed"
                );
                assert!(batched(&mut b, &s, &[s.len()]).is_none(), "seed {seed}");
                assert!(
                    b.hw().view().error.is_some(),
                    "seed {seed}: the bad bundle latched"
                );
                assert_eq!(state(&a), state(&b), "seed {seed}");
            }
        }
    }
}
