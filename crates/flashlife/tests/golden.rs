//! Golden results: the guard of every refactor (issue 15). A fixed set of runs — every preset
//! at a short stop, each technique with its mechanisms exercised, one run with failures, one
//! resumed from a checkpoint, one trace per format — must produce, byte for byte, the
//! `summary.json` recorded in `tests/golden/NAME.json` (only the process's wall time, speed
//! and memory excluded) and the recorded SHA-256 of its time series, erase histogram and
//! latency CDFs.
//!
//! Reference: an invariant, "a change of shape changes no number". These are regression pins
//! by design: they say nothing about whether the numbers are right (the other tests do), only
//! that they did not move. A change that moves them on purpose re-records them with
//! `FLASHLIFE_BLESS_GOLDEN=1 cargo test --release -p flashlife --test golden -- --include-ignored`
//! and says why in its commit.

mod common;

use std::path::{Path, PathBuf};

use flashlife::sim::RunOutput;
use flashlife::{checkpoint, config::presets, Config, ConfigBuilder, Simulator};
use sha2::{Digest, Sha256};

/// Fields that describe the process, not the simulation.
const PROCESS_FIELDS: [&str; 3] = ["wall_seconds", "page_ops_per_second", "peak_rss_bytes"];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The records made before the queued scheduler became the default (and the lifetime
/// presets, which state it) run under reservation: the pin goes ahead of the case's own
/// settings, and the summary's `timing.scheduler` names it. The queued default has records of
/// its own (`the_queued_default`).
const RESERVATION: &str = "timing.scheduler=\"reservation\"";

fn config(preset: &str, sets: &[&str]) -> Config {
    config_under(preset, &[&[RESERVATION], sets].concat())
}

fn config_under(preset: &str, sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::new().preset(preset).unwrap_or_else(|e| panic!("{preset}: {e}"));
    for s in sets {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{preset}: {e}"))
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The record of a run, as the fixture file holds it.
fn record(preset: &str, sets: &[&str], out: &RunOutput) -> String {
    let mut summary: serde_json::Value = serde_json::from_str(&out.summary.to_json()).unwrap();
    let run = summary["run"].as_object_mut().unwrap();
    for k in PROCESS_FIELDS {
        run.remove(k);
    }
    // A trace is named by this machine's path, and so is the configuration that holds it:
    // its size and contents stay in the record, the path and the configuration hash do not.
    let prov = summary["provenance"].as_object_mut().unwrap();
    // The commit the test binary was built from changes with every commit; it is not a result.
    prov.remove("build_commit");
    if let Some(trace) = prov.get_mut("trace").and_then(|t| t.as_object_mut()) {
        trace.remove("path");
        prov.remove("config_sha256");
    }
    let mut hist = String::new();
    for (e, n) in &out.erase_histogram {
        hist += &format!("{e},{n}\n");
    }
    let rec = serde_json::json!({
        "preset": preset,
        "set": sets,
        "summary": summary,
        "timeseries_csv_sha256": sha256(&out.timeseries.to_csv()),
        "erase_histogram_sha256": sha256(&hist),
        "latency_cdf_csv_sha256": sha256(&out.latency_cdf.to_csv()),
    });
    serde_json::to_string_pretty(&rec).unwrap() + "\n"
}

/// Compare the run's record with `tests/golden/NAME.json` (or write it when blessing).
fn check(name: &str, preset: &str, sets: &[&str], out: &RunOutput) {
    let path = golden_dir().join(format!("{name}.json"));
    let got = record(preset, sets, out);
    if std::env::var_os("FLASHLIFE_BLESS_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record it with FLASHLIFE_BLESS_GOLDEN=1)", path.display()));
    if got != want {
        let line = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
        let show = |t: &str| t.lines().nth(line).unwrap_or("<end>").to_string();
        panic!(
            "{name}: the run no longer matches {} at line {}:\n  recorded: {}\n  now:      {}",
            path.display(),
            line + 1,
            show(&want),
            show(&got)
        );
    }
}

fn run_case(name: &str, preset: &str, sets: &[&str]) {
    let out = Simulator::new(config(preset, sets)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{name}: {e}"));
    check(name, preset, sets, &out);
}

/// A case under the defaults as they are (the queued scheduler, `least_loaded` allocation).
fn run_queued_case(name: &str, preset: &str, sets: &[&str]) {
    let out =
        Simulator::new(config_under(preset, sets)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(out.summary.provenance.scheduler, "queued", "{name}: the default scheduler");
    check(name, preset, sets, &out);
}

/// The queued scheduler as the default runs it: the default drive closed-loop, a read/write
/// mix with suspension, an open-loop replay with idle cleaning, the open-channel FT-PASSD
/// drive and salvage with runtime failures (stepped GC, the victim's pace near the reserve,
/// least-loaded allocation, per-die queues).
#[test]
fn the_queued_default() {
    let short = ["run.until=\"requests:20000\"", "run.progress=\"off\""];
    run_queued_case("queued-default", "default", &short);
    run_queued_case(
        "queued-tiny-mix-suspension",
        "tiny",
        &[&short[..], &["workload.read_ratio=0.3", "timing.suspension=true", "ftl.integrity_oracle=true"]].concat(),
    );
    run_queued_case(
        "queued-tiny-open-loop",
        "tiny",
        &[
            &short[..],
            &[
                "workload.arrival.process=\"poisson\"",
                "workload.arrival.rate_iops=3000",
                "workload.read_ratio=0.3",
                "gc.background=true",
                "stats.interval=\"1s\"",
            ],
        ]
        .concat(),
    );
    run_queued_case(
        "queued-ftpassd-program-failures",
        "ftpassd-small",
        &[&short[..], &["failures.program_fail_rate=0.002", "ftl.integrity_oracle=true"]].concat(),
    );
    run_queued_case(
        "queued-salvage-skip-page",
        "salvage-small",
        &[&short[..], &["ftl.precondition_drive_writes=0.5", "failures.on_program_failure=\"skip_page\""]].concat(),
    );
}

/// Issue 22's TRIM and DRAM data cache, both on: trims mixed with reads and writes behind a
/// cache that evicts and destages all the time, with the oracle.
#[test]
fn trim_and_the_dram_cache() {
    run_case(
        "tiny-trim-cache",
        "tiny",
        &[
            "run.until=\"requests:40000\"",
            "run.progress=\"off\"",
            "workload.kind=\"zipf\"",
            "workload.read_ratio=0.3",
            "workload.trim_ratio=0.1",
            "workload.sizes=[4096, 16384]",
            "cache.size_bytes=1048576",
            "cache.line_bytes=16384",
            "ftl.integrity_oracle=true",
        ],
    );
}

/// Issue 22's cached mapping table: a small CMT under Zipf reads, writes and trims, dirty
/// evictions, GC updating and moving translation pages, with the oracle; under the
/// reservation scheduler and under the queued one. And the benchmark's cached-map drive
/// (`bench-16g` at op 0.25 with a 4 MiB map, steady state, QD32; a second in release), whose
/// translation pages' reads and programs on a busy drive exercise the queued engine's channel
/// arbitration as no other golden does: a change taken for a no-op there (no channel pass
/// after a program's end) moved that run and none of the others (docs/performance.md,
/// December 2).
#[test]
fn cached_mapping_table() {
    run_queued_case(
        "queued-bench-16g-mapping-cache",
        "bench-16g",
        &[
            "ftl.precondition=\"steady\"",
            "ftl.precondition_drive_writes=0.5",
            "host.queue_depth=32",
            "capacity.overprovisioning=0.25",
            "mapping_cache.size_bytes=4194304",
            "run.until=\"requests:20000\"",
            "run.progress=\"off\"",
        ],
    );
    let sets = [
        "run.until=\"requests:40000\"",
        "run.progress=\"off\"",
        "workload.kind=\"zipf\"",
        "workload.read_ratio=0.4",
        "workload.trim_ratio=0.05",
        "workload.sizes=[4096, 16384]",
        "mapping_cache.size_bytes=2048",
        "ftl.integrity_oracle=true",
    ];
    run_case("tiny-mapping-cache", "tiny", &sets);
    run_queued_case("queued-tiny-mapping-cache", "tiny", &sets);
}

/// The presets whose own preconditioning takes tens of seconds (seconds in release: the drives
/// with sources are 275-550 GB raw) start empty here.
const HEAVY: [&str; 4] = ["salvage-table1", "intel750-mlc", "intel535-mlc", "samsung970pro-mlc"];

#[test]
fn every_preset_at_a_short_stop() {
    for p in presets::ALL {
        let mut sets = vec!["run.until=\"requests:3000\"", "run.progress=\"off\""];
        if HEAVY.contains(&p.name) {
            sets.push("ftl.precondition=\"empty\"");
        }
        run_case(&format!("preset-{}", p.name), p.name, &sets);
    }
}

#[test]
fn gc_policies_timing_and_open_loop() {
    fn tiny<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut s = vec!["run.until=\"requests:40000\"", "run.progress=\"off\"", "workload.read_ratio=0.3"];
        s.extend_from_slice(extra);
        s
    }
    run_case("tiny-fifo-fastforward", "tiny", &tiny(&["gc.victim=\"fifo\"", "ftl.timing=false"]));
    run_case(
        "tiny-cost-benefit-wear-leveling",
        "tiny",
        &tiny(&["gc.victim=\"cost_benefit\"", "wear_leveling.enabled=true"]),
    );
    run_case(
        "tiny-open-loop-background-gc",
        "tiny",
        &tiny(&[
            "workload.arrival.process=\"poisson\"",
            "workload.arrival.rate_iops=3000",
            "gc.background=true",
            "stats.interval=\"1s\"",
        ]),
    );
    run_case("tiny-zipf-qd1", "tiny", &tiny(&["workload.kind=\"zipf\"", "host.queue_depth=1"]));
}

#[test]
fn failures_and_each_technique() {
    run_case(
        "failures-injected-random-victims",
        "tiny",
        &[
            "run.until=\"requests:40000\"",
            "gc.victim=\"random\"",
            "capacity.overprovisioning=0.25",
            "failures.program_fail_rate=0.00003",
            "failures.erase_fail_rate=0.00003",
            "ftl.integrity_oracle=true",
        ],
    );
    run_case("zombie-to-death", "zombie-synthetic-tlc", common::ZOMBIE_TO_DEATH);
    run_case(
        "salvage-skip-page",
        "salvage-small",
        &[
            "ftl.precondition_drive_writes=0.5",
            "failures.on_program_failure=\"skip_page\"",
            "run.until=\"requests:30000\"",
            "ftl.integrity_oracle=true",
        ],
    );
    run_case(
        "reusable-recency",
        "reusable-small",
        &[
            "geometry.blocks_per_plane=256",
            "run.until=\"requests:60000\"",
            "ftl.integrity_oracle=true",
            "reusable.hot_cold=\"recency\"",
            "reusable.first_write_op=0.5",
            "workload.kind=\"zipf\"",
            "workload.zipf.alpha=1.2",
        ],
    );
    run_case(
        "ftpassd-program-failures",
        "ftpassd-small",
        &["run.until=\"requests:20000\"", "failures.program_fail_rate=0.002", "ftl.integrity_oracle=true"],
    );
    run_case(
        "readrelax-reclaim",
        "tiny",
        &[
            "run.until=\"requests:40000\"",
            "workload.read_ratio=0.9",
            "reliability.model=\"power_law\"",
            "reliability.read_reclaim=\"read_count\"",
            "reliability.read_count_threshold=2000",
        ],
    );
}

#[test]
fn a_run_resumed_from_a_checkpoint() {
    // Recorded under its own name: it must stay equal to the uninterrupted run too.
    let sets = ["run.until=\"requests:40000\"", "workload.read_ratio=0.3", "wear_leveling.enabled=true"];
    let dir = tempfile::tempdir().unwrap();
    let path = checkpoint::path_in(dir.path());
    let mut sim = Simulator::new(config("tiny", &sets)).unwrap();
    sim.set_checkpoint_path(path.clone());
    sim.set_interrupt_after(17_000);
    assert_eq!(sim.run().unwrap().summary.run.stop, "interrupted");
    let resumed = Simulator::resume(&path).and_then(|s| s.run()).unwrap();
    check("tiny-resumed", "tiny", &sets, &resumed);
    let whole = Simulator::new(config("tiny", &sets)).and_then(|s| s.run()).unwrap();
    assert_eq!(record("tiny", &sets, &whole), record("tiny", &sets, &resumed));
}

mod shared_traces {
    use super::*;

    fn trace(file: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(file);
        assert!(p.exists(), "needs ../shared/traces: {} not found", p.display());
        format!("workload.trace.path={:?}", p.canonicalize().unwrap().display().to_string())
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn one_trace_per_format() {
        for (name, file, extra) in [
            ("trace-msr", "msr/rsrch_1.csv", &[][..]),
            ("trace-msr-gzip", "msr/web_0-first100k.csv.gz", &[][..]),
            ("trace-disksim", "umass/Financial1-first10k.ascii", &[][..]),
            ("trace-mqsim-ns", "mqsim/tpcc-small.trace", &["workload.trace.time_unit=\"ns\""][..]),
            ("trace-blkparse", "blkparse/hadoop-blktrace.txt", &[][..]),
            ("trace-cloudphysics", "cloudphysics/cloudPhysicsIO.csv", &[][..]),
        ] {
            let path = trace(file);
            // The recorded path is the file's name under the traces folder, not this machine's.
            let mut sets = vec!["workload.kind=\"trace\"", "workload.trace.fold=\"modulo\"", "run.until=\"end\""];
            sets.extend_from_slice(extra);
            let mut all = sets.clone();
            all.push(&path);
            let out =
                Simulator::new(config("tiny", &all)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut shown = sets.clone();
            let label = format!("trace={file}");
            shown.push(&label);
            check(name, "tiny", &shown, &out);
        }
    }
}
