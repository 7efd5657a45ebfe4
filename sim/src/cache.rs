//! Set-associative tag arrays with LRU replacement and MSHRs, used for the
//! caches and (with the page as the "line") for the TLBs.
//!
//! Timing is by timestamps: a miss installs the line at once with the cycle its
//! data arrives (`ready`) and the level it comes from. A later access to a line
//! whose `ready` lies in the future is a *pending hit*: it merges with the miss in
//! flight and waits for the same fill, without taking another MSHR. A miss needs a
//! free MSHR (an MSHR is busy until its fill arrives).

/// Where a line's data came from (the level a waiting access waits on).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Level {
    /// Present in this level (or installed without a miss).
    #[default]
    Hit = 0,
    /// Filled from the next level (an L1 miss that hit in L2, or a TLB walk).
    Next = 1,
    /// Filled from memory (an L2 miss).
    Memory = 2,
}

/// The outcome of a lookup.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Present; data usable from `ready` (in the past for a plain hit, in the
    /// future for a pending hit), filled from `level`.
    Present {
        ready: u64,
        level: Level,
    },
    Miss,
}

/// A set-associative array of line tags.
#[derive(Clone, Debug)]
pub struct Cache {
    sets: usize,
    ways: usize,
    shift: u32,
    /// Line address + 1 (0 = invalid), `sets * ways`.
    tags: Vec<u64>,
    stamp: Vec<u64>,
    ready: Vec<u64>,
    level: Vec<Level>,
    /// Installed by a prefetch and not yet used by a demand access.
    prefetched: Vec<bool>,
    /// The line's last fill was requested by a prefetch (kept after use: a
    /// demand access that merges with the fill in flight is a late prefetch).
    by_prefetch: Vec<bool>,
    mshr: Vec<u64>,
    clock: u64,
    /// Lines installed so far (changes whenever the contents change).
    fills: u64,
}

impl Cache {
    /// `size` bytes, `ways`, `line` bytes (powers of two, checked by the config), `mshrs`.
    pub fn new(size: u64, ways: u32, line: u32, mshrs: u32) -> Cache {
        let ways = ways as usize;
        let sets = (size / line as u64) as usize / ways;
        let n = sets * ways;
        Cache {
            sets,
            ways,
            shift: line.trailing_zeros(),
            tags: vec![0; n],
            stamp: vec![0; n],
            ready: vec![0; n],
            level: vec![Level::Hit; n],
            prefetched: vec![false; n],
            by_prefetch: vec![false; n],
            mshr: vec![0; mshrs as usize],
            clock: 0,
            fills: 0,
        }
    }

    #[inline]
    pub fn line_of(&self, addr: u64) -> u64 {
        addr >> self.shift
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        let base = (line as usize & (self.sets - 1)) * self.ways;
        let tag = line + 1;
        (base..base + self.ways).find(|&i| self.tags[i] == tag)
    }

    /// Look up without changing anything.
    #[inline]
    pub fn probe(&self, addr: u64) -> Lookup {
        match self.find(self.line_of(addr)) {
            Some(i) => Lookup::Present {
                ready: self.ready[i],
                level: self.level[i],
            },
            None => Lookup::Miss,
        }
    }

    /// Look up and, if present, make the line most recently used. Returns whether
    /// the line had been prefetched and not used yet (the tagged prefetcher's trigger).
    #[inline]
    pub fn access(&mut self, addr: u64) -> (Lookup, bool) {
        match self.find(self.line_of(addr)) {
            Some(i) => {
                self.clock += 1;
                self.stamp[i] = self.clock;
                let first_use = std::mem::take(&mut self.prefetched[i]);
                (
                    Lookup::Present {
                        ready: self.ready[i],
                        level: self.level[i],
                    },
                    first_use,
                )
            }
            None => (Lookup::Miss, false),
        }
    }

    /// Whether a miss at `now` can get an MSHR.
    #[inline]
    pub fn mshr_free(&self, now: u64) -> bool {
        self.mshr.iter().any(|&r| r <= now)
    }

    /// Lines installed so far: the contents (which lines are present) change only
    /// when this does.
    #[inline]
    pub fn fills(&self) -> u64 {
        self.fills
    }

    /// The first cycle after `now` at which a busy MSHR frees (`u64::MAX` if none is busy).
    #[inline]
    pub fn next_release(&self, now: u64) -> u64 {
        self.mshr
            .iter()
            .filter(|&&r| r > now)
            .min()
            .copied()
            .unwrap_or(u64::MAX)
    }

    /// Outstanding misses at `now`.
    pub fn mshr_busy(&self, now: u64) -> usize {
        self.mshr.iter().filter(|&&r| r > now).count()
    }

    /// Take an MSHR until `ready`; false when none is free.
    #[inline]
    pub fn mshr_alloc(&mut self, now: u64, ready: u64) -> bool {
        match self.mshr.iter_mut().find(|r| **r <= now) {
            Some(r) => {
                *r = ready;
                true
            }
            None => false,
        }
    }

    /// An idealised access (`ideal.*`): it hits whatever the contents, but
    /// they change as in a real access: the line becomes most recently used,
    /// or, missing, is installed (usable from `ready`, without an MSHR).
    /// True when the line was missing, so a real access would have gone on
    /// to the next level.
    pub fn ideal_touch(&mut self, addr: u64, ready: u64) -> bool {
        let missed = self.access(addr).0 == Lookup::Miss;
        if missed {
            self.fill(addr, ready, Level::Next, false);
        }
        missed
    }

    /// Install the line of `addr` (LRU victim), usable from `ready`, filled from `level`.
    pub fn fill(&mut self, addr: u64, ready: u64, level: Level, prefetched: bool) {
        let line = self.line_of(addr);
        let i = match self.find(line) {
            Some(i) => i,
            None => {
                let base = (line as usize & (self.sets - 1)) * self.ways;
                (base..base + self.ways)
                    .min_by_key(|&i| (self.tags[i] != 0, self.stamp[i]))
                    .expect("at least one way")
            }
        };
        self.clock += 1;
        self.fills += 1;
        self.tags[i] = line + 1;
        self.stamp[i] = self.clock;
        self.ready[i] = ready;
        self.level[i] = level;
        self.prefetched[i] = prefetched;
        self.by_prefetch[i] = prefetched;
    }

    /// Whether the line of `addr` is present and its last fill was requested
    /// by a prefetch (`fill(.., prefetched = true)`, or as set by
    /// [`set_prefetch_origin`](Self::set_prefetch_origin)), used or not since.
    pub fn filled_by_prefetch(&self, addr: u64) -> bool {
        self.find(self.line_of(addr))
            .is_some_and(|i| self.by_prefetch[i])
    }

    /// Say whose request the present line of `addr` is coming with, when it
    /// is not the fill's own: an L1 fill that merged with the next level's
    /// line in flight comes with that line's request (nothing if absent).
    /// Changes nothing but [`filled_by_prefetch`](Self::filled_by_prefetch).
    pub fn set_prefetch_origin(&mut self, addr: u64, by_prefetch: bool) {
        if let Some(i) = self.find(self.line_of(addr)) {
            self.by_prefetch[i] = by_prefetch;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_after_fill_and_pending_hit_before() {
        let mut c = Cache::new(1024, 2, 64, 2);
        assert_eq!(c.access(0x100).0, Lookup::Miss);
        c.fill(0x100, 50, Level::Memory, false);
        // same line, other offset: pending until 50
        assert_eq!(
            c.access(0x13f).0,
            Lookup::Present {
                ready: 50,
                level: Level::Memory
            }
        );
        assert_eq!(c.access(0x140).0, Lookup::Miss);
    }

    #[test]
    fn lru_evicts_least_recent() {
        // 2 ways, 8 sets of 64 B: lines 0, 8, 16 map to set 0
        let mut c = Cache::new(1024, 2, 64, 2);
        c.fill(0, 0, Level::Hit, false);
        c.fill(8 * 64, 0, Level::Hit, false);
        c.access(0); // 0 most recent
        c.fill(16 * 64, 0, Level::Hit, false); // evicts line 8
        assert!(matches!(c.probe(0), Lookup::Present { .. }));
        assert_eq!(c.probe(8 * 64), Lookup::Miss);
        assert!(matches!(c.probe(16 * 64), Lookup::Present { .. }));
    }

    #[test]
    fn mshr_limit_and_release() {
        let mut c = Cache::new(1024, 2, 64, 2);
        assert!(c.mshr_alloc(0, 10));
        assert!(c.mshr_alloc(0, 20));
        assert!(!c.mshr_free(5));
        assert!(!c.mshr_alloc(5, 30));
        assert_eq!(c.mshr_busy(5), 2);
        assert!(c.mshr_free(10));
        assert!(c.mshr_alloc(10, 40));
        assert_eq!(c.mshr_busy(10), 2);
    }

    #[test]
    fn fills_alone_keep_lru_order() {
        // 2 ways, 8 sets of 64 B: lines 0, 8, 16, 24 map to set 0; with no
        // accesses in between, each fill evicts the line filled longest ago
        let mut c = Cache::new(1024, 2, 64, 2);
        c.fill(0, 0, Level::Hit, false);
        c.fill(8 * 64, 0, Level::Hit, false);
        c.fill(16 * 64, 0, Level::Hit, false); // evicts line 0
        c.fill(24 * 64, 0, Level::Hit, false); // evicts line 8
        assert_eq!(c.probe(0), Lookup::Miss);
        assert_eq!(c.probe(8 * 64), Lookup::Miss);
        assert!(matches!(c.probe(16 * 64), Lookup::Present { .. }));
        assert!(matches!(c.probe(24 * 64), Lookup::Present { .. }));
    }

    #[test]
    fn fills_counts_every_installed_line() {
        let mut c = Cache::new(1024, 2, 64, 2);
        assert_eq!(c.fills(), 0);
        c.fill(0, 0, Level::Hit, false);
        c.fill(0x40, 5, Level::Next, false);
        c.access(0);
        assert_eq!(c.fills(), 2, "an access installs nothing");
        c.fill(0, 9, Level::Memory, false); // a refill of a present line counts too
        assert_eq!(c.fills(), 3);
    }

    #[test]
    fn an_mshr_is_busy_until_its_fill_arrives() {
        let mut c = Cache::new(1024, 2, 64, 2);
        assert_eq!(c.next_release(0), u64::MAX, "none busy");
        assert!(c.mshr_alloc(0, 10));
        assert!(c.mshr_alloc(0, 20));
        assert_eq!(c.mshr_busy(9), 2);
        assert_eq!(c.next_release(9), 10);
        // at its fill cycle an MSHR is free again
        assert_eq!(c.mshr_busy(10), 1);
        assert!(c.mshr_free(10));
        assert_eq!(c.next_release(10), 20);
        assert_eq!(c.mshr_busy(20), 0);
        assert_eq!(c.next_release(20), u64::MAX);
    }

    #[test]
    fn prefetched_bit_reported_once() {
        let mut c = Cache::new(1024, 2, 64, 2);
        c.fill(0x200, 0, Level::Next, true);
        assert!(c.access(0x200).1);
        assert!(!c.access(0x200).1);
        // the origin of the fill outlives the first use
        assert!(c.filled_by_prefetch(0x200));
        // a demand fill of the line replaces it; an absent line was no prefetch's
        c.fill(0x200, 0, Level::Next, false);
        assert!(!c.filled_by_prefetch(0x200));
        assert!(!c.filled_by_prefetch(0x400));
        // the origin set apart from the fill, and only that
        c.set_prefetch_origin(0x200, true);
        assert!(c.filled_by_prefetch(0x200));
        assert!(!c.access(0x200).1, "the first-use bit is the fill's");
        c.set_prefetch_origin(0x200, false);
        assert!(!c.filled_by_prefetch(0x200));
        c.set_prefetch_origin(0x400, true);
        assert!(!c.filled_by_prefetch(0x400), "absent: nothing to mark");
    }

    #[test]
    fn direct_mapped_conflict() {
        let mut c = Cache::new(8192, 1, 64, 4);
        c.fill(0, 0, Level::Hit, false);
        c.fill(8192, 0, Level::Hit, false);
        assert_eq!(c.probe(0), Lookup::Miss);
    }
}
