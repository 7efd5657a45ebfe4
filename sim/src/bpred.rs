//! Branch prediction: a hybrid bimodal/gshare direction predictor with a chooser,
//! a set-associative BTB and a return-address stack with checkpoint repair.

use crate::config::BpredCfg;

#[inline]
fn bump(c: &mut u8, up: bool) {
    if up {
        *c = (*c + 1).min(3);
    } else {
        *c = c.saturating_sub(1);
    }
}

/// What the direction predictor said, kept with the branch to train it at commit.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DirPred {
    pub taken: bool,
    pub bimodal: bool,
    pub gshare: bool,
}

/// Hybrid bimodal/gshare with a chooser (2-bit counters everywhere).
#[derive(Clone, Debug)]
pub struct Hybrid {
    bimodal: Vec<u8>,
    gshare: Vec<u8>,
    chooser: Vec<u8>,
    hist_mask: u64,
}

impl Hybrid {
    pub fn new(cfg: &BpredCfg) -> Hybrid {
        Hybrid {
            bimodal: vec![1; 1 << cfg.bimodal_bits],
            gshare: vec![1; 1 << cfg.gshare_bits],
            // start by trusting the bimodal side (weakly)
            chooser: vec![1; 1 << cfg.chooser_bits],
            hist_mask: (1u64 << cfg.gshare_bits) - 1,
        }
    }

    #[inline]
    fn idx(&self, pc: u64, ghr: u64) -> (usize, usize, usize) {
        let p = (pc >> 2) as usize;
        (
            p & (self.bimodal.len() - 1),
            ((pc >> 2) ^ (ghr & self.hist_mask)) as usize & (self.gshare.len() - 1),
            p & (self.chooser.len() - 1),
        )
    }

    #[inline]
    pub fn predict(&self, pc: u64, ghr: u64) -> DirPred {
        let (b, g, c) = self.idx(pc, ghr);
        let bimodal = self.bimodal[b] >= 2;
        let gshare = self.gshare[g] >= 2;
        let taken = if self.chooser[c] >= 2 {
            gshare
        } else {
            bimodal
        };
        DirPred {
            taken,
            bimodal,
            gshare,
        }
    }

    /// Train with the outcome, using the history the prediction was made with.
    #[inline]
    pub fn update(&mut self, pc: u64, ghr: u64, pred: DirPred, taken: bool) {
        let (b, g, c) = self.idx(pc, ghr);
        if pred.bimodal != pred.gshare {
            bump(&mut self.chooser[c], pred.gshare == taken);
        }
        bump(&mut self.bimodal[b], taken);
        bump(&mut self.gshare[g], taken);
    }
}

/// Branch target buffer: set-associative, LRU.
#[derive(Clone, Debug)]
pub struct Btb {
    sets: usize,
    ways: usize,
    tag: Vec<u64>,
    target: Vec<u64>,
    stamp: Vec<u64>,
    clock: u64,
}

impl Btb {
    pub fn new(cfg: &BpredCfg) -> Btb {
        let ways = cfg.btb_ways as usize;
        let n = cfg.btb_entries as usize;
        Btb {
            sets: n / ways,
            ways,
            tag: vec![0; n],
            target: vec![0; n],
            stamp: vec![0; n],
            clock: 0,
        }
    }

    #[inline]
    fn set(&self, pc: u64) -> usize {
        ((pc >> 2) as usize & (self.sets - 1)) * self.ways
    }

    #[inline]
    pub fn lookup(&self, pc: u64) -> Option<u64> {
        let b = self.set(pc);
        (b..b + self.ways)
            .find(|&i| self.tag[i] == pc.wrapping_add(1))
            .map(|i| self.target[i])
    }

    pub fn update(&mut self, pc: u64, target: u64) {
        let b = self.set(pc);
        let t = pc.wrapping_add(1);
        let i = (b..b + self.ways)
            .find(|&i| self.tag[i] == t)
            .unwrap_or_else(|| (b..b + self.ways).min_by_key(|&i| self.stamp[i]).unwrap());
        self.clock += 1;
        self.tag[i] = t;
        self.target[i] = target;
        self.stamp[i] = self.clock;
    }
}

/// Return-address stack, circular; repaired from a per-branch checkpoint
/// (top index and the value at the top) after a squash.
#[derive(Clone, Debug)]
pub struct Ras {
    stack: Vec<u64>,
    top: usize,
}

/// A RAS checkpoint taken before a branch's own push or pop.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RasCkpt {
    pub top: u16,
    pub value: u64,
}

impl Ras {
    pub fn new(entries: u32) -> Ras {
        Ras {
            stack: vec![0; entries as usize],
            top: 0,
        }
    }
    #[inline]
    pub fn checkpoint(&self) -> RasCkpt {
        RasCkpt {
            top: self.top as u16,
            value: self.stack[self.top],
        }
    }
    #[inline]
    pub fn restore(&mut self, c: RasCkpt) {
        self.top = c.top as usize;
        self.stack[self.top] = c.value;
    }
    #[inline]
    pub fn push(&mut self, ret: u64) {
        self.top = (self.top + 1) % self.stack.len();
        self.stack[self.top] = ret;
    }
    /// Pop the predicted return address (0 when nothing was pushed there).
    #[inline]
    pub fn pop(&mut self) -> u64 {
        let v = self.stack[self.top];
        self.top = (self.top + self.stack.len() - 1) % self.stack.len();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bimodal_learns_biased_branch() {
        let mut h = Hybrid::new(&BpredCfg::default());
        let mut wrong = 0;
        for i in 0..200 {
            let p = h.predict(0x400, 0);
            if !p.taken {
                wrong += 1;
            }
            h.update(0x400, 0, p, true);
            assert!(i < 200);
        }
        assert!(wrong <= 2, "wrong {wrong}");
    }

    #[test]
    fn gshare_learns_alternating_pattern() {
        let mut h = Hybrid::new(&BpredCfg::default());
        let mut ghr = 0u64;
        let mut wrong_late = 0;
        for i in 0..2000u64 {
            let taken = i % 2 == 0;
            let p = h.predict(0x800, ghr);
            if i >= 1000 && p.taken != taken {
                wrong_late += 1;
            }
            h.update(0x800, ghr, p, taken);
            ghr = ghr << 1 | taken as u64;
        }
        assert!(wrong_late < 10, "wrong after training: {wrong_late}");
    }

    #[test]
    fn each_branch_trains_its_own_counters_in_every_table() {
        // pc >> 2 indexes all three tables: 0x1000 and 0x2000 are entries 0x400
        // and 0x800, apart in the 12-bit bimodal and chooser tables and (with no
        // history) in the 14-bit gshare table
        let mut h = Hybrid::new(&BpredCfg::default());
        let (a, b) = (0x1000, 0x2000);
        for _ in 0..4 {
            let p = h.predict(a, 0);
            h.update(a, 0, p, true);
            let p = h.predict(b, 0);
            h.update(b, 0, p, false);
        }
        // both sides agree on each branch, so the chooser was never trained
        let expect = |taken| DirPred {
            taken,
            bimodal: taken,
            gshare: taken,
        };
        assert_eq!(h.predict(a, 0), expect(true), "branch at {a:#x}");
        assert_eq!(h.predict(b, 0), expect(false), "branch at {b:#x}");
    }

    #[test]
    fn gshare_tells_histories_apart_that_share_set_bits() {
        // branch 0x1000 is gshare entry 0x400 ^ history: histories 0 and 0x400
        // are entries 0x400 and 0; taken after one, not taken after the other
        let mut h = Hybrid::new(&BpredCfg::default());
        let pc = 0x1000;
        for _ in 0..4 {
            let p = h.predict(pc, 0);
            h.update(pc, 0, p, true);
            let p = h.predict(pc, 0x400);
            h.update(pc, 0x400, p, false);
        }
        assert!(h.predict(pc, 0).gshare);
        assert!(!h.predict(pc, 0x400).gshare);
    }

    /// A BTB of 4 entries in 2 ways: set = (pc >> 2) & 1.
    fn small_btb() -> Btb {
        Btb::new(&BpredCfg {
            btb_entries: 4,
            btb_ways: 2,
            ..BpredCfg::default()
        })
    }

    #[test]
    fn btb_update_of_a_present_branch_replaces_its_target() {
        // an indirect jump that changed its target: one entry, the new target
        let mut b = small_btb();
        b.update(0x100, 0x500);
        b.update(0x100, 0x600);
        assert_eq!(b.lookup(0x100), Some(0x600));
        // the other way of the set is still free for a second branch
        b.update(0x108, 0x700);
        assert_eq!(b.lookup(0x100), Some(0x600));
        assert_eq!(b.lookup(0x108), Some(0x700));
    }

    #[test]
    fn btb_sets_hold_their_own_ways() {
        // two branches in each set
        let mut b = small_btb();
        let pcs = [0x100u64, 0x104, 0x108, 0x10c];
        for (k, &pc) in pcs.iter().enumerate() {
            b.update(pc, 0x1000 + k as u64);
        }
        for (k, &pc) in pcs.iter().enumerate() {
            assert_eq!(b.lookup(pc), Some(0x1000 + k as u64), "pc {pc:#x}");
        }
    }

    #[test]
    fn btb_stores_and_evicts() {
        let mut b = small_btb();
        assert_eq!(b.lookup(0x100), None);
        b.update(0x100, 0x500);
        assert_eq!(b.lookup(0x100), Some(0x500));
        // set index = (pc>>2)&1: 0x100, 0x108, 0x110 all set 0
        b.update(0x108, 1);
        b.lookup(0x100);
        b.update(0x110, 2);
        assert_eq!(
            b.lookup(0x100),
            None,
            "LRU (by update) evicts the oldest written"
        );
        assert_eq!(b.lookup(0x110), Some(2));
    }

    #[test]
    fn ras_pops_in_reverse_push_order_and_overwrites_the_oldest() {
        // 4 entries, 6 calls deep: the two oldest return addresses are lost
        let mut r = Ras::new(4);
        for ret in 1..=6 {
            r.push(ret);
        }
        let pops: Vec<u64> = (0..4).map(|_| r.pop()).collect();
        assert_eq!(pops, [6, 5, 4, 3]);
    }

    #[test]
    fn ras_push_pop_and_repair() {
        let mut r = Ras::new(4);
        r.push(10);
        let ck = r.checkpoint();
        r.push(20);
        assert_eq!(r.pop(), 20);
        // wrong-path pop and push clobber the stack
        assert_eq!(r.pop(), 10);
        r.push(99);
        r.restore(ck);
        assert_eq!(r.pop(), 10);
    }
}
