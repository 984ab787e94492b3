//! Trace shaping: [`Workload`] adapters that loop, filter, re-time and fold a request stream
//! so that it fits the simulated drive.
//!
//! [`build_trace`] assembles the trace pipeline in this order:
//! reader -> stream filter -> read/write filter -> loop replay -> time scaling -> ignore timestamps -> address folding.
//! Folding comes last so that every address the simulator sees lies inside
//! `ctx.logical_bytes`, whatever the trace holds; its adapters are in [`super::fold`]
//! (re-exported here).

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

pub use super::fold::{CheckBounds, Modulo, RemapFirst, REMAP_MEMO_RUNS};
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
    let stream = cfg.stream;
    let open = move || -> Result<Box<dyn Workload>> {
        let r = TraceReader::open(&path, &reader_cfg)?;
        Ok(match (keep, stream) {
            (Some(k), None) => Box::new(Filter::new(r, k)),
            (None, None) => Box::new(r),
            (k, Some(s)) => {
                let f = StreamFilter::new(r, s, path.display().to_string());
                match k {
                    Some(k) => Box::new(Filter::new(f, k)),
                    None => Box::new(f),
                }
            }
        })
    };
    // One concrete type per pipeline, boxed once: a request then crosses the adapters
    // without a virtual call (or a copy through each box) per layer.
    if cfg.loops == 1 {
        retime(open()?, cfg, ctx)
    } else {
        retime(Looped::new(open, cfg.loops)?, cfg, ctx)
    }
}

/// The time scaling and ignoring of timestamps of `cfg` over `w`, then its folding.
fn retime<W: Workload + 'static>(w: W, cfg: &TraceConfig, ctx: &WorkloadContext) -> Result<Box<dyn Workload>> {
    match (cfg.time_scale != 1.0, cfg.timestamps == Timestamps::Ignore) {
        (false, false) => fold(w, cfg, ctx),
        (true, false) => fold(TimeScale::new(w, cfg.time_scale), cfg, ctx),
        (false, true) => fold(IgnoreTimestamps(w), cfg, ctx),
        (true, true) => fold(IgnoreTimestamps(TimeScale::new(w, cfg.time_scale)), cfg, ctx),
    }
}

/// The address folding of `cfg` over `w`.
fn fold<W: Workload + 'static>(w: W, cfg: &TraceConfig, ctx: &WorkloadContext) -> Result<Box<dyn Workload>> {
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

/// Keeps only the requests of one stream (`workload.trace.stream`); a trace that names the
/// stream nowhere is an error at its end, listing the streams it does name.
pub struct StreamFilter<W> {
    inner: W,
    keep: u16,
    file: String,
    kept: u64,
    filtered: u64,
    /// The streams seen, for the error (a few are enough to show the mistake).
    seen: std::collections::BTreeSet<u16>,
}

impl<W: Workload> StreamFilter<W> {
    /// Keep the requests of stream `keep` of the trace `file`.
    pub fn new(inner: W, keep: u16, file: String) -> Self {
        StreamFilter { inner, keep, file, kept: 0, filtered: 0, seen: Default::default() }
    }
}

impl<W: Workload> Workload for StreamFilter<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        while let Some(r) = self.inner.next_request()? {
            if r.stream == self.keep {
                self.kept += 1;
                return Ok(Some(r));
            }
            self.filtered += 1;
            if self.kept == 0 && self.seen.len() < 16 {
                self.seen.insert(r.stream);
            }
        }
        if self.kept == 0 {
            let seen: Vec<String> = self.seen.iter().map(u16::to_string).collect();
            return Err(Error::Run(format!(
                "workload.trace.stream = {}: the trace {} has no request of that stream (its streams: {})",
                self.keep,
                self.file,
                if seen.is_empty() { "none, it holds no request".to_string() } else { seen.join(", ") }
            )));
        }
        Ok(None)
    }
    fn counters(&self) -> Option<TraceCounters> {
        let mut c = self.inner.counters().unwrap_or_default();
        c.filtered += self.filtered;
        Some(c)
    }
}

/// Passes of at most this many requests are replayed from memory by [`Looped`] (32 bytes a
/// request: 32 MiB at most). A power of two, so that the doubling `Vec` never reserves more.
pub const LOOP_CACHE_REQUESTS: usize = 1 << 20;

/// At most this many counter checkpoints (72 bytes each: 18 MiB) are kept with a cached pass;
/// a pass that needs more (a filter or bad lines between most requests) is streamed instead.
/// With [`LOOP_CACHE_REQUESTS`], a cached pass holds at most 50 MiB.
pub const LOOP_CACHE_CHECKPOINTS: usize = 1 << 18;

/// The numeric trace counters, in [`TraceCounters`] order: lines, requests, ignored, skipped,
/// clamped, filtered, dropped, passes.
type Counts = [u64; 8];

fn counts_of(c: &TraceCounters) -> Counts {
    [c.lines, c.requests, c.ignored, c.skipped, c.clamped, c.filtered, c.dropped, c.passes]
}

/// The first pass of a [`Looped`] replay, kept in memory so that later passes need not re-read
/// and re-parse the file. The inner workload's counters can be read between any two requests,
/// so they are kept too, compactly: a plain trace line adds one line and one request, and only
/// the requests after which the counters differ from that rule get a checkpoint.
struct PassCache {
    /// The pass's requests, times relative to the pass (as the inner workload gave them).
    reqs: Vec<HostRequest>,
    /// `(k, counters after the k-th request)` wherever they are not the previous ones plus one
    /// line and one request; before the first request the counters are zero.
    marks: Vec<(u64, Counts)>,
    /// Counters after the last recorded request (while recording).
    last: Counts,
    /// From which request on the counters carry `first_skipped`, and its text.
    first_skipped: Option<(u64, String)>,
    /// The counters once the pass is over (trailing ignored lines, `passes` counted).
    end: TraceCounters,
    max_requests: usize,
}

impl PassCache {
    fn new(max_requests: usize) -> Self {
        PassCache {
            reqs: Vec::new(),
            marks: Vec::new(),
            last: [0; 8],
            first_skipped: None,
            end: TraceCounters::default(),
            max_requests,
        }
    }

    /// Keep `r` and the counters `after` it; false when the pass cannot be cached (too large,
    /// no counters, or counters that do not follow the rules the replay assumes).
    fn record(&mut self, r: HostRequest, after: Option<TraceCounters>) -> bool {
        let Some(after) = after else { return false };
        if self.reqs.len() >= self.max_requests {
            return false;
        }
        let k = self.reqs.len() as u64 + 1;
        let counts = counts_of(&after);
        let mut expected = self.last;
        expected[0] += 1;
        expected[1] += 1;
        if counts != expected {
            if self.marks.len() >= LOOP_CACHE_CHECKPOINTS {
                return false;
            }
            self.marks.push((k, counts));
        }
        self.last = counts;
        match (&self.first_skipped, after.first_skipped) {
            (None, None) => {}
            (None, Some(m)) => self.first_skipped = Some((k, m)),
            (Some((_, a)), Some(b)) if *a == b => {}
            _ => return false, // the first skipped message changed or vanished: not a reader's
        }
        self.reqs.push(r);
        true
    }

    /// Close the pass with its final counters; false if they cannot be replayed.
    fn finish(&mut self, end: Option<TraceCounters>) -> bool {
        let Some(end) = end else { return false };
        if self.reqs.is_empty() {
            return false;
        }
        if let (Some((_, a)), b) = (&self.first_skipped, &end.first_skipped) {
            if b.as_ref() != Some(a) {
                return false;
            }
        }
        self.end = end;
        self.reqs.shrink_to_fit();
        self.marks.shrink_to_fit();
        true
    }

    /// The inner workload's counters after `k` requests of a pass (the end's once it is over).
    fn counters_at(&self, k: u64, over: bool) -> TraceCounters {
        if over {
            return self.end.clone();
        }
        let i = self.marks.partition_point(|&(j, _)| j <= k);
        let (j, mut c) = if i == 0 { (0, [0; 8]) } else { self.marks[i - 1] };
        c[0] += k - j;
        c[1] += k - j;
        TraceCounters {
            lines: c[0],
            requests: c[1],
            ignored: c[2],
            skipped: c[3],
            clamped: c[4],
            filtered: c[5],
            dropped: c[6],
            passes: c[7],
            first_skipped: match &self.first_skipped {
                Some((from, m)) if k >= *from => Some(m.clone()),
                _ => None,
            },
        }
    }
}

/// Whether [`Looped`] is recording its first pass, replaying it, or streaming every pass.
enum Cache {
    Recording(PassCache),
    Ready(PassCache),
    Off,
}

/// Loop replay: when a pass ends, replay the source again, shifted in time to start one mean
/// inter-arrival gap after the previous pass's last request. `loops = 0` is endless.
///
/// A pass of at most [`LOOP_CACHE_REQUESTS`] requests is recorded in memory the first time and
/// later passes are replayed from there, with the same requests, times and counters as if
/// `open` had been called again (re-reading and re-parsing a small trace was most of a looped
/// run's workload time). A larger pass, one that fails, or a source without counters is
/// streamed: `open` is called again for every pass, as the trace readers keep constant memory.
/// The file is assumed not to change while it is replayed.
pub struct Looped<F> {
    open: F,
    /// The source of the current pass; `None` while a pass is replayed from the cache.
    cur: Option<Box<dyn Workload>>,
    cache: Cache,
    /// Requests of the current pass replayed from the cache so far.
    pos: usize,
    /// The current pass has ended: a cached pass's counters are then its end's.
    over: bool,
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
    pub fn new(open: F, loops: u64) -> Result<Self> {
        Self::with_cache_limit(open, loops, LOOP_CACHE_REQUESTS)
    }

    /// As [`Looped::new`], caching a pass of at most `max_requests` requests (0: stream every
    /// pass, as a reference for the cache).
    pub fn with_cache_limit(mut open: F, loops: u64, max_requests: usize) -> Result<Self> {
        let cur = open()?;
        let cache = if max_requests == 0 || loops == 1 {
            Cache::Off
        } else {
            Cache::Recording(PassCache::new(max_requests.min(LOOP_CACHE_REQUESTS)))
        };
        Ok(Looped {
            open,
            cur: Some(cur),
            cache,
            pos: 0,
            over: false,
            remaining: loops.saturating_sub(1),
            endless: loops == 0,
            offset: 0,
            pass_requests: 0,
            pass_last: 0,
            done: TraceCounters::default(),
        })
    }

    /// Whether later passes are replayed from memory (the first pass was cached).
    pub fn is_cached(&self) -> bool {
        matches!(self.cache, Cache::Ready(_))
    }

    /// The next request of the current pass, recording it while the first pass is cached.
    fn next_in_pass(&mut self) -> Result<Option<HostRequest>> {
        let Some(cur) = self.cur.as_mut() else {
            let Cache::Ready(c) = &self.cache else { unreachable!("a replayed pass has a cache") };
            let r = c.reqs.get(self.pos).copied();
            self.pos += r.is_some() as usize;
            return Ok(r);
        };
        let r = match cur.next_request() {
            Ok(r) => r,
            Err(e) => {
                // Errors are not replayed: from here on every pass re-reads the file as before.
                self.cache = Cache::Off;
                return Err(e);
            }
        };
        if let Cache::Recording(c) = &mut self.cache {
            let kept = match r {
                Some(r) => c.record(r, cur.counters()),
                None => c.finish(cur.counters()),
            };
            if !kept {
                self.cache = Cache::Off;
            } else if r.is_none() {
                let Cache::Recording(c) = std::mem::replace(&mut self.cache, Cache::Off) else { unreachable!() };
                self.cache = Cache::Ready(c);
            }
        }
        Ok(r)
    }

    /// [`Workload::next_request`] from the file, or at a pass's end.
    #[inline(never)]
    fn next_request_slow(&mut self) -> Result<Option<HostRequest>> {
        loop {
            if let Some(mut r) = self.next_in_pass()? {
                self.pass_requests += 1;
                self.pass_last = r.arrival_ns;
                r.arrival_ns = r.arrival_ns.saturating_add(self.offset);
                return Ok(Some(r));
            }
            // The pass is over: its counters are now the whole pass's.
            self.over = true;
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
            if let Some(c) = self.pass_counters() {
                self.done.absorb(&c);
            }
            if self.is_cached() {
                // Dropping the reader closes the file: the cache has all it gave.
                self.cur = None;
                self.pos = 0;
            } else {
                self.cur = Some((self.open)()?);
            }
            self.over = false;
            self.pass_requests = 0;
            self.pass_last = 0;
        }
    }

    /// The counters of the pass under way (all of it once it is over).
    fn pass_counters(&self) -> Option<TraceCounters> {
        match (&self.cur, &self.cache) {
            (Some(cur), _) => cur.counters(),
            (None, Cache::Ready(c)) => Some(c.counters_at(self.pos as u64, self.over)),
            (None, _) => None,
        }
    }
}

impl<F: FnMut() -> Result<Box<dyn Workload>> + Send> Workload for Looped<F> {
    /// The common case, a pass replayed from memory, inlined into the adapters above; the
    /// rest (the file, a pass's end) in [`Looped::next_request_slow`].
    #[inline]
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        if let (None, Cache::Ready(c)) = (&self.cur, &self.cache) {
            if let Some(&r) = c.reqs.get(self.pos) {
                self.pos += 1;
                self.pass_requests += 1;
                self.pass_last = r.arrival_ns;
                return Ok(Some(HostRequest { arrival_ns: r.arrival_ns.saturating_add(self.offset), ..r }));
            }
        }
        self.next_request_slow()
    }
    fn counters(&self) -> Option<TraceCounters> {
        let mut c = self.done.clone();
        if let Some(cur) = self.pass_counters() {
            c.absorb(&cur);
        }
        Some(c)
    }
    /// Known while passes are replayed from memory: the cached pass is the fixed sequence.
    #[inline]
    fn replay_index(&self) -> Option<usize> {
        if self.cur.is_none() && self.pos > 0 {
            Some(self.pos - 1)
        } else {
            None
        }
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
    #[inline]
    fn replay_index(&self) -> Option<usize> {
        self.inner.replay_index()
    }
}

/// Sets every arrival time to 0: closed-loop replay of a trace.
pub struct IgnoreTimestamps<W>(pub W);

impl<W: Workload> Workload for IgnoreTimestamps<W> {
    #[inline]
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        Ok(self.0.next_request()?.map(|r| HostRequest { arrival_ns: 0, ..r }))
    }
    fn counters(&self) -> Option<TraceCounters> {
        self.0.counters()
    }
    #[inline]
    fn replay_index(&self) -> Option<usize> {
        self.0.replay_index()
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
