//! The unit's registers and its next-state logic.
//!
//! # Registers (`q`) and their widths
//!
//! With `F = fmt_rows`, `E = rob_entries`, `L = local_bits`, `G = global_bits`:
//!
//! | register | width | where |
//! |---|---|---|
//! | `head`, `dtail`, `ftail` | `log2(F) + 1` (one wrap bit) | [`Regs`] |
//! | `rob_head`, `rob_tail` | `ceil(log2(E))` | [`Regs`] |
//! | `rob_count` | `ceil(log2(E + 1))` | [`Regs`] |
//! | `refilling`, `refill_pending`, `saturated` | 1 each | [`Regs`] |
//! | `shared_i[3]` (sFMT only) | `L` each, saturating | [`Regs`] |
//! | `counters[10]` | `G` each, wrapping | [`Regs`] |
//! | `overflow` | 10 (one sticky bit per counter) | [`Regs`] |
//! | error latch | valid + 64-bit bundle index + 4-bit field + 4-bit rule | [`Latch::error`] |
//! | bundle counter | 64 | [`Latch::bundles`] |
//! | row `rob_id` | `ceil(log2(E))` per row | [`Unit::row_rob_id`] |
//! | row `penalty` | `L` per row, saturating | [`Unit::row_penalty`] |
//! | row `l1i`, `l2i`, `itlb` (FMT only) | `L` each per row, saturating | [`Unit::row_icounts`] |
//! | row `mispredict`, `done` | 1 per row, a [`RowBits`] vector each | [`Unit::mispredict_bits`], [`Unit::done_bits`] |
//! | I-miss bit per ROB entry (sFMT only) | 1 per ROB id, a [`RobBits`] vector | [`Unit::imiss_vec`] |
//!
//! Values are held in the smallest machine word that fits (`u16`, `u32`, `u64`)
//! and are always kept inside their width: pointers are masked to `log2(F) + 1`
//! bits, ROB ids stay below `E`, locals never pass `2^L - 1`, globals are masked
//! to `G` bits.
//!
//! # The circular buffers: full and empty
//!
//! The row table uses the **extra wrap bit** rule. A pointer's physical row is its
//! low `log2(F)` bits; distances `a - b` are taken modulo `2F` (the pointer width),
//! so `ftail == head` (same wrap bit) means "no branch row in flight" and
//! `ftail - head == F` would mean all rows taken. The unit never lets it get there:
//! one row, `ftail`, is always the accumulation row, so at most `F - 1` rows are
//! dispatched or fetched, `free_rows = F - 1 - (ftail - head)`, and the table is
//! *full* (no branch may be fetched) when `free_rows == 0`. Dispatched rows are
//! `[head, dtail)`, fetched rows `[dtail, ftail)`.
//!
//! The ROB mirror uses an **occupancy counter**: `rob_head` (oldest id),
//! `rob_tail` (next id to allocate) and `rob_count`; it is empty when
//! `rob_count == 0` and full (`rob_full`) when `rob_count == E`, so `E` need not
//! be a power of two.
//!
//! # One clock cycle, and why in-place row updates are a pure next state
//!
//! [`Unit::step`] first checks the whole bundle against the current state `S`
//! (spec section 6, [`Unit::check`], which reads only and writes nothing). A
//! failing bundle latches the error and changes nothing else. Otherwise the
//! scalar registers are computed as `let mut d = q;` followed by the spec's phases
//! 4.1 (counting, reading `S`), 4.2 retire, 4.3 fetch and redirect, 4.4 dispatch,
//! 4.5 squash, and committed at the end (`q = d`).
//!
//! The spec defines the cycle as that sequence: each phase starts from the result
//! of the previous one (a branch retiring this cycle is charged the penalty it was
//! counted this cycle in 4.1; a redirect zeroes a stall counted in 4.1; a squash
//! overrides this cycle's dispatch). The row arrays are therefore updated in
//! place, phase by phase, in that order. This equals the pure function
//! `next(S, I)` because (a) every value phase *k* reads is either a register of `S`
//! that no earlier phase writes (the pointer, flag and ROB-mirror values 4.1 uses
//! are read from `q`, which is not written until commit) or a value the spec
//! defines as the result of phases `< k`; (b) the only row a phase writes is one
//! that a later phase reads as "the result so far"; (c) nothing that fails can
//! happen after the first write, since every protocol check is done beforehand on
//! `S`, so a cycle either commits completely or not at all. The row search for
//! `squash` is also done in the check, on `S`; rows of `S`'s dispatched region are
//! not rewritten by 4.1-4.4 (4.1 only increments counters, 4.2 only moves `head`,
//! 4.3 zeroes rows at or after `S.dtail`, 4.4 writes `rob_id` of rows at or after
//! `S.dtail`), so the index found on `S` is still the row to mark in 4.5.
//!
//! # Speed
//!
//! The per-cycle penalty increment (4.1) builds, per 64-row word, the mask
//! `dispatched & !done` (and `& !mispredict` in a cycle that dispatches, or an
//! FMT stall cycle: docs/spec-decisions.md) and applies
//! a saturating `+1` to the `penalty` register of every row in it. The
//! `penalty` registers are one contiguous array, so with vector instructions
//! (found at run time, [`Kernel`]) this is the hardware's parallel
//! incrementers, with no branch on the data: on AVX-512 four masked vector
//! adds of 16 rows, on AVX2 eight compare-and-add steps of 8 rows, then a
//! `min` with `2^L - 1` and one test for a lost count. The portable kernel
//! walks the set bits instead. All are the same next-state function (tests
//! run every kernel the CPU has on the same streams). On a machine without
//! AVX-512 (AMD EPYC, Zen 3) the AVX2 kernel took a step from 36.5 to 29.8
//! ns (docs/performance.md). The retirement walk compares the ROB age of the
//! oldest dispatched rows with `retired` (usually one comparison says "none").
//! Retire, fetch and dispatch loop over at most 8 items; the squash row search
//! (rule 9 and the `n` of 4.5), the squash itself and sFMT's clearing commits
//! are `#[cold]` functions, so the common cycle stays compact. `apply` is
//! monomorphised on the number of 64-bit row words (1, 2 or 4), the variant
//! and the kernel; [`CounterUnit::step_many`] runs a whole batch inside one
//! kernel call, and [`CounterUnit::step`] is one indirect call of the
//! one-cycle form chosen in [`Unit::new`] (`Unit::pick_step`; before, each
//! `step` tested the kernel and matched the parameters: 4-6 % of a step).
//! Splitting the cycle into eight forms by which of retire, fetch and
//! dispatch have work (one jump per bundle instead of three branches) was
//! measured 6 % slower and not kept. Registers are updated in place: copying
//! a ~110-byte `Regs` in and out every cycle cost about a third of the time
//! (store-forwarding stalls). For the same reason a pointer register is read
//! at its own width where the compiler would load it together with a
//! neighbour stored narrowly just before (`ftail` beside `rob_head`; `head`
//! beside `dtail`): such a load waits until both stores reach the cache. The
//! one-cycle function of each kernel only tests for a quiet bundle and jumps
//! to the quiet or the general path, so that neither pays the other's
//! register saves;
//! ROB ids wrap by a mask when `rob_entries` is a power of two. Nothing
//! allocates after [`Unit::new`].
//!
//! A *quiet* bundle (nothing retires, is fetched, dispatched, redirected or
//! squashed: the cycles of a stalled or idle core) takes a short path, one test
//! of the OR of those fields: rule 3 is the only rule such a bundle can break,
//! and 4.1 the only phase with work to do. On a stream of idle cycles a step
//! costs 8.5 ns instead of 12.3 ns, and `cpistack run` is 9-15 % faster on
//! memory-bound workloads (`mlp`, `dtlb`, `chase`, `l1d`), where the two
//! units see long stalls; on the benchmark's mix (37 % quiet cycles, in runs)
//! it is neutral (docs/performance.md).
//!
//! Measured and rejected (each slower on the benchmark stream, where the host's
//! predictor learns the generator's patterns better than expected): a
//! branch-free first step of the retirement walk, a branch-free dispatch of the
//! first branch, unconditional retire updates, the eight rule checks folded
//! into one flag before a single branch, and a vector form of the retirement
//! walk (one age comparator per row).
//!
//! # What `view` and the row read-out cost
//!
//! The lock-step checker reads the view and every live row every cycle.
//! [`CounterUnit::view`] does not walk the rows. FMT's pending I-sums (the row
//! I-counters over the live rows, spec 4.6) and sFMT's count of I-miss bits are
//! kept by **observer logic** (`Obs`), running sums that the next-state logic
//! updates with each stall count, retirement and redirect (and recomputes from
//! the rows in the rare squash cycles); they are not registers of the unit and
//! do not count in [`crate::cost`]. Debug builds check them against a full
//! recount at every `view`. The pending `bpred` is summed at `view` time over the
//! set `mispredict` bits of the dispatched region (one or two rows in practice):
//! keeping it as a running sum put a loop into the per-cycle penalty increment and
//! cost the standalone unit about 3% (measured), more than the walk costs the
//! checker. [`CounterUnit::rows_columns`] reads the live rows as columns,
//! one per register array, each in one or two contiguous runs (the table
//! wraps) moved in whole blocks of 8 words (a loop of moves would become a
//! library `memcpy` call per run, which costs more than these short runs),
//! then sets the `dispatched`, `mispredict` and `done` bits of `meta`. Up to
//! `SHORT_ROWS` (24) live rows, the common case, it moves a fixed 3 blocks a
//! run whatever the row count and sets `dispatched` on the way, so that it
//! has no branch on the row count (which changes every few cycles): a step
//! and its read-out, 66 -> 57 ns (scratch driver, the AVX2 EPYC). The
//! read-out runs under the unit's kernel; on AVX-512 with one row word it
//! moves each column in vector blocks of 16 rows, and with 64 rows it loads
//! the penalties in the incrementers' own blocks and picks the lanes by a
//! two-block permute (a load across two of their stores could not be
//! forwarded): a step with its view, packing and read-out 69 -> 57 ns on
//! the AVX-512 EPYC (docs/performance.md).

use bitvec::prelude::*;
use events::{
    Counter, CounterUnit, Counters, CycleEvents, FetchStall, Field, HeadCause, ParamError, Params,
    Pending, ProtocolError, RowView, Squash, UnitView, Variant, META_DISPATCHED, META_DONE,
    META_MISPREDICT, NUM_COUNTERS, ROW_COLUMNS,
};

/// Largest `fmt_rows` (spec section 2).
pub const MAX_ROWS: usize = 256;
/// Largest `rob_entries` (spec section 2).
pub const MAX_ROB: usize = 4096;
const ROW_WORDS: usize = MAX_ROWS / 64;
const ROB_WORDS: usize = MAX_ROB / 64;

/// One bit per row (`mispredict`, `done`); bit `i` is physical row `i`.
pub type RowBits = BitArray<[u64; ROW_WORDS], Lsb0>;
/// One bit per ROB id (sFMT's I-miss bits); bit `i` is ROB id `i`.
pub type RobBits = BitArray<[u64; ROB_WORDS], Lsb0>;

/// The scalar registers of the unit (`q`). Widths in the module doc; every value
/// is kept inside its width.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Regs {
    /// Oldest dispatched row (dispatch head); `log2(F) + 1` bits with the wrap bit.
    pub head: u16,
    /// One past the youngest dispatched row; `log2(F) + 1` bits.
    pub dtail: u16,
    /// The accumulation row (fetch pointer); `log2(F) + 1` bits.
    pub ftail: u16,
    /// ROB mirror: id of the oldest entry; `ceil(log2(E))` bits.
    pub rob_head: u16,
    /// ROB mirror: next id to allocate; `ceil(log2(E))` bits.
    pub rob_tail: u16,
    /// ROB mirror: occupancy `0..=E`; `ceil(log2(E + 1))` bits.
    pub rob_count: u16,
    /// A misprediction was resolved and no instruction has dispatched since.
    pub refilling: bool,
    /// A mispredicted branch committed before the refill ended: `bpred` counts on.
    pub refill_pending: bool,
    /// sFMT's shared I-counters `[l1i, l2i, itlb]`; `L` bits each (0 in FMT).
    pub shared_i: [u32; 3],
    /// Global counters in [`Counter`] order; `G` bits each.
    pub counters: [u64; NUM_COUNTERS],
    /// Sticky overflow flag per global counter, bit [`Counter::idx`].
    pub overflow: u16,
    /// Sticky: some local counter was asked to count past `2^L - 1`.
    pub saturated: bool,
}

/// The error latch and the bundle counter (a block of its own beside [`Regs`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Latch {
    /// The first protocol violation since reset (valid bit = `Some`).
    pub error: Option<ProtocolError>,
    /// Bundles accepted since reset (the index of the next bundle).
    pub bundles: u64,
}

/// Observer logic beside the unit (not part of its storage, see [`crate::cost`]):
/// running sums of what the rows hold, kept up to date by the next-state logic so
/// that [`CounterUnit::view`] reads them instead of walking the rows. In
/// hardware these are the adder trees that would drive the pending-sum outputs;
/// here they are updated by the increments and the row retirements/drops of each
/// cycle (and recomputed from the rows in the rare squash cycles). Debug builds
/// check them against a full recount at every `view`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Obs {
    /// FMT: `[l1i, l2i, itlb]` summed over every live row, the accumulation row included.
    pend_i: [u64; 3],
    /// sFMT: the number of I-miss bits set.
    imiss_count: u32,
}

/// Per-row registers. Only physical rows `0..F` are used.
///
/// One array per register kind (`penalty`, `rob_id`, and FMT's `l1i`, `l2i`,
/// `itlb`), each holding a value inside its width (`rob_id`: `ceil(log2(E))`
/// bits; the others `L` bits, saturating). The `penalty` array is contiguous so
/// that the per-cycle increment of every counting row is a handful of masked
/// vector adds (one per 16 rows), the software form of the per-row
/// incrementers; every array is read out for the lock-step checker with block
/// copies.
#[derive(Clone)]
#[repr(C, align(64))]
struct Rows {
    /// Each array has [`ROW_PAD`] words after its `MAX_ROWS` rows (always 0).
    pen: [u32; MAX_ROWS + ROW_PAD],
    rid: [u32; MAX_ROWS + ROW_PAD],
    /// `[l1i, l2i, itlb]`, one array each.
    ic: [[u32; MAX_ROWS + ROW_PAD]; 3],
    mispredict: RowBits,
    done: RowBits,
}

impl Rows {
    fn zeroed() -> Self {
        Self {
            pen: [0; MAX_ROWS + ROW_PAD],
            rid: [0; MAX_ROWS + ROW_PAD],
            ic: [[0; MAX_ROWS + ROW_PAD]; 3],
            mispredict: BitArray::ZERO,
            done: BitArray::ZERO,
        }
    }
    #[inline(always)]
    fn zero(&mut self, r: usize) {
        let r = r & (MAX_ROWS - 1);
        self.pen[r] = 0;
        self.rid[r] = 0;
        for a in &mut self.ic {
            a[r] = 0;
        }
        put_bit(&mut self.mispredict.data, r, false);
        put_bit(&mut self.done.data, r, false);
    }
    #[inline(always)]
    fn penalty(&self, r: usize) -> u32 {
        self.pen[r & (MAX_ROWS - 1)]
    }
    #[inline(always)]
    fn rob_id(&self, r: usize) -> u16 {
        self.rid[r & (MAX_ROWS - 1)] as u16
    }
    #[inline(always)]
    fn set_rob_id(&mut self, r: usize, id: u16) {
        self.rid[r & (MAX_ROWS - 1)] = id as u32;
    }
    /// `[l1i, l2i, itlb]`.
    #[inline(always)]
    fn icnt(&self, r: usize) -> [u32; 3] {
        let r = r & (MAX_ROWS - 1);
        [self.ic[0][r], self.ic[1][r], self.ic[2][r]]
    }
}

/// The per-row penalty incrementers of 64 rows (one row-vector word): a
/// saturating `+1` of `pen[i]` for every set bit `i` of `m`; returns whether a
/// row asked to count was already at `max` (the count is lost, spec 2).
/// Portable form: a walk over the set bits.
#[inline(always)]
fn pen_inc_portable(pen: &mut [u32; 64], m: u64, max: u32) -> bool {
    let mut k = m;
    let mut lost = 0u32;
    while k != 0 {
        let r = (k.trailing_zeros() & 63) as usize;
        let p = pen[r];
        let at_max = (p == max) as u32;
        pen[r] = p + (at_max ^ 1);
        lost |= at_max;
        k &= k - 1;
    }
    lost != 0
}

/// [`pen_inc_portable`] with AVX-512: four masked compare-and-add steps of 16
/// rows each, no branch on the data.
///
/// # Safety
/// The CPU must support the features of [`Kernel::Avx512`] (checked once, [`Kernel::supported`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi1,bmi2,lzcnt,popcnt")]
#[inline]
unsafe fn pen_inc_avx512(pen: &mut [u32; 64], m: u64, max: u32) -> bool {
    use std::arch::x86_64::*;
    let maxv = _mm512_set1_epi32(max as i32);
    let one = _mm512_set1_epi32(1);
    if max == u32::MAX {
        // 32-bit locals: `+1` would wrap, so the rows at the maximum are masked off.
        let mut lost = 0u16;
        for j in 0..4 {
            let k = (m >> (16 * j)) as u16;
            let ptr = pen.as_mut_ptr().add(16 * j);
            // SAFETY: `ptr .. ptr + 16` lies inside `pen` (j < 4); unaligned access.
            let p = _mm512_loadu_si512(ptr as *const _);
            let ok = _mm512_mask_cmpneq_epu32_mask(k, p, maxv);
            lost |= k & !ok;
            _mm512_storeu_si512(ptr as *mut _, _mm512_mask_add_epi32(p, ok, p, one));
        }
        return lost != 0;
    }
    // `max < 2^32 - 1`: `p + 1 <= max + 1` cannot wrap, so the saturating
    // increment is `min(p + inc, max)`, and a count was lost iff some `p + inc`
    // passed `max` (one test after the four blocks).
    let mut hi = _mm512_setzero_si512();
    for j in 0..4 {
        let k = (m >> (16 * j)) as u16;
        let ptr = pen.as_mut_ptr().add(16 * j);
        // SAFETY: `ptr .. ptr + 16` lies inside `pen` (j < 4); unaligned access.
        let p = _mm512_loadu_si512(ptr as *const _);
        let q = _mm512_add_epi32(p, _mm512_maskz_mov_epi32(k, one));
        hi = _mm512_max_epu32(hi, q);
        _mm512_storeu_si512(ptr as *mut _, _mm512_min_epu32(q, maxv));
    }
    _mm512_cmpgt_epu32_mask(hi, maxv) != 0
}

/// [`pen_inc_portable`] with AVX2: eight masked compare-and-add steps of 8
/// rows each, no branch on the data. Row `8j + i` is counted when bit `i` of
/// byte `j` of `m` is set: the byte is broadcast, ANDed with `1 << i` per lane
/// and compared, which gives all-ones lanes (`-1`) where `+1` is due.
///
/// # Safety
/// The CPU must support AVX2 (checked once, [`Kernel::supported`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn pen_inc_avx2(pen: &mut [u32; 64], m: u64, max: u32) -> bool {
    use std::arch::x86_64::*;
    let maxv = _mm256_set1_epi32(max as i32);
    let bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    if max == u32::MAX {
        // 32-bit locals: `+1` would wrap, so the rows at the maximum are masked off.
        let mut lost = _mm256_setzero_si256();
        for j in 0..8 {
            let b = _mm256_set1_epi32((m >> (8 * j)) as u8 as i32);
            let sel = _mm256_cmpeq_epi32(_mm256_and_si256(b, bit), bit);
            let ptr = pen.as_mut_ptr().add(8 * j);
            // SAFETY: `ptr .. ptr + 8` lies inside `pen` (j < 8); unaligned access.
            let p = _mm256_loadu_si256(ptr as *const _);
            let at_max = _mm256_cmpeq_epi32(p, maxv);
            lost = _mm256_or_si256(lost, _mm256_and_si256(at_max, sel));
            let inc = _mm256_andnot_si256(at_max, sel);
            _mm256_storeu_si256(ptr as *mut _, _mm256_sub_epi32(p, inc));
        }
        return _mm256_testz_si256(lost, lost) == 0;
    }
    // `max < 2^32 - 1`: `p + 1 <= max + 1` cannot wrap, so the saturating
    // increment is `min(p + inc, max)`, and a count was lost iff some `p + inc`
    // passed `max` (one test after the eight blocks).
    let mut hi = _mm256_setzero_si256();
    for j in 0..8 {
        let b = _mm256_set1_epi32((m >> (8 * j)) as u8 as i32);
        let sel = _mm256_cmpeq_epi32(_mm256_and_si256(b, bit), bit);
        let ptr = pen.as_mut_ptr().add(8 * j);
        // SAFETY: `ptr .. ptr + 8` lies inside `pen` (j < 8); unaligned access.
        let p = _mm256_loadu_si256(ptr as *const _);
        let q = _mm256_sub_epi32(p, sel);
        hi = _mm256_max_epu32(hi, q);
        _mm256_storeu_si256(ptr as *mut _, _mm256_min_epu32(q, maxv));
    }
    // lost iff max(hi, max) != max
    let ok = _mm256_cmpeq_epi32(_mm256_max_epu32(hi, maxv), maxv);
    _mm256_movemask_epi8(ok) != -1
}

/// Words of padding after each row array, so that the row read-out may read
/// whole blocks past a run's end ([`copy_blocks`]: up to 7 words;
/// [`copy_blocks_flagged`]: up to `SHORT_ROWS - 1`); what a block holds past its run
/// is written over by the next run or column.
const ROW_PAD: usize = SHORT_ROWS;

/// Live rows up to which the row read-out takes its fixed form: always
/// `SHORT_ROWS / 8` blocks a run, so that it has no branch on the row count
/// (which changes every few cycles); the common case (about 18 live rows in
/// the bench stream).
const SHORT_ROWS: usize = 24;

/// Words past its `ROW_COLUMNS * n` that [`CounterUnit::rows_columns`] needs
/// in `out` (and may write) for its fixed form: a caller that reads the rows
/// out every cycle gives this much room (with less, a slower form runs).
pub const ROW_SPILL: usize = SHORT_ROWS;

/// `blocks` blocks of 8 words from `src` to `dst`, for the short runs of the
/// row read-out: at most 8 predicated block moves, not a loop, which the
/// compiler would turn into a library `memcpy` call (it costs more than these
/// one to three moves).
///
/// # Safety
/// `blocks <= 8`, and `8 * blocks` words are readable at `src`, writable at
/// `dst`, and the two regions do not overlap.
#[inline(always)]
unsafe fn copy_blocks(dst: *mut u32, src: *const u32, blocks: usize) {
    debug_assert!(blocks <= 8);
    let (d, s) = (dst as *mut [u32; 8], src as *const [u32; 8]);
    for j in 0..8 {
        if j < blocks {
            // SAFETY: block `j < blocks`, inside both regions (the caller's
            // contract).
            unsafe { d.add(j).write_unaligned(s.add(j).read_unaligned()) };
        }
    }
}

/// `SHORT_ROWS / 8` blocks of 8 words from `src` to `dst`, the words going
/// to ages `age0..` (`dst[i]` is the row at age `age0 + i`) ORed with `flag`
/// where that age is below `nd`: the fixed form of the row read-out, with
/// `meta`'s `dispatched` bit set on the way.
///
/// # Safety
/// `SHORT_ROWS` words are readable at `src`, writable at `dst`, and the two
/// regions do not overlap.
#[inline(always)]
unsafe fn copy_blocks_flagged(dst: *mut u32, src: *const u32, age0: usize, nd: usize, flag: u32) {
    let (d, s) = (dst as *mut [u32; 8], src as *const [u32; 8]);
    // 32-bit lanes (SSE2 compares them; 64-bit ones it has to emulate).
    let (age0, nd) = (age0 as i32, nd as i32);
    for j in 0..SHORT_ROWS / 8 {
        // SAFETY: block `j < SHORT_ROWS / 8`, inside both regions (the
        // caller's contract).
        let mut v = unsafe { s.add(j).read_unaligned() };
        for (i, x) in v.iter_mut().enumerate() {
            *x |= flag & (((age0 + 8 * j as i32 + i as i32) < nd) as u32).wrapping_neg();
        }
        unsafe { d.add(j).write_unaligned(v) };
    }
}

/// Clear every I-miss bit (the first `words` words hold them all).
#[inline]
fn clear_imiss(imiss: &mut RobBits, words: usize) {
    imiss.data[..words].fill(0);
}

/// Bit `i` of a raw bit vector (the index is taken modulo the vector's length).
#[inline(always)]
fn get_bit<const N: usize>(words: &[u64; N], i: usize) -> bool {
    let i = i & (64 * N - 1);
    words[i >> 6] >> (i & 63) & 1 != 0
}

/// Write bit `i` of a raw bit vector (the index is taken modulo its length).
#[inline(always)]
fn put_bit<const N: usize>(words: &mut [u64; N], i: usize, v: bool) {
    let i = i & (64 * N - 1);
    let w = &mut words[i >> 6];
    *w = (*w & !(1u64 << (i & 63))) | ((v as u64) << (i & 63));
}

/// Whether nothing retires, is fetched, dispatched, redirected or squashed in
/// `ev` (one test of the OR of the fields, no branch per field).
#[inline(always)]
fn quiet(ev: &CycleEvents) -> bool {
    (ev.retired
        | ev.fetched_branches
        | ev.dispatched
        | ev.dispatched_branches
        | ev.dispatched_imiss
        | ev.fe_squash
        | ev.fe_redirect as u8
        | ev.squash.kind_bits())
        == 0
}

/// Register widths in bits for a parameter set (for tracing and cost).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Widths {
    /// `head`, `dtail`, `ftail`: `log2(fmt_rows) + 1`.
    pub ptr: u32,
    /// Row index: `log2(fmt_rows)`.
    pub row: u32,
    /// ROB id (`rob_id`, `rob_head`, `rob_tail`): `ceil(log2(rob_entries))`.
    pub rob_id: u32,
    /// `rob_count`: `ceil(log2(rob_entries + 1))`.
    pub rob_count: u32,
    /// Local counters.
    pub local: u32,
    /// Global counters.
    pub global: u32,
    /// Error latch bundle index and bundle counter.
    pub bundle: u32,
}

impl Widths {
    pub fn of(p: &Params) -> Self {
        Self {
            ptr: p.row_bits() + 1,
            row: p.row_bits(),
            rob_id: p.rob_id_bits(),
            rob_count: u32::BITS - p.rob_entries.leading_zeros(),
            local: p.local_bits,
            global: p.global_bits,
            bundle: 64,
        }
    }
}

/// Constants derived from the parameters once.
#[derive(Copy, Clone, Debug)]
struct Cfg {
    fmt: bool,
    rows: u16,
    row_mask: u16,
    ptr_mask: u16,
    /// 64-bit words of a row vector in use.
    words: usize,
    rob_entries: u16,
    /// `rob_entries - 1` when `rob_entries` is a power of two (ids wrap by a
    /// mask), else 0.
    rob_mask: u16,
    /// 64-bit words of the I-miss vector in use.
    rob_words: usize,
    local_max: u32,
    gmask: u64,
    fetch_width: u8,
    dispatch_width: u8,
    retire_width: u8,
    kernel: Kernel,
}

impl Cfg {
    #[inline]
    fn dist(&self, a: u16, b: u16) -> u16 {
        a.wrapping_sub(b) & self.ptr_mask
    }
    #[inline]
    fn padd(&self, a: u16, n: u16) -> u16 {
        a.wrapping_add(n) & self.ptr_mask
    }
    #[inline]
    fn phys(&self, p: u16) -> usize {
        (p & self.row_mask) as usize
    }
    /// `(a - b) mod E` for `a, b < E`.
    #[inline]
    fn rob_sub(&self, a: u16, b: u16) -> u16 {
        if self.rob_mask != 0 {
            return a.wrapping_sub(b) & self.rob_mask;
        }
        let d = a.wrapping_sub(b);
        if d >= self.rob_entries {
            d.wrapping_add(self.rob_entries)
        } else {
            d
        }
    }
    /// `(a + n) mod E` for `a < E`, `n <= E`.
    #[inline]
    fn rob_add(&self, a: u16, n: u16) -> u16 {
        if self.rob_mask != 0 {
            return a.wrapping_add(n) & self.rob_mask;
        }
        let s = a + n;
        if s >= self.rob_entries {
            s - self.rob_entries
        } else {
            s
        }
    }

    /// Word `w` of the mask of rows in `[from, to)` (pointers, circular).
    #[inline(always)]
    fn region_word<const W: usize>(&self, from: u16, to: u16, w: usize) -> u64 {
        if W == 1 {
            // At most 64 rows: a rotate inside `rows` bits. `len < rows`.
            let len = self.dist(to, from) as u32;
            let s = self.phys(from) as u32;
            let m = (1u64 << len) - 1;
            return if self.rows == 64 {
                m.rotate_left(s)
            } else {
                // len + s < 2 * rows <= 64
                let m = m << s;
                (m | (m >> self.rows)) & ((1u64 << self.rows) - 1)
            };
        }
        let len = self.dist(to, from) as usize;
        let s = self.phys(from);
        let rows = self.rows as usize;
        if s + len <= rows {
            seg_word(s, s + len, w)
        } else {
            seg_word(s, rows, w) | seg_word(0, s + len - rows, w)
        }
    }
}

/// What the check found out about a legal bundle, reused by the next-state logic.
#[derive(Copy, Clone, Debug, Default)]
struct Plan {
    /// Dispatched rows whose branch retires this cycle (spec 4.2 step 3).
    ret_rows: u32,
    /// Dispatched rows remaining after this cycle's retirement, up to (mispredict:
    /// and including) the squashed instruction: the `n` of spec 4.5.
    squash_n: u32,
    /// Physical row of the branch named by `mispredict(x)`.
    squash_row: u32,
}

/// The bit-accurate FMT/sFMT counter unit.
#[derive(Clone)]
pub struct Unit {
    params: Params,
    cfg: Cfg,
    q: Regs,
    latch: Latch,
    rows: Box<Rows>,
    imiss: Box<RobBits>,
    obs: Obs,
    /// One cycle with the next-state code for this unit's row words, variant
    /// and kernel, chosen once ([`Unit::pick_step`]) so that a single
    /// [`CounterUnit::step`] is one indirect call, not a kernel test and a
    /// dispatch on the parameters.
    step1: StepFn,
}

/// One cycle of a monomorphised next-state code ([`Unit::pick_step`]).
///
/// `unsafe` because the vector forms need a CPU with their features;
/// [`Unit::pick_step`] only returns them on such a CPU.
type StepFn = unsafe fn(&mut Unit, &CycleEvents);

impl std::fmt::Debug for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("hw::Unit")
            .field("params", &self.params)
            .field("q", &self.q)
            .finish_non_exhaustive()
    }
}

#[inline]
fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Bits `[a, b)` of a row vector that fall in word `w` (`a <= b`).
#[inline]
fn seg_word(a: usize, b: usize, w: usize) -> u64 {
    let lo = 64 * w;
    let a = a.clamp(lo, lo + 64) - lo;
    let b = b.clamp(lo, lo + 64) - lo;
    low_mask(b) & !low_mask(a)
}

impl Unit {
    /// A unit in its reset state; fails on parameters outside spec section 2.
    pub fn new(params: Params) -> Result<Self, ParamError> {
        params.validate()?;
        let rows = params.fmt_rows as u16;
        let cfg = Cfg {
            fmt: params.variant == Variant::Fmt,
            rows,
            row_mask: rows - 1,
            ptr_mask: 2 * rows - 1,
            words: (rows as usize).div_ceil(64),
            rob_entries: params.rob_entries as u16,
            rob_mask: if params.rob_entries.is_power_of_two() {
                params.rob_entries as u16 - 1
            } else {
                0
            },
            rob_words: (params.rob_entries as usize).div_ceil(64),
            local_max: params.local_max() as u32,
            gmask: params.global_mask(),
            fetch_width: params.fetch_width as u8,
            dispatch_width: params.dispatch_width as u8,
            retire_width: params.retire_width as u8,
            kernel: Kernel::detect(),
        };
        Ok(Self {
            params,
            cfg,
            q: Regs::default(),
            latch: Latch::default(),
            rows: Box::new(Rows::zeroed()),
            imiss: Box::new(BitArray::ZERO),
            obs: Obs::default(),
            step1: Self::pick_step(&cfg),
        })
    }

    /// Back to the reset state: every row, pointer, flag and counter zero, the
    /// ROB mirror empty, the error latch and the bundle counter cleared.
    pub fn reset(&mut self) {
        self.q = Regs::default();
        self.latch = Latch::default();
        *self.rows = Rows::zeroed();
        *self.imiss = BitArray::ZERO;
        self.obs = Obs::default();
    }

    /// The observer sums recomputed from the registers (squash cycles, and the
    /// debug check in `view`).
    fn recount(&self) -> Obs {
        let c = &self.cfg;
        let mut o = Obs::default();
        if c.fmt {
            for (_, r, _) in self.live_rows() {
                for k in 0..3 {
                    o.pend_i[k] += self.rows.icnt(r)[k] as u64;
                }
            }
        } else {
            o.imiss_count = self.imiss.as_raw_slice()[..c.rob_words]
                .iter()
                .map(|w| w.count_ones())
                .sum();
        }
        o
    }

    /// `penalty` summed over the dispatched rows with `mispredict == 1` (spec
    /// 4.6): a walk over the set `mispredict` bits of the dispatched region only
    /// (one or two rows at most in practice), so `view` stays cheap without an
    /// observer in the hot increment loop.
    fn pending_bpred(&self) -> u64 {
        let q = &self.q;
        let c = &self.cfg;
        let mut sum = 0;
        for w in 0..c.words {
            // One word (at most 64 rows): the rotate form (`dtail - head < rows`).
            let region = if c.words == 1 {
                c.region_word::<1>(q.head, q.dtail, 0)
            } else {
                c.region_word::<ROW_WORDS>(q.head, q.dtail, w)
            };
            let mut m = region & self.rows.mispredict.data[w];
            while m != 0 {
                let r = 64 * w + m.trailing_zeros() as usize;
                sum += self.rows.penalty(r) as u64;
                m &= m - 1;
            }
        }
        sum
    }

    /// The scalar registers (`q`).
    pub fn regs(&self) -> &Regs {
        &self.q
    }

    /// The error latch and bundle counter.
    pub fn latch(&self) -> &Latch {
        &self.latch
    }

    /// Register widths for this unit's parameters.
    pub fn widths(&self) -> Widths {
        Widths::of(&self.params)
    }

    /// Row `rob_id` register of physical row `r` (`r < fmt_rows`; 0 beyond).
    pub fn row_rob_id(&self, r: usize) -> u16 {
        if r < self.cfg.rows as usize {
            self.rows.rob_id(r)
        } else {
            0
        }
    }

    /// Row `penalty` register of physical row `r` (0 beyond `fmt_rows`).
    pub fn row_penalty(&self, r: usize) -> u32 {
        if r < self.cfg.rows as usize {
            self.rows.penalty(r)
        } else {
            0
        }
    }

    /// FMT's row I-counters `[l1i, l2i, itlb]` of physical row `r` (zero in sFMT
    /// and beyond `fmt_rows`).
    pub fn row_icounts(&self, r: usize) -> [u32; 3] {
        if r < self.cfg.rows as usize {
            self.rows.icnt(r)
        } else {
            [0; 3]
        }
    }

    /// The row `mispredict` bits; only the first `fmt_rows` are meaningful.
    pub fn mispredict_bits(&self) -> &RowBits {
        &self.rows.mispredict
    }

    /// The row `done` bits; only the first `fmt_rows` are meaningful.
    pub fn done_bits(&self) -> &RowBits {
        &self.rows.done
    }

    /// sFMT's I-miss bit per ROB id; only the first `rob_entries` are meaningful
    /// (all zero in FMT). Bits of ids not in the ROB are always zero.
    pub fn imiss_vec(&self) -> &RobBits {
        &self.imiss
    }

    /// Check the bundle against the current state (spec section 6), in rule order.
    /// Reads only. On success returns what 4.5 needs from the row search.
    #[inline(always)]
    fn check(&self, ev: &CycleEvents) -> Result<Plan, (Field, u8)> {
        let c = &self.cfg;
        let s = &self.q;
        // Rule 1, fields in the order of spec section 3.
        if ev.fetched_branches > c.fetch_width {
            return Err((Field::FetchedBranches, 1));
        }
        if ev.dispatched > c.dispatch_width {
            return Err((Field::Dispatched, 1));
        }
        let above = |m: u8| (m as u32) >> ev.dispatched.min(8) != 0;
        if above(ev.dispatched_branches) {
            return Err((Field::DispatchedBranches, 1));
        }
        if above(ev.dispatched_imiss) {
            return Err((Field::DispatchedImiss, 1));
        }
        if ev.retired > c.retire_width {
            return Err((Field::Retired, 1));
        }
        // Rule 2.
        let retired = ev.retired as u16;
        if retired > s.rob_count {
            return Err((Field::Retired, 2));
        }
        // Rule 3.
        // `head` must name a cause exactly when the ROB holds something and
        // nothing retires.
        let need_cause = s.rob_count != 0 && retired == 0;
        if (ev.head == HeadCause::None) == need_cause {
            return Err((Field::Head, 3));
        }
        // Rule 4.
        if ev.fetch_stall != FetchStall::None && ev.fetched_branches > 0 {
            return Err((Field::FetchedBranches, 4));
        }
        // Rule 5.
        // `ftail` read at its own width: the compiler would otherwise load it
        // with `rob_head` beside it, and a load wider than the last cycle's
        // two narrow stores to them cannot be forwarded (a stall of tens of
        // host cycles, the step's largest; docs/performance.md).
        // SAFETY: a reference to a live field.
        let ftail = unsafe { std::ptr::read_volatile(&s.ftail) };
        let fetched_rows = self.cfg.dist(ftail, s.dtail);
        let fb = ev.fetched_branches as u16;
        let fs = ev.fe_squash as u16;
        if fs != 0 && (!ev.fe_redirect || fs > fetched_rows + fb) {
            return Err((Field::FeSquash, 5));
        }
        // The retirement walk (spec 4.2 step 3), on S. The dispatched rows hold
        // live ROB ids in age order, so the branches among the `retired` oldest
        // instructions are the leading rows whose ROB age `(rob_id - rob_head) mod
        // E` is below `retired`: one age comparator per row, and in most cycles
        // the oldest row already says no.
        let mut head1 = s.head;
        while head1 != s.dtail && c.rob_sub(self.rows.rob_id(c.phys(head1)), s.rob_head) < retired {
            head1 = c.padd(head1, 1);
        }
        let rob_head1 = c.rob_add(s.rob_head, retired);
        // Rule 6.
        let free_after = c.rows - 1 - self.cfg.dist(ftail, head1);
        if fb > free_after {
            return Err((Field::FetchedBranches, 6));
        }
        // Rule 7.
        let survive = fetched_rows - fs.saturating_sub(fb);
        if ev.dispatched_branches.count_ones() as u16 > survive {
            return Err((Field::DispatchedBranches, 7));
        }
        // Rule 8.
        let count1 = s.rob_count - retired;
        if count1 + ev.dispatched as u16 > c.rob_entries {
            return Err((Field::Dispatched, 8));
        }
        // Rule 9, and the row search of 4.5.
        // Plain locals (not a struct patched field by field): keeps the result in
        // registers.
        let ret_rows = self.cfg.dist(head1, s.head);
        let mut squash_n = 0u16;
        let mut squash_row = 0u16;
        if !matches!(ev.squash, Squash::None) {
            (squash_n, squash_row) = self.check_squash(ev.squash, head1, rob_head1, count1)?;
        }
        Ok(Plan {
            ret_rows: ret_rows as u32,
            squash_n: squash_n as u32,
            squash_row: squash_row as u32,
        })
    }

    /// Rule 9 and the row search of 4.5 (squash cycles only): returns `n` and
    /// the physical row of a mispredicted branch.
    #[cold]
    #[inline(never)]
    fn check_squash(
        &self,
        squash: Squash,
        head1: u16,
        rob_head1: u16,
        count1: u16,
    ) -> Result<(u16, u16), (Field, u8)> {
        let c = &self.cfg;
        let s = &self.q;
        let mut squash_row = 0u16;
        let x = squash.id();
        if x >= c.rob_entries {
            return Err((Field::Squash, 9));
        }
        let age_x = c.rob_sub(x, rob_head1);
        if age_x >= count1 {
            return Err((Field::Squash, 9));
        }
        // Dispatched rows of S that stay, oldest first; their ROB ages rise.
        let mut p = head1;
        let mut n = 0u16;
        let mut found = false;
        while p != s.dtail {
            let r = c.phys(p);
            let age = c.rob_sub(self.rows.rob_id(r), rob_head1);
            if age >= age_x {
                found = age == age_x;
                squash_row = r as u16;
                break;
            }
            n += 1;
            p = c.padd(p, 1);
        }
        match squash {
            Squash::Mispredict(_) => {
                if !found || get_bit(&self.rows.mispredict.data, squash_row as usize) {
                    return Err((Field::Squash, 9));
                }
                Ok((n + 1, squash_row))
            }
            _ => Ok((n, squash_row)),
        }
    }

    /// sFMT at a clearing commit: add the shared I-counters to the globals if
    /// `charge`, then clear them and every I-miss bit.
    #[cold]
    #[inline(never)]
    fn sfmt_clear(d: &mut Regs, imiss: &mut RobBits, c: &Cfg, charge: bool) {
        if charge {
            let sh = d.shared_i;
            for (k, &v) in sh.iter().enumerate() {
                Self::gadd(d, c.gmask, Counter::L1i.idx() + k, v as u64);
            }
        }
        d.shared_i = [0; 3];
        clear_imiss(imiss, c.rob_words);
    }

    /// Saturating local increment; returns whether the count was lost.
    #[inline]
    fn bump(v: &mut u32, max: u32) -> bool {
        let at_max = *v == max;
        *v += (!at_max) as u32;
        at_max
    }

    /// `counters[i] += v` modulo `2^G`, setting the sticky overflow on carry-out.
    #[inline]
    fn gadd(d: &mut Regs, gmask: u64, i: usize, v: u64) {
        let (sum, carry) = d.counters[i].overflowing_add(v);
        let out = carry | (sum > gmask);
        d.overflow |= (out as u16) << i;
        d.counters[i] = sum & gmask;
    }

    /// One clock cycle of a unit whose error latch is clear: check, then commit
    /// the next state or latch the error.
    ///
    /// A *quiet* bundle ([`quiet`]: nothing retires, is fetched, dispatched,
    /// redirected or squashed; the cycles of a stalled or idle core) takes a
    /// short path with the same result. Of the rules of spec section 6 only
    /// rule 3 can fail for it (every count is 0, so rules 1, 2 and 4-9 hold in
    /// any state), and of the phases only 4.1 changes anything (4.2-4.5 have
    /// nothing to do). Tests step every state of random streams both ways.
    #[inline(always)]
    fn cycle<const W: usize, const FMT: bool, const K: u8>(&mut self, ev: &CycleEvents) {
        if quiet(ev) {
            return self.cycle_quiet::<W, FMT, K>(ev);
        }
        self.cycle_general::<W, FMT, K>(ev);
    }

    /// [`Unit::cycle`] of a quiet bundle.
    #[inline(always)]
    fn cycle_quiet<const W: usize, const FMT: bool, const K: u8>(&mut self, ev: &CycleEvents) {
        if (ev.head == HeadCause::None) == (self.q.rob_count != 0) {
            return self.latch_error(Field::Head, 3);
        }
        let sat =
            Self::count::<W, FMT, K>(&self.cfg, &mut self.q, &mut self.rows, &mut self.obs, ev);
        self.q.saturated |= sat;
        self.latch.bundles += 1;
    }

    /// [`Unit::cycle`] without the short path for quiet bundles.
    #[inline(always)]
    fn cycle_general<const W: usize, const FMT: bool, const K: u8>(&mut self, ev: &CycleEvents) {
        match self.check(ev) {
            Ok(plan) => {
                self.apply::<W, FMT, K>(ev, plan);
                self.latch.bundles += 1;
            }
            Err((field, rule)) => self.latch_error(field, rule),
        }
    }

    /// Latch a rejected bundle (cycle, field, rule); nothing else changes.
    #[cold]
    fn latch_error(&mut self, field: Field, rule: u8) {
        self.latch.error = Some(ProtocolError {
            bundle: self.latch.bundles,
            field,
            rule,
        });
    }

    /// 4.1 Counting: reads the pointers, `rob_count`, `refilling` and
    /// `refill_pending` of S; writes only counters, flags and local counters.
    /// Returns whether a local count was lost.
    #[inline(always)]
    fn count<const W: usize, const FMT: bool, const K: u8>(
        c: &Cfg,
        d: &mut Regs,
        rows: &mut Rows,
        obs: &mut Obs,
        ev: &CycleEvents,
    ) -> bool {
        let ce = ev.count_enable;
        let gm = c.gmask;
        let stall_kind = ev.fetch_stall.bits() as usize; // 0 = none
        let stall = stall_kind != 0;
        let mut sat = false;
        // It runs first, so the pointers, `rob_count`, `refilling`
        // and `refill_pending` it reads from `d` are still those of S; it writes
        // only counters, flags and local counters, none of which it reads as a
        // condition.
        if ce {
            Self::gadd(d, gm, Counter::Cycles.idx(), 1);
            // the window is full: the ROB, or another backend structure
            // (the `backend_full` amendment, docs/spec-decisions.md)
            let window_full = (d.rob_count == c.rob_entries) | ev.backend_full;
            if window_full {
                let ctr = match ev.head {
                    HeadCause::L1d => Some(Counter::L1d),
                    HeadCause::L2d => Some(Counter::L2d),
                    HeadCause::Dtlb => Some(Counter::Dtlb),
                    HeadCause::Longlat => Some(Counter::Longlat),
                    HeadCause::None | HeadCause::Other => None,
                };
                if let Some(k) = ctr {
                    Self::gadd(d, gm, k.idx(), 1);
                }
            } else {
                if stall {
                    if FMT {
                        let r = c.phys(d.ftail);
                        let lost = Self::bump(&mut rows.ic[stall_kind - 1][r], c.local_max);
                        sat |= lost;
                        obs.pend_i[stall_kind - 1] += (!lost) as u64;
                    } else if !d.refilling {
                        sat |= Self::bump(&mut d.shared_i[stall_kind - 1], c.local_max);
                    }
                }
                // Penalty of every dispatched row not done; a resolved mispredicted
                // row is not counted in the cycle its correct path dispatches
                // (amended contract, docs/spec-decisions.md) nor in an FMT stall.
                let keep_mp = if (FMT && stall) || ev.dispatched > 0 {
                    0
                } else {
                    u64::MAX
                };
                // Each at its own width (see `check`).
                // SAFETY: references to live fields.
                let (head, dtail) = unsafe {
                    (
                        std::ptr::read_volatile(&d.head),
                        std::ptr::read_volatile(&d.dtail),
                    )
                };
                for w in 0..W {
                    let region = c.region_word::<W>(head, dtail, w);
                    let done = rows.done.data[w];
                    let mp = rows.mispredict.data[w];
                    let m = region & !done & (keep_mp | !mp);
                    let pen: &mut [u32; 64] = (&mut rows.pen[64 * w..64 * w + 64])
                        .try_into()
                        .expect("64 rows per word");
                    sat |= match K {
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: `K` names a vector kernel only when the CPU has
                        // its features (`Kernel::supported`).
                        K_AVX512 => unsafe { pen_inc_avx512(pen, m, c.local_max) },
                        #[cfg(target_arch = "x86_64")]
                        // SAFETY: as above.
                        K_AVX2 => unsafe { pen_inc_avx2(pen, m, c.local_max) },
                        _ => pen_inc_portable(pen, m, c.local_max),
                    };
                }
                if d.refill_pending && !(FMT && stall) && ev.dispatched == 0 {
                    Self::gadd(d, gm, Counter::Bpred.idx(), 1);
                }
            }
        }

        sat
    }

    /// The next state for a legal bundle (spec 4.1-4.5), written in place
    /// (see the module doc for why this is the pure next-state function).
    #[inline(always)]
    fn apply<const W: usize, const FMT: bool, const K: u8>(
        &mut self,
        ev: &CycleEvents,
        plan: Plan,
    ) {
        let c = &self.cfg;
        let d = &mut self.q;
        let rows = &mut *self.rows;
        let imiss = &mut *self.imiss;
        let obs = &mut self.obs;
        let ce = ev.count_enable;
        let gm = c.gmask;
        // The fetch pointer, read before retirement writes `rob_head` beside it
        // (a wide reload over that narrow store could not be forwarded).
        let mut ftail = d.ftail;
        let sat = Self::count::<W, FMT, K>(c, d, rows, obs, ev);

        // 4.2 Retire. The spec walks the retiring instructions in order; this
        // does the same work grouped: the global adds commute (wrapping sums, a
        // carry-out happens iff the unreduced total passes 2^G), the rows retired
        // were found by the check, and in sFMT only the first clearing event of the
        // cycle (an I-miss bit, or a mispredicted branch; the bit first when both
        // are on one instruction) can add the shared counters: after it they and
        // every I-miss bit are zero.
        let retired = ev.retired as u16;
        if retired > 0 {
            if ce {
                Self::gadd(d, gm, Counter::Retired.idx(), retired as u64);
            }
            // Position (0-based, in retire order) of the first I-miss-marked one.
            let mut first_im = u16::MAX;
            // (no I-miss bit set in the ROB, the common case: none to find;
            // the observer's count is exact, an OR of the vector in RTL)
            if !FMT && obs.imiss_count != 0 {
                for k in (0..retired).rev() {
                    let id = c.rob_add(d.rob_head, k) as usize;
                    if get_bit(&imiss.data, id) {
                        first_im = k;
                    }
                }
            }
            let mut first_mp = u16::MAX;
            for j in 0..plan.ret_rows as u16 {
                let r = c.phys(c.padd(d.head, j));
                let ic = rows.icnt(r);
                // (most rows' blocks had no fetch stall: nothing to add)
                if FMT && (ic[0] | ic[1] | ic[2]) != 0 {
                    for (k, &v) in ic.iter().enumerate() {
                        obs.pend_i[k] -= v as u64;
                        if ce {
                            Self::gadd(d, gm, Counter::L1i.idx() + k, v as u64);
                        }
                    }
                }
                if get_bit(&rows.mispredict.data, r) {
                    let pen = rows.penalty(r) as u64;
                    if ce {
                        Self::gadd(d, gm, Counter::Bpred.idx(), pen);
                    }
                    if !get_bit(&rows.done.data, r) {
                        d.refill_pending = true;
                    }
                    let pos = c.rob_sub(rows.rob_id(r), d.rob_head);
                    first_mp = first_mp.min(pos);
                }
            }
            d.head = c.padd(d.head, plan.ret_rows as u16);
            if !FMT && (first_im != u16::MAX || first_mp != u16::MAX) {
                Self::sfmt_clear(d, imiss, c, ce && first_im <= first_mp);
                obs.imiss_count = 0;
            }
            d.rob_head = c.rob_add(d.rob_head, retired);
            d.rob_count -= retired;
        }

        // 4.3 Fetch, then frontend redirect.
        for _ in 0..ev.fetched_branches {
            ftail = c.padd(ftail, 1);
            rows.zero(c.phys(ftail));
        }
        if ev.fe_redirect {
            ftail = ftail.wrapping_sub(ev.fe_squash as u16) & c.ptr_mask;
            if FMT {
                // Observer: rows `ftail..=old` leave the sums (dropped or zeroed).
                for k in 0..=ev.fe_squash as u16 {
                    let ic = rows.icnt(c.phys(c.padd(ftail, k)));
                    for (p, &v) in obs.pend_i.iter_mut().zip(ic.iter()) {
                        *p -= v as u64;
                    }
                }
            }
            rows.zero(c.phys(ftail));
        }
        d.ftail = ftail;

        // 4.4 Dispatch.
        if ev.dispatched > 0 {
            let mut br = ev.dispatched_branches;
            let (mut dtail, rob_tail) = (d.dtail, d.rob_tail);
            while br != 0 {
                let i = br.trailing_zeros() as u16;
                rows.set_rob_id(c.phys(dtail), c.rob_add(rob_tail, i));
                dtail = c.padd(dtail, 1);
                br &= br - 1;
            }
            d.dtail = dtail;
            if !FMT {
                let mut im = ev.dispatched_imiss;
                while im != 0 {
                    let i = im.trailing_zeros() as u16;
                    let id = c.rob_add(d.rob_tail, i) as usize;
                    put_bit(&mut imiss.data, id, true);
                    im &= im - 1;
                }
                // Observer: the ids dispatched were free, so their bits were clear.
                obs.imiss_count += ev.dispatched_imiss.count_ones();
            }
            d.rob_tail = c.rob_add(d.rob_tail, ev.dispatched as u16);
            d.rob_count += ev.dispatched as u16;
            d.refilling = false;
            d.refill_pending = false;
            for w in 0..W {
                let region = c.region_word::<W>(d.head, d.dtail, w);
                let mp = rows.mispredict.data[w];
                rows.done.data[w] |= mp & region;
            }
        }

        d.saturated |= sat;
        // 4.5 Squash.
        if !matches!(ev.squash, Squash::None) {
            self.apply_squash::<FMT>(ev.squash, plan);
        }
    }

    /// 4.5 Squash (squash cycles only), after 4.1-4.4.
    #[cold]
    #[inline(never)]
    fn apply_squash<const FMT: bool>(&mut self, squash: Squash, plan: Plan) {
        let c = &self.cfg;
        let d = &mut self.q;
        let rows = &mut *self.rows;
        let imiss = &mut *self.imiss;
        let x = squash.id();
        let old_count = d.rob_count;
        match squash {
            Squash::Mispredict(_) => {
                let r = plan.squash_row as usize;
                put_bit(&mut rows.mispredict.data, r, true);
                put_bit(&mut rows.done.data, r, false);
                d.refilling = true;
                d.rob_count = c.rob_sub(x, d.rob_head) + 1;
                d.rob_tail = c.rob_add(x, 1);
            }
            _ => {
                d.refilling = false;
                d.rob_count = c.rob_sub(x, d.rob_head);
                d.rob_tail = x;
            }
        }
        d.dtail = c.padd(d.head, plan.squash_n as u16);
        d.ftail = d.dtail;
        rows.zero(c.phys(d.ftail));
        if !FMT {
            // Squashed ids: rob_tail .. rob_tail + (old_count - rob_count), circular.
            let a = d.rob_tail as usize;
            let len = (old_count - d.rob_count) as usize;
            let e = c.rob_entries as usize;
            if a + len <= e {
                imiss[a..a + len].fill(false);
            } else {
                imiss[a..e].fill(false);
                imiss[..a + len - e].fill(false);
            }
        }
        self.obs = self.recount();
    }

    /// Physical row `r` as seen from outside.
    #[inline]
    fn row_view(&self, r: usize, dispatched: bool) -> RowView {
        let ic = self.rows.icnt(r);
        RowView {
            dispatched,
            rob_id: if dispatched { self.rows.rob_id(r) } else { 0 },
            penalty: self.rows.penalty(r),
            mispredict: get_bit(&self.rows.mispredict.data, r),
            done: get_bit(&self.rows.done.data, r),
            l1i: ic[0],
            l2i: ic[1],
            itlb: ic[2],
        }
    }

    /// Live rows `[head, ftail]` in age order: `(age, physical row, dispatched)`.
    fn live_rows(&self) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
        let q = &self.q;
        let c = &self.cfg;
        let nd = c.dist(q.dtail, q.head) as usize;
        let n = c.dist(q.ftail, q.head) as usize + 1;
        let h = c.phys(q.head);
        let mask = c.row_mask as usize;
        (0..n).map(move |age| (age, (h + age) & mask, age < nd))
    }
}

impl Unit {
    /// [`CounterUnit::rows_columns`], compiled for each kernel.
    #[inline(always)]
    fn rows_columns_any(&self, out: &mut [u32]) -> usize {
        let q = &self.q;
        let c = &self.cfg;
        let nd = c.dist(q.dtail, q.head) as usize;
        let n = c.dist(q.ftail, q.head) as usize + 1;
        let h = c.phys(q.head);
        let rows = &*self.rows;
        // The live rows in age order are the registers from row `head` on, in
        // one or two runs (the table wraps): block copies of each array, column
        // after column, each run after the one before it (a block may spill
        // past its run; the next run or column writes over the spill). The
        // last column's spill needs room in `out` past the `5 * n` words: up
        // to 24 words in the fixed form (at most `SHORT_ROWS` live rows), up
        // to 7 in the block copies (at most 64); without that room, or with
        // more live rows, the exact form.
        let first = n.min(c.rows as usize - h);
        let arrays: [&[u32; MAX_ROWS + ROW_PAD]; ROW_COLUMNS] =
            [&rows.pen, &rows.rid, &rows.ic[0], &rows.ic[1], &rows.ic[2]];
        let short = n <= SHORT_ROWS && out.len() >= ROW_COLUMNS * n + SHORT_ROWS;
        if short {
            // The fixed form: `SHORT_ROWS / 8` blocks for each run whatever
            // its length (the second run, empty when the rows do not wrap,
            // copies spill). Every block read lies in an array:
            // `h + SHORT_ROWS <= MAX_ROWS - 1 + ROW_PAD`; every block written
            // lies in `out`: the last ends at `4 * n + first + SHORT_ROWS <=
            // ROW_COLUMNS * n + SHORT_ROWS`.
            // The `meta` column gets `dispatched` on its way (the rows at
            // ages below `nd`), not by a pass over the words just stored,
            // whose loads would straddle those stores.
            let o = out.as_mut_ptr();
            for (k, src) in arrays.iter().enumerate() {
                let s = src.as_ptr();
                let flag = if k == 1 { META_DISPATCHED } else { 0 };
                // SAFETY: the bounds above; `out` and the row arrays do not
                // overlap (`&mut` and `&`).
                unsafe {
                    copy_blocks_flagged(o.add(k * n), s.add(h), 0, nd, flag);
                    copy_blocks_flagged(o.add(k * n + first), s, first, nd, flag);
                }
            }
        } else if n <= 64 && out.len() >= ROW_COLUMNS * n + 8 {
            let (b1, b2) = (first.div_ceil(8), (n - first).div_ceil(8));
            // At most 8 blocks a run (`n <= 64`). Every block read lies in an
            // array: `h + 8 * b1 <= h + first + 7
            // <= rows + 7 < MAX_ROWS + ROW_PAD`, and `8 * b2 <= n + 7`; every
            // block written lies in `out`: the last one ends before
            // `ROW_COLUMNS * n + 8`.
            let o = out.as_mut_ptr();
            for (k, src) in arrays.iter().enumerate() {
                let s = src.as_ptr();
                // SAFETY: the bounds above; `out` and the row arrays do not
                // overlap (`&mut` and `&`).
                unsafe {
                    copy_blocks(o.add(k * n), s.add(h), b1);
                    copy_blocks(o.add(k * n + first), s, b2);
                }
            }
        } else {
            for (k, src) in arrays.iter().enumerate() {
                let col = &mut out[k * n..(k + 1) * n];
                col[..first].copy_from_slice(&src[h..h + first]);
                col[first..].copy_from_slice(&src[..n - first]);
            }
        }
        let meta = &mut out[n..2 * n];
        // `meta`: `rob_id | dispatched` for the first `nd` rows (the fixed
        // form set `dispatched` already); a fetched row's `rob_id` register is
        // 0 (zeroed when it became the accumulation row, written only at its
        // dispatch), as the view shows it.
        debug_assert!(
            meta[nd..].iter().all(|&m| m == 0),
            "fetched row with a ROB id"
        );
        if !short {
            for m in &mut meta[..nd] {
                *m |= META_DISPATCHED;
            }
        }
        // The `mispredict` and `done` bits of the live rows, from the bit
        // vectors (few are set).
        let end = c.padd(q.ftail, 1);
        let mask = c.row_mask as usize & (MAX_ROWS - 1);
        for w in 0..c.words {
            let live = if c.words == 1 && n < c.rows as usize {
                c.region_word::<1>(q.head, end, 0)
            } else {
                c.region_word::<ROW_WORDS>(q.head, end, w)
            };
            if (rows.mispredict.data[w] | rows.done.data[w]) & live == 0 {
                continue;
            }
            for (bits, flag) in [(&rows.mispredict, META_MISPREDICT), (&rows.done, META_DONE)] {
                let mut m = bits.data[w] & live;
                while m != 0 {
                    let r = 64 * w + m.trailing_zeros() as usize;
                    meta[r.wrapping_sub(h) & mask] |= flag;
                    m &= m - 1;
                }
            }
        }
        n
    }

    /// [`Unit::rows_columns_any`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support the features of [`Kernel::Avx2`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    #[inline(never)]
    unsafe fn rows_columns_avx2(&self, out: &mut [u32]) -> usize {
        self.rows_columns_any(out)
    }

    /// [`Unit::rows_columns_any`] compiled for AVX-512.
    ///
    /// # Safety
    /// The CPU must support the features of [`Kernel::Avx512`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi1,bmi2,lzcnt,popcnt")]
    #[inline(never)]
    unsafe fn rows_columns_avx512(&self, out: &mut [u32]) -> usize {
        use std::arch::x86_64::*;
        let q = &self.q;
        let c = &self.cfg;
        let n = c.dist(q.ftail, q.head) as usize + 1;
        // One row word (at most 64 rows), the common case: each column in
        // blocks of 16 rows, one vector move a block; more rows, or less room
        // past the `5 * n` words than a block's spill, take the general form.
        if c.words != 1 || out.len() < ROW_COLUMNS * n + 16 {
            return self.rows_columns_any(out);
        }
        let nd = c.dist(q.dtail, q.head) as usize;
        let h = c.phys(q.head);
        let rows = &*self.rows;
        // Ages `0..first` are rows `h..h + first`, ages `first..n` rows `0..n - first`.
        let first = n.min(c.rows as usize - h);
        // Row bits by age: bit `a` is row `(h + a) mod rows`.
        let by_age = |w: u64| -> u64 {
            let r = c.rows as u32;
            if r == 64 {
                w.rotate_right(h as u32)
            } else {
                ((w >> h) | (w << (r - h as u32))) & ((1u64 << r) - 1)
            }
        };
        let live = low_mask(n);
        let lo_run = low_mask(first);
        let mp = by_age(rows.mispredict.data[0]) & live;
        let dn = by_age(rows.done.data[0]) & live;
        let disp = low_mask(nd);
        let arrays: [&[u32; MAX_ROWS + ROW_PAD]; ROW_COLUMNS] =
            [&rows.pen, &rows.rid, &rows.ic[0], &rows.ic[1], &rows.ic[2]];
        let o = out.as_mut_ptr();
        let blocks = n.div_ceil(16);
        for (k, src) in arrays.iter().enumerate() {
            let s = src.as_ptr();
            for j in 0..blocks {
                let sh = 16 * j as u32;
                // SAFETY: 64 rows: blocks `0..4` of an array of `MAX_ROWS +
                // ROW_PAD` words. Fewer: lanes of `m1` read rows `h + 16j + i
                // < h + first <= rows`, lanes of `m2` rows `16j + i - first`
                // in `0..n - first`, and masked-off lanes are not accessed
                // (the address of the second load may lie before the array,
                // hence `wrapping_sub`). The store writes words `k * n + 16j
                // ..+16` of `out`: the last block of the last column ends at
                // most 15 words past `5 * n`, inside `out` (checked above); a
                // block's words past its column are written over by the next.
                let v2 = if c.rows == 64 {
                    // Whole blocks of 16 rows, as the incrementers store them
                    // (a load across two of those stores could not be
                    // forwarded), then the lanes of ages `16j..` picked from
                    // two of them.
                    let b0 = (h / 16 + j) & 3;
                    let lo = _mm512_loadu_si512(s.add(16 * b0) as *const _);
                    let hi = _mm512_loadu_si512(s.add(16 * ((b0 + 1) & 3)) as *const _);
                    let idx = _mm512_add_epi32(
                        _mm512_set1_epi32((h % 16) as i32),
                        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                    );
                    _mm512_permutex2var_epi32(lo, idx, hi)
                } else {
                    // the first run's lanes, then the second's
                    let m_live = (live >> sh) as u16;
                    let m1 = (lo_run >> sh) as u16 & m_live;
                    let m2 = m_live & !m1;
                    let v1 = _mm512_maskz_loadu_epi32(m1, s.add(h + 16 * j) as *const i32);
                    _mm512_mask_loadu_epi32(
                        v1,
                        m2,
                        s.wrapping_sub(first).wrapping_add(16 * j) as *const i32,
                    )
                };
                let v = if k == 1 {
                    let v = _mm512_mask_or_epi32(
                        v2,
                        (disp >> sh) as u16,
                        v2,
                        _mm512_set1_epi32(META_DISPATCHED as i32),
                    );
                    let v = _mm512_mask_or_epi32(
                        v,
                        (mp >> sh) as u16,
                        v,
                        _mm512_set1_epi32(META_MISPREDICT as i32),
                    );
                    _mm512_mask_or_epi32(
                        v,
                        (dn >> sh) as u16,
                        v,
                        _mm512_set1_epi32(META_DONE as i32),
                    )
                } else {
                    v2
                };
                _mm512_storeu_si512(o.add(k * n + 16 * j) as *mut _, v);
            }
        }
        n
    }

    /// A batch of cycles with the portable next-state code.
    #[inline(never)]
    fn step_portable(&mut self, evs: &[CycleEvents]) {
        self.cycles::<K_PORTABLE>(evs);
    }

    /// [`Unit::step_portable`] compiled for AVX2 (x86-64-v3), with the vector
    /// penalty incrementers.
    ///
    /// # Safety
    /// The CPU must support the features of [`Kernel::Avx2`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    #[inline(never)]
    unsafe fn step_avx2(&mut self, evs: &[CycleEvents]) {
        self.cycles::<K_AVX2>(evs);
    }

    /// [`Unit::step_portable`] compiled for AVX-512, with the vector penalty
    /// incrementers.
    ///
    /// # Safety
    /// The CPU must support the features of [`Kernel::Avx512`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi1,bmi2,lzcnt,popcnt")]
    #[inline(never)]
    unsafe fn step_avx512(&mut self, evs: &[CycleEvents]) {
        self.cycles::<K_AVX512>(evs);
    }

    /// Cycles until the batch ends or a bundle is rejected (the latch then
    /// ignores the rest), monomorphised on the row-vector words in use and the
    /// variant.
    #[inline(always)]
    fn cycles<const K: u8>(&mut self, evs: &[CycleEvents]) {
        #[inline(always)]
        fn each<const W: usize, const FMT: bool, const K: u8>(u: &mut Unit, evs: &[CycleEvents]) {
            for ev in evs {
                if u.latch.error.is_some() {
                    return;
                }
                u.cycle::<W, FMT, K>(ev);
            }
        }
        match (self.cfg.words, self.cfg.fmt) {
            (1, true) => each::<1, true, K>(self, evs),
            (1, false) => each::<1, false, K>(self, evs),
            (2, true) => each::<2, true, K>(self, evs),
            (2, false) => each::<2, false, K>(self, evs),
            (_, true) => each::<ROW_WORDS, true, K>(self, evs),
            (_, false) => each::<ROW_WORDS, false, K>(self, evs),
        }
    }

    /// One cycle through the general path only (check, then 4.1-4.5), with the
    /// portable kernel: the tests' reference for the short path of quiet bundles.
    #[cfg(test)]
    fn step_general(&mut self, ev: &CycleEvents) {
        if self.latch.error.is_some() {
            return;
        }
        match (self.cfg.words, self.cfg.fmt) {
            (1, true) => self.cycle_general::<1, true, K_PORTABLE>(ev),
            (1, false) => self.cycle_general::<1, false, K_PORTABLE>(ev),
            (2, true) => self.cycle_general::<2, true, K_PORTABLE>(ev),
            (2, false) => self.cycle_general::<2, false, K_PORTABLE>(ev),
            (_, true) => self.cycle_general::<ROW_WORDS, true, K_PORTABLE>(ev),
            (_, false) => self.cycle_general::<ROW_WORDS, false, K_PORTABLE>(ev),
        }
    }

    /// The next-state code this unit runs (chosen in [`Unit::new`]).
    pub fn kernel(&self) -> Kernel {
        self.cfg.kernel
    }

    /// Run the given next-state code from now on; a kernel this CPU does not
    /// support is refused (`false`, nothing changes). Every kernel computes
    /// the same next state; tests run each supported one.
    pub fn set_kernel(&mut self, k: Kernel) -> bool {
        if !k.supported() {
            return false;
        }
        self.cfg.kernel = k;
        self.step1 = Self::pick_step(&self.cfg);
        true
    }

    /// The one-cycle code for `c`'s row words, variant and kernel.
    fn pick_step(c: &Cfg) -> StepFn {
        // For each kernel, a one-cycle function (`$one`, unless the latch holds
        // an error, which then ignores the rest) that only tests for a quiet
        // bundle and jumps to the quiet path (`$quiet`) or the general one
        // (`$general`): neither pays the other's register saves (2 % each,
        // docs/performance.md).
        macro_rules! one_cycle {
            ($(#[$attr:meta])* $one:ident, $quiet:ident, $general:ident, $k:expr) => {
                $(#[$attr])*
                #[inline(never)]
                unsafe fn $one<const W: usize, const FMT: bool>(u: &mut Unit, ev: &CycleEvents) {
                    if u.latch.error.is_none() {
                        if quiet(ev) {
                            $quiet::<W, FMT>(u, ev);
                        } else {
                            $general::<W, FMT>(u, ev);
                        }
                    }
                }
                $(#[$attr])*
                #[inline(never)]
                unsafe fn $quiet<const W: usize, const FMT: bool>(u: &mut Unit, ev: &CycleEvents) {
                    u.cycle_quiet::<W, FMT, { $k }>(ev);
                }
                $(#[$attr])*
                #[inline(never)]
                unsafe fn $general<const W: usize, const FMT: bool>(u: &mut Unit, ev: &CycleEvents) {
                    u.cycle_general::<W, FMT, { $k }>(ev);
                }
            };
        }
        // Portable: safe to call on any CPU (`unsafe` only to share `StepFn`).
        one_cycle!(one, quiet_, general, K_PORTABLE);
        // AVX2 (x86-64-v3), with the vector penalty incrementers.
        // SAFETY (callers): the CPU must support the features of [`Kernel::Avx2`].
        one_cycle!(
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
            one_avx2,
            quiet_avx2,
            general_avx2,
            K_AVX2
        );
        // AVX-512, with the vector penalty incrementers.
        // SAFETY (callers): the CPU must support the features of [`Kernel::Avx512`].
        one_cycle!(
            #[cfg(target_arch = "x86_64")]
            #[target_feature(
                enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi1,bmi2,lzcnt,popcnt"
            )]
            one_avx512,
            quiet_avx512,
            general_avx512,
            K_AVX512
        );
        /// `$f` monomorphised for `c`'s row words and variant.
        macro_rules! for_params {
            ($f:ident) => {
                match (c.words, c.fmt) {
                    (1, true) => $f::<1, true>,
                    (1, false) => $f::<1, false>,
                    (2, true) => $f::<2, true>,
                    (2, false) => $f::<2, false>,
                    (_, true) => $f::<ROW_WORDS, true>,
                    (_, false) => $f::<ROW_WORDS, false>,
                }
            };
        }
        match c.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => for_params!(one_avx512),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => for_params!(one_avx2),
            _ => for_params!(one),
        }
    }
}

/// `Unit::cycle`'s kernel parameter: [`Kernel::Portable`].
const K_PORTABLE: u8 = 0;
/// `Unit::cycle`'s kernel parameter: [`Kernel::Avx2`] (x86-64 only).
#[cfg(target_arch = "x86_64")]
const K_AVX2: u8 = 1;
/// `Unit::cycle`'s kernel parameter: [`Kernel::Avx512`] (x86-64 only).
#[cfg(target_arch = "x86_64")]
const K_AVX512: u8 = 2;

/// Which compiled form of the next-state logic a [`Unit`] runs. The state and
/// every output are the same; only the host instructions differ.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust for any CPU.
    Portable,
    /// The penalty incrementers as AVX2 compare-and-add steps of 8 rows, the
    /// rest compiled for x86-64-v3 (AVX2, BMI1, BMI2, LZCNT, POPCNT; detected
    /// at run time).
    Avx2,
    /// The penalty incrementers as AVX-512 masked vector adds of 16 rows,
    /// the row read-out as vector moves of 16 rows, the rest compiled for
    /// x86-64-v4 (the features of `Avx2` and AVX-512 F, BW, VL, DQ; detected
    /// at run time).
    Avx512,
}

impl Kernel {
    /// Every kernel, slowest first.
    pub const ALL: [Kernel; 3] = [Kernel::Portable, Kernel::Avx2, Kernel::Avx512];

    /// Whether this CPU runs the kernel.
    pub fn supported(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("bmi1")
                    && std::arch::is_x86_feature_detected!("bmi2")
                    && std::arch::is_x86_feature_detected!("lzcnt")
                    && std::arch::is_x86_feature_detected!("popcnt")
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => {
                Kernel::Avx2.supported()
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512dq")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The kernels this CPU runs, slowest first (the portable one always).
    pub fn available() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.into_iter().filter(|k| k.supported())
    }

    /// The fastest kernel this CPU runs.
    pub fn detect() -> Kernel {
        Kernel::available().last().unwrap_or(Kernel::Portable)
    }
}

impl CounterUnit for Unit {
    fn params(&self) -> &Params {
        &self.params
    }

    #[inline]
    fn step(&mut self, ev: &CycleEvents) {
        // SAFETY: `step1` is a vector form only on a CPU with its features
        // (`pick_step`, `Kernel::supported`).
        unsafe { (self.step1)(self, ev) }
    }

    fn step_many(&mut self, evs: &[CycleEvents]) {
        match self.cfg.kernel {
            // SAFETY: a vector kernel is only chosen when the CPU has its
            // features (`Kernel::supported`).
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { self.step_avx512(evs) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { self.step_avx2(evs) },
            _ => self.step_portable(evs),
        }
    }

    fn view(&self) -> UnitView {
        let q = &self.q;
        let c = &self.cfg;
        // O(1): the sums are kept by the observer logic ([`Obs`]).
        debug_assert_eq!(self.obs, self.recount(), "observer sums out of step");
        let o = &self.obs;
        let i = if c.fmt {
            o.pend_i
        } else {
            q.shared_i.map(|v| v as u64)
        };
        let pending = Pending {
            l1i: i[0],
            l2i: i[1],
            itlb: i[2],
            bpred: self.pending_bpred(),
        };
        let imiss_bits = if c.fmt { 0 } else { o.imiss_count };
        UnitView {
            counters: Counters {
                value: q.counters,
                overflow: q.overflow,
            },
            saturated: q.saturated,
            rob_head: q.rob_head as u32,
            rob_count: q.rob_count as u32,
            rob_full: q.rob_count == c.rob_entries,
            free_rows: (c.rows - 1 - self.cfg.dist(q.ftail, q.head)) as u32,
            dispatched_rows: self.cfg.dist(q.dtail, q.head) as u32,
            fetched_rows: self.cfg.dist(q.ftail, q.dtail) as u32,
            refilling: q.refilling,
            refill_pending: q.refill_pending,
            error: self.latch.error,
            shared_i: q.shared_i,
            imiss_bits,
            pending,
        }
    }

    fn for_each_row(&self, f: &mut dyn FnMut(usize, RowView)) {
        for (age, r, dispatched) in self.live_rows() {
            f(age, self.row_view(r, dispatched));
        }
    }

    fn rows_into(&self, out: &mut Vec<RowView>) {
        out.reserve(self.cfg.dist(self.q.ftail, self.q.head) as usize + 1);
        for (_, r, dispatched) in self.live_rows() {
            out.push(self.row_view(r, dispatched));
        }
    }

    fn rows_columns(&self, out: &mut [u32]) -> usize {
        match self.cfg.kernel {
            // SAFETY: a vector kernel is only chosen when the CPU has its
            // features (`Kernel::supported`).
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { self.rows_columns_avx512(out) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { self.rows_columns_avx2(out) },
            _ => self.rows_columns_any(out),
        }
    }

    fn imiss_bit(&self, rob_id: u16) -> bool {
        (rob_id as usize) < self.params.rob_entries as usize
            && get_bit(&self.imiss.data, rob_id as usize)
    }

    fn imiss_live_words(&self, out: &mut [u64]) {
        let c = &self.cfg;
        let q = &self.q;
        let out = &mut out[..c.rob_words];
        if c.fmt || self.obs.imiss_count == 0 {
            out.fill(0);
            return;
        }
        // The bit vector masked to the live ids `[rob_head, rob_head + rob_count)`.
        let e = c.rob_entries as usize;
        let a = q.rob_head as usize;
        let len = q.rob_count as usize;
        for (w, o) in out.iter_mut().enumerate() {
            let live = if a + len <= e {
                seg_word(a, a + len, w)
            } else {
                seg_word(a, e, w) | seg_word(0, a + len - e, w)
            };
            *o = self.imiss.data[w] & live;
        }
    }
}

#[cfg(test)]
#[path = "unit_tests.rs"]
mod tests;
