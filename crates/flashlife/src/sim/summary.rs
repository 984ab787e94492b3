//! `summary.json`: the contract of design.md section 4, as typed structures.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::stats::counters::ByCause;
use crate::stats::latency::LatencySummary;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    /// Flash unit programs per host unit written; NaN (`null` in JSON) when the host wrote
    /// nothing, where the ratio is undefined.
    pub write_amplification: f64,
    pub capacity: CapacitySummary,
    pub host: HostSummary,
    pub flash: FlashSummary,
    pub gc: GcSummary,
    /// Response time, from a request's arrival to its completion: the headline latency.
    pub latency_us: LatencySet,
    /// Device time, from issue (the drive sees the request) to completion.
    pub device_time_us: LatencySet,
    /// Host queue wait, from arrival to issue: non-zero only for open-loop requests that found
    /// every queue slot (`host.queue_depth`) taken.
    pub host_queue_wait_us: LatencySummary,
    pub throughput: Throughput,
    pub lifetime: Lifetime,
    pub failures: Failures,
    pub integrity: Integrity,
    pub run: RunInfo,
    /// Open-channel host interface: device buffers, program-failure manager, metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_channel: Option<crate::host::open_channel::OpenChannelSummary>,
    /// The queued scheduler's account: busy shares, queue depths by class, host time spent
    /// behind GC, hard-threshold episodes, suspensions (absent under the reservation
    /// scheduler).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<crate::timing::SchedulerSummary>,
    /// Sampled timing (`[sampling]`): each window and the whole run's latency estimated from
    /// them, with confidence intervals. When present, `latency_us`, `device_time_us` and
    /// `host_queue_wait_us` hold the measured requests only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<crate::stats::sampling::SamplingSummary>,
    /// Trims (deallocate): present when the workload can issue them (`workload.trim_ratio`,
    /// `workload.trace.discards = "trim"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<TrimSummary>,
    /// The DRAM data cache (`[cache]`): hits, misses, destages; present when it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<crate::host::interface::CacheSummary>,
    /// The cached mapping table (`[mapping_cache]`): lookups, hits, translation-page work;
    /// present when it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping_cache: Option<crate::ftl::mapping_cache::MappingCacheSummary>,
    /// The host flows (`[[flows]]`): each flow's requests, throughput, latency and shares of
    /// the host writes and of GC, in flow order; present when the run has flows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<super::FlowSummary>,
    /// Each technique's own section, by the technique's name, present when it is on (the
    /// technique registry builds them: `techniques::summaries`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub techniques: BTreeMap<&'static str, serde_json::Value>,
    /// Error-aware reads, read reclaim and hints.
    pub reliability: crate::stats::reliability::ReliabilitySummary,
    /// What produced this result.
    pub provenance: crate::stats::provenance::Provenance,
}

impl Summary {
    /// Technique `name`'s section as its typed structure (e.g. `SecondWriteCounters` for
    /// `"reusable"`), or `None` when the technique was off.
    pub fn technique<T: serde::de::DeserializeOwned>(&self, name: &str) -> Option<T> {
        self.techniques.get(name).map(|v| T::deserialize(v).expect("a technique's section has its type's shape"))
    }
}

/// `summary.trim`: what the host's trims asked for and what they changed.
#[derive(Debug, Clone, Default, Serialize, PartialEq, serde::Deserialize)]
pub struct TrimSummary {
    /// Trim requests issued (not counted in `host.read_requests` or `host.write_requests`).
    pub requests: u64,
    /// Bytes they covered.
    pub bytes: u64,
    /// Mapping units they named.
    pub units: u64,
    /// Of those, units that held data: invalidated without a program, so GC does not move them.
    pub mapped_units: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CapacitySummary {
    pub physical_bytes: u64,
    pub logical_bytes: u64,
    pub mapping_unit_bytes: u64,
    /// (physical - logical) / logical.
    pub overprovisioning: f64,
    /// (physical - logical) / physical.
    pub reserve: f64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, serde::Deserialize)]
pub struct HostSummary {
    pub read_requests: u64,
    pub write_requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Host bytes written while preconditioning (not in `write_bytes`).
    pub precondition_bytes: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlashSummary {
    pub page_reads: u64,
    pub page_programs: u64,
    pub block_erases: u64,
    pub page_reads_by_cause: ByCause,
    pub page_programs_by_cause: ByCause,
    pub unit_programs_by_cause: ByCause,
    pub block_erases_by_cause: ByCause,
    pub buffer_hits: u64,
    pub unmapped_reads: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GcSummary {
    pub victims: u64,
    pub valid_units_moved: u64,
    /// Of `valid_units_moved`, those moved in idle windows (background GC, open-loop replay
    /// with `gc.background`); the rest were moved while host writes waited for space.
    pub valid_units_moved_idle: u64,
    pub mean_valid_per_victim: f64,
    /// With `[[flows]]`: of `valid_units_moved`, those in no flow's range (data
    /// preconditioning wrote there); `summary.flows` has each flow's own. Absent without flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_units_moved_outside_flows: Option<u64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatencySet {
    pub read: LatencySummary,
    pub write: LatencySummary,
    pub all: LatencySummary,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Throughput {
    /// Requests completed per simulated second.
    pub iops: f64,
    pub mb_per_s: f64,
    /// Open loop: the rate requests arrived at (requests over the span from the first arrival
    /// to the last); `None` (null) in closed loop, where the drive sets the pace.
    pub offered_iops: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ErasesSummary {
    pub min: u32,
    pub mean: f64,
    pub max: u32,
    pub stddev: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Lifetime {
    pub dead: bool,
    pub death_reason: Option<String>,
    pub host_bytes_written: u64,
    pub drive_writes: f64,
    pub dead_blocks: u64,
    /// Bit-mode changes of worn-out blocks (ZombieNAND's `drop_bit`).
    pub mode_switches: u64,
    pub blocks_by_mode: BTreeMap<&'static str, u64>,
    pub erase_count: ErasesSummary,
    /// Mean erase count over the rated cycles of the starting mode.
    pub life_used: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Failures {
    pub program: u64,
    pub erase: u64,
    pub uncorrectable_reads: u64,
    pub bad_pages: u64,
    pub retired_blocks: u64,
    pub worn_out_blocks: u64,
    /// Blocks that ever had a failed page program (salvaged or retired for it), since new.
    pub bad_blocks: u64,
    /// `bad_blocks` over all blocks of the drive.
    pub bad_block_ratio: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Integrity {
    pub oracle: bool,
    pub checks: u64,
    pub violation: Option<String>,
    pub out_of_order_programs: u64,
    /// Programs and erases the flash array itself counted (must equal the FTL's sums by cause).
    pub physical_page_programs: u64,
    pub physical_block_erases: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunInfo {
    pub seed: u64,
    pub requests: u64,
    pub simulated_ns: u64,
    pub wall_seconds: f64,
    pub page_ops: u64,
    pub page_ops_per_second: f64,
    pub peak_rss_bytes: u64,
    pub stop: String,
    /// Things that went wrong without stopping the run (a periodic checkpoint that could not
    /// be written), in the order they happened.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Peak resident memory of this process (VmHWM), 0 where unknown.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

impl Summary {
    /// The summary as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// A one-screen human summary.
    pub fn to_text(&self) -> String {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let l = &self.latency_us;
        let mut s = String::new();
        s += &format!(
            "drive      {:.2} GiB logical of {:.2} GiB raw (op {:.3}, reserve {:.3}), {} B mapping unit\n",
            gib(self.capacity.logical_bytes),
            gib(self.capacity.physical_bytes),
            self.capacity.overprovisioning,
            self.capacity.reserve,
            self.capacity.mapping_unit_bytes
        );
        s += &format!(
            "host       {} reads ({:.2} GiB), {} writes ({:.2} GiB)\n",
            self.host.read_requests,
            gib(self.host.read_bytes),
            self.host.write_requests,
            gib(self.host.write_bytes)
        );
        let wa = self.write_amplification;
        s += &format!(
            "flash      {} page reads, {} page programs, {} erases; WA {}\n",
            self.flash.page_reads,
            self.flash.page_programs,
            self.flash.block_erases,
            if wa.is_nan() { "n/a (no host writes)".to_string() } else { format!("{wa:.3}") }
        );
        s += &format!(
            "latency    read mean {:.1} us p99 {:.1} us | write mean {:.1} us p99 {:.1} us | max {:.1} us\n",
            l.read.mean, l.read.p99, l.write.mean, l.write.p99, l.all.max
        );
        let w = &self.host_queue_wait_us;
        // The histogram floors a sample at 1 ns: a request that did not wait reads 0.001 us.
        if w.max >= 1.0 {
            s += &format!(
                "           from arrival; of which waiting for a queue slot: mean {:.1} us p99 {:.1} us max {:.1} us\n",
                w.mean, w.p99, w.max
            );
        }
        if let Some(sm) = &self.sampling {
            let e = &sm.estimate.all;
            let ci = |x: &crate::stats::sampling::Estimate| {
                if x.low.is_nan() {
                    format!("{:.1} us", x.value)
                } else {
                    format!("{:.1} us [{:.1}, {:.1}]", x.value, x.low, x.high)
                }
            };
            s += &format!(
                "           sampled: {} windows, {} of {} requests measured; whole run mean {} p99 {} ({:.0}% intervals)\n",
                sm.windows.len(),
                sm.measured_requests,
                self.host.read_requests + self.host.write_requests,
                ci(&e.mean),
                ci(&e.p99),
                sm.confidence * 100.0
            );
        }
        s += &format!("throughput {:.0} IOPS, {:.1} MB/s", self.throughput.iops, self.throughput.mb_per_s);
        match self.throughput.offered_iops {
            Some(o) if o.is_finite() => s += &format!(" (offered {o:.0} IOPS)\n"),
            _ => s += "\n",
        }
        s += &format!(
            "lifetime   {} after {:.2} drive writes; erases min {} mean {:.1} max {}; {} dead blocks\n",
            if self.lifetime.dead { "DEAD" } else { "alive" },
            self.lifetime.drive_writes,
            self.lifetime.erase_count.min,
            self.lifetime.erase_count.mean,
            self.lifetime.erase_count.max,
            self.lifetime.dead_blocks
        );
        s += &format!(
            "run        {} requests, {:.3} s simulated, {:.2} s wall, {:.2} M page ops/s, peak RSS {:.0} MiB\n",
            self.run.requests,
            self.run.simulated_ns as f64 / 1e9,
            self.run.wall_seconds,
            self.run.page_ops_per_second / 1e6,
            self.run.peak_rss_bytes as f64 / (1u64 << 20) as f64
        );
        if let Some(r) = &self.lifetime.death_reason {
            s += &format!("death      {r}\n");
        }
        if let Some(v) = &self.integrity.violation {
            s += &format!("INTEGRITY  {v}\n");
        }
        for w in &self.run.warnings {
            s += &format!("warning    {w}\n");
        }
        s
    }
}
