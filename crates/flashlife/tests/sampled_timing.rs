//! Sampled timing (`[sampling]`, issue 24): the whole run's latency estimated from timed
//! windows between stretches in fast-forward. The reference is the same run timed in full:
//! its mean and p99 must lie inside the sampled estimate's confidence intervals, its
//! bookkeeping must be the same where no decision depends on time, and its simulated time
//! close to the full run's.

mod common;

use flashlife::stats::Cause;
use flashlife::RunOutput;

/// A window every 10% of the run: 2,000 requests of warm-up, then 3,000 measured.
const SAMPLED: &[&str] = &[
    "sampling.enabled=true",
    "sampling.every=\"10%\"",
    "sampling.warmup_requests=2000",
    "sampling.window_requests=3000",
];

/// Run preset `preset` with `sets`, timed in full and sampled.
fn both(preset: &str, sets: &[&str]) -> (RunOutput, RunOutput) {
    (common::run_preset(preset, sets), common::run_preset(preset, &[sets, SAMPLED].concat()))
}

/// The full run's mean and p99 (reads, writes and both, where there are any) lie inside the
/// sampled run's intervals.
fn assert_within(full: &RunOutput, sampled: &RunOutput, what: &str) {
    let s = sampled.summary.sampling.as_ref().expect("a sampled run has a sampling section");
    assert!(s.windows.len() >= 9, "{what}: {} windows", s.windows.len());
    let f = &full.summary.latency_us;
    for (op, full, est) in
        [("all", &f.all, &s.estimate.all), ("read", &f.read, &s.estimate.read), ("write", &f.write, &s.estimate.write)]
    {
        if full.count == 0 {
            continue;
        }
        assert!(est.mean.contains(full.mean), "{what} {op}: full mean {} outside {:?}", full.mean, est.mean);
        assert!(est.p99.contains(full.p99), "{what} {op}: full p99 {} outside {:?}", full.p99, est.p99);
    }
    // Most requests ran in fast-forward; every one is counted once.
    assert_eq!(
        s.fast_forward_requests + s.timed_requests,
        sampled.summary.host.read_requests + sampled.summary.host.write_requests
    );
    assert!(s.fast_forward_requests > s.timed_requests, "{what}: {s:?}");
    assert_eq!(
        sampled.summary.latency_us.all.count, s.measured_requests,
        "{what}: only measured requests are latencies"
    );
}

fn simulated_s(out: &RunOutput) -> f64 {
    let r = &out.summary.throughput;
    (out.summary.host.read_requests + out.summary.host.write_requests) as f64 / r.iops
}

/// A closed loop on the block FTL under the reservation scheduler: no FTL decision depends on
/// time (rotation allocation, no idle windows), so the bookkeeping is the full run's to the
/// byte, and the fast-forward clock (the last window's rate) keeps simulated time within 5%
/// of the full run's.
#[test]
fn closed_loop_block_drive_matches_full_timing() {
    let sets = [
        "run.until=\"writes:40dw\"",
        "run.progress=\"off\"",
        "workload.read_ratio=0.3",
        "timing.scheduler=\"reservation\"",
    ];
    let (full, sampled) = both("tiny", &sets);
    assert_within(&full, &sampled, "block");
    assert_eq!(full.summary.flash, sampled.summary.flash, "the same flash work");
    assert_eq!(full.summary.gc, sampled.summary.gc);
    assert_eq!(full.erase_histogram, sampled.erase_histogram);
    let (a, b) = (simulated_s(&full), simulated_s(&sampled));
    assert!((a - b).abs() < 0.05 * a, "simulated time {b} s sampled vs {a} s full");
}

/// The same under the queued scheduler: windows drain their requests before timing goes off,
/// and work left queued runs when it comes back on. With strict rotation (`least_loaded`, the
/// queued default, places by the dies' load, which fast-forward does not have). Timed, the
/// soft threshold's cleaning is stepped as the dies have room and fast-forward cleans at once,
/// so the GC differs (`docs/performance.md`, "Where the approximation fails"); the host's
/// work is the same.
///
/// Which flash work runs when then depends on time, so each seed is another draw of both
/// runs, and a 95% interval may miss the full run's figure on any one of them: over seeds
/// 1-12, before and after `Done` carried its transaction's id (2026-11-30), the mean was
/// inside at 22 of 24, the p99 at 21 of 24. One seed passing or failing says little (seed 1,
/// alone here before that day, had its p99 just outside after it); six seeds with four or
/// more inside pass 97% of the time at the p99's measured coverage and 7% of the time were
/// it 30%.
#[test]
fn closed_loop_under_the_queued_scheduler_matches_full_timing() {
    let (mut mean_in, mut p99_in, mut seen) = (0, 0, Vec::new());
    for seed in 1..=6 {
        let seed = format!("seed={seed}");
        let sets = ["run.until=\"writes:20dw\"", "run.progress=\"off\"", "ftl.allocation=\"rotation\"", &seed];
        let (full, sampled) = both("tiny", &sets);
        let host =
            |o: &RunOutput| (o.summary.host.write_requests, o.summary.flash.page_programs_by_cause.get(Cause::Host));
        assert_eq!(host(&full), host(&sampled), "{seed}: the same host writes and host programs");
        assert_eq!(full.summary.latency_us.read.count, 0, "a write-only run: 'all' is the writes");
        let s = sampled.summary.sampling.as_ref().expect("a sampled run has a sampling section");
        let (f, est) = (&full.summary.latency_us.all, &s.estimate.all);
        mean_in += usize::from(est.mean.contains(f.mean));
        p99_in += usize::from(est.p99.contains(f.p99));
        seen.push(format!("{seed}: mean {} in {:?}, p99 {} in {:?}", f.mean, est.mean, f.p99, est.p99));
    }
    assert!(mean_in >= 4 && p99_in >= 4, "mean covered {mean_in} of 6, p99 {p99_in} of 6:\n{}", seen.join("\n"));
}

/// With foreground cleaning (`gc.mode`) nothing steps, timed or not, so no decision depends on
/// time and the queued scheduler's windows leave the flash work the full run's to the byte:
/// nothing is lost or done twice where timing goes off and comes back on.
#[test]
fn closed_loop_under_the_queued_scheduler_keeps_the_flash_work_without_stepping() {
    let sets =
        ["run.until=\"writes:20dw\"", "run.progress=\"off\"", "ftl.allocation=\"rotation\"", "gc.mode=\"foreground\""];
    let (full, sampled) = both("tiny", &sets);
    assert_within(&full, &sampled, "queued, foreground cleaning");
    assert_eq!(full.summary.flash, sampled.summary.flash);
    assert_eq!(full.summary.gc, sampled.summary.gc);
}

/// The open-channel stack (FT-PASSD's small drive, its synthetic writes at QD1).
#[test]
fn open_channel_drive_matches_full_timing() {
    let (full, sampled) = both("ftpassd-small", &["run.until=\"requests:200000\"", "run.progress=\"off\""]);
    assert!(full.summary.open_channel.is_some());
    assert_within(&full, &sampled, "open channel");
}

/// An open loop the drive keeps up with (Poisson arrivals at about a third of its rate, no
/// background GC: idle windows in fast-forward are not limited by time, so with it on the GC
/// differs, as `docs/performance.md` measures), under the reservation scheduler (rotation).
#[test]
fn open_loop_within_the_drives_rate_matches_full_timing() {
    let sets = [
        "timing.scheduler=\"reservation\"",
        "run.until=\"writes:20dw\"",
        "run.progress=\"off\"",
        "workload.arrival.process=\"poisson\"",
        "workload.arrival.rate_iops=40",
        "workload.read_ratio=0.5",
        "gc.background=false",
    ];
    let (full, sampled) = both("tiny", &sets);
    assert_within(&full, &sampled, "open loop");
    assert_eq!(full.summary.flash, sampled.summary.flash);
    // Arrivals set the clock in fast-forward as in a timed run.
    let (a, b) = (simulated_s(&full), simulated_s(&sampled));
    assert!((a - b).abs() < 0.01 * a, "simulated time {b} s sampled vs {a} s full");
}

/// A run to death with windows every 10% of the drive's rated life: windows come in order of
/// wear, the time series has one row closing each window with its latency, and rows with no
/// measured request have none (NaN), not zero.
#[test]
fn a_run_to_death_samples_by_life_used() {
    let sets = [
        "sampling.enabled=true",
        "sampling.every=\"10%\"",
        "sampling.warmup_requests=500",
        "sampling.window_requests=1000",
    ];
    let sets: Vec<&str> = common::ZOMBIE_TO_DEATH.iter().copied().chain(["run.progress=\"off\""]).chain(sets).collect();
    let out = common::run_preset("tiny", &sets);
    let s = out.summary.sampling.as_ref().unwrap();
    assert!(out.summary.run.stop.starts_with("drive died"), "{}", out.summary.run.stop);
    assert!(s.windows.len() >= 8, "{} windows", s.windows.len());
    for w in s.windows.windows(2) {
        assert!(w[1].life_used >= w[0].life_used + 0.1 - 0.02, "{} then {}", w[0].life_used, w[1].life_used);
        assert!(w[1].start_s > w[0].end_s);
    }
    let closing: Vec<_> = out.timeseries.rows.iter().filter(|r| r.sample.is_some_and(|x| x.window.is_some())).collect();
    assert_eq!(closing.len(), s.windows.len());
    for (r, w) in closing.iter().zip(&s.windows) {
        assert_eq!(r.sample.unwrap().measured_requests, w.all.count);
        assert!((r.mean_latency_us - w.all.mean).abs() < 1e-6 * w.all.mean);
    }
    let unmeasured = out.timeseries.rows.iter().filter(|r| r.sample.is_some_and(|x| x.measured_requests == 0));
    for r in unmeasured {
        assert!(r.mean_latency_us.is_nan() && r.p99_latency_us.is_nan());
    }
    let csv = out.timeseries.to_csv();
    assert!(csv.lines().next().unwrap().ends_with(",sample_window,measured_requests"));
}

/// Keys of a section that is off, and sampling without timing, are refused.
#[test]
fn sampling_errors_name_the_key() {
    let err = common::config_error;
    assert!(err(&["sampling.enabled=true", "ftl.timing=false"]).contains("ftl.timing = false"));
    assert!(err(&["sampling.every=\"1%\""]).contains("sampling.enabled"));
    assert!(err(&["sampling.enabled=true", "sampling.every=\"200%\""]).contains("sampling.every"));
}

mod shared_traces {
    use super::*;

    fn trace(rel: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(rel);
        assert!(p.exists(), "{} not found", p.display());
        p.display().to_string()
    }

    /// UMass Financial1 looped closed loop on the ZombieNAND trace drive (scaled down), as
    /// Figures 5-6 replay it (under reservation, which the ZombieNAND presets state): the full
    /// run's latency inside the sampled intervals.
    #[test]
    #[ignore = "needs ../shared/traces"]
    fn a_looped_trace_matches_full_timing() {
        let path = format!("workload.trace.path=\"{}\"", trace("umass/Financial1-first10k.ascii"));
        let sets = [
            "workload.kind=\"trace\"",
            &path,
            "workload.trace.loops=0",
            "workload.trace.fold=\"remap_first\"",
            "workload.trace.timestamps=\"ignore\"",
            "run.until=\"writes:30dw\"",
            "run.progress=\"off\"",
            "timing.scheduler=\"reservation\"",
        ];
        let (full, sampled) = both("tiny", &sets);
        assert_within(&full, &sampled, "Financial1");
        assert_eq!(full.summary.flash, sampled.summary.flash);
    }

    /// An MSR trace on its timestamps on the open-channel stack (FT-PASSD's drive), under
    /// reservation. Under the queued scheduler the full run's read p99 (16,515 us) falls
    /// outside the sampled interval (13,951-14,426 us; measured 2026-11-25, not explained
    /// yet: docs/performance.md, "Sampled timing").
    #[test]
    #[ignore = "needs ../shared/traces"]
    fn an_open_channel_trace_replay_matches_full_timing() {
        let path = format!("workload.trace.path=\"{}\"", trace("msr/rsrch_1.csv"));
        let sets = [
            "workload.kind=\"trace\"",
            &path,
            "workload.trace.loops=0",
            "run.until=\"requests:300000\"",
            "run.progress=\"off\"",
            "timing.scheduler=\"reservation\"",
        ];
        let (full, sampled) = both("ftpassd-small", &sets);
        assert_within(&full, &sampled, "rsrch_1");
    }
}
