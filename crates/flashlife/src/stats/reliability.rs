//! Read reliability statistics: long reads, retry steps, uncorrectable reads, read reclaim and
//! the lifetime it spends (`summary.json` section `reliability`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::counters::{Cause, FlashCounters};

/// Host reads whose latency exceeds a threshold (the paper's "long reads", > 400 us).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct LongReads {
    pub threshold_ns: u64,
    pub reads: u64,
    pub long: u64,
    /// Counts at the last time-series row.
    pub last_reads: u64,
    pub last_long: u64,
    /// Host retry steps and host page reads at the last time-series row.
    pub last_retries: u64,
    pub last_page_reads: u64,
    /// `reliability.read_thresholds_us`: (threshold in ns, host reads slower than it). A few
    /// entries, allocated once per run.
    pub over: Vec<(u64, u64)>,
}

impl LongReads {
    /// Count reads longer than `threshold_us`, and longer than each of `more_us`.
    pub fn new(threshold_us: f64, more_us: &[u32]) -> Self {
        LongReads {
            threshold_ns: (threshold_us * 1000.0).round() as u64,
            over: more_us.iter().map(|&t| (u64::from(t) * 1000, 0)).collect(),
            ..Default::default()
        }
    }

    /// A host read took `latency_ns`.
    #[inline]
    pub fn record(&mut self, latency_ns: u64) {
        self.reads += 1;
        self.long += (latency_ns > self.threshold_ns) as u64;
        for (threshold, n) in &mut self.over {
            *n += (latency_ns > *threshold) as u64;
        }
    }

    /// Share of host reads over each extra threshold, keyed by the threshold in whole
    /// microseconds (`None` when no extra threshold was set). JSON writes the keys as
    /// strings, in numeric order.
    pub fn shares_over(&self) -> Option<BTreeMap<u32, f64>> {
        if self.over.is_empty() {
            return None;
        }
        Some(self.over.iter().map(|&(t, n)| ((t / 1000) as u32, share(n, self.reads))).collect())
    }

    /// Share of long reads since the last call, and restart the interval.
    pub fn interval_share(&mut self) -> f64 {
        let (r, l) = (self.reads - self.last_reads, self.long - self.last_long);
        self.last_reads = self.reads;
        self.last_long = self.long;
        share(l, r)
    }

    /// Mean retry steps per host page read since the last call, given the cumulative counts.
    pub fn interval_retry_mean(&mut self, retries: u64, page_reads: u64) -> f64 {
        let (s, n) = (retries - self.last_retries, page_reads - self.last_page_reads);
        self.last_retries = retries;
        self.last_page_reads = page_reads;
        share(s, n)
    }

    /// Share of long reads over the whole run.
    pub fn share(&self) -> f64 {
        share(self.long, self.reads)
    }
}

/// `n / of`, or 0 when `of` is 0 (no reads yet).
fn share(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64
    }
}

/// `summary.json` → `reliability`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReliabilitySummary {
    /// `reliability.model` and `reliability.read_reclaim` of the run.
    pub model: String,
    pub read_reclaim: String,
    /// Host page reads by retry steps needed (index = steps; the last entry: uncorrectable).
    pub retry_steps_histogram: Vec<u64>,
    /// Mean retry steps per host page read.
    pub mean_retry_steps: f64,
    /// Retry steps of all reads (extra sensings and transfers), by the cause of the read.
    pub read_retries_by_cause: super::counters::ByCause,
    /// Host reads slower than `long_read_threshold_us`, and their share of host reads.
    pub long_read_threshold_us: f64,
    pub long_reads: u64,
    pub long_read_share: f64,
    /// Share of host reads slower than each of `reliability.read_thresholds_us`, keyed by the
    /// threshold in microseconds (absent when none is set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads_over_us: Option<BTreeMap<u32, f64>>,
    /// Page reads the last retry step could not correct (also `failures.uncorrectable_reads`).
    pub uncorrectable_reads: u64,
    /// Host read requests a hint command covered.
    pub hinted_reads: u64,
    /// Blocks rewritten by read reclaim, and the page programs and erases that cost.
    pub reclaimed_blocks: u64,
    pub reclaim_page_programs: u64,
    pub reclaim_erases: u64,
    /// Spent lifetime by reads: reclaim erases as a share of the drive's P/E budget (blocks x
    /// rated cycles of the starting mode) ...
    pub reclaim_share_of_pe_budget: f64,
    /// ... and as a share of all erases of the run.
    pub reclaim_share_of_erases: f64,
    /// Reclaims done in idle windows, when they are postponed there
    /// (`reliability.reclaim_when = "idle"`; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reclaims_in_idle: Option<u64>,
}

impl ReliabilitySummary {
    /// Build from the run's counters; `pe_budget` is blocks x rated cycles.
    pub fn new(
        model: &str,
        read_reclaim: &str,
        c: &FlashCounters,
        histogram: &[u64],
        long: &LongReads,
        hinted_reads: u64,
        pe_budget: f64,
    ) -> Self {
        let host_reads: u64 = histogram.iter().sum();
        let steps: u64 = histogram.iter().enumerate().map(|(s, &n)| s as u64 * n).sum();
        let reclaim_erases = c.block_erases.get(Cause::Reclaim);
        let erases = c.block_erases.total();
        ReliabilitySummary {
            model: model.to_string(),
            read_reclaim: read_reclaim.to_string(),
            retry_steps_histogram: histogram.to_vec(),
            mean_retry_steps: share(steps, host_reads),
            read_retries_by_cause: c.read_retries,
            long_read_threshold_us: long.threshold_ns as f64 / 1000.0,
            long_reads: long.long,
            long_read_share: long.share(),
            reads_over_us: long.shares_over(),
            uncorrectable_reads: c.uncorrectable_reads,
            hinted_reads,
            reclaimed_blocks: c.reclaimed_blocks,
            reclaim_page_programs: c.page_programs.get(Cause::Reclaim),
            reclaim_erases,
            reclaim_share_of_pe_budget: if pe_budget > 0.0 { reclaim_erases as f64 / pe_budget } else { 0.0 },
            reclaim_share_of_erases: share(reclaim_erases, erases),
            reclaims_in_idle: None,
        }
    }

    /// Report the reclaims done in idle windows (when reclaim is postponed there).
    pub fn with_reclaims_in_idle(mut self, postponed: bool, c: &FlashCounters) -> Self {
        self.reclaims_in_idle = postponed.then_some(c.reclaims_in_idle);
        self
    }
}
