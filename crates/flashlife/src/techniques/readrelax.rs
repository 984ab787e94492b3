//! Read latency relaxation (Liu et al., "Prolonging 3D NAND SSD lifetime via read latency
//! relaxation"): the workload of its long-period methodology.
//!
//! The mechanism itself (error-aware reads, read reclaim policies, hint commands) lives in
//! `ftl::read_model`; this module provides [`PoissonRandom`], an open-loop generator of
//! low-rate random requests with Poisson arrivals (months of simulated time pass in seconds:
//! idle gaps are simulated, not waited for), optionally skewed to a hot region, for the
//! Rust example `readrelax` and the tests (`flashlife reproduce readrelax` builds the same
//! workloads from configuration keys: a `mix` of a read and a write part, Poisson arrivals). Run it with
//! [`crate::Simulator::with_workload`] and [`crate::Simulator::set_open_loop`].

use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::error::{Error, Result};
use crate::workload::Workload;
use crate::workload::{HostRequest, IoKind};

/// Parameters of [`PoissonRandom`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PoissonSpec {
    /// Mean requests per second (Poisson arrivals).
    pub rate_per_s: f64,
    /// Fraction of requests that are reads.
    pub read_ratio: f64,
    /// Request size in bytes (requests are aligned to it).
    pub request_size: u64,
    /// The hot read region: this fraction of the logical space, at its start ...
    pub hot_fraction: f64,
    /// ... receives this share of the reads (the rest go uniformly anywhere). With
    /// `hot_share = hot_fraction` the reads are uniform.
    pub hot_share: f64,
    /// Writes go uniformly to this last fraction of the logical space (1: anywhere).
    pub write_fraction: f64,
    /// Stream tag of every request (hint commands may match it).
    pub stream: u16,
}

impl Default for PoissonSpec {
    fn default() -> Self {
        PoissonSpec {
            rate_per_s: 100.0,
            read_ratio: 1.0,
            request_size: 4096,
            hot_fraction: 1.0,
            hot_share: 1.0,
            write_fraction: 1.0,
            stream: 0,
        }
    }
}

/// Open-loop random requests with exponential inter-arrival times. Endless.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct PoissonRandom {
    rng: Pcg64Mcg,
    spec: PoissonSpec,
    mean_gap_ns: f64,
    slots: u64,
    hot_slots: u64,
    write_slots: u64,
    now_ns: f64,
}

impl PoissonRandom {
    /// Requests over a logical space of `logical_bytes`, from the random stream `seed`.
    pub fn new(spec: PoissonSpec, logical_bytes: u64, seed: u64) -> Result<Self> {
        if !(spec.rate_per_s.is_finite() && spec.rate_per_s > 0.0) {
            return Err(Error::config("rate_per_s", spec.rate_per_s, "a positive rate"));
        }
        for (k, v) in [("read_ratio", spec.read_ratio), ("hot_share", spec.hot_share)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::config(k, v, "a fraction in [0, 1]"));
            }
        }
        for (k, v) in [("hot_fraction", spec.hot_fraction), ("write_fraction", spec.write_fraction)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(Error::config(k, v, "a fraction in (0, 1]"));
            }
        }
        let slots = logical_bytes / spec.request_size.max(1);
        if slots == 0 || spec.request_size == 0 {
            return Err(Error::config("request_size", spec.request_size, "a size in (0, logical capacity]"));
        }
        let hot_slots = ((slots as f64 * spec.hot_fraction) as u64).clamp(1, slots);
        let write_slots = ((slots as f64 * spec.write_fraction) as u64).clamp(1, slots);
        Ok(PoissonRandom {
            rng: Pcg64Mcg::seed_from_u64(seed),
            mean_gap_ns: 1e9 / spec.rate_per_s,
            slots,
            hot_slots,
            write_slots,
            spec,
            now_ns: 0.0,
        })
    }

    /// Byte range of the hot region (for hint commands over it).
    pub fn hot_bytes(&self) -> std::ops::Range<u64> {
        0..self.hot_slots * self.spec.request_size
    }
}

impl Workload for PoissonRandom {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        // Exponential gap by inversion; 1 - u lies in (0, 1].
        let u: f64 = self.rng.gen();
        self.now_ns += -(1.0 - u).ln() * self.mean_gap_ns;
        let kind = if self.rng.gen::<f64>() < self.spec.read_ratio { IoKind::Read } else { IoKind::Write };
        let slot = if kind == IoKind::Write {
            self.slots - 1 - self.rng.gen_range(0..self.write_slots)
        } else if self.rng.gen::<f64>() < self.spec.hot_share {
            self.rng.gen_range(0..self.hot_slots)
        } else {
            self.rng.gen_range(0..self.slots)
        };
        Ok(Some(HostRequest {
            arrival_ns: self.now_ns as u64,
            kind,
            offset: slot * self.spec.request_size,
            size: self.spec.request_size,
            stream: self.spec.stream,
            budget_us: 0,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_are_poisson_at_the_rate() {
        let spec = PoissonSpec {
            rate_per_s: 50.0,
            read_ratio: 0.7,
            hot_fraction: 0.2,
            hot_share: 0.8,
            write_fraction: 0.25,
            ..Default::default()
        };
        let mut w = PoissonRandom::new(spec, 1 << 30, 3).unwrap();
        let n = 200_000;
        let reqs: Vec<HostRequest> = (0..n).map(|_| w.next_request().unwrap().unwrap()).collect();
        let span_s = reqs.last().unwrap().arrival_ns as f64 / 1e9;
        assert!((n as f64 / span_s / 50.0 - 1.0).abs() < 0.01, "rate {}", n as f64 / span_s);
        // Exponential gaps: coefficient of variation 1, P(gap > mean) = 1/e.
        let gaps: Vec<f64> = reqs.windows(2).map(|p| (p[1].arrival_ns - p[0].arrival_ns) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.02, "cv {}", sd / mean);
        let above = gaps.iter().filter(|&&g| g > mean).count() as f64 / gaps.len() as f64;
        assert!((above - (-1f64).exp()).abs() < 0.005, "{above}");
        let reads = reqs.iter().filter(|r| r.kind == IoKind::Read).count() as f64 / n as f64;
        assert!((reads - 0.7).abs() < 0.005);
        // Reads: 80% aimed at the hot fifth, plus the uniform rest's 20% of 20%: 84%.
        let hot = w.hot_bytes();
        let (rd, wr): (Vec<&HostRequest>, Vec<&HostRequest>) = reqs.iter().partition(|r| r.kind == IoKind::Read);
        let in_hot = rd.iter().filter(|r| hot.contains(&r.offset)).count() as f64 / rd.len() as f64;
        assert!((in_hot - 0.84).abs() < 0.005, "{in_hot}");
        // Writes: all in the last quarter.
        let end = (1u64 << 30) / 4096 * 4096;
        assert!(wr.iter().all(|r| r.offset >= end - end / 4 && r.offset < end));
    }
}
