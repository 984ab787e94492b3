//! Estimates of a whole run's latency from sampled windows (`[sampling]`), with confidence
//! intervals across windows.
//!
//! Each window measured a stretch of the run and stands for the requests of that stretch (its
//! weight). The whole run's latency distribution is estimated as the weighted mixture of the
//! windows' distributions: its mean is the weighted mean of the windows' means, its quantiles
//! those of the mixture. Requests inside a window are strongly correlated (they share queues
//! and GC state), so the spread that matters is between windows: the mean's interval is
//! Student's t over the windows' means (the usual interval of sampled simulation), the
//! quantiles' a percentile bootstrap that resamples whole windows.

use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::latency::{LatencyHistogram, LatencySummary};

/// A latency distribution kept compactly: each non-empty histogram bucket as (highest value
/// of the bucket in ns, samples), ascending. A window keeps this rather than its histogram,
/// whose counts array is a few hundred kilobytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dist {
    points: Vec<(u64, u64)>,
    sum_ns: u128,
    count: u64,
}

impl Dist {
    pub fn of(h: &LatencyHistogram) -> Dist {
        Dist { points: h.buckets(), sum_ns: h.sum_ns(), count: h.count() }
    }

    /// The union of two distributions' samples.
    pub fn merged(a: &Dist, b: &Dist) -> Dist {
        let mut points = Vec::with_capacity(a.points.len() + b.points.len());
        let (mut i, mut j) = (0, 0);
        while i < a.points.len() || j < b.points.len() {
            let (x, y) = (a.points.get(i), b.points.get(j));
            match (x, y) {
                (Some(&(va, ca)), Some(&(vb, cb))) if va == vb => {
                    points.push((va, ca + cb));
                    i += 1;
                    j += 1;
                }
                (Some(&p), Some(&(vb, _))) if p.0 < vb => {
                    points.push(p);
                    i += 1;
                }
                (_, Some(&p)) => {
                    points.push(p);
                    j += 1;
                }
                (Some(&p), None) => {
                    points.push(p);
                    i += 1;
                }
                (None, None) => unreachable!(),
            }
        }
        Dist { points, sum_ns: a.sum_ns + b.sum_ns, count: a.count + b.count }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum_ns as f64 / self.count as f64 / 1000.0
        }
    }

    /// The `q` quantile in us, as the histogram reports it (the bucket holding the
    /// `ceil(q * count)`-th sample).
    pub fn quantile_us(&self, q: f64) -> f64 {
        let want = ((q * self.count as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for &(v, c) in &self.points {
            acc += c;
            if acc >= want {
                return v as f64 / 1000.0;
            }
        }
        f64::NAN
    }

    /// As [`LatencyHistogram::summary`] gives it: zeros when empty.
    pub fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        LatencySummary {
            count: self.count,
            mean: self.mean_us(),
            p50: self.quantile_us(0.5),
            p99: self.quantile_us(0.99),
            p999: self.quantile_us(0.999),
            max: self.points.last().map_or(f64::NAN, |p| p.0 as f64 / 1000.0),
        }
    }
}

/// An estimate with its confidence interval (NaN bounds with fewer than two windows).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Estimate {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// The whole run's mean and p99 latency, estimated from the windows, in us.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyEstimate {
    /// Requests measured.
    pub count: u64,
    pub mean: Estimate,
    pub p99: Estimate,
}

/// `summary.sampling`: how the run was sampled, each window, and the whole run's latency
/// estimated from them with confidence intervals.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SamplingSummary {
    pub every: String,
    pub warmup_requests: u64,
    pub window_requests: u64,
    /// Requests measured, timed (warm-up and measured) and issued in fast-forward.
    pub measured_requests: u64,
    pub timed_requests: u64,
    pub fast_forward_requests: u64,
    /// The confidence level of the intervals.
    pub confidence: f64,
    /// The whole run's mean and p99 (us): each window weighted by the requests it stands for.
    pub estimate: SampledLatency,
    pub windows: Vec<WindowSummary>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct SampledLatency {
    pub read: LatencyEstimate,
    pub write: LatencyEstimate,
    pub all: LatencyEstimate,
}

/// One window: where it sat in the run and what it measured (latencies in us).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WindowSummary {
    pub index: u32,
    /// Requests served when its warm-up began, and how many requests of the run it stands for.
    pub start_request: u64,
    pub stands_for_requests: u64,
    /// Simulated time at the start and end of its measurement.
    pub start_s: f64,
    pub end_s: f64,
    pub life_used: f64,
    pub host_bytes_written: u64,
    /// Measured requests over the measurement's span.
    pub iops: f64,
    pub read: LatencySummary,
    pub write: LatencySummary,
    pub all: LatencySummary,
}

/// The confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;
/// Bootstrap resamples for the quantiles' intervals, drawn from a fixed seed so that the same
/// run gives the same bytes.
const RESAMPLES: usize = 1000;
const BOOTSTRAP_SEED: u64 = 0x5a3c_1e0f_9b27_d441;

/// Estimate the mean and p99 of the mixture of `windows` (weight, distribution); windows with
/// no samples or no weight are left out.
pub fn estimate(windows: &[(f64, &Dist)]) -> LatencyEstimate {
    let w: Vec<(f64, &Dist)> = windows.iter().copied().filter(|(w, d)| *w > 0.0 && d.count > 0).collect();
    let count = w.iter().map(|(_, d)| d.count).sum();
    LatencyEstimate { count, mean: mean_estimate(&w), p99: quantile_estimate(&w, 0.99) }
}

/// Weighted mean of the windows' means with Student's t interval over windows: the variance
/// of a weighted mean of n exchangeable windows, n / (n - 1) * sum(w_i^2 (x_i - mean)^2).
fn mean_estimate(w: &[(f64, &Dist)]) -> Estimate {
    let total: f64 = w.iter().map(|p| p.0).sum();
    if w.is_empty() {
        return Estimate { value: f64::NAN, low: f64::NAN, high: f64::NAN };
    }
    let value = w.iter().map(|(wi, d)| wi / total * d.mean_us()).sum::<f64>();
    let n = w.len();
    if n < 2 {
        return Estimate { value, low: f64::NAN, high: f64::NAN };
    }
    let var = w.iter().map(|(wi, d)| (wi / total).powi(2) * (d.mean_us() - value).powi(2)).sum::<f64>() * n as f64
        / (n - 1) as f64;
    let half = t_975(n - 1) * var.sqrt();
    Estimate { value, low: value - half, high: value + half }
}

/// The windows' cumulative counts, for the mixture's CDF.
struct Cdf<'a> {
    weight: f64,
    dist: &'a Dist,
    cum: Vec<u64>,
}

impl Cdf<'_> {
    /// Share of samples at or below `x` ns.
    fn at(&self, x: u64) -> f64 {
        let i = self.dist.points.partition_point(|p| p.0 <= x);
        if i == 0 {
            0.0
        } else {
            self.cum[i - 1] as f64 / self.dist.count as f64
        }
    }
}

/// The `q` quantile of the mixture (in us), with a percentile bootstrap interval over windows.
fn quantile_estimate(w: &[(f64, &Dist)], q: f64) -> Estimate {
    if w.is_empty() {
        return Estimate { value: f64::NAN, low: f64::NAN, high: f64::NAN };
    }
    let cdfs: Vec<Cdf> = w
        .iter()
        .map(|&(weight, dist)| {
            let mut acc = 0;
            Cdf { weight, dist, cum: dist.points.iter().map(|p| (acc += p.1, acc).1).collect() }
        })
        .collect();
    // The mixture's CDF steps only at bucket values.
    let mut values: Vec<u64> = w.iter().flat_map(|(_, d)| d.points.iter().map(|p| p.0)).collect();
    values.sort_unstable();
    values.dedup();
    let quantile = |pick: &[usize]| -> f64 {
        let total: f64 = pick.iter().map(|&i| cdfs[i].weight).sum();
        let mix = |x: u64| pick.iter().map(|&i| cdfs[i].weight / total * cdfs[i].at(x)).sum::<f64>();
        // Tolerate rounding in the weighted sum at the top.
        let i = values.partition_point(|&x| mix(x) < q - 1e-12);
        values.get(i).or(values.last()).map_or(f64::NAN, |&v| v as f64 / 1000.0)
    };
    let all: Vec<usize> = (0..cdfs.len()).collect();
    let value = quantile(&all);
    if cdfs.len() < 2 {
        return Estimate { value, low: f64::NAN, high: f64::NAN };
    }
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(BOOTSTRAP_SEED);
    let mut pick = vec![0; cdfs.len()];
    let mut boot: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            for p in pick.iter_mut() {
                *p = rng.gen_range(0..cdfs.len());
            }
            quantile(&pick)
        })
        .collect();
    boot.sort_by(f64::total_cmp);
    let at = |p: f64| boot[((p * RESAMPLES as f64) as usize).min(RESAMPLES - 1)];
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Estimate { value, low: at(tail).min(value), high: at(1.0 - tail).max(value) }
}

/// Student's t quantile at 0.975 for `df` degrees of freedom: the table to 30, then the
/// Cornish-Fisher expansion, within 0.001 of the exact value from 30 on.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    if (1..=30).contains(&df) {
        return TABLE[df - 1];
    }
    let z: f64 = 1.959_964;
    let d = df.max(1) as f64;
    z + (z.powi(3) + z) / (4.0 * d) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(samples: impl IntoIterator<Item = u64>) -> Dist {
        let mut h = LatencyHistogram::new();
        for s in samples {
            h.record(s);
        }
        Dist::of(&h)
    }

    /// Equal windows of equal weight: the mixture is the pooled sample, so the estimates are
    /// the pooled histogram's own mean and p99.
    #[test]
    fn equal_windows_estimate_the_pooled_distribution() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut pooled = LatencyHistogram::new();
        let windows: Vec<Dist> = (0..10)
            .map(|_| {
                let mut h = LatencyHistogram::new();
                for _ in 0..5000 {
                    let v = rng.gen_range(50_000..5_000_000u64);
                    h.record(v);
                    pooled.record(v);
                }
                Dist::of(&h)
            })
            .collect();
        let e = estimate(&windows.iter().map(|d| (1.0, d)).collect::<Vec<_>>());
        assert_eq!(e.count, pooled.count());
        assert!((e.mean.value - pooled.mean_us()).abs() < 1e-6 * pooled.mean_us());
        assert_eq!(e.p99.value, pooled.quantile_us(0.99));
        assert!(e.mean.low < e.mean.value && e.mean.value < e.mean.high);
        assert!(e.p99.low <= e.p99.value && e.p99.value <= e.p99.high);
    }

    /// Weights count: a window standing for three times the requests counts three times.
    #[test]
    fn weights_scale_a_windows_share() {
        let (a, b) = (dist([100_000; 100]), dist([400_000; 100]));
        let e = estimate(&[(3.0, &a), (1.0, &b)]);
        assert!((e.mean.value - 175.0).abs() < 0.5, "{}", e.mean.value);
        // 75% of the mixture is at 100 us, so its p50 is there and its p99 at 400 us.
        assert!((e.p99.value - 400.0).abs() < 1.0);
        let m = estimate(&[(1.0, &a), (0.0, &b)]);
        assert_eq!(m.count, 100);
    }

    /// The intervals cover the truth as often as they claim: windows whose means scatter
    /// around a known mean (normal, by the central limit theorem over 200 exponential samples
    /// each), 400 trials of 12 windows: coverage near 95%, both for the mean's t interval and
    /// for the p99's bootstrap (whose truth is the p99 of the exponential, ln(100) x mean).
    #[test]
    fn intervals_cover_the_truth_at_their_level() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
        let mean_us = 200.0;
        let (mut cover_mean, mut cover_p99) = (0, 0);
        let trials = 400;
        for _ in 0..trials {
            let windows: Vec<Dist> = (0..12)
                .map(|_| dist((0..2000).map(|_| (-(1.0 - rng.gen::<f64>()).ln() * mean_us * 1000.0) as u64 + 1)))
                .collect();
            let e = estimate(&windows.iter().map(|d| (1.0, d)).collect::<Vec<_>>());
            cover_mean += e.mean.contains(mean_us) as u32;
            cover_p99 += e.p99.contains(mean_us * 100f64.ln()) as u32;
        }
        let (m, p) = (cover_mean as f64 / trials as f64, cover_p99 as f64 / trials as f64);
        assert!((0.91..=0.99).contains(&m), "the mean's interval covered {m}");
        // The percentile bootstrap over few windows is known to under-cover somewhat.
        assert!((0.85..=0.99).contains(&p), "the p99's interval covered {p}");
    }

    #[test]
    fn t_quantiles_join_the_expansion_smoothly() {
        assert_eq!(t_975(1), 12.706);
        assert!((t_975(31) - 2.0395).abs() < 0.001, "{}", t_975(31));
        assert!((t_975(60) - 2.0003).abs() < 0.001, "{}", t_975(60));
        assert!((t_975(1_000_000) - 1.96).abs() < 0.001);
    }

    #[test]
    fn merged_is_the_union() {
        let (a, b) = (dist([1000, 2000, 2000]), dist([2000, 3000]));
        let m = Dist::merged(&a, &b);
        assert_eq!(m, dist([1000, 2000, 2000, 2000, 3000]));
    }
}
