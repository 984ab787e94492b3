//! Workloads: streams of host requests, from synthetic generators or trace files.
//!
//! A workload is an iterator of [`HostRequest`]s that may fail with a precise error
//! (`file:line: field: message`). Workloads never know the drive's internals: they are
//! told the logical capacity and produce byte addresses within it (trace readers produce
//! the trace's own addresses; the shaping layer folds them onto the drive).
//!
//! Layout:
//! - [`trace`]: streaming readers for the supported trace formats (auto-detected, gzip
//!   transparent, constant memory);
//! - [`shaping`]: adapters over any workload (loop replay, time scaling, read/write filters,
//!   arrival processes), and the trace pipeline;
//! - [`fold`]: address folding onto the drive (modulo, bounds check, `remap_first`);
//! - `synthetic`: generators (uniform, Zipf, hot/cold, sequential, weighted mixes);
//! - [`periodic`]: fixed-size write commands at a fixed interval (FT-PASSD's micro-benchmarks);
//! - [`tracestats`]: one-pass trace statistics ([`tracestats::trace_stats`]).
//!
//! User documentation: `docs/workloads.md`.

pub mod fold;
pub mod periodic;
pub mod shaping;
mod synthetic;
pub mod trace;
pub mod tracestats;
pub mod zipf;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub mod request;
pub use periodic::{PeriodicConfig, PeriodicWrites};
pub use request::{HostRequest, IoKind};
pub use synthetic::{Mix, Permutation, Synthetic};
pub use trace::{TraceCounters, TraceFormat, TraceReader};
pub use tracestats::{trace_stats, workload_stats, TraceStats};

/// A stream of host requests.
pub trait Workload: Send {
    /// The next request, `Ok(None)` at the end of a finite workload.
    fn next_request(&mut self) -> Result<Option<HostRequest>>;

    /// Counters of a trace-driven workload (lines read, ignored and skipped lines, ...):
    /// `None` for synthetic generators. Adapters forward their inner workload's counters
    /// and add their own.
    fn counters(&self) -> Option<TraceCounters> {
        None
    }

    /// For a workload that replays one fixed sequence of requests over and over (a looped
    /// trace replayed from memory): the position, in that sequence, of the request it returned
    /// last. Two requests at the same position are the same request apart from their arrival
    /// time, so an adapter may remember what it made of one (`shaping::RemapFirst` does).
    /// `None` (the default) promises nothing.
    fn replay_index(&self) -> Option<usize> {
        None
    }

    /// Append up to `max` requests to `out`, as `max` calls of [`Workload::next_request`]
    /// would return them; `true` when the workload ended before `max`. An error comes after
    /// the requests appended before it. The run loop draws its requests this way: one call
    /// (through the workload's box) a batch instead of one a request, and the adapters of a
    /// concrete pipeline inlined into a single loop.
    fn next_batch(&mut self, out: &mut VecDeque<HostRequest>, max: usize) -> Result<bool> {
        for _ in 0..max {
            match self.next_request()? {
                Some(r) => out.push_back(r),
                None => return Ok(true),
            }
        }
        Ok(false)
    }
}

impl<W: Workload + ?Sized> Workload for Box<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        (**self).next_request()
    }
    fn counters(&self) -> Option<TraceCounters> {
        (**self).counters()
    }
    fn replay_index(&self) -> Option<usize> {
        (**self).replay_index()
    }
    fn next_batch(&mut self, out: &mut VecDeque<HostRequest>, max: usize) -> Result<bool> {
        (**self).next_batch(out, max)
    }
}

/// What a workload builder is told about the drive and the run.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadContext {
    /// Logical capacity exported to the host, in bytes.
    pub logical_bytes: u64,
    /// Mapping unit in bytes: the natural alignment of generated requests.
    pub unit_bytes: u64,
    /// Seed of the workload's own random stream.
    pub seed: u64,
}

/// The latest arrival time a request may have: 2^62 ns (146 years). Times stay far from
/// `u64::MAX`, so the completion arithmetic after them cannot overflow; a workload that
/// would go past it is an error naming the key that sent it there, never a saturated clock.
pub const MAX_ARRIVAL_NS: u64 = 1 << 62;

choice! {
    /// `workload.kind`: the generator or source of requests.
    WorkloadKind {
        Uniform = "uniform",
        Zipf = "zipf",
        HotCold = "hotcold",
        Sequential = "sequential",
        Mix = "mix",
        Trace = "trace",
        Periodic = "periodic",
    }
}

choice! {
    /// `workload.arrival.process`: when requests arrive.
    ArrivalProcess { Closed = "closed", Poisson = "poisson", Bursty = "bursty" }
}

choice! {
    /// `workload.trace.time_unit`: the unit of `disksim`/`mqsim`/`cloudphysics` arrival times.
    TimeUnit { Auto = "auto", S = "s", Ms = "ms", Us = "us", Ns = "ns" }
}

choice! {
    /// `workload.trace.blkparse_event`: the blkparse events that carry requests.
    BlkparseEvent { Issued = "D", Completed = "C" }
}

choice! {
    /// `workload.trace.discards`: what a trace's discard (TRIM) records do.
    Discards { Ignore = "ignore", Trim = "trim" }
}

choice! {
    /// `workload.trace.timestamps`: replay at the trace's times, or as fast as the queue allows.
    Timestamps { Honour = "honour", Ignore = "ignore" }
}

choice! {
    /// `workload.trace.non_monotonic`: what a time earlier than the previous one does.
    NonMonotonic { Clamp = "clamp", Error = "error" }
}

choice! {
    /// `workload.trace.filter`: which requests of a trace are kept.
    TraceFilter { All = "all", Reads = "reads", Writes = "writes" }
}

choice! {
    /// `workload.trace.fold`: how trace addresses are folded onto the drive.
    Fold { Modulo = "modulo", RemapFirst = "remap_first", None = "none" }
}

/// `[workload]` section of the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    /// Generator or source: `uniform` (uniform random addresses), `zipf`, `hotcold`,
    /// `sequential`, `mix` (weighted mix of the `mix` parts), `trace` (replay
    /// `trace.path`) or `periodic` (write commands of `request_size` bytes every
    /// `periodic.interval_ns`, at consecutive addresses).
    pub kind: WorkloadKind,
    /// Fraction of requests that are reads, 0..=1 (synthetic kinds).
    pub read_ratio: f64,
    /// Fraction of requests that are trims (deallocate the request's units), 0..=1 with
    /// `read_ratio + trim_ratio <= 1` (synthetic kinds). Left out of a resolved
    /// configuration at its default, 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub trim_ratio: f64,
    /// Fraction of the logical space the requests touch, (0, 1] (synthetic kinds).
    pub working_set: f64,
    /// Request size in bytes; 0 means one mapping unit. Ignored when `sizes` is set.
    pub request_size: u64,
    /// Request sizes in bytes to draw from (synthetic kinds); empty means `request_size`.
    pub sizes: Vec<u64>,
    /// Weights of `sizes` (same length, positive); empty means equal weights.
    pub size_weights: Vec<f64>,
    /// Weight of this part inside a `mix` (ignored elsewhere), > 0.
    pub weight: f64,
    /// Zipf generator parameters.
    pub zipf: ZipfConfig,
    /// Hot/cold generator parameters.
    pub hotcold: HotColdConfig,
    /// Arrival process of synthetic workloads (or re-timing of a trace).
    pub arrival: ArrivalConfig,
    /// Parts of a `mix`, each a synthetic workload with its own `weight`.
    pub mix: Vec<WorkloadConfig>,
    /// Trace replay parameters (`kind = "trace"`).
    pub trace: TraceConfig,
    /// Periodic commands' timing (`kind = "periodic"`); left out of a resolved configuration
    /// while at its defaults.
    #[serde(skip_serializing_if = "PeriodicConfig::is_default")]
    pub periodic: PeriodicConfig,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            kind: WorkloadKind::Uniform,
            read_ratio: 0.0,
            trim_ratio: 0.0,
            working_set: 1.0,
            request_size: 0,
            sizes: Vec::new(),
            size_weights: Vec::new(),
            weight: 1.0,
            zipf: ZipfConfig::default(),
            hotcold: HotColdConfig::default(),
            arrival: ArrivalConfig::default(),
            mix: Vec::new(),
            trace: TraceConfig::default(),
            periodic: PeriodicConfig::default(),
        }
    }
}

/// `[workload.zipf]`: Zipf-distributed accesses over request-size slots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZipfConfig {
    /// Exponent: rank k is accessed with probability proportional to 1/k^alpha; any alpha > 0.
    pub alpha: f64,
    /// Spread ranks over the address space with a fixed seeded permutation, so that hot
    /// slots are not all adjacent (true), or put rank 1 at slot 0, rank 2 at slot 1... (false).
    pub scramble: bool,
}

impl Default for ZipfConfig {
    fn default() -> Self {
        ZipfConfig { alpha: 1.0, scramble: true }
    }
}

/// `[workload.hotcold]`: a fraction of requests goes to a fraction of the space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HotColdConfig {
    /// Fraction of requests that go to the hot region, [0, 1].
    pub hot_requests: f64,
    /// Fraction of the working set that is hot (its first slots), (0, 1].
    pub hot_space: f64,
}

impl Default for HotColdConfig {
    fn default() -> Self {
        HotColdConfig { hot_requests: 0.8, hot_space: 0.2 }
    }
}

/// `[workload.arrival]`: when requests arrive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArrivalConfig {
    /// `closed` (arrival_ns = 0: the host keeps `host.queue_depth` requests outstanding),
    /// `poisson` (exponential gaps at `rate_iops`) or `bursty` (`burst_requests` requests
    /// `burst_spacing_ns` apart, then `burst_gap_ns` idle).
    pub process: ArrivalProcess,
    /// Mean arrival rate of `poisson`, requests per second, > 0.
    pub rate_iops: f64,
    /// Requests per burst of `bursty`, >= 1.
    pub burst_requests: u64,
    /// Idle time between the last request of a burst and the first of the next, ns.
    pub burst_gap_ns: u64,
    /// Time between requests inside a burst, ns (0: the whole burst arrives at once).
    pub burst_spacing_ns: u64,
}

impl Default for ArrivalConfig {
    fn default() -> Self {
        ArrivalConfig {
            process: ArrivalProcess::Closed,
            rate_iops: 1000.0,
            burst_requests: 64,
            burst_gap_ns: 10_000_000,
            burst_spacing_ns: 0,
        }
    }
}

/// `[workload.trace]`: trace file, format and shaping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// Trace file (plain or gzip).
    pub path: String,
    /// `auto` (detected from content) or one of the [`TraceFormat`] names: `msr`,
    /// `disksim`, `mqsim`, `spc`, `blkparse`, `cloudphysics`, `flashlife`.
    pub format: String,
    /// Time unit of `disksim`/`mqsim`/`cloudphysics` arrival times: `auto` (ms for `disksim`,
    /// ns for `mqsim`, s for `cloudphysics`), `s`, `ms`, `us` or `ns`. Other formats have
    /// fixed units.
    pub time_unit: TimeUnit,
    /// blkparse events that carry requests: `D` (issued to the device) or `C` (completed).
    pub blkparse_event: BlkparseEvent,
    /// Discard records (blkparse events whose rwbs holds `D`, flashlife CSV op `T`): `ignore`
    /// them (counted as ignored lines) or replay them as `trim` requests. Left out of a
    /// resolved configuration at its default, `ignore`.
    #[serde(skip_serializing_if = "Discards::is_ignore")]
    pub discards: Discards,
    /// `honour` arrival times (open-loop replay) or `ignore` them (closed loop).
    pub timestamps: Timestamps,
    /// A time earlier than the previous request's: `clamp` it to the previous time (and
    /// count it) or `error`.
    pub non_monotonic: NonMonotonic,
    /// Skip malformed lines (counted, first one reported) instead of failing.
    pub skip_bad_lines: bool,
    /// Passes over the trace: 1 = once, N, or 0 = endless (restart from the top with a
    /// time offset), so lifetime runs never run out of requests.
    pub loops: u64,
    /// Keep only `all`, `reads` or `writes`.
    pub filter: TraceFilter,
    /// Multiply arrival times by this factor (> 0; 0.5 replays twice as fast).
    pub time_scale: f64,
    /// Fold trace addresses onto the drive: `modulo` (offset mod capacity), `remap_first`
    /// (the first distinct mapping units, in order of appearance, onto a compact range;
    /// requests touching others are dropped) or `none` (an address past the end is an error).
    pub fold: Fold,
    /// Bytes of distinct addresses `remap_first` keeps; 0 = the drive's logical capacity.
    pub remap_limit_bytes: u64,
    /// Keep only the requests of this stream (the trace's stream, disk, device or ASU
    /// column): one trace split into flows by stream. Unset (the default, then left out of a
    /// resolved configuration): every stream. A stream the trace never names is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<u16>,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            path: String::new(),
            format: "auto".into(),
            time_unit: TimeUnit::Auto,
            blkparse_event: BlkparseEvent::Issued,
            discards: Discards::Ignore,
            timestamps: Timestamps::Honour,
            non_monotonic: NonMonotonic::Clamp,
            skip_bad_lines: false,
            loops: 1,
            filter: TraceFilter::All,
            time_scale: 1.0,
            fold: Fold::Modulo,
            remap_limit_bytes: 0,
            stream: None,
        }
    }
}

impl TraceConfig {
    /// Check ranges; `prefix` is the dotted path of this section (e.g. `workload.trace`).
    pub fn validate(&self, prefix: &str) -> Result<()> {
        let k = |name: &str| format!("{prefix}.{name}");
        if self.format != "auto" && TraceFormat::from_name(&self.format).is_none() {
            return Err(Error::config(k("format"), &self.format, format!("auto or {}", TraceFormat::NAMES)));
        }
        if self.time_unit != TimeUnit::Auto
            && !matches!(self.format.as_str(), "auto" | "disksim" | "mqsim" | "cloudphysics")
        {
            return Err(Error::config(
                k("time_unit"),
                self.time_unit,
                format!("auto: the {} format has a fixed time unit", self.format),
            ));
        }
        if !(self.time_scale.is_finite() && self.time_scale > 0.0) {
            return Err(Error::config(k("time_scale"), self.time_scale, "a finite factor > 0"));
        }
        Ok(())
    }
}

impl WorkloadConfig {
    /// Check ranges; errors name the dotted key under `workload.`.
    pub fn validate(&self) -> Result<()> {
        self.validate_at("workload", true)
    }

    /// Can this workload issue trims: a synthetic share (its own or a mix part's), or a
    /// trace whose discards are replayed?
    pub fn trims(&self) -> bool {
        match self.kind {
            WorkloadKind::Trace => self.trace.discards == Discards::Trim,
            WorkloadKind::Mix => self.mix.iter().any(|p| p.trim_ratio > 0.0),
            WorkloadKind::Periodic => false,
            _ => self.trim_ratio > 0.0,
        }
    }

    /// True when requests' `arrival_ns` must be honoured (open loop): traces replayed with
    /// `trace.timestamps = "honour"`, `periodic` commands, and the `poisson` and `bursty`
    /// arrival processes.
    /// False for closed loop, where the host keeps `host.queue_depth` requests outstanding.
    pub fn open_loop(&self) -> bool {
        self.arrival.process != ArrivalProcess::Closed
            || self.kind == WorkloadKind::Periodic
            || (self.kind == WorkloadKind::Trace && self.trace.timestamps == Timestamps::Honour)
    }

    /// Check ranges; errors name the dotted key under `prefix` (`top`: not a mix part).
    pub(crate) fn validate_at(&self, prefix: &str, top: bool) -> Result<()> {
        let k = |name: &str| format!("{prefix}.{name}");
        if !top && matches!(self.kind, WorkloadKind::Mix | WorkloadKind::Trace | WorkloadKind::Periodic) {
            return Err(Error::config(
                k("kind"),
                self.kind,
                "one of: uniform, zipf, hotcold, sequential (inside a mix)",
            ));
        }
        if !(0.0..=1.0).contains(&self.read_ratio) {
            return Err(Error::config(k("read_ratio"), self.read_ratio, "a fraction between 0 and 1"));
        }
        if !(0.0..=1.0).contains(&self.trim_ratio) {
            return Err(Error::config(k("trim_ratio"), self.trim_ratio, "a fraction between 0 and 1"));
        }
        if self.read_ratio + self.trim_ratio > 1.0 {
            return Err(Error::config(
                k("trim_ratio"),
                self.trim_ratio,
                format!(
                    "at most 1 - read_ratio = {} (reads and trims are shares of one stream)",
                    1.0 - self.read_ratio
                ),
            ));
        }
        if !(self.working_set > 0.0 && self.working_set <= 1.0) {
            return Err(Error::config(k("working_set"), self.working_set, "a fraction in (0, 1]"));
        }
        if !(self.weight.is_finite() && self.weight > 0.0) {
            return Err(Error::config(k("weight"), self.weight, "a finite weight > 0"));
        }
        if let Some(i) = self.sizes.iter().position(|&s| s == 0 || s > trace::MAX_REQUEST_BYTES) {
            return Err(Error::config(format!("{prefix}.sizes[{i}]"), self.sizes[i], "a size of 1 byte to 1 TiB"));
        }
        if !self.size_weights.is_empty() {
            if self.size_weights.len() != self.sizes.len() {
                return Err(Error::config(
                    k("size_weights"),
                    format!("{:?}", self.size_weights),
                    format!("{} weights, one per entry of sizes", self.sizes.len()),
                ));
            }
            if let Some(i) = self.size_weights.iter().position(|w| !(w.is_finite() && *w > 0.0)) {
                return Err(Error::config(
                    format!("{prefix}.size_weights[{i}]"),
                    self.size_weights[i],
                    "a finite weight > 0",
                ));
            }
        }
        if !(self.zipf.alpha.is_finite() && self.zipf.alpha > 0.0) {
            return Err(Error::config(k("zipf.alpha"), self.zipf.alpha, "a finite exponent > 0"));
        }
        if !(0.0..=1.0).contains(&self.hotcold.hot_requests) {
            return Err(Error::config(k("hotcold.hot_requests"), self.hotcold.hot_requests, "a fraction in [0, 1]"));
        }
        if !(self.hotcold.hot_space > 0.0 && self.hotcold.hot_space <= 1.0) {
            return Err(Error::config(k("hotcold.hot_space"), self.hotcold.hot_space, "a fraction in (0, 1]"));
        }
        if top {
            let a = &self.arrival;
            if !(a.rate_iops.is_finite() && a.rate_iops > 0.0) {
                return Err(Error::config(k("arrival.rate_iops"), a.rate_iops, "a finite rate > 0 requests/s"));
            }
            if a.burst_requests == 0 {
                return Err(Error::config(k("arrival.burst_requests"), a.burst_requests, "at least 1"));
            }
            self.trace.validate(&k("trace"))?;
            if self.kind == WorkloadKind::Trace && self.trace.path.is_empty() {
                return Err(Error::config(k("trace.path"), "\"\"", "the path of a trace file"));
            }
            if self.trim_ratio > 0.0 {
                let why = match self.kind {
                    WorkloadKind::Trace => Some("0 with kind = \"trace\" (a trace's trims are its discard records: workload.trace.discards = \"trim\")"),
                    WorkloadKind::Mix => Some("0 with kind = \"mix\" (each [[workload.mix]] part has its own trim_ratio)"),
                    WorkloadKind::Periodic => Some("0 with kind = \"periodic\" (write commands only)"),
                    _ => None,
                };
                if let Some(why) = why {
                    return Err(Error::config(k("trim_ratio"), self.trim_ratio, why));
                }
            }
            if self.kind == WorkloadKind::Periodic {
                if self.periodic.interval_ns == 0 {
                    return Err(Error::config(k("periodic.interval_ns"), 0, "an interval > 0 ns"));
                }
                if self.arrival.process != ArrivalProcess::Closed {
                    return Err(Error::config(
                        k("arrival.process"),
                        self.arrival.process,
                        "closed with kind = \"periodic\" (its commands arrive every periodic.interval_ns)",
                    ));
                }
                if self.read_ratio != 0.0 {
                    return Err(Error::config(
                        k("read_ratio"),
                        self.read_ratio,
                        "0 with kind = \"periodic\" (write commands only)",
                    ));
                }
                if !self.sizes.is_empty() {
                    return Err(Error::config(
                        k("sizes"),
                        format!("{:?}", self.sizes),
                        "empty with kind = \"periodic\" (one size: request_size)",
                    ));
                }
            }
            if self.kind == WorkloadKind::Mix {
                if self.mix.is_empty() {
                    return Err(Error::config(k("mix"), "[]", "at least one part ([[workload.mix]] tables)"));
                }
                for (i, part) in self.mix.iter().enumerate() {
                    part.validate_at(&format!("{prefix}.mix[{i}]"), false)?;
                }
            }
        }
        Ok(())
    }
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl Discards {
    fn is_ignore(&self) -> bool {
        *self == Discards::Ignore
    }
}

/// Build the workload a configuration describes.
pub fn build(cfg: &WorkloadConfig, ctx: &WorkloadContext) -> Result<Box<dyn Workload>> {
    cfg.validate()?;
    if ctx.logical_bytes == 0 || ctx.unit_bytes == 0 {
        return Err(Error::Run(format!(
            "workload: the drive exports {} logical bytes in units of {} bytes; both must be > 0",
            ctx.logical_bytes, ctx.unit_bytes
        )));
    }
    let base: Box<dyn Workload> = match cfg.kind {
        WorkloadKind::Trace => shaping::build_trace(&cfg.trace, ctx)?,
        WorkloadKind::Mix => Box::new(synthetic::Mix::new(cfg, ctx)?),
        WorkloadKind::Periodic => {
            let size = if cfg.request_size == 0 { ctx.unit_bytes } else { cfg.request_size };
            Box::new(PeriodicWrites::new(size, cfg.periodic.interval_ns, ctx.logical_bytes)?)
        }
        _ => Box::new(Synthetic::new(cfg, ctx, ctx.seed)?),
    };
    if cfg.arrival.process == ArrivalProcess::Closed {
        Ok(base)
    } else {
        Ok(Box::new(shaping::Arrivals::new(base, &cfg.arrival, shaping::derive_seed(ctx.seed, 0xA771_7A15))))
    }
}
