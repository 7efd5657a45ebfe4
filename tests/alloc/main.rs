//! Allocations per cycle, counted by a global allocator that counts the
//! calls each thread makes (a thread of its own per test, so the tests
//! running beside it do not count). The architecture's invariant
//! (docs/ARCHITECTURE.md): `hw` allocates nothing per cycle. Measured here
//! on the bench stream (the realistic mix, seed 5) for both variants at
//! the default and at the largest parameters, after a first cycle that
//! may size buffers; and, as checks of the same design rule elsewhere,
//! `golden`'s step and the core simulator's step (with both units
//! attached) allocate nothing once their buffers have grown to the run's
//! steady size.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static CALLS: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    // `try_with`: a thread being torn down has no counter, and counts nothing
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        bump();
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        bump();
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        bump();
        unsafe { System.realloc(p, l, n) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Allocations (and reallocations) this thread makes while `f` runs.
fn allocations(f: impl FnOnce()) -> u64 {
    let before = CALLS.with(Cell::get);
    f();
    CALLS.with(Cell::get) - before
}

use events::{CounterUnit, CycleEvents, Params, Variant};

fn stream(p: Params, n: usize) -> Vec<CycleEvents> {
    cpistack::bench::stream(p, n, 5)
}

fn largest() -> Params {
    Params {
        fmt_rows: 256,
        rob_entries: 4096,
        ..Params::default()
    }
}

#[test]
fn hw_allocates_nothing_per_cycle() {
    for p in [Params::default(), largest()] {
        for v in [Variant::Fmt, Variant::Sfmt] {
            let p = p.with_variant(v);
            let evs = stream(p, 200_000);
            let mut u = hw::Unit::new(p).unwrap();
            u.step(&evs[0]);
            let n = allocations(|| {
                for ev in &evs[1..] {
                    u.step(ev);
                }
            });
            assert_eq!(
                n,
                0,
                "{v:?}, {p:?}: {n} allocations in {} cycles",
                evs.len() - 1
            );
            // the batch entry too
            let mut u = hw::Unit::new(p).unwrap();
            u.step(&evs[0]);
            let n = allocations(|| u.step_many(&evs[1..]));
            assert_eq!(n, 0, "{v:?} step_many: {n} allocations");
            assert!(u.view().error.is_none());
        }
    }
}

#[test]
fn golden_allocates_nothing_per_cycle_once_its_queue_has_grown() {
    for v in [Variant::Fmt, Variant::Sfmt] {
        let p = Params::default().with_variant(v);
        let evs = stream(p, 200_000);
        let mut u = golden::Unit::new(p).unwrap();
        // the first half sizes the queues to the stream's deepest occupancy
        let (warm, rest) = evs.split_at(100_000);
        for ev in warm {
            u.step(ev);
        }
        let n = allocations(|| {
            for ev in rest {
                u.step(ev);
            }
        });
        assert_eq!(n, 0, "{v:?}: {n} allocations in {} cycles", rest.len());
    }
}

/// The core keeps its buffers' capacity (each ROB slot's list of waiting
/// consumers, the replay queue after a squash), so it allocates only when
/// a buffer reaches a new high-water mark: measured, these are the slot
/// lists growing from 8 to 16 and 16 to 32 consumers, a few per 100 000
/// cycles. An allocation per cycle, per instruction or per squash would
/// be thousands here: the test holds the core to fewer than one per
/// 10 000 cycles over 400 000 cycles after a warm-up of 200 000.
#[test]
fn the_core_with_both_units_allocates_only_at_new_high_water_marks() {
    let cfg = sim::Config::default();
    for w in ["server", "mlp", "branchy", "chase", "fpmix"] {
        let mut core = sim::workload_core(&cfg, w, 1).unwrap();
        let p = cfg.unit_params();
        let mut f = hw::Unit::new(p.with_variant(Variant::Fmt)).unwrap();
        let mut s = hw::Unit::new(p.with_variant(Variant::Sfmt)).unwrap();
        let mut run = |cycles: u32| {
            allocations(|| {
                for _ in 0..cycles {
                    let ev = *core.step().unwrap();
                    f.step(&ev);
                    s.step(&ev);
                }
            })
        };
        let warm = run(200_000);
        let after = run(400_000);
        eprintln!("{w}: {warm} allocations in the first 200 k cycles, {after} in the 400 k after");
        assert!(
            after < 40,
            "{w}: {after} allocations in 400 k cycles after the warm-up"
        );
    }
}

/// The counter counts: what the zeros above rest on. An allocation, a
/// reallocation and a `Vec` grown by pushes are each seen, in this thread
/// only.
#[test]
fn the_counter_sees_this_threads_allocations_and_no_others() {
    let n = allocations(|| {
        let mut v: Vec<u64> = Vec::with_capacity(4);
        v.reserve_exact(64);
        std::hint::black_box(&v);
    });
    assert_eq!(n, 2);
    let n = allocations(|| {
        let mut v = Vec::new();
        for i in 0..1000u64 {
            v.push(i);
        }
        std::hint::black_box(&v);
    });
    assert!((5..=20).contains(&n), "{n}");
    let n = allocations(|| {
        std::thread::spawn(|| std::hint::black_box(vec![0u8; 100]))
            .join()
            .unwrap();
    });
    // spawning allocates in this thread; the child's vector is not counted here
    let spawn_only = allocations(|| std::thread::spawn(|| ()).join().unwrap());
    assert_eq!(n, spawn_only);
}
