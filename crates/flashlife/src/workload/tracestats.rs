//! One-pass trace statistics (`flashlife trace stats PATH`).
//!
//! Memory is bounded: the per-page access counts behind the distinct-address count and the
//! access-count CDF are exact up to [`EXACT_PAGE_LIMIT`] distinct 4 KiB pages (about 40 MB of
//! hash map); past it the distinct count switches to a HyperLogLog estimate (2^14 registers,
//! about 0.8% standard error) and the CDF describes the first pages seen (a sample, flagged
//! by `access_cdf_sampled`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::trace::{TraceCounters, TraceReader};
use super::{IoKind, TraceConfig, Workload};
use crate::error::{Error, Result};
use crate::seeds::splitmix64;

/// Granularity of address statistics.
pub const PAGE_BYTES: u64 = 4096;
/// Distinct pages counted exactly (and tracked for the access-count CDF).
pub const EXACT_PAGE_LIMIT: usize = 1 << 20;
const HLL_BITS: u32 = 14;

/// Requests whose size falls in [min_bytes, max_bytes].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeBucket {
    /// Smallest size in the bucket (a power of two).
    pub min_bytes: u64,
    /// Largest size in the bucket (next power of two minus one).
    pub max_bytes: u64,
    /// Requests in the bucket.
    pub count: u64,
}

/// Summary of the gaps between consecutive arrival times, in ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InterArrival {
    /// Exact mean.
    pub mean_ns: f64,
    /// Median (3 significant digits).
    pub p50_ns: u64,
    /// 99th percentile (3 significant digits).
    pub p99_ns: u64,
    /// Exact maximum.
    pub max_ns: u64,
}

/// One point of the access-count CDF over 4 KiB pages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccessCdfPoint {
    /// Pages accessed at most this many times...
    pub accesses_at_most: u64,
    /// ...are this fraction of the distinct pages tracked...
    pub page_fraction: f64,
    /// ...and received this fraction of the page accesses to tracked pages.
    pub access_fraction: f64,
}

/// Statistics of a request stream. Shares are fractions in [0, 1].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TraceStats {
    /// Trace format (empty for a non-trace workload).
    pub format: String,
    /// Requests.
    pub requests: u64,
    /// Bytes requested.
    pub bytes: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Trim (discard) requests, counted in `requests` (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub trims: u64,
    /// Bytes trimmed, counted in `bytes` (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub trim_bytes: u64,
    /// reads / requests.
    pub read_share: f64,
    /// read_bytes / bytes.
    pub read_byte_share: f64,
    /// Requests that start where the previous request of the same kind ended.
    pub sequential: u64,
    /// sequential / requests.
    pub sequential_share: f64,
    /// 1 - sequential_share.
    pub random_share: f64,
    /// Smallest request, bytes.
    pub min_size: u64,
    /// Largest request, bytes.
    pub max_size: u64,
    /// Mean request size, bytes.
    pub mean_size: f64,
    /// Request sizes in power-of-two buckets (non-empty buckets only).
    pub size_histogram: Vec<SizeBucket>,
    /// Lowest byte offset.
    pub address_min: u64,
    /// One past the highest byte touched.
    pub address_end: u64,
    /// Distinct 4 KiB pages touched.
    pub distinct_pages: u64,
    /// False when `distinct_pages` is a HyperLogLog estimate.
    pub distinct_exact: bool,
    /// Arrival time of the last request (the first is at 0), ns.
    pub duration_ns: u64,
    /// Gaps between consecutive arrivals.
    pub inter_arrival: InterArrival,
    /// Access-count CDF over pages (power-of-two counts).
    pub access_cdf: Vec<AccessCdfPoint>,
    /// True when the CDF covers only the first pages seen (see the module notes).
    pub access_cdf_sampled: bool,
    /// Reader counters (lines, ignored, skipped, clamped).
    pub counters: TraceCounters,
}

/// Statistics of the trace at `path`, read with the reader options of `cfg` (format, time
/// unit, blkparse event, skip_bad_lines...; shaping options are not applied).
pub fn trace_stats(path: impl AsRef<Path>, cfg: &TraceConfig) -> Result<TraceStats> {
    let mut reader = TraceReader::open(path, cfg)?;
    let format = reader.format().name().to_string();
    let mut s = workload_stats(&mut reader, u64::MAX)?;
    s.format = format;
    Ok(s)
}

/// Statistics of the first `max_requests` requests of any workload (all of a finite one).
pub fn workload_stats(w: &mut dyn Workload, max_requests: u64) -> Result<TraceStats> {
    let mut acc = Acc::new()?;
    while acc.s.requests < max_requests {
        let Some(r) = w.next_request()? else { break };
        acc.add(r.kind, r.offset, r.size, r.arrival_ns);
    }
    let mut s = acc.finish();
    if let Some(c) = w.counters() {
        s.counters = c;
    }
    Ok(s)
}

struct Acc {
    s: TraceStats,
    buckets: [u64; 64],
    last_end: [Option<u64>; 3],
    last_arrival: Option<u64>,
    gap_sum: u128,
    gaps: Histogram<u64>,
    pages: HashMap<u64, u32>,
    overflow: bool,
    hll: Vec<u8>,
}

impl Acc {
    fn new() -> Result<Acc> {
        let gaps = Histogram::new(3).map_err(|e| Error::Run(format!("trace stats: histogram: {e}")))?;
        Ok(Acc {
            s: TraceStats { min_size: u64::MAX, address_min: u64::MAX, distinct_exact: true, ..Default::default() },
            buckets: [0; 64],
            last_end: [None, None, None],
            last_arrival: None,
            gap_sum: 0,
            gaps,
            pages: HashMap::new(),
            overflow: false,
            hll: vec![0; 1 << HLL_BITS],
        })
    }

    fn add(&mut self, kind: IoKind, offset: u64, size: u64, arrival: u64) {
        let s = &mut self.s;
        let size = size.max(1);
        s.requests += 1;
        s.bytes = s.bytes.saturating_add(size);
        let k = match kind {
            IoKind::Read => {
                s.reads += 1;
                s.read_bytes = s.read_bytes.saturating_add(size);
                0
            }
            IoKind::Write => {
                s.writes += 1;
                s.write_bytes = s.write_bytes.saturating_add(size);
                1
            }
            IoKind::Trim => {
                s.trims += 1;
                s.trim_bytes = s.trim_bytes.saturating_add(size);
                2
            }
        };
        let end = offset.saturating_add(size);
        if self.last_end[k] == Some(offset) {
            s.sequential += 1;
        }
        self.last_end[k] = Some(end);
        s.min_size = s.min_size.min(size);
        s.max_size = s.max_size.max(size);
        self.buckets[63 - size.leading_zeros() as usize] += 1;
        s.address_min = s.address_min.min(offset);
        s.address_end = s.address_end.max(end);
        if let Some(prev) = self.last_arrival {
            let gap = arrival.saturating_sub(prev);
            self.gap_sum += u128::from(gap);
            // record() grows the auto-resizing histogram; saturate only past its hard limit.
            if self.gaps.record(gap).is_err() {
                self.gaps.saturating_record(gap);
            }
            s.inter_arrival.max_ns = s.inter_arrival.max_ns.max(gap);
        }
        self.last_arrival = Some(arrival);
        s.duration_ns = s.duration_ns.max(arrival);
        for page in offset / PAGE_BYTES..=(end - 1) / PAGE_BYTES {
            let h = splitmix64(page);
            let reg = (h >> (64 - HLL_BITS)) as usize;
            let rank = ((h << HLL_BITS) | (1 << (HLL_BITS - 1))).leading_zeros() as u8 + 1;
            if self.hll[reg] < rank {
                self.hll[reg] = rank;
            }
            if let Some(c) = self.pages.get_mut(&page) {
                *c = c.saturating_add(1);
            } else if self.pages.len() < EXACT_PAGE_LIMIT {
                self.pages.insert(page, 1);
            } else {
                self.overflow = true;
            }
        }
    }

    fn hll_estimate(&self) -> u64 {
        let m = self.hll.len() as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self.hll.iter().map(|&r| 2f64.powi(-i32::from(r))).sum();
        let zeros = self.hll.iter().filter(|&&r| r == 0).count();
        let raw = alpha * m * m / sum;
        if raw <= 2.5 * m && zeros > 0 {
            (m * (m / zeros as f64).ln()).round() as u64 // linear counting for small sets
        } else {
            raw.round() as u64
        }
    }

    fn finish(mut self) -> TraceStats {
        let n = self.s.requests;
        let frac = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let mut s = std::mem::take(&mut self.s);
        if n == 0 {
            s.min_size = 0;
            s.address_min = 0;
        }
        s.read_share = frac(s.reads, n);
        s.read_byte_share = frac(s.read_bytes, s.bytes);
        s.sequential_share = frac(s.sequential, n);
        s.random_share = if n == 0 { 0.0 } else { 1.0 - s.sequential_share };
        s.mean_size = frac(s.bytes, n);
        s.size_histogram = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &count)| SizeBucket { min_bytes: 1 << i, max_bytes: ((1u128 << (i + 1)) - 1) as u64, count })
            .collect();
        if n > 1 {
            s.inter_arrival.mean_ns = self.gap_sum as f64 / (n - 1) as f64;
            s.inter_arrival.p50_ns = self.gaps.value_at_quantile(0.5);
            s.inter_arrival.p99_ns = self.gaps.value_at_quantile(0.99);
        }
        s.distinct_exact = !self.overflow;
        s.distinct_pages = if self.overflow { self.hll_estimate() } else { self.pages.len() as u64 };
        s.access_cdf_sampled = self.overflow;
        // Access-count CDF: pages grouped by access count, cumulated over power-of-two counts.
        let mut by_count: Vec<u64> = self.pages.values().map(|&c| u64::from(c)).collect();
        by_count.sort_unstable();
        let pages = by_count.len() as u64;
        let accesses: u64 = by_count.iter().sum();
        let (mut i, mut seen, mut acc) = (0usize, 0u64, 0u64);
        let mut k = 1u64;
        while i < by_count.len() {
            while i < by_count.len() && by_count[i] <= k {
                seen += 1;
                acc += by_count[i];
                i += 1;
            }
            s.access_cdf.push(AccessCdfPoint {
                accesses_at_most: k,
                page_fraction: frac(seen, pages),
                access_fraction: frac(acc, accesses),
            });
            k = k.saturating_mul(2);
        }
        s
    }
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn human_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

impl TraceStats {
    /// A one-screen human report.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let pct = |x: f64| format!("{:.1}%", x * 100.0);
        let c = &self.counters;
        let fmt = if self.format.is_empty() { String::new() } else { format!(" ({})", self.format) };
        let _ = writeln!(
            o,
            "requests      {}{fmt}; lines {} (ignored {}, skipped {}, clamped times {})",
            self.requests, c.lines, c.ignored, c.skipped, c.clamped
        );
        let _ = writeln!(
            o,
            "bytes         {} (read {}, written {})",
            human_bytes(self.bytes),
            human_bytes(self.read_bytes),
            human_bytes(self.write_bytes)
        );
        let _ = writeln!(
            o,
            "reads         {} of requests, {} of bytes; writes {} / {}",
            pct(self.read_share),
            pct(self.read_byte_share),
            pct(1.0 - self.read_share),
            pct(if self.bytes == 0 { 0.0 } else { 1.0 - self.read_byte_share })
        );
        let _ =
            writeln!(o, "pattern       {} sequential, {} random", pct(self.sequential_share), pct(self.random_share));
        let _ = writeln!(
            o,
            "sizes         min {}, mean {}, max {}",
            human_bytes(self.min_size),
            human_bytes(self.mean_size as u64),
            human_bytes(self.max_size)
        );
        for b in &self.size_histogram {
            let _ = writeln!(
                o,
                "  {:>10} ..< {:<10} {:>10}  {}",
                human_bytes(b.min_bytes),
                human_bytes(b.min_bytes.saturating_mul(2)),
                b.count,
                pct(b.count as f64 / self.requests.max(1) as f64)
            );
        }
        let _ = writeln!(
            o,
            "addresses     {} .. {} ({} span); distinct 4 KiB pages {}{} = {}",
            self.address_min,
            self.address_end,
            human_bytes(self.address_end - self.address_min),
            if self.distinct_exact { "" } else { "~" },
            self.distinct_pages,
            human_bytes(self.distinct_pages.saturating_mul(PAGE_BYTES))
        );
        let ia = &self.inter_arrival;
        let _ = writeln!(
            o,
            "duration      {}; inter-arrival mean {}, p50 {}, p99 {}, max {}",
            human_ns(self.duration_ns as f64),
            human_ns(ia.mean_ns),
            human_ns(ia.p50_ns as f64),
            human_ns(ia.p99_ns as f64),
            human_ns(ia.max_ns as f64)
        );
        let _ = writeln!(
            o,
            "page reuse    accesses<=k: pages / accesses{}",
            if self.access_cdf_sampled { " (first pages only)" } else { "" }
        );
        for p in &self.access_cdf {
            let _ =
                writeln!(o, "  k={:<8} {:>7} {:>7}", p.accesses_at_most, pct(p.page_fraction), pct(p.access_fraction));
        }
        o
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
