//! Requests between issue and completion: what the run loop records when a request is
//! issued and when it finishes, and, under an event-driven scheduler, the table of requests
//! in flight (a request's completion is then known only when the scheduler reports it).

use crate::timing::Finished;
use crate::workload::{HostRequest, IoKind};

use super::{BehindBackground, RunState};

/// A request the drive is working on.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Request {
    kind: IoKind,
    arrival: u64,
    issue: u64,
    bytes: u64,
    /// Its latency is recorded (always, unless sampled timing left it out of its windows).
    measured: bool,
    /// Its flow (`[[flows]]`), or [`NO_FLOW`].
    flow: u16,
}

/// The flow of a request in a run without `[[flows]]`.
pub(super) const NO_FLOW: u16 = u16::MAX;

/// Requests in flight under an event-driven scheduler, in slots `0..queue depth`. Part of the
/// run state, so a checkpoint keeps the requests issued and not finished yet.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct InFlight {
    slots: Vec<Option<Request>>,
    free: Vec<u32>,
    /// What the scheduler reported finished and the run loop has yet to record.
    pub finished: Vec<Finished>,
}

impl InFlight {
    pub fn new(queue_depth: usize) -> Self {
        InFlight { slots: vec![None; queue_depth], free: (0..queue_depth as u32).rev().collect(), finished: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    /// A slot for a request of `flow` issued at `issue`.
    pub fn open(&mut self, kind: IoKind, arrival: u64, issue: u64, bytes: u64, measured: bool, flow: u16) -> u32 {
        let slot = self.free.pop().expect("a free slot: the run loop issues only below the queue depth");
        self.slots[slot as usize] = Some(Request { kind, arrival, issue, bytes, measured, flow });
        slot
    }
}

impl RunState {
    /// Record every request the scheduler reported finished (in `flight.finished`), and free
    /// their slots.
    pub(super) fn settle(&mut self) {
        if self.flight.finished.is_empty() {
            return;
        }
        let mut finished = std::mem::take(&mut self.flight.finished);
        for f in finished.drain(..) {
            let r = self.flight.slots[f.request as usize].take().expect("a finished request was in flight");
            self.flight.free.push(f.request);
            let behind = BehindBackground { ns: f.behind_background_ns, hard_threshold: f.hard_threshold };
            self.finished(r.kind, r.arrival, r.issue, f.finish, r.bytes, Some(behind), r.measured);
            if r.flow != NO_FLOW {
                let flow = &mut self.flows[r.flow as usize];
                flow.in_flight -= 1;
                if r.measured {
                    flow.finished(r.kind, f.finish - r.arrival);
                }
            }
        }
        self.flight.finished = finished;
    }

    /// `req` was issued at `issue`, having arrived at `arrival`.
    pub(super) fn issued(&mut self, req: &HostRequest, arrival: u64, issue: u64, open_loop: bool) {
        debug_assert!(arrival <= issue, "a request issued before it arrived");
        match req.kind {
            IoKind::Write => {
                self.host.write_requests += 1;
                self.host.write_bytes += req.size;
            }
            IoKind::Read => {
                self.host.read_requests += 1;
                self.host.read_bytes += req.size;
            }
            IoKind::Trim => {
                self.trim_requests += 1;
                self.trim_bytes += req.size;
            }
        }
        if self.measuring() {
            self.wait.record(issue - arrival);
        }
        if open_loop {
            self.first_arrival.get_or_insert(arrival);
            self.last_arrival = arrival;
        }
        self.requests += 1;
        if let Some(s) = self.sampler.as_mut() {
            s.issued();
        }
    }

    /// Is a request issued now measured? Always, unless sampled timing has it outside a window.
    pub(super) fn measuring(&self) -> bool {
        self.sampler.as_ref().is_none_or(|s| s.measuring())
    }

    /// A request of `kind` for `bytes` that arrived at `arrival` and was issued at `issue`
    /// finished at `finish`: response time counts from arrival, device time from issue.
    /// `behind`: what the scheduler knows of its wait behind background work. A request that
    /// is not `measured` (sampled timing's warm-up and fast-forward) counts only for the clock.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finished(
        &mut self,
        kind: IoKind,
        arrival: u64,
        issue: u64,
        finish: u64,
        bytes: u64,
        behind: Option<BehindBackground>,
        measured: bool,
    ) {
        self.busy_until = self.busy_until.max(finish);
        self.end = self.end.max(finish);
        if !measured {
            return;
        }
        super::sampling::record(self, kind, finish - arrival, finish - issue);
        if let Some(log) = self.log.as_mut() {
            log.row(arrival, issue, finish, kind, bytes, behind);
        }
        let (latency, device) = (finish - arrival, finish - issue);
        match kind {
            IoKind::Read => {
                self.lat_read.record(latency);
                self.dev_read.record(device);
                self.ts.long_reads.record(latency);
            }
            IoKind::Write => {
                self.lat_write.record(latency);
                self.dev_write.record(device);
            }
            // Trims are kept out of the read and write latencies (`summary.trim` counts them).
            IoKind::Trim => {
                self.busy_until = self.busy_until.max(finish);
                self.end = self.end.max(finish);
                return;
            }
        }
        self.ts.interval_latency.record(latency);
    }
}
