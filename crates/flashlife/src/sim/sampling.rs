//! Sampled timing (`[sampling]`): the run alternates stretches in fast-forward with timed
//! windows. At every mark (`sampling.every`) timing comes on; `warmup_requests` run timed but
//! unmeasured, so that queues and GC's backlog build up again, then `window_requests` are
//! measured; then timing goes off until the next mark. Bookkeeping (wear, GC, write
//! amplification, death) runs throughout, so the drive's state is exact and only latency is
//! sampled.
//!
//! Simulated time goes on in fast-forward: an open-loop request is issued at its arrival, a
//! closed-loop one at the rate the last window measured (its requests over its span), so that
//! retention and per-day quantities still see the time the work would have taken. That rate is
//! the last window's: where throughput drifts between windows (a drive wearing out, GC
//! growing), the clock drifts with it; an open-loop stream that the drive cannot keep up with
//! queues in reality, while fast-forward issues it on time.

use serde::{Deserialize, Serialize};

use crate::config::{Every, Interval, StopCondition};
use crate::error::Result;
use crate::stats::latency::LatencyHistogram;
use crate::stats::sampling::{
    estimate, Dist, LatencyEstimate, SampledLatency, SamplingSummary, WindowSummary, CONFIDENCE,
};
use crate::workload::IoKind;

use super::report::push_row;
use super::{RunState, Simulator};

/// Where the run is in its sampling cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Phase {
    FastForward,
    Warmup,
    Measure,
}

/// One measured window.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Window {
    /// Requests served when its warm-up began: it stands for the run from here to the next
    /// window's warm-up.
    start_request: u64,
    start_ns: u64,
    end_ns: u64,
    life_used: f64,
    host_bytes_written: u64,
    read: Dist,
    write: Dist,
}

/// The sampling cycle's state: part of the run state, so a checkpoint keeps it.
#[derive(Serialize, Deserialize)]
pub(super) struct Sampler {
    every: Every,
    every_text: String,
    warmup: u64,
    window: u64,
    phase: Phase,
    /// The next window starts when the run's position (in steps of `every`) reaches this.
    next_mark: f64,
    /// The fast-forward clock of a closed loop: `ff_from_ns` plus the last window's span per
    /// request for each request since `ff_from_requests`.
    ff_from_ns: u64,
    ff_from_requests: u64,
    span_ns: u64,
    span_requests: u64,
    /// The window under way: where its warm-up and its measurement began.
    start_request: u64,
    start_ns: u64,
    measure_from_requests: u64,
    read: LatencyHistogram,
    write: LatencyHistogram,
    /// Device time (issue to completion) of the window's measured requests, summed: its mean
    /// is how long fast-forward takes the drive to be busy after each open-loop request, so
    /// that only gaps longer than that are idle windows for background work.
    device_ns: u128,
    ff_busy_ns: u64,
    windows: Vec<Window>,
    /// Requests timed (warm-up and measured); the rest of the run's went in fast-forward.
    timed_requests: u64,
}

impl Sampler {
    pub fn new(cfg: &crate::config::Config, logical_bytes: u64) -> Result<Option<Sampler>> {
        let s = &cfg.sampling;
        if !s.enabled {
            return Ok(None);
        }
        let every = s.every(cfg.run.stop_condition(logical_bytes)?, logical_bytes)?;
        let mut sampler = Sampler {
            every,
            every_text: s.every.clone(),
            warmup: s.warmup_requests,
            window: s.window_requests,
            phase: Phase::Warmup,
            next_mark: 1.0,
            ff_from_ns: 0,
            ff_from_requests: 0,
            span_ns: 0,
            span_requests: 0,
            start_request: 0,
            start_ns: 0,
            measure_from_requests: 0,
            read: LatencyHistogram::new(),
            write: LatencyHistogram::new(),
            device_ns: 0,
            ff_busy_ns: 0,
            windows: Vec::new(),
            timed_requests: 0,
        };
        if sampler.warmup == 0 {
            sampler.phase = Phase::Measure;
        }
        Ok(Some(sampler))
    }

    /// Is the next request measured?
    pub fn measuring(&self) -> bool {
        self.phase == Phase::Measure
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// A request was issued.
    pub fn issued(&mut self) {
        if self.phase != Phase::FastForward {
            self.timed_requests += 1;
        }
    }

    /// A measured request finished.
    pub fn record(&mut self, kind: IoKind, latency_ns: u64, device_ns: u64) {
        match kind {
            IoKind::Read => self.read.record(latency_ns),
            IoKind::Write => self.write.record(latency_ns),
            // Trims are kept out of the latencies, as in a timed run.
            IoKind::Trim => return,
        }
        self.device_ns += device_ns as u128;
    }

    /// Until when the drive is busy with an open-loop request issued at `issue` in
    /// fast-forward: the last window's mean device time later.
    pub fn fast_forward_busy_until(&self, issue: u64) -> u64 {
        issue.saturating_add(self.ff_busy_ns)
    }

    /// When the next closed-loop request is issued in fast-forward.
    pub fn fast_forward_clock(&self, requests: u64) -> u64 {
        if self.span_requests == 0 {
            return self.ff_from_ns;
        }
        let n = (requests - self.ff_from_requests) as u128;
        self.ff_from_ns + (n * self.span_ns as u128 / self.span_requests as u128) as u64
    }

    /// The sampling section of the summary: each window, and the whole run's estimates.
    pub fn summary(&self, requests: u64) -> SamplingSummary {
        // A window stands for the requests from its warm-up to the next one's.
        let weights: Vec<f64> = (0..self.windows.len())
            .map(|i| {
                let end = self.windows.get(i + 1).map_or(requests, |w| w.start_request);
                end.saturating_sub(self.windows[i].start_request) as f64
            })
            .collect();
        let est = |dists: &[&Dist]| -> LatencyEstimate {
            estimate(&weights.iter().copied().zip(dists.iter().copied()).collect::<Vec<_>>())
        };
        let merged: Vec<Dist> = self.windows.iter().map(|w| Dist::merged(&w.read, &w.write)).collect();
        let windows = self
            .windows
            .iter()
            .zip(&weights)
            .zip(&merged)
            .enumerate()
            .map(|(i, ((w, &weight), all))| {
                let span = w.end_ns.saturating_sub(w.start_ns) as f64 / 1e9;
                WindowSummary {
                    index: i as u32,
                    start_request: w.start_request,
                    stands_for_requests: weight as u64,
                    start_s: w.start_ns as f64 / 1e9,
                    end_s: w.end_ns as f64 / 1e9,
                    life_used: w.life_used,
                    host_bytes_written: w.host_bytes_written,
                    iops: if span > 0.0 { all.count() as f64 / span } else { f64::NAN },
                    read: w.read.summary(),
                    write: w.write.summary(),
                    all: all.summary(),
                }
            })
            .collect();
        SamplingSummary {
            every: self.every_text.clone(),
            warmup_requests: self.warmup,
            window_requests: self.window,
            measured_requests: self.windows.iter().map(|w| w.read.count() + w.write.count()).sum(),
            timed_requests: self.timed_requests,
            fast_forward_requests: requests - self.timed_requests,
            confidence: CONFIDENCE,
            estimate: SampledLatency {
                read: est(&self.windows.iter().map(|w| &w.read).collect::<Vec<_>>()),
                write: est(&self.windows.iter().map(|w| &w.write).collect::<Vec<_>>()),
                all: est(&merged.iter().collect::<Vec<_>>()),
            },
            windows,
        }
    }
}

/// The run's position in steps of `every`: a window starts at each whole step.
fn position(every: Every, stop: StopCondition, st: &RunState, life_used: impl Fn() -> f64) -> f64 {
    match every {
        Every::Share(f) => {
            let p = match stop {
                StopCondition::Requests(n) => st.requests as f64 / n.max(1) as f64,
                StopCondition::TimeNs(t) => st.now as f64 / t.max(1) as f64,
                StopCondition::WriteBytes(b) => st.host.write_bytes as f64 / b.max(1) as f64,
                StopCondition::Death => life_used(),
                StopCondition::EndOfWorkload => 0.0, // refused by the configuration
            };
            p / f
        }
        Every::Interval(Interval::TimeNs(t)) => st.now as f64 / t as f64,
        Every::Interval(Interval::WriteBytes(b)) => st.host.write_bytes as f64 / b as f64,
    }
}

impl Simulator {
    /// Before a request: move from fast-forward to warm-up at a mark, from warm-up to
    /// measurement, and back to fast-forward when the window is full.
    pub(super) fn sample_step(&mut self, stop: StopCondition, open_loop: bool) -> Result<()> {
        let Some(s) = self.state.sampler.as_ref() else { return Ok(()) };
        match s.phase {
            Phase::FastForward => {
                // The rated life used sums every block's erases: asked every 256 requests.
                if matches!((s.every, stop), (Every::Share(_), StopCondition::Death)) && self.state.requests & 255 != 0
                {
                    return Ok(());
                }
                let drive = self.ftl.as_ref();
                if position(s.every, stop, &self.state, || drive.life_used()) < s.next_mark {
                    return Ok(());
                }
                self.ftl.scheduler_mut().set_timing(true);
                let now = self.state.now;
                if let Some(ev) = self.ftl.scheduler_mut().events() {
                    // Work left queued when timing went off ran in the stretch since.
                    let mut done = Vec::new();
                    ev.advance(now.max(ev.now()), &mut done);
                    debug_assert!(done.is_empty(), "no request is in flight in fast-forward");
                    self.state.now = now.max(ev.now());
                }
                let st = &mut self.state;
                let s = st.sampler.as_mut().expect("sampling");
                s.phase = if s.warmup == 0 { Phase::Measure } else { Phase::Warmup };
                s.start_request = st.requests;
                if s.phase == Phase::Measure {
                    self.begin_measure();
                }
            }
            Phase::Warmup => {
                if self.state.requests - s.start_request >= s.warmup {
                    self.begin_measure();
                }
            }
            Phase::Measure => {
                if self.state.requests - s.measure_from_requests >= s.window {
                    self.close_window(open_loop)?;
                    let st = &self.state;
                    let s = st.sampler.as_ref().expect("sampling");
                    let drive = self.ftl.as_ref();
                    let pos = position(s.every, stop, st, || drive.life_used());
                    let s = self.state.sampler.as_mut().expect("sampling");
                    s.next_mark = (pos.floor() + 1.0).max(s.next_mark);
                    self.ftl.scheduler_mut().set_timing(false);
                }
            }
        }
        Ok(())
    }

    /// Start measuring: the time series' row up to here carries no measured request.
    fn begin_measure(&mut self) {
        let now = self.state.now;
        push_row(self.ftl.as_mut(), &mut self.state, now);
        let st = &mut self.state;
        let s = st.sampler.as_mut().expect("sampling");
        s.phase = Phase::Measure;
        s.measure_from_requests = st.requests;
        s.start_ns = now;
    }

    /// End the window under way: let its requests finish, keep its distributions and its
    /// rate (the fast-forward clock's), and close the time series' row with it.
    pub(super) fn close_window(&mut self, open_loop: bool) -> Result<()> {
        if self.ftl.scheduler_mut().events().is_some() {
            self.drain_queued()?;
        }
        let st = &mut self.state;
        if !open_loop {
            // A closed loop's window ends when its last request does.
            st.now = st.now.max(st.end);
            st.outstanding.clear();
        }
        let (now, requests, written) = (st.now, st.requests, st.host.write_bytes);
        let life_used = self.ftl.life_used();
        let st = &mut self.state;
        let s = st.sampler.as_mut().expect("sampling");
        let window = Window {
            start_request: s.start_request,
            start_ns: s.start_ns,
            end_ns: now,
            life_used,
            host_bytes_written: written,
            read: Dist::of(&s.read),
            write: Dist::of(&s.write),
        };
        let measured = s.read.count() + s.write.count();
        s.ff_busy_ns = if measured == 0 { 0 } else { (s.device_ns / measured as u128) as u64 };
        s.device_ns = 0;
        s.read.reset();
        s.write.reset();
        s.span_ns = now.saturating_sub(s.start_ns);
        s.span_requests = requests - s.measure_from_requests;
        s.ff_from_ns = now;
        s.ff_from_requests = requests;
        s.windows.push(window);
        s.phase = Phase::FastForward;
        st.ts.window = Some(s.windows.len() as u32 - 1);
        push_row(self.ftl.as_mut(), &mut self.state, now);
        Ok(())
    }

    /// At the end of the run: a window cut short by the stop is kept if it measured anything.
    pub(super) fn finish_sampling(&mut self, open_loop: bool) -> Result<()> {
        let Some(s) = self.state.sampler.as_ref() else { return Ok(()) };
        if s.phase == Phase::Measure && (s.read.count() + s.write.count() > 0 || self.state.flight.len() > 0) {
            self.close_window(open_loop)?;
        }
        Ok(())
    }
}

/// Record into the sampler, if there is one: part of [`RunState::finished`].
pub(super) fn record(st: &mut RunState, kind: IoKind, latency_ns: u64, device_ns: u64) {
    if let Some(s) = st.sampler.as_mut() {
        s.record(kind, latency_ns, device_ns);
    }
}
