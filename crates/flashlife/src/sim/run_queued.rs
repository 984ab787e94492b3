//! The run loop's side of an event-driven scheduler (the queued one): requests are issued
//! at the scheduler's clock, which moves from one event to the next, and recorded when the
//! scheduler reports them finished. Between events it has the FTL decide the cleaning steps
//! the scheduler asks for (`feed_background`).

use crate::error::{Error, Result};
use crate::timing::Done;
use crate::workload::{HostRequest, IoKind};

use super::Simulator;

impl Simulator {
    /// Issue `req` when the host would: at its arrival (open loop) or at once (closed loop),
    /// and in both only once a queue slot is free. Events due before then are
    /// handled first, in time order, so completions free slots and follow-up work starts at
    /// the instant its input finishes; an open-loop gap with nothing in flight is an idle
    /// window for the drive's background work.
    pub(super) fn issue_queued(&mut self, req: &HostRequest, first: u32, units: u32, open_loop: bool) -> Result<()> {
        let target = if open_loop { req.arrival_ns } else { self.state.now };
        let mut idled = false;
        loop {
            self.feed_background();
            let ev = self.ftl.scheduler_mut().events().expect("an event-driven scheduler");
            let (clock, next) = (ev.now(), ev.next_event_time());
            if open_loop && self.state.flight.len() == 0 && !idled && target > clock {
                idled = true;
                self.ftl.idle(clock, target);
                continue;
            }
            if !self.state.flight.is_full() && next.is_none_or(|e| e > target) {
                break;
            }
            if next.is_none() {
                return Err(Error::Run(format!(
                    "the queued scheduler has {} requests in flight and nothing scheduled (a lost dependency: please report it)",
                    self.state.flight.len()
                )));
            }
            // On from event to event while nothing needs this loop: with the queue full it
            // waits for a request to finish, otherwise for the next event past `target`.
            let limit = if self.state.flight.is_full() { u64::MAX } else { target };
            ev.advance_quiet(limit, &mut self.state.flight.finished);
            self.state.settle();
        }
        self.submit_queued(req, first, units, open_loop, target, None)
    }

    /// Issue `req` at `target` or the scheduler's clock if later (its wait for a queue slot
    /// is over), for `flow` (`[[flows]]`: its index and whether it is high priority).
    pub(super) fn submit_queued(
        &mut self,
        req: &HostRequest,
        first: u32,
        units: u32,
        open_loop: bool,
        target: u64,
        flow: Option<(u16, bool)>,
    ) -> Result<()> {
        let ev = self.ftl.scheduler_mut().events().expect("an event-driven scheduler");
        let issue = target.max(ev.now());
        ev.advance(issue, &mut self.state.flight.finished);
        self.state.settle();

        let arrival = if open_loop { req.arrival_ns } else { issue };
        self.state.now = issue;
        self.state.issued(req, arrival, issue, open_loop);
        let measured = self.state.measuring();
        let (tag, high) = flow.unwrap_or((super::flight::NO_FLOW, false));
        let slot = self.state.flight.open(req.kind, arrival, issue, req.size, measured, tag);
        let ev = self.ftl.scheduler_mut().events().expect("event-driven");
        if flow.is_some() {
            let f = &mut self.state.flows[tag as usize];
            f.in_flight += 1;
            f.issued(req, units, issue, self.state.requests);
            ev.begin_request_prioritised(slot, high);
        } else {
            ev.begin_request(slot);
        }
        // The request's issue time, which its first transaction waits for; its completion
        // comes back from the scheduler (`Finished`), not from these values.
        let issued = Done::at(issue);
        let transfer_after = match req.kind {
            IoKind::Write => {
                let data_in = self.ftl.host_transfer(issued, req.size);
                self.ftl.write(first, units, data_in);
                0
            }
            IoKind::Read => {
                self.ftl.read(first, units, issued, req.stream, req.budget_us);
                req.size
            }
            IoKind::Trim => {
                self.ftl.host_transfer(issued, 0);
                self.ftl.trim(first, units);
                0
            }
        };
        let ev = self.ftl.scheduler_mut().events().expect("event-driven");
        ev.end_request(transfer_after, &mut self.state.flight.finished);
        self.state.settle();
        self.feed_background();
        Ok(())
    }

    /// Have the FTL decide a step of cleaning on each die the scheduler says runs short of
    /// background work while it owes some. The scheduler knows when a die wants work and the
    /// FTL what the work is; neither calls the other for it (the timing layer does not know
    /// the FTL), so the loop, above both, passes the question on.
    pub(super) fn feed_background(&mut self) {
        let Some(ev) = self.ftl.scheduler_mut().events() else { return };
        let (mut now, mut wanted) = (ev.now(), ev.background_wanted());
        while let Some(die) = wanted {
            // The scheduler's clock: the step's work waits for nothing earlier.
            let more = self.ftl.step_cleaning(die, Done::at(now));
            let Some(ev) = self.ftl.scheduler_mut().events() else { return };
            ev.background_stepped(die, more);
            (now, wanted) = (ev.now(), ev.background_wanted());
        }
    }

    /// Handle events until every request issued has finished.
    pub(super) fn drain_queued(&mut self) -> Result<()> {
        while self.state.flight.len() > 0 {
            self.feed_background();
            let Some(ev) = self.ftl.scheduler_mut().events() else {
                return Ok(()); // timing switched off: nothing more will be timed
            };
            if ev.next_event_time().is_none() {
                return Err(Error::Run(format!(
                    "the queued scheduler has {} requests in flight and nothing scheduled (a lost dependency: please report it)",
                    self.state.flight.len()
                )));
            }
            ev.advance_quiet(u64::MAX, &mut self.state.flight.finished);
            self.state.settle();
        }
        Ok(())
    }
}
