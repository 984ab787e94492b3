//! Trace shaping: [`Workload`] adapters that loop, filter, re-time and fold a request stream
//! so that it fits the simulated drive.
//!
//! [`build_trace`] assembles the trace pipeline in this order:
//! reader -> filter -> loop replay -> time scaling -> ignore timestamps -> address folding.
//! Folding comes last so that every address the simulator sees lies inside
//! `ctx.logical_bytes`, whatever the trace holds.

use std::collections::HashMap;
use std::path::PathBuf;

use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;

use super::trace::{TraceCounters, TraceReader};
use super::{
    ArrivalConfig, ArrivalProcess, Fold, HostRequest, IoKind, Timestamps, TraceConfig, TraceFilter, Workload,
    WorkloadContext,
};
use crate::error::{Error, Result};

pub use crate::seeds::derive_seed;

/// Build the shaped trace workload of `[workload.trace]`.
pub fn build_trace(cfg: &TraceConfig, ctx: &WorkloadContext) -> Result<Box<dyn Workload>> {
    let path = PathBuf::from(&cfg.path);
    let keep = match cfg.filter {
        TraceFilter::Reads => Some(IoKind::Read),
        TraceFilter::Writes => Some(IoKind::Write),
        TraceFilter::All => None,
    };
    let reader_cfg = cfg.clone();
    let open = move || -> Result<Box<dyn Workload>> {
        let r = TraceReader::open(&path, &reader_cfg)?;
        Ok(match keep {
            Some(k) => Box::new(Filter::new(r, k)),
            None => Box::new(r),
        })
    };
    let mut w: Box<dyn Workload> = if cfg.loops == 1 { open()? } else { Box::new(Looped::new(open, cfg.loops)?) };
    if cfg.time_scale != 1.0 {
        w = Box::new(TimeScale::new(w, cfg.time_scale));
    }
    if cfg.timestamps == Timestamps::Ignore {
        w = Box::new(IgnoreTimestamps(w));
    }
    Ok(match cfg.fold {
        Fold::RemapFirst => {
            let limit = if cfg.remap_limit_bytes == 0 { ctx.logical_bytes } else { cfg.remap_limit_bytes };
            Box::new(RemapFirst::new(w, ctx.unit_bytes, limit.min(ctx.logical_bytes))?)
        }
        Fold::None => Box::new(CheckBounds::new(w, ctx.logical_bytes)),
        Fold::Modulo => Box::new(Modulo::new(w, ctx.logical_bytes)),
    })
}

/// Keeps only reads or only writes.
pub struct Filter<W> {
    inner: W,
    keep: IoKind,
    filtered: u64,
}

impl<W: Workload> Filter<W> {
    /// Keep the requests of kind `keep`.
    pub fn new(inner: W, keep: IoKind) -> Self {
        Filter { inner, keep, filtered: 0 }
    }
}

impl<W: Workload> Workload for Filter<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        while let Some(r) = self.inner.next_request()? {
            if r.kind == self.keep {
                return Ok(Some(r));
            }
            self.filtered += 1;
        }
        Ok(None)
    }
    fn counters(&self) -> Option<TraceCounters> {
        let mut c = self.inner.counters().unwrap_or_default();
        c.filtered += self.filtered;
        Some(c)
    }
}

/// Loop replay: when a pass ends, reopen the source and replay it, shifted in time to start
/// one mean inter-arrival gap after the previous pass's last request. `loops = 0` is endless.
pub struct Looped<F> {
    open: F,
    cur: Box<dyn Workload>,
    /// Passes still allowed after the current one (ignored when endless).
    remaining: u64,
    endless: bool,
    offset: u64,
    pass_requests: u64,
    pass_last: u64,
    done: TraceCounters,
}

impl<F: FnMut() -> Result<Box<dyn Workload>> + Send> Looped<F> {
    /// Replay what `open` returns `loops` times in total (0: forever).
    pub fn new(mut open: F, loops: u64) -> Result<Self> {
        let cur = open()?;
        Ok(Looped {
            open,
            cur,
            remaining: loops.saturating_sub(1),
            endless: loops == 0,
            offset: 0,
            pass_requests: 0,
            pass_last: 0,
            done: TraceCounters::default(),
        })
    }
}

impl<F: FnMut() -> Result<Box<dyn Workload>> + Send> Workload for Looped<F> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        loop {
            if let Some(mut r) = self.cur.next_request()? {
                self.pass_requests += 1;
                self.pass_last = r.arrival_ns;
                r.arrival_ns = r.arrival_ns.saturating_add(self.offset);
                return Ok(Some(r));
            }
            if self.pass_requests == 0 {
                // Would spin forever: a pass that yields nothing never will.
                return Err(Error::Run(
                    "trace replay: a pass over the trace produced no request (everything filtered out?)".into(),
                ));
            }
            if !self.endless {
                if self.remaining == 0 {
                    return Ok(None);
                }
                self.remaining -= 1;
            }
            let gap = (self.pass_last / self.pass_requests.saturating_sub(1).max(1)).max(1);
            self.offset = self.offset.saturating_add(self.pass_last).saturating_add(gap);
            if let Some(c) = self.cur.counters() {
                self.done.absorb(&c);
            }
            self.cur = (self.open)()?;
            self.pass_requests = 0;
            self.pass_last = 0;
        }
    }
    fn counters(&self) -> Option<TraceCounters> {
        let mut c = self.done.clone();
        if let Some(cur) = self.cur.counters() {
            c.absorb(&cur);
        }
        Some(c)
    }
}

/// Multiplies arrival times by a factor (0.5: twice as fast).
pub struct TimeScale<W> {
    inner: W,
    factor: f64,
}

impl<W: Workload> TimeScale<W> {
    /// Scale by `factor` (> 0, finite; checked by the configuration).
    pub fn new(inner: W, factor: f64) -> Self {
        TimeScale { inner, factor }
    }
}

impl<W: Workload> Workload for TimeScale<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        let Some(mut r) = self.inner.next_request()? else { return Ok(None) };
        // f64 keeps 53 bits: exact to the ns for the first 104 days of a trace.
        let scaled = r.arrival_ns as f64 * self.factor;
        if scaled >= crate::workload::MAX_ARRIVAL_NS as f64 {
            return Err(Error::config(
                "workload.trace.time_scale",
                self.factor,
                format!(
                    "a factor that keeps arrival times within the simulator's clock ({} ns, 146 years): the request at {} ns would arrive at {scaled:e} ns",
                    crate::workload::MAX_ARRIVAL_NS,
                    r.arrival_ns
                ),
            ));
        }
        r.arrival_ns = scaled as u64;
        Ok(Some(r))
    }
    fn counters(&self) -> Option<TraceCounters> {
        self.inner.counters()
    }
}

/// Sets every arrival time to 0: closed-loop replay of a trace.
pub struct IgnoreTimestamps<W>(pub W);

impl<W: Workload> Workload for IgnoreTimestamps<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        Ok(self.0.next_request()?.map(|r| HostRequest { arrival_ns: 0, ..r }))
    }
    fn counters(&self) -> Option<TraceCounters> {
        self.0.counters()
    }
}

/// Folds addresses onto the drive: offset modulo the capacity; a request that would run past
/// the end is moved back to end at it; a request larger than the drive is cut to the drive.
pub struct Modulo<W> {
    inner: W,
    logical: u64,
}

impl<W: Workload> Modulo<W> {
    /// Fold onto `logical` bytes (> 0).
    pub fn new(inner: W, logical: u64) -> Self {
        Modulo { inner, logical: logical.max(1) }
    }
}

impl<W: Workload> Workload for Modulo<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        Ok(self.inner.next_request()?.map(|mut r| {
            if r.size >= self.logical {
                r.offset = 0;
                r.size = self.logical;
            } else {
                r.offset %= self.logical;
                r.offset = r.offset.min(self.logical - r.size);
            }
            r
        }))
    }
    fn counters(&self) -> Option<TraceCounters> {
        self.inner.counters()
    }
}

/// No folding: a request past the end of the drive is an error.
pub struct CheckBounds<W> {
    inner: W,
    logical: u64,
}

impl<W: Workload> CheckBounds<W> {
    /// Check against `logical` bytes.
    pub fn new(inner: W, logical: u64) -> Self {
        CheckBounds { inner, logical }
    }
}

impl<W: Workload> Workload for CheckBounds<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        match self.inner.next_request()? {
            Some(r) if r.offset.saturating_add(r.size) > self.logical => Err(Error::Run(format!(
                "trace request at byte {} ({} bytes) runs past the drive's {} logical bytes; \
                 set workload.trace.fold = \"modulo\" or \"remap_first\"",
                r.offset, r.size, self.logical
            ))),
            other => Ok(other),
        }
    }
    fn counters(&self) -> Option<TraceCounters> {
        self.inner.counters()
    }
}

/// `remap_first`: the first distinct mapping units the trace touches, in order of first
/// appearance, are given consecutive units from 0 (as ZombieNAND kept the first 512 MB of
/// unique addresses). Once `limit` units are mapped, requests touching new units lose those
/// units (counted as dropped). A request whose units land on non-consecutive compact units is
/// split into one request per consecutive run. Memory: one hash entry per kept unit, never
/// more than the drive's unit count.
pub struct RemapFirst<W> {
    inner: W,
    unit: u64,
    limit: u64,
    map: HashMap<u64, u64>,
    /// The request being split, and the next original unit to emit.
    pending: Option<(HostRequest, u64)>,
    dropped: u64,
}

impl<W: Workload> RemapFirst<W> {
    /// Keep at most `limit_bytes / unit` distinct units of `unit` bytes.
    pub fn new(inner: W, unit: u64, limit_bytes: u64) -> Result<Self> {
        let limit = limit_bytes / unit.max(1);
        if limit == 0 {
            return Err(Error::config("workload.trace.remap_limit_bytes", limit_bytes, "at least one mapping unit"));
        }
        Ok(RemapFirst { inner, unit: unit.max(1), limit, map: HashMap::new(), pending: None, dropped: 0 })
    }

    fn lookup(&mut self, u: u64) -> Option<u64> {
        if let Some(&c) = self.map.get(&u) {
            return Some(c);
        }
        let next = self.map.len() as u64;
        if next >= self.limit {
            return None;
        }
        self.map.insert(u, next);
        Some(next)
    }

    /// The next consecutive run of the pending request, if any of it is left.
    fn next_run(&mut self) -> Option<HostRequest> {
        let (req, mut u) = self.pending?;
        let first_unit = req.offset / self.unit;
        let end = req.offset + req.size; // checked by the readers: no overflow
        let last_unit = (end - 1) / self.unit;
        // Skip units that cannot be mapped.
        let start_c = loop {
            if u > last_unit {
                self.pending = None;
                return None;
            }
            if let Some(c) = self.lookup(u) {
                break c;
            }
            self.dropped += 1;
            u += 1;
        };
        let run_start = u;
        let mut c = start_c;
        u += 1;
        while u <= last_unit {
            match self.lookup(u) {
                Some(n) if n == c + 1 => {
                    c = n;
                    u += 1;
                }
                _ => break,
            }
        }
        self.pending = if u <= last_unit { Some((req, u)) } else { None };
        let lo = if run_start == first_unit { req.offset % self.unit } else { 0 };
        let hi = if u - 1 == last_unit { end - last_unit * self.unit } else { self.unit };
        let offset = start_c * self.unit + lo;
        let size = (c - start_c) * self.unit + hi - lo;
        Some(HostRequest { offset, size, ..req })
    }
}

impl<W: Workload> Workload for RemapFirst<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        loop {
            if let Some(r) = self.next_run() {
                return Ok(Some(r));
            }
            match self.inner.next_request()? {
                Some(r) => self.pending = Some((r, r.offset / self.unit)),
                None => return Ok(None),
            }
        }
    }
    fn counters(&self) -> Option<TraceCounters> {
        let mut c = self.inner.counters().unwrap_or_default();
        c.dropped += self.dropped;
        Some(c)
    }
}

/// Overwrites arrival times with an open-loop arrival process: `poisson` (exponential gaps
/// with mean 1/rate) or `bursty` (bursts of N requests `burst_spacing_ns` apart, separated by
/// `burst_gap_ns` of idle time). Its random stream is separate from the address stream.
pub struct Arrivals<W> {
    inner: W,
    rng: Pcg64Mcg,
    poisson: Option<Exp<f64>>,
    burst: u64,
    gap: u64,
    spacing: u64,
    t: u64,
    n: u64,
}

impl<W: Workload> Arrivals<W> {
    /// Re-time `inner` with the process of `cfg` (validated), drawing from `seed`.
    pub fn new(inner: W, cfg: &ArrivalConfig, seed: u64) -> Self {
        let poisson = if cfg.process == ArrivalProcess::Poisson { Exp::new(cfg.rate_iops / 1e9).ok() } else { None };
        Arrivals {
            inner,
            rng: Pcg64Mcg::seed_from_u64(seed),
            poisson,
            burst: cfg.burst_requests.max(1),
            gap: cfg.burst_gap_ns,
            spacing: cfg.burst_spacing_ns,
            t: 0,
            n: 0,
        }
    }
}

impl<W: Workload> Workload for Arrivals<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        let Some(mut r) = self.inner.next_request()? else { return Ok(None) };
        if self.n > 0 {
            let step = match &self.poisson {
                Some(exp) => exp.sample(&mut self.rng).round(),
                None if self.n.is_multiple_of(self.burst) => self.gap as f64,
                None => self.spacing as f64,
            };
            let t = self.t as f64 + step;
            if t.is_nan() || t >= crate::workload::MAX_ARRIVAL_NS as f64 {
                let key =
                    if self.poisson.is_some() { "workload.arrival.rate_iops" } else { "workload.arrival.burst_gap_ns" };
                return Err(Error::Run(format!(
                    "{key}: request {} would arrive at {t:e} ns, beyond the simulator's clock ({} ns, 146 years): expected a rate or gap that keeps the run within it",
                    self.n,
                    crate::workload::MAX_ARRIVAL_NS
                )));
            }
            self.t += step as u64;
        }
        self.n += 1;
        r.arrival_ns = self.t;
        Ok(Some(r))
    }
    fn counters(&self) -> Option<TraceCounters> {
        self.inner.counters()
    }
}
