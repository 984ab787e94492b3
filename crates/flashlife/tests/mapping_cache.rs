//! The cached mapping table (`[mapping_cache]`, `ftl/mapping_cache.rs`, after DFTL: Gupta,
//! Kim, Urgaonkar, ASPLOS 2009).
//!
//! References:
//! - closed form: LRU under the independent reference model, Che's approximation (H. Che,
//!   Y. Tung, Z. Wang, IEEE JSAC 20(7), 2002; within about 1% of exact LRU for Zipf
//!   popularity at caches of a few hundred items and more: Fricker, Robert, Roberts, ITC 24,
//!   2012): a map entry is one item;
//! - DFTL's cost model (Section 3 of the paper): a CMT miss reads one translation page, a
//!   dirty eviction rewrites one (read-modify-write), so extra reads per host request equal
//!   the miss ratio and extra programs are bounded by the dirty evictions plus GC's updates;
//! - Mattson et al.'s inclusion property of LRU ("Evaluation techniques for storage
//!   hierarchies", IBM Systems Journal 9(2), 1970): on any reference string a larger LRU
//!   cache hits at least as often, so the hit ratio on a real trace cannot fall with size;
//! - invariants: the integrity oracle (which here also tracks translation pages), and a run
//!   whose cache holds the whole map (nothing is ever evicted, so nothing is written) equal
//!   to a run without the feature, counter for counter.

mod common;

use flashlife::stats::Cause;
use flashlife::{ConfigBuilder, RunOutput};

fn logical_units() -> u64 {
    let base = ConfigBuilder::new().preset("tiny").unwrap().build().unwrap();
    flashlife::ftl::Layout::of(&base).unwrap().logical_units as u64
}

/// Closed form: Che's approximation of the CMT's LRU hit ratio. Zipf reads of one mapping
/// unit over the whole tiny drive (one lookup each), a cache of 1% and 5% of the map's
/// entries. Measured from request N1 to N2 (two runs of one seed share their first N1
/// requests), so the cold start is left out. Tolerance 0.01 absolute: the approximation's
/// error (about 1%) plus the sampling noise of 300,000 lookups (binomial sd below 0.001).
#[test]
fn cmt_hit_ratio_matches_che_approximation() {
    let n = logical_units();
    for (alpha, share) in [(0.8, 0.01), (0.8, 0.05), (1.2, 0.01)] {
        let entries = ((n as f64 * share) as u64).max(2);
        let hits = |requests: u64| {
            let out = common::run_preset(
                "tiny",
                &common::zipf_unit_reads(alpha, format!("mapping_cache.size_bytes={}", entries * 4), requests),
            );
            let c = out.summary.mapping_cache.expect("a mapping_cache section");
            assert_eq!(c.lookups, requests, "one lookup per one-unit read");
            assert_eq!(c.hits + c.misses, c.lookups);
            c.hits
        };
        let (n1, n2) = (100_000u64, 400_000u64);
        let got = (hits(n2) - hits(n1)) as f64 / (n2 - n1) as f64;
        let want = common::che_hit_ratio(n, alpha, entries as f64);
        println!(
            "zipf {alpha}, {entries} of {n} entries: CMT hit ratio {got:.4}, Che {want:.4}, diff {:+.4}",
            got - want
        );
        assert!((got - want).abs() < 0.01, "alpha {alpha}, {entries} entries: {got} vs Che {want}");
    }
}

/// DFTL's cost model, counted by two code paths: the flash counters (`page_reads_by_cause`,
/// `page_programs_by_cause`, kept where the transactions are made) against the cache's own
/// counters. Reads only, on the preconditioned drive (every translation page was written
/// during preconditioning, and with one unit per page none waits in an open page): each miss
/// costs exactly one translation read, so extra reads per request = the miss ratio, plus one
/// read and one program per translation-page rewrite left over from preconditioning (entries
/// it left dirty in the cache, at most the cache's entries; GC updates it deferred, and those
/// of the cleaning the write-backs' blocks ask for). Then 50% writes: every translation program is a dirty
/// eviction's write-back, a GC update or a translation page moved by GC; write-backs equal
/// dirty evictions, which cannot exceed misses; and the host's own programs are unchanged.
#[test]
fn extra_flash_work_per_request_follows_the_miss_ratio() {
    for scheduler in SCHEDULERS {
        extra_flash_work_under(scheduler);
    }
}

/// Both schedulers: the cached map decides the same kinds of flash work under either (the
/// queued one steps GC's translation-page updates a page at a time, `gc_steps.rs`).
const SCHEDULERS: [&str; 2] = ["reservation", "queued"];

fn extra_flash_work_under(scheduler: &str) {
    println!("timing.scheduler = {scheduler}");
    let n = logical_units();
    let entries = n / 50;
    let common = |read_ratio: f64| {
        vec![
            "workload.kind=\"zipf\"".to_string(),
            "workload.zipf.alpha=0.8".into(),
            format!("workload.read_ratio={read_ratio}"),
            format!("mapping_cache.size_bytes={}", entries * 4),
            "run.until=\"requests:100000\"".into(),
            format!("timing.scheduler=\"{scheduler}\""),
        ]
    };
    let out = common::run_preset("tiny", &common(1.0));
    let s = &out.summary;
    let c = s.mapping_cache.as_ref().unwrap();
    let extra_reads = s.flash.page_reads_by_cause.get(Cause::Mapping);
    let extra_programs = s.flash.page_programs_by_cause.get(Cause::Mapping);
    println!(
        "reads only: miss ratio {:.4}, translation reads per request {:.4}, write-backs {}, GC updates {}, moves {} (programs {extra_programs})",
        c.misses as f64 / 1e5,
        extra_reads as f64 / 1e5,
        c.writebacks,
        c.gc_updates,
        c.gc_translation_moves
    );
    assert!(c.misses > 1000, "{c:?}");
    assert!(c.writebacks <= entries, "{c:?}");
    let rewrites = c.writebacks + c.gc_updates + c.gc_translation_moves;
    assert_eq!(extra_reads, c.misses + rewrites, "one translation read per miss and per rewrite");
    assert_eq!(extra_programs, rewrites);
    assert_eq!(s.flash.page_reads_by_cause.get(Cause::Host), 100_000, "one data read per request");

    let out = common::run_preset("tiny", &common(0.5));
    let s = &out.summary;
    let c = s.mapping_cache.as_ref().unwrap();
    let programs = s.flash.page_programs_by_cause.get(Cause::Mapping);
    let reads = s.flash.page_reads_by_cause.get(Cause::Mapping);
    println!(
        "50% writes: {c:?}; mapping reads {reads}, programs {programs}; per request {:.4} / {:.4}",
        reads as f64 / 1e5,
        programs as f64 / 1e5
    );
    assert!(c.dirty_evictions > 0 && c.gc_translation_moves + c.gc_updates > 0, "{c:?}");
    assert_eq!(c.writebacks, c.dirty_evictions);
    assert!(c.dirty_evictions <= c.misses);
    assert_eq!(programs, c.writebacks + c.gc_updates + c.gc_translation_moves);
    assert_eq!(programs, c.translation_programs);
    // Reads: one per miss, one per read-modify-write, one per translation page GC moved.
    assert_eq!(reads, c.misses + c.writebacks + c.gc_updates + c.gc_translation_moves);
    assert_eq!(s.flash.unit_programs_by_cause.get(Cause::Host), s.host.write_bytes / 4096);
    assert_eq!(s.integrity.violation, None);
}

/// Timing contract: at queue depth 1 with reads only (no GC, no contention) and a host link
/// made free, a request's device time is its flash reads: a miss waits for its translation
/// read, a page read like the data's, so the mean grows by (translation reads on the
/// critical path / lookups) times one page read (the no-cache run's mean), within the HDR
/// histograms' 0.1%. The translation-page rewrites left over from preconditioning (write-backs
/// of entries it left dirty, GC updates it deferred, translation pages GC moves meanwhile)
/// may delay a miss by at most one read and one program each (the flash's TLC times): that
/// bounds the excess from above.
#[test]
fn a_miss_waits_for_its_translation_read() {
    for scheduler in SCHEDULERS {
        a_miss_waits_under(scheduler);
    }
}

fn a_miss_waits_under(scheduler: &str) {
    let n = logical_units();
    let run = |cached: bool| {
        let mut sets = vec![
            "workload.kind=\"zipf\"".to_string(),
            "workload.read_ratio=1.0".into(),
            "host.queue_depth=1".into(),
            "host.link_mb_per_s=1e12".into(),
            "host.command_overhead_us=0.0".into(),
            "run.until=\"requests:20000\"".into(),
            format!("timing.scheduler=\"{scheduler}\""),
        ];
        if cached {
            sets.push(format!("mapping_cache.size_bytes={}", n / 20 * 4));
        }
        common::run_preset("tiny", &sets)
    };
    let (off, on) = (run(false), run(true));
    let read = off.summary.device_time_us.read.mean;
    let c = on.summary.mapping_cache.as_ref().unwrap();
    let lookups = c.lookups as f64;
    let want = read * (1.0 + c.miss_reads as f64 / lookups);
    let got = on.summary.device_time_us.read.mean;
    let cfg = ConfigBuilder::new().preset("tiny").unwrap().build().unwrap();
    let tlc = cfg.flash.mode(flashlife::flash::BitMode::Tlc);
    let rewrites = (c.writebacks + c.gc_updates + c.gc_translation_moves) as f64;
    let slack = rewrites * (tlc.read_us + tlc.program_us) / lookups;
    println!(
        "{scheduler}: read {read:.2} us without, {got:.2} us with (miss reads per lookup {:.4}, write-backs {}); want {want:.2} (+ up to {slack:.2})",
        c.miss_reads as f64 / lookups,
        c.writebacks
    );
    assert!(got > want * 0.999 && got < want * 1.001 + slack, "{got} vs {want} + {slack}");
}

/// Priority queues (host reads, host writes, background; `timing/queued/policy.rs`): a miss's
/// translation read is work the request waits for, so the queued scheduler queues it as a host
/// read (`Transaction::for_host`), not as background work that host work always passes. On
/// the queued scheduler's test drive (8 MLC dies, QD32, Zipf 0.8 with 70% reads, at steady
/// state), each miss then adds about one queued read: the read mean stays within (1 + misses
/// per lookup) of the run without a cached map, and the longest read within twice its
/// longest. Queued as background, the misses waited behind every host transaction of their
/// die: mean 1,151 against 506 us, longest 33.9 against 4.0 ms (measured 2026-11-24; 643 us
/// and 5.7 ms as host reads).
#[test]
fn a_miss_read_is_host_work_under_the_queued_scheduler() {
    let run = |cached: bool| {
        let mut sets: Vec<String> = common::PEER.iter().map(|s| s.to_string()).collect();
        sets.extend([
            "timing.scheduler=\"queued\"".to_string(),
            // Strict rotation, as the bound below was measured (with `least_loaded`, the
            // queued default, the cached map's longest read is 2.1 times the uncached one's).
            "ftl.allocation=\"rotation\"".into(),
            "workload.kind=\"zipf\"".into(),
            "workload.read_ratio=0.7".into(),
            "run.until=\"requests:60000\"".into(),
        ]);
        if cached {
            sets.push("mapping_cache.size_bytes=4096".into());
        }
        common::run_preset("default", &sets).summary
    };
    let (off, on) = (run(false), run(true));
    let c = on.mapping_cache.as_ref().unwrap();
    let miss_share = c.miss_reads as f64 / c.lookups as f64;
    let (mean, max) = (on.device_time_us.read.mean, on.device_time_us.read.max);
    let (mean0, max0) = (off.device_time_us.read.mean, off.device_time_us.read.max);
    println!("read mean {mean:.0} us (without a cached map {mean0:.0}), max {max:.0} ({max0:.0}); miss reads per lookup {miss_share:.3}");
    assert!(miss_share > 0.2, "{c:?}");
    assert!(mean < mean0 * (1.0 + miss_share), "{mean} vs {mean0} x (1 + {miss_share})");
    assert!(max < 2.0 * max0, "{max} vs {max0}");
}

/// Invariant: with the oracle on (it also versions translation pages: every translation read
/// and rewrite is checked), reads, writes and trims of 1 to 16 units, a CMT of 64 entries
/// evicting all the time, and GC cleaning both data and translation blocks for 3 drive
/// writes: nothing is lost, and the final check passes over data and translation pages.
#[test]
fn integrity_with_a_small_cmt_and_gc() {
    for scheduler in SCHEDULERS {
        integrity_under(scheduler);
    }
}

fn integrity_under(scheduler: &str) {
    let out = common::run_preset(
        "tiny",
        &[
            "ftl.integrity_oracle=true".to_string(),
            "workload.kind=\"zipf\"".into(),
            "workload.read_ratio=0.4".into(),
            "workload.trim_ratio=0.05".into(),
            "workload.sizes=[4096, 16384, 65536]".into(),
            "mapping_cache.size_bytes=256".into(),
            "run.until=\"writes:3dw\"".into(),
            format!("timing.scheduler=\"{scheduler}\""),
        ],
    );
    let s = &out.summary;
    let c = s.mapping_cache.as_ref().unwrap();
    println!("{scheduler}: {c:?}; WA {:.3}", s.write_amplification);
    assert_eq!(s.integrity.violation, None);
    assert!(s.integrity.checks > 0);
    assert!(c.gc_translation_moves > 0 && c.gc_updates > 0 && c.dirty_evictions > 0, "{c:?}");
    assert!(s.flash.block_erases_by_cause.get(Cause::Gc) > 0);
}

/// Invariant: a CMT holding every entry never evicts, so no translation page is ever written
/// (and a miss on one never written reads nothing): the run is the run without a cached map,
/// counter for counter and latency for latency; only the compulsory misses remain (one per
/// unit first named, preconditioning included, then reset with the other counters).
#[test]
fn a_cmt_of_the_whole_map_equals_no_cmt() {
    let n = logical_units();
    let sets = |on: bool| {
        let mut v = vec![
            "workload.kind=\"zipf\"".to_string(),
            "workload.read_ratio=0.5".into(),
            "run.until=\"writes:1dw\"".into(),
        ];
        if on {
            v.push(format!("mapping_cache.size_bytes={}", n * 4));
        }
        v
    };
    let (off, on) = (common::run_preset("tiny", &sets(false)), common::run_preset("tiny", &sets(true)));
    let c = on.summary.mapping_cache.as_ref().unwrap();
    assert_eq!((c.dirty_evictions, c.translation_reads, c.translation_programs), (0, 0, 0), "{c:?}");
    let json = |o: &RunOutput| serde_json::to_value(&o.summary.flash).unwrap();
    assert_eq!(json(&off), json(&on));
    assert_eq!(off.summary.write_amplification, on.summary.write_amplification);
    assert_eq!(off.summary.device_time_us.read.mean, on.summary.device_time_us.read.mean);
    assert_eq!(off.summary.device_time_us.write.p99, on.summary.device_time_us.write.p99);
    assert!(!serde_json::to_string(&off.summary).unwrap().contains("\"mapping\""));
}

/// Configuration: errors name the key and say why; the default configuration's text has no
/// `[mapping_cache]`.
#[test]
fn mapping_cache_configuration() {
    let text = common::config(&[]).to_toml();
    assert!(!text.contains("mapping_cache"), "{text}");
    assert!(common::config(&["mapping_cache.size_bytes=4096"]).to_toml().contains("[mapping_cache]"));
    let err = common::config_error;
    let e = err(&["mapping_cache.entry_bytes=8"]);
    assert!(e.contains("mapping_cache.size_bytes"), "{e}");
    let e = err(&["mapping_cache.size_bytes=4096", "mapping_cache.entry_bytes=3"]);
    assert!(e.contains("mapping_cache.entry_bytes") && e.contains("divisor"), "{e}");
    let e = err(&["mapping_cache.size_bytes=4096", "host.interface=\"open_channel\""]);
    assert!(e.contains("mapping_cache.size_bytes") && e.contains("open_channel"), "{e}");
}

mod shared_traces {
    use super::*;

    fn trace(file: &str) -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/").to_string() + file;
        assert!(std::path::Path::new(&path).exists(), "needs ../shared/traces: {path} not found");
        format!("workload.trace.path=\"{path}\"")
    }

    /// Mattson et al.'s inclusion property (LRU is a stack algorithm: at every instant a
    /// larger cache holds what a smaller one holds, whatever the reference string), so on a
    /// real trace the CMT's hits cannot fall as it grows; and DFTL's premise (Gupta et al.,
    /// Section 3: enterprise traces have temporal locality, so a small CMT catches most
    /// lookups): on UMass Financial1 (the OLTP trace of DFTL's evaluation) and MSR web_0,
    /// replayed once on a 512 MiB drive (131,000 map entries in 128 translation pages)
    /// after preconditioning, the hit ratio rises with the cache, and the extra flash reads
    /// per request follow its misses. The numbers are printed for docs/models/mapping-cache.md.
    #[test]
    #[ignore = "needs ../shared/traces"]
    fn hit_ratio_rises_with_the_cache_on_real_traces() {
        for (file, extra) in [("umass/Financial1-first10k.ascii", None), ("msr/web_0-first100k.csv.gz", None::<&str>)] {
            let mut last = (0u64, 0.0f64);
            for entries in [0u64, 256, 1024, 4096, 16384, 131072] {
                let mut sets = vec![
                    "geometry.blocks_per_plane=1024".to_string(),
                    "workload.kind=\"trace\"".into(),
                    trace(file),
                    "workload.trace.fold=\"modulo\"".into(),
                    "run.until=\"end\"".into(),
                ];
                sets.extend(extra.map(String::from));
                if entries > 0 {
                    sets.push(format!("mapping_cache.size_bytes={}", entries * 4));
                }
                let out = common::run_preset("tiny", &sets);
                let s = &out.summary;
                let requests = (s.host.read_requests + s.host.write_requests) as f64;
                let (rd, wr) = (s.device_time_us.read.mean, s.device_time_us.write.mean);
                let Some(c) = s.mapping_cache.as_ref() else {
                    println!("{file}: no CMT: read {rd:.1} us, write {wr:.1} us, WA {:.3}", s.write_amplification);
                    continue;
                };
                let reads = s.flash.page_reads_by_cause.get(Cause::Mapping) as f64 / requests;
                let programs = s.flash.page_programs_by_cause.get(Cause::Mapping) as f64 / requests;
                println!(
                    "{file}: {entries} entries ({} KiB): hit ratio {:.4}, lookups/request {:.2}, translation reads/request {reads:.4}, programs/request {programs:.4}, read {rd:.1} us, write {wr:.1} us, WA {:.3}",
                    entries * 4 / 1024,
                    c.hit_ratio,
                    c.lookups as f64 / requests,
                    s.write_amplification
                );
                assert!(c.hits >= last.0, "{file}: {entries} entries hit {} < {} of a smaller cache", c.hits, last.0);
                assert!(c.hit_ratio >= last.1);
                last = (c.hits, c.hit_ratio);
                assert_eq!(s.integrity.violation, None);
            }
        }
    }
}
