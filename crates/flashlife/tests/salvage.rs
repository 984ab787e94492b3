//! Runtime bad-block salvage (`failures.on_program_failure = "skip_page"`) beside the baseline
//! (`retire_block`): the mechanics with injected failures, integrity with the lognormal page
//! error model, and the paper's headline trend on its (scaled) drive.

mod common;

use flashlife::techniques::salvage::SalvageSummary;
use flashlife::Simulator;

/// A small drive with 16-page blocks (so injected places are easy to reason about).
const SMALL: &[&str] = &[
    "geometry.channels=1",
    "geometry.ways=1",
    "geometry.planes=2",
    "geometry.blocks_per_plane=32",
    "geometry.pages_per_block=16",
    "flash.page_size=4096",
    "ftl.mapping_unit=1024",
    "capacity.overprovisioning=0.3",
    "ftl.integrity_oracle=true",
    "ftl.precondition=\"full\"",
    "workload.read_ratio=0.3",
    "run.until=\"writes:4dw\"",
];

fn with(base: &[&str], extra: &[&str]) -> Vec<String> {
    base.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run(sets: &[String]) -> flashlife::RunOutput {
    let v: Vec<&str> = sets.iter().map(String::as_str).collect();
    common::run(&v)
}

/// Failed pages are skipped on every later use of their block, the write is retried on the
/// next good page, capacity shrinks by the bad pages, and nothing is lost or programmed out of
/// order. Block 3 fails at pages 4 and 5 (a run of two: one table entry), block 40 at its last
/// page (its data must go to another block).
#[test]
fn skipped_pages_stay_skipped_and_nothing_is_lost() {
    let fails = "failures.program_fail_at=[[3, 4], [3, 5], [40, 15], [7, 0]]";
    let out = run(&with(SMALL, &[fails, "failures.on_program_failure=\"skip_page\""]));
    let s = &out.summary;
    let f = &s.failures;
    let t: SalvageSummary = s.technique("salvage").expect("salvage's section");
    assert_eq!(s.integrity.violation, None);
    assert!(s.integrity.checks > 10_000);
    assert_eq!(s.integrity.out_of_order_programs, 0, "forward-only programming");
    assert_eq!(f.retired_blocks, 0, "salvage retires nothing: {f:?}");
    assert_eq!(f.bad_pages, 4);
    assert_eq!(f.bad_blocks, 3);
    assert_eq!(t.salvaged_blocks, 3);
    assert_eq!(t.bad_page_table.entries, 3, "pages 4 and 5 of block 3 merge into one run");
    assert_eq!(t.bad_page_table.peak_entries, 3);
    assert_eq!(t.skip_retries, 3, "retried in place: {t:?}");
    assert_eq!(t.rehomed_units, 4, "block 40's last page had no good page after it: its 4 units moved");
    // The blocks were erased and reused many times over 4 drive writes, and the bad pages
    // were never programmed again (else the array would count more programs than the FTL).
    assert!(s.lifetime.erase_count.min >= 2, "{:?}", s.lifetime.erase_count);
    assert_eq!(s.integrity.physical_page_programs, s.flash.page_programs);
    assert!(!s.lifetime.dead);
}

/// The same failures under the baseline retire three blocks and move their data.
#[test]
fn the_baseline_retires_failed_blocks() {
    let fails = "failures.program_fail_at=[[3, 4], [40, 15], [7, 0]]";
    let out = run(&with(SMALL, &[fails]));
    let f = &out.summary.failures;
    assert_eq!(out.summary.integrity.violation, None);
    // The failures happen while the drive is filled (before the measured run's counters).
    assert_eq!(f.bad_blocks, 3);
    assert!(!out.summary.techniques.contains_key("salvage"), "the baseline has no salvage section");
    assert_eq!(out.summary.lifetime.dead_blocks, 3);
}

/// Salvage keeps a block's capacity minus its bad pages: the drive with salvage holds exactly
/// `pages - bad pages` worth of units, checked through the FTL's capacity accounting.
#[test]
fn capacity_shrinks_by_bad_pages_only() {
    let fails = "failures.program_fail_at=[[3, 4], [3, 5], [7, 0]]";
    let cfg = common::config(
        &with(SMALL, &[fails, "failures.on_program_failure=\"skip_page\""])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let sim = Simulator::new(cfg).unwrap();
    let (live, _) = sim.ftl().capacity_units();
    // 64 blocks x 16 pages x 4 units, minus 3 bad pages x 4 units.
    assert_eq!(live, 64 * 16 * 4 - 3 * 4);
}

/// The integrity oracle through the lognormal page error model at a high error rate (RBER 1e-6
/// on 4 KiB pages: a page's mean failure level E[L] = 4.7%, so about 6% of pages go bad over the
/// run, with runs of bad pages, rehomed pages, 16-page blocks of unequal capacities), with GC and
/// wear leveling: nothing lost, nothing programmed out of order, and the drive lives through the
/// 8 drive writes (its 30% spare space covers the lost pages).
#[test]
fn lognormal_failures_with_salvage_lose_nothing() {
    let out = run(&with(SMALL, &LOGNORMAL_1E6));
    let s = &out.summary;
    let f = &s.failures;
    let t: SalvageSummary = s.technique("salvage").expect("salvage's section");
    println!("{}{f:?} {t:?}", s.to_text());
    assert_eq!(s.integrity.violation, None);
    assert_eq!(s.integrity.out_of_order_programs, 0);
    assert!(!s.lifetime.dead, "{:?}", s.lifetime.death_reason);
    // Exposure = the programs a page gets over the run (about 28 erases per block), so the bad
    // page fraction is E[L], within sampling noise (about 48 of 1024 pages).
    let mean_level = flashlife::flash::page_errors::expected_bad_block_ratio(1e-6, 4096 * 8, 0.5, 1);
    let frac = f.bad_pages as f64 / 1024.0;
    assert!(frac > mean_level * 0.5 && frac < mean_level * 1.6, "{frac} vs {mean_level}");
    assert!(t.skip_retries > 20, "{t:?}");
    assert!(t.bad_page_table.merges > 0, "runs of bad pages merged: {t:?}");
    assert_eq!(s.integrity.physical_page_programs, s.flash.page_programs);
    assert_eq!(f.retired_blocks, 0);
}

/// The same under the queued scheduler, which steps cleaning a page at a time from its own
/// code path (`ftl/gc_steps.rs`): blocks with bad pages rank by their victim key there too.
/// Reference: the integrity oracle (nothing lost), and the victim policy's index staying
/// consistent (a block withdrawn by its bare valid count stayed a candidate after its erase,
/// was chosen again and refilled with its old valid count: a crash at 2 x 768 units on
/// `salvage-small`, found by the QD32 comparison under queued, November 24).
#[test]
fn lognormal_failures_with_salvage_lose_nothing_under_stepped_cleaning() {
    let mut sets = with(SMALL, &LOGNORMAL_1E6);
    sets.extend(["timing.scheduler=\"queued\"".to_string(), "ftl.allocation=\"least_loaded\"".to_string()]);
    let out = run(&sets);
    let s = &out.summary;
    assert_eq!(s.integrity.violation, None);
    assert_eq!(s.integrity.out_of_order_programs, 0);
    assert!(!s.lifetime.dead, "{:?}", s.lifetime.death_reason);
    let t: SalvageSummary = s.technique("salvage").expect("salvage's section");
    assert!(t.skip_retries > 20, "{t:?}");
    assert_eq!(s.failures.retired_blocks, 0);
}

const LOGNORMAL_1E6: [&str; 5] = [
    "failures.model=\"lognormal\"",
    "failures.rber=1e-6",
    "failures.exposure=33",
    "failures.on_program_failure=\"skip_page\"",
    "run.until=\"writes:8dw\"",
];

/// With failures three times likelier (the level reached in a third of the programs), bad pages
/// pile up past the spare space: the drive must die of capacity, exactly when the live units
/// (all pages minus the bad ones) fall below the logical space plus the GC reserve, and not
/// before (no GC stall while a block still has invalid space to give). Before the GC fell back
/// to the block with the most invalid space (greedy stopped at a fully valid least-valid block,
/// blocks having unequal capacities), this drive died at 3.4 drive writes with 65 bad pages,
/// "no pool has space for host data", where capacity allowed 109.
#[test]
fn salvage_dies_only_when_bad_pages_eat_the_spare_space() {
    let mut sets = with(SMALL, &LOGNORMAL_1E6);
    sets.retain(|s| !s.starts_with("failures.exposure"));
    sets.push("failures.exposure=10".into());
    let v: Vec<&str> = sets.iter().map(String::as_str).collect();
    let (_, required) = Simulator::new(common::config(&v)).unwrap().ftl().capacity_units();
    let s = common::run(&v).summary;
    let f = &s.failures;
    let t: SalvageSummary = s.technique("salvage").expect("salvage's section");
    println!("{}{f:?} {t:?}", s.to_text());
    assert_eq!(s.integrity.violation, None);
    assert!(s.lifetime.dead);
    let reason = s.lifetime.death_reason.clone().unwrap_or_default();
    assert!(reason.starts_with("live blocks hold"), "{reason}");
    let live = 64 * 16 * 4 - 4 * f.bad_pages;
    assert!(live < required && live + 4 >= required, "{live} units live, {required} required: {reason}");
}

/// The paper's drive scaled down (`salvage-small`: Table I blocks of 768 pages of 16 KiB and
/// Table I timing, 4096 blocks), steady state, then a timed synthetic mix (30% reads) at queue
/// depth 1: each request's latency is its own service time, GC included, so the comparison is
/// not drowned by the closed loop's queueing behind foreground GC bursts (see the doc page).
fn paper_drive(extra: &[&str]) -> flashlife::sim::summary::Summary {
    let mut b = flashlife::ConfigBuilder::new().preset("salvage-small").unwrap();
    for s in [
        "ftl.precondition_drive_writes=0.5",
        "workload.read_ratio=0.3",
        "host.queue_depth=1",
        "run.until=\"writes:0.25dw\"",
        // The pins below and docs/techniques/salvage.md's QD1 figures: under reservation.
        "timing.scheduler=\"reservation\"",
    ]
    .iter()
    .chain(extra)
    {
        b = b.set(s).unwrap();
    }
    Simulator::new(b.build().unwrap()).and_then(|s| s.run()).unwrap().summary
}

/// Programs per page over the experiment, from a pilot without failures in fast-forward: the
/// exposure over which a page's error level is its failure probability.
fn exposure() -> f64 {
    paper_drive(&["failures.model=\"injected\"", "ftl.timing=false"]).lifetime.erase_count.mean + 1.0
}

fn pair(rber: &str, exposure: f64) -> [flashlife::sim::summary::Summary; 2] {
    let r = format!("failures.rber={rber}");
    let e = format!("failures.exposure={exposure}");
    ["retire_block", "skip_page"].map(|p| {
        let pol = format!("failures.on_program_failure=\"{p}\"");
        paper_drive(&[&r, &e, &pol])
    })
}

/// Bad blocks `n` of a 4096-block drive against the closed form's expected ratio `want`: failures
/// are independent per page, so the count is close to Poisson with mean lambda = want x blocks;
/// accept lambda +- 3 sqrt(lambda) (about 18 +- 13 blocks at 3e-11).
fn assert_poisson_bad_blocks(n: u64, want: f64) {
    let lambda = want * 4096.0;
    let dev = (n as f64 - lambda).abs();
    assert!(dev <= 3.0 * lambda.sqrt(), "{n} bad blocks, closed form {lambda:.1} +- {:.1}", 3.0 * lambda.sqrt());
}

/// Figure 4 at the paper's conservative point: RBER 3e-11 gives about 0.45% bad blocks
/// (closed form 0.44%); salvage beats the baseline in mean latency and throughput, its GC
/// victims hold fewer valid pages, it retires nothing, and its table stays tiny.
#[test]
fn salvage_beats_the_baseline_at_the_papers_conservative_point() {
    let [base, salv] = pair("3e-11", exposure());
    let (fb, fs) = (&base.failures, &salv.failures);
    println!("baseline: {}{fb:?}\nsalvage: {}{fs:?}", base.to_text(), salv.to_text());
    let want = flashlife::flash::page_errors::expected_bad_block_ratio(3e-11, 16384 * 8, 0.5, 768);
    for f in [fb, fs] {
        assert_poisson_bad_blocks(f.bad_blocks, want);
    }
    assert!(fb.retired_blocks > 0 && fs.retired_blocks == 0);
    assert!(salv.gc.mean_valid_per_victim < base.gc.mean_valid_per_victim);
    assert!(salv.write_amplification < base.write_amplification * 0.99);
    let latency = salv.latency_us.all.mean / base.latency_us.all.mean;
    let throughput = salv.throughput.iops / base.throughput.iops;
    println!("normalised latency {latency:.4}, throughput {throughput:.4}");
    // At queue depth 1 a request's latency is its service time, so mean latency is the
    // reciprocal of throughput (closed form: their normalised product is 1).
    assert!((latency * throughput - 1.0).abs() < 0.002, "latency {latency} x throughput {throughput}");
    // The paper's trend (salvage faster, -26.3% in its Figure 4, measured on traces at an
    // unstated queue depth); ours at QD1 is smaller. The values are a regression pin
    // (deterministic, seed 1; docs/techniques/salvage.md quotes them): bad blocks 20 / 17,
    // normalised latency 0.9594, throughput 1.0423 (20 / 20, 0.959, 1.043 before victims were
    // ranked by the units cleaning them frees).
    assert!(latency < 1.0 && throughput > 1.0, "latency {latency}, throughput {throughput}");
    assert_eq!((fb.bad_blocks, fs.bad_blocks), (20, 17), "regression pin");
    assert!(
        (latency - 0.9594).abs() < 5e-5 && (throughput - 1.0423).abs() < 5e-5,
        "regression pin: {latency:.4} {throughput:.4}"
    );
    // Table size at the worst point: one entry per run of bad pages, bytes not megabytes.
    let t: SalvageSummary = salv.technique("salvage").expect("salvage's section");
    assert_eq!(t.bad_page_table.peak_entries, t.bad_page_table.entries);
    assert!(t.bad_page_table.peak_entries <= fs.bad_pages);
    assert!(t.bad_page_table_peak_memory_bytes < 64 * 1024);
    assert_eq!(salv.integrity.out_of_order_programs, 0);
}

/// With few bad blocks (RBER 1e-12) salvage costs nothing: no worse than the baseline.
#[test]
fn salvage_is_free_with_few_bad_blocks() {
    let [base, salv] = pair("1e-12", exposure());
    let latency = salv.latency_us.all.mean / base.latency_us.all.mean;
    let throughput = salv.throughput.iops / base.throughput.iops;
    println!(
        "bad blocks {} / {}: normalised latency {latency:.3}, throughput {throughput:.3}",
        base.failures.bad_blocks, salv.failures.bad_blocks
    );
    assert!(latency < 1.01 && throughput > 0.99, "latency {latency}, throughput {throughput}");
    assert!(salv.write_amplification <= base.write_amplification * 1.001);
}

/// Ignored by default; `scripts/test.sh` runs them (`-- --ignored shared_traces::`) when
/// `../shared/traces` exists.
mod shared_traces {
    use super::*;

    /// The sample traces beside the checkout (`<repo>/../shared/traces`).
    fn traces_dir() -> std::path::PathBuf {
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces"));
        assert!(dir.is_dir(), "needs ../shared/traces: {} not found", dir.display());
        dir
    }

    /// A real MSR trace (rsrch_1, a week of writes, replayed endlessly and 10x faster, folded onto
    /// the drive) on the scaled paper drive in steady state, at the paper's conservative RBER (about
    /// 0.45% bad blocks), with the integrity oracle checking every read, relocation and overwrite:
    /// nothing is lost, nothing is programmed out of order, and salvage is no worse than the
    /// baseline (it retires nothing, so its GC never does more work).
    #[test]
    #[ignore = "needs ../shared/traces"]
    fn real_msr_trace_at_the_conservative_point() {
        let dir = traces_dir();
        let path = dir.join("msr/rsrch_1.csv");
        let trace = [
            "ftl.integrity_oracle=true".to_string(),
            "workload.kind=\"trace\"".to_string(),
            format!("workload.trace.path=\"{}\"", path.display()),
            "workload.trace.loops=0".to_string(),
            "workload.trace.time_scale=0.1".to_string(),
            "run.until=\"writes:0.05dw\"".to_string(),
        ];
        let drive = |extra: &[&str]| {
            let sets: Vec<&str> = trace.iter().map(String::as_str).chain(extra.iter().copied()).collect();
            paper_drive(&sets)
        };
        let exposure = drive(&["failures.model=\"injected\"", "ftl.timing=false"]).lifetime.erase_count.mean + 1.0;
        let e = format!("failures.exposure={exposure}");
        let [base, salv] = ["retire_block", "skip_page"].map(|p| {
            let pol = format!("failures.on_program_failure=\"{p}\"");
            drive(&["failures.rber=3e-11", &e, &pol])
        });
        let (fb, fs) = (&base.failures, &salv.failures);
        let latency = salv.latency_us.all.mean / base.latency_us.all.mean;
        println!(
            "exposure {exposure:.2}; baseline: {}{fb:?}\nsalvage: {}{fs:?}\nnormalised latency {latency:.4}",
            base.to_text(),
            salv.to_text()
        );
        let want = flashlife::flash::page_errors::expected_bad_block_ratio(3e-11, 16384 * 8, 0.5, 768);
        for s in [&base, &salv] {
            assert_eq!(s.integrity.violation, None, "nothing lost");
            assert!(s.integrity.checks > 100_000, "{:?}", s.integrity);
            assert_eq!(s.integrity.out_of_order_programs, 0, "forward-only programming");
            assert_eq!(s.integrity.physical_page_programs, s.flash.page_programs);
            assert!(!s.lifetime.dead, "{:?}", s.lifetime.death_reason);
            assert_poisson_bad_blocks(s.failures.bad_blocks, want);
        }
        assert!(fb.retired_blocks > 0 && fs.retired_blocks == 0, "{fb:?} {fs:?}");
        assert!(salv.technique::<SalvageSummary>("salvage").expect("salvage's section").skip_retries > 0);
        assert!(
            salv.write_amplification <= base.write_amplification,
            "WA {} vs {}",
            salv.write_amplification,
            base.write_amplification
        );
        assert!(salv.flash.page_programs <= base.flash.page_programs);
        assert!(latency <= 1.005, "normalised latency {latency}");
        // Regression pin (deterministic, seed 1; docs/techniques/salvage.md quotes it). Latency
        // is response time from arrival: at QD1 most of this replay's requests wait for the
        // slot (0.770 when it counted from issue, before 2026-11-24; 20 / 16 and 0.6354 before
        // victims were ranked by the units cleaning them frees, the same day).
        assert_eq!((fb.bad_blocks, fs.bad_blocks), (20, 18), "regression pin");
        assert!((latency - 0.6544).abs() < 5e-4, "regression pin: normalised latency {latency:.4}");
    }
}

/// The paper's four workloads approximated from published statistics
/// (`python/flashlife/reproduce/salvage_workloads/*.toml`, the one copy, shipped in the Python
/// package; docs/techniques/salvage.md, "Figure 4 on the paper's workloads, approximated"): each file merges over the salvage drive, generates the
/// read share, mean request size, mean arrival rate and hot share the doc's table states, and
/// runs a few hundred requests on a cut-down drive with both failure policies.
#[test]
fn approximated_paper_workloads_keep_their_documented_statistics() {
    use flashlife::workload::{build, IoKind, WorkloadContext};
    use flashlife::ConfigBuilder;
    // (file, read share, mean size in bytes, mean rate in IOPS, hot share of the first 20%).
    let want: [(&str, f64, f64, f64, Option<f64>); 4] = [
        ("alibaba", 0.25, 12_697.6, 67.5, Some(0.8)),
        ("exchange", 0.63, 9_216.0, 153.5, None),
        ("msnfs", 0.60, 21_299.2, 114.8, None),
        ("vdi", 0.35, 97_484.8, 15.1, Some(0.8)),
    ];
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/flashlife/reproduce/salvage_workloads");
    for (name, reads, size, rate, hot) in want {
        let path = dir.join(format!("{name}.toml"));
        let path = path.to_str().expect("utf-8 path");
        let cfg = ConfigBuilder::new()
            .preset("salvage-small")
            .and_then(|b| b.file(path))
            .and_then(|b| b.build())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let logical = 1u64 << 34;
        let ctx = WorkloadContext { logical_bytes: logical, unit_bytes: 16384, seed: 1 };
        let mut w = build(&cfg.workload, &ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
        let n = 20_000u64;
        let (mut r, mut bytes, mut in_hot, mut last) = (0u64, 0u64, 0u64, 0u64);
        for _ in 0..n {
            let q = w.next_request().expect("a request").expect("endless");
            r += u64::from(q.kind == IoKind::Read);
            bytes += q.size;
            in_hot += u64::from(q.offset < logical / 5);
            last = q.arrival_ns;
        }
        let (got_reads, got_size) = (r as f64 / n as f64, bytes as f64 / n as f64);
        let got_rate = (n - 1) as f64 / (last as f64 * 1e-9);
        assert!((got_reads - reads).abs() < 0.02, "{name}: read share {got_reads}, want {reads}");
        assert!((got_size / size - 1.0).abs() < 0.08, "{name}: mean size {got_size}, want {size}");
        assert!((got_rate / rate - 1.0).abs() < 0.03, "{name}: {got_rate} IOPS, want {rate}");
        if let Some(h) = hot {
            let got = in_hot as f64 / n as f64;
            assert!((got - h).abs() < 0.02, "{name}: {got} of requests in the hot fifth, want {h}");
        }
        // It runs on the salvage drive (cut to 1,024 blocks) with either policy.
        for policy in ["retire_block", "skip_page"] {
            let s = ConfigBuilder::new()
                .preset("salvage-small")
                .and_then(|b| b.file(path))
                .and_then(|b| b.set("geometry.blocks_per_plane=128"))
                .and_then(|b| b.set("ftl.precondition_drive_writes=0.1"))
                .and_then(|b| b.set("run.until=\"requests:400\""))
                .and_then(|b| b.set("run.progress=\"off\""))
                .and_then(|b| b.set(&format!("failures.on_program_failure=\"{policy}\"")))
                .and_then(|b| b.build())
                .and_then(Simulator::new)
                .and_then(|sim| sim.run())
                .unwrap_or_else(|e| panic!("{name} {policy}: {e}"))
                .summary;
            assert_eq!(s.host.read_requests + s.host.write_requests, 400, "{name} {policy}");
            assert!(s.throughput.iops > 0.0 && s.latency_us.all.mean > 0.0, "{name} {policy}");
        }
    }
}
