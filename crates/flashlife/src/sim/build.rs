//! From a configuration to the parts of a simulated drive: flash array, scheduler, FTL (or
//! open-channel host FTL and device), with the techniques the configuration turns on.

use crate::config::{Config, FailureSource, Interface, QueuePolicy, SchedulerKind, UrgentPace, WearModelKind};
use crate::error::Result;
use crate::flash::failure::{FailureModel, InjectedFailures};
use crate::flash::oxide::OxideWear;
use crate::flash::page_errors::{AnyOf, LognormalPageErrors};
use crate::flash::wear::{FixedPeLimit, WearModel};
use crate::flash::{BitMode, FlashArray, Geometry};
use crate::ftl::read_model;
use crate::ftl::{Ftl, Layout};
use crate::host::cache::CachedDrive;
use crate::host::open_channel::{self, OpenChannel};
use crate::host::Drive;
use crate::seeds::stream_seed;
use crate::techniques;
use crate::timing::queued::{Fifo, GcRatio, MultiPlane, NearReserve, Policy, Priority};
use crate::timing::{Queued, QueuedParams, QueuedScheduler, Reservation, Scheduler, Suspension};
use crate::workload::WorkloadContext;

/// The flash array a configuration describes: geometry, wear model, failure model.
pub fn build_flash(cfg: &Config) -> Result<FlashArray> {
    let geo = Geometry::new(&cfg.geometry);
    let wear: Box<dyn WearModel> = match cfg.flash.wear_model {
        WearModelKind::Oxide => {
            Box::new(OxideWear::new(&cfg.flash.wear, geo.blocks() as usize, stream_seed(cfg.seed, "wear"))?)
        }
        WearModelKind::Fixed => Box::new(FixedPeLimit::new(BitMode::ALL.map(|m| cfg.flash.mode(m).pe_limit))),
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
    if f.model == FailureSource::Lognormal {
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

/// The scheduler that times the flash work, over the resources of a configuration's geometry
/// and links, with the array's operation times.
pub(crate) fn build_scheduler(cfg: &Config, flash: &FlashArray) -> Box<dyn Scheduler> {
    let geo = &flash.geo;
    let die_channel: Vec<u32> = (0..geo.dies()).map(|d| geo.channel_of_die(d)).collect();
    let t = &cfg.timing;
    if t.scheduler == SchedulerKind::Queued {
        let us = |v: f64| (v * 1000.0).round() as u64;
        let suspension = t.suspension.then_some(Suspension {
            program_suspend_ns: us(t.program_suspend_us),
            program_resume_ns: us(t.program_resume_us),
            erase_suspend_ns: us(t.erase_suspend_us),
            erase_resume_ns: us(t.erase_resume_us),
            program_min_remaining_ns: us(t.program_min_remaining_us),
            erase_min_remaining_ns: us(t.erase_min_remaining_us),
            max_per_operation: t.max_suspensions,
            reads_per_suspension: t.reads_per_suspension,
        });
        let policy: Box<dyn Policy> = match t.policy {
            QueuePolicy::Fifo => Box::new(Fifo),
            QueuePolicy::Priority => Box::new(Priority {
                gc_ratio: (t.gc_ratio.len() == 2).then(|| GcRatio { background: t.gc_ratio[0], host: t.gc_ratio[1] }),
                near_reserve: match (t.urgent_gc_pace, t.urgent_gc_ratio.as_slice()) {
                    (_, &[background, host]) => NearReserve::Ratio(GcRatio { background, host }),
                    (Some(UrgentPace::First), _) => NearReserve::First,
                    (Some(UrgentPace::Victim) | None, _) => NearReserve::Victim,
                },
                chore_ratio: (t.chore_ratio.len() == 2)
                    .then(|| GcRatio { background: t.chore_ratio[0], host: t.chore_ratio[1] }),
            }),
        };
        let params = QueuedParams {
            link_mb_per_s: cfg.host.link_mb_per_s,
            command_overhead_us: cfg.host.command_overhead_us,
            channel_mb_per_s: cfg.flash.channel_mb_per_s,
            channels: geo.channels,
            die_channel,
            suspension,
            multi_plane: t.multi_plane.then_some(MultiPlane {
                blocks_per_plane: cfg.geometry.blocks_per_plane,
                planes_per_die: cfg.geometry.planes,
            }),
            dram_ns: if cfg.cache.enabled() { cfg.cache.dram_latency_ns } else { 0 },
        };
        let engine = Queued::new(flash.times().clone(), params, policy);
        let lag_limit = t.hard_threshold_erases.saturating_mul(cfg.geometry.planes);
        return Box::new(QueuedScheduler::new(
            engine,
            geo.blocks(),
            geo.dies(),
            cfg.ftl.timing,
            t.suspension,
            lag_limit,
        ));
    }
    Box::new(
        Reservation::new(
            flash.times().clone(),
            cfg.ftl.timing,
            cfg.host.link_mb_per_s,
            cfg.host.command_overhead_us,
            cfg.flash.channel_mb_per_s,
            geo.channels,
            die_channel,
        )
        .with_dram_ns(if cfg.cache.enabled() { cfg.cache.dram_latency_ns } else { 0 }),
    )
}

/// A pristine block FTL (flash array and scheduler included) with the techniques the
/// configuration turns on (read model, second writes), not preconditioned: for tests and
/// tools that drive the FTL directly.
pub fn build_ftl(cfg: &Config) -> Result<Ftl> {
    let flash = build_flash(cfg)?;
    let sched = build_scheduler(cfg, &flash);
    let plugins = techniques::ftl_plugins(cfg, &flash)?;
    let mut ftl = Ftl::new(cfg, flash, sched, plugins)?;
    if cfg.mapping_cache.enabled() {
        let (entries, per_page) = cfg.mapping_cache.entries(ftl.unit_bytes())?;
        ftl.set_mapping_cache(entries, per_page);
    }
    let reads = read_model::build(cfg, &ftl.flash, ftl.unit_bytes(), stream_seed(cfg.seed, "page_variation"))?;
    ftl.set_read_model(reads);
    techniques::install(cfg, &mut ftl)?;
    Ok(ftl)
}

/// The open-channel host FTL and its device alone (`host.interface` aside), for tests and
/// tools that drive it directly.
pub fn build_open_channel(cfg: &Config) -> Result<OpenChannel> {
    let flash = build_flash(cfg)?;
    let sched = build_scheduler(cfg, &flash);
    OpenChannel::new(cfg, flash, sched)
}

/// The drive `host.interface` asks for: the block FTL, or an open-channel host FTL over a
/// physically addressed device.
pub fn build_drive(cfg: &Config) -> Result<Box<dyn Drive>> {
    let drive: Box<dyn Drive> = if cfg.host.interface == Interface::OpenChannel {
        Box::new(build_open_channel(cfg)?)
    } else {
        Box::new(build_ftl(cfg)?)
    };
    if cfg.cache.enabled() {
        return Ok(Box::new(CachedDrive::new(cfg, drive)?));
    }
    Ok(drive)
}

/// What the workload builder is told about the drive a configuration describes.
pub(super) fn workload_context(cfg: &Config) -> Result<WorkloadContext> {
    let layout =
        if cfg.host.interface == Interface::OpenChannel { open_channel::layout(cfg)? } else { Layout::of(cfg)? };
    Ok(WorkloadContext {
        logical_bytes: layout.logical_units as u64 * layout.unit_bytes,
        unit_bytes: layout.unit_bytes,
        seed: stream_seed(cfg.seed, "workload"),
    })
}

/// Draw `program_fail_nth` for `program_fail_nth_random_within` (seeded stream
/// `failure_point`), so that the configuration records the program that fails.
pub(super) fn resolve_failure_point(f: &mut crate::config::FailureConfig, seed: u64) {
    use rand::{Rng, SeedableRng};
    if f.program_fail_nth == 0 && f.program_fail_nth_random_within > 0 {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(stream_seed(seed, "failure_point"));
        f.program_fail_nth = rng.gen_range(1..=f.program_fail_nth_random_within);
        f.program_fail_nth_random_within = 0;
    }
}
