//! Synthetic request generators.

use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::{HostRequest, IoKind, Workload, WorkloadConfig, WorkloadContext};
use crate::error::{Error, Result};

/// Uniform random requests over the first `working_set` of the logical space, aligned to the
/// request size (the ZombieNAND generator). Endless.
pub struct UniformRandom {
    rng: Pcg64Mcg,
    read_ratio: f64,
    size: u64,
    slots: u64,
}

impl UniformRandom {
    pub fn new(cfg: &WorkloadConfig, ctx: &WorkloadContext) -> Result<Self> {
        let size = if cfg.request_size == 0 { ctx.unit_bytes } else { cfg.request_size };
        let span = (ctx.logical_bytes as f64 * cfg.working_set) as u64;
        let slots = span / size;
        if slots == 0 {
            return Err(Error::config("workload.request_size", size, "a size no larger than the working set"));
        }
        Ok(UniformRandom { rng: Pcg64Mcg::seed_from_u64(ctx.seed), read_ratio: cfg.read_ratio, size, slots })
    }
}

impl Workload for UniformRandom {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        let kind =
            if self.read_ratio > 0.0 && self.rng.gen::<f64>() < self.read_ratio { IoKind::Read } else { IoKind::Write };
        let slot = self.rng.gen_range(0..self.slots);
        Ok(Some(HostRequest { arrival_ns: 0, kind, offset: slot * self.size, size: self.size, stream: 0 }))
    }
}
