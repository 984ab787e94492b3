//! Throughput benchmark: flash page operations per wall second and peak memory.
//!
//! `cargo bench -p flashlife --bench throughput` runs every scenario, each in its own child
//! process so that each peak-memory figure is its own; `-- NAME` runs one scenario.
//! Scenarios: a 16 GiB drive at op 0.07 (4 KiB pages, 8 channels x 4 ways x 2 planes) under
//! 4 KiB uniform random writes, closed loop, GC on, with the timing model on; the same in
//! fast-forward; a 70/30 read/write mix with timing on; the random writes again under the
//! queued scheduler (`timing.scheduler = "queued"`); the random writes with a tenth of the
//! requests trims (`workload.trim_ratio = 0.1`: fewer page operations per request, as trimmed
//! space is spare space; compare wall time per request, not page operations per second); the
//! random writes behind a 64 MiB DRAM data cache (`cache.size_bytes`: uniform writes over
//! 16 GiB nearly all miss, evict and destage a line, the cache's worst case); the random
//! writes at op 0.25 without and with a 4 MiB cached mapping table (`mapping_cache.size_bytes`:
//! a quarter of the map's entries under uniform writes, so seven lookups in ten miss;
//! translation pages add page operations, so compare wall time per request. At op 0.07 the
//! cached map's GC updates raise WA to about 280: a measure of that, not of speed).

use std::process::Command;
use std::time::Instant;

use flashlife::{ConfigBuilder, Simulator};

struct Scenario {
    name: &'static str,
    sets: &'static [&'static str],
}

const COMMON: &[&str] = &["ftl.precondition=\"steady\"", "ftl.precondition_drive_writes=0.5", "host.queue_depth=32"];

const SCENARIOS: &[Scenario] = &[
    Scenario { name: "random-write-timing", sets: &["ftl.timing=true", "run.until=\"writes:1dw\""] },
    Scenario { name: "random-write-fast-forward", sets: &["ftl.timing=false", "run.until=\"writes:1dw\""] },
    Scenario {
        name: "mix-70r-30w-timing",
        sets: &["ftl.timing=true", "workload.read_ratio=0.7", "run.until=\"requests:12000000\""],
    },
    Scenario {
        name: "random-write-trim-10pct-timing",
        sets: &["ftl.timing=true", "workload.trim_ratio=0.1", "run.until=\"writes:1dw\""],
    },
    Scenario {
        name: "random-write-cache-64m-timing",
        sets: &["ftl.timing=true", "cache.size_bytes=67108864", "run.until=\"writes:1dw\""],
    },
    Scenario {
        name: "random-write-op25-timing",
        sets: &["ftl.timing=true", "capacity.overprovisioning=0.25", "run.until=\"writes:1dw\""],
    },
    Scenario {
        name: "random-write-op25-dftl-4m-timing",
        sets: &[
            "ftl.timing=true",
            "capacity.overprovisioning=0.25",
            "mapping_cache.size_bytes=4194304",
            "run.until=\"writes:1dw\"",
        ],
    },
    Scenario {
        name: "random-write-queued",
        sets: &["ftl.timing=true", "timing.scheduler=\"queued\"", "run.until=\"writes:1dw\""],
    },
];

fn run_one(s: &Scenario) {
    let mut b = ConfigBuilder::new().preset("bench-16g").expect("preset");
    for set in COMMON.iter().chain(s.sets) {
        b = b.set(set).expect("override");
    }
    let cfg = b.build().expect("config");
    let t0 = Instant::now();
    let sim = Simulator::new(cfg).expect("simulator");
    let pre = t0.elapsed().as_secs_f64();
    let state = sim.ftl().state_bytes();
    let pages = sim.ftl().geo.pages();
    let out = sim.run().expect("run");
    let r = &out.summary.run;
    println!(
        "{:<28} {:>8.2} M page ops/s {:>7.2} s run {:>6.2} s precondition {:>12} page ops  WA {:>5.2}  peak RSS {:>6.0} MiB  state {:>5.2} B/page  {:>9} requests {:>6.3} us/request",
        s.name,
        r.page_ops_per_second / 1e6,
        r.wall_seconds,
        pre,
        r.page_ops,
        out.summary.write_amplification,
        r.peak_rss_bytes as f64 / (1u64 << 20) as f64,
        state as f64 / pages as f64,
        r.requests,
        r.wall_seconds * 1e6 / r.requests.max(1) as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if let Some(name) = args.first() {
        match SCENARIOS.iter().find(|s| s.name == name) {
            Some(s) => run_one(s),
            None => {
                eprintln!("unknown scenario {name}; known: {:?}", SCENARIOS.iter().map(|s| s.name).collect::<Vec<_>>())
            }
        }
        return;
    }
    println!("flashlife throughput benchmark (16 GiB drive, op 0.07, 4 KiB random, QD 32)");
    let exe = std::env::current_exe().expect("own path");
    for s in SCENARIOS {
        let status = Command::new(&exe).arg(s.name).status().expect("child");
        if !status.success() {
            eprintln!("{} failed: {status}", s.name);
        }
    }
}
