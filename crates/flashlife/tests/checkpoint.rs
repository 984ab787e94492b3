//! Checkpoints (issue #4): a run stopped at a checkpoint and resumed ends exactly as the
//! uninterrupted run does (summary apart from the process's own wall time and memory, time
//! series, erase histogram, latency CDFs), for every drive architecture and technique and
//! under either scheduler (the queued one stopped with requests in flight and its events
//! pending); bad checkpoint files are refused without touching the run folder.

mod common;

use std::path::Path;

use flashlife::ftl::second_write::SecondWriteCounters;
use flashlife::sim::RunOutput;
use flashlife::{checkpoint, Config, ConfigBuilder, Simulator};

fn config(preset: &str, sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::new().preset(preset).unwrap();
    for s in sets {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// The summary without the fields that describe the process rather than the simulation.
fn comparable(out: &RunOutput) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&out.summary.to_json()).unwrap();
    let run = v["run"].as_object_mut().unwrap();
    for k in ["wall_seconds", "page_ops_per_second", "peak_rss_bytes"] {
        assert!(run.remove(k).is_some(), "summary.run.{k} missing");
    }
    v
}

fn assert_same_run(a: &RunOutput, b: &RunOutput, what: &str) {
    assert_eq!(comparable(a), comparable(b), "{what}: summaries differ");
    assert_eq!(a.timeseries.to_csv(), b.timeseries.to_csv(), "{what}: time series differ");
    assert_eq!(a.erase_histogram, b.erase_histogram, "{what}: erase histograms differ");
    assert_eq!(a.latency_cdf.to_csv(), b.latency_cdf.to_csv(), "{what}: latency CDFs differ");
}

/// Run `cfg` uninterrupted, then again stopped after each of `stops` requests (checkpoint,
/// then resume from the file), and check both end the same.
fn check_resume(cfg: Config, stops: &[u64], what: &str) -> RunOutput {
    let whole = Simulator::new(cfg.clone()).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(whole.summary.run.requests > *stops.last().unwrap(), "{what}: the run ends before the last stop");

    let dir = tempfile::tempdir().unwrap();
    let path = checkpoint::path_in(dir.path());
    let mut sim = Simulator::new(cfg).unwrap();
    sim.set_checkpoint_path(path.clone());
    for &stop in stops {
        sim.set_interrupt_after(stop);
        let part = sim.run().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(part.summary.run.stop, "interrupted", "{what}");
        assert_eq!(part.summary.run.requests, stop, "{what}");
        assert!(path.exists(), "{what}: no checkpoint written on interruption");
        sim = Simulator::resume(&path).unwrap_or_else(|e| panic!("{what}: resume: {e}"));
    }
    let resumed = sim.run().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(!path.exists(), "{what}: a finished run keeps a stale checkpoint");
    assert_same_run(&whole, &resumed, what);
    resumed
}

/// [`check_resume`] of `preset` with `sets` under each scheduler in turn (the queued one
/// stopped with requests and its events in flight): the resumed runs, reservation's first.
fn check_resume_under_both(preset: &str, sets: &[&str], stops: &[u64]) -> [RunOutput; 2] {
    ["reservation", "queued"].map(|scheduler| {
        let with = format!("timing.scheduler=\"{scheduler}\"");
        check_resume(config(preset, &[sets, &[with.as_str()]].concat()), stops, &format!("{preset}, {scheduler}"))
    })
}

#[test]
fn block_ftl_with_gc_wear_leveling_and_the_oracle() {
    let cfg = config(
        "tiny",
        &[
            "run.until=requests:60000",
            "workload.read_ratio=0.3",
            "wear_leveling.enabled=true",
            "ftl.integrity_oracle=true",
            "stats.interval=\"0.2dw\"",
        ],
    );
    let out = check_resume(cfg, &[10_007, 33_333], "tiny");
    assert!(out.summary.flash.block_erases > 100, "the run should collect garbage");
}

/// Invariant: trims and the DRAM data cache (its lines, LRU order, dirty units and versions)
/// are part of the checkpoint: a run stopped twice and resumed ends as the whole run does,
/// under either scheduler (the queued one stopped with requests and destages in flight).
#[test]
fn trims_and_the_dram_cache() {
    let sets = [
        "run.until=requests:40000",
        "workload.kind=\"zipf\"",
        "workload.read_ratio=0.3",
        "workload.trim_ratio=0.1",
        "cache.size_bytes=1048576",
        "cache.line_bytes=16384",
        "ftl.integrity_oracle=true",
    ];
    for out in check_resume_under_both("tiny", &sets, &[9_001, 25_000]) {
        let c = out.summary.cache.expect("a cache section");
        assert!(c.destages > 0 && c.read_hits > 0 && out.summary.trim.expect("a trim section").mapped_units > 0);
    }
}

/// Invariant: the cached mapping table (its LRU order, dirty entries, GC updates waiting, the
/// translation pages' blocks) is part of the checkpoint: a run stopped twice and resumed ends
/// as the whole run does, under either scheduler (the queued one with a miss's translation
/// read and stepped updates in flight).
#[test]
fn the_cached_mapping_table() {
    let sets = [
        "run.until=requests:40000",
        "workload.kind=\"zipf\"",
        "workload.read_ratio=0.4",
        "workload.trim_ratio=0.05",
        "mapping_cache.size_bytes=1024",
        "ftl.integrity_oracle=true",
    ];
    for out in check_resume_under_both("tiny", &sets, &[9_001, 27_000]) {
        let c = out.summary.mapping_cache.expect("a mapping_cache section");
        assert!(c.dirty_evictions > 0 && c.gc_updates > 0, "{c:?}");
    }
}

#[test]
fn open_loop_with_idle_background_gc() {
    let cfg = config(
        "tiny",
        &[
            "run.until=requests:40000",
            "workload.arrival.process=\"poisson\"",
            "workload.arrival.rate_iops=1500",
            "gc.background=true",
            "gc.victim=\"cost_benefit\"",
            "stats.interval=\"1s\"",
        ],
    );
    check_resume(cfg, &[12_345], "open loop");
}

#[test]
fn random_victims_and_injected_failures() {
    let cfg = config(
        "tiny",
        &[
            "run.until=requests:40000",
            "gc.victim=\"random\"",
            "capacity.overprovisioning=0.25",
            "failures.program_fail_rate=0.00003",
            "failures.erase_fail_rate=0.00003",
            "ftl.integrity_oracle=true",
        ],
    );
    let out = check_resume(cfg, &[20_001], "failures");
    assert!(out.summary.failures.program > 0);
}

#[test]
fn zombie_drive_to_death_across_mode_switches() {
    let cfg = config("zombie-synthetic-tlc", common::ZOMBIE_TO_DEATH);
    let whole = Simulator::new(cfg.clone()).and_then(|s| s.run()).unwrap();
    assert!(whole.summary.lifetime.dead && whole.summary.lifetime.mode_switches > 0);
    let n = whole.summary.run.requests;
    check_resume(cfg, &[n / 3, 2 * n / 3], "zombie");
}

#[test]
fn salvage_with_the_page_error_model() {
    let cfg = config(
        "salvage-small",
        &[
            "ftl.precondition_drive_writes=0.5",
            "failures.on_program_failure=\"skip_page\"",
            "run.until=requests:30000",
            "ftl.integrity_oracle=true",
        ],
    );
    let out = check_resume(cfg, &[15_000], "salvage");
    assert!(out.summary.failures.bad_pages > 0, "no page went bad");
}

#[test]
fn reusable_ssd_second_writes() {
    let cfg = config(
        "reusable-small",
        &["geometry.blocks_per_plane=256", "run.until=requests:60000", "ftl.integrity_oracle=true"],
    );
    let out = check_resume(cfg, &[37_000], "reusable");
    assert!(
        out.summary.technique::<SecondWriteCounters>("reusable").is_some_and(|s| s.units > 0),
        "no second writes happened"
    );
}

/// Under the queued scheduler, with floors and watermarks that leave its pools room above the
/// reserve, so that its GC steps (`SecondWriteTechnique::next_erase`) and the run stops with a
/// victim part-moved.
#[test]
fn reusable_ssd_with_stepped_gc_under_the_queued_scheduler() {
    let cfg = config(
        "reusable-small",
        &[
            "geometry.ways=2",
            "geometry.blocks_per_plane=256",
            "capacity.overprovisioning=0.28",
            "workload.kind=\"zipf\"",
            "workload.zipf.alpha=1",
            "run.until=requests:30000",
            "ftl.integrity_oracle=true",
            "timing.scheduler=\"queued\"",
            "reusable.min_clean_blocks=12",
            "gc.low_watermark=0.08",
            "gc.high_watermark=0.1",
        ],
    );
    let out = check_resume(cfg, &[11_000, 23_000], "reusable, queued");
    assert!(out.summary.gc.victims > 100, "too little GC to step: {} victims", out.summary.gc.victims);
    assert!(
        out.summary.technique::<SecondWriteCounters>("reusable").is_some_and(|s| s.units > 0),
        "no second writes happened"
    );
}

#[test]
fn reusable_ssd_with_recency_classification_and_the_first_write_reserve() {
    // The classifier's per-unit history and the partition counts survive a stop.
    let cfg = config(
        "reusable-small",
        &[
            "geometry.blocks_per_plane=256",
            "run.until=requests:60000",
            "ftl.integrity_oracle=true",
            "reusable.hot_cold=\"recency\"",
            "reusable.first_write_op=0.5",
            "workload.kind=\"zipf\"",
            "workload.zipf.alpha=1.2",
        ],
    );
    let out = check_resume(cfg, &[21_000, 44_000], "reusable-recency");
    assert!(
        out.summary.technique::<SecondWriteCounters>("reusable").is_some_and(|s| s.units > 0),
        "no second writes happened"
    );
}

#[test]
fn open_channel_ft_passd_with_a_program_failure() {
    // Under the queued scheduler, stopped with the host FTL's cleaning part-stepped.
    let sets = ["run.until=requests:20000", "failures.program_fail_rate=0.002", "ftl.integrity_oracle=true"];
    check_resume_under_both("ftpassd-small", &sets, &[9_000]);
}

#[test]
fn read_disturb_retry_and_reclaim() {
    let cfg = config(
        "tiny",
        &[
            "run.until=requests:40000",
            "workload.read_ratio=0.9",
            "reliability.model=\"power_law\"",
            "reliability.read_reclaim=\"read_count\"",
            "reliability.read_count_threshold=2000",
        ],
    );
    check_resume(cfg, &[25_000], "read relaxation");
}

/// Placement by budget class: the per-unit classes and the fifth write point survive a
/// checkpoint (reads of one half of the drive hinted, read disturb scaled up so blocks are
/// reclaimed and placed within the run).
#[test]
fn read_reclaim_with_budget_placement() {
    let cfg = config(
        "tiny",
        &[
            "run.until=requests:40000",
            "workload.read_ratio=0.9",
            "reliability.model=\"power_law\"",
            "reliability.rber_set=\"custom\"",
            "reliability.power_law={epsilon=1e-5, alpha=3.33e-11, k=2.0, beta=5.23e-9, m=1.0, n=0.5, gamma=1e-8, p=1.0, q=1.0}",
            "reliability.base_cycles=1500",
            "reliability.read_reclaim=\"hinted\"",
            "reliability.hints=[{lba_end=16384, budget_us=2000}]",
            "reliability.budget_placement=true",
        ],
    );
    let out = check_resume(cfg, &[25_000], "budget placement");
    assert!(out.summary.reliability.reclaim_erases > 10, "reclaims: {}", out.summary.reliability.reclaim_erases);
}

/// Ignored by default; `scripts/test.sh` runs them (`-- --ignored shared_traces::`) when
/// `../shared/traces` exists.
mod shared_traces {
    use super::*;

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn real_trace_replay() {
        // A plain MSR trace and a gzip one (whose stream cannot be seeked: the resume re-reads it).
        for (file, stops) in
            [("msr/rsrch_1.csv", &[5_000u64, 30_000][..]), ("msr/web_0-first100k.csv.gz", &[40_000][..])]
        {
            let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(file);
            assert!(trace.exists(), "needs ../shared/traces: {} not found", trace.display());
            let path = format!("workload.trace.path={:?}", trace.display().to_string());
            let cfg = config(
                "tiny",
                &[
                    "workload.kind=\"trace\"",
                    &path,
                    "workload.trace.loops=3",
                    "workload.trace.fold=\"modulo\"",
                    "run.until=\"end\"",
                ],
            );
            check_resume(cfg, stops, file);
        }
    }
}

#[test]
fn periodic_checkpoints_survive_a_crash() {
    // A run killed without warning goes on from its last periodic checkpoint.
    let cfg = config("tiny", &["run.until=requests:30000", "run.checkpoint_every=\"0.25dw\""]);
    let whole = Simulator::new(cfg.clone()).and_then(|s| s.run()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = checkpoint::path_in(dir.path());
    let mut sim = Simulator::new(cfg).unwrap();
    sim.set_checkpoint_path(path.clone());
    sim.set_crash_after(20_000);
    assert!(sim.run().is_err());
    let resumed = Simulator::resume(&path).unwrap();
    let resumed = resumed.run().unwrap();
    assert_same_run(&whole, &resumed, "periodic");
}

/// The queued scheduler's drive (`tests/queued_scheduler.rs`) under the queued scheduler.
fn queued(sets: &[&str]) -> Config {
    common::config(&[common::PEER, &["timing.scheduler=\"queued\""], sets].concat())
}

/// How many requests the checkpoint at `path` had served: a run resumed from it and stopped
/// at once (its own checkpoint going elsewhere, so `path` stays as it was).
fn requests_at(path: &Path) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let mut probe = Simulator::resume(path).unwrap();
    probe.set_checkpoint_path(checkpoint::path_in(dir.path()));
    probe.set_interrupt_after(0);
    probe.run().unwrap().summary.run.requests
}

#[test]
fn queued_scheduler_with_suspension_and_the_oracle() {
    // Stopped with 32 requests in flight, GC queued behind host work and programs suspended:
    // the engine's clock, queues and events, the dependency ring and the run loop's requests
    // in flight all go on from the file.
    let cfg = queued(&[
        "workload.read_ratio=0.3",
        "timing.suspension=true",
        "ftl.integrity_oracle=true",
        "run.until=\"requests:30000\"",
    ]);
    let out = check_resume(cfg, &[7_001, 19_999], "queued");
    let s = out.summary.scheduler.as_ref().expect("a queued run has a scheduler section");
    assert!(s.program_suspensions > 0, "nothing was suspended");
    assert!(out.summary.flash.block_erases > 100, "the run should collect garbage");
    assert!(out.summary.integrity.checks > 0);
}

/// Invariant: a run stopped while a failed block's moves are still being stepped
/// (`ftl/chores.rs`) resumes byte-identically: the chore queues are part of the checkpoint.
/// Stops every 997 requests; at least one must fall mid-retirement.
#[test]
fn queued_scheduler_stopped_mid_retirement() {
    let cfg = queued(&[
        "capacity.overprovisioning=0.25",
        "gc.low_watermark=0.1",
        "gc.high_watermark=0.12",
        "failures.program_fail_rate=0.00005",
        "ftl.integrity_oracle=true",
        "run.until=\"requests:40000\"",
    ]);
    let whole = Simulator::new(cfg.clone()).and_then(|s| s.run()).unwrap();
    // Every failed block is emptied and retired within the run: retirement moves get their
    // share of a saturated die (`timing.chore_ratio`; before it, 0 of 7 here).
    let f = &whole.summary.failures;
    assert!(f.retired_blocks > 0 && f.retired_blocks + 1 >= f.program, "{f:?}");
    let dir = tempfile::tempdir().unwrap();
    let path = checkpoint::path_in(dir.path());
    let mut sim = Simulator::new(cfg).unwrap();
    sim.set_checkpoint_path(path.clone());
    let mut mid = 0;
    for stop in (1..40).map(|k| k * 997) {
        sim.set_interrupt_after(stop);
        let part = sim.run().unwrap();
        assert_eq!(part.summary.run.stop, "interrupted");
        sim = Simulator::resume(&path).unwrap();
        mid += (sim.ftl().chores_pending() > 0) as u32;
    }
    assert!(mid > 0, "no stop fell while a retirement was being stepped");
    let resumed = sim.run().unwrap();
    assert_same_run(&whole, &resumed, "queued mid-retirement");
    assert_eq!(resumed.summary.integrity.violation, None);
}

#[test]
fn queued_scheduler_open_loop() {
    // Poisson arrivals near the drive's capacity: queues build and drain, idle gaps go to
    // background GC, and a stop can fall with the engine's clock ahead of the next arrival.
    let cfg = queued(&[
        "workload.read_ratio=0.3",
        "workload.arrival.process=\"poisson\"",
        "workload.arrival.rate_iops=1500",
        "gc.background=true",
        "timing.gc_ratio=[4, 1]",
        "run.until=\"requests:30000\"",
        "stats.interval=\"1s\"",
    ]);
    let out = check_resume(cfg, &[12_345], "queued open loop");
    assert!(out.summary.host_queue_wait_us.max > 0.0, "no request ever waited for a queue slot");
    assert!(out.summary.gc.valid_units_moved_idle > 0, "no GC in idle windows");
}

#[test]
fn queued_scheduler_periodic_checkpoints_survive_a_crash() {
    // Every simulated second (the engine's clock), then killed without warning.
    let cfg = queued(&[
        "workload.read_ratio=0.3",
        "timing.suspension=true",
        "timing.policy=\"fifo\"",
        "run.until=\"requests:30000\"",
        "run.checkpoint_every=\"1s\"",
    ]);
    let whole = Simulator::new(cfg.clone()).and_then(|s| s.run()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = checkpoint::path_in(dir.path());
    let mut sim = Simulator::new(cfg).unwrap();
    sim.set_checkpoint_path(path.clone());
    sim.set_crash_after(20_000);
    assert!(sim.run().is_err());
    let at = requests_at(&path);
    assert!((10_000..20_000).contains(&at), "the last periodic checkpoint was after {at} requests");
    let resumed = Simulator::resume(&path).unwrap().run().unwrap();
    assert_same_run(&whole, &resumed, "queued periodic");
}

#[test]
fn bad_checkpoints_are_refused_and_the_folder_left_alone() {
    let cfg = config("tiny", &["run.until=requests:20000"]);
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Simulator::new(cfg).unwrap();
    sim.set_checkpoint_path(checkpoint::path_in(dir.path()));
    sim.set_interrupt_after(7_000);
    let part = sim.run().unwrap();
    flashlife::run_dir::write_outputs(&part, dir.path()).unwrap();
    let path = checkpoint::path_in(dir.path());
    let good = std::fs::read(&path).unwrap();
    let summary = std::fs::read(dir.path().join("summary.json")).unwrap();

    let check_refused = |bytes: &[u8], needle: &str| {
        std::fs::write(&path, bytes).unwrap();
        let e = flashlife::resume_dir(dir.path(), Default::default()).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(needle), "expected `{needle}` in: {e}");
        assert!(e.contains("checkpoint.bin"), "the message names the file: {e}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "a refused checkpoint was modified");
        assert_eq!(std::fs::read(dir.path().join("summary.json")).unwrap(), summary, "outputs were touched");
    };
    check_refused(&good[..good.len() / 2], "truncated");
    check_refused(&good[..20], "truncated");
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 1;
    check_refused(&flipped, "checksum");
    check_refused(b"erase_count,blocks\n0,1\n", "not a flashlife checkpoint");

    // The intact file still resumes.
    std::fs::write(&path, &good).unwrap();
    let out = flashlife::resume_dir(dir.path(), Default::default()).unwrap();
    assert_eq!(out.summary.run.requests, 20_000);
    assert!(!path.exists());
}

/// Sampled timing, stopped in fast-forward, in a window's measurement and in a warm-up, under
/// both schedulers (the queued one drains its window on resume as it would have run).
#[test]
fn sampled_timing_across_its_phases() {
    for scheduler in ["reservation", "queued"] {
        let cfg = config(
            "tiny",
            &[
                "run.until=requests:40000",
                "workload.read_ratio=0.3",
                &format!("timing.scheduler=\"{scheduler}\""),
                "sampling.enabled=true",
                "sampling.every=\"10%\"",
                "sampling.warmup_requests=500",
                "sampling.window_requests=1000",
            ],
        );
        let out = check_resume(cfg, &[3_000, 8_700, 12_200], scheduler);
        assert_eq!(out.summary.sampling.as_ref().unwrap().windows.len(), 10, "{scheduler}");
    }
}

/// Flows (`[[flows]]`): a closed-loop high-priority reader, an open-loop writer and a
/// closed-loop mix on their own ranges, over `sets`.
fn with_flows(sets: &[&str]) -> Config {
    let flows = r#"
[[flows]]
name = "reader"
queue_depth = 4
priority = "high"
range = [0.0, 0.25]
[flows.workload]
kind = "uniform"
read_ratio = 0.9

[[flows]]
name = "writer"
queue_depth = 16
range = [0.25, 0.75]
[flows.workload]
kind = "zipf"
[flows.workload.arrival]
process = "poisson"
rate_iops = 800.0

[[flows]]
name = "mixed"
queue_depth = 8
range = [0.75, 1.0]
[flows.workload]
kind = "hotcold"
read_ratio = 0.3
"#;
    let mut b = ConfigBuilder::new().toml_str(flows, "flows").unwrap();
    for s in sets {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn flows_under_either_scheduler() {
    // Each flow's position in its workload, requests in flight, histograms and time-series
    // interval, and the FTL's GC counts by range, go on from the file; under the queued
    // scheduler the high-priority marks of requests in flight and of queued work too.
    let tiny: Vec<&str> = [
        "geometry.channels=2",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=32",
        "flash.page_size=4096",
        "ftl.integrity_oracle=true",
        "run.until=\"requests:30000\"",
        "stats.interval=\"0.5s\"",
    ]
    .to_vec();
    let out = check_resume(with_flows(&tiny), &[9_001, 21_000], "flows, reservation");
    assert_eq!(out.summary.flows.len(), 3);
    let mut queued_sets = [common::PEER, &["timing.scheduler=\"queued\"", "run.until=\"requests:30000\""]].concat();
    queued_sets.retain(|s| !s.starts_with("run.until=\"writes"));
    let out = check_resume(with_flows(&queued_sets), &[7_001, 19_999], "flows, queued");
    assert!(out.summary.flows.iter().all(|f| f.read_requests + f.write_requests > 1_000));
}
