//! Several host flows at once (`[[flows]]`, NVMe multi-queue): each flow's workload, queue
//! depth or arrival process, slice of the logical space and priority class, and what the run
//! loop records for each.
//!
//! The host issues next the request of whichever flow could issue earliest: an open-loop
//! flow at its next arrival, a closed-loop flow when it has a free slot in its own queue
//! (right after its last issue), and a flow whose queue is full when one of its own requests
//! completes. Ties go round robin (the flow whose turn came longest ago), as NVMe's default
//! arbitration between submission queues does; priority does not break them, since only
//! the queued scheduler orders work by priority, in the dies' queues (`timing::queued`).
//!
//! Flow 0 draws from the random stream a single `[workload]` uses, so a run with one flow
//! equal to `[workload]` is that run, request for request (tested).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::config::{Config, FlowPriority};
use crate::error::{Error, Result};
use crate::stats::latency::{LatencyHistogram, LatencySummary};
use crate::workload::{self, HostRequest, IoKind, Workload, WorkloadContext};

use crate::stats::timeseries::FlowRow;

use super::stream_seed;

/// Requests drawn from a flow's workload a batch at a time.
const BATCH: usize = 64;

/// A flow's source of requests and fixed traits (rebuilt from the configuration on resume).
pub(super) struct FlowSource {
    workload: Box<dyn Workload>,
    ahead: VecDeque<HostRequest>,
    drained: bool,
    failed: Option<Error>,
    name: String,
    /// The flow's slice, in bytes: its requests are offset by `start` and must end by `start + len`.
    pub start: u64,
    pub len: u64,
    pub qd: u32,
    pub open_loop: bool,
    pub high: bool,
}

impl FlowSource {
    /// The flow's next request, drawn ahead (`None`: its workload ended).
    fn peek(&mut self, i: usize) -> Result<Option<&HostRequest>> {
        if self.ahead.is_empty() && !self.drained {
            match self.workload.next_batch(&mut self.ahead, BATCH) {
                Ok(ended) => self.drained = ended,
                Err(e) => (self.drained, self.failed) = (true, Some(e)),
            }
        }
        if self.ahead.is_empty() {
            if let Some(e) = self.failed.take() {
                return Err(Error::Run(format!("flows[{i}] ({}): {e}", self.name)));
            }
        }
        Ok(self.ahead.front())
    }
}

/// Every flow's source.
pub(super) struct Flows {
    pub sources: Vec<FlowSource>,
}

impl Flows {
    /// Build each flow's workload over its slice of a drive of `logical_bytes` in units of
    /// `unit_bytes`, fast-forwarded past the `skip[i]` requests flow `i` already issued.
    pub fn build(cfg: &Config, logical_bytes: u64, unit_bytes: u64, skip: &[u64]) -> Result<Flows> {
        let units = logical_bytes / unit_bytes;
        let mut sources = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let (a, b) = f.units(units);
            if a == b {
                return Err(Error::config(
                    format!("flows[{i}].range"),
                    format!("[{}, {}]", f.range[0], f.range[1]),
                    format!("a range of at least one {unit_bytes}-byte mapping unit of the {units}"),
                ));
            }
            let seed = if i == 0 {
                stream_seed(cfg.seed, "workload")
            } else {
                stream_seed(cfg.seed, &format!("workload.flow{i}"))
            };
            let ctx = WorkloadContext { logical_bytes: (b - a) * unit_bytes, unit_bytes, seed };
            let name = f.name_of(i);
            let wrap = |e: Error| Error::Run(format!("flows[{i}] ({name}): {e}"));
            let mut workload = workload::build(&f.workload, &ctx).map_err(wrap)?;
            for n in 0..skip.get(i).copied().unwrap_or(0) {
                if workload.next_request().map_err(wrap)?.is_none() {
                    return Err(Error::Run(format!(
                        "flows[{i}] ({name}): the workload ends after {n} requests but the checkpoint had issued {} (was the trace file changed?)",
                        skip[i]
                    )));
                }
            }
            sources.push(FlowSource {
                workload,
                ahead: VecDeque::with_capacity(BATCH),
                drained: false,
                failed: None,
                name,
                start: a * unit_bytes,
                len: (b - a) * unit_bytes,
                qd: f.depth(cfg.host.queue_depth),
                open_loop: f.workload.open_loop(),
                high: f.priority == FlowPriority::High,
            });
        }
        Ok(Flows { sources })
    }

    /// The flow whose next request the host issues first, with the time it may issue (before
    /// any wait for the drive). `base(i, open_loop)` is `None` while flow `i` may not issue
    /// (its queue is full and the drive has yet to say when a slot frees), else the earliest
    /// time it could, a request permitting (a closed loop's last issue, or when a slot frees);
    /// an open-loop flow's request arrives at its own time. The bool: some flow has a request
    /// left (false: every flow has ended).
    pub fn pick(
        &mut self,
        state: &[FlowState],
        base: impl Fn(usize, bool) -> Option<u64>,
    ) -> Result<(Option<(usize, u64)>, bool)> {
        let mut best: Option<(u64, u64, usize)> = None;
        let mut any = false;
        for (i, src) in self.sources.iter_mut().enumerate() {
            let open = src.open_loop;
            let Some(r) = src.peek(i)? else { continue };
            any = true;
            let arrival = r.arrival_ns;
            let Some(b) = base(i, open) else { continue };
            let at = if open { arrival.max(b) } else { b };
            let key = (at, state[i].turn, i);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        Ok((best.map(|(at, _, i)| (i, at)), any))
    }

    /// Take flow `i`'s next request (after `pick` chose it), moved into its slice.
    pub fn take(&mut self, i: usize) -> Result<HostRequest> {
        let src = &mut self.sources[i];
        let mut r = src.ahead.pop_front().expect("a flow picked has a request drawn");
        if r.offset + r.size.max(1) > src.len {
            return Err(Error::Run(format!(
                "flows[{i}] ({}): request at byte {} of {} bytes ends beyond the flow's range of {} bytes",
                src.name, r.offset, r.size, src.len
            )));
        }
        r.offset += src.start;
        Ok(r)
    }
}

/// A workload that has nothing: the single `[workload]`'s place in a run with flows.
pub(super) struct NoWorkload;

impl Workload for NoWorkload {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        Ok(None)
    }
}

/// What the run loop keeps of one flow (part of its checkpointed state).
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(super) struct FlowState {
    /// Requests issued: also how far its workload has been read.
    pub requests: u64,
    /// Its queue depth (from the configuration, set again on resume).
    #[serde(skip)]
    pub qd: u32,
    /// Its last issue time (a closed loop's next request is due then).
    pub now: u64,
    /// Picks so far of any flow when this one was last picked (round robin between ties).
    pub turn: u64,
    /// Completion times of its requests in flight, under the reservation scheduler.
    pub outstanding: BinaryHeap<Reverse<u64>>,
    /// Its requests in flight under the queued scheduler.
    pub in_flight: u32,
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Mapping units its writes named (its part of the drive's host unit writes).
    pub unit_writes: u64,
    pub lat_read: LatencyHistogram,
    pub lat_write: LatencyHistogram,
    /// This time-series interval: requests finished and their latency sum, bytes written.
    pub ts_requests: u64,
    pub ts_latency_ns: u128,
    pub ts_write_bytes: u64,
}

impl FlowState {
    /// Flow `self` issued `req` covering `units` mapping units.
    pub fn issued(&mut self, req: &HostRequest, units: u32, issue: u64, turn: u64) {
        self.requests += 1;
        self.now = issue;
        self.turn = turn;
        match req.kind {
            IoKind::Read => {
                self.read_requests += 1;
                self.read_bytes += req.size;
            }
            IoKind::Write => {
                self.write_requests += 1;
                self.write_bytes += req.size;
                self.unit_writes += units as u64;
                self.ts_write_bytes += req.size;
            }
            IoKind::Trim => self.trim_requests += 1,
        }
    }

    /// One of its requests finished after `latency` ns (from arrival).
    pub fn finished(&mut self, kind: IoKind, latency: u64) {
        match kind {
            IoKind::Read => self.lat_read.record(latency),
            IoKind::Write => self.lat_write.record(latency),
            IoKind::Trim => return,
        }
        self.ts_requests += 1;
        self.ts_latency_ns += latency as u128;
    }
}

/// `summary.flows[i]`: one flow's account.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct FlowSummary {
    pub name: String,
    pub priority: FlowPriority,
    /// Arrivals from its workload (open loop) or as slots free (closed loop).
    pub open_loop: bool,
    pub queue_depth: u32,
    /// Its slice of the logical space, `[start, end)` bytes.
    pub range_bytes: [u64; 2],
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Reads and writes per simulated second, and their megabytes (10^6) per second, over
    /// the whole run's simulated time.
    pub iops: f64,
    pub mb_per_s: f64,
    /// Response time (arrival to completion) of its reads and writes, in us.
    pub latency_us: FlowLatency,
    /// Mapping units it wrote, and their share of the drive's host unit writes.
    pub host_units_written: u64,
    pub host_write_share: f64,
    /// Units of its range GC moved, and their share of all units GC moved (`null` where the
    /// drive does not count them: the open-channel host FTL).
    pub gc_units_moved: Option<u64>,
    pub gc_share: f64,
    /// Units of its range GC moved per unit it wrote: with disjoint ranges, 1 plus this is
    /// its own write amplification (GC's programs of its data per host program of it).
    pub gc_units_per_unit_written: f64,
}

#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct FlowLatency {
    pub read: LatencySummary,
    pub write: LatencySummary,
}

/// The summary's `flows` section from the flows' states.
pub(super) fn summary(
    cfg: &Config,
    states: &[FlowState],
    drive: &dyn crate::host::Drive,
    host_units: u64,
    secs: f64,
) -> Vec<FlowSummary> {
    let units = drive.logical_units() as u64;
    let unit = drive.unit_bytes();
    let regions = drive.as_ftl().and_then(|f| f.gc_regions());
    let gc_total = drive.counters().gc_valid_moved;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
    cfg.flows
        .iter()
        .zip(states)
        .enumerate()
        .map(|(i, (f, s))| {
            let (a, b) = f.units(units);
            let gc = regions.map(|r| r.moved[i]);
            let n = (s.read_requests + s.write_requests) as f64;
            FlowSummary {
                name: f.name_of(i),
                priority: f.priority,
                open_loop: f.workload.open_loop(),
                queue_depth: f.depth(cfg.host.queue_depth),
                range_bytes: [a * unit, b * unit],
                read_requests: s.read_requests,
                write_requests: s.write_requests,
                trim_requests: s.trim_requests,
                read_bytes: s.read_bytes,
                write_bytes: s.write_bytes,
                iops: ratio(n, secs),
                mb_per_s: ratio((s.read_bytes + s.write_bytes) as f64 / 1e6, secs),
                latency_us: FlowLatency { read: s.lat_read.summary(), write: s.lat_write.summary() },
                host_units_written: s.unit_writes,
                host_write_share: ratio(s.unit_writes as f64, host_units as f64),
                gc_units_moved: gc,
                gc_share: gc.map_or(f64::NAN, |g| ratio(g as f64, gc_total as f64)),
                gc_units_per_unit_written: gc.map_or(f64::NAN, |g| ratio(g as f64, s.unit_writes as f64)),
            }
        })
        .collect()
}

/// Close every flow's interval of `dt` seconds: its row, and a fresh interval.
pub(super) fn rows(states: &mut [FlowState], dt: f64) -> Vec<FlowRow> {
    states
        .iter_mut()
        .map(|s| {
            let row = FlowRow {
                iops: if dt > 0.0 { s.ts_requests as f64 / dt } else { 0.0 },
                write_mb_per_s: if dt > 0.0 { s.ts_write_bytes as f64 / 1e6 / dt } else { 0.0 },
                mean_latency_us: if s.ts_requests == 0 {
                    f64::NAN
                } else {
                    s.ts_latency_ns as f64 / s.ts_requests as f64 / 1e3
                },
            };
            (s.ts_requests, s.ts_latency_ns, s.ts_write_bytes) = (0, 0, 0);
            row
        })
        .collect()
}
