//! Time series: one row per interval of simulated time or of host bytes written.

use std::fmt::Write as _;

use super::latency::LatencyHistogram;
use super::reliability::LongReads;

/// One row of `timeseries.csv`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub time_s: f64,
    pub host_bytes_written: u64,
    pub host_mb_per_s: f64,
    pub iops: f64,
    pub mean_latency_us: f64,
    pub p99_latency_us: f64,
    pub wa_interval: f64,
    pub wa_cumulative: f64,
    pub free_blocks: u64,
    pub erases: u64,
    pub dead_blocks: u64,
    pub life_used: f64,
    /// Share of host reads in the interval slower than `reliability.long_read_us`.
    pub long_read_share: f64,
    /// Mean retry steps per host page read in the interval.
    pub mean_retry_steps: f64,
    /// Cumulative uncorrectable page reads.
    pub uncorrectable_reads: u64,
    /// Cumulative page programs and block erases of read reclaim.
    pub reclaim_programs: u64,
    pub reclaim_erases: u64,
}

/// Column names, in order.
pub const COLUMNS: &[&str] = &[
    "time_s",
    "host_bytes_written",
    "host_mb_per_s",
    "iops",
    "mean_latency_us",
    "p99_latency_us",
    "wa_interval",
    "wa_cumulative",
    "free_blocks",
    "erases",
    "dead_blocks",
    "life_used",
    "long_read_share",
    "mean_retry_steps",
    "uncorrectable_reads",
    "reclaim_programs",
    "reclaim_erases",
];

/// Accumulates interval statistics and finished rows.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct TimeSeries {
    pub rows: Vec<Row>,
    pub interval_latency: LatencyHistogram,
    pub last_time_ns: u64,
    pub last_host_bytes: u64,
    pub last_requests: u64,
    pub last_host_units: u64,
    pub last_unit_programs: u64,
    /// Host read latency and retry tracking for the read-reliability columns.
    pub long_reads: LongReads,
}

impl TimeSeries {
    /// The rows as CSV with a header.
    pub fn to_csv(&self) -> String {
        let mut s = COLUMNS.join(",");
        s.push('\n');
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{:.6},{},{:.3},{:.1},{:.3},{:.3},{:.4},{:.4},{},{},{},{:.5},{:.6},{:.4},{},{},{}",
                r.time_s,
                r.host_bytes_written,
                r.host_mb_per_s,
                r.iops,
                r.mean_latency_us,
                r.p99_latency_us,
                r.wa_interval,
                r.wa_cumulative,
                r.free_blocks,
                r.erases,
                r.dead_blocks,
                r.life_used,
                r.long_read_share,
                r.mean_retry_steps,
                r.uncorrectable_reads,
                r.reclaim_programs,
                r.reclaim_erases
            );
        }
        s
    }
}
