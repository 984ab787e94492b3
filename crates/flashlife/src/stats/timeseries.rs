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
    /// The scheduler's view of the interval (the queued scheduler only).
    pub sched: Option<SchedRow>,
    /// Sampled timing's view of the interval (`[sampling]` only).
    pub sample: Option<SampleRow>,
    /// Each flow's view of the interval (`[[flows]]` only), in flow order.
    #[serde(default)]
    pub flows: Vec<FlowRow>,
    /// Where the blocks are (drives whose blocks drop a bit per cell only).
    pub modes: Option<ModeRow>,
}

/// A drive whose worn blocks drop a bit per cell (`flash.end_of_life = "drop_bit"`) at a
/// row: the bit drops so far and the live blocks in each mode, so that when its blocks
/// dropped (all at the end, or some early) can be read against its life.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModeRow {
    pub mode_switches: u64,
    /// Live blocks by mode, in `BitMode::ALL` order (SLC, MLC, TLC, QLC).
    pub blocks: [u64; 4],
}

/// Columns added when the rows carry the drive's modes.
pub const MODE_COLUMNS: &[&str] = &["mode_switches", "blocks_slc", "blocks_mlc", "blocks_tlc", "blocks_qlc"];

/// One flow's columns of a `timeseries.csv` row: requests finished per second, write MB/s
/// (10^6 bytes) issued and mean response time (us, NaN without a request) over the interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowRow {
    pub iops: f64,
    pub write_mb_per_s: f64,
    pub mean_latency_us: f64,
}

/// Each flow's columns, after the others, as `NAME_` followed by these.
pub const FLOW_COLUMNS: &[&str] = &["iops", "write_mb_per_s", "mean_latency_us"];

/// Which requests of an interval were measured, under sampled timing: its latency columns
/// are theirs (NaN when none was), and a row that closes a window names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SampleRow {
    pub window: Option<u32>,
    pub measured_requests: u64,
}

/// Columns added when the rows carry sampled timing's view.
pub const SAMPLE_COLUMNS: &[&str] = &["sample_window", "measured_requests"];

/// Where the dies' time went in one interval, under the queued scheduler.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchedRow {
    /// Share of the interval the dies (mean over dies) and channels were busy.
    pub die_busy: f64,
    pub channel_busy: f64,
    /// Share of the dies' busy time spent on background work.
    pub background_share: f64,
    /// Mean transactions waiting over the interval, all dies together, by class.
    pub queue_host_read: f64,
    pub queue_host_write: f64,
    pub queue_background: f64,
    /// The busiest die's busy share of the interval: a die the allocation or the cleaning
    /// leaves hot shows here while the mean over dies hides it.
    pub die_busy_max: f64,
    /// The most transactions of each class that waited on any one die during the interval.
    pub queue_host_read_max: u32,
    pub queue_host_write_max: u32,
    pub queue_background_max: u32,
}

/// Columns added after [`COLUMNS`] when the rows carry the scheduler's view.
pub const SCHED_COLUMNS: &[&str] = &[
    "die_busy",
    "channel_busy",
    "background_share",
    "queue_host_read",
    "queue_host_write",
    "queue_background",
    "die_busy_max",
    "queue_host_read_max",
    "queue_host_write_max",
    "queue_background_max",
];

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
    /// The scheduler's cumulative figures at the last row (for interval differences).
    pub last_sched: Option<SchedTotals>,
    /// The window the next row closes (sampled timing).
    pub window: Option<u32>,
    /// The flows' names, for their columns (`[[flows]]`; empty without).
    #[serde(default)]
    pub flow_names: Vec<String>,
    /// The rows carry the drive's modes (`ModeRow`): its blocks drop a bit per cell.
    pub modes: bool,
}

/// Cumulative scheduler figures at a row: busy time summed over dies and channels and per
/// die, background busy time, and each class's queue-length integral (length x ns); and one
/// figure of the interval that closes at the row, which no difference of totals gives: the
/// longest queue of each class on any one die since the previous row.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchedTotals {
    pub elapsed_ns: u64,
    pub dies: u32,
    pub channels: u32,
    pub die_busy_ns: u64,
    pub channel_busy_ns: u64,
    pub background_busy_ns: u64,
    pub queue_area: [f64; 3],
    pub die_busy_each_ns: Vec<u64>,
    pub queue_max: [u32; 3],
}

impl SchedTotals {
    /// The interval from `before` to `self` as a row's columns.
    pub fn since(&self, before: &SchedTotals) -> SchedRow {
        let dt = self.elapsed_ns.saturating_sub(before.elapsed_ns) as f64;
        if dt <= 0.0 {
            return SchedRow::default();
        }
        let die = (self.die_busy_ns - before.die_busy_ns) as f64;
        let q = |i: usize| (self.queue_area[i] - before.queue_area[i]) / dt;
        // The first row's `before` is empty: every die's time counts from 0.
        let die_busy_max = (self.die_busy_each_ns.iter().enumerate())
            .map(|(d, &b)| (b - before.die_busy_each_ns.get(d).copied().unwrap_or(0)) as f64 / dt)
            .fold(0.0, f64::max);
        SchedRow {
            die_busy: die / (dt * self.dies.max(1) as f64),
            channel_busy: (self.channel_busy_ns - before.channel_busy_ns) as f64 / (dt * self.channels.max(1) as f64),
            background_share: if die > 0.0 {
                (self.background_busy_ns - before.background_busy_ns) as f64 / die
            } else {
                0.0
            },
            queue_host_read: q(0),
            queue_host_write: q(1),
            queue_background: q(2),
            die_busy_max,
            queue_host_read_max: self.queue_max[0],
            queue_host_write_max: self.queue_max[1],
            queue_background_max: self.queue_max[2],
        }
    }
}

impl TimeSeries {
    /// The rows as CSV with a header.
    pub fn to_csv(&self) -> String {
        let sched = self.rows.iter().any(|r| r.sched.is_some());
        let sample = self.rows.iter().any(|r| r.sample.is_some());
        let modes = self.rows.iter().any(|r| r.modes.is_some());
        let mut s = COLUMNS.join(",");
        if sched {
            s.push(',');
            s.push_str(&SCHED_COLUMNS.join(","));
        }
        if sample {
            s.push(',');
            s.push_str(&SAMPLE_COLUMNS.join(","));
        }
        if modes {
            s.push(',');
            s.push_str(&MODE_COLUMNS.join(","));
        }
        for name in &self.flow_names {
            for c in FLOW_COLUMNS {
                let _ = write!(s, ",{name}_{c}");
            }
        }
        s.push('\n');
        for r in &self.rows {
            let _ = write!(
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
            if sched {
                let q = r.sched.unwrap_or_default();
                let _ = write!(
                    s,
                    ",{:.4},{:.4},{:.4},{:.3},{:.3},{:.3},{:.4},{},{},{}",
                    q.die_busy,
                    q.channel_busy,
                    q.background_share,
                    q.queue_host_read,
                    q.queue_host_write,
                    q.queue_background,
                    q.die_busy_max,
                    q.queue_host_read_max,
                    q.queue_host_write_max,
                    q.queue_background_max
                );
            }
            if sample {
                let q = r.sample.unwrap_or_default();
                let w = q.window.map(|w| w.to_string()).unwrap_or_default();
                let _ = write!(s, ",{w},{}", q.measured_requests);
            }
            if modes {
                let m = r.modes.unwrap_or_default();
                let [slc, mlc, tlc, qlc] = m.blocks;
                let _ = write!(s, ",{},{slc},{mlc},{tlc},{qlc}", m.mode_switches);
            }
            for i in 0..self.flow_names.len() {
                let f = r.flows.get(i).copied().unwrap_or_default();
                let _ = write!(s, ",{:.1},{:.3},{:.3}", f.iops, f.write_mb_per_s, f.mean_latency_us);
            }
            s.push('\n');
        }
        s
    }
}
