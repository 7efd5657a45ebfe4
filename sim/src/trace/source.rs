//! `TraceSource`: committed instructions from a ChampSim trace (with one record
//! of lookahead), wrong-path instructions from the code image.

use std::path::Path;

use super::image::{default_size, unseen_instr, CodeImage};
use super::reader::RecordReader;
use super::record::{keeps_taken_bit, RawRecord};
use super::{TraceError, TraceStats};
use crate::isa::{BranchKind, Instr, InstrSource, OpClass, SourceError};

/// Largest x86-64 instruction; a successor further than this is not the
/// fall-through.
pub const MAX_INSTR_BYTES: u64 = 15;

/// Depth of the shadow call stack used to learn call sizes from returns.
const CALL_STACK: usize = 64;
/// How many shadow-stack entries a return may skip to find its call.
const CALL_SEARCH: usize = 4;

/// Bounded shadow stack of call addresses (a ring: the oldest is overwritten).
struct CallStack {
    pcs: [u64; CALL_STACK],
    top: usize,
    depth: usize,
}

impl CallStack {
    fn push(&mut self, pc: u64) {
        self.top = (self.top + 1) % CALL_STACK;
        self.pcs[self.top] = pc;
        self.depth = (self.depth + 1).min(CALL_STACK);
    }

    /// The call whose fall-through is `ret_target`, among the top few entries;
    /// pops it and everything above it.
    fn pop_matching(&mut self, ret_target: u64) -> Option<u64> {
        for d in 0..self.depth.min(CALL_SEARCH) {
            let i = (self.top + CALL_STACK - d) % CALL_STACK;
            let pc = self.pcs[i];
            let gap = ret_target.wrapping_sub(pc);
            if (1..=MAX_INSTR_BYTES).contains(&gap) {
                self.top = (self.top + CALL_STACK - d - 1) % CALL_STACK;
                self.depth -= d + 1;
                return Some(pc);
            }
        }
        None
    }
}

/// A ChampSim trace as an instruction source.
pub struct TraceSource {
    reader: RecordReader,
    name: String,
    /// The record to convert next (its successor is read as lookahead).
    pending: Option<RawRecord>,
    image: CodeImage,
    calls: CallStack,
    stats: TraceStats,
    /// The error that stopped the stream; returned again on every later call.
    failed: Option<TraceError>,
}

/// Report name of a trace file: the file name without `.xz`/`.gz`, then
/// without `.champsimtrace`/`.trace` (`602.gcc_s-734B.champsimtrace.xz`:
/// `602.gcc_s-734B`); a suffix that is the whole name stays, so the name is
/// never empty.
pub fn trace_name(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    for suffix in [".xz", ".gz", ".champsimtrace", ".trace"] {
        if let Some(s) = name.strip_suffix(suffix) {
            if !s.is_empty() {
                name = s.to_string();
            }
        }
    }
    name
}

impl TraceSource {
    /// Open a trace file (xz, gz or plain by suffix) and skip its first `skip`
    /// records. Fails if the file cannot be opened, holds fewer than `skip + 1`
    /// records, or the first records are malformed.
    pub fn open(path: impl AsRef<Path>, skip: u64) -> Result<TraceSource, TraceError> {
        let path = path.as_ref();
        let reader = RecordReader::open(path)?;
        TraceSource::from_reader(reader, trace_name(path), skip)
    }

    /// A source over an already opened reader.
    pub fn from_reader(
        mut reader: RecordReader,
        name: String,
        skip: u64,
    ) -> Result<TraceSource, TraceError> {
        let skipped = reader.skip(skip)?;
        let pending = reader.next_record()?;
        if pending.is_none() {
            return Err(TraceError::Empty {
                path: reader.path().to_string(),
                skip,
                records: skipped,
            });
        }
        Ok(TraceSource {
            reader,
            name,
            pending,
            image: CodeImage::new(),
            calls: CallStack {
                pcs: [0; CALL_STACK],
                top: 0,
                depth: 0,
            },
            stats: TraceStats {
                skipped,
                ..TraceStats::default()
            },
            failed: None,
        })
    }

    /// Counters of what was read and how the wrong path was served.
    pub fn stats(&self) -> TraceStats {
        TraceStats {
            image_addresses: self.image.len() as u64,
            image_not_learned: self.image.not_learned(),
            ..self.stats
        }
    }

    /// Verify the integrity check (xz block, gzip member) that covers the
    /// records read so far ([`RecordReader::verify`]): a failed check is
    /// an error naming the record the reader stopped at; a check too far
    /// on is counted in [`TraceStats::unverified_bytes`]. Call it at the
    /// end of a run: the source then ends (the records decoded on to reach
    /// the check are not instructions of the run).
    pub fn verify(&mut self) -> Result<(), TraceError> {
        self.verify_within(super::VERIFY_LIMIT_BYTES)
    }

    /// [`verify`](Self::verify), decoding at most `limit` bytes on.
    pub(crate) fn verify_within(&mut self, limit: u64) -> Result<(), TraceError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.pending = None;
        match self.reader.verify(limit) {
            Ok(v) => {
                self.stats.unverified_bytes = match v {
                    super::Verified::Yes => 0,
                    super::Verified::Beyond(n) => n,
                };
                Ok(())
            }
            Err(e) => {
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    /// The code image built so far.
    pub fn image(&self) -> &CodeImage {
        &self.image
    }

    /// The next committed instruction, `Ok(None)` at the end of the trace.
    #[inline]
    pub fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let Some(cur) = self.pending else {
            return Ok(None);
        };
        match self.reader.next_record() {
            Ok(next) => {
                self.pending = next;
                Ok(Some(self.convert(&cur, next.map(|r| r.ip))))
            }
            Err(e) => {
                self.pending = None;
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Convert one (validated) record given its successor's address, and
    /// record it in the code image.
    #[inline]
    fn convert(&mut self, r: &RawRecord, next_ip: Option<u64>) -> Instr {
        let kind = r.kind();
        let st = &mut self.stats;
        st.records += 1;
        // the flags the registers contradict (the registers decide)
        let writes_ip = kind.is_some();
        st.unflagged_branches += (writes_ip && r.is_branch == 0) as u64;
        st.flagged_non_branches += (!writes_ip && r.is_branch == 1) as u64;
        st.taken_non_branches += (!writes_ip && r.branch_taken == 1) as u64;
        let taken = match kind {
            None => false,
            Some(k) => {
                st.kinds.add(k);
                if keeps_taken_bit(k) {
                    r.branch_taken == 1
                } else {
                    st.forced_taken += (r.branch_taken == 0) as u64;
                    true
                }
            }
        };
        let load_addr = r.load_addr();
        let store_addr = r.store_addr();
        let class = if kind.is_some() {
            OpClass::Branch
        } else if load_addr != 0 {
            OpClass::Load
        } else if store_addr != 0 {
            OpClass::Store
        } else {
            OpClass::Alu
        };
        // Size from the successor when control fell through to it.
        let mut seq_size = 0u8;
        if let (false, Some(n)) = (taken, next_ip) {
            let gap = n.wrapping_sub(r.ip);
            if (1..=MAX_INSTR_BYTES).contains(&gap) {
                seq_size = gap as u8;
            } else if gap == 0 {
                st.repeats += 1;
            } else {
                st.discontinuities += 1;
            }
        }
        let e = self.image.entry(r.ip, class, kind);
        if seq_size != 0 {
            e.size = seq_size;
        }
        let target = match (kind, taken, next_ip) {
            (None, _, _) => 0,
            (Some(_), true, Some(n)) => n,
            // Not taken, or the trace's last record: the last target seen here.
            (Some(_), _, _) => e.target,
        };
        let size = if e.size != 0 {
            e.size
        } else {
            st.size_defaulted += 1;
            default_size(kind, r.ip, target)
        };
        if kind.is_some() && taken && next_ip.is_some() {
            e.target = target;
        }
        e.class = class;
        e.kind = kind;
        e.last_taken = taken;
        e.srcs = r.src_regs;
        e.dsts = r.dst_regs;
        if load_addr != 0 {
            e.load_addr = load_addr;
        }
        if store_addr != 0 {
            e.store_addr = store_addr;
        }
        match kind {
            Some(BranchKind::DirectCall | BranchKind::IndirectCall) => self.calls.push(r.ip),
            Some(BranchKind::Return) if next_ip.is_some() => {
                if let Some(call) = self.calls.pop_matching(target) {
                    if let Some(c) = self.image.get_mut(call) {
                        c.size = target.wrapping_sub(call) as u8;
                        self.stats.call_sizes_learned += 1;
                    }
                }
            }
            _ => {}
        }
        Instr {
            pc: r.ip,
            size,
            class,
            branch: kind,
            taken,
            target,
            srcs: r.src_regs,
            dsts: r.dst_regs,
            load_addr,
            store_addr,
        }
    }

    /// The instruction at `pc` for a mispredicted path: the image's if the trace
    /// has been there, else a plain sequential ALU instruction.
    #[inline]
    pub fn wrong_path_instr(&mut self, pc: u64) -> Instr {
        match self.image.get(pc) {
            Some(s) => {
                self.stats.wrong_path_found += 1;
                s.to_instr(pc)
            }
            None => {
                self.stats.wrong_path_missing += 1;
                unseen_instr(pc)
            }
        }
    }
}

impl InstrSource for TraceSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn next(&mut self) -> Result<Option<Instr>, SourceError> {
        self.next_instr().map_err(SourceError::from)
    }

    fn wrong_path(&mut self, pc: u64) -> Instr {
        self.wrong_path_instr(pc)
    }

    fn verify(&mut self) -> Result<(), SourceError> {
        TraceSource::verify(self).map_err(SourceError::from)
    }

    fn unverified_bytes(&self) -> u64 {
        self.stats.unverified_bytes
    }
}
