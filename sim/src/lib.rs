//! Companion out-of-order core simulator: an out-of-order core that fetches down
//! mispredicted paths and emits one `events::CycleEvents` per cycle.
//!
//! Module map: [`config`] (the machine, serde, `--set` overrides), [`cache`]
//! (set-associative LRU arrays with MSHRs, also the TLBs), [`bpred`] (hybrid
//! predictor, BTB, RAS), [`prefetch`] (data prefetchers), [`core`] (the timing
//! model and event emission), [`stats`], [`workloads`] (synthetic programs and the
//! named suite), [`isa`] (the instruction record and source interface), `trace`
//! (ChampSim traces).

pub mod bpred;
pub mod cache;
pub mod config;
pub mod core;
pub mod isa;
pub mod prefetch;
pub mod stats;
pub mod trace;
pub mod workloads;

pub use crate::core::Core;
pub use config::{Config, Ideal, Layout};
pub use isa::{BranchKind, Instr, InstrSource, OpClass, SourceError};
pub use stats::{HeadWaits, MissCounts, Stats, WaitSplit};

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("configuration: {0}")]
    Config(String),
    /// Not `#[source]`: the message holds the cause already (an error chain
    /// printed with `{:#}` would show it twice).
    #[error("instruction source: {0}")]
    Source(SourceError),
    #[error("watchdog: the pipeline is stuck: {0}")]
    Stuck(String),
    #[error("unknown workload `{0}` (see `cpistack workloads --all`)")]
    UnknownWorkload(String),
    /// The source ran dry before the run had measured what it was asked to
    /// ([`Core::require_complete`]): a short trace, or too much warm-up.
    #[error(
        "{name}: the source ended after {committed} instructions, {measured} of them measured; \
         asked for {warmup} of warm-up and {wanted} measured: ask for fewer (--warmup, --instructions)"
    )]
    SourceEnded {
        name: String,
        committed: u64,
        measured: u64,
        warmup: u64,
        wanted: u64,
    },
}

impl From<SourceError> for SimError {
    fn from(e: SourceError) -> Self {
        SimError::Source(e)
    }
}

impl<T: InstrSource + ?Sized> InstrSource for Box<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn next(&mut self) -> Result<Option<Instr>, SourceError> {
        (**self).next()
    }
    fn wrong_path(&mut self, pc: u64) -> Instr {
        (**self).wrong_path(pc)
    }
    fn verify(&mut self) -> Result<(), SourceError> {
        (**self).verify()
    }
    fn unverified_bytes(&self) -> u64 {
        (**self).unverified_bytes()
    }
}

/// A core running suite workload `name` with `seed`.
pub fn workload_core(
    cfg: &Config,
    name: &str,
    seed: u64,
) -> Result<Core<workloads::Workload>, SimError> {
    let spec = workloads::by_name(name).ok_or_else(|| SimError::UnknownWorkload(name.into()))?;
    Core::new(cfg, workloads::Workload::new(&spec, seed))
}

#[cfg(test)]
mod tests;
