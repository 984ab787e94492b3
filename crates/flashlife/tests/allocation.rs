//! Write allocation (`ftl.allocation`). References: rotation is what least-loaded allocation
//! reduces to when every die is equally free (timing off); Little's law (a closed loop keeps
//! `host.queue_depth` requests in the drive, so mean latency x throughput = queue depth).

mod common;

fn run(sets: &[&str]) -> flashlife::RunOutput {
    common::run(&[sets, &["run.progress=\"off\""]].concat())
}

fn tiny(sets: &[&str]) -> flashlife::RunOutput {
    let mut b = flashlife::ConfigBuilder::new().preset("tiny").unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    flashlife::Simulator::new(b.build().unwrap()).and_then(|s| s.run()).unwrap()
}

#[test]
fn least_loaded_with_timing_off_is_rotation() {
    let base = ["ftl.timing=false", "run.until=\"writes:2dw\"", "run.progress=\"off\""];
    let rot = tiny(&[&base[..], &["ftl.allocation=\"rotation\""]].concat()).summary;
    let ll = tiny(&[&base[..], &["ftl.allocation=\"least_loaded\""]].concat()).summary;
    assert_eq!(rot.flash, ll.flash);
    assert_eq!(rot.lifetime, ll.lifetime);
    assert_eq!(rot.write_amplification.to_bits(), ll.write_amplification.to_bits());
}

/// On the default drive at steady state, rotation sends every 32nd write to the die that is
/// collecting garbage and its writes wait there; least-loaded allocation sends them to the die
/// that frees first, cutting the tail (while the median grows: every die is kept as busy).
/// Under the reservation scheduler, which books a whole clean-up at once (the queued
/// scheduler's allocations are compared in `queued_scheduler.rs`).
#[test]
fn least_loaded_allocation_cuts_the_write_tail() {
    let base = ["run.until=\"requests:200000\"", "timing.scheduler=\"reservation\""];
    let rot = run(&[&base[..], &["ftl.allocation=\"rotation\""]].concat()).summary;
    let ll = run(&[&base[..], &["ftl.allocation=\"least_loaded\""]].concat()).summary;
    for s in [&rot, &ll] {
        let little = s.latency_us.all.mean * 1e-6 * s.throughput.iops;
        assert!((little - 32.0).abs() < 0.02 * 32.0, "Little's law: {little} requests in the drive, not 32");
    }
    assert!(
        ll.latency_us.write.p99 < 0.5 * rot.latency_us.write.p99,
        "p99 {} us (least loaded) vs {} us (rotation)",
        ll.latency_us.write.p99,
        rot.latency_us.write.p99
    );
    assert!(ll.throughput.iops >= rot.throughput.iops * 0.99, "{} vs {}", ll.throughput.iops, rot.throughput.iops);
}
