//! Synthetic generators, arrival processes and configuration.

use std::collections::HashMap;

use flashlife::workload::zipf::ZipfSampler;
use flashlife::workload::{build, workload_stats, IoKind, Workload, WorkloadConfig, WorkloadContext};
use flashlife::workload::{ArrivalProcess, Fold, TimeUnit, Timestamps, WorkloadKind};
use rand::SeedableRng;

const GIB: u64 = 1 << 30;

fn ctx(logical: u64) -> WorkloadContext {
    WorkloadContext { logical_bytes: logical, unit_bytes: 4096, seed: 7 }
}

/// Least-squares slope of ln(count) against ln(rank) over the top `ranks` ranks.
fn loglog_slope(mut counts: Vec<u64>, ranks: usize) -> f64 {
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let pts: Vec<(f64, f64)> =
        counts.iter().take(ranks).enumerate().map(|(i, &c)| (((i + 1) as f64).ln(), (c as f64).ln())).collect();
    let n = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let num: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = pts.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    num / den
}

#[test]
fn zipf_rank_frequency_slope_matches_alpha() {
    // Through the whole generator (scrambled ranks): counts per address, sorted.
    for (alpha, samples, ranks) in [(1.0, 2_000_000u64, 200usize), (2.0, 2_000_000, 40)] {
        let mut c = WorkloadConfig { kind: WorkloadKind::Zipf, ..WorkloadConfig::default() };
        c.zipf.alpha = alpha;
        let mut w = build(&c, &ctx(4 * GIB)).unwrap();
        let mut counts: HashMap<u64, u64> = HashMap::new();
        for _ in 0..samples {
            let r = w.next_request().unwrap().unwrap();
            assert!(r.offset + r.size <= 4 * GIB && r.offset.is_multiple_of(4096));
            *counts.entry(r.offset).or_default() += 1;
        }
        let slope = -loglog_slope(counts.into_values().collect(), ranks);
        eprintln!("alpha {alpha}: fitted slope {slope:.4}");
        assert!((slope - alpha).abs() <= 0.05 * alpha, "alpha {alpha}: slope {slope}");
    }
}

#[test]
fn zipf_sampler_handles_any_positive_alpha() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
    for alpha in [0.01, 0.5, 0.99, 1.0, 1.0000001, 1.5, 2.0, 5.0, 50.0] {
        for n in [1u64, 2, 10, 1 << 40] {
            let z = ZipfSampler::new(n, alpha);
            for _ in 0..2000 {
                let k = z.sample(&mut rng);
                assert!((1..=n).contains(&k), "alpha {alpha} n {n}: {k}");
            }
        }
    }
    // P(1) for alpha 2 over many ranks is 6/pi^2.
    let z = ZipfSampler::new(1 << 30, 2.0);
    let ones = (0..400_000).filter(|_| z.sample(&mut rng) == 1).count() as f64 / 400_000.0;
    assert!((ones - 6.0 / std::f64::consts::PI.powi(2)).abs() < 0.005, "{ones}");
}

#[test]
fn zipf_scramble_spreads_hot_addresses() {
    let mut c = WorkloadConfig { kind: WorkloadKind::Zipf, ..WorkloadConfig::default() };
    c.zipf.alpha = 1.0;
    let hot = |c: &WorkloadConfig| {
        let mut w = build(c, &ctx(GIB)).unwrap();
        let mut counts: HashMap<u64, u64> = HashMap::new();
        for _ in 0..200_000 {
            *counts.entry(w.next_request().unwrap().unwrap().offset).or_default() += 1;
        }
        let mut v: Vec<(u64, u64)> = counts.into_iter().collect();
        v.sort_by_key(|x| std::cmp::Reverse(x.1));
        v.iter().take(10).map(|x| x.0).collect::<Vec<u64>>()
    };
    let top = hot(&c);
    assert!(top.iter().any(|&o| o > GIB / 4), "scrambled hot addresses spread out: {top:?}");
    c.zipf.scramble = false;
    let top = hot(&c);
    assert_eq!(top[0], 0, "unscrambled: rank 1 is slot 0");
    assert!(top.iter().all(|&o| o < 64 * 4096), "{top:?}");
}

#[test]
fn uniform_working_set_and_read_ratio_within_one_percent() {
    for (ws, rr) in [(0.25, 0.3), (1.0, 0.0), (0.5, 0.7)] {
        let c = WorkloadConfig { read_ratio: rr, working_set: ws, ..WorkloadConfig::default() };
        let logical = 256 << 20; // 64 Ki units: 2M requests touch every one of them
        let mut w = build(&c, &ctx(logical)).unwrap();
        let s = workload_stats(&mut *w, 2_000_000).unwrap();
        let touched = s.distinct_pages as f64 * 4096.0 / logical as f64;
        assert!((touched - ws).abs() <= 0.01 * ws, "working set {ws}: touched {touched}");
        assert!(s.address_end as f64 <= ws * logical as f64);
        assert!((s.read_share - rr).abs() <= 0.01, "read ratio {rr}: {}", s.read_share);
    }
}

#[test]
fn uniform_default_stream_is_stable() {
    // The first generator's draw order (kind, then slot) is kept: same seed, same stream.
    let c = WorkloadConfig { read_ratio: 0.5, ..WorkloadConfig::default() };
    let a: Vec<_> = (0..100)
        .map({
            let mut w = build(&c, &ctx(GIB)).unwrap();
            move |_| w.next_request().unwrap().unwrap()
        })
        .collect();
    let mut w = build(&c, &ctx(GIB)).unwrap();
    for r in a {
        assert_eq!(Some(r), w.next_request().unwrap());
    }
}

#[test]
fn hotcold_sends_the_hot_share_to_the_hot_space() {
    let mut c = WorkloadConfig { kind: WorkloadKind::HotCold, working_set: 0.5, ..WorkloadConfig::default() };
    c.hotcold.hot_requests = 0.9;
    c.hotcold.hot_space = 0.1;
    let mut w = build(&c, &ctx(GIB)).unwrap();
    let hot_end = (GIB as f64 * 0.5 * 0.1) as u64;
    let n = 200_000;
    let mut hot = 0;
    for _ in 0..n {
        let r = w.next_request().unwrap().unwrap();
        assert!(r.offset + r.size <= GIB / 2);
        if r.offset < hot_end {
            hot += 1;
        }
    }
    let share = hot as f64 / n as f64;
    assert!((share - 0.9).abs() < 0.01, "{share}");
}

#[test]
fn sequential_wraps_within_the_working_set() {
    let c = WorkloadConfig {
        kind: WorkloadKind::Sequential,
        working_set: 1.0,
        request_size: 65536,
        ..WorkloadConfig::default()
    };
    let mut w = build(&c, &ctx(1 << 20)).unwrap();
    let offs: Vec<u64> = (0..20).map(|_| w.next_request().unwrap().unwrap().offset).collect();
    let want: Vec<u64> = (0..20).map(|i| (i % 16) * 65536).collect();
    assert_eq!(offs, want);
    let s = workload_stats(&mut *build(&c, &ctx(64 << 20)).unwrap(), 1000).unwrap();
    assert_eq!(s.sequential, 999, "every request but the first starts where the previous ended");
}

#[test]
fn weighted_sizes_and_mixes() {
    let c = WorkloadConfig {
        sizes: vec![4096, 65536, 1 << 20],
        size_weights: vec![0.7, 0.2, 0.1],
        ..WorkloadConfig::default()
    };
    let mut w = build(&c, &ctx(GIB)).unwrap();
    let mut by: HashMap<u64, u64> = HashMap::new();
    for _ in 0..100_000 {
        let r = w.next_request().unwrap().unwrap();
        assert!(r.offset + r.size <= GIB && r.offset.is_multiple_of(4096));
        *by.entry(r.size).or_default() += 1;
    }
    assert!((by[&4096] as f64 / 1e5 - 0.7).abs() < 0.01 && (by[&(1 << 20)] as f64 / 1e5 - 0.1).abs() < 0.01);

    let mut c = WorkloadConfig { kind: WorkloadKind::Mix, ..WorkloadConfig::default() };
    c.mix = vec![
        WorkloadConfig {
            kind: WorkloadKind::Sequential,
            weight: 3.0,
            request_size: 131072,
            ..WorkloadConfig::default()
        },
        WorkloadConfig { kind: WorkloadKind::Zipf, weight: 1.0, read_ratio: 1.0, ..WorkloadConfig::default() },
    ];
    let mut w = build(&c, &ctx(GIB)).unwrap();
    let (mut seq, mut reads) = (0, 0);
    for _ in 0..100_000 {
        let r = w.next_request().unwrap().unwrap();
        if r.size == 131072 {
            seq += 1;
            assert_eq!(r.kind, IoKind::Write);
        } else {
            reads += 1;
            assert_eq!(r.kind, IoKind::Read);
        }
    }
    assert!((seq as f64 / 1e5 - 0.75).abs() < 0.01, "{seq} {reads}");
}

#[test]
fn arrival_processes() {
    let mut c = WorkloadConfig::default();
    assert!(!c.open_loop());
    let mut w = build(&c, &ctx(GIB)).unwrap();
    assert!((0..100).all(|_| w.next_request().unwrap().unwrap().arrival_ns == 0));

    c.arrival.process = ArrivalProcess::Poisson;
    c.arrival.rate_iops = 10_000.0;
    assert!(c.open_loop());
    let mut w = build(&c, &ctx(GIB)).unwrap();
    let s = workload_stats(&mut *w, 200_000).unwrap();
    assert!((s.inter_arrival.mean_ns - 100_000.0).abs() < 1_000.0, "{:?}", s.inter_arrival);
    // Exponential gaps: median = mean * ln 2.
    assert!((s.inter_arrival.p50_ns as f64 / 69_315.0 - 1.0).abs() < 0.02, "{:?}", s.inter_arrival);

    c.arrival.process = ArrivalProcess::Bursty;
    c.arrival.burst_requests = 4;
    c.arrival.burst_gap_ns = 1_000_000;
    c.arrival.burst_spacing_ns = 10;
    let mut w = build(&c, &ctx(GIB)).unwrap();
    let t: Vec<u64> = (0..9).map(|_| w.next_request().unwrap().unwrap().arrival_ns).collect();
    assert_eq!(t, vec![0, 10, 20, 30, 1_000_030, 1_000_040, 1_000_050, 1_000_060, 2_000_060]);

    // Changing the arrival process never changes the addresses (separate random streams).
    let a: Vec<u64> = {
        let mut w = build(&WorkloadConfig::default(), &ctx(GIB)).unwrap();
        (0..50).map(|_| w.next_request().unwrap().unwrap().offset).collect()
    };
    let b: Vec<u64> = (0..50).map(|_| w.next_request().unwrap().unwrap().offset).collect();
    let mut w2 = build(&c, &ctx(GIB)).unwrap();
    let b2: Vec<u64> = (0..50).map(|_| w2.next_request().unwrap().unwrap().offset).collect();
    assert_eq!(a, b2);
    let _ = b;

    let t = WorkloadConfig { kind: WorkloadKind::Trace, ..WorkloadConfig::default() };
    assert!(t.open_loop());
    let mut t2 = t.clone();
    t2.trace.timestamps = Timestamps::Ignore;
    assert!(!t2.open_loop());
}

#[test]
fn config_errors_name_dotted_keys() {
    let check = |c: WorkloadConfig, prefix: &str| {
        let e = c.validate().unwrap_err().to_string();
        assert!(e.starts_with(prefix), "expected `{prefix}`, got `{e}`");
    };
    let d = WorkloadConfig::default;
    check(WorkloadConfig { read_ratio: 1.5, ..d() }, "config: workload.read_ratio = 1.5");
    check(WorkloadConfig { working_set: 0.0, ..d() }, "config: workload.working_set = 0");
    check(WorkloadConfig { sizes: vec![4096, 0], ..d() }, "config: workload.sizes[1] = 0");
    check(WorkloadConfig { sizes: vec![4096], size_weights: vec![1.0, 2.0], ..d() }, "config: workload.size_weights");
    let mut c = d();
    c.zipf.alpha = 0.0;
    check(c, "config: workload.zipf.alpha = 0");
    let mut c = d();
    c.hotcold.hot_space = 2.0;
    check(c, "config: workload.hotcold.hot_space = 2");
    let mut c = d();
    c.arrival.rate_iops = -1.0;
    check(c, "config: workload.arrival.rate_iops = -1");
    check(WorkloadConfig { kind: WorkloadKind::Trace, ..d() }, "config: workload.trace.path");
    let mut c = WorkloadConfig { kind: WorkloadKind::Trace, ..d() };
    c.trace.path = "x".into();
    c.trace.format = "csv".into();
    check(c.clone(), "config: workload.trace.format = csv");
    c.trace.format = "msr".into();
    c.trace.time_unit = TimeUnit::Us;
    check(c.clone(), "config: workload.trace.time_unit = us");
    c.trace.time_unit = TimeUnit::Auto;
    c.trace.fold = Fold::Modulo;
    c.trace.time_scale = 0.0;
    check(c, "config: workload.trace.time_scale = 0");
    check(WorkloadConfig { kind: WorkloadKind::Mix, ..d() }, "config: workload.mix");
    let bad = WorkloadConfig { kind: WorkloadKind::Trace, ..d() };
    check(
        WorkloadConfig { kind: WorkloadKind::Mix, mix: vec![d(), bad], ..d() },
        "config: workload.mix[1].kind = trace",
    );
    // A name the key does not take is refused when the configuration is read.
    for (set, want) in [
        ("workload.kind=\"zipfian\"", "config: workload.kind = \"zipfian\": expected one of: uniform, zipf,"),
        ("workload.arrival.process=\"poison\"", "config: workload.arrival.process = \"poison\": expected one of:"),
        ("workload.trace.fold=\"wrap\"", "config: workload.trace.fold = \"wrap\": expected one of: modulo,"),
    ] {
        let e = flashlife::ConfigBuilder::new().set(set).and_then(|b| b.build()).map(|_| ()).unwrap_err().to_string();
        assert!(e.starts_with(want), "expected `{want}`, got `{e}`");
    }
    let e = build(&WorkloadConfig { request_size: 2 * GIB, ..d() }, &ctx(GIB)).err().unwrap().to_string();
    assert!(e.starts_with("config: workload.request_size = 2147483648"), "{e}");
}

#[test]
fn config_round_trips_through_toml_and_rejects_unknown_keys() {
    let text = r#"
        kind = "mix"
        [arrival]
        process = "poisson"
        rate_iops = 5000.0
        [[mix]]
        kind = "zipf"
        weight = 0.8
        zipf = { alpha = 2.0 }
        [[mix]]
        kind = "sequential"
        weight = 0.2
        request_size = 131072
    "#;
    let c: WorkloadConfig = toml::from_str(text).unwrap();
    c.validate().unwrap();
    assert_eq!(c.mix[0].zipf.alpha, 2.0);
    assert!(c.open_loop());
    let back: WorkloadConfig = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c);
    assert!(toml::from_str::<WorkloadConfig>("zipf = { alfa = 1.0 }").is_err());
}

#[test]
fn stats_switch_to_an_estimate_past_the_exact_limit() {
    // 3M distinct 4 KiB pages, beyond the 2^20 counted exactly: HyperLogLog takes over.
    let c = WorkloadConfig { kind: WorkloadKind::Sequential, request_size: 4096, ..WorkloadConfig::default() };
    let mut w = build(&c, &ctx(64 * GIB)).unwrap();
    let s = workload_stats(&mut *w, 3_000_000).unwrap();
    assert!(!s.distinct_exact && s.access_cdf_sampled);
    let err = (s.distinct_pages as f64 / 3e6 - 1.0).abs();
    assert!(err < 0.03, "estimate {} for 3,000,000 pages", s.distinct_pages);
    assert_eq!(s.sequential, 2_999_999);
    // Small sets stay exact.
    let s = workload_stats(&mut *build(&c, &ctx(64 * GIB)).unwrap(), 1000).unwrap();
    assert!(s.distinct_exact && s.distinct_pages == 1000);
}
