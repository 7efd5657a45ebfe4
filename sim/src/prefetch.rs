//! Data prefetchers: next-line on a miss, tagged (next line on a miss and on the
//! first demand hit to a prefetched line), and stride with a reference prediction
//! table (RPT) indexed by the load's PC (Chen and Baer).

use crate::config::{PrefetchCfg, PrefetchKind};

#[derive(Copy, Clone, Debug, Default)]
struct RptEntry {
    tag: u64,
    last: u64,
    stride: i64,
    /// 0 initial, 1 transient, 2 steady.
    state: u8,
}

/// A data prefetcher; `observe` returns the addresses to prefetch into `out`.
#[derive(Clone, Debug)]
pub struct Prefetcher {
    kind: PrefetchKind,
    degree: u32,
    line: u64,
    rpt: Vec<RptEntry>,
}

impl Prefetcher {
    pub fn new(cfg: &PrefetchCfg, line: u32) -> Prefetcher {
        Prefetcher {
            kind: cfg.kind,
            degree: cfg.degree,
            line: line as u64,
            rpt: vec![RptEntry::default(); cfg.rpt_entries as usize],
        }
    }

    pub fn enabled(&self) -> bool {
        self.kind != PrefetchKind::None
    }

    /// A demand access by the load at `pc` to `addr`; `miss` if it missed in L1,
    /// `first_use` if it hit a prefetched line for the first time. Pushes up to
    /// `degree` prefetch addresses into `out` (cleared first).
    pub fn observe(&mut self, pc: u64, addr: u64, miss: bool, first_use: bool, out: &mut Vec<u64>) {
        out.clear();
        let line = addr & !(self.line - 1);
        match self.kind {
            PrefetchKind::None => {}
            // no prefetch past the top of the address space (a trace's
            // addresses may come near it)
            PrefetchKind::NextLine => {
                if miss {
                    out.extend(
                        (1..=self.degree as u64).map_while(|k| line.checked_add(k * self.line)),
                    );
                }
            }
            PrefetchKind::Tagged => {
                if miss || first_use {
                    out.extend(
                        (1..=self.degree as u64).map_while(|k| line.checked_add(k * self.line)),
                    );
                }
            }
            PrefetchKind::Stride => {
                let n = self.rpt.len();
                let e = &mut self.rpt[(pc >> 2) as usize & (n - 1)];
                if e.tag != pc {
                    *e = RptEntry {
                        tag: pc,
                        last: addr,
                        stride: 0,
                        state: 0,
                    };
                    return;
                }
                let s = addr.wrapping_sub(e.last) as i64;
                if s == e.stride && s != 0 {
                    e.state = (e.state + 1).min(2);
                } else {
                    e.state = e.state.saturating_sub(1);
                    if e.state == 0 {
                        e.stride = s;
                    }
                }
                e.last = addr;
                if e.state == 2 {
                    let st = e.stride;
                    // none past either end of the address space
                    out.extend(
                        (1..=self.degree as i64).map_while(|k| {
                            st.checked_mul(k).and_then(|d| addr.checked_add_signed(d))
                        }),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pf(kind: PrefetchKind) -> Prefetcher {
        Prefetcher::new(
            &PrefetchCfg {
                kind,
                degree: 1,
                rpt_entries: 16,
            },
            64,
        )
    }

    #[test]
    fn only_kind_none_is_disabled() {
        assert!(!pf(PrefetchKind::None).enabled());
        for kind in [
            PrefetchKind::NextLine,
            PrefetchKind::Tagged,
            PrefetchKind::Stride,
        ] {
            assert!(pf(kind).enabled(), "{kind:?}");
        }
    }

    /// A trace may touch addresses near either end of the address space:
    /// no prefetch goes past them (they used to wrap to the bottom, and
    /// overflowed in a debug build).
    #[test]
    fn no_prefetch_past_either_end_of_the_address_space() {
        let cfg = |kind| PrefetchCfg {
            kind,
            degree: 4,
            rpt_entries: 16,
        };
        let mut out = vec![];
        for kind in [PrefetchKind::NextLine, PrefetchKind::Tagged] {
            let mut p = Prefetcher::new(&cfg(kind), 64);
            p.observe(0, u64::MAX - 64 - 3, true, true, &mut out);
            assert_eq!(out, vec![u64::MAX - 63], "{kind:?}");
            p.observe(0, u64::MAX, true, true, &mut out);
            assert!(out.is_empty(), "{kind:?}");
        }
        // a steady stride up to the top, and one down to the bottom
        for (start, stride) in [(u64::MAX - 10 * 0x1000, 0x1000i64), (10 * 0x1000, -0x1000)] {
            let mut p = Prefetcher::new(&cfg(PrefetchKind::Stride), 64);
            for i in 0..8u64 {
                let addr = start.wrapping_add((stride * i as i64) as u64);
                p.observe(0x400, addr, true, false, &mut out);
            }
            // after the eighth access (index 7), 3 strides are left before the end
            let last = start.wrapping_add((stride * 7) as u64);
            let want: Vec<u64> = (1..=3)
                .map(|k| last.wrapping_add((stride * k) as u64))
                .collect();
            assert_eq!(out, want, "stride {stride}");
        }
        // a stride so large that its multiples overflow an i64
        let mut p = Prefetcher::new(&cfg(PrefetchKind::Stride), 64);
        for i in 0..4u64 {
            p.observe(
                0x400,
                i.wrapping_mul(0x5000_0000_0000_0000),
                true,
                false,
                &mut out,
            );
        }
        assert!(out.len() <= 1, "{out:x?}");
    }

    #[test]
    fn next_line_only_on_miss() {
        let mut p = pf(PrefetchKind::NextLine);
        let mut out = vec![];
        p.observe(0, 0x1010, false, false, &mut out);
        assert!(out.is_empty());
        p.observe(0, 0x1010, true, false, &mut out);
        assert_eq!(out, vec![0x1040]);
    }

    #[test]
    fn tagged_on_first_use() {
        let mut p = pf(PrefetchKind::Tagged);
        let mut out = vec![];
        p.observe(0, 0x1040, false, true, &mut out);
        assert_eq!(out, vec![0x1080]);
    }

    #[test]
    fn each_load_pc_keeps_its_own_stride() {
        // 16 entries indexed by pc >> 2: 0x400 and 0x408 are entries 0 and 2
        let mut p = pf(PrefetchKind::Stride);
        let mut out = vec![];
        let (a, b) = (0x400, 0x408);
        for i in 0..4u64 {
            p.observe(a, 0x10000 + i * 256, true, false, &mut out);
            assert_eq!(out.is_empty(), i < 3, "load {a:#x}, access {i}");
            p.observe(b, 0x80000 - i * 64, true, false, &mut out);
            assert_eq!(out.is_empty(), i < 3, "load {b:#x}, access {i}");
        }
        // both steady after their fourth access, each with its own stride
        p.observe(a, 0x10000 + 4 * 256, true, false, &mut out);
        assert_eq!(out, vec![0x10000 + 5 * 256]);
        p.observe(b, 0x80000 - 4 * 64, true, false, &mut out);
        assert_eq!(out, vec![0x80000 - 5 * 64]);
    }

    #[test]
    fn a_load_taking_over_an_entry_does_not_use_the_strides_learned_there() {
        // 0x400 and 0x440 are both entry 0 of 16 (pc >> 2 = 0x100, 0x110)
        let mut p = pf(PrefetchKind::Stride);
        let mut out = vec![];
        for i in 0..4u64 {
            p.observe(0x400, 0x10000 + i * 256, true, false, &mut out);
        }
        assert_eq!(out, vec![0x10000 + 4 * 256], "0x400 steady");
        // the other load, at the address the first one's stride predicts
        p.observe(0x440, 0x10000 + 4 * 256, true, false, &mut out);
        assert!(out.is_empty(), "a new load is only allocated: {out:x?}");
    }

    #[test]
    fn degree_two_prefetches_the_next_two_lines_or_strides() {
        let cfg = |kind| PrefetchCfg {
            kind,
            degree: 2,
            rpt_entries: 16,
        };
        let mut out = vec![];
        let mut p = Prefetcher::new(&cfg(PrefetchKind::NextLine), 64);
        p.observe(0, 0x1010, true, false, &mut out);
        assert_eq!(out, vec![0x1040, 0x1080]);
        let mut p = Prefetcher::new(&cfg(PrefetchKind::Tagged), 64);
        p.observe(0, 0x1010, true, false, &mut out);
        assert_eq!(out, vec![0x1040, 0x1080], "tagged, on a miss");
        p.observe(0, 0x1040, false, true, &mut out);
        assert_eq!(out, vec![0x1080, 0x10c0], "tagged, on first use");
        p.observe(0, 0x1040, false, false, &mut out);
        assert!(out.is_empty(), "tagged, on a later hit");
        let mut p = Prefetcher::new(&cfg(PrefetchKind::Stride), 64);
        for i in 0..4u64 {
            p.observe(0x400, 0x10000 + i * 96, true, false, &mut out);
        }
        assert_eq!(out, vec![0x10000 + 4 * 96, 0x10000 + 5 * 96]);
    }

    #[test]
    fn stride_needs_steady_state() {
        let mut p = pf(PrefetchKind::Stride);
        let mut out = vec![];
        let mut fired = 0;
        for i in 0..6u64 {
            p.observe(0x400, 0x10000 + i * 256, true, false, &mut out);
            if !out.is_empty() {
                fired += 1;
                assert_eq!(out[0], 0x10000 + (i + 1) * 256);
            }
        }
        // first access allocates, second learns the stride, third confirms (transient),
        // fourth on reaches steady
        assert_eq!(fired, 3);
    }
}
