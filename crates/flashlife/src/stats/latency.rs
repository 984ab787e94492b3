//! Latency distributions from HDR histograms (never a stored list of samples).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// A latency histogram in nanoseconds, 3 significant digits, growing as needed.
pub struct LatencyHistogram {
    h: Histogram<u64>,
    sum_ns: u128,
}

/// Checkpoints store the histogram in HdrHistogram's own V2 encoding (its buckets, not samples).
impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use hdrhistogram::serialization::Serializer as _;
        let mut bytes = Vec::new();
        hdrhistogram::serialization::V2Serializer::new()
            .serialize(&self.h, &mut bytes)
            .map_err(|e| serde::ser::Error::custom(format!("latency histogram: {e:?}")))?;
        (bytes, self.sum_ns).serialize(s)
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (bytes, sum_ns): (Vec<u8>, u128) = Deserialize::deserialize(d)?;
        let mut h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| serde::de::Error::custom(format!("latency histogram: {e:?}")))?;
        h.auto(true);
        Ok(LatencyHistogram { h, sum_ns })
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Summary of a latency distribution, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let h = Histogram::new(3).expect("3 significant digits is a valid histogram precision");
        LatencyHistogram { h, sum_ns: 0 }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        // Auto-resizing histograms only fail on values beyond u64 range; saturate instead.
        let _ = self.h.record(ns.max(1));
        self.sum_ns += ns as u128;
    }

    /// Add every sample of `other` (e.g. reads and writes into "all").
    pub fn add(&mut self, other: &LatencyHistogram) {
        // Both histograms auto-resize with the same precision, so adding cannot fail.
        let _ = self.h.add(&other.h);
        self.sum_ns += other.sum_ns;
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }

    pub fn reset(&mut self) {
        self.h.reset();
        self.sum_ns = 0;
    }

    pub fn mean_us(&self) -> f64 {
        if self.h.is_empty() {
            0.0
        } else {
            self.sum_ns as f64 / self.h.len() as f64 / 1000.0
        }
    }

    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.h.is_empty() {
            0.0
        } else {
            self.h.value_at_quantile(q) as f64 / 1000.0
        }
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count(),
            mean: self.mean_us(),
            p50: self.quantile_us(0.5),
            p99: self.quantile_us(0.99),
            p999: self.quantile_us(0.999),
            max: if self.h.is_empty() { 0.0 } else { self.h.max() as f64 / 1000.0 },
        }
    }

    /// Each non-empty bucket as (its highest value in ns, samples), ascending.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_since_last_iteration())).collect()
    }

    /// The sum of the samples recorded, in ns.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// (latency in us, cumulative fraction) points for a CDF plot, one per distinct bucket.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let n = self.h.len().max(1) as f64;
        let mut acc = 0u64;
        self.h
            .iter_recorded()
            .map(|v| {
                acc += v.count_since_last_iteration();
                (v.value_iterated_to() as f64 / 1000.0, acc as f64 / n)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = LatencyHistogram::new();
        for i in 1..=1000u64 {
            h.record(i * 1000); // 1..1000 us
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.mean - 500.5).abs() < 0.01);
        assert!((s.p50 - 500.0).abs() <= 1.0, "{}", s.p50);
        assert!((s.p99 - 990.0).abs() <= 1.0, "{}", s.p99);
        assert!((s.max - 1000.0).abs() <= 1.0);
    }
}
