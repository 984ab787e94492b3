//! The run loop's step with several flows (`[[flows]]`): find the flow whose request the host
//! issues next, under either scheduler, and issue it (`flows.rs` says how the host picks).

use crate::error::{Error, Result};
use crate::workload;

use super::run::units_of;
use super::unit_size::UnitSize;
use super::Simulator;

impl Simulator {
    /// Issue the next request of whichever flow the host would issue first. `Ok(false)`: every
    /// flow's workload has ended.
    pub(super) fn step_flows(&mut self, unit: UnitSize, logical_units: u64) -> Result<bool> {
        let flows = self.flows.as_mut().expect("a run with flows");
        if self.ftl.scheduler_mut().events().is_none() {
            // The reservation scheduler: every completion is known, so is when a slot frees.
            let st = &self.state;
            let (pick, _) = flows.pick(&st.flows, |i, open| {
                let f = &st.flows[i];
                let slot =
                    if f.outstanding.len() >= f.qd as usize { f.outstanding.peek().map_or(0, |r| r.0) } else { 0 };
                Some(if open { slot } else { f.now.max(slot) })
            })?;
            let Some((i, _)) = pick else { return Ok(false) };
            let (open, qd) = (flows.sources[i].open_loop, flows.sources[i].qd as usize);
            let req = flows.take(i)?;
            let (first, units) = self.checked_units(unit, &req, logical_units)?;
            self.issue_reserved(&req, first, units, open, qd, Some(i));
            return Ok(true);
        }
        // The queued scheduler: a full flow waits for the scheduler to finish one of its
        // requests, so the loop handles events until some flow may issue before the next one
        // (as `issue_queued` does for a single workload).
        let mut idled = false;
        let (i, target) = loop {
            // Completions may have left dies short of background work: the FTL decides their
            // next cleaning steps before the clock moves on (as in `issue_queued`).
            self.feed_background();
            let flows = self.flows.as_mut().expect("a run with flows");
            let st = &self.state;
            let (pick, any) = flows.pick(&st.flows, |i, open| {
                let f = &st.flows[i];
                (f.in_flight < f.qd).then_some(if open { 0 } else { f.now })
            })?;
            if !any {
                return Ok(false);
            }
            let ev = self.ftl.scheduler_mut().events().expect("an event-driven scheduler");
            let (clock, next) = (ev.now(), ev.next_event_time());
            if let Some((i, target)) = pick {
                if flows.sources[i].open_loop && st.flight.len() == 0 && !idled && target > clock {
                    idled = true;
                    self.ftl.idle(clock, target);
                    continue;
                }
                if next.is_none_or(|e| e > target) {
                    break (i, target);
                }
            }
            let Some(e) = next else {
                return Err(Error::Run(format!(
                    "the queued scheduler has {} requests in flight and nothing scheduled (a lost dependency: please report it)",
                    st.flight.len()
                )));
            };
            ev.advance(e, &mut self.state.flight.finished);
            self.state.settle();
        };
        let flows = self.flows.as_mut().expect("a run with flows");
        let (open, high) = (flows.sources[i].open_loop, flows.sources[i].high);
        let req = flows.take(i)?;
        let (first, units) = self.checked_units(unit, &req, logical_units)?;
        self.submit_queued(&req, first, units, open, target, Some((i as u16, high)))?;
        Ok(true)
    }

    /// The units `req` covers, marked as touched (trace runs), with its arrival checked: both
    /// run loops (one workload, `run.rs`; several flows, here) go through it.
    #[inline]
    pub(super) fn checked_units(
        &mut self,
        unit: UnitSize,
        req: &workload::HostRequest,
        logical_units: u64,
    ) -> Result<(u32, u32)> {
        let (first, units) = units_of(unit, req, logical_units)?;
        let st = &mut self.state;
        if let Some(bits) = st.touched.as_mut() {
            for u in first..first + units {
                bits[(u >> 6) as usize] |= 1 << (u & 63);
            }
        }
        if req.arrival_ns >= workload::MAX_ARRIVAL_NS {
            return Err(Error::Run(format!(
                "request {} arrives at {} ns, beyond the simulator's clock ({} ns, 146 years): check the trace's timestamps, workload.trace.time_scale and workload.arrival",
                st.requests,
                req.arrival_ns,
                workload::MAX_ARRIVAL_NS
            )));
        }
        Ok((first, units))
    }
}
