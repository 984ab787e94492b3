//! The DRAM data cache (`[cache]`, `host/cache.rs`).
//!
//! References:
//! - closed form: LRU under the independent reference model, Che's approximation (H. Che,
//!   Y. Tung, Z. Wang, "Hierarchical Web caching systems: modeling, design and experimental
//!   results", IEEE JSAC 20(7), 2002): with item probabilities p_i and C lines, the
//!   characteristic time T solves sum_i (1 - e^{-p_i T}) = C and the hit ratio is
//!   sum_i p_i (1 - e^{-p_i T}). Fricker, Robert and Roberts ("A versatile and accurate
//!   approximation for LRU cache performance", ITC 24, 2012) show it within about 1% of the
//!   exact LRU hit ratio for Zipf popularity at caches of a few hundred items and more;
//! - the timing contract: a read hit's device time is the DRAM latency the scheduler books
//!   (`Op::Dram`), so changing the latency by d moves every hit's device time by d;
//! - invariants: the cache's end-to-end integrity check and the FTL's oracle; units the FTL
//!   received (its own counter) equal the units the cache destaged (the cache's counter).

mod common;

use flashlife::ConfigBuilder;

/// Closed form: Che's approximation of the LRU hit ratio under the independent reference
/// model. Zipf reads of one mapping unit (one line each) over the whole tiny drive, a cache of
/// 1% and 5% of its units. The hit ratio is measured from request N1 to N2 (two runs of the
/// same seed: the first N1 requests are the same in both), so the cold start is left out.
/// Tolerance 0.01 absolute: the approximation's error (about 1%, see the module docs) plus
/// the sampling noise of 300,000 requests (binomial sd below 0.001, a few times that for the
/// correlation of LRU states).
#[test]
fn lru_hit_ratio_matches_che_approximation() {
    let base = ConfigBuilder::new().preset("tiny").unwrap().build().unwrap();
    let lay = flashlife::ftl::Layout::of(&base).unwrap();
    let n = lay.logical_units as u64;
    for (alpha, share) in [(0.8, 0.01), (0.8, 0.05), (1.2, 0.01)] {
        let lines = ((n as f64 * share) as u64).max(2);
        let hits = |requests: u64| {
            let out = common::run_preset(
                "tiny",
                &common::zipf_unit_reads(alpha, format!("cache.size_bytes={}", lines * lay.unit_bytes), requests),
            );
            let c = out.summary.cache.expect("a cache section");
            assert_eq!(c.read_hits + c.read_misses, requests);
            c.read_hits
        };
        let (n1, n2) = (100_000u64, 400_000u64);
        let got = (hits(n2) - hits(n1)) as f64 / (n2 - n1) as f64;
        let want = common::che_hit_ratio(n, alpha, lines as f64);
        println!("zipf {alpha}, {lines} of {n} lines: LRU hit ratio {got:.4}, Che {want:.4}, diff {:+.4}", got - want);
        assert!((got - want).abs() < 0.01, "alpha {alpha}, {lines} lines: {got} vs Che {want}");
    }
}

/// Timing contract: under a closed loop at queue depth 1 with every read a hit (a working set
/// of 64 units behind a cache of 128 lines, warmed by the first pass), a read's device time is
/// the DRAM latency: raising `cache.dram_latency_ns` by 49 us raises the mean by 49 us (HDR
/// histogram precision: 0.1%).
#[test]
fn a_hit_costs_the_dram_latency_the_scheduler_books() {
    for scheduler in SCHEDULERS {
        a_hit_costs_under(scheduler);
    }
}

/// The cache decides the same work under either scheduler; each times it.
const SCHEDULERS: [&str; 2] = ["reservation", "queued"];

fn a_hit_costs_under(scheduler: &str) {
    let mean = |dram_ns: u64| {
        let out = common::run_preset(
            "tiny",
            &[
                "workload.kind=\"sequential\"".into(),
                "workload.read_ratio=1.0".into(),
                "workload.working_set=0.002".into(),
                "host.queue_depth=1".into(),
                "cache.size_bytes=2097152".into(),
                format!("cache.dram_latency_ns={dram_ns}"),
                "run.until=\"requests:20000\"".into(),
                format!("timing.scheduler=\"{scheduler}\""),
            ],
        );
        let c = out.summary.cache.expect("a cache section");
        assert!(c.read_misses < 200 && c.read_hits > 19_000, "{c:?}");
        out.summary.device_time_us.read.mean
    };
    let (a, b) = (mean(1_000), mean(50_000));
    println!("{scheduler}: mean read device time: {a:.2} us at 1 us DRAM, {b:.2} us at 50 us DRAM");
    // The misses (fewer than 1%) are the same in both runs and do not move.
    let want = 49.0 * 0.99;
    assert!((b - a) > want * 0.999 && (b - a) < 49.0 * 1.001, "{a} -> {b}");
}

/// Invariants: with the oracle on, reads, writes and trims of 1 to 16 units over lines of 4
/// units, a cache small enough to evict all the time and GC running: no violation of the
/// cache's end-to-end check (every hit and miss returns the host's latest version; at the end
/// each unit's latest version is dirty in DRAM or in the FTL) or of the FTL's oracle; the
/// units the block FTL programmed for the host (its counter) are the units the cache
/// destaged (the cache's).
#[test]
fn integrity_and_destage_counts_with_the_cache() {
    for extra in [
        &[][..],
        &["timing.scheduler=\"queued\""][..],
        &["host.interface=\"open_channel\"", "capacity.overprovisioning=0.3"][..],
    ] {
        let mut sets: Vec<String> = vec![
            "ftl.integrity_oracle=true".into(),
            "workload.kind=\"zipf\"".into(),
            "workload.read_ratio=0.4".into(),
            "workload.trim_ratio=0.1".into(),
            "workload.sizes=[16384, 65536, 262144]".into(),
            "cache.size_bytes=4194304".into(),
            "cache.line_bytes=65536".into(),
            "run.until=\"writes:2dw\"".into(),
        ];
        sets.extend(extra.iter().map(|s| s.to_string()));
        let out = common::run_preset("tiny", &sets);
        let s = &out.summary;
        let c = s.cache.as_ref().expect("a cache section");
        println!("{extra:?}: {c:?}, WA {:.3}", s.write_amplification);
        assert_eq!(s.integrity.violation, None, "{extra:?}");
        assert!(c.destages > 0 && c.read_hits > 0 && c.write_hits > 0, "{c:?}");
        assert_eq!(c.host_units_written, s.host.write_bytes / s.capacity.mapping_unit_bytes);
        if !extra.iter().any(|e| e.contains("open_channel")) {
            // The block FTL counts one host unit program per unit it places (the open-channel
            // stack counts the host FTL's and the device's, so it is left out here).
            let by_host = s.flash.unit_programs_by_cause.get(flashlife::stats::Cause::Host);
            assert_eq!(by_host, c.destaged_units, "the FTL received exactly the destaged units");
        }
    }
}

/// Configuration errors name the key; the default configuration's text has no `[cache]`.
#[test]
fn cache_configuration() {
    let text = common::config(&[]).to_toml();
    assert!(!text.contains("[cache]"), "{text}");
    assert!(common::config(&["cache.size_bytes=1048576"]).to_toml().contains("[cache]"));
    let err = common::config_error;
    let e = err(&["cache.line_bytes=65536"]);
    assert!(e.contains("cache.size_bytes") && e.contains("cache.line_bytes"), "{e}");
    let e = err(&["cache.size_bytes=1048576", "cache.line_bytes=1000"]);
    assert!(e.contains("cache.line_bytes") && e.contains("multiple"), "{e}");
    let e = err(&["cache.size_bytes=1000000"]);
    assert!(e.contains("cache.size_bytes") && e.contains("whole number"), "{e}");
}

/// Timing contract under the queued scheduler, where a request waits for the host-path work
/// submitted while it is handled: a read miss that evicts a dirty line does not wait for that
/// line's destage (the module docs of `host/cache.rs`). Queue depth 1, half reads and half
/// writes of one unit over the whole drive (filled once, half of it spare so that GC stays
/// light), a cache of 16 lines, so nearly every read misses and half of them evict a dirty
/// line. Held for the destage, those reads would also wait for a write (about half the write
/// mean each: +935 us measured, 2026-11-24); not held, a read waits at most for a destage
/// already running on its die (+177 us). The bound, a quarter of the write mean, lies
/// between.
#[test]
fn a_read_miss_does_not_wait_for_the_destage_it_causes() {
    let run = |cache: bool| {
        let mut sets = vec![
            "workload.read_ratio=0.5",
            "host.queue_depth=1",
            "run.until=\"requests:20000\"",
            "timing.scheduler=\"queued\"",
            "ftl.precondition=\"full\"",
            "capacity.overprovisioning=0.5",
        ];
        if cache {
            sets.push("cache.size_bytes=65536");
        }
        common::run_preset("tiny", &sets).summary
    };
    let (off, on) = (run(false), run(true));
    let c = on.cache.as_ref().expect("a cache section");
    assert!(c.read_misses > 9 * c.read_hits && c.destages > 5000, "{c:?}");
    let (read, write) = (off.device_time_us.read.mean, off.device_time_us.write.mean);
    let got = on.device_time_us.read.mean;
    println!(
        "read mean {got:.1} us with the cache, {read:.1} us without (write mean {write:.1} us, GC erases {} / {}); {c:?}",
        off.flash.block_erases_by_cause.get(flashlife::stats::Cause::Gc),
        on.flash.block_erases_by_cause.get(flashlife::stats::Cause::Gc)
    );
    assert!(got < read + 0.25 * write, "{got} us against {read} + {write} / 4: the reads waited for their destages");
}
