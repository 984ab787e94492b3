//! The event loop: issue each request when the host would (closed loop at a queue depth, or
//! open loop at its arrival time), pass it to the drive, record its latency, take checkpoints
//! and time-series rows, and stop when the stop condition says.

use std::cmp::Reverse;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::config::{Arrivals, Interval, StopCondition};
use crate::error::{Error, Result};
use crate::timing::Done;
use crate::workload::{HostRequest, IoKind};

use super::progress::{self, Progress};
use super::report::{push_row, report, RunOutput};
use super::sampling::Phase;
use super::unit_size::UnitSize;
use super::Simulator;

impl Simulator {
    /// Run until the stop condition.
    pub fn run(mut self) -> Result<RunOutput> {
        let started = Instant::now();
        self.open_request_log()?;
        let unit = UnitSize::new(self.ftl.unit_bytes());
        let logical_units = self.ftl.logical_units() as u64;
        let logical_bytes = logical_units * unit.bytes();
        let stop = self.cfg.run.stop_condition(logical_bytes)?;
        let interval = self.cfg.stats.interval(logical_bytes)?;
        let checkpoint_every =
            if self.checkpoint_path.is_some() { self.cfg.run.checkpoint_interval(logical_bytes)? } else { None };
        let qd = self.cfg.host.queue_depth as usize;
        let open_loop = self
            .open_loop
            .unwrap_or_else(|| self.cfg.workload.open_loop() || self.cfg.host.arrivals == Arrivals::Timestamps);

        let mut stop_reason = String::from("end of workload");
        let label = progress::label(stop);
        const LOOKAHEAD: usize = 2;
        // Requests are drawn a batch at a time: one call into the workload, not one a request.
        const BATCH: usize = 64;
        let mut ahead: VecDeque<HostRequest> = VecDeque::with_capacity(BATCH + LOOKAHEAD + 1);
        let mut drained = false;
        let mut failed: Option<Error> = None;

        loop {
            let st = &self.state;
            // Stop conditions.
            if let Some(reason) = self.ftl.death() {
                stop_reason = format!("drive died: {reason}");
                break;
            }
            match stop {
                StopCondition::Requests(n) if st.requests >= n => {
                    stop_reason = format!("requests:{n}");
                    break;
                }
                StopCondition::TimeNs(t) if st.now >= t => {
                    stop_reason = format!("time:{t}ns");
                    break;
                }
                StopCondition::WriteBytes(b) if st.host.write_bytes >= b => {
                    stop_reason = format!("writes:{b}");
                    break;
                }
                _ => {}
            }
            // Checkpoints are taken here, between requests: the state is the drive's and
            // `self.state`'s, and the workload is `st.requests` requests in.
            if self.crash_after.is_some_and(|n| st.requests >= n) {
                return Err(Error::Run(format!("crashed on purpose after {} requests", st.requests)));
            }
            let interrupted = self.interrupt_after.is_some_and(|n| st.requests >= n)
                || (st.requests & 1023 == 0 && self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)));
            if interrupted {
                self.write_checkpoint(started.elapsed().as_secs_f64())?;
                stop_reason = "interrupted".into();
                break;
            }
            if let Some(every) = checkpoint_every {
                let (position, step) = match every {
                    Interval::TimeNs(t) => (st.now, t),
                    Interval::WriteBytes(b) => (st.host.write_bytes, b),
                };
                if position >= st.next_checkpoint {
                    self.state.next_checkpoint = (position / step + 1) * step;
                    // A periodic checkpoint is insurance: one that cannot be written (a full
                    // disk) is reported and the run goes on, rather than losing the run.
                    if let Err(e) = self.write_checkpoint(started.elapsed().as_secs_f64()) {
                        let w = format!("periodic checkpoint not written after {} requests: {e}", self.state.requests);
                        eprintln!("flashlife: warning: {w}; the run goes on");
                        self.state.warnings.push(w);
                    }
                }
            }
            let st = &mut self.state;
            if st.requests & 4095 == 0 {
                let frac = match stop {
                    StopCondition::Requests(n) => st.requests as f64 / n.max(1) as f64,
                    StopCondition::TimeNs(t) => st.now as f64 / t.max(1) as f64,
                    StopCondition::WriteBytes(b) => st.host.write_bytes as f64 / b.max(1) as f64,
                    StopCondition::Death => self.ftl.life_used(),
                    StopCondition::EndOfWorkload => 0.0,
                };
                if let Some(sink) = self.progress.as_mut() {
                    sink(Progress { fraction: frac.clamp(0.0, 1.0), requests: st.requests, label });
                }
            }
            // Sampled timing: timing on or off for this request.
            self.sample_step(stop, open_loop)?;
            if self.flows.is_some() {
                // Several flows: the host picks whose request goes next (`run_flows.rs`).
                if !self.step_flows(unit, logical_units)? {
                    break;
                }
                self.after_request(interval)?;
                continue;
            }
            // Requests are drawn from the workload ahead of their turn (a workload does not see
            // the drive, so the sequence is the same), `LOOKAHEAD` of them to prefetch their map
            // entries; errors and the end are reported when reached.
            while !drained && ahead.len() <= LOOKAHEAD {
                match self.workload.next_batch(&mut ahead, BATCH) {
                    Ok(ended) => drained = ended,
                    Err(e) => (drained, failed) = (true, Some(e)),
                }
            }
            // Copied out of the queue before it is popped: `pop_front`'s `Option` would move
            // it in pieces (the option's tag lives in `kind`), and reading it back whole stalls.
            let Some(&req) = ahead.front() else {
                match failed.take() {
                    Some(e) => return Err(e),
                    None => break,
                }
            };
            ahead.pop_front();
            for (i, r) in ahead.iter().take(LOOKAHEAD).enumerate() {
                let (first, units) = (unit.div(r.offset) as u32, unit.div_ceil(r.size.max(1)) as u32);
                if i == 0 {
                    self.ftl.prefetch_slots(first, units);
                } else {
                    self.ftl.prefetch_map(first, units);
                }
            }
            let (first, units) = self.checked_units(unit, &req, logical_units)?;

            // A scheduler that completes work after submission (the queued one, while timing
            // is on) is driven by its events: requests are issued at its clock and recorded
            // when it says they finished.
            if self.ftl.scheduler_mut().events().is_some() {
                self.issue_queued(&req, first, units, open_loop)?;
            } else {
                let ff = self.state.sampler.as_ref().is_some_and(|s| s.phase() == Phase::FastForward);
                if ff && !open_loop {
                    self.state.now =
                        self.state.sampler.as_ref().expect("sampling").fast_forward_clock(self.state.requests);
                }
                self.issue_reserved(&req, first, units, open_loop, qd, None);
                if ff && open_loop {
                    // With timing off the request finished as it was issued; the drive is taken
                    // to be busy as long as the last window says, so that only longer gaps are
                    // idle windows for background work.
                    let st = &mut self.state;
                    st.busy_until = st.sampler.as_ref().expect("sampling").fast_forward_busy_until(st.now);
                }
            }
            self.after_request(interval)?;
        }
        if self.ftl.scheduler_mut().events().is_some() {
            // Requests issued before the stop finish; background work still queued is left.
            self.drain_queued()?;
        }
        self.finish_sampling(open_loop)?;
        if stop_reason != "interrupted" && self.remove_checkpoint_at_end {
            // A finished run's checkpoint is stale: resuming it would only repeat the end.
            if let Some(p) = &self.checkpoint_path {
                if p.exists() {
                    std::fs::remove_file(p).map_err(|e| Error::io(p.display(), e))?;
                }
            }
        }
        // Close the last interval, unless the last request already closed one: a row of no
        // requests would show zero throughput and latency that never happened.
        let st = &self.state;
        if st.requests != st.ts.last_requests || st.ts.rows.is_empty() {
            let now = st.end.max(st.now);
            push_row(self.ftl.as_mut(), &mut self.state, now);
        }
        // A dead drive may have lost the unit it could not place: that is its death, not a bug.
        if self.ftl.death().is_none() {
            if let Some(v) = self.ftl.verify_all() {
                return Err(Error::Integrity(v));
            }
        }
        if let Some(log) = self.state.log.as_mut() {
            self.state.log_bytes = log.flush()?;
        }
        let segment = started.elapsed().as_secs_f64();
        Ok(report(self.cfg, self.ftl.as_ref(), self.state, segment, stop_reason, logical_bytes, unit.bytes()))
    }
}

impl Simulator {
    /// After a request was issued: the integrity oracle's verdict, and the time series' row
    /// when an interval is complete.
    #[inline]
    fn after_request(&mut self, interval: Interval) -> Result<()> {
        if let Some(v) = self.ftl.integrity_violation() {
            return Err(Error::Integrity(v.to_string()));
        }
        let st = &mut self.state;
        let reached = match interval {
            Interval::TimeNs(_) => st.now >= st.next_mark,
            Interval::WriteBytes(_) => st.host.write_bytes >= st.next_mark,
        };
        if reached {
            // Under sampled timing a window's measurement is one row, which closes it.
            if st.sampler.as_ref().is_none_or(|s| !s.measuring()) {
                push_row(self.ftl.as_mut(), st, st.now);
            }
            st.next_mark += match interval {
                Interval::TimeNs(t) => t,
                Interval::WriteBytes(b) => b,
            };
        }
        Ok(())
    }

    /// Issue `req` to a scheduler that knows each completion at submission (the reservation
    /// scheduler): find its issue time from the completions of the requests in flight, run
    /// it, and record it at once.
    /// With `flow` (`[[flows]]`), the flow's own requests in flight and last issue stand for
    /// the host's, and the request is recorded for the flow too.
    pub(super) fn issue_reserved(
        &mut self,
        req: &HostRequest,
        first: u32,
        units: u32,
        open_loop: bool,
        qd: usize,
        flow: Option<usize>,
    ) {
        let st = &mut self.state;
        let (outstanding, last_issue) = match flow {
            None => (&mut st.outstanding, st.now),
            Some(f) => {
                let fs = &mut st.flows[f];
                (&mut fs.outstanding, fs.now)
            }
        };
        let mut issue = if open_loop { req.arrival_ns } else { last_issue };
        while let Some(&Reverse(t)) = outstanding.peek() {
            if outstanding.len() >= qd || t <= issue {
                outstanding.pop();
                if outstanding.len() < qd {
                    issue = issue.max(t);
                }
            } else {
                break;
            }
        }
        if open_loop && outstanding.is_empty() && issue > st.busy_until {
            self.ftl.idle(st.busy_until, issue);
        }
        let st = &mut self.state;
        st.now = issue;
        // The one way in from plain time: the request's issue, which its first transaction
        // waits for. Its completion comes back out as a time for the statistics: here (the
        // reservation scheduler) it is when the work ends.
        let issued = Done::at(issue);
        let completion = match req.kind {
            IoKind::Write => {
                let data_in = self.ftl.host_transfer(issued, req.size);
                self.ftl.write(first, units, data_in)
            }
            IoKind::Read => {
                let flash_done = self.ftl.read(first, units, issued, req.stream, req.budget_us);
                self.ftl.host_transfer(flash_done, req.size)
            }
            IoKind::Trim => {
                // The command crosses the host link (no data); the map changes at once.
                let command_in = self.ftl.host_transfer(issued, 0);
                self.ftl.trim(first, units);
                command_in
            }
        }
        .as_time();
        let st = &mut self.state;
        // Response time counts from arrival: an open-loop request that found every queue
        // slot taken waited for one before the drive saw it. A closed-loop request arrives
        // when its slot frees, so there the two are the same.
        let arrival = if open_loop { req.arrival_ns } else { issue };
        st.issued(req, arrival, issue, open_loop);
        let measured = st.measuring();
        st.finished(req.kind, arrival, issue, completion, req.size, None, measured);
        match flow {
            None => st.outstanding.push(Reverse(completion)),
            Some(f) => {
                let turn = st.requests;
                let fs = &mut st.flows[f];
                fs.outstanding.push(Reverse(completion));
                fs.issued(req, units, issue, turn);
                if measured {
                    fs.finished(req.kind, completion - arrival);
                }
            }
        }
    }
}

/// The mapping units a request covers.
pub(super) fn units_of(unit: UnitSize, req: &HostRequest, logical_units: u64) -> Result<(u32, u32)> {
    let first = unit.div(req.offset);
    let last = unit.div(req.offset + req.size.max(1) - 1);
    if last >= logical_units {
        return Err(Error::Run(format!(
                "request at byte {} of {} bytes ends beyond the drive's {} logical bytes (fold the workload's addresses onto the drive)",
                req.offset,
                req.size,
                logical_units * unit.bytes()
            )));
    }
    if req.kind == IoKind::Trim {
        // Only the units a trim covers whole are deallocated: the rest of a unit it touches
        // in part still holds data the host wants.
        let whole_first = unit.div_ceil(req.offset);
        let whole_end = unit.div(req.offset + req.size);
        return Ok((whole_first.min(last + 1) as u32, whole_end.saturating_sub(whole_first) as u32));
    }
    Ok((first as u32, (last - first + 1) as u32))
}
