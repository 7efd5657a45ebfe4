//! Random streams from `events::gen`: legal ones must keep the invariants of
//! spec 5 and agree with the protocol tracker (`events::gen::ProtocolState`, a
//! third reading of the protocol) on the ROB mirror and the rows; illegal ones
//! must be judged exactly as the tracker judges them. Every test prints its seeds.

use events::gen::{mutate_illegal, random_bundle, GenConfig, Generator, ProtocolState};
use events::{Counter, CounterUnit, CycleEvents, FetchStall, HeadCause, Params, Squash, Variant};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::Unit;

fn param_sets() -> Vec<Params> {
    let base = Params::default();
    let mut out = Vec::new();
    for variant in [Variant::Fmt, Variant::Sfmt] {
        out.push(base.with_variant(variant));
        out.push(Params {
            rob_entries: 8,
            fmt_rows: 2,
            local_bits: 3,
            global_bits: 8,
            variant,
            fetch_width: 2,
            dispatch_width: 2,
            retire_width: 3,
        });
        out.push(Params {
            rob_entries: 13,
            fmt_rows: 4,
            local_bits: 5,
            global_bits: 10,
            variant,
            ..base
        });
        out.push(Params {
            rob_entries: 32,
            fmt_rows: 16,
            local_bits: 1,
            global_bits: 64,
            variant,
            ..base
        });
    }
    out
}

/// Compare golden with the tracker after one bundle, and check spec 5.
fn check_against(u: &Unit, st: &ProtocolState, retired: u128, at: &str) {
    let v = u.view();
    let p = u.params();
    assert_eq!(v.error, None, "{at}");
    assert_eq!(v.rob_count, st.rob_count(), "{at}: rob_count");
    assert_eq!(v.rob_head, st.rob_head(), "{at}: rob_head");
    assert_eq!(v.rob_full, st.rob_full(), "{at}: rob_full");
    assert_eq!(
        v.dispatched_rows,
        st.dispatched_rows(),
        "{at}: dispatched rows"
    );
    assert_eq!(v.fetched_rows, st.fetched_rows(), "{at}: fetched rows");
    assert_eq!(v.free_rows, st.free_rows(), "{at}: free rows");
    assert!(v.dispatched_rows + v.fetched_rows < p.fmt_rows, "{at}");
    assert_eq!(v.refilling, st.refilling(), "{at}: refilling");
    assert_eq!(
        v.refill_pending,
        st.refill_pending(),
        "{at}: refill_pending"
    );
    let mut tracked = st.rows();
    let mut n = 0;
    u.for_each_row(&mut |age, r| {
        n += 1;
        if (age as u32) < v.dispatched_rows {
            let t = tracked.next().expect("tracker has the row");
            assert_eq!(
                (r.rob_id, r.mispredict, r.done),
                (t.rob_id, t.mispredict, t.done),
                "{at}: row {age}"
            );
        } else {
            assert_eq!(
                (r.rob_id, r.dispatched, r.mispredict, r.done),
                (0, false, false, false)
            );
            assert!((age as u32) < v.dispatched_rows + v.fetched_rows || r.penalty == 0);
        }
        assert!(r.penalty as u64 <= p.local_max());
    });
    assert_eq!(n, v.dispatched_rows + v.fetched_rows + 1, "{at}: live rows");
    if p.variant == Variant::Sfmt {
        let mut marked = 0;
        for age in 0..v.rob_count {
            let id = ((v.rob_head + age) % p.rob_entries) as u16;
            assert_eq!(u.imiss_bit(id), st.imiss(id), "{at}: imiss bit of {id}");
            marked += st.imiss(id) as u32;
        }
        assert_eq!(v.imiss_bits, marked, "{at}: imiss bits");
    }
    let mask = p.global_mask() as u128;
    assert_eq!(
        v.counters.get(Counter::Retired) as u128,
        retired & mask,
        "{at}: retired"
    );
    if p.variant == Variant::Fmt && v.counters.overflow == 0 {
        let comp: u64 = Counter::COMPONENTS.iter().map(|&c| v.counters.get(c)).sum();
        assert!(
            comp <= v.counters.get(Counter::Cycles),
            "{at}: charged twice: {v:?}"
        );
    }
}

#[test]
fn random_legal_streams_agree_with_the_protocol_tracker_and_keep_invariants() {
    for (i, p) in param_sets().into_iter().enumerate() {
        for (cfg_name, cfg) in [
            ("stress", GenConfig::stress()),
            ("realistic", GenConfig::realistic()),
        ] {
            let seed = 0x601d_0000 + i as u64;
            let mut gen = Generator::new(p, cfg, seed);
            let mut u = Unit::new(p).unwrap();
            let mut st = ProtocolState::new(p);
            let mut retired = 0u128;
            let mut saturated = false;
            let mut overflow = 0u16;
            for cycle in 0..6000 {
                let ev = gen.next().unwrap();
                let at = format!("params #{i} {cfg_name} seed {seed:#x} cycle {cycle} {ev:?}");
                u.step(&ev);
                st.apply(&ev);
                retired += ev.count_enable as u128 * ev.retired as u128;
                check_against(&u, &st, retired, &at);
                let v = u.view();
                assert!(v.saturated || !saturated, "{at}: saturated is sticky");
                assert_eq!(
                    v.counters.overflow & overflow,
                    overflow,
                    "{at}: sticky overflow"
                );
                saturated = v.saturated;
                overflow = v.counters.overflow;
            }
            println!("params #{i} {cfg_name} seed {seed:#x}: saturated {saturated}, overflow {overflow:#x}");
        }
    }
}

#[test]
fn no_mispredictions_and_no_fetch_stalls_leave_frontend_counters_zero() {
    let cfg = GenConfig {
        mispredict_rate: 0.0,
        l1i: events::gen::Episode::never(),
        l2i: events::gen::Episode::never(),
        itlb: events::gen::Episode::never(),
        imiss_after_restart: 0.0,
        ..GenConfig::stress()
    };
    for variant in [Variant::Fmt, Variant::Sfmt] {
        let p = Params::default().with_variant(variant);
        let seed = 77;
        let mut gen = Generator::new(p, cfg.clone(), seed);
        let mut u = Unit::new(p).unwrap();
        for _ in 0..20_000 {
            u.step(&gen.next().unwrap());
        }
        let c = u.view().counters;
        println!("{variant} seed {seed}: {c:?}");
        assert!(c.get(Counter::Retired) > 1000, "the stream does something");
        for k in [Counter::Bpred, Counter::L1i, Counter::L2i, Counter::Itlb] {
            assert_eq!(c.get(k), 0, "{variant} seed {seed}: {}", k.name());
        }
    }
}

#[test]
fn illegal_bundles_are_judged_like_the_protocol_tracker() {
    for (i, p) in param_sets().into_iter().enumerate() {
        let seed = 0xbad_0000 + i as u64;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for trial in 0..150 {
            let mut gen = Generator::new(p, GenConfig::stress(), seed + trial);
            let mut u = Unit::new(p).unwrap();
            let mut st = ProtocolState::new(p);
            let prefix = rng.gen_range(0..300);
            for _ in 0..prefix {
                let ev = gen.next().unwrap();
                u.step(&ev);
                st.apply(&ev);
            }
            let legal = gen.next().unwrap();
            let (bad, want) = if trial % 2 == 0 {
                mutate_illegal(&legal, &st, &mut rng)
            } else {
                let ev = random_bundle(&mut rng);
                match st.check(&ev) {
                    Ok(()) => continue,
                    Err(v) => (ev, v),
                }
            };
            let before = u.view();
            u.step(&bad);
            let at = format!("params #{i} seed {seed:#x} trial {trial} prefix {prefix}: {bad:?}");
            let got = u.view().error.unwrap_or_else(|| panic!("{at}: accepted"));
            assert_eq!(
                (got.bundle, got.field, got.rule),
                (prefix, want.field, want.rule),
                "{at}"
            );
            assert_eq!(u.view().counters, before.counters, "{at}");
            u.step(&legal);
            assert_eq!(u.accepted(), prefix, "{at}: later bundles ignored");
        }
    }
}

#[test]
fn random_bundles_on_a_live_unit_get_the_tracker_verdict() {
    // Along a legal stream, a random bundle (legal or not) probed on a copy of the
    // unit is accepted exactly when the tracker accepts it, else latched with the
    // tracker's field and rule.
    for (i, p) in param_sets().into_iter().enumerate() {
        let seed = 0x5eed_0000 + i as u64;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut gen = Generator::new(p, GenConfig::stress(), seed);
        let mut u = Unit::new(p).unwrap();
        let mut st = ProtocolState::new(p);
        let mut accepted = 0;
        for cycle in 0..3000u64 {
            let ev = gen.next().unwrap();
            // Half the probes: fully random; half: the legal bundle with one field
            // changed at random (often still legal).
            let probe_ev = if rng.gen_bool(0.5) {
                random_bundle(&mut rng)
            } else {
                perturb(&ev, &mut rng)
            };
            let mut probe = u.clone();
            probe.step(&probe_ev);
            let got = probe.view().error.map(|e| (e.bundle, e.field, e.rule));
            let want = st.check(&probe_ev).err().map(|v| (cycle, v.field, v.rule));
            assert_eq!(
                got, want,
                "params #{i} seed {seed:#x} cycle {cycle}: {probe_ev:?}"
            );
            accepted += got.is_none() as u32;
            u.step(&ev);
            st.apply(&ev);
        }
        println!("params #{i} seed {seed:#x}: {accepted} random bundles were legal");
    }
}

/// `ev` with one field replaced by a random small value.
fn perturb(ev: &CycleEvents, rng: &mut impl Rng) -> CycleEvents {
    let mut m = *ev;
    let small = |rng: &mut dyn rand::RngCore| (rng.next_u32() % 6) as u8;
    match rng.gen_range(0..9) {
        0 => m.fetched_branches = small(rng),
        1 => m.fe_squash = small(rng),
        2 => m.fe_redirect = !m.fe_redirect,
        3 => m.dispatched = small(rng),
        4 => m.dispatched_branches = 1 << small(rng),
        5 => m.retired = small(rng),
        6 => m.head = HeadCause::ALL[rng.gen_range(0..6)],
        7 => m.fetch_stall = FetchStall::ALL[rng.gen_range(0..4)],
        _ => {
            let x = (rng.next_u32() % 40) as u16;
            m.squash = if rng.gen_bool(0.5) {
                Squash::Mispredict(x)
            } else {
                Squash::Flush(x)
            }
        }
    }
    m
}

/// The checker's read-outs agree with the plain ones every cycle:
/// `rows_columns` with `for_each_row` (packed, column by column),
/// `imiss_live_words` with `imiss_bit` over the live ROB entries.
#[test]
fn packed_readouts_match_the_plain_ones() {
    use events::{RowView, META_DONE, META_MISPREDICT, ROW_COLUMNS};
    for (i, p) in param_sets().into_iter().enumerate() {
        let seed = 31 + i as u64;
        let mut u = Unit::new(p).unwrap();
        let mut cols = vec![0u32; ROW_COLUMNS * p.fmt_rows as usize];
        let mut words = vec![u64::MAX; (p.rob_entries as usize).div_ceil(64)];
        let (mut saw_imiss, mut saw_flags) = (false, false);
        for (c, ev) in Generator::new(p, GenConfig::stress(), seed)
            .take(3000)
            .enumerate()
        {
            u.step(&ev);
            let view = u.view();
            assert_eq!(view.error, None, "seed {seed}");
            cols.fill(u32::MAX);
            let n = u.rows_columns(&mut cols);
            let mut plain = Vec::new();
            u.for_each_row(&mut |_, r| plain.push(RowView::pack(&r)));
            let want: Vec<u32> = (0..ROW_COLUMNS)
                .flat_map(|k| plain.iter().map(move |r| r[k]))
                .collect();
            assert_eq!(n, plain.len(), "seed {seed} {p:?} cycle {c}");
            assert_eq!(
                &cols[..ROW_COLUMNS * n],
                &want[..],
                "seed {seed} {p:?} cycle {c}"
            );
            u.imiss_live_words(&mut words);
            let mut want = vec![0u64; words.len()];
            for k in 0..view.rob_count {
                let id = (view.rob_head + k) % p.rob_entries;
                if u.imiss_bit(id as u16) {
                    want[id as usize / 64] |= 1 << (id % 64);
                }
            }
            assert_eq!(words, want, "seed {seed} {p:?} cycle {c}");
            saw_imiss |= want.iter().any(|&w| w != 0);
            saw_flags |= plain
                .iter()
                .any(|r| r[1] & (META_MISPREDICT | META_DONE) != 0);
        }
        assert!(saw_flags, "seed {seed} {p:?}: stream too tame");
        assert_eq!(saw_imiss, p.variant == Variant::Sfmt, "seed {seed} {p:?}");
    }
}
