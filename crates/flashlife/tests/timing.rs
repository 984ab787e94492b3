//! The timing model against hand-computed service times, and open-loop replay.

mod common;

const DRIVE: &[&str] = &[
    "geometry.channels=2",
    "geometry.ways=2",
    "geometry.planes=2",
    "geometry.blocks_per_plane=64",
    "geometry.pages_per_block=64",
    "flash.page_size=4096",
    "flash.channel_mb_per_s=400",
    "host.link_mb_per_s=300",
    "host.command_overhead_us=10",
    "ftl.precondition=\"full\"",
    "wear_leveling.enabled=false",
];

fn with(extra: &[&str]) -> Vec<String> {
    DRIVE.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run(sets: &[String]) -> flashlife::RunOutput {
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    common::run(&refs)
}

/// Nanoseconds to move `bytes` at `mb_per_s` (10^6 B/s), as the engine rounds it.
fn xfer_ns(bytes: u64, mb_per_s: f64) -> f64 {
    (bytes * (1e6 / mb_per_s).round() as u64 / 1000) as f64
}

#[test]
fn an_unloaded_write_costs_link_channel_and_program() {
    // Queue depth 1, no GC in 200 writes on a drive with free blocks: every write sees an idle drive.
    let out = run(&with(&[
        "host.queue_depth=1",
        "ftl.precondition=\"empty\"",
        "run.until=\"requests:200\"",
        "stats.interval=\"1s\"",
    ]));
    let want_us = (10_000.0 + xfer_ns(4096, 300.0) + xfer_ns(4096, 400.0) + 1_000_000.0) / 1000.0;
    let w = out.summary.latency_us.write;
    assert!((w.mean - want_us).abs() < 0.01 * want_us, "write mean {} us, expected {want_us} us", w.mean);
    assert_eq!(out.summary.gc.victims, 0);
}

#[test]
fn an_unloaded_read_costs_sense_channel_and_link() {
    let out = run(&with(&[
        "host.queue_depth=1",
        "workload.read_ratio=1",
        "run.until=\"requests:200\"",
        "stats.interval=\"1s\"",
    ]));
    let want_us = (150_000.0 + xfer_ns(4096, 400.0) + 10_000.0 + xfer_ns(4096, 300.0)) / 1000.0;
    let r = out.summary.latency_us.read;
    assert!((r.mean - want_us).abs() < 0.01 * want_us, "read mean {} us, expected {want_us} us", r.mean);
}

#[test]
fn queue_depth_raises_throughput_until_the_dies_saturate() {
    let iops = |qd: u32| {
        let q = format!("host.queue_depth={qd}");
        run(&with(&[&q, "workload.read_ratio=1", "run.until=\"requests:20000\"", "stats.interval=\"1s\""]))
            .summary
            .throughput
            .iops
    };
    let (one, eight) = (iops(1), iops(8));
    // 4 dies: with 8 outstanding random reads the drive senses on several at once.
    assert!(eight > 2.5 * one, "qd1 {one} IOPS, qd8 {eight} IOPS");
}

#[test]
fn open_loop_replay_follows_arrival_times() {
    // Poisson arrivals at 200 IOPS: 4000 requests take about 20 s of simulated time, and an
    // unloaded drive serves each at its service time (no queueing).
    let out = run(&with(&[
        "workload.read_ratio=1",
        "workload.arrival.process=\"poisson\"",
        "workload.arrival.rate_iops=200",
        "run.until=\"requests:4000\"",
        "stats.interval=\"1s\"",
    ]));
    let secs = out.summary.run.simulated_ns as f64 / 1e9;
    assert!((secs - 20.0).abs() < 1.5, "simulated {secs} s");
    let service_us = (150_000.0 + xfer_ns(4096, 400.0) + 10_000.0 + xfer_ns(4096, 300.0)) / 1000.0;
    assert!(out.summary.latency_us.read.p50 < service_us * 1.05, "{:?}", out.summary.latency_us.read);
    assert!(out.timeseries.rows.len() >= 19, "one time-series row per simulated second");
}

#[test]
fn idle_gaps_are_used_for_background_gc() {
    // Bursts of writes with idle gaps: with background GC the gaps are spent cleaning, so
    // the bursts find free blocks; without it, writes in the bursts wait for foreground GC.
    let run_bursty = |background: bool| {
        let bg = format!("gc.background={background}");
        run(&with(&[
            "ftl.precondition=\"steady\"",
            "capacity.overprovisioning=0.5",
            "gc.low_watermark=0.05",
            "gc.high_watermark=0.25",
            "workload.arrival.process=\"bursty\"",
            "workload.arrival.burst_requests=64",
            "workload.arrival.burst_gap_ns=2000000000",
            "run.until=\"requests:30000\"",
            "stats.interval=\"10s\"",
            &bg,
        ]))
        .summary
    };
    let (on, off) = (run_bursty(true), run_bursty(false));
    assert!(on.gc.victims > 0 && off.gc.victims > 0);
    println!("write mean with background GC {} us, without {} us", on.latency_us.write.mean, off.latency_us.write.mean);
    assert!(
        on.latency_us.write.mean < 0.8 * off.latency_us.write.mean,
        "write mean with background GC {} us, without {} us",
        on.latency_us.write.mean,
        off.latency_us.write.mean
    );
}
