//! Reusable SSD (paper 001): second writes on recycled block pairs, against the standard
//! drive (the same configuration with `reusable.enabled = false`).

mod common;

use flashlife::ftl::second_write::SecondWriteCounters;
use flashlife::ftl::Layout;
use flashlife::timing::Done;
use flashlife::workload::Workload;
use flashlife::{Config, ConfigBuilder, RunOutput, Simulator};

/// The small-block preset at CI size: 2 chips of 256 blocks per plane (64 MiB planes).
fn config(sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::new().preset("reusable-small").unwrap();
    for s in ["geometry.ways=2", "geometry.blocks_per_plane=256", "run.progress=\"off\"", "run.until=\"writes:4dw\""]
        .iter()
        .chain(sets)
    {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

fn run_with(cfg: Config, wl: Box<dyn Workload>) -> RunOutput {
    Simulator::with_workload(cfg, wl).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
}

/// The workload module's Zipf generator (`workload.kind = "zipf"`, ranks scattered over the
/// address space, one-unit requests).
fn zipf(sets: &[&str], alpha: f64, read_ratio: f64) -> RunOutput {
    let a = format!("workload.zipf.alpha={alpha}");
    let r = format!("workload.read_ratio={read_ratio}");
    let cfg = config(&[&["workload.kind=\"zipf\"", &a, &r][..], sets].concat());
    Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
}

/// (relative erasures, relative mean response time) of Reusable SSD against the standard drive.
fn relative(sets: &[&str], alpha: f64, read_ratio: f64) -> (f64, f64, RunOutput) {
    let base = zipf(&[sets, &["reusable.enabled=false"]].concat(), alpha, read_ratio);
    let reu = zipf(sets, alpha, read_ratio);
    assert_eq!(reu.summary.integrity.out_of_order_programs, 0);
    let e = reu.summary.flash.block_erases as f64 / base.summary.flash.block_erases as f64;
    let t = reu.summary.latency_us.all.mean / base.summary.latency_us.all.mean;
    (e, t, reu)
}

#[test]
fn best_case_writes_half_a_block_more_between_erasures() {
    // Every unit is overwritten once per pass before GC sees its block again (cyclic
    // sequential 4 KiB writes, all hot), recycled capacity unlimited and encoding always
    // succeeding: each block takes N first writes and, paired, N/2 logical second writes
    // between erasures, so erasures fall by exactly a third (the paper's best-case analysis).
    let sets = ["capacity.overprovisioning=2.0", "reusable.success_probability=1.0", "ftl.integrity_oracle=true"];
    let cfg = config(&sets);
    let unit = 4096;
    let units = Layout::of(&cfg).unwrap().logical_units as u64;
    let seq = |cfg| run_with(cfg, Box::new(common::Sequential { next: 0, units, unit }));
    let reu = seq(cfg);
    let base = seq(config(&[&sets[..], &["reusable.enabled=false"]].concat()));
    let n = 64.0;
    let (e_b, e_r) = (base.summary.flash.block_erases as f64, reu.summary.flash.block_erases as f64);
    let sw = reu.summary.technique::<SecondWriteCounters>("reusable").unwrap();
    eprintln!("best case: erasures {e_b} -> {e_r}, {sw:?}");
    // Every recycled block took N/2 logical second writes (N physical half-pages) before its
    // erasure, and no valid data was ever moved.
    let per_block = sw.units as f64 / sw.blocks_reused as f64;
    assert!((per_block - n / 2.0).abs() < 0.01 * n / 2.0, "second writes per reused block {per_block:.2}");
    assert_eq!(reu.summary.gc.valid_units_moved, 0);
    // So at most 2/3 of the erasures remain (fewer in a finite run: recycled blocks not yet
    // erased when it ends, as in the paper's traces).
    assert!(e_r / e_b <= 2.0 / 3.0 + 0.01 && e_r / e_b > 0.4, "relative erasures {:.4}", e_r / e_b);
    assert_eq!(reu.summary.capacity.logical_bytes, base.summary.capacity.logical_bytes);
}

#[test]
fn zipf_at_28_percent_op_cuts_erasures_and_not_speed() {
    for alpha in [2.0, 1.0] {
        let (e, t, out) = relative(&["capacity.overprovisioning=0.28"], alpha, 0.0);
        eprintln!(
            "zipf({alpha}) op 28%: erasures x{e:.3}, response time x{t:.3}, {:?}",
            out.summary.techniques.get("reusable")
        );
        if alpha == 2.0 {
            // The paper: about -33% erasures at op 28% (x0.67).
            assert!(e < 0.72, "zipf(2): relative erasures {e:.3}");
        }
        // Regression pin (deterministic; the project's own output, no paper figure for
        // zipf(1)): relative erasures and response time, as docs/techniques/reusable-ssd.md
        // quotes them for the small preset at CI size.
        let (pin_e, pin_t) = if alpha == 2.0 { (0.686, 0.988) } else { (0.878, 0.933) };
        assert!(
            (e - pin_e).abs() < 5e-4 && (t - pin_t).abs() < 5e-4,
            "regression pin zipf({alpha}): erasures x{e:.4} (pinned {pin_e}), response x{t:.4} (pinned {pin_t})"
        );
        // zipf(1): response time falls; zipf(2) (WA ~1, erasures rare in the standard drive):
        // within 1% (see docs/techniques/reusable-ssd.md).
        let limit = if alpha == 2.0 { 1.01 } else { 1.0 };
        assert!(t <= limit, "zipf({alpha}): relative response time {t:.3}");
    }
}

#[test]
fn sequential_layout_and_no_prefetch_are_slower() {
    let sets = ["capacity.overprovisioning=0.28"];
    let mean = |extra: &str| zipf(&[&sets[..], &[extra]].concat(), 2.0, 0.0).summary.latency_us.all.mean;
    let parallel = mean("reusable.prefetch=true");
    let no_prefetch = mean("reusable.prefetch=false");
    let sequential = mean("reusable.layout=\"sequential\"");
    eprintln!("mean response us: parallel {parallel:.1}, no prefetch {no_prefetch:.1}, sequential {sequential:.1}");
    assert!(no_prefetch > parallel, "prefetch must help: {no_prefetch:.1} vs {parallel:.1}");
    assert!(sequential > parallel * 1.02, "sequential must be slower: {sequential:.1} vs {parallel:.1}");
}

/// The idle prefetch (`reusable.prefetch_issue = "idle"`) asks the scheduler whether the pair
/// read would have fitted in the die's and channel's idle time since it was wanted
/// (`Scheduler::fits_before`). The reservation scheduler answers from its timelines; the
/// queued one from when each die and channel last went idle (the gap that has just passed,
/// which no host work used). Both then see the same gaps on a closed loop at queue depth 1
/// (a die idle from a request's end to the next request's issue): the prefetched share of
/// pair reads is within 5 points of the reservation scheduler's, and prefetching makes the
/// queued drive faster, as it does the reservation one. Before (a check counted from the
/// clock only, so a gap already passed never fitted) the queued scheduler prefetched none of
/// them on zipf(2) OP 7% (36,068 under reservation, docs/techniques/reusable-ssd.md).
#[test]
fn idle_prefetch_sees_the_same_idle_time_under_either_scheduler() {
    let sets = ["capacity.overprovisioning=0.07"];
    let share = |scheduler: &str| {
        let sched = format!("timing.scheduler=\"{scheduler}\"");
        let out = zipf(&[&sets[..], &[sched.as_str()]].concat(), 2.0, 0.0);
        let sw = out.summary.technique::<SecondWriteCounters>("reusable").unwrap();
        let none = zipf(&[&sets[..], &[sched.as_str(), "reusable.prefetch=false"]].concat(), 2.0, 0.0);
        let (with, without) = (out.summary.latency_us.all.mean, none.summary.latency_us.all.mean);
        let share = sw.prefetch_reads as f64 / (sw.prefetch_reads + sw.demand_reads) as f64;
        eprintln!(
            "{scheduler}: prefetched {} of {} pair reads ({share:.3}); mean response {with:.1} us, {without:.1} without prefetch",
            sw.prefetch_reads,
            sw.prefetch_reads + sw.demand_reads
        );
        assert!(with < without, "{scheduler}: prefetch must help: {with:.1} vs {without:.1}");
        share
    };
    let (res, queued) = (share("reservation"), share("queued"));
    assert!(res > 0.3, "{res}");
    assert!((queued - res).abs() < 0.05, "queued {queued:.3} against reservation {res:.3}");
}

#[test]
fn p95_with_one_retry_is_within_one_percent_of_p100() {
    let sets = ["capacity.overprovisioning=0.28"];
    let p = |extra: &[&str]| zipf(&[&sets[..], extra].concat(), 2.0, 0.0).summary.latency_us.all.mean;
    let perfect = p(&["reusable.success_probability=1.0"]);
    let retry = p(&["reusable.success_probability=0.95", "reusable.retry=\"same_data\""]);
    let rel = retry / perfect;
    eprintln!("P=95% with retry vs P=100%: x{rel:.4}");
    assert!((rel - 1.0).abs() < 0.01, "x{rel:.4}");
}

#[test]
fn second_writes_read_back_and_survive_cleaning() {
    for layout in ["parallel", "sequential"] {
        for retry in ["same_data", "extra_read", "none"] {
            let l = format!("reusable.layout=\"{layout}\"");
            let r = format!("reusable.retry=\"{retry}\"");
            let sets = [
                "ftl.integrity_oracle=true",
                "capacity.overprovisioning=0.28",
                "reusable.success_probability=0.8",
                "run.until=\"writes:2dw\"",
                &l,
                &r,
            ];
            let out = zipf(&sets, 1.0, 0.3);
            let s = &out.summary;
            let sw = s.technique::<SecondWriteCounters>("reusable").unwrap();
            assert!(sw.units > 1000, "{layout}/{retry}: {sw:?}");
            assert!(sw.paired_host_reads > 100, "second-written units read back: {sw:?}");
            assert!(sw.moved_by_gc > 100, "second-written units moved off cleaned reused blocks: {sw:?}");
            assert!(sw.encode_fallbacks > 0, "{sw:?}");
            assert!(s.integrity.checks > 100_000);
            assert_eq!(s.integrity.violation, None);
            assert_eq!(s.integrity.out_of_order_programs, 0);
            assert!(!s.lifetime.dead, "{:?}", s.lifetime.death_reason);
            // Exported capacity is the standard drive's; the run's final check read every unit.
            let base = config(&["capacity.overprovisioning=0.28", "reusable.enabled=false"]);
            assert_eq!(s.capacity.logical_bytes, Layout::of(&base).unwrap().logical_units as u64 * 4096);
            let f = &s.flash;
            assert_eq!(f.page_programs, f.page_programs_by_cause.total());
            assert_eq!(s.integrity.physical_page_programs, f.page_programs);
            let second = f.page_programs_by_cause.get(flashlife::stats::Cause::SecondWrite);
            assert_eq!(second, 2 * sw.units, "two physical pages per second write");
        }
    }
}

#[test]
fn configuration_is_checked() {
    let mut cfg = config(&[]);
    cfg.geometry.planes = 4;
    assert!(cfg.validate().unwrap_err().to_string().contains("geometry.planes"));
    // A misspelt name is refused when the configuration is read, with the names it takes.
    let e = flashlife::ConfigBuilder::new().set("reusable.layout=\"paralel\"").and_then(|b| b.build());
    let e = e.map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("reusable.layout") && e.contains("did you mean `parallel`"), "{e}");
    let mut cfg = config(&[]);
    cfg.reusable.success_probability = 1.5;
    assert!(cfg.validate().is_err());
}

/// Lifetime to death of Reusable SSD over the standard drive, zipf(`alpha`), op 28%, threshold
/// wear leveling (so wear is even and death comes at the P/E limit), P/E limit 100 to die
/// fast: (host bytes ratio, early-life erasure ratio e, drive writes reusable, standard).
fn lifetime_gain(alpha: f64) -> (f64, f64, f64, f64) {
    let sets = [
        "capacity.overprovisioning=0.28",
        "wear_leveling.enabled=true",
        "wear_leveling.threshold=16",
        "flash.mlc.pe_limit=100",
        "run.until=\"death\"",
    ];
    let life = |extra: &str| {
        let out = zipf(&[&sets[..], &[extra]].concat(), alpha, 0.0);
        assert!(out.summary.lifetime.dead);
        (out.summary.lifetime.host_bytes_written as f64, out.summary.lifetime.drive_writes)
    };
    let ((reu, reu_dw), (std, std_dw)) = (life("reusable.enabled=true"), life("reusable.enabled=false"));
    // e measured over the early life (4 drive writes, no block past 30 cycles yet).
    let (e, _, _) = relative(
        &["capacity.overprovisioning=0.28", "wear_leveling.enabled=true", "wear_leveling.threshold=16"],
        alpha,
        0.0,
    );
    (reu / std, e, reu_dw, std_dw)
}

#[test]
fn lifetime_gain_follows_the_erasures_saved_in_the_first_30_percent_of_life() {
    // Second writes run while a block is in the first 30% of its P/E budget: if they leave a
    // fraction e of the erasures, the drive writes 0.3/e + 0.7 times as much before it dies
    // (the paper: e = 2/3 gives +15%). zipf(1).
    let (ratio, e, _, _) = lifetime_gain(1.0);
    let expected = 0.3 / e + 0.7;
    eprintln!("lifetime x{ratio:.4}, closed form 0.3/{e:.4} + 0.7 = {expected:.4}");
    // The gain (ratio - 1, about 0.04) within 10% of the closed form's.
    assert!(ratio > 1.0 && (ratio - expected).abs() < 0.1 * (expected - 1.0), "lifetime x{ratio:.4} vs {expected:.4}");
    // Regression pin of the values docs/techniques/reusable-ssd.md quotes (deterministic).
    assert!((e - 0.877).abs() < 5e-4 && (ratio - 1.040).abs() < 5e-4, "regression pin: e {e:.4}, lifetime x{ratio:.4}");
}

#[test]
fn lifetime_gain_zipf2_with_wear_leveling_regression_pin() {
    // zipf(2), same setup: longer life than the standard drive (the paper's direction), but
    // below the closed form: the hot, paired blocks pass the 30% mark long before the mean
    // does, so second writes run over 57% of the erasures at 0.863 instead of 30% at e
    // (experiments/reusable/lifetime_phases.py). Values: regression pin, quoted in
    // docs/techniques/reusable-ssd.md ("Lifetime").
    let (ratio, e, reu_dw, std_dw) = lifetime_gain(2.0);
    let expected = 0.3 / e + 0.7;
    eprintln!("zipf(2): lifetime x{ratio:.4} ({reu_dw:.2} vs {std_dw:.2} drive writes), closed form 0.3/{e:.4} + 0.7 = {expected:.4}");
    assert!(ratio > 1.0 && ratio < expected, "lifetime x{ratio:.4} vs closed form {expected:.4}");
    assert!((ratio - 1.097).abs() < 5e-4 && (e - 0.687).abs() < 5e-4, "regression pin: lifetime x{ratio:.4}, e {e:.4}");
    assert!((reu_dw - 100.85).abs() < 5e-3 && (std_dw - 91.96).abs() < 5e-3, "regression pin: {reu_dw} vs {std_dw}");
}

#[test]
fn threshold_wear_leveling_does_not_starve_second_write_gc() {
    // With wear leveling refusing the worn (hot) blocks, the greedy choice among the rest can
    // be a block full of cold data: GC must then take the block that frees most, as the
    // baseline does. Reusable SSD's GC once stopped there and the drive died early with "no
    // pool has space for host data" (11.6 drive writes against the standard drive's 92).
    let life = |enabled: bool| {
        let e = format!("reusable.enabled={enabled}");
        let sets = [
            "capacity.overprovisioning=0.28",
            "wear_leveling.enabled=true",
            "wear_leveling.threshold=16",
            "flash.mlc.pe_limit=40",
            "ftl.timing=false",
            "run.until=\"death\"",
            &e,
        ];
        zipf(&sets, 2.0, 0.0).summary.lifetime
    };
    let (std, reu) = (life(false), life(true));
    for l in [&std, &reu] {
        let reason = l.death_reason.as_deref().unwrap_or("");
        assert!(reason.contains("GC reserve"), "death by capacity, not by GC giving up: {reason}");
    }
    assert!(
        reu.drive_writes >= std.drive_writes,
        "reusable {} vs standard {} drive writes",
        reu.drive_writes,
        std.drive_writes
    );
}

#[test]
fn second_write_partition_accounting_matches_the_blocks() {
    // `reusable.first_write_op` decides from two running counts (valid pages in recycled and
    // reused blocks, live second-written units); check them against a census of the blocks
    // while hot one-unit writes recycle, reuse and clean blocks.
    use flashlife::ftl::second_write::BlockKind;
    use rand::{Rng, SeedableRng};
    for layout in ["parallel", "sequential"] {
        let l = format!("reusable.layout=\"{layout}\"");
        let cfg = config(&["capacity.overprovisioning=0.07", "ftl.integrity_oracle=true", &l]);
        let mut ftl = flashlife::sim::build_ftl(&cfg).unwrap();
        ftl.precondition(true, 0.0, 3);
        let hot = ftl.logical_units() / 3;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let mut censuses = 0;
        for i in 0..(4 * ftl.logical_units()) {
            ftl.write(rng.gen_range(0..hot), 1, Done::START);
            if i % 20_000 == 0 {
                let in_partition = |b: u32| ftl.block_kind(b) != BlockKind::First;
                let valid: u64 =
                    (0..ftl.geo.blocks()).filter(|&b| in_partition(b)).map(|b| ftl.valid_units(b) as u64).sum();
                assert_eq!(ftl.partition_valid_pages(), valid, "{layout}: after {i} writes");
                // Every live second write has both halves in the partition.
                assert!(2 * ftl.second_write_units() <= valid, "{layout}: {} units", ftl.second_write_units());
                censuses += 1;
            }
            assert_eq!(ftl.integrity_violation(), None);
        }
        assert!(
            censuses > 10 && ftl.second_write_counters().unwrap().units > 10_000,
            "{layout}: {:?}",
            ftl.second_write_counters()
        );
    }
}

#[test]
fn recycled_blocks_are_given_back_before_they_starve_first_writes() {
    // A drive sized like the paper-scale trace drives (one chip of 64 blocks per plane, op 7%:
    // R is 4.2 blocks per plane, 3 of them the clean floor), written mostly by large (cold)
    // requests. Recycling took each plane's emptiest blocks, the hot writes were too few to
    // use them up, and every used block was full of valid data: the drive died with "no pool
    // has space for host data" at 1.01 drive writes, 2 clean blocks (the GC reserve) per
    // plane and its invalid pages all in its recycled blocks (the standard drive: 2 drive
    // writes, alive). A plane short of clean blocks now takes back the recycled block that
    // frees most, and lives; measured: 2228 erasures against the standard drive's 2413.
    let run = |enabled: bool| {
        let e = format!("reusable.enabled={enabled}");
        let sets = [
            "geometry.ways=1",
            "geometry.blocks_per_plane=64",
            "capacity.overprovisioning=0.07",
            "workload.sizes=[4096, 262144]",
            "workload.size_weights=[1, 9]",
            "ftl.integrity_oracle=true",
            "run.progress=\"off\"",
            "run.until=\"writes:2dw\"",
            &e,
        ];
        let mut b = ConfigBuilder::new().preset("reusable-medium").unwrap();
        for s in sets {
            b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        let cfg = b.build().unwrap_or_else(|e| panic!("{e}"));
        Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}")).summary
    };
    let (std, reu) = (run(false), run(true));
    for s in [&std, &reu] {
        let l = &s.lifetime;
        assert!(!l.dead && l.drive_writes >= 2.0, "died at {:.3} drive writes: {:?}", l.drive_writes, l.death_reason);
        assert_eq!(s.integrity.violation, None);
    }
    let sw = &reu.techniques["reusable"];
    eprintln!("erasures {} vs standard {}; {sw:?}", reu.flash.block_erases, std.flash.block_erases);
    assert!(
        reu.flash.block_erases <= std.flash.block_erases,
        "{} vs {}",
        reu.flash.block_erases,
        std.flash.block_erases
    );
}

#[test]
fn recency_classification_keeps_the_zipf2_gain() {
    // Where the paper's size rule works, recency keeps it: zipf(2), op 28% (the trace-free half
    // of `shared_traces::recency_classification_removes_the_small_geometry_loss`). Reference:
    // the paper's -33% erasures at op 28% (x0.67); bound as in `zipf_at_28_percent_op_...`.
    let (e, _, out) = relative(&["capacity.overprovisioning=0.28", "reusable.hot_cold=\"recency\""], 2.0, 0.0);
    eprintln!("zipf(2) op 28%, recency: erasures x{e:.3}, {:?}", out.summary.techniques.get("reusable"));
    assert!(e < 0.72, "zipf(2): x{e:.3}");
}

/// Tests on the real traces in `../shared/traces`: ignored by default (`cargo test` reports them
/// as ignored), run by `scripts/test.sh` with `-- --ignored shared_traces::` when the folder
/// exists.
mod shared_traces {
    use super::*;

    /// The real traces beside the checkout (`../shared/traces`). These tests are ignored by
    /// default and run by `scripts/test.sh` when the folder exists; run without it, they fail.
    fn trace(file: &str) -> Vec<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/").to_string() + file;
        assert!(std::path::Path::new(&path).exists(), "needs ../shared/traces: {path} not found");
        vec![
            "workload.kind=\"trace\"".into(),
            format!("workload.trace.path=\"{path}\""),
            "workload.trace.loops=0".into(),
            "workload.trace.fold=\"remap_first\"".into(),
            "run.until=\"writes:2dw\"".into(),
        ]
    }

    fn relative_on(sets: &[String]) -> (f64, f64) {
        let run = |extra: &[&str]| {
            let all: Vec<&str> = sets.iter().map(|s| s.as_str()).chain(extra.iter().copied()).collect();
            Simulator::new(config(&all)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
        };
        let (base, reu) = (run(&["reusable.enabled=false"]), run(&[]));
        let e = reu.summary.flash.block_erases as f64 / base.summary.flash.block_erases as f64;
        (e, reu.summary.latency_us.all.mean / base.summary.latency_us.all.mean)
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn a_starved_plane_with_no_recycled_block_waiting_closes_its_lane() {
        // rsrch_1 on its footprint-sized drive of the paper scale (`reusable-medium`, one chip
        // of 121 blocks per plane), op 7%, foreground GC: planes starve here with no recycled
        // block waiting, and close their lanes (measured: with the lane closing switched off
        // the run erases 8014 blocks instead of 7010 over 3 drive writes). Nothing is lost
        // when a lane is closed for space, and the drive writes its 2 drive writes.
        let mut b = ConfigBuilder::new().preset("reusable-medium").unwrap();
        let sizing = [
            "geometry.ways=1",
            "geometry.blocks_per_plane=121",
            "capacity.overprovisioning=0.07",
            "gc.mode=\"foreground\"",
            "timing.scheduler=\"reservation\"",
            "ftl.integrity_oracle=true",
            "run.progress=\"off\"",
        ];
        for s in trace("msr/rsrch_1.csv").iter().map(|s| s.as_str()).chain(sizing) {
            b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        let out = Simulator::new(b.build().unwrap()).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"));
        let l = &out.summary.lifetime;
        assert!(!l.dead && l.drive_writes >= 2.0, "died at {:.3} drive writes: {:?}", l.drive_writes, l.death_reason);
        assert_eq!(out.summary.integrity.violation, None);
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn tpcc_at_7_percent_op_cuts_erasures_and_response_time() {
        // The paper's consumer setup (op 7%): erasures down about a third or more, and response
        // time down (up to 35%) where the standard drive's GC moves data (TPC-C: WA 1.6).
        let mut sets = trace("mqsim/tpcc-small.trace");
        sets.push("capacity.overprovisioning=0.07".into());
        let (e, t) = relative_on(&sets);
        eprintln!("tpcc op 7%: erasures x{e:.3}, response time x{t:.3}");
        assert!(e < 0.67, "relative erasures {e:.3}");
        assert!(t < 0.85, "relative response time {t:.3}");
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn idle_prefetch_never_delays_host_work() {
        // The paper: "prefetching never delayed reads or first writes". Prefetch in idle time only
        // must be at least as fast as prefetch issued first-come first-served, and as fast as no
        // prefetch at all (Financial1: reads and small writes, op 28%).
        let mut sets = trace("umass/Financial1-first10k.ascii");
        sets.push("capacity.overprovisioning=0.28".into());
        let mean = |extra: &str| {
            let all: Vec<&str> = sets.iter().map(|s| s.as_str()).chain([extra]).collect();
            let out = Simulator::new(config(&all)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"));
            out.summary.latency_us.all.mean
        };
        let idle = mean("reusable.prefetch_issue=\"idle\"");
        let eager = mean("reusable.prefetch_issue=\"eager\"");
        let none = mean("reusable.prefetch=false");
        eprintln!("fin1 op 28% mean response us: idle prefetch {idle:.1}, eager {eager:.1}, none {none:.1}");
        assert!(idle <= eager && idle <= none, "idle {idle:.1}, eager {eager:.1}, none {none:.1}");
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn first_write_op_keeps_second_writes_from_starving_first_writes() {
        // rsrch_1 on the small-block drive at op 7%: small requests whose data is not re-written
        // soon. With the paper's 2R cap alone, second-written data stays valid at half density
        // and the first writes run out of spare space (victims 46 of 64 pages valid against the
        // standard drive's 12); keeping half of R for first writes cuts that loss.
        let mut sets = trace("msr/rsrch_1.csv");
        sets.push("capacity.overprovisioning=0.07".into());
        let (paper, _) = relative_on(&sets);
        sets.push("reusable.first_write_op=0.5".into());
        let (kept, _) = relative_on(&sets);
        eprintln!("rsrch_1 op 7% relative erasures: 2R cap alone x{paper:.3}, first_write_op 0.5 x{kept:.3}");
        assert!(paper > 1.5, "the loss this rule is for: x{paper:.3}");
        assert!(kept < 0.75 * paper, "x{kept:.3} vs x{paper:.3}");
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn recency_classification_removes_the_small_geometry_loss() {
        // The same rsrch_1 point with `reusable.hot_cold = "recency"`: a small write is hot only if
        // its unit was rewritten within the last R units written, so data that is not re-written
        // soon no longer sits at half density in the second-write partition.
        let mut sets = trace("msr/rsrch_1.csv");
        sets.push("capacity.overprovisioning=0.07".into());
        sets.push("reusable.hot_cold=\"recency\"".into());
        sets.push("ftl.integrity_oracle=true".into());
        let (e, t) = relative_on(&sets);
        eprintln!("rsrch_1 op 7%, recency classification: erasures x{e:.3}, response x{t:.3}");
        assert!(e < 1.0, "relative erasures x{e:.3}");
        assert!(t < 1.1, "relative response time x{t:.3}");
    }
}
