//! A Zipf-distributed synthetic workload (Reusable SSD's `zipf(1)` and `zipf(2)`), kept here
//! until the workload module's own Zipf generator lands; then this file can go.
//!
//! Request slots (aligned, `request_units` units each) are ranked by a seeded random
//! permutation, so hot data is scattered over the address space; slot of rank `r` (1-based)
//! is chosen with probability proportional to `r^-alpha`. No temporal locality: every request
//! is an independent draw, as in the paper.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::error::{Error, Result};
use crate::host::request::{HostRequest, IoKind};
use crate::workload::Workload;

/// Endless Zipf-distributed requests.
pub struct Zipf {
    rng: Pcg64Mcg,
    cdf: Vec<f64>,
    slot_of_rank: Vec<u32>,
    size: u64,
    read_ratio: f64,
}

impl Zipf {
    /// `logical_bytes` of address space in requests of `size` bytes; exponent `alpha`.
    pub fn new(logical_bytes: u64, size: u64, alpha: f64, read_ratio: f64, seed: u64) -> Result<Zipf> {
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(Error::config("zipf.alpha", alpha, "a non-negative exponent"));
        }
        if !(0.0..=1.0).contains(&read_ratio) {
            return Err(Error::config("zipf.read_ratio", read_ratio, "a fraction between 0 and 1"));
        }
        let slots = logical_bytes.checked_div(size).unwrap_or(0);
        if slots == 0 || slots > u32::MAX as u64 {
            return Err(Error::config("zipf.request_size", size, "a size giving 1 to 2^32-1 requests slots"));
        }
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut cdf = Vec::with_capacity(slots as usize);
        let mut sum = 0.0;
        for r in 1..=slots {
            sum += (r as f64).powf(-alpha);
            cdf.push(sum);
        }
        for c in &mut cdf {
            *c /= sum;
        }
        let mut slot_of_rank: Vec<u32> = (0..slots as u32).collect();
        for i in (1..slot_of_rank.len()).rev() {
            let j = rng.gen_range(0..=i);
            slot_of_rank.swap(i, j);
        }
        Ok(Zipf { rng, cdf, slot_of_rank, size, read_ratio })
    }

    /// Probability of the most popular slot.
    pub fn top_probability(&self) -> f64 {
        self.cdf[0]
    }
}

impl Workload for Zipf {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        let kind =
            if self.read_ratio > 0.0 && self.rng.gen::<f64>() < self.read_ratio { IoKind::Read } else { IoKind::Write };
        let u: f64 = self.rng.gen();
        let rank = self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1);
        let slot = self.slot_of_rank[rank] as u64;
        Ok(Some(HostRequest {
            arrival_ns: 0,
            kind,
            offset: slot * self.size,
            size: self.size,
            stream: 0,
            budget_us: 0,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_follow_the_power_law() {
        // alpha = 1 over 1000 slots: p(rank r) = r^-1 / H_1000, H_1000 = 7.4855.
        let mut z = Zipf::new(1000 * 4096, 4096, 1.0, 0.0, 7).unwrap();
        let h: f64 = (1..=1000).map(|r| 1.0 / r as f64).sum();
        assert!((z.top_probability() - 1.0 / h).abs() < 1e-12);
        let top = z.slot_of_rank[0] as u64 * 4096;
        let second = z.slot_of_rank[1] as u64 * 4096;
        let n = 200_000;
        let (mut a, mut b) = (0u32, 0u32);
        for _ in 0..n {
            let r = z.next_request().unwrap().unwrap();
            a += (r.offset == top) as u32;
            b += (r.offset == second) as u32;
        }
        let pa = a as f64 / n as f64;
        let pb = b as f64 / n as f64;
        assert!((pa - 1.0 / h).abs() < 0.005, "top {pa}");
        assert!((pb - 0.5 / h).abs() < 0.004, "second {pb}");
    }
}
