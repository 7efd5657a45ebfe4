//! The fuzz targets of `cpistack::fuzz` on the stable toolchain: every
//! committed seed and regression input, and seeded random bytes. The
//! coverage-guided runs are `make fuzz` (nightly; docs/fuzzing.md).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use cpistack::fuzz::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted (none if the directory is missing).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(d) => d.map(|e| e.expect("readable directory").path()).collect(),
        Err(_) => Vec::new(),
    };
    files.retain(|p| p.is_file());
    files.sort();
    files
}

/// Run `f` on `data`; a panic becomes a line naming `what`.
fn run(f: fn(&[u8]), data: &[u8], what: &str) -> Option<String> {
    catch_unwind(AssertUnwindSafe(|| f(data))).err().map(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("{what}: {msg}")
    })
}

/// Every target has seeds, and every seed and every input that once failed
/// (`fuzz/regressions/<target>/`, minimised by `cargo fuzz tmin`) passes.
#[test]
fn fuzz_seeds_and_regressions_pass() {
    let mut failed = Vec::new();
    let known: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    for kind in ["seeds", "regressions"] {
        if let Ok(d) = std::fs::read_dir(fuzz_dir().join(kind)) {
            for e in d {
                let p = e.expect("readable directory").path();
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                assert!(
                    !p.is_dir() || known.contains(&name.as_str()),
                    "fuzz/{kind}/{name}: no fuzz target of that name (known: {known:?})"
                );
            }
        }
    }
    for (name, f) in TARGETS {
        let seeds = inputs("seeds", name);
        assert!(!seeds.is_empty(), "fuzz/seeds/{name}/ has no seed");
        for p in seeds.iter().chain(&inputs("regressions", name)) {
            let data = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            failed.extend(run(f, &data, &format!("{name} on {}", p.display())));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// Seeded random bytes through every target: fully random, and each seed
/// with a few bytes changed (printed seed; `FUZZ_SEED` to repeat one).
#[test]
fn fuzz_targets_take_random_bytes() {
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_f022);
    println!("fuzz_targets_take_random_bytes: FUZZ_SEED={seed}");
    let mut x = seed;
    let mut next = move || {
        // splitmix64
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut failed = Vec::new();
    for (name, f) in TARGETS {
        // the simulating targets cost milliseconds an input, the others less
        let n = if matches!(name, "trace" | "config") {
            12
        } else {
            40
        };
        for i in 0..n {
            let len = (next() % 700) as usize;
            let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            failed.extend(run(
                f,
                &data,
                &format!("{name}, random input {i} (FUZZ_SEED={seed})"),
            ));
        }
        for p in inputs("seeds", name) {
            let mut data = std::fs::read(&p).expect("readable seed");
            for i in 0..4 {
                for _ in 0..1 + next() % 4 {
                    if !data.is_empty() {
                        let at = (next() % data.len() as u64) as usize;
                        data[at] = next() as u8;
                    }
                }
                failed.extend(run(
                    f,
                    &data,
                    &format!("{name}, {} changed ({i}, FUZZ_SEED={seed})", p.display()),
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
