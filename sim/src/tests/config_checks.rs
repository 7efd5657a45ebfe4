//! Configuration checks: every structure the core allocates from the configuration
//! is bounded, every latency fits the watchdog, and `--set` overrides are validated
//! once, after the last one (one named test per reviewed bug).

use crate::config::{
    Config, MAX_BTB_ENTRIES, MAX_CACHE_BYTES, MAX_CONFIG_BYTES, MAX_FETCH_QUEUE,
    MAX_FRONTEND_STAGES, MAX_TLB_ENTRIES, WATCHDOG_MARGIN,
};
use crate::core::Core;
use crate::workloads::{self, Workload};

/// The error of applying `sets` to the defaults (`set_all`: each checked for its
/// type, then the whole configuration validated).
pub(super) fn rejection(sets: &[&str]) -> String {
    let mut c = Config::default();
    match c.set_all(sets.iter().copied()) {
        Ok(()) => panic!("{sets:?} accepted"),
        Err(e) => {
            assert_eq!(c, Config::default(), "a failed set_all changed the config");
            e.to_string()
        }
    }
}

/// The smallest legal `core.watchdog_cycles` for `c`.
fn watchdog_minimum(c: &Config) -> u64 {
    WATCHDOG_MARGIN * c.worst_stall().iter().map(|t| t.1).sum::<u64>()
}

pub(super) fn accepted(sets: &[&str]) -> Config {
    let mut c = Config::default();
    c.set_all(sets.iter().copied())
        .unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    c
}

/// Bug 1: sizes that `Core::new` would try (and fail) to allocate passed
/// `validate` and aborted the process; each is now an error naming the key.
#[test]
fn allocation_sizes_from_the_config_are_bounded() {
    for (sets, key) in [
        (
            &["core.fetch_queue=4294967295"][..],
            "`core.fetch_queue` = 4294967295",
        ),
        (&["core.fetch_queue=4097"][..], "`core.fetch_queue` = 4097"),
        (
            &["core.frontend_stages=65"][..],
            "`core.frontend_stages` = 65",
        ),
        (
            &["core.frontend_stages=4294967295"][..],
            "`core.frontend_stages` = 4294967295",
        ),
        (
            &["l2.size=1125899906842624"][..],
            "`l2.size` = 1125899906842624",
        ),
        (&["l1i.size=2147483648"][..], "`l1i.size` = 2147483648"),
        (&["l1d.size=4294967296"][..], "`l1d.size` = 4294967296"),
        // 1 GiB of 4-byte lines: 2^28 lines
        (
            &[
                "l1i.line=4",
                "l1d.line=4",
                "l2.line=4",
                "l2.size=1073741824",
            ][..],
            "`l2.size` = 1073741824",
        ),
        (
            &["itlb.entries=4294967295"][..],
            "`itlb.entries` = 4294967295",
        ),
        (&["dtlb.entries=2097152"][..], "`dtlb.entries` = 2097152"),
        (&["dtlb.entries=0"][..], "`dtlb.entries` = 0"),
        (
            &["bpred.btb_entries=2147483648"][..],
            "`bpred.btb_entries` = 2147483648",
        ),
        (&["bpred.btb_entries=0"][..], "`bpred.btb_entries` = 0"),
        (
            &["bpred.btb_entries=16777216", "bpred.btb_ways=16777216"][..],
            "`bpred.btb_ways` = 16777216",
        ),
        (&["bpred.btb_ways=0"][..], "`bpred.btb_ways` = 0"),
    ] {
        let e = rejection(sets);
        assert!(e.contains(key) && e.contains("is illegal"), "{sets:?}: {e}");
    }
    // the bounds themselves are legal
    let c = accepted(&[
        &format!("core.fetch_queue={MAX_FETCH_QUEUE}"),
        &format!("core.frontend_stages={MAX_FRONTEND_STAGES}"),
        &format!("l2.size={MAX_CACHE_BYTES}"),
        &format!("dtlb.entries={MAX_TLB_ENTRIES}"),
        &format!("bpred.btb_entries={MAX_BTB_ENTRIES}"),
    ]);
    assert_eq!(c.l2.size, 1 << 30);
    // and a core with large (not the largest) structures is built and runs
    let c = accepted(&[
        "core.fetch_queue=4096",
        "l2.size=67108864",
        "dtlb.entries=65536",
        "bpred.btb_entries=1048576",
    ]);
    let mut core = crate::workload_core(&c, "balanced", 1).unwrap();
    core.run(1000, &mut []).unwrap();
}

/// Bug 2: `latency.longlat_min` 0 or 1 made every one-cycle ALU operation a
/// long-latency one.
#[test]
fn longlat_min_below_two_is_rejected() {
    for v in [0, 1, 1001] {
        let e = rejection(&[&format!("latency.longlat_min={v}")]);
        assert!(
            e.contains(&format!("`latency.longlat_min` = {v} is illegal")),
            "{e}"
        );
    }
    for v in [2, 1000] {
        accepted(&[&format!("latency.longlat_min={v}")]);
    }
}

/// Bug 3: a memory latency (or walk, or execution latency) longer than the watchdog
/// can wait passed `validate` and failed the run as a stuck pipeline; it is now a
/// configuration error naming the latency and the watchdog.
#[test]
fn latency_the_watchdog_cannot_wait_for_is_rejected() {
    // the default chain: refill 30 + 9 + 250 + 5, then a load's 30 + 2 + 9 + 250
    let d = Config::default();
    let s: u64 = d.worst_stall().iter().map(|t| t.1).sum();
    assert_eq!(s, 585, "{:?}", d.worst_stall());
    assert!(WATCHDOG_MARGIN * s <= d.core.watchdog_cycles);

    let e = rejection(&["memory_latency=100000"]);
    assert!(
        e.contains("`memory_latency` = 100000 is illegal")
            && e.contains("core.watchdog_cycles (20000)"),
        "{e}"
    );
    // the error's minimum is exactly the legal edge
    let mut c = Config {
        memory_latency: 100_000,
        ..Config::default()
    };
    let need = watchdog_minimum(&c);
    assert!(
        e.contains(&format!("raise core.watchdog_cycles to at least {need}")),
        "{e}"
    );
    c.core.watchdog_cycles = need - 1;
    assert!(c.validate().is_err());
    c.core.watchdog_cycles = need;
    c.validate().unwrap();

    // the largest term is named: a walk, a divide
    for (sets, key) in [
        (
            &["dtlb.miss_latency=100000"][..],
            "`dtlb.miss_latency` = 100000",
        ),
        (
            &["itlb.miss_latency=9000"][..],
            "`itlb.miss_latency` = 9000",
        ),
        (
            &["latency.div=1000", "core.watchdog_cycles=1000"][..],
            "`latency.div` = 1000",
        ),
    ] {
        let e = rejection(sets);
        assert!(
            e.contains(key) && e.contains("core.watchdog_cycles"),
            "{sets:?}: {e}"
        );
    }
}

/// Bug 3, the other side: the reviewer's run, made legal by raising the watchdog to
/// the minimum the error names, completes; and so do the suite's miss-heavy
/// workloads with every latency long and the watchdog at its minimum.
#[test]
fn legal_config_at_the_watchdog_minimum_runs() {
    let mut c = Config {
        memory_latency: 100_000,
        ..Config::default()
    };
    c.core.watchdog_cycles = watchdog_minimum(&c);
    let mut core = crate::workload_core(&c, "balanced", 1).unwrap();
    core.run(2000, &mut []).unwrap();

    let mut c = Config {
        memory_latency: 1000,
        ..Config::default()
    };
    c.itlb.miss_latency = 1000;
    c.dtlb.miss_latency = 1000;
    c.core.watchdog_cycles = watchdog_minimum(&c);
    c.validate().unwrap();
    for name in ["chase", "dtlb", "itlb", "indirect", "server", "bigcode"] {
        let spec = workloads::by_name(name).unwrap();
        let mut core = Core::new(&c, Workload::new(&spec, 2)).unwrap();
        core.run(10_000, &mut [])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Bug 4: `set` validated after every assignment, so related keys could not be
/// changed one `--set` at a time; `set_all` validates once, after the last.
#[test]
fn set_all_validates_once_after_the_last_assignment() {
    let lines = ["l1i.line=32", "l1d.line=32", "l2.line=32"];
    for order in [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ] {
        let c = accepted(&order.map(|i| lines[i]));
        assert_eq!((c.l1i.line, c.l1d.line, c.l2.line), (32, 32, 32));
    }
    for sets in [
        ["core.fetch_queue=4", "core.fetch_width=4"],
        ["core.fetch_width=4", "core.fetch_queue=4"],
    ] {
        let c = accepted(&sets);
        assert_eq!((c.core.fetch_queue, c.core.fetch_width), (4, 4));
    }
    // the same values from a file are accepted too
    let path = std::env::temp_dir().join(format!("sim-set-all-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        "[l1i]\nline = 32\n[l1d]\nline = 32\n[l2]\nline = 32\n",
    )
    .unwrap();
    let f = Config::from_file(&path).unwrap();
    assert_eq!(f, accepted(&lines));
    // a file completed by overrides: `load` does not validate, `set_all` does
    std::fs::write(&path, "[l1i]\nline = 32\n").unwrap();
    assert!(Config::from_file(&path).is_err());
    let mut g = Config::load(&path).unwrap();
    g.set_all(["l1d.line=32", "l2.line=32"]).unwrap();
    assert_eq!(g, f);
    let _ = std::fs::remove_file(&path);

    // an illegal result is still an error, from the whole configuration
    let e = rejection(&["l1i.line=32", "l1d.line=32"]);
    assert!(
        e.contains(
            "`l1i.line` = 32, `l1d.line` = 32 and `l2.line` = 64 are illegal together: \
             the three line sizes must be equal"
        ),
        "{e}"
    );
    // a bad single assignment fails at once, naming it
    let e = rejection(&["l1i.line=32", "core.rob_entries=abc", "l2.line=32"]);
    assert!(e.contains("core.rob_entries=abc"), "{e}");
    let e = rejection(&["l2.nope=1"]);
    assert!(e.contains("l2.nope"), "{e}");
    let e = rejection(&["ideal.bpred=maybe"]);
    assert!(e.contains("ideal.bpred=maybe"), "{e}");
    let e = rejection(&["prefetch.kind=psychic"]);
    assert!(e.contains("prefetch.kind=psychic"), "{e}");
    // `set` alone checks types only
    let mut c = Config::default();
    c.set("l1i.line=32").unwrap();
    assert_eq!(c.l1i.line, 32);
    assert!(c.validate().is_err());
}

/// Bug 5: a number too large for the field's type is reported as such, with the
/// field's maximum.
#[test]
fn set_reports_numbers_too_large_for_the_field() {
    let mut c = Config::default();
    for (a, msg) in [
        (
            "core.rob_entries=99999999999",
            "99999999999 is too large for core.rob_entries (max 4294967295)",
        ),
        (
            "core.rob_entries=4294967296",
            "4294967296 is too large for core.rob_entries (max 4294967295)",
        ),
        (
            "core.watchdog_cycles=99999999999999999999999",
            "too large for core.watchdog_cycles (max 18446744073709551615)",
        ),
        (
            "l2.size=18446744073709551616",
            "too large for l2.size (max 18446744073709551615)",
        ),
        (
            "core.rob_entries=-3",
            "core.rob_entries takes a non-negative integer",
        ),
        (
            "core.rob_entries=abc",
            "core.rob_entries takes a non-negative integer",
        ),
        (
            "core.rob_entries=1.5",
            "core.rob_entries takes a non-negative integer",
        ),
    ] {
        let e = c.set(a).unwrap_err().to_string();
        assert!(e.contains(msg) && e.contains(a), "{a}: {e}");
    }
    assert_eq!(c, Config::default());
    // the largest value of the type is a value (legal or not is validate's business)
    c.set("core.rob_entries=4294967295").unwrap();
    assert_eq!(c.core.rob_entries, u32::MAX);
    c.set("core.watchdog_cycles=18446744073709551615").unwrap();
    assert_eq!(c.core.watchdog_cycles, u64::MAX);
    c.set("core.rob_entries=0064").unwrap();
    assert_eq!(c.core.rob_entries, 64);
}

/// Found on the way: a file section given in part took the *section type's*
/// defaults for its other keys (`[l2] latency = 12` made a 16 KB, 4-way L2 with 8
/// MSHRs; `[dtlb] miss_latency = 40` a 64-entry D-TLB), silently; the machine's
/// defaults are kept now.
#[test]
fn a_file_section_given_in_part_keeps_the_machine_defaults() {
    let dir = std::env::temp_dir();
    let id = std::process::id();
    let toml = dir.join(format!("sim-partial-{id}.toml"));
    let json = dir.join(format!("sim-partial-{id}.json"));
    std::fs::write(&toml, "[l2]\nlatency = 12\n[dtlb]\nmiss_latency = 40\n").unwrap();
    std::fs::write(
        &json,
        r#"{"l2": {"latency": 12}, "dtlb": {"miss_latency": 40}}"#,
    )
    .unwrap();
    let mut want = Config::default();
    want.l2.latency = 12;
    want.dtlb.miss_latency = 40;
    for p in [&toml, &json] {
        assert_eq!(Config::from_file(p).unwrap(), want, "{}", p.display());
    }
    // unknown keys and wrong types are still errors naming the key
    std::fs::write(&toml, "[l2]\nlatencyy = 12\n").unwrap();
    let e = Config::from_file(&toml).unwrap_err().to_string();
    assert!(e.contains("latencyy"), "{e}");
    std::fs::write(&json, r#"{"l2": {"latency": "fast"}}"#).unwrap();
    let e = Config::from_file(&json).unwrap_err().to_string();
    assert!(e.contains("fast"), "{e}");
    let _ = std::fs::remove_file(&toml);
    let _ = std::fs::remove_file(&json);
}

/// A configuration file may start with a UTF-8 byte-order mark (some editors
/// write one), in JSON as in TOML; the rest is read as usual.
#[test]
fn a_configuration_file_may_start_with_a_byte_order_mark() {
    for (ext, text) in [
        ("json", "{\"l2\": {\"latency\": 12}}"),
        ("toml", "[l2]\nlatency = 12\n"),
    ] {
        let path = std::env::temp_dir().join(format!("sim-bom-{}.{ext}", std::process::id()));
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        let c = Config::load(&path).unwrap_or_else(|e| panic!("{ext}: {e}"));
        assert_eq!(c.l2.latency, 12, "{ext}");
        assert_eq!(c.l2.size, Config::default().l2.size, "{ext}");
        std::fs::remove_file(&path).unwrap();
    }
}

/// A section given as an array (or any value but a table) is refused with its
/// key named: serde would read an array as the section's fields by position
/// and leave the rest at their type's defaults, so `l2 = []` silently made a
/// 16 KB L2 and `l2 = [2097152]` a 2 MB one with 4 ways and 2 cycles.
#[test]
fn a_section_that_is_not_a_table_is_refused() {
    for (ext, text, key) in [
        ("toml", "l2 = []\n", "`l2` is a section"),
        ("toml", "l2 = [2097152]\n", "`l2` is a section"),
        ("json", r#"{"l2": []}"#, "`l2` is a section"),
        (
            "json",
            r#"{"l2": {"latency": 12}, "core": [128]}"#,
            "`core` is a section",
        ),
        ("json", "[]", "expected a table of sections"),
        (
            "json",
            r#"[{},{},{},{},{"latency":12}]"#,
            "expected a table of sections",
        ),
    ] {
        let path = std::env::temp_dir().join(format!("sim-array-{}.{ext}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let e = Config::load(&path)
            .map(|c| format!("accepted: {c:?}"))
            .unwrap_or_else(|e| e.to_string());
        assert!(
            e.contains(key) && e.contains("found an array"),
            "{text}: {e}"
        );
        assert!(e.contains(&path.display().to_string()), "{e}");
        std::fs::remove_file(&path).unwrap();
    }
}

/// Keys the core does not model are refused rather than accepted and
/// ignored: an L1I hit latency other than 1 (the frontend's depth is
/// `core.frontend_stages`), and decode in dispatch's stage or a frontend too
/// short for fetch, decode and dispatch.
#[test]
fn knobs_the_core_would_ignore_are_refused() {
    for (sets, key) in [
        (&["l1i.latency=5"][..], "`l1i.latency` = 5"),
        (&["core.decode_stage=5"], "`core.decode_stage` = 5"),
        (
            &["core.frontend_stages=2", "core.decode_stage=2"],
            "`core.frontend_stages` = 2",
        ),
        (&["core.fetch_queue=4"], "`core.fetch_queue` = 4"),
    ] {
        let e = rejection(sets);
        assert!(e.contains(key), "{sets:?}: {e}");
    }
    accepted(&["l1i.latency=1"]);
    accepted(&["core.frontend_stages=3", "core.decode_stage=2"]);
    let c = accepted(&["core.fetch_queue=0", "core.frontend_stages=8"]);
    assert_eq!(c.core.fetch_queue_entries(), 28);
}

/// Each bounded key takes both ends of its range and is refused one past
/// either, the error naming the key and the value (the watchdog is raised so
/// that no latency meets it).
#[test]
fn each_bounded_key_takes_its_edges_and_is_refused_one_past_them() {
    const W: &str = "core.watchdog_cycles=1000000000";
    for (key, lo, hi, also) in [
        ("core.rob_entries", 2, 4096, &[][..]),
        ("core.fmt_rows", 2, 256, &[]),
        ("core.fetch_width", 1, 8, &[]),
        ("core.dispatch_width", 1, 8, &[]),
        ("core.retire_width", 1, 8, &[]),
        ("core.decode_width", 1, 64, &[]),
        ("core.issue_width", 1, 64, &[]),
        ("core.lsq_entries", 1, 4096, &[]),
        ("core.frontend_stages", 3, 64, &["core.decode_stage=2"]),
        ("core.decode_stage", 2, 4, &[]),
        ("core.fetch_queue", 8, 4096, &[]),
        ("latency.alu", 1, 1000, &[]),
        ("latency.mul", 1, 1000, &[]),
        ("latency.div", 1, 1000, &[]),
        ("latency.fp", 1, 1000, &[]),
        ("latency.branch", 1, 1000, &[]),
        ("latency.store", 1, 1000, &[]),
        ("latency.longlat_min", 2, 1000, &[]),
        ("l1i.mshrs", 1, 256, &[]),
        ("l1d.mshrs", 1, 256, &[]),
        ("l2.mshrs", 1, 256, &[]),
        ("l1d.latency", 1, 1000, &[]),
        ("l2.latency", 1, 1000, &[]),
        ("memory_latency", 1, 100_000, &[]),
        ("itlb.entries", 1, 1 << 20, &["itlb.ways=1"]),
        ("dtlb.entries", 1, 1 << 20, &["dtlb.ways=1"]),
        ("itlb.walkers", 1, 64, &[]),
        ("dtlb.walkers", 1, 64, &[]),
        ("itlb.miss_latency", 1, 100_000, &[]),
        ("dtlb.miss_latency", 1, 100_000, &[]),
        ("bpred.bimodal_bits", 1, 24, &[]),
        ("bpred.gshare_bits", 1, 24, &[]),
        ("bpred.chooser_bits", 1, 24, &[]),
        ("bpred.btb_ways", 1, 64, &[]),
        ("bpred.btb_entries", 1, 1 << 24, &["bpred.btb_ways=1"]),
        ("bpred.ras_entries", 1, 1024, &[]),
        ("prefetch.degree", 1, 16, &[]),
        ("prefetch.rpt_entries", 1, 4096, &[]),
    ] {
        for v in [lo, hi] {
            let set = format!("{key}={v}");
            let c = accepted(&[&[W, &set][..], also].concat());
            assert_eq!(c.value_text(key).unwrap(), v.to_string(), "{set}");
        }
        // one past either end (past a power-of-two range: the next power of two)
        let above = if key.ends_with("fmt_rows") || key.ends_with("rpt_entries") {
            hi * 2
        } else {
            hi + 1
        };
        for v in [lo - 1, above] {
            let set = format!("{key}={v}");
            let e = rejection(&[&[W, &set][..], also].concat());
            assert!(
                e.contains(&format!("`{key}` = {v} is illegal")),
                "{set}: {e}"
            );
        }
    }
    // a watchdog of 1000 cycles is legal for a machine that never stalls that long
    let fast = [
        "memory_latency=1",
        "itlb.miss_latency=1",
        "dtlb.miss_latency=1",
    ];
    accepted(&[&fast[..], &["core.watchdog_cycles=1000"]].concat());
    let e = rejection(&[&fast[..], &["core.watchdog_cycles=999"]].concat());
    assert!(
        e.contains("`core.watchdog_cycles` = 999 is illegal: at least 1000"),
        "{e}"
    );
    // the L1I's latency is 1 and no other legal latency
    let e = rejection(&["l1i.latency=2"]);
    assert!(
        e.contains("`l1i.latency` = 2 is illegal: it must be 1"),
        "{e}"
    );
    let e = rejection(&["l1i.latency=0"]);
    assert!(e.contains("`l1i.latency` = 0 is illegal: 1..=1000"), "{e}");
    // the derived fetch queue is legal at any width
    accepted(&["core.fetch_queue=0", "core.fetch_width=1"]);
    // powers of two only
    for set in ["core.fmt_rows=96", "prefetch.rpt_entries=96"] {
        let e = rejection(&[set]);
        assert!(e.contains("a power of two"), "{set}: {e}");
    }
}

/// A cache or TLB: lines (pages) a power of two in 4..=2^30, 1 to 64 ways of
/// any number, a size that is a whole number of sets, and a power of two of
/// sets; a BTB likewise (its sets a power of two, its ways any number).
#[test]
fn cache_tlb_and_btb_geometries_take_any_ways_and_power_of_two_sets() {
    let lines = |l: u64| {
        [
            format!("l1i.line={l}"),
            format!("l1d.line={l}"),
            format!("l2.line={l}"),
        ]
    };
    fn sets(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    // lines of 4 bytes and of 1 GiB (each cache a single line of one way)
    accepted(&sets(&lines(4)));
    let mut giant = lines(1 << 30).to_vec();
    for k in ["l1i", "l1d", "l2"] {
        giant.push(format!("{k}.size={}", 1u64 << 30));
        giant.push(format!("{k}.ways=1"));
    }
    let c = accepted(&sets(&giant));
    assert_eq!(c.l2.line, 1 << 30);
    for l in [2, 48, 1 << 31] {
        let mut v = lines(l).to_vec();
        if l == 1 << 31 {
            v.extend(["l1i.ways=1", "l1d.ways=1", "l2.ways=1"].map(String::from));
        }
        let e = rejection(&sets(&v));
        assert!(
            e.contains(&format!(
                "`l1i.line` = {l} is illegal: a power of two in 4..=2^30"
            )),
            "line {l}: {e}"
        );
    }
    for (sets_, msg) in [
        (&["l1d.ways=64"][..], None),
        (&["l1d.ways=3", "l1d.size=12288"], None),
        (&["l1d.ways=0"], Some("`l1d.ways` = 0 is illegal: 1..=64")),
        (&["l1d.ways=65"], Some("`l1d.ways` = 65 is illegal: 1..=64")),
        (
            &["l1d.size=0"],
            Some("`l1d.size` = 0 is illegal: a non-zero multiple of `l1d.line` * `l1d.ways` (64 * 4 = 256)"),
        ),
        (
            &["l1d.size=16448"],
            Some("`l1d.size` = 16448 is illegal: a non-zero multiple of `l1d.line` * `l1d.ways` (64 * 4 = 256)"),
        ),
        (
            &["l1d.ways=3", "l1d.size=18432"],
            Some("`l1d.size` = 18432 is illegal: `l1d.size` / `l1d.line` / `l1d.ways` (18432 / 64 / 3 = 96 sets) must be a power of two"),
        ),
        (&["dtlb.ways=3", "dtlb.entries=96"], None),
        (&["dtlb.page=4", "dtlb.ways=64", "dtlb.entries=64"], None),
        // the largest: 2^20 entries of 1 GiB pages (2^50 bytes, 2^18 sets)
        (&["dtlb.page=1073741824", "dtlb.entries=1048576"], None),
        (
            &["dtlb.page=2"],
            Some("`dtlb.page` = 2 is illegal: a power of two in 4..=2^30"),
        ),
        (&["dtlb.ways=65"], Some("`dtlb.ways` = 65 is illegal: 1..=64")),
        (
            &["dtlb.entries=102"],
            Some("`dtlb.entries` = 102 is illegal: a non-zero multiple of `dtlb.ways` (4)"),
        ),
        (
            &["dtlb.entries=96"],
            Some("`dtlb.entries` = 96 is illegal: `dtlb.entries` / `dtlb.ways` (96 / 4 = 24 sets) must be a power of two"),
        ),
        (&["bpred.btb_ways=3", "bpred.btb_entries=1536"], None),
        (
            &["bpred.btb_entries=2050"],
            Some("`bpred.btb_entries` = 2050 is illegal: a non-zero multiple of btb_ways"),
        ),
        (
            &["bpred.btb_entries=2064"],
            Some("`bpred.btb_entries` = 2064 is illegal: btb_entries / btb_ways a power of two"),
        ),
    ] {
        match msg {
            None => {
                accepted(sets_);
            }
            Some(m) => {
                let e = rejection(sets_);
                assert!(e.contains(m), "{sets_:?}: {e}");
            }
        }
    }
}

/// A configuration file of exactly `MAX_CONFIG_BYTES` is read to its last
/// byte; one byte more is refused before it is parsed.
#[test]
fn a_configuration_file_of_the_largest_size_is_read_whole_and_one_byte_more_is_refused() {
    let path = std::env::temp_dir().join(format!("sim-max-{}.toml", std::process::id()));
    // the value last, with no newline after it: a byte short reads 1
    let tail = "[l2]\nlatency = 12";
    let pad = MAX_CONFIG_BYTES as usize - tail.len() - 2;
    let text = format!("#{}\n{tail}", "x".repeat(pad));
    assert_eq!(text.len() as u64, MAX_CONFIG_BYTES);
    std::fs::write(&path, &text).unwrap();
    let c = Config::load(&path).unwrap();
    assert_eq!(c.l2.latency, 12, "the last byte read");
    std::fs::write(&path, format!("#x{}", &text[1..])).unwrap();
    let e = Config::load(&path).unwrap_err().to_string();
    assert!(
        e.contains(&format!("larger than {MAX_CONFIG_BYTES} bytes")),
        "{e}"
    );
    std::fs::remove_file(&path).unwrap();
}

/// The error names the largest term of the worst stall; of two as large, the
/// first of the chain (the refill's I-TLB walk before the load's memory access).
#[test]
fn the_watchdog_error_names_the_first_of_two_largest_terms() {
    let e = rejection(&["itlb.miss_latency=5000", "memory_latency=5000"]);
    assert!(e.contains("`itlb.miss_latency` = 5000 is illegal"), "{e}");
}
