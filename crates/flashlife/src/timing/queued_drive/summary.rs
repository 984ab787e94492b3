//! `summary.scheduler`: where the time went under the queued scheduler.

use crate::timing::queued::{DepthStats, QueuedStats};

/// Busy share of a kind of resource: mean over its instances, and the extremes.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Shares {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

/// Each instance's busy time as a share of `elapsed` (0 before any time has passed).
fn shares(busy: &[u64], elapsed: u64) -> Vec<f64> {
    busy.iter().map(|&b| if elapsed == 0 { 0.0 } else { b as f64 / elapsed as f64 }).collect()
}

impl Shares {
    fn of(busy: &[u64], elapsed: u64) -> Shares {
        if busy.is_empty() || elapsed == 0 {
            return Shares { mean: 0.0, min: 0.0, max: 0.0 };
        }
        let share = |b: u64| b as f64 / elapsed as f64;
        let sum: f64 = busy.iter().map(|&b| share(b)).sum();
        Shares {
            mean: sum / busy.len() as f64,
            min: busy.iter().map(|&b| share(b)).fold(f64::INFINITY, f64::min),
            max: busy.iter().map(|&b| share(b)).fold(0.0, f64::max),
        }
    }
}

/// Transactions of one class waiting (ready, not started) on the dies. Each field says what it
/// is taken over, because a mean over the whole drive and a maximum on one die read alike and
/// differ by the die count (32 host writes waiting on a 16-die drive: 32 over all dies, 2 a die).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueueDepth {
    /// Time-weighted mean of the waiting transactions on all dies together.
    pub mean_all_dies: f64,
    /// The same divided by the die count: the mean a die had waiting.
    pub mean_per_die: f64,
    /// The most that ever waited on any one die.
    pub max_one_die: u32,
}

impl QueueDepth {
    fn of(d: DepthStats, dies: usize) -> Self {
        let per_die = if dies == 0 { 0.0 } else { d.mean / dies as f64 };
        QueueDepth { mean_all_dies: d.mean, mean_per_die: per_die, max_one_die: d.max }
    }
}

/// Queue depth by class.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClassDepths {
    pub host_read: QueueDepth,
    pub host_write: QueueDepth,
    pub background: QueueDepth,
}

/// The queued scheduler's account of the run, in `summary.json` as `scheduler`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchedulerSummary {
    /// `queued`.
    pub kind: String,
    /// The policy that ordered each die's queues: `priority` or `fifo`.
    pub policy: String,
    pub suspension: bool,
    /// Simulated time the shares are out of.
    pub elapsed_ns: u64,
    /// Share of time each die had an operation in progress (or suspended).
    pub die_busy: Shares,
    /// Share of time each channel carried data.
    pub channel_busy: Shares,
    /// Each die's busy share, in die order (channel-major, as `flash/geometry.rs` numbers
    /// them: channel, then way, then die in its chip): the summary's view of a hot die.
    pub die_busy_each: Vec<f64>,
    /// Each die's share of its busy time spent on background work, in die order (0 for a
    /// die never busy).
    pub background_share_each_die: Vec<f64>,
    /// Each channel's busy share, in channel order.
    pub channel_busy_each: Vec<f64>,
    pub link_busy: f64,
    /// Share of all dies' busy time spent on background work (GC, wear leveling, reclaim,
    /// bad-block moves).
    pub background_share_of_die_time: f64,
    pub queue_depth: ClassDepths,
    /// Summed over host transactions: time each waited, ready, while its die ran background
    /// work (the host latency spent waiting on GC at the queues).
    pub host_behind_background_ns: u64,
    /// Episodes in which a die served background work first (the hard threshold): a pool of
    /// it owed cleaning one block from its reserve, or host work was held for its background
    /// work (the next count).
    pub hard_threshold_episodes: u64,
    /// Those of them, or of their stretches, in which host work was held for background work:
    /// a host write found a pool at the reserve and waited for the cleaning decided at once, a
    /// host program waited for an erase GC had not yet done, or the die owed more GC erases
    /// than `timing.hard_threshold_erases`. The rest only put cleaning ahead of the writes.
    pub host_blocked_episodes: u64,
    /// Summed over host programs: time spent waiting for those erases.
    pub host_wait_on_erase_ns: u64,
    /// The longest any one request waited behind background work, among requests none of
    /// whose transactions ran on a die at the hard threshold.
    pub max_request_behind_background_ns: u64,
    pub program_suspensions: u64,
    pub erase_suspensions: u64,
    /// Die operations that ran two planes' pages together (`timing.multi_plane`).
    pub multi_plane_ops: u64,
    /// Transactions submitted with timing on.
    pub transactions: u64,
}

impl SchedulerSummary {
    pub(super) fn new(s: &QueuedStats, policy: &str, suspension: bool, counts: &super::Counts) -> Self {
        let die_total: u64 = s.die_busy_ns.iter().sum();
        let bg_total: u64 = s.die_background_busy_ns.iter().sum();
        let dies = s.die_busy_ns.len();
        let [host_read, host_write, background] = s.queue_depth.map(|d| QueueDepth::of(d, dies));
        SchedulerSummary {
            kind: "queued".into(),
            policy: policy.into(),
            suspension,
            elapsed_ns: s.elapsed_ns,
            die_busy: Shares::of(&s.die_busy_ns, s.elapsed_ns),
            channel_busy: Shares::of(&s.channel_busy_ns, s.elapsed_ns),
            die_busy_each: shares(&s.die_busy_ns, s.elapsed_ns),
            background_share_each_die: (s.die_background_busy_ns.iter().zip(&s.die_busy_ns))
                .map(|(&bg, &busy)| if busy == 0 { 0.0 } else { bg as f64 / busy as f64 })
                .collect(),
            channel_busy_each: shares(&s.channel_busy_ns, s.elapsed_ns),
            link_busy: if s.elapsed_ns == 0 { 0.0 } else { s.link_busy_ns as f64 / s.elapsed_ns as f64 },
            background_share_of_die_time: if die_total == 0 { 0.0 } else { bg_total as f64 / die_total as f64 },
            queue_depth: ClassDepths { host_read, host_write, background },
            host_behind_background_ns: s.host_behind_background_ns,
            hard_threshold_episodes: counts.hard_threshold_episodes,
            host_blocked_episodes: counts.host_blocked_episodes,
            host_wait_on_erase_ns: counts.host_wait_on_erase_ns,
            max_request_behind_background_ns: counts.max_behind_background_ns,
            program_suspensions: s.program_suspensions,
            erase_suspensions: s.erase_suspensions,
            multi_plane_ops: s.multi_plane_ops,
            transactions: counts.transactions,
        }
    }
}
