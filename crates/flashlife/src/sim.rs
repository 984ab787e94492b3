//! The simulator: builds the layers from a configuration and drives requests through them.
//!
//! Requests are issued closed loop (at most `host.queue_depth` outstanding, the next one
//! issued when the earliest completes) or open loop (at their arrival times). Gaps in an
//! open-loop stream where nothing is outstanding are idle windows given to the FTL for
//! background work.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::checkpoint;
use crate::config::{Config, Interval, StopCondition};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::flash::failure::{FailureModel, InjectedFailures};
use crate::flash::oxide::OxideWear;
use crate::flash::page_errors::{AnyOf, LognormalPageErrors};
use crate::flash::wear::{FixedPeLimit, WearModel};
use crate::flash::{BitMode, FlashArray, Geometry};
use crate::ftl::read_model;
use crate::ftl::{Ftl, Layout};
use crate::host::open_channel::{self, OpenChannel};
use crate::host::request::{HostRequest, IoKind};
use crate::host::Drive;
use crate::run_dir::{Intent, RunDir};
use crate::stats::latency::LatencyHistogram;
use crate::stats::reliability::{LongReads, ReliabilitySummary};
use crate::stats::summary::*;
use crate::stats::timeseries::{Row, TimeSeries};
use crate::stats::Cause;
use crate::workload::{self, Workload, WorkloadContext};

/// Seed of a named random stream: streams stay independent of each other.
pub fn stream_seed(master: u64, name: &str) -> u64 {
    // FNV-1a over the name, mixed with the master seed (splitmix64 finaliser).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = master ^ h;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The flash array a configuration describes: geometry, wear model, failure model.
pub fn build_flash(cfg: &Config) -> Result<FlashArray> {
    let geo = Geometry::new(&cfg.geometry);
    let wear: Box<dyn WearModel> = match cfg.flash.wear_model.as_str() {
        "oxide" => Box::new(OxideWear::new(&cfg.flash.wear, geo.blocks() as usize, stream_seed(cfg.seed, "wear"))?),
        _ => Box::new(FixedPeLimit::new(BitMode::ALL.map(|m| cfg.flash.mode(m).pe_limit))),
    };
    let f = &cfg.failures;
    let injected = InjectedFailures::new(
        stream_seed(cfg.seed, "failures"),
        f.program_fail_rate,
        f.erase_fail_rate,
        &f.program_fail_at,
    )
    .with_nth_program(f.program_fail_nth);
    let mut models: Vec<Box<dyn FailureModel>> = Vec::new();
    if f.model == "lognormal" {
        let page_bits = cfg.flash.page_size * 8;
        let seed = stream_seed(cfg.seed, "page_errors");
        models.push(Box::new(LognormalPageErrors::new(seed, f.rber, page_bits, f.sigma, f.exposure)));
    }
    if !injected.is_inert() {
        models.push(Box::new(injected));
    }
    // No model at all lets the array skip the failure check on every program.
    let failures: Option<Box<dyn FailureModel>> = match models.len() {
        0 => None,
        1 => models.pop(),
        _ => Some(Box::new(AnyOf(models))),
    };
    Ok(FlashArray::new(geo, &cfg.flash, wear, failures))
}

/// The engine's resource timelines for a configuration's geometry and links.
fn build_engine(cfg: &Config, geo: &Geometry) -> Engine {
    let die_channel = (0..geo.dies()).map(|d| geo.channel_of_die(d)).collect();
    Engine::new(
        cfg.ftl.timing,
        cfg.host.link_mb_per_s,
        cfg.host.command_overhead_us,
        cfg.flash.channel_mb_per_s,
        geo.channels,
        die_channel,
    )
}

/// A pristine block FTL (flash array and engine included) with the techniques the
/// configuration turns on (read model, second writes), not preconditioned: for tests and
/// tools that drive the FTL directly.
pub fn build_ftl(cfg: &Config) -> Result<Ftl> {
    let flash = build_flash(cfg)?;
    let engine = build_engine(cfg, &flash.geo);
    let mut ftl = Ftl::new(cfg, flash, engine)?;
    let reads = read_model::build(cfg, &ftl.flash, ftl.unit_bytes(), stream_seed(cfg.seed, "page_variation"))?;
    ftl.set_read_model(reads);
    if cfg.reusable.enabled {
        let technique = crate::techniques::reusable::ReusableSsd::new(cfg, &ftl, stream_seed(cfg.seed, "wom"))?;
        ftl.set_second_writes(Box::new(technique), cfg.reusable.layout == "sequential");
    }
    Ok(ftl)
}

/// The drive `host.interface` asks for: the block FTL, or an open-channel host FTL over a
/// physically addressed device.
pub fn build_drive(cfg: &Config) -> Result<Box<dyn Drive>> {
    if cfg.host.interface == "open_channel" {
        let flash = build_flash(cfg)?;
        let engine = build_engine(cfg, &flash.geo);
        Ok(Box::new(OpenChannel::new(cfg, flash, engine)?))
    } else {
        Ok(Box::new(build_ftl(cfg)?))
    }
}

/// What the workload builder is told about the drive a configuration describes.
fn workload_context(cfg: &Config) -> Result<WorkloadContext> {
    let layout = if cfg.host.interface == "open_channel" { open_channel::layout(cfg)? } else { Layout::of(cfg)? };
    Ok(WorkloadContext {
        logical_bytes: layout.logical_units as u64 * layout.unit_bytes,
        unit_bytes: layout.unit_bytes,
        seed: stream_seed(cfg.seed, "workload"),
    })
}

/// Draw `program_fail_nth` for `program_fail_nth_random_within` (seeded stream
/// `failure_point`), so that the configuration records the program that fails.
fn resolve_failure_point(f: &mut crate::config::FailureConfig, seed: u64) {
    use rand::{Rng, SeedableRng};
    if f.program_fail_nth == 0 && f.program_fail_nth_random_within > 0 {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(stream_seed(seed, "failure_point"));
        f.program_fail_nth = rng.gen_range(1..=f.program_fail_nth_random_within);
        f.program_fail_nth_random_within = 0;
    }
}

/// Everything a finished run produced.
pub struct RunOutput {
    pub summary: Summary,
    pub timeseries: TimeSeries,
    /// (erase count, blocks with that count), ascending.
    pub erase_histogram: Vec<(u32, u64)>,
    /// Latency CDFs: (latency in us, cumulative fraction), one point per histogram bucket.
    pub latency_cdf: LatencyCdfs,
    pub config: Config,
}

/// The latency distributions of a run as CDF points.
#[derive(Debug, Clone, Default)]
pub struct LatencyCdfs {
    pub read: Vec<(f64, f64)>,
    pub write: Vec<(f64, f64)>,
    pub all: Vec<(f64, f64)>,
}

impl LatencyCdfs {
    /// `op,latency_us,fraction` rows.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("op,latency_us,fraction\n");
        for (op, points) in [("read", &self.read), ("write", &self.write), ("all", &self.all)] {
            for (us, f) in points {
                out += &format!("{op},{us},{f}\n");
            }
        }
        out
    }
}

/// A configured drive and workload, ready to run.
pub struct Simulator {
    cfg: Config,
    /// The drive: the block FTL, or an open-channel host FTL and device (`host.interface`).
    ftl: Box<dyn Drive>,
    workload: Box<dyn Workload>,
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
    /// Remove the checkpoint when the run ends (a run folder keeps it until the outputs
    /// are safely written, and removes it itself).
    remove_checkpoint_at_end: bool,
}

/// The run loop's own state (the drive holds the rest): what a checkpoint needs to go on.
#[derive(serde::Serialize, serde::Deserialize)]
struct RunState {
    /// Completion times of the requests in flight.
    outstanding: BinaryHeap<Reverse<u64>>,
    lat_read: LatencyHistogram,
    lat_write: LatencyHistogram,
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
    /// Wall time of earlier segments of a resumed run.
    wall_seconds_before: f64,
    /// What went wrong without stopping the run (for `summary.run.warnings`).
    warnings: Vec<String>,
}

impl RunState {
    fn new(cfg: &Config, drive: &dyn Drive, precondition_bytes: u64) -> Result<RunState> {
        let logical_bytes = drive.logical_units() as u64 * drive.unit_bytes();
        let first_mark = |i: Interval| match i {
            Interval::TimeNs(t) => t,
            Interval::WriteBytes(b) => b,
        };
        Ok(RunState {
            outstanding: BinaryHeap::with_capacity(cfg.host.queue_depth as usize + 1),
            lat_read: LatencyHistogram::new(),
            lat_write: LatencyHistogram::new(),
            ts: TimeSeries { long_reads: LongReads::new(cfg.reliability.long_read_us), ..Default::default() },
            host: HostSummary { precondition_bytes, ..Default::default() },
            now: 0,
            busy_until: 0,
            end: 0,
            requests: 0,
            next_mark: first_mark(cfg.stats.interval(logical_bytes)?),
            next_checkpoint: cfg.run.checkpoint_interval(logical_bytes)?.map_or(u64::MAX, first_mark),
            wall_seconds_before: 0.0,
            warnings: Vec::new(),
        })
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

impl Simulator {
    /// Build the drive and the configured workload.
    pub fn new(cfg: Config) -> Result<Simulator> {
        let wl = workload::build(&cfg.workload, &workload_context(&cfg)?)?;
        Simulator::with_workload(cfg, wl)
    }

    /// Build the drive and the configured workload; `cancel` becoming true stops the
    /// preconditioning (an [`Error::Interrupted`]) and, later, the run.
    pub fn new_cancellable(cfg: Config, cancel: Option<Arc<AtomicBool>>) -> Result<Simulator> {
        let wl = workload::build(&cfg.workload, &workload_context(&cfg)?)?;
        Simulator::build(cfg, wl, cancel)
    }

    /// Build the drive with a workload made elsewhere.
    pub fn with_workload(cfg: Config, workload: Box<dyn Workload>) -> Result<Simulator> {
        Simulator::build(cfg, workload, None)
    }

    fn build(mut cfg: Config, workload: Box<dyn Workload>, cancel: Option<Arc<AtomicBool>>) -> Result<Simulator> {
        cfg.validate()?;
        // Before anything large is allocated: a drive too big for the machine is an error,
        // not an aborted process.
        crate::budget::check(&cfg)?;
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
        let fill = cfg.ftl.precondition != "empty";
        let overwrite = if cfg.ftl.precondition == "steady" { cfg.ftl.precondition_drive_writes } else { 0.0 };
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
            cancel,
            interrupt_after: None,
            crash_after: None,
            checkpoint_path: None,
            state,
            open_loop: None,
            remove_checkpoint_at_end: true,
        })
    }

    /// Go on from the checkpoint at `path`: the drive and the run so far come from the file,
    /// the workload is rebuilt from the checkpoint's configuration and fast-forwarded past the
    /// requests already served. Later checkpoints go to the same file.
    pub fn resume(path: &Path) -> Result<Simulator> {
        let data: CheckpointData = checkpoint::load(path)?;
        let cfg =
            crate::config::ConfigBuilder::new().toml_str(&data.config_toml, &path.display().to_string())?.build()?;
        let mut workload = workload::build(&cfg.workload, &workload_context(&cfg)?)?;
        for i in 0..data.state.requests {
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
        Ok(Simulator {
            cfg,
            ftl: data.drive,
            workload,
            cancel: None,
            interrupt_after: None,
            crash_after: None,
            checkpoint_path: Some(path.to_path_buf()),
            state: data.state,
            open_loop: None,
            remove_checkpoint_at_end: true,
        })
    }

    /// Write checkpoints to `path`: every `run.checkpoint_every` and when the run is
    /// interrupted.
    pub fn set_checkpoint_path(&mut self, path: PathBuf) {
        self.checkpoint_path = Some(path);
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

    /// Stop the run (cleanly, with a summary) when `flag` becomes true.
    pub fn set_cancel_flag(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    /// Run until the stop condition.
    pub fn run(mut self) -> Result<RunOutput> {
        let started = Instant::now();
        let unit = self.ftl.unit_bytes();
        let logical_units = self.ftl.logical_units() as u64;
        let logical_bytes = logical_units * unit;
        let stop = self.cfg.run.stop_condition(logical_bytes)?;
        let interval = self.cfg.stats.interval(logical_bytes)?;
        let checkpoint_every =
            if self.checkpoint_path.is_some() { self.cfg.run.checkpoint_interval(logical_bytes)? } else { None };
        let qd = self.cfg.host.queue_depth as usize;
        let open_loop =
            self.open_loop.unwrap_or_else(|| self.cfg.workload.open_loop() || self.cfg.host.arrivals == "timestamps");

        let mut stop_reason = String::from("end of workload");
        let mut progress = Progress::new(&self.cfg.run.progress, stop);
        const LOOKAHEAD: usize = 2;
        let mut ahead: VecDeque<Result<Option<HostRequest>>> = VecDeque::with_capacity(LOOKAHEAD + 1);
        let mut drained = false;

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
                progress.update(frac, st.requests, &started);
            }
            // Requests are drawn from the workload `LOOKAHEAD` ahead (a workload does not see
            // the drive, so the sequence is the same) to prefetch their map entries; errors and
            // the end are reported when reached.
            while !drained && ahead.len() <= LOOKAHEAD {
                let r = self.workload.next_request();
                drained = !matches!(r, Ok(Some(_)));
                ahead.push_back(r);
            }
            let Some(req) = ahead.pop_front().expect("a drawn request")? else {
                break;
            };
            for (i, r) in ahead.iter().enumerate() {
                if let Ok(Some(r)) = r {
                    let (first, units) = ((r.offset / unit) as u32, (r.size.max(1).div_ceil(unit)) as u32);
                    if i == 0 {
                        self.ftl.prefetch_slots(first, units);
                    } else {
                        self.ftl.prefetch_map(first, units);
                    }
                }
            }
            let (first, units) = units_of(self.ftl.as_ref(), &req, logical_units)?;
            if req.arrival_ns >= workload::MAX_ARRIVAL_NS {
                return Err(Error::Run(format!(
                    "request {} arrives at {} ns, beyond the simulator's clock ({} ns, 146 years): check the trace's timestamps, workload.trace.time_scale and workload.arrival",
                    st.requests,
                    req.arrival_ns,
                    workload::MAX_ARRIVAL_NS
                )));
            }

            // Issue time.
            let mut issue = if open_loop { req.arrival_ns } else { st.now };
            while let Some(&Reverse(t)) = st.outstanding.peek() {
                if st.outstanding.len() >= qd || t <= issue {
                    st.outstanding.pop();
                    if st.outstanding.len() < qd {
                        issue = issue.max(t);
                    }
                } else {
                    break;
                }
            }
            if open_loop && st.outstanding.is_empty() && issue > st.busy_until {
                self.ftl.idle(st.busy_until, issue);
            }
            st.now = issue;

            let completion = match req.kind {
                IoKind::Write => {
                    let data_in = self.ftl.host_transfer(issue, req.size);
                    st.host.write_requests += 1;
                    st.host.write_bytes += req.size;
                    self.ftl.write(first, units, data_in)
                }
                IoKind::Read => {
                    let flash_done = self.ftl.read(first, units, issue, req.stream, req.budget_us);
                    st.host.read_requests += 1;
                    st.host.read_bytes += req.size;
                    self.ftl.host_transfer(flash_done, req.size)
                }
            };
            if let Some(v) = self.ftl.integrity_violation() {
                return Err(Error::Integrity(v.to_string()));
            }
            let latency = completion - issue;
            match req.kind {
                IoKind::Read => {
                    st.lat_read.record(latency);
                    st.ts.long_reads.record(latency);
                }
                IoKind::Write => st.lat_write.record(latency),
            }
            st.ts.interval_latency.record(latency);
            st.outstanding.push(Reverse(completion));
            st.busy_until = st.busy_until.max(completion);
            st.end = st.end.max(completion);
            st.requests += 1;

            let reached = match interval {
                Interval::TimeNs(_) => st.now >= st.next_mark,
                Interval::WriteBytes(_) => st.host.write_bytes >= st.next_mark,
            };
            if reached {
                push_row(self.ftl.as_ref(), st, st.now);
                st.next_mark += match interval {
                    Interval::TimeNs(t) => t,
                    Interval::WriteBytes(b) => b,
                };
            }
        }
        progress.finish();
        if stop_reason != "interrupted" && self.remove_checkpoint_at_end {
            // A finished run's checkpoint is stale: resuming it would only repeat the end.
            if let Some(p) = &self.checkpoint_path {
                if p.exists() {
                    std::fs::remove_file(p).map_err(|e| Error::io(p.display(), e))?;
                }
            }
        }
        let now = self.state.end.max(self.state.now);
        push_row(self.ftl.as_ref(), &mut self.state, now);
        // A dead drive may have lost the unit it could not place: that is its death, not a bug.
        if self.ftl.death().is_none() {
            if let Some(v) = self.ftl.verify_all() {
                return Err(Error::Integrity(v));
            }
        }

        let RunState { lat_read, lat_write, ts, host, requests, now, end, wall_seconds_before, warnings, .. } =
            self.state;
        // "All" is the union of reads and writes: merged once here rather than recorded per request.
        let mut lat_all = LatencyHistogram::new();
        lat_all.add(&lat_read);
        lat_all.add(&lat_write);
        let wall = wall_seconds_before + started.elapsed().as_secs_f64();
        let c = &self.ftl.counters();
        let page_ops = c.page_reads.total() + c.page_programs.total() + c.block_erases.total();
        let host_units = c.host_unit_writes;
        // Undefined ratios are NaN (null in summary.json), never a misleading 0.
        let wa = if host_units == 0 { f64::NAN } else { c.unit_programs.total() as f64 / host_units as f64 };
        let physical_bytes = self.ftl.flash().geo.pages() * self.ftl.flash().page_bytes(self.cfg.flash.bit_mode);
        let counts = self.ftl.flash().erase_counts();
        let n = counts.len().max(1) as f64;
        let mean = counts.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = counts.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        let mut hist = std::collections::BTreeMap::new();
        for &x in counts {
            *hist.entry(x).or_insert(0u64) += 1;
        }
        let by_mode = self.ftl.blocks_by_mode();
        let bad = self.ftl.as_ftl().map(Ftl::bad_block_stats).unwrap_or_default();
        let simulated = end.max(now);
        let secs = simulated as f64 / 1e9;
        let summary = Summary {
            write_amplification: wa,
            capacity: CapacitySummary {
                physical_bytes,
                logical_bytes,
                mapping_unit_bytes: unit,
                overprovisioning: (physical_bytes - logical_bytes) as f64 / logical_bytes as f64,
                reserve: (physical_bytes - logical_bytes) as f64 / physical_bytes as f64,
            },
            flash: FlashSummary {
                page_reads: c.page_reads.total(),
                page_programs: c.page_programs.total(),
                block_erases: c.block_erases.total(),
                page_reads_by_cause: c.page_reads,
                page_programs_by_cause: c.page_programs,
                unit_programs_by_cause: c.unit_programs,
                block_erases_by_cause: c.block_erases,
                buffer_hits: c.buffer_hits,
                unmapped_reads: c.unmapped_reads,
            },
            gc: GcSummary {
                victims: c.gc_victims,
                valid_units_moved: c.gc_valid_moved,
                mean_valid_per_victim: if c.gc_victims == 0 {
                    f64::NAN
                } else {
                    c.gc_valid_moved as f64 / c.gc_victims as f64
                },
            },
            latency_us: LatencySet { read: lat_read.summary(), write: lat_write.summary(), all: lat_all.summary() },
            throughput: Throughput {
                // No simulated time (fast-forward): a rate is undefined, not zero.
                iops: if secs > 0.0 { requests as f64 / secs } else { f64::NAN },
                mb_per_s: if secs > 0.0 { (host.read_bytes + host.write_bytes) as f64 / 1e6 / secs } else { f64::NAN },
            },
            lifetime: Lifetime {
                dead: self.ftl.death().is_some(),
                death_reason: self.ftl.death().map(str::to_string),
                host_bytes_written: host.write_bytes,
                drive_writes: host.write_bytes as f64 / logical_bytes as f64,
                dead_blocks: self.ftl.dead_blocks(),
                mode_switches: c.mode_switches,
                blocks_by_mode: BitMode::ALL.iter().map(|m| (m.name(), by_mode[m.index()])).collect(),
                erase_count: ErasesSummary {
                    min: counts.iter().copied().min().unwrap_or(0),
                    mean,
                    max: counts.iter().copied().max().unwrap_or(0),
                    stddev: var.sqrt(),
                },
                life_used: self.ftl.life_used(),
            },
            failures: Failures {
                program: c.program_failures,
                erase: c.erase_failures,
                uncorrectable_reads: c.uncorrectable_reads,
                bad_pages: bad.bad_pages,
                retired_blocks: c.retired_blocks,
                worn_out_blocks: c.worn_out_blocks,
                bad_blocks: bad.bad_blocks,
                bad_block_ratio: bad.bad_blocks as f64 / self.ftl.flash().geo.blocks().max(1) as f64,
                salvaged_blocks: bad.salvaged_blocks,
                skip_retries: bad.skip_retries,
                rehomed_units: bad.rehomed_units,
                bad_page_table: bad.table,
                bad_page_table_peak_memory_bytes: bad.table_peak_memory_bytes,
            },
            integrity: Integrity {
                oracle: self.cfg.ftl.integrity_oracle,
                checks: self.ftl.integrity_checks(),
                violation: None,
                out_of_order_programs: self.ftl.flash().order_violations,
                physical_page_programs: self.ftl.flash().ops.programs,
                physical_block_erases: self.ftl.flash().ops.erases,
            },
            run: RunInfo {
                seed: self.cfg.seed,
                requests,
                simulated_ns: simulated,
                wall_seconds: wall,
                page_ops,
                page_ops_per_second: if wall > 0.0 { page_ops as f64 / wall } else { 0.0 },
                peak_rss_bytes: peak_rss_bytes(),
                stop: stop_reason,
                warnings,
            },
            reliability: ReliabilitySummary::new(
                &self.cfg.reliability.model,
                &self.cfg.reliability.read_reclaim,
                c,
                self.ftl.as_ftl().map_or(&[][..], |f| f.read_model().retry_histogram()),
                &ts.long_reads,
                self.ftl.as_ftl().map_or(0, |f| f.read_model().hinted_reads()),
                self.ftl.flash().geo.blocks() as f64
                    * self.ftl.flash().wear_model().rated_cycles(self.ftl.flash().native_mode()).max(1.0),
            ),
            host,
            open_channel: self.ftl.open_channel_summary(simulated),
            second_writes: self.cfg.reusable.enabled.then_some(c.second),
        };
        let latency_cdf = LatencyCdfs { read: lat_read.cdf(), write: lat_write.cdf(), all: lat_all.cdf() };
        Ok(RunOutput {
            summary,
            timeseries: ts,
            erase_histogram: hist.into_iter().collect(),
            latency_cdf,
            config: self.cfg,
        })
    }
}

/// The mapping units a request covers.
fn units_of(drive: &dyn Drive, req: &HostRequest, logical_units: u64) -> Result<(u32, u32)> {
    let unit = drive.unit_bytes();
    let first = req.offset / unit;
    let last = (req.offset + req.size.max(1) - 1) / unit;
    if last >= logical_units {
        return Err(Error::Run(format!(
                "request at byte {} of {} bytes ends beyond the drive's {} logical bytes (fold the workload's addresses onto the drive)",
                req.offset,
                req.size,
                logical_units * unit
            )));
    }
    Ok((first as u32, (last - first + 1) as u32))
}

/// Close the time series' current interval at `now`.
fn push_row(drive: &dyn Drive, st: &mut RunState, now: u64) {
    let (ts, host, requests) = (&mut st.ts, &st.host, st.requests);
    let c = drive.counters();
    let long_read_share = ts.long_reads.interval_share();
    let mean_retry_steps =
        ts.long_reads.interval_retry_mean(c.read_retries.get(Cause::Host), c.page_reads.get(Cause::Host));
    let dt = (now.saturating_sub(ts.last_time_ns)) as f64 / 1e9;
    let units = c.host_unit_writes - ts.last_host_units;
    let programs = c.unit_programs.total() - ts.last_unit_programs;
    let row = Row {
        time_s: now as f64 / 1e9,
        host_bytes_written: host.write_bytes,
        host_mb_per_s: if dt > 0.0 { (host.write_bytes - ts.last_host_bytes) as f64 / 1e6 / dt } else { 0.0 },
        iops: if dt > 0.0 { (requests - ts.last_requests) as f64 / dt } else { 0.0 },
        mean_latency_us: ts.interval_latency.mean_us(),
        p99_latency_us: ts.interval_latency.quantile_us(0.99),
        wa_interval: if units == 0 { 0.0 } else { programs as f64 / units as f64 },
        wa_cumulative: if c.host_unit_writes == 0 {
            0.0
        } else {
            c.unit_programs.total() as f64 / c.host_unit_writes as f64
        },
        free_blocks: drive.free_blocks(),
        erases: c.block_erases.total(),
        dead_blocks: drive.dead_blocks(),
        life_used: drive.life_used(),
        long_read_share,
        mean_retry_steps,
        uncorrectable_reads: c.uncorrectable_reads,
        reclaim_programs: c.page_programs.get(Cause::Reclaim),
        reclaim_erases: c.block_erases.get(Cause::Reclaim),
    };
    ts.rows.push(row);
    ts.interval_latency.reset();
    ts.last_time_ns = now;
    ts.last_host_bytes = host.write_bytes;
    ts.last_requests = requests;
    ts.last_host_units = c.host_unit_writes;
    ts.last_unit_programs = c.unit_programs.total();
}

/// A progress bar on a terminal for runs over a second; silent otherwise.
struct Progress {
    enabled: bool,
    bar: Option<indicatif::ProgressBar>,
    label: &'static str,
}

impl Progress {
    fn new(mode: &str, stop: StopCondition) -> Self {
        let enabled = match mode {
            "on" => true,
            "off" => false,
            _ => std::io::stderr().is_terminal(),
        };
        let label = match stop {
            StopCondition::Death => "life used",
            _ => "done",
        };
        Progress { enabled, bar: None, label }
    }

    fn update(&mut self, fraction: f64, requests: u64, started: &Instant) {
        if !self.enabled || started.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(1000);
            let style =
                indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] [{bar:40}] {percent:>3}% {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            b.set_style(style);
            b
        });
        let f = fraction.clamp(0.0, 1.0);
        bar.set_position((f * 1000.0) as u64);
        let elapsed = started.elapsed().as_secs_f64();
        let rate = requests as f64 / elapsed;
        // The run's own estimate: elapsed time scaled by the share still to go.
        let eta = if f > 0.0 { format!("{:.0}s", elapsed * (1.0 - f) / f) } else { "?".into() };
        bar.set_message(format!("{} | {:.0} req/s | ETA {eta}", self.label, rate));
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// How a run treats its `--out` folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirOptions {
    /// Replace an earlier run's results or checkpoint in the folder instead of refusing.
    pub overwrite: bool,
}

/// Run a configuration into the run folder `out_dir` (see [`crate::run_dir`]): the folder is
/// checked, locked and probed before the run starts; a finished run writes `summary.json`
/// (last), `timeseries.csv`, `erase_histogram.csv`, `latency_cdf.csv` and `config.toml` and
/// then drops its checkpoint; an interrupted one checkpoints into `out_dir/checkpoint.bin` and
/// writes its results so far under `out_dir/partial/`. A relative trace path is made absolute
/// so that the folder's `config.toml` and checkpoint work from any directory.
pub fn run_to_dir(
    mut cfg: Config,
    out_dir: &Path,
    options: DirOptions,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<RunOutput> {
    absolute_trace_path(&mut cfg)?;
    let intent = if options.overwrite { Intent::Overwrite } else { Intent::New };
    let mut dir = RunDir::open(out_dir, intent)?;
    let sim = Simulator::new_cancellable(cfg, cancel.clone());
    let result = sim.and_then(|mut sim| {
        sim.set_checkpoint_path(dir.checkpoint_path());
        finish_in_dir(sim, &dir, cancel)
    });
    if result.is_err() {
        dir.abandon();
    }
    result
}

/// Go on with the run whose checkpoint is in `out_dir` (see [`run_to_dir`]). A checkpoint
/// that cannot be used is refused before anything in the folder changes.
pub fn resume_dir(out_dir: &Path, cancel: Option<Arc<AtomicBool>>) -> Result<RunOutput> {
    let dir = RunDir::open(out_dir, Intent::Resume)?;
    let sim = Simulator::resume(&dir.checkpoint_path())?;
    finish_in_dir(sim, &dir, cancel)
}

fn finish_in_dir(mut sim: Simulator, dir: &RunDir, cancel: Option<Arc<AtomicBool>>) -> Result<RunOutput> {
    if let Some(c) = cancel {
        sim.set_cancel_flag(c);
    }
    sim.keep_checkpoint_at_end();
    let out = sim.run()?;
    if out.summary.run.stop == "interrupted" {
        dir.write_partial(&out)?;
    } else {
        dir.write_final(&out)?;
    }
    Ok(out)
}

/// Make `workload.trace.path` absolute (relative to the current directory).
fn absolute_trace_path(cfg: &mut Config) -> Result<()> {
    let p = &mut cfg.workload.trace.path;
    if cfg.workload.kind == "trace" && !p.is_empty() && Path::new(p.as_str()).is_relative() {
        let abs = std::path::absolute(p.as_str()).map_err(|e| Error::io(p.as_str(), e))?;
        *p = abs.display().to_string();
    }
    Ok(())
}

/// Write a run's files into `out_dir`, each atomically, `summary.json` last.
pub fn write_outputs(out: &RunOutput, out_dir: &Path) -> Result<()> {
    crate::run_dir::write_outputs(out, out_dir)
}
