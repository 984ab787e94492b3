//! Synthetic request generators: uniform, Zipf, hot/cold, sequential and weighted mixes,
//! with fixed or weighted request sizes. All are endless and deterministic for a seed.

use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::zipf::ZipfSampler;
use super::{HostRequest, IoKind, Workload, WorkloadConfig, WorkloadContext, WorkloadKind};
use crate::error::{Error, Result};
use crate::seeds::{derive_seed, splitmix64};

/// A fixed, seeded bijection of `0..n`, cheap to evaluate (no table): a few rounds of
/// odd multiplication, xor-shift and addition modulo the next power of two, each a
/// bijection, with cycle walking to stay below `n` (fewer than 2 rounds on average since
/// the power of two is below 2n). Used to scatter Zipf ranks over the address space.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// A permutation of `0..n` (n >= 1) chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() };
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut s = seed;
        let mut keys = [0u64; 4];
        for k in &mut keys {
            s = splitmix64(s);
            *k = s;
        }
        Permutation { n: n.max(1), mask, shift: bits / 2 + 1, keys }
    }

    fn round(&self, mut x: u64) -> u64 {
        for k in self.keys {
            x = x.wrapping_mul(k | 1) & self.mask;
            x ^= x >> self.shift;
            x = x.wrapping_add(k >> 7) & self.mask;
        }
        x
    }

    /// The image of `x` (`x < n`).
    pub fn apply(&self, x: u64) -> u64 {
        let mut y = self.round(x);
        while y >= self.n {
            y = self.round(y);
        }
        y
    }
}

/// Request sizes: one fixed size, or a weighted list.
#[derive(Debug, Clone)]
struct Sizes {
    sizes: Vec<u64>,
    /// Cumulative weights normalised to end at 1.
    cumulative: Vec<f64>,
}

impl Sizes {
    fn from_config(cfg: &WorkloadConfig, ctx: &WorkloadContext) -> Sizes {
        if cfg.sizes.is_empty() {
            let s = if cfg.request_size == 0 { ctx.unit_bytes } else { cfg.request_size };
            return Sizes { sizes: vec![s], cumulative: vec![1.0] };
        }
        let weights: Vec<f64> =
            if cfg.size_weights.is_empty() { vec![1.0; cfg.sizes.len()] } else { cfg.size_weights.clone() };
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Sizes { sizes: cfg.sizes.clone(), cumulative }
    }

    fn max(&self) -> u64 {
        self.sizes.iter().copied().max().unwrap_or(1)
    }

    fn pick(&self, rng: &mut Pcg64Mcg) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0]; // no draw: keeps fixed-size streams identical to older versions
        }
        let u: f64 = rng.gen();
        let i = self.cumulative.iter().position(|&c| u < c).unwrap_or(self.sizes.len() - 1);
        self.sizes[i]
    }
}

#[derive(Debug, Clone)]
enum Pattern {
    Uniform,
    Zipf { sampler: ZipfSampler, perm: Option<Permutation> },
    HotCold { hot_slots: u64, hot_requests: f64 },
    Sequential { cursor: u64 },
}

/// One synthetic generator: a read/write mix, an address pattern over the first
/// `working_set` of the logical space and a request-size distribution. Endless.
///
/// Addresses are drawn over slots: with one fixed request size a slot is one request (requests
/// aligned to their size, as in the ZombieNAND generator); with a size list a slot is one
/// mapping unit, and a request that would run past the working set is moved back to end at it.
#[derive(Debug, Clone)]
pub struct Synthetic {
    rng: Pcg64Mcg,
    read_ratio: f64,
    /// Share of requests that are trims (after the reads: a draw below `read_ratio` reads,
    /// below `read_ratio + trim_ratio` trims).
    trim_ratio: f64,
    pattern: Pattern,
    sizes: Sizes,
    slot_bytes: u64,
    slots: u64,
    span: u64,
}

impl Synthetic {
    /// The generator `cfg.kind` describes (uniform, zipf, hotcold or sequential), seeded
    /// with `seed`.
    pub fn new(cfg: &WorkloadConfig, ctx: &WorkloadContext, seed: u64) -> Result<Synthetic> {
        let sizes = Sizes::from_config(cfg, ctx);
        let span = (ctx.logical_bytes as f64 * cfg.working_set) as u64;
        let slot_bytes = if sizes.sizes.len() == 1 { sizes.sizes[0] } else { ctx.unit_bytes };
        let slots = span / slot_bytes;
        if slots == 0 || sizes.max() > span {
            let key = if cfg.sizes.is_empty() { "workload.request_size" } else { "workload.sizes" };
            return Err(Error::config(
                key,
                sizes.max(),
                format!("a size no larger than the working set ({span} bytes)"),
            ));
        }
        let pattern = match cfg.kind {
            WorkloadKind::Uniform => Pattern::Uniform,
            WorkloadKind::Zipf => Pattern::Zipf {
                sampler: ZipfSampler::new(slots, cfg.zipf.alpha),
                // The permutation's own seed stream: changing it never shifts the draws.
                perm: cfg.zipf.scramble.then(|| Permutation::new(slots, derive_seed(seed, 0x5C4A_3B1E))),
            },
            WorkloadKind::HotCold => Pattern::HotCold {
                hot_slots: ((slots as f64 * cfg.hotcold.hot_space).ceil() as u64).clamp(1, slots),
                hot_requests: cfg.hotcold.hot_requests,
            },
            WorkloadKind::Sequential => Pattern::Sequential { cursor: 0 },
            other => return Err(Error::config("workload.kind", other, "one of: uniform, zipf, hotcold, sequential")),
        };
        Ok(Synthetic {
            rng: Pcg64Mcg::seed_from_u64(seed),
            read_ratio: cfg.read_ratio,
            trim_ratio: cfg.trim_ratio,
            pattern,
            sizes,
            slot_bytes,
            slots,
            span,
        })
    }
}

impl Workload for Synthetic {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        // Draw order (kind, slot, size) is part of the reproducibility contract: a seed
        // gives the same uniform stream as the first flashlife generator.
        // One draw decides the kind whatever the shares, and none when every request is a
        // write: a configuration without trims draws exactly what it drew before them.
        let kind = if self.read_ratio > 0.0 || self.trim_ratio > 0.0 {
            let u = self.rng.gen::<f64>();
            if u < self.read_ratio {
                IoKind::Read
            } else if u < self.read_ratio + self.trim_ratio {
                IoKind::Trim
            } else {
                IoKind::Write
            }
        } else {
            IoKind::Write
        };
        let slot = match &mut self.pattern {
            Pattern::Uniform => self.rng.gen_range(0..self.slots),
            Pattern::Zipf { sampler, perm } => {
                let rank0 = sampler.sample(&mut self.rng) - 1;
                perm.as_ref().map_or(rank0, |p| p.apply(rank0))
            }
            Pattern::HotCold { hot_slots, hot_requests } => {
                let cold = self.slots - *hot_slots;
                if cold == 0 || self.rng.gen::<f64>() < *hot_requests {
                    self.rng.gen_range(0..*hot_slots)
                } else {
                    *hot_slots + self.rng.gen_range(0..cold)
                }
            }
            Pattern::Sequential { .. } => 0,
        };
        let size = self.sizes.pick(&mut self.rng);
        let offset = match &mut self.pattern {
            Pattern::Sequential { cursor } => {
                let start = if *cursor + size > self.span { 0 } else { *cursor };
                *cursor = start + size;
                start
            }
            _ => (slot * self.slot_bytes).min(self.span - size),
        };
        Ok(Some(HostRequest { arrival_ns: 0, kind, offset, size, stream: 0, budget_us: 0 }))
    }
}

/// A weighted mix of synthetic generators: each request comes from part i with probability
/// weight_i / sum(weights). Parts keep their own state (a sequential part stays sequential).
pub struct Mix {
    rng: Pcg64Mcg,
    parts: Vec<Synthetic>,
    cumulative: Vec<f64>,
}

impl Mix {
    /// The mix of `cfg.mix`; part i is seeded from the workload seed and i.
    pub fn new(cfg: &WorkloadConfig, ctx: &WorkloadContext) -> Result<Mix> {
        let mut parts = Vec::with_capacity(cfg.mix.len());
        for (i, part) in cfg.mix.iter().enumerate() {
            let seed = derive_seed(ctx.seed, 0x0317_0000 + i as u64);
            parts.push(Synthetic::new(part, ctx, seed).map_err(|e| match e {
                Error::Config { key, value, expected, suggestion } => Error::Config {
                    key: key.replacen("workload.", &format!("workload.mix[{i}]."), 1),
                    value,
                    expected,
                    suggestion,
                },
                other => other,
            })?);
        }
        let total: f64 = cfg.mix.iter().map(|p| p.weight).sum();
        let mut acc = 0.0;
        let cumulative = cfg
            .mix
            .iter()
            .map(|p| {
                acc += p.weight / total;
                acc
            })
            .collect();
        Ok(Mix { rng: Pcg64Mcg::seed_from_u64(derive_seed(ctx.seed, 0x3170)), parts, cumulative })
    }
}

impl Workload for Mix {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        let u: f64 = self.rng.gen();
        let i = self.cumulative.iter().position(|&c| u < c).unwrap_or(self.parts.len() - 1);
        self.parts[i].next_request()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 8, 9, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n);
                assert!(!seen[y as usize], "n={n}: {y} hit twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn permutation_scatters_hot_ranks() {
        let p = Permutation::new(1 << 20, 7);
        let adjacent = (0..100).filter(|&x| p.apply(x).abs_diff(p.apply(x + 1)) == 1).count();
        assert!(adjacent < 5, "{adjacent} adjacent pairs among the first 100 ranks");
    }
}
