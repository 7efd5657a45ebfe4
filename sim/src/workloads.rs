//! Seeded synthetic workloads: a static program (a control-flow graph of basic
//! blocks at real addresses) generated from a [`Spec`], executed functionally to
//! give the committed path, and read statically for wrong-path fetch.
//!
//! Registers: `1..=24` are written round-robin in layout order and read at a
//! distance of `1..=dep_distance` instructions (small distance, little ILP);
//! `25..=28` are base registers nobody writes (independent address streams);
//! `29..=31` are pointer-chasing registers, each read and written by the loads of
//! one dependent stream (serial misses).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::isa::{BranchKind, Instr, InstrSource, OpClass, SourceError};

/// Address pattern of a data stream.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// 8-byte steps.
    Seq,
    /// Steps of this many bytes.
    Stride(u64),
    /// Uniform 8-byte words within the footprint.
    Random,
}

/// A data stream: the memory behaviour of the loads and stores assigned to it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    pub pattern: Pattern,
    /// Bytes (a power of two is not required).
    pub footprint: u64,
    /// Pointer chasing: each access's address depends on the previous access's load.
    pub dependent: bool,
    /// Relative share of memory instructions.
    pub weight: u32,
}

/// Weights of the instruction classes inside basic blocks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    pub alu: u32,
    pub mul: u32,
    pub div: u32,
    pub fp: u32,
    pub load: u32,
    pub store: u32,
}

/// Weights of the block-terminating branch behaviours.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Branches {
    /// Taken with probability `bias` or `1 - bias` (per static branch).
    pub biased: u32,
    /// Backward loop branch with a fixed trip count.
    pub looped: u32,
    /// A periodic taken/not-taken pattern.
    pub pattern: u32,
    /// 50/50.
    pub random: u32,
    /// Indirect jump or call among several targets.
    pub indirect: u32,
    /// Direct call of a function (which returns).
    pub call: u32,
}

/// Everything a synthetic workload is made from.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    /// Basic blocks of the main loop.
    pub blocks: u32,
    /// Instructions per block, the terminating branch included (min, max).
    pub block_len: (u32, u32),
    /// 0: blocks packed; else block `i` starts at `i * block_spacing`.
    pub block_spacing: u64,
    pub functions: u32,
    pub fn_blocks: u32,
    pub mix: Mix,
    pub branches: Branches,
    pub bias: f64,
    pub loop_trip: (u32, u32),
    pub indirect_targets: u32,
    pub dep_distance: u32,
    /// Registers `1..=regs` (at most 24) written round-robin: few registers carry
    /// dependences from one loop iteration into the next (serial chains).
    pub regs: u32,
    pub streams: Vec<Stream>,
}

const CODE_BASE: u64 = 0x40_0000;
const DATA_BASE: u64 = 0x1000_0000;
const STREAM_SPACING: u64 = 0x4000_0000;
const NO_STREAM: u16 = u16::MAX;

#[derive(Clone, Debug)]
enum Behavior {
    /// Taken when a uniform u32 is below the threshold.
    Biased(u32),
    Loop {
        trip: u32,
        count: u32,
    },
    Pattern {
        bits: u64,
        len: u32,
        pos: u32,
    },
    Indirect {
        targets: Vec<u32>,
    },
    Always,
    Return,
}

#[derive(Copy, Clone, Debug)]
struct SInstr {
    pc: u64,
    class: OpClass,
    kind: Option<BranchKind>,
    srcs: [u8; 4],
    dst: u8,
    stream: u16,
    /// Index of the behaviour (branches).
    beh: u32,
    /// Static target index (direct branches), `u32::MAX` otherwise.
    target: u32,
}

#[derive(Clone, Debug)]
struct StreamState {
    base: u64,
    spec: Stream,
    pos: u64,
}

/// A generated program being executed: an [`InstrSource`].
#[derive(Clone, Debug)]
pub struct Workload {
    name: String,
    code: Vec<SInstr>,
    behaviors: Vec<Behavior>,
    /// `(pc - CODE_BASE) / 4` -> instruction index, `u32::MAX` for a gap.
    index: Vec<u32>,
    streams: Vec<StreamState>,
    cur: u32,
    stack: Vec<u64>,
    rng: Xoshiro256PlusPlus,
    code_bytes: u64,
}

fn pick(rng: &mut impl Rng, weights: &[u32]) -> usize {
    let total: u32 = weights.iter().sum();
    if total == 0 {
        return 0;
    }
    let mut x = rng.gen_range(0..total);
    for (i, &w) in weights.iter().enumerate() {
        if x < w {
            return i;
        }
        x -= w;
    }
    weights.len() - 1
}

impl Workload {
    /// Generate the static program of `spec` with `seed` and start executing it.
    pub fn new(spec: &Spec, seed: u64) -> Workload {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed_0000_c0de);
        // layout: block lengths and start addresses
        let nblocks = spec.blocks.max(2) as usize;
        // spaced blocks have no fall-through, so functions (which need it) are packed-only
        let nfn = if spec.block_spacing > 0 {
            0
        } else {
            spec.functions as usize
        };
        let fnb = spec.fn_blocks.max(1) as usize;
        let total_blocks = nblocks + nfn * fnb;
        let mut starts = Vec::with_capacity(total_blocks);
        let mut lens = Vec::with_capacity(total_blocks);
        let mut pc = CODE_BASE;
        for b in 0..total_blocks {
            let len = rng
                .gen_range(spec.block_len.0.max(1)..=spec.block_len.1.max(spec.block_len.0.max(1)));
            if spec.block_spacing > 0 {
                pc = CODE_BASE + b as u64 * spec.block_spacing;
            }
            starts.push(pc);
            lens.push(len);
            pc += len as u64 * 4;
        }
        let end = pc;
        let mut first = Vec::with_capacity(total_blocks);
        let mut code = Vec::new();
        let mut behaviors = Vec::new();
        let mut wcount: u32 = 0;
        let stream_w: Vec<u32> = spec.streams.iter().map(|s| s.weight).collect();
        let mix = [
            spec.mix.alu,
            spec.mix.mul,
            spec.mix.div,
            spec.mix.fp,
            if spec.streams.is_empty() {
                0
            } else {
                spec.mix.load
            },
            if spec.streams.is_empty() {
                0
            } else {
                spec.mix.store
            },
        ];
        let pool = spec.regs.clamp(2, 24);
        let dep = spec.dep_distance.clamp(1, pool);
        let mut chase_reg = vec![0u8; spec.streams.len()];
        let mut next_chase = 29u8;
        for (i, s) in spec.streams.iter().enumerate() {
            if s.dependent && next_chase <= 31 {
                chase_reg[i] = next_chase;
                next_chase += 1;
            }
        }
        let recent = |w: u32, d: u32| -> u8 { ((w + pool * 1000 - d) % pool + 1) as u8 };
        for b in 0..total_blocks {
            first.push(code.len() as u32);
            for k in 0..lens[b] {
                let pc = starts[b] + k as u64 * 4;
                let last = k + 1 == lens[b];
                let mut si = SInstr {
                    pc,
                    class: OpClass::Alu,
                    kind: None,
                    srcs: [0; 4],
                    dst: 0,
                    stream: NO_STREAM,
                    beh: 0,
                    target: u32::MAX,
                };
                if last {
                    si.class = OpClass::Branch;
                    si.srcs[0] = recent(wcount, rng.gen_range(1..=dep));
                } else {
                    let c = pick(&mut rng, &mix);
                    si.class = [
                        OpClass::Alu,
                        OpClass::Mul,
                        OpClass::Div,
                        OpClass::Fp,
                        OpClass::Load,
                        OpClass::Store,
                    ][c];
                    match si.class {
                        OpClass::Load | OpClass::Store => {
                            let st = pick(&mut rng, &stream_w);
                            si.stream = st as u16;
                            let base = if chase_reg[st] != 0 && si.class == OpClass::Load {
                                chase_reg[st]
                            } else {
                                25 + (st % 4) as u8
                            };
                            si.srcs[0] = base;
                            if si.class == OpClass::Load {
                                si.dst = if chase_reg[st] != 0 {
                                    chase_reg[st]
                                } else {
                                    wcount += 1;
                                    recent(wcount, 0)
                                };
                            } else {
                                si.srcs[1] = recent(wcount, rng.gen_range(1..=dep));
                            }
                        }
                        _ => {
                            si.srcs[0] = recent(wcount, rng.gen_range(1..=dep));
                            if rng.gen_bool(0.5) {
                                si.srcs[1] = recent(wcount, rng.gen_range(1..=dep));
                            }
                            wcount += 1;
                            si.dst = recent(wcount, 0);
                        }
                    }
                }
                code.push(si);
            }
        }
        // terminators
        let main_blocks = nblocks;
        for b in 0..total_blocks {
            let ti = (first[b] + lens[b] - 1) as usize;
            let beh_idx = behaviors.len() as u32;
            let in_fn = b >= main_blocks;
            let (kind, beh, target_block): (BranchKind, Behavior, Option<usize>) = if in_fn {
                let f = (b - main_blocks) / fnb;
                let fb = (b - main_blocks) % fnb;
                if fb + 1 == fnb {
                    (BranchKind::Return, Behavior::Return, None)
                } else {
                    let tgt = main_blocks + f * fnb + (fb + 2).min(fnb - 1);
                    let p = if rng.gen_bool(0.5) {
                        spec.bias
                    } else {
                        1.0 - spec.bias
                    };
                    (
                        BranchKind::Conditional,
                        Behavior::Biased((p * u32::MAX as f64) as u32),
                        Some(tgt),
                    )
                }
            } else if b + 1 == main_blocks {
                (BranchKind::DirectJump, Behavior::Always, Some(0))
            } else if spec.block_spacing > 0 {
                // spaced blocks have no physical fall-through: jump to the next one
                (BranchKind::DirectJump, Behavior::Always, Some(b + 1))
            } else {
                let w = &spec.branches;
                let mut weights = [w.biased, w.looped, w.pattern, w.random, w.indirect, w.call];
                if nfn == 0 {
                    weights[5] = 0;
                }
                let fwd = |rng: &mut Xoshiro256PlusPlus| {
                    (b + 1 + rng.gen_range(1..=2)).min(main_blocks - 1)
                };
                match pick(&mut rng, &weights) {
                    0 => {
                        let p = if rng.gen_bool(0.5) {
                            spec.bias
                        } else {
                            1.0 - spec.bias
                        };
                        (
                            BranchKind::Conditional,
                            Behavior::Biased((p * u32::MAX as f64) as u32),
                            Some(fwd(&mut rng)),
                        )
                    }
                    1 => {
                        let back = rng.gen_range(0..=2usize).min(b);
                        let trip = rng.gen_range(
                            spec.loop_trip.0.max(1)..=spec.loop_trip.1.max(spec.loop_trip.0.max(1)),
                        );
                        (
                            BranchKind::Conditional,
                            Behavior::Loop { trip, count: 0 },
                            Some(b - back),
                        )
                    }
                    2 => {
                        let len = rng.gen_range(2..=12u32);
                        let bits = rng.gen::<u64>();
                        (
                            BranchKind::Conditional,
                            Behavior::Pattern { bits, len, pos: 0 },
                            Some(fwd(&mut rng)),
                        )
                    }
                    3 => (
                        BranchKind::Conditional,
                        Behavior::Biased(u32::MAX / 2),
                        Some(fwd(&mut rng)),
                    ),
                    4 => {
                        let calls = nfn > 0 && rng.gen_bool(0.5);
                        let k = spec.indirect_targets.max(2) as usize;
                        let targets: Vec<u32> = (0..k)
                            .map(|j| {
                                if calls {
                                    first[main_blocks + rng.gen_range(0..nfn) * fnb]
                                } else {
                                    first[(b + 1 + j % 4).min(main_blocks - 1)]
                                }
                            })
                            .collect();
                        let kind = if calls {
                            BranchKind::IndirectCall
                        } else {
                            BranchKind::IndirectJump
                        };
                        (kind, Behavior::Indirect { targets }, None)
                    }
                    _ => {
                        let f = rng.gen_range(0..nfn);
                        (
                            BranchKind::DirectCall,
                            Behavior::Always,
                            Some(main_blocks + f * fnb),
                        )
                    }
                }
            };
            behaviors.push(beh);
            let s = &mut code[ti];
            s.kind = Some(kind);
            s.beh = beh_idx;
            s.target = target_block.map_or(u32::MAX, |tb| first[tb]);
        }
        let span = ((end - CODE_BASE) / 4) as usize;
        let mut index = vec![u32::MAX; span];
        for (i, s) in code.iter().enumerate() {
            index[((s.pc - CODE_BASE) / 4) as usize] = i as u32;
        }
        let streams = spec
            .streams
            .iter()
            .enumerate()
            .map(|(i, s)| StreamState {
                base: DATA_BASE + i as u64 * STREAM_SPACING,
                spec: *s,
                pos: 0,
            })
            .collect();
        let code_bytes = code.len() as u64 * 4;
        Workload {
            name: spec.name.to_string(),
            code,
            behaviors,
            index,
            streams,
            cur: 0,
            stack: Vec::with_capacity(64),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xe8ec_0000_0001),
            code_bytes,
        }
    }

    /// Static code size in bytes.
    pub fn code_bytes(&self) -> u64 {
        self.code_bytes
    }

    #[inline]
    fn idx_of(&self, pc: u64) -> Option<u32> {
        let off = pc.checked_sub(CODE_BASE)?;
        if off & 3 != 0 {
            return None;
        }
        self.index
            .get((off / 4) as usize)
            .copied()
            .filter(|&i| i != u32::MAX)
    }

    fn next_addr(&mut self, st: u16) -> u64 {
        let s = &mut self.streams[st as usize];
        let fp = s.spec.footprint.max(8);
        let a = s.base + s.pos;
        s.pos = match s.spec.pattern {
            Pattern::Seq => (s.pos + 8) % fp,
            Pattern::Stride(k) => (s.pos + k) % fp,
            Pattern::Random => self.rng.gen_range(0..fp / 8) * 8,
        };
        a
    }

    fn record(&self, s: &SInstr) -> Instr {
        Instr {
            pc: s.pc,
            size: 4,
            class: s.class,
            branch: s.kind,
            taken: false,
            target: if s.target == u32::MAX {
                0
            } else {
                self.code[s.target as usize].pc
            },
            srcs: s.srcs,
            dsts: [s.dst, 0],
            load_addr: 0,
            store_addr: 0,
        }
    }
}

impl InstrSource for Workload {
    fn name(&self) -> &str {
        &self.name
    }

    fn next(&mut self) -> Result<Option<Instr>, SourceError> {
        let s = self.code[self.cur as usize];
        let mut r = self.record(&s);
        match s.class {
            OpClass::Load => r.load_addr = self.next_addr(s.stream),
            OpClass::Store => r.store_addr = self.next_addr(s.stream),
            _ => {}
        }
        let mut next = self.cur + 1;
        if let Some(kind) = s.kind {
            let taken_to: Option<u32> = match &mut self.behaviors[s.beh as usize] {
                Behavior::Biased(th) => {
                    let th = *th;
                    (self.rng.gen::<u32>() < th).then_some(s.target)
                }
                Behavior::Loop { trip, count } => {
                    *count += 1;
                    if *count >= *trip {
                        *count = 0;
                        None
                    } else {
                        Some(s.target)
                    }
                }
                Behavior::Pattern { bits, len, pos } => {
                    let t = *bits >> *pos & 1 == 1;
                    *pos = (*pos + 1) % *len;
                    t.then_some(s.target)
                }
                Behavior::Indirect { targets } => {
                    let k = targets.len();
                    Some(targets[self.rng.gen_range(0..k)])
                }
                Behavior::Always => Some(s.target),
                Behavior::Return => {
                    let ret = self.stack.pop();
                    Some(ret.and_then(|pc| self.idx_of(pc)).unwrap_or(0))
                }
            };
            if matches!(kind, BranchKind::DirectCall | BranchKind::IndirectCall) {
                if self.stack.len() >= 64 {
                    self.stack.remove(0);
                }
                self.stack.push(s.pc + 4);
            }
            if let Some(t) = taken_to {
                r.taken = true;
                r.target = self.code[t as usize].pc;
                next = t;
            }
        }
        if next as usize >= self.code.len() {
            next = 0;
        }
        self.cur = next;
        Ok(Some(r))
    }

    fn wrong_path(&mut self, pc: u64) -> Instr {
        match self.idx_of(pc) {
            Some(i) => {
                let s = self.code[i as usize];
                let mut r = self.record(&s);
                if s.stream != NO_STREAM {
                    let st = &self.streams[s.stream as usize];
                    let a = st.base + st.pos;
                    if s.class == OpClass::Load {
                        r.load_addr = a;
                    } else {
                        r.store_addr = a;
                    }
                }
                r
            }
            None => Instr::plain_alu(pc, 4),
        }
    }
}

// ------------------------------------------------------------------- suite

impl Spec {
    /// The `balanced` workload's parameters: the base every suite entry starts from.
    pub fn base(name: &'static str, description: &'static str) -> Spec {
        Spec {
            name,
            description,
            blocks: 48,
            block_len: (5, 10),
            block_spacing: 0,
            functions: 4,
            fn_blocks: 3,
            mix: Mix {
                alu: 60,
                mul: 2,
                div: 0,
                fp: 0,
                load: 25,
                store: 10,
            },
            branches: Branches {
                biased: 75,
                looped: 20,
                pattern: 0,
                random: 0,
                indirect: 0,
                call: 5,
            },
            bias: 0.995,
            loop_trip: (16, 64),
            indirect_targets: 4,
            dep_distance: 12,
            regs: 24,
            streams: vec![
                Stream {
                    pattern: Pattern::Seq,
                    footprint: 4 << 10,
                    dependent: false,
                    weight: 1,
                },
                Stream {
                    pattern: Pattern::Random,
                    footprint: 8 << 10,
                    dependent: false,
                    weight: 1,
                },
            ],
        }
    }
}

fn stream(pattern: Pattern, footprint: u64, dependent: bool, weight: u32) -> Stream {
    Stream {
        pattern,
        footprint,
        dependent,
        weight,
    }
}

/// The named suite, in a fixed order (`cpistack workloads`).
pub fn suite() -> Vec<Spec> {
    const KB: u64 = 1 << 10;
    const MB: u64 = 1 << 20;
    let b = Spec::base;
    vec![
        b(
            "balanced",
            "small code and data, predictable branches, good ILP: mostly base",
        ),
        Spec {
            blocks: 5000,
            branches: Branches {
                biased: 95,
                looped: 0,
                call: 5,
                ..b("", "").branches
            },
            ..b(
                "icache",
                "160 KB of code in a loop: L1 I-cache misses that hit in L2",
            )
        },
        Spec {
            blocks: 1024,
            block_len: (12, 16),
            block_spacing: 4096 + 68,
            ..b(
                "itlb",
                "1024 small blocks one page apart: I-TLB misses (plus L1I misses)",
            )
        },
        Spec {
            block_len: (4, 7),
            branches: Branches {
                biased: 30,
                looped: 10,
                random: 60,
                ..b("", "").branches
            },
            ..b(
                "branchy",
                "short blocks ending in 50/50 branches: branch-misprediction bound",
            )
        },
        Spec {
            block_len: (5, 8),
            loop_trip: (3, 9),
            branches: Branches {
                biased: 20,
                looped: 40,
                pattern: 40,
                ..b("", "").branches
            },
            ..b(
                "patterns",
                "short loops and periodic patterns: learnable by gshare, loop exits mispredict",
            )
        },
        Spec {
            indirect_targets: 6,
            functions: 16,
            branches: Branches {
                biased: 40,
                indirect: 35,
                call: 25,
                ..b("", "").branches
            },
            ..b(
                "indirect",
                "indirect jumps and calls among several targets, calls and returns",
            )
        },
        Spec {
            mix: Mix {
                load: 4,
                store: 1,
                ..b("", "").mix
            },
            streams: vec![stream(Pattern::Stride(64 * 17), 64 * MB, false, 1)],
            ..b(
                "mlp",
                "independent strided loads over 64 MB: overlapping L2 D-misses",
            )
        },
        Spec {
            mix: Mix {
                load: 12,
                store: 2,
                ..b("", "").mix
            },
            streams: vec![
                stream(Pattern::Random, 64 * MB, true, 1),
                stream(Pattern::Seq, 4 * KB, false, 1),
            ],
            ..b("chase", "pointer chasing over 64 MB: serial L2 D-misses")
        },
        Spec {
            mix: Mix {
                load: 5,
                store: 2,
                ..b("", "").mix
            },
            streams: vec![
                stream(Pattern::Stride(4096 + 64), 160 * (4096 + 64), true, 2),
                stream(Pattern::Seq, 4 * KB, false, 1),
            ],
            ..b(
                "dtlb",
                "dependent loads one page apart over 160 pages: D-TLB misses (the lines stay in L1D)",
            )
        },
        Spec {
            mix: Mix {
                alu: 40,
                mul: 15,
                div: 4,
                fp: 20,
                load: 12,
                store: 5,
            },
            dep_distance: 2,
            regs: 4,
            ..b(
                "longlat",
                "dependent divides, multiplies and FP: long-latency bound",
            )
        },
        Spec {
            mix: Mix {
                load: 15,
                store: 3,
                ..b("", "").mix
            },
            streams: vec![
                stream(Pattern::Random, 128 * KB, true, 1),
                stream(Pattern::Seq, 4 * KB, false, 1),
            ],
            ..b(
                "l1d",
                "pointer chasing within 128 KB: L1 D-misses that hit in L2",
            )
        },
        Spec {
            mix: Mix {
                load: 30,
                store: 10,
                ..b("", "").mix
            },
            streams: vec![
                stream(Pattern::Seq, 128 * MB, false, 3),
                stream(Pattern::Seq, 128 * MB, false, 1),
            ],
            ..b(
                "stream",
                "sequential streams over 128 MB: L2 misses with pending hits (prefetch-friendly)",
            )
        },
        Spec {
            mix: Mix {
                alu: 35,
                mul: 10,
                div: 2,
                fp: 25,
                load: 10,
                store: 4,
            },
            dep_distance: 3,
            regs: 8,
            streams: vec![
                stream(Pattern::Stride(256), 32 * MB, false, 1),
                stream(Pattern::Seq, 8 * KB, false, 2),
            ],
            ..b(
                "fpmix",
                "mixture: FP and long-latency arithmetic with strided L2 misses",
            )
        },
    ]
}

/// Workloads that show where interval analysis, and so FMT, breaks down (the
/// paper's named exceptions): heavily overlapped frontend and long backend misses
/// (where the reference's two orders disagree by many points) and chained miss
/// types on one load. Runnable by name (`by_name`), listed by
/// `cpistack workloads --all`, run by `cpistack stacks --workloads limits`;
/// not part of [`suite`] (docs/accuracy.md reports their errors as limits).
pub fn limits() -> Vec<Spec> {
    const KB: u64 = 1 << 10;
    const MB: u64 = 1 << 20;
    let b = Spec::base;
    vec![
        Spec {
            blocks: 16000,
            functions: 64,
            branches: Branches {
                biased: 95,
                looped: 0,
                call: 5,
                ..b("", "").branches
            },
            streams: vec![stream(Pattern::Random, 2 * MB, false, 1)],
            mix: Mix {
                load: 4,
                store: 1,
                ..b("", "").mix
            },
            ..b(
                "bigcode",
                "500 KB of code against 2 MB of random data: L2 I-misses and I-TLB misses",
            )
        },
        Spec {
            blocks: 6000,
            block_len: (4, 8),
            functions: 32,
            branches: Branches {
                biased: 60,
                looped: 5,
                random: 20,
                indirect: 5,
                call: 10,
                ..b("", "").branches
            },
            mix: Mix {
                load: 22,
                store: 8,
                ..b("", "").mix
            },
            streams: vec![
                stream(Pattern::Random, 16 * MB, false, 1),
                stream(Pattern::Random, 32 * KB, false, 4),
            ],
            ..b(
                "server",
                "mixture: big code, unpredictable branches, random data: I-cache, branch and L2 D",
            )
        },
        Spec {
            mix: Mix {
                load: 5,
                store: 2,
                ..b("", "").mix
            },
            streams: vec![
                stream(Pattern::Stride(4096 + 64), 768 * KB, true, 2),
                stream(Pattern::Seq, 4 * KB, false, 1),
            ],
            ..b(
                "dtlb_l1miss",
                "dependent page-strided loads over 768 KB: each D-TLB walk followed by an L1 D-miss (chained miss types)",
            )
        },
    ]
}

/// The suite or limit workload called `name`.
pub fn by_name(name: &str) -> Option<Spec> {
    suite().into_iter().chain(limits()).find(|s| s.name == name)
}

/// The names of the suite, in order.
pub fn names() -> Vec<&'static str> {
    suite().iter().map(|s| s.name).collect()
}

/// The names of the limit workloads, in order.
pub fn limit_names() -> Vec<&'static str> {
    limits().iter().map(|s| s.name).collect()
}
