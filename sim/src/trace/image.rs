//! The static code image: what the trace has shown about each code address so
//! far, used to fetch down mispredicted paths. Grows with distinct code
//! addresses only.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::isa::{BranchKind, Instr, OpClass};

/// Size in bytes assumed for an instruction whose size the trace never showed.
pub const DEFAULT_SIZE: u8 = 4;
/// Size of a plain instruction at an address the trace never showed.
pub const UNSEEN_SIZE: u8 = 4;

/// Size assumed for an instruction whose size the trace has not shown (a taken
/// branch never seen falling through, a `rep` iteration, the last record), from
/// the common x86-64 encodings: a conditional or direct jump whose target `target`
/// (0 = unknown) is within a signed byte of `pc + 2` is the 2-byte `rel8` form,
/// otherwise `jcc rel32` (6) or `jmp rel32` (5); `call rel32` 5; `call *mem` 3;
/// `jmp *reg` 2; `ret` 1; anything else [`DEFAULT_SIZE`].
pub fn default_size(kind: Option<BranchKind>, pc: u64, target: u64) -> u8 {
    let short = target != 0 && {
        let disp = target.wrapping_sub(pc.wrapping_add(2)) as i64;
        (-128..=127).contains(&disp)
    };
    match kind {
        Some(BranchKind::Conditional) if target != 0 && !short => 6,
        Some(BranchKind::DirectJump) if target != 0 && !short => 5,
        Some(BranchKind::Conditional | BranchKind::DirectJump) => 2,
        Some(BranchKind::DirectCall) => 5,
        Some(BranchKind::IndirectCall) => 3,
        Some(BranchKind::IndirectJump) => 2,
        Some(BranchKind::Return) => 1,
        Some(BranchKind::Other) | None => DEFAULT_SIZE,
    }
}

/// What is known about one static instruction (from its last occurrence).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StaticInstr {
    /// Last taken target seen (0 = never seen taken).
    pub target: u64,
    /// Last data addresses read and written (0 = none).
    pub load_addr: u64,
    pub store_addr: u64,
    pub srcs: [u8; 4],
    pub dsts: [u8; 2],
    /// Size in bytes, 0 = not yet known.
    pub size: u8,
    pub class: OpClass,
    pub kind: Option<BranchKind>,
    /// Outcome of the last occurrence.
    pub last_taken: bool,
}

impl StaticInstr {
    /// The instruction as seen at `pc`, for the wrong path.
    pub fn to_instr(&self, pc: u64) -> Instr {
        Instr {
            pc,
            size: if self.size != 0 {
                self.size
            } else {
                default_size(self.kind, pc, self.target)
            },
            class: self.class,
            branch: self.kind,
            taken: self.last_taken,
            target: self.target,
            srcs: self.srcs,
            dsts: self.dsts,
            load_addr: self.load_addr,
            store_addr: self.store_addr,
        }
    }
}

/// The plain sequential ALU instruction assumed where the trace never went.
pub fn unseen_instr(pc: u64) -> Instr {
    Instr::plain_alu(pc, UNSEEN_SIZE)
}

/// A fast hasher for code addresses (folded 64x64->128 multiply).
#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        let p = (x ^ self.0) as u128 * 0x9E37_79B9_7F4A_7C15u128;
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }
}

/// Map keyed by code address.
pub type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// The most distinct addresses the image learns (about 100 MB): real
/// programs show a few thousand; a damaged or synthetic trace of distinct
/// addresses would otherwise grow it without bound.
pub const MAX_ADDRESSES: usize = 1 << 20;

/// The code image.
pub struct CodeImage {
    map: AddrMap<StaticInstr>,
    /// What [`CodeImage::entry`] hands out for an address not learned (the
    /// image full); overwritten each time.
    spare: StaticInstr,
    /// Records whose address was not learned because the image was full.
    not_learned: u64,
    max: usize,
}

impl Default for CodeImage {
    fn default() -> Self {
        CodeImage::with_max(MAX_ADDRESSES)
    }
}

impl CodeImage {
    pub fn new() -> CodeImage {
        CodeImage::default()
    }

    /// An image that learns at most `max` distinct addresses.
    pub fn with_max(max: usize) -> CodeImage {
        CodeImage {
            map: AddrMap::default(),
            spare: StaticInstr::fresh(OpClass::Alu, None),
            not_learned: 0,
            max,
        }
    }

    /// Records whose address was not learned because the image was full.
    pub fn not_learned(&self) -> u64 {
        self.not_learned
    }

    /// Number of distinct addresses seen.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every address seen and what is known about it (in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = (u64, &StaticInstr)> {
        self.map.iter().map(|(&pc, s)| (pc, s))
    }

    pub fn get(&self, pc: u64) -> Option<&StaticInstr> {
        self.map.get(&pc)
    }

    pub(crate) fn get_mut(&mut self, pc: u64) -> Option<&mut StaticInstr> {
        self.map.get_mut(&pc)
    }

    /// The entry for `pc`, created (size unknown, no target) if new.
    #[inline]
    pub(crate) fn entry(
        &mut self,
        pc: u64,
        class: OpClass,
        kind: Option<BranchKind>,
    ) -> &mut StaticInstr {
        if self.map.len() >= self.max && !self.map.contains_key(&pc) {
            self.not_learned += 1;
            self.spare = StaticInstr::fresh(class, kind);
            return &mut self.spare;
        }
        self.map
            .entry(pc)
            .or_insert(StaticInstr::fresh(class, kind))
    }
}

impl StaticInstr {
    /// What is known of an address seen once: nothing but its class and kind.
    fn fresh(class: OpClass, kind: Option<BranchKind>) -> StaticInstr {
        StaticInstr {
            target: 0,
            load_addr: 0,
            store_addr: 0,
            srcs: [0; 4],
            dsts: [0; 2],
            size: 0,
            class,
            kind,
            last_taken: false,
        }
    }
}
