//! Response time counts from arrival (references: the definitions; response = queue wait +
//! device time for every request, so their means add up; a Poisson stream's offered rate is
//! its configured rate).

mod common;

fn poisson(rate_iops: u32, queue_depth: u32, read_ratio: f64, extra: &[&str]) -> flashlife::RunOutput {
    let sets = [
        "workload.arrival.process=\"poisson\"",
        &format!("workload.read_ratio={read_ratio}"),
        &format!("workload.arrival.rate_iops={rate_iops}"),
        &format!("host.queue_depth={queue_depth}"),
        "run.until=\"requests:20000\"",
        "run.progress=\"off\"",
    ];
    common::run(&[&sets[..], extra].concat())
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// An open-loop stream offered faster than the drive serves it: requests wait for a queue
/// slot, that wait is in the response time, and the summary says so.
#[test]
fn an_overloaded_open_loop_counts_the_wait_for_a_queue_slot() {
    let out = poisson(2_000_000, 4, 0.0, &[]);
    let s = &out.summary;
    let (all, dev, wait) = (&s.latency_us.all, &s.device_time_us.all, &s.host_queue_wait_us);
    assert!(wait.p50 > 0.0, "most requests should wait for a slot: {wait:?}");
    assert!(all.mean > 10.0 * dev.mean, "response {} vs device {}: the backlog is missing", all.mean, dev.mean);
    // Every request's response time is its wait plus its device time.
    assert!(close(all.mean, wait.mean + dev.mean, 0.01), "{} != {} + {}", all.mean, wait.mean, dev.mean);
    let offered = s.throughput.offered_iops.expect("open loop has an offered rate");
    assert!(close(offered, 2e6, 0.05), "offered {offered} IOPS, configured 2e6");
    assert!(s.throughput.iops < 0.5 * offered, "completed {} vs offered {offered}", s.throughput.iops);
    assert!(
        s.run.warnings.iter().any(|w| w.starts_with("most requests waited for one of the 4 queue slots")),
        "{:?}",
        s.run.warnings
    );
}

/// A light open-loop stream never waits for a slot: response time is device time. Reads, and
/// no background GC: under the reservation scheduler, writes at steady state and idle-time GC
/// repaying the preconditioning's debt both book whole victims (about a second on a die), and
/// even 200 IOPS then fills 32 slots (measured: waits up to 3 s).
#[test]
fn a_light_open_loop_waits_for_nothing() {
    let out = poisson(200, 32, 1.0, &["gc.background=false"]);
    let s = &out.summary;
    // The histogram's smallest value is 1 ns: no wait reads as 0.001 us.
    assert!(s.host_queue_wait_us.max <= 0.001, "{:?}", s.host_queue_wait_us);
    assert_eq!(s.latency_us, s.device_time_us);
    let offered = s.throughput.offered_iops.expect("open loop has an offered rate");
    assert!(close(offered, 200.0, 0.05), "offered {offered} IOPS, configured 200");
    assert!(close(s.throughput.iops, offered, 0.05), "completed {} vs offered {offered}", s.throughput.iops);
    assert!(!s.run.warnings.iter().any(|w| w.contains("queue slots")), "{:?}", s.run.warnings);
}

/// In closed loop a request arrives when its slot frees: no wait, no offered rate.
#[test]
fn a_closed_loop_has_no_host_queue_wait() {
    let out = common::run(&["run.until=\"requests:5000\"", "run.progress=\"off\""]);
    let s = &out.summary;
    assert!(s.host_queue_wait_us.max <= 0.001, "{:?}", s.host_queue_wait_us);
    assert_eq!(s.latency_us, s.device_time_us);
    assert_eq!(s.throughput.offered_iops, None);
}

/// `host.arrivals = "timestamps"` asks for arrival times a closed-loop generator does not
/// have: the run is closed loop (not every request arriving at time 0), and says so.
#[test]
fn timestamps_without_arrival_times_run_closed_loop_and_say_so() {
    let sets =
        ["host.arrivals=\"timestamps\"", "host.queue_depth=1", "run.until=\"requests:3000\"", "run.progress=\"off\""];
    let s = common::run(&sets).summary;
    assert!(s.host_queue_wait_us.max <= 0.001, "{:?}", s.host_queue_wait_us);
    assert_eq!(s.throughput.offered_iops, None);
    assert!(s
        .run
        .warnings
        .iter()
        .any(|w| w.starts_with("host.arrivals = \"timestamps\", but the workload has no arrival times")));
    // The same workload with arrival times is open loop, without the warning.
    let s = common::run(&[&sets[..], &["workload.arrival.process=\"poisson\""]].concat()).summary;
    assert!(s.throughput.offered_iops.is_some());
    assert!(!s.run.warnings.iter().any(|w| w.starts_with("host.arrivals")), "{:?}", s.run.warnings);
}

/// GC work in idle windows is counted apart from GC that host writes waited for: a read-only
/// open-loop stream on a steady-state drive moves data only in idle windows (repaying the
/// preconditioning's debt), a closed loop never has one. Under reservation: the queued
/// scheduler steps the preconditioning's debt as soft-threshold cleaning from the first
/// request, so most of it (47,975 of 54,834 units here) is not counted as idle although no
/// host write waited for it.
#[test]
fn background_gc_is_counted_apart() {
    let s = poisson(200, 32, 1.0, &["timing.scheduler=\"reservation\""]).summary;
    assert!(s.gc.valid_units_moved > 0, "{:?}", s.gc);
    assert_eq!(s.gc.valid_units_moved_idle, s.gc.valid_units_moved, "{:?}", s.gc);
    let s = common::run(&["run.until=\"requests:20000\"", "run.progress=\"off\""]).summary;
    assert!(s.gc.valid_units_moved > 0, "{:?}", s.gc);
    assert_eq!(s.gc.valid_units_moved_idle, 0, "{:?}", s.gc);
}
