//! Observability: busy time per resource, time-weighted queue depth per class, time host
//! transactions spent waiting behind background work, suspensions.
//!
//! Everything is integrated on the state changes the engine makes anyway (a queue grows or
//! shrinks, a die starts or stops), so keeping the counters is O(1) per change and a snapshot
//! is exact as of the engine's clock. The queue-depth integral is kept by Little's law: the
//! integral over time of a queue's length is the sum of the times its entries waited in it,
//! so each dequeue adds its record's wait (an add, where integrating the length at each change
//! took a multiply at both ends of every wait), and a snapshot adds the waits still open.

use super::policy::{Class, CLASSES};

/// Counters the engine updates as it goes.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Counters {
    /// Per class: the waits (ns) of the transactions that have left its queues on all dies
    /// together: with the waits of those still queued, the integral over time of the length
    /// of those queues (length x ns). The mean depth is the dies' together, so one integral
    /// per class is kept, not one per die.
    depth_area: [u128; CLASSES],
    /// Per (die, class): its largest queue.
    depth_max: Vec<[u32; CLASSES]>,
    /// The most of each class that waited on any one die since the time series' last row
    /// (`Counters::take_interval_max`).
    interval_max: [u32; CLASSES],
    pub die_busy: Vec<u64>,
    pub die_bg_busy: Vec<u64>,
    pub channel_busy: Vec<u64>,
    pub link_busy: u64,
    pub host_behind_bg: u64,
    /// Per die: the part of its background time spent on the watched cause's work.
    pub die_watched_busy: Vec<u64>,
    /// Host transactions that waited while their die ran the watched cause's work, and the
    /// longest such wait (ns).
    pub host_waits_behind_watched: u64,
    pub max_host_wait_behind_watched: u64,
    pub program_suspensions: u64,
    pub erase_suspensions: u64,
    /// Operations that ran two planes' pages together.
    pub multi_plane_ops: u64,
}

impl Counters {
    pub fn new(dies: usize, channels: usize) -> Self {
        Counters {
            depth_area: [0; CLASSES],
            depth_max: vec![[0; CLASSES]; dies],
            interval_max: [0; CLASSES],
            die_busy: vec![0; dies],
            die_bg_busy: vec![0; dies],
            channel_busy: vec![0; channels],
            link_busy: 0,
            host_behind_bg: 0,
            die_watched_busy: vec![0; dies],
            host_waits_behind_watched: 0,
            max_host_wait_behind_watched: 0,
            program_suspensions: 0,
            erase_suspensions: 0,
            multi_plane_ops: 0,
        }
    }

    /// A transaction joins die `d`'s class `c` queue, which then holds `len`.
    #[inline]
    pub fn joined(&mut self, d: u32, c: Class, len: u32) {
        let (d, c) = (d as usize, c as usize);
        self.depth_max[d][c] = self.depth_max[d][c].max(len);
        self.interval_max[c] = self.interval_max[c].max(len);
    }

    /// A transaction leaves a class `c` queue after waiting `waited` ns in it.
    #[inline]
    pub fn left(&mut self, c: Class, waited: u64) {
        self.depth_area[c as usize] += waited as u128;
    }

    /// The most of each class that waited on any one die since the last call (or the start),
    /// and a new interval begun at what waits now (`longest[c]`: the longest queue of class
    /// `c` on any die at this instant).
    pub fn take_interval_max(&mut self, longest: [u32; CLASSES]) -> [u32; CLASSES] {
        std::mem::replace(&mut self.interval_max, longest)
    }

    /// The queue-depth figures as of `now`; `open[c]`: the waits so far of the transactions
    /// in class `c` queues now.
    pub fn depth_stats(&self, now: u64, open: [u128; CLASSES]) -> [DepthStats; CLASSES] {
        Class::ALL.map(|c| {
            let ci = c as usize;
            let area = self.depth_area[ci] + open[ci];
            let max = self.depth_max.iter().map(|m| m[ci]).max().unwrap_or(0);
            DepthStats { mean: if now == 0 { 0.0 } else { area as f64 / now as f64 }, max }
        })
    }
}

/// Queue depth of one class.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DepthStats {
    /// Time-weighted mean, from time 0 to the clock, of the transactions of this class
    /// waiting (ready, not started) on all dies together.
    pub mean: f64,
    /// The most that ever waited in this class on any one die.
    pub max: u32,
}

/// A snapshot of the engine's counters (see `Queued::stats`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueuedStats {
    /// The clock the snapshot was taken at (the time the busy shares are out of).
    pub elapsed_ns: u64,
    pub link_busy_ns: u64,
    /// Per die: time an operation was in progress or suspended-and-switching on it (a read
    /// holds its die until its data has crossed the channel).
    pub die_busy_ns: Vec<u64>,
    /// Per die: the part of that spent on background work (GC share of die time).
    pub die_background_busy_ns: Vec<u64>,
    /// Per channel: time data was crossing it.
    pub channel_busy_ns: Vec<u64>,
    /// By class: host read, host write, background.
    pub queue_depth: [DepthStats; CLASSES],
    /// Summed over host transactions: time each waited, ready on its die, while the die was
    /// busy with background work.
    pub host_behind_background_ns: u64,
    /// Host transactions that waited, ready on their die, while it ran background work of
    /// the watched cause ([`Queued::watch`](super::Queued::watch)); and the longest such
    /// wait: the die's time on that work while the transaction waited.
    pub host_waits_behind_watched: u64,
    pub max_host_wait_behind_watched_ns: u64,
    pub program_suspensions: u64,
    pub erase_suspensions: u64,
    /// Operations that ran two planes' pages together (multi-plane).
    pub multi_plane_ops: u64,
}
