//! Write amplification against closed forms no one here wrote:
//! - FIFO cleaning under uniform random writes: WA = 1/(1-x), x = exp(-(1+op)(1-x))
//!   (Desnoyers, "Analytic models of SSD write performance", and earlier Menon/Rosenblum);
//! - greedy cleaning: the mean-field model in which victims hold j or j+1 valid pages;
//! - random cleaning: WA = 1/spare factor = (1+op)/op.

mod common;

/// FIFO closed form.
fn fifo_wa(op: f64) -> f64 {
    let a = 1.0 + op;
    let mut x = 0.5;
    for _ in 0..10_000 {
        x = (-a * (1.0 - x)).exp();
    }
    1.0 / (1.0 - x)
}

/// One pool (a single plane), single-unit uniform random writes, fast-forward, after
/// preconditioning to steady state; WA measured over the run.
fn simulated_wa(op: f64, victim: &str, pages_per_block: u32, blocks: u32) -> f64 {
    let sets = [
        "geometry.channels=1".to_string(),
        "geometry.ways=1".into(),
        "geometry.dies=1".into(),
        "geometry.planes=1".into(),
        format!("geometry.blocks_per_plane={blocks}"),
        format!("geometry.pages_per_block={pages_per_block}"),
        "flash.page_size=4096".into(),
        format!("capacity.overprovisioning={op}"),
        format!("gc.victim=\"{victim}\""),
        "gc.low_watermark=0".into(),
        "gc.high_watermark=0".into(),
        "wear_leveling.enabled=false".into(),
        "ftl.timing=false".into(),
        "ftl.precondition=\"steady\"".into(),
        "ftl.precondition_drive_writes=3".into(),
        "run.until=\"writes:3dw\"".into(),
    ];
    let refs: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
    common::run(&refs).summary.write_amplification
}

#[test]
fn fifo_matches_closed_form() {
    for op in [0.07, 0.28, 0.5] {
        let want = fifo_wa(op);
        let got = simulated_wa(op, "fifo", 64, 4096);
        let err = (got - want).abs() / want;
        println!("fifo op {op}: simulated {got:.4}, closed form {want:.4}, error {:.2}%", err * 100.0);
        assert!(err < 0.02, "fifo op {op}: simulated {got}, closed form {want}");
    }
}

#[test]
fn greedy_matches_mean_field_and_beats_fifo() {
    for b in [64, 128] {
        for op in [0.07, 0.28, 0.5] {
            let want = common::greedy_wa(op, b);
            let got = simulated_wa(op, "greedy", b, 524_288 / b);
            let err = (got - want).abs() / want;
            println!("greedy b {b} op {op}: simulated {got:.4}, mean field {want:.4}, error {:.2}%", err * 100.0);
            assert!(err < 0.02, "greedy b {b} op {op}: simulated {got}, model {want}");
            assert!(got < fifo_wa(op), "greedy must beat FIFO");
        }
    }
}

#[test]
fn random_victims_give_inverse_spare_factor() {
    for op in [0.28, 0.5] {
        let want = (1.0 + op) / op;
        let got = simulated_wa(op, "random", 64, 4096);
        let err = (got - want).abs() / want;
        println!("random op {op}: simulated {got:.4}, 1/sf {want:.4}, error {:.2}%", err * 100.0);
        assert!(err < 0.03, "random op {op}: simulated {got}, expected {want}");
    }
}

#[test]
fn sequential_overwrites_have_unit_write_amplification() {
    let cfg = common::config(&[
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=64",
        "flash.page_size=4096",
        "ftl.precondition=\"full\"",
        "run.until=\"writes:3dw\"",
    ]);
    let units = flashlife::ftl::Layout::of(&cfg).unwrap().logical_units as u64;
    let wl = Box::new(common::Sequential { next: 0, units, unit: 4096 });
    let out = flashlife::Simulator::with_workload(cfg, wl).unwrap().run().unwrap();
    let wa = out.summary.write_amplification;
    assert!((wa - 1.0).abs() < 0.005, "sequential WA {wa}");
}
