//! The simulator: builds the layers from a configuration and drives requests through them.
//!
//! Requests are issued closed loop (at most `host.queue_depth` outstanding, the next one
//! issued when the earliest completes) or open loop (at their arrival times). Gaps in an
//! open-loop stream where nothing is outstanding are idle windows given to the FTL for
//! background work.
//!
//! The work is split by job: `build` makes the drive's parts from the configuration, `run`
//! is the event loop, `report` assembles what a run produced; this module holds the
//! simulator's state, its construction and its checkpoints.

pub mod budget;
mod build;
mod flight;
mod flows;
mod progress;
mod report;
pub(crate) mod request_log;
mod run;
mod run_flows;
mod run_queued;
mod sampling;
pub mod summary;
mod unit_size;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::checkpoint;
use crate::config::{Config, Interval, Precondition, StopCondition};
use crate::error::{Error, Result};
use crate::ftl::Ftl;
use crate::host::Drive;
pub use crate::seeds::stream_seed;
use crate::stats::latency::LatencyHistogram;
use crate::stats::reliability::LongReads;
use crate::stats::timeseries::TimeSeries;
use crate::workload::{self, Workload};
use summary::HostSummary;

pub use build::{build_drive, build_flash, build_ftl, build_open_channel};
pub use flows::{FlowLatency, FlowSummary};
pub use progress::{Progress, ProgressSink};
pub use report::{LatencyCdfs, RunOutput};

use build::{resolve_failure_point, workload_context};
use flight::InFlight;
use flows::{FlowState, Flows};
pub use request_log::BehindBackground;
use request_log::RequestLog;
use sampling::Sampler;

/// How a caller steers a run: a flag that stops it (cleanly, with a checkpoint where it has a
/// folder) and a sink that hears how far it is.
#[derive(Default)]
pub struct Control {
    pub cancel: Option<Arc<AtomicBool>>,
    pub progress: Option<ProgressSink>,
}

/// A configured drive and workload, ready to run.
pub struct Simulator {
    cfg: Config,
    /// The drive: the block FTL, or an open-channel host FTL and device (`host.interface`).
    ftl: Box<dyn Drive>,
    workload: Box<dyn Workload>,
    /// The flows' workloads (`[[flows]]`; `None`: the single `workload`).
    flows: Option<Flows>,
    cancel: Option<Arc<AtomicBool>>,
    /// Stop as if interrupted once this many requests are done (tests, tools).
    interrupt_after: Option<u64>,
    /// Stop as a killed process would, without a word, once this many requests are done (tests).
    crash_after: Option<u64>,
    /// Where checkpoints go; `None`: no checkpoints.
    checkpoint_path: Option<PathBuf>,
    /// The run loop's state so far: fresh, or read from a checkpoint.
    state: RunState,
    /// Open-loop replay forced on or off, whatever the workload configuration says.
    open_loop: Option<bool>,
    /// Where progress reports go (none: the run is silent).
    progress: Option<ProgressSink>,
    /// Remove the checkpoint when the run ends (a run folder keeps it until the outputs
    /// are safely written, and removes it itself).
    remove_checkpoint_at_end: bool,
    /// Where the per-request log goes (`stats.request_log`; a run folder sets it).
    request_log_path: Option<PathBuf>,
}

/// The run loop's own state (the drive holds the rest): what a checkpoint needs to go on.
#[derive(serde::Serialize, serde::Deserialize)]
struct RunState {
    /// Completion times of the requests in flight (a scheduler that knows them at submission).
    outstanding: BinaryHeap<Reverse<u64>>,
    /// The requests in flight under an event-driven scheduler (the queued one), whose
    /// completions the scheduler reports later.
    flight: InFlight,
    /// Response time (arrival -> completion) of reads and writes: the headline latency.
    lat_read: LatencyHistogram,
    lat_write: LatencyHistogram,
    /// Device time (issue -> completion) of reads and writes.
    dev_read: LatencyHistogram,
    dev_write: LatencyHistogram,
    /// Host queue wait (arrival -> issue): open-loop requests that found every queue slot taken.
    wait: LatencyHistogram,
    /// The first and last arrival of an open-loop run (for the offered rate).
    first_arrival: Option<u64>,
    last_arrival: u64,
    /// Units GC owed when the measured run began (preconditioning leaves pools just below
    /// their high watermarks): a run that writes less mostly repays this.
    gc_debt_units: u64,
    /// Logical units a trace replay touched, one bit each (trace workloads only: the share of
    /// the drive a trace uses says whether the drive is sized to it).
    touched: Option<Vec<u64>>,
    ts: TimeSeries,
    host: HostSummary,
    now: u64,
    busy_until: u64,
    end: u64,
    /// Requests served: also how far the workload has been read.
    requests: u64,
    /// Next time-series row (simulated ns or host bytes, as `stats.interval` says).
    next_mark: u64,
    /// Next periodic checkpoint, in the same way (`run.checkpoint_every`).
    next_checkpoint: u64,
    /// Trim requests issued and the bytes they covered (`summary.trim`).
    #[serde(default)]
    trim_requests: u64,
    #[serde(default)]
    trim_bytes: u64,
    /// Wall time of earlier segments of a resumed run.
    wall_seconds_before: f64,
    /// What went wrong without stopping the run (for `summary.run.warnings`).
    warnings: Vec<String>,
    /// The per-request log, when `stats.request_log` is on (opened by the run, not saved).
    #[serde(skip)]
    log: Option<RequestLog>,
    /// Bytes of the log flushed at the last checkpoint (a resumed run cuts it back to this).
    log_bytes: u64,
    /// Sampled timing's cycle (`[sampling]`; `None`: every request is timed).
    sampler: Option<Sampler>,
    /// Each flow's requests in flight and account (`[[flows]]`; empty without).
    flows: Vec<FlowState>,
}

impl RunState {
    fn new(cfg: &Config, drive: &dyn Drive, precondition_bytes: u64) -> Result<RunState> {
        let logical_bytes = drive.logical_units() as u64 * drive.unit_bytes();
        let first_mark = |i: Interval| match i {
            Interval::TimeNs(t) => t,
            Interval::WriteBytes(b) => b,
        };
        // With flows, the requests in flight are every flow's.
        let in_flight = if cfg.flows.is_empty() {
            cfg.host.queue_depth as usize
        } else {
            cfg.flows.iter().map(|f| f.depth(cfg.host.queue_depth) as usize).sum()
        };
        let traced = |w: &crate::workload::WorkloadConfig| w.kind == crate::workload::WorkloadKind::Trace;
        let trace =
            if cfg.flows.is_empty() { traced(&cfg.workload) } else { cfg.flows.iter().any(|f| traced(&f.workload)) };
        Ok(RunState {
            outstanding: BinaryHeap::with_capacity(cfg.host.queue_depth as usize + 1),
            flight: InFlight::new(in_flight),
            lat_read: LatencyHistogram::new(),
            lat_write: LatencyHistogram::new(),
            dev_read: LatencyHistogram::new(),
            dev_write: LatencyHistogram::new(),
            wait: LatencyHistogram::new(),
            first_arrival: None,
            last_arrival: 0,
            gc_debt_units: drive.gc_debt_units(),
            touched: trace.then(|| vec![0; (drive.logical_units() as usize).div_ceil(64)]),
            ts: TimeSeries {
                long_reads: LongReads::new(cfg.reliability.long_read_us, &cfg.reliability.read_thresholds_us),
                flow_names: cfg.flows.iter().enumerate().map(|(i, f)| f.name_of(i)).collect(),
                modes: cfg.flash.end_of_life == crate::config::EndOfLife::DropBit,
                ..Default::default()
            },
            host: HostSummary { precondition_bytes, ..Default::default() },
            now: 0,
            busy_until: 0,
            end: 0,
            requests: 0,
            next_mark: first_mark(cfg.stats.interval(logical_bytes)?),
            next_checkpoint: cfg.run.checkpoint_interval(logical_bytes)?.map_or(u64::MAX, first_mark),
            wall_seconds_before: 0.0,
            trim_requests: 0,
            trim_bytes: 0,
            warnings: Vec::new(),
            log: None,
            log_bytes: 0,
            sampler: Sampler::new(cfg, logical_bytes)?,
            flows: cfg.flows.iter().map(|_| FlowState::default()).collect(),
        }
        .with_flow_depths(cfg))
    }

    /// Each flow's queue depth, from the configuration (not kept in checkpoints).
    fn with_flow_depths(mut self, cfg: &Config) -> RunState {
        for (s, f) in self.flows.iter_mut().zip(&cfg.flows) {
            s.qd = f.depth(cfg.host.queue_depth);
        }
        self
    }
}

/// What a checkpoint file holds. Serialised through [`CheckpointRef`], which must list the
/// same fields in the same order.
#[derive(serde::Deserialize)]
struct CheckpointData {
    config_toml: String,
    state: RunState,
    drive: Box<dyn Drive>,
}

#[derive(serde::Serialize)]
struct CheckpointRef<'a> {
    config_toml: &'a str,
    state: &'a RunState,
    drive: &'a dyn Drive,
}

/// Why a configured workload runs closed loop although `host.arrivals = "timestamps"` asks for
/// arrival times: a synthetic generator without an arrival process has none (its requests
/// would all arrive at time 0). `None` when the workload has arrival times, or is a trace (whose
/// `workload.trace.timestamps` decides). A workload built in code (`with_workload`) carries
/// its own, and `host.arrivals` applies to it as it is.
fn untimed_workload(cfg: &Config) -> Option<String> {
    let untimed = cfg.host.arrivals == crate::config::Arrivals::Timestamps
        && cfg.workload.kind != workload::WorkloadKind::Trace
        && !cfg.workload.open_loop();
    untimed.then(|| {
        "host.arrivals = \"timestamps\", but the workload has no arrival times (a synthetic generator with \
         workload.arrival.process = \"closed\"): it ran closed loop at host.queue_depth; set workload.arrival.process \
         (poisson, bursty) for an open-loop run"
            .to_string()
    })
}

impl Simulator {
    /// Build the drive and the configured workload.
    pub fn new(cfg: Config) -> Result<Simulator> {
        Simulator::new_cancellable(cfg, None)
    }

    /// Build the drive and the configured workload; `cancel` becoming true stops the
    /// preconditioning (an [`Error::Interrupted`]) and, later, the run.
    pub fn new_cancellable(cfg: Config, cancel: Option<Arc<AtomicBool>>) -> Result<Simulator> {
        let ctx = workload_context(&cfg)?;
        let (wl, flows): (Box<dyn Workload>, _) = if cfg.flows.is_empty() {
            (workload::build(&cfg.workload, &ctx)?, None)
        } else {
            cfg.validate()?;
            (Box::new(flows::NoWorkload), Some(Flows::build(&cfg, ctx.logical_bytes, ctx.unit_bytes, &[])?))
        };
        let mut sim = Simulator::build(cfg, wl, cancel)?;
        if let Some(f) = flows {
            sim.start_flows(f);
        }
        if let Some(why) = untimed_workload(&sim.cfg).filter(|_| sim.flows.is_none()) {
            sim.open_loop = Some(false);
            sim.state.warnings.push(why);
        }
        Ok(sim)
    }

    /// Take the flows' workloads, and have the FTL count GC moves by their ranges.
    fn start_flows(&mut self, flows: Flows) {
        let units = self.ftl.logical_units() as u64;
        let ranges = self.cfg.flows.iter().map(|f| f.units(units)).map(|(a, b)| (a as u32, b as u32)).collect();
        if let Some(ftl) = self.ftl.as_ftl_mut() {
            ftl.track_gc_regions(ranges);
        }
        self.flows = Some(flows);
    }

    /// Build the drive with a workload made elsewhere.
    pub fn with_workload(cfg: Config, workload: Box<dyn Workload>) -> Result<Simulator> {
        if !cfg.flows.is_empty() {
            return Err(Error::config(
                "flows",
                format!("{} tables", cfg.flows.len()),
                "none with a workload built in code (each flow builds its own from its [flows.workload])",
            ));
        }
        Simulator::build(cfg, workload, None)
    }

    fn build(mut cfg: Config, workload: Box<dyn Workload>, cancel: Option<Arc<AtomicBool>>) -> Result<Simulator> {
        cfg.validate()?;
        // Before anything large is allocated: a drive too big for the machine is an error,
        // not an aborted process.
        budget::check(&cfg)?;
        resolve_failure_point(&mut cfg.failures, cfg.seed);
        if !cfg.ftl.timing {
            if let StopCondition::TimeNs(_) = cfg.run.stop_condition(1)? {
                return Err(Error::config(
                    "run.until",
                    &cfg.run.until,
                    "a stop condition other than time when ftl.timing is off",
                ));
            }
        }
        let mut ftl = build_drive(&cfg)?;
        let fill = cfg.ftl.precondition != Precondition::Empty;
        let overwrite =
            if cfg.ftl.precondition == Precondition::Steady { cfg.ftl.precondition_drive_writes } else { 0.0 };
        let before = ftl.counters().host_unit_writes;
        let stop = || cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
        if !ftl.precondition(fill, overwrite, stream_seed(cfg.seed, "precondition"), &stop) {
            return Err(Error::Interrupted("while preconditioning the drive (nothing to resume yet)".into()));
        }
        let precondition_bytes = (ftl.counters().host_unit_writes - before) * ftl.unit_bytes();
        ftl.reset_counters();
        ftl.flash_mut().start_run();
        if let Some(v) = ftl.integrity_violation() {
            return Err(Error::Integrity(v.to_string()));
        }
        let state = RunState::new(&cfg, ftl.as_ref(), precondition_bytes)?;
        Ok(Simulator {
            cfg,
            ftl,
            workload,
            flows: None,
            cancel,
            interrupt_after: None,
            crash_after: None,
            checkpoint_path: None,
            state,
            open_loop: None,
            progress: None,
            remove_checkpoint_at_end: true,
            request_log_path: None,
        })
    }

    /// Go on from the checkpoint at `path`: the drive and the run so far come from the file,
    /// the workload is rebuilt from the checkpoint's configuration and fast-forwarded past the
    /// requests already served. Later checkpoints go to the same file.
    pub fn resume(path: &Path) -> Result<Simulator> {
        let data: CheckpointData = checkpoint::load(path)?;
        let cfg =
            crate::config::ConfigBuilder::new().toml_str(&data.config_toml, &path.display().to_string())?.build()?;
        let ctx = workload_context(&cfg)?;
        let flows = if cfg.flows.is_empty() {
            None
        } else {
            let issued: Vec<u64> = data.state.flows.iter().map(|f| f.requests).collect();
            Some(Flows::build(&cfg, ctx.logical_bytes, ctx.unit_bytes, &issued)?)
        };
        let mut workload = if flows.is_some() {
            Box::new(flows::NoWorkload) as Box<dyn Workload>
        } else {
            workload::build(&cfg.workload, &ctx)?
        };
        for i in (0..data.state.requests).filter(|_| flows.is_none()) {
            if workload.next_request()?.is_none() {
                return Err(Error::Checkpoint {
                    path: path.display().to_string(),
                    message: format!(
                        "the workload ends after {i} requests but the checkpoint had served {} (was the trace file changed?)",
                        data.state.requests
                    ),
                });
            }
        }
        let open_loop = untimed_workload(&cfg).map(|_| false);
        let state = data.state.with_flow_depths(&cfg);
        Ok(Simulator {
            cfg,
            ftl: data.drive,
            workload,
            flows,
            cancel: None,
            interrupt_after: None,
            crash_after: None,
            checkpoint_path: Some(path.to_path_buf()),
            open_loop,
            state,
            progress: None,
            remove_checkpoint_at_end: true,
            request_log_path: None,
        })
    }

    /// Write checkpoints to `path`: every `run.checkpoint_every` and when the run is
    /// interrupted.
    pub fn set_checkpoint_path(&mut self, path: PathBuf) {
        self.checkpoint_path = Some(path);
    }

    /// Stream the per-request log (`stats.request_log`) to `path`: a new file for a fresh
    /// run, the checkpoint's log cut back to its recorded length for a resumed one.
    pub fn set_request_log(&mut self, path: PathBuf) {
        self.request_log_path = Some(path);
    }

    /// Open the request log the configuration asks for (at the start of `run`).
    fn open_request_log(&mut self) -> Result<()> {
        if !self.cfg.stats.request_log || self.state.log.is_some() {
            return Ok(());
        }
        let Some(path) = &self.request_log_path else {
            return Err(Error::config(
                "stats.request_log",
                true,
                "false without a run folder (the log is streamed to DIR/requests.csv: flashlife run --out DIR, or out_dir= in Python)",
            ));
        };
        self.state.log = Some(if self.state.requests == 0 && self.state.log_bytes == 0 {
            RequestLog::create(path)?
        } else {
            RequestLog::resume(path, self.state.log_bytes)?
        });
        Ok(())
    }

    /// Leave the checkpoint in place when the run ends, for a caller that removes it once the
    /// run's outputs are safely written (a run folder).
    pub fn keep_checkpoint_at_end(&mut self) {
        self.remove_checkpoint_at_end = false;
    }

    /// Stop as if interrupted (checkpoint included) once `requests` requests are done.
    pub fn set_interrupt_after(&mut self, requests: u64) {
        self.interrupt_after = Some(requests);
    }

    /// Stop abruptly once `requests` requests are done, as a killed process would: no
    /// checkpoint, no outputs, an error (tests of crash recovery from periodic checkpoints).
    pub fn set_crash_after(&mut self, requests: u64) {
        self.crash_after = Some(requests);
    }

    /// Write the run's state so far to the checkpoint file, if there is one. `elapsed`: wall
    /// seconds of this segment of the run.
    fn write_checkpoint(&mut self, elapsed: f64) -> Result<()> {
        let Some(path) = self.checkpoint_path.clone() else {
            return Ok(());
        };
        if let Some(log) = self.state.log.as_mut() {
            self.state.log_bytes = log.flush()?;
        }
        let before = self.state.wall_seconds_before;
        self.state.wall_seconds_before = before + elapsed;
        let config_toml = self.cfg.to_toml();
        let saved = checkpoint::save(
            &path,
            &CheckpointRef { config_toml: &config_toml, state: &self.state, drive: self.ftl.as_ref() },
        );
        self.state.wall_seconds_before = before;
        saved
    }

    /// The block FTL (for tests and techniques). Panics with `host.interface = "open_channel"`,
    /// where the FTL is on the host: use [`Simulator::drive`].
    pub fn ftl(&self) -> &Ftl {
        self.ftl.as_ftl().expect("Simulator::ftl: this drive has no block FTL (host.interface = \"open_channel\")")
    }

    /// The block FTL, mutable (test hooks). Panics with `host.interface = "open_channel"`.
    pub fn ftl_mut(&mut self) -> &mut Ftl {
        self.ftl
            .as_ftl_mut()
            .expect("Simulator::ftl_mut: this drive has no block FTL (host.interface = \"open_channel\")")
    }

    /// The drive, whatever its host interface.
    pub fn drive(&self) -> &dyn Drive {
        self.ftl.as_ref()
    }

    /// Honour request arrival times (open loop, idle gaps simulated) or not, overriding the
    /// workload configuration: for workloads built in code that carry their own arrival times.
    pub fn set_open_loop(&mut self, open_loop: bool) {
        self.open_loop = Some(open_loop);
    }

    /// Take the caller's cancel flag and progress sink, where given.
    pub fn set_control(&mut self, control: Control) {
        if let Some(c) = control.cancel {
            self.cancel = Some(c);
        }
        if let Some(p) = control.progress {
            self.progress = Some(p);
        }
    }

    /// Report progress to `sink` every few thousand requests (the caller draws it).
    pub fn set_progress(&mut self, sink: ProgressSink) {
        self.progress = Some(sink);
    }

    /// Stop the run (cleanly, with a summary) when `flag` becomes true.
    pub fn set_cancel_flag(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }
}
