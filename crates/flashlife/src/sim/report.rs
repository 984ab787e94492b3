//! What a run produced: the summary, the time series, the wear histogram and the latency
//! distributions, assembled from the drive and the run loop's state.

use super::summary::*;
use crate::config::Config;
use crate::flash::BitMode;
use crate::ftl::Ftl;
use crate::host::Drive;
use crate::stats::latency::LatencyHistogram;
use crate::stats::provenance::{sha256_hex, Provenance, TraceIdentity};
use crate::stats::reliability::ReliabilitySummary;
use crate::stats::timeseries::{ModeRow, Row, SampleRow, SchedTotals, TimeSeries};
use crate::stats::Cause;
use crate::techniques;
use crate::workload::WorkloadKind;

use super::RunState;

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

/// The run's outputs from the drive and the run loop's state at its end. `segment_wall_seconds`:
/// wall time of this segment of the run (earlier segments are in the state).
pub(super) fn report(
    cfg: Config,
    drive: &dyn Drive,
    state: RunState,
    segment_wall_seconds: f64,
    stop_reason: String,
    logical_bytes: u64,
    unit: u64,
) -> RunOutput {
    let RunState {
        lat_read,
        lat_write,
        dev_read,
        dev_write,
        wait,
        first_arrival,
        last_arrival,
        gc_debt_units,
        touched,
        ts,
        host,
        requests,
        now,
        end,
        wall_seconds_before,
        trim_requests,
        trim_bytes,
        mut warnings,
        sampler,
        flows,
        ..
    } = state;
    let sampling = sampler.map(|s| s.summary(requests));
    if let Some(s) = &sampling {
        if s.windows.len() < 2 {
            warnings.push(format!(
                "sampled timing measured {} window(s): no confidence interval without two; make sampling.every smaller \
                 or the run longer",
                s.windows.len()
            ));
        }
    }
    // "All" is the union of reads and writes: merged once here rather than recorded per request.
    let mut lat_all = LatencyHistogram::new();
    lat_all.add(&lat_read);
    lat_all.add(&lat_write);
    let mut dev_all = LatencyHistogram::new();
    dev_all.add(&dev_read);
    dev_all.add(&dev_write);
    let latency_us = LatencySet { read: lat_read.summary(), write: lat_write.summary(), all: lat_all.summary() };
    let device_time_us = LatencySet { read: dev_read.summary(), write: dev_write.summary(), all: dev_all.summary() };
    let host_queue_wait_us = wait.summary();
    let c = drive.counters();
    warnings.extend(explain(&cfg, &latency_us.read, &latency_us.write, c.gc_victims, &host));
    // With flows, the queue slots are all the flows' together.
    let slots = if cfg.flows.is_empty() {
        cfg.host.queue_depth
    } else {
        cfg.flows.iter().map(|f| f.depth(cfg.host.queue_depth)).sum()
    };
    let overload = explain_overload(&host_queue_wait_us, &device_time_us.all, slots);
    if overload.is_some() && sampling.is_some() {
        warnings.push(
            "sampled timing of an overloaded open-loop stream underestimates its latency: each window starts with the \
             host queue as fast-forward left it (empty), while the backlog of a timed run grows throughout; time the \
             whole run (sampling.enabled = false) or slow the arrivals"
                .to_string(),
        );
    }
    warnings.extend(overload);
    warnings.extend(explain_debt(gc_debt_units, c.host_unit_writes, c.unit_programs.get(Cause::Gc)));
    if let Some(bits) = &touched {
        let units = bits.iter().map(|w| w.count_ones() as u64).sum::<u64>();
        warnings.extend(explain_footprint(units, drive.logical_units() as u64, drive.unit_bytes()));
    }
    // Requests over the span of their arrivals; undefined for one arrival or one instant.
    let offered_iops = first_arrival.map(|first| {
        let span = last_arrival.saturating_sub(first) as f64 / 1e9;
        if requests > 1 && span > 0.0 {
            (requests - 1) as f64 / span
        } else {
            f64::NAN
        }
    });
    let wall = wall_seconds_before + segment_wall_seconds;
    let c = &drive.counters();
    let page_ops = c.page_reads.total() + c.page_programs.total() + c.block_erases.total();
    // With a DRAM cache, the host's units (the FTL sees only those destaged).
    let cache = drive.cache_summary();
    let host_units = cache.as_ref().map_or(c.host_unit_writes, |s| s.host_units_written);
    // Undefined ratios are NaN (null in summary.json), never a misleading 0.
    let wa = if host_units == 0 { f64::NAN } else { c.unit_programs.total() as f64 / host_units as f64 };
    let physical_bytes = drive.flash().geo.pages() * drive.flash().page_bytes(cfg.flash.bit_mode);
    let counts = drive.flash().erase_counts();
    let n = counts.len().max(1) as f64;
    let mean = counts.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = counts.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    let mut hist = std::collections::BTreeMap::new();
    for &x in counts {
        *hist.entry(x).or_insert(0u64) += 1;
    }
    let by_mode = drive.blocks_by_mode();
    let bad = drive.as_ftl().map(Ftl::bad_block_stats).unwrap_or_default();
    let simulated = end.max(now);
    let trims = if cfg.flows.is_empty() { cfg.workload.trims() } else { cfg.flows.iter().any(|f| f.workload.trims()) };
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
            valid_units_moved_idle: c.gc_valid_moved_idle,
            mean_valid_per_victim: if c.gc_victims == 0 {
                f64::NAN
            } else {
                c.gc_valid_moved as f64 / c.gc_victims as f64
            },
            valid_units_moved_outside_flows: drive.as_ftl().and_then(|f| f.gc_regions()).map(|r| r.outside),
        },
        latency_us,
        device_time_us,
        host_queue_wait_us,
        throughput: Throughput {
            // No simulated time (fast-forward): a rate is undefined, not zero.
            iops: if secs > 0.0 { requests as f64 / secs } else { f64::NAN },
            mb_per_s: if secs > 0.0 { (host.read_bytes + host.write_bytes) as f64 / 1e6 / secs } else { f64::NAN },
            offered_iops,
        },
        lifetime: Lifetime {
            dead: drive.death().is_some(),
            death_reason: drive.death().map(str::to_string),
            host_bytes_written: host.write_bytes,
            drive_writes: host.write_bytes as f64 / logical_bytes as f64,
            dead_blocks: drive.dead_blocks(),
            mode_switches: c.mode_switches,
            blocks_by_mode: BitMode::ALL.iter().map(|m| (m.name(), by_mode[m.index()])).collect(),
            erase_count: ErasesSummary {
                min: counts.iter().copied().min().unwrap_or(0),
                mean,
                max: counts.iter().copied().max().unwrap_or(0),
                stddev: var.sqrt(),
            },
            life_used: drive.life_used(),
        },
        failures: Failures {
            program: c.program_failures,
            erase: c.erase_failures,
            uncorrectable_reads: c.uncorrectable_reads,
            bad_pages: bad.bad_pages,
            retired_blocks: c.retired_blocks,
            worn_out_blocks: c.worn_out_blocks,
            bad_blocks: bad.bad_blocks,
            bad_block_ratio: bad.bad_blocks as f64 / drive.flash().geo.blocks().max(1) as f64,
        },
        integrity: Integrity {
            oracle: cfg.ftl.integrity_oracle,
            checks: drive.integrity_checks(),
            violation: None,
            out_of_order_programs: drive.flash().order_violations,
            physical_page_programs: drive.flash().ops.programs,
            physical_block_erases: drive.flash().ops.erases,
        },
        run: RunInfo {
            seed: cfg.seed,
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
            cfg.reliability.model.name(),
            cfg.reliability.read_reclaim.name(),
            c,
            drive.as_ftl().map_or(&[][..], |f| f.read_model().retry_histogram()),
            &ts.long_reads,
            drive.as_ftl().map_or(0, |f| f.read_model().hinted_reads()),
            drive.flash().geo.blocks() as f64
                * drive.flash().wear_model().rated_cycles(drive.flash().native_mode()).max(1.0),
        )
        .with_reclaims_in_idle(cfg.reliability.reclaim_when == crate::config::ReclaimWhen::Idle, c),
        host,
        open_channel: drive.open_channel_summary(simulated),
        scheduler: drive.scheduler().summary(),
        sampling,
        cache,
        mapping_cache: drive.as_ftl().and_then(|f| f.mapping_cache_summary()),
        flows: super::flows::summary(&cfg, &flows, drive, host_units, secs),
        trim: trims.then(|| {
            let t = drive.trim_counters();
            TrimSummary { requests: trim_requests, bytes: trim_bytes, units: t.units, mapped_units: t.mapped_units }
        }),
        techniques: techniques::summaries(&cfg, drive.as_ftl()),
        provenance: Provenance {
            flashlife_version: env!("CARGO_PKG_VERSION"),
            build_commit: crate::stats::provenance::build_commit(),
            scheduler: drive.scheduler().name(),
            config_sha256: sha256_hex(cfg.to_toml().as_bytes()),
            // With flows: the first trace any flow replays.
            trace: std::iter::once(&cfg.workload)
                .filter(|_| cfg.flows.is_empty())
                .chain(cfg.flows.iter().map(|f| &f.workload))
                .find(|w| w.kind == WorkloadKind::Trace)
                .map(|w| TraceIdentity::of(&w.trace.path)),
        },
    };
    let latency_cdf = LatencyCdfs { read: lat_read.cdf(), write: lat_write.cdf(), all: lat_all.cdf() };
    RunOutput { summary, timeseries: ts, erase_histogram: hist.into_iter().collect(), latency_cdf, config: cfg }
}

/// Close the time series' current interval at `now`.
pub(super) fn push_row(drive: &mut dyn Drive, st: &mut RunState, now: u64) {
    // First, as it closes the scheduler's interval (and needs the drive mutably).
    let totals = drive.scheduler_mut().interval_totals();
    let drive: &dyn Drive = drive;
    let (ts, host, requests) = (&mut st.ts, &st.host, st.requests);
    let c = drive.counters();
    let long_read_share = ts.long_reads.interval_share();
    let mean_retry_steps =
        ts.long_reads.interval_retry_mean(c.read_retries.get(Cause::Host), c.page_reads.get(Cause::Host));
    let dt = (now.saturating_sub(ts.last_time_ns)) as f64 / 1e9;
    let units = c.host_unit_writes - ts.last_host_units;
    let programs = c.unit_programs.total() - ts.last_unit_programs;
    let sched = totals.as_ref().map(|t| t.since(ts.last_sched.as_ref().unwrap_or(&SchedTotals::default())));
    ts.last_sched = totals;
    // Under sampled timing only measured requests are recorded: an interval without one has
    // no latency (NaN), not zero.
    let measured = ts.interval_latency.count();
    let sample = st.sampler.as_ref().map(|_| SampleRow { window: ts.window.take(), measured_requests: measured });
    let none = sample.is_some() && measured == 0;
    let row = Row {
        time_s: now as f64 / 1e9,
        host_bytes_written: host.write_bytes,
        host_mb_per_s: if dt > 0.0 { (host.write_bytes - ts.last_host_bytes) as f64 / 1e6 / dt } else { 0.0 },
        iops: if dt > 0.0 { (requests - ts.last_requests) as f64 / dt } else { 0.0 },
        mean_latency_us: if none { f64::NAN } else { ts.interval_latency.mean_us() },
        p99_latency_us: if none { f64::NAN } else { ts.interval_latency.quantile_us(0.99) },
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
        sched,
        sample,
        flows: super::flows::rows(&mut st.flows, dt),
        modes: ts.modes.then(|| ModeRow { mode_switches: c.mode_switches, blocks: drive.blocks_by_mode() }),
    };
    ts.rows.push(row);
    ts.interval_latency.reset();
    ts.last_time_ns = now;
    ts.last_host_bytes = host.write_bytes;
    ts.last_requests = requests;
    ts.last_host_units = c.host_unit_writes;
    ts.last_unit_programs = c.unit_programs.total();
}

/// Warnings a careful engineer would give about a result that looks wrong or unrepresentative,
/// each saying what to change (`summary.run.warnings`, printed by the command).
fn explain(
    cfg: &Config,
    read: &crate::stats::latency::LatencySummary,
    write: &crate::stats::latency::LatencySummary,
    gc_victims: u64,
    host: &HostSummary,
) -> Vec<String> {
    let mut out = Vec::new();
    // A tail two orders of magnitude above the median, over enough requests to mean it.
    // Why, said for the scheduler that timed the run: the reservation scheduler books a whole
    // victim ahead of the writes behind it; the queued one serves cleaning first only near a
    // pool's reserve, and its summary section counts those episodes.
    let cause = match cfg.timing.scheduler {
        crate::config::SchedulerKind::Reservation => {
            "usually garbage collection, which the reservation timing model books a whole victim at a time"
        }
        crate::config::SchedulerKind::Queued => {
            "usually garbage collection a die served first near a pool's reserve (summary.scheduler: \
             hard_threshold_episodes, host_blocked_episodes, host_wait_on_erase_ns)"
        }
    };
    for (op, l) in [("read", read), ("write", write)] {
        if l.count >= 1000 && l.p50 > 0.0 && l.p99 > TAIL_RATIO * l.p50 && l.p99 > TAIL_FLOOR_US {
            out.push(format!(
                "{op} latency p99 ({:.0} us) is {:.0} times the median ({:.0} us): a few requests wait behind work booked \
                 ahead of them, {cause}; see p99_latency_us in timeseries.csv, and give GC room \
                 (capacity.overprovisioning, gc watermarks)",
                l.p99,
                l.p99 / l.p50,
                l.p50
            ));
        }
    }
    // Writes that never made the drive collect garbage describe a fresh drive, not a used one.
    if host.write_bytes > 0 && gc_victims == 0 && cfg.ftl.precondition != crate::config::Precondition::Steady {
        out.push(
            "no garbage was collected during the run: the results describe a fresh drive, not steady state; \
             set ftl.precondition = \"steady\" or write more (run.until)"
                .to_string(),
        );
    }
    out
}

/// An open-loop replay whose requests mostly waited for a queue slot: the offered rate is
/// beyond what the drive sustains at this queue depth, so response times measure the backlog.
fn explain_overload(
    wait: &crate::stats::latency::LatencySummary,
    device: &crate::stats::latency::LatencySummary,
    queue_depth: u32,
) -> Option<String> {
    // The histogram floors values at 1 ns: "waited" means at least a microsecond.
    (wait.count >= 1000 && wait.p50 >= 1.0).then(|| {
        format!(
            "most requests waited for one of the {queue_depth} queue slots (mean wait {:.0} us, device time {:.0} us): \
             the arrivals come faster than the drive serves them, and response time measures the backlog; \
             slow the replay (workload.trace.time_scale, workload.arrival) or raise host.queue_depth",
            wait.mean, device.mean
        )
    })
}

/// A run shorter than the garbage collection it inherited: preconditioning leaves pools just
/// below their high watermarks, and GC moves that data during the measured run whatever the
/// workload, billing it to the workload's few writes.
fn explain_debt(debt_units: u64, host_units: u64, gc_units: u64) -> Option<String> {
    (debt_units > 0 && host_units < debt_units && gc_units > host_units).then(|| {
        format!(
            "the run wrote {host_units} mapping units, fewer than the {debt_units} units garbage collection owed when it \
             began (preconditioning leaves pools just below their GC high watermark): most of the {gc_units} units GC \
             moved repay that debt, so write amplification and write latency describe the debt, not the workload; \
             write more (run.until) so that the debt is a small part of the run"
        )
    })
}

/// A trace that touches a sliver of the drive: GC and wear then come from preconditioning and
/// the drive's size, not from the trace.
fn explain_footprint(touched_units: u64, logical_units: u64, unit_bytes: u64) -> Option<String> {
    let share = touched_units as f64 / logical_units.max(1) as f64;
    (share < FOOTPRINT_FLOOR).then(|| {
        format!(
            "the trace touched {:.3}% of the drive's logical space ({:.1} MiB of {:.1} GiB): the drive is far larger \
             than the trace's footprint, so its garbage collection and wear come from preconditioning, not the trace; \
             size the drive to the trace (geometry, capacity) or fold its addresses (workload.trace.fold = \"remap_first\" \
             with workload.trace.remap_limit_bytes)",
            share * 100.0,
            (touched_units * unit_bytes) as f64 / (1u64 << 20) as f64,
            (logical_units * unit_bytes) as f64 / (1u64 << 30) as f64
        )
    })
}

/// A trace touching less than this share of the logical space gets a warning.
const FOOTPRINT_FLOOR: f64 = 0.01;

/// How far above the median a p99 must be to be worth a warning...
const TAIL_RATIO: f64 = 100.0;
/// ... and how long, in us: longer than any single flash operation (a 15 ms erase), so a
/// buffered write's fast median against a page program's p99 is not taken for a stall.
const TAIL_FLOOR_US: f64 = 50_000.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::latency::LatencySummary;

    fn lat(count: u64, p50: f64, p99: f64) -> LatencySummary {
        LatencySummary { count, mean: p50, p50, p99, p999: p99, max: p99 }
    }

    #[test]
    fn debt_and_footprint_warnings_need_their_cause() {
        // Fewer units written than GC owed, and GC moved more than was written: a warning.
        let w = explain_debt(50_000, 5_000, 300_000).expect("a debt warning");
        assert!(w.starts_with("the run wrote 5000 mapping units, fewer than the 50000 units"), "{w}");
        assert_eq!(explain_debt(50_000, 60_000, 300_000), None, "the run outgrew the debt");
        assert_eq!(explain_debt(50_000, 5_000, 4_000), None, "GC did less than the host");
        assert_eq!(explain_debt(0, 5_000, 300_000), None, "nothing owed");
        let w = explain_footprint(100, 1 << 20, 4096).expect("a footprint warning");
        assert!(w.starts_with("the trace touched 0.010% of the drive's logical space (0.4 MiB of 4.0 GiB)"), "{w}");
        assert_eq!(explain_footprint(1 << 15, 1 << 20, 4096), None, "3% of the drive is no sliver");
    }

    #[test]
    fn warnings_flag_stalls_and_fresh_drives_only() {
        let cfg = Config::default(); // steady state preconditioning
        let host = HostSummary { write_bytes: 1 << 20, ..Default::default() };
        let quiet = lat(5000, 100.0, 900.0);
        assert!(explain(&cfg, &quiet, &quiet, 10, &host).is_empty());
        // A buffered write's 7 us median against a page program's 1.4 ms p99 is no stall.
        assert!(explain(&cfg, &quiet, &lat(5000, 7.0, 1427.0), 10, &host).is_empty());
        // Seconds behind a millisecond median is, with enough requests to mean it.
        let stall = lat(5000, 5000.0, 2_600_000.0);
        let w = explain(&cfg, &quiet, &stall, 10, &host);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("write latency p99 (2600000 us) is 520 times the median (5000 us)"), "{}", w[0]);
        assert!(explain(&cfg, &quiet, &lat(500, 5000.0, 2_600_000.0), 10, &host).is_empty());
        // No GC on a drive that started empty or full: a fresh drive; steady state is not.
        let mut full = cfg.clone();
        full.ftl.precondition = crate::config::Precondition::Full;
        let w = explain(&full, &quiet, &quiet, 0, &host);
        assert!(w.len() == 1 && w[0].starts_with("no garbage was collected"), "{w:?}");
        assert!(explain(&cfg, &quiet, &quiet, 0, &host).is_empty());
    }
}
