//! TRIM / deallocate: trimmed units become invalid without a program and read as unmapped.
//!
//! References:
//! - closed form: greedy GC's write amplification under uniform random writes (the mean-field
//!   model of `write_amplification.rs`) holds with trims when the logical space is replaced
//!   by the units that hold data. With a share `t` of uniform random requests trimming one
//!   unit and the rest writing one, each unit's last request is a write with probability
//!   `1 - t`, so `(1 - t) L` units hold data at steady state; every write and trim of a mapped
//!   unit invalidates a uniformly chosen valid copy, as uniform writes over `(1 - t) L` units
//!   do. Effective over-provisioning: `P / ((1 - t) L) - 1 = (1 + op) / (1 - t) - 1`
//!   (Frankie, Hughes and Kreutz-Delgado, "Analysis of Trim commands on overprovisioning and
//!   write amplification in solid state drives", ACM TOS 2013: Trim adds the unused space to
//!   the effective spare factor);
//! - invariants: the integrity oracle (nothing written and not trimmed is lost, a trimmed
//!   unit never reads as data), counts kept by two code paths (the run loop's trim requests
//!   against the trace's records, the FTL's mapped units against flash reads avoided).

mod common;

use std::io::Write as _;

use flashlife::Simulator;

/// WA measured over host writes `skip_dw..` (drive writes) of a run, from the time series
/// (rows every 0.25 drive writes): the transient after preconditioning, when more units
/// hold data than at steady state, is left out.
fn steady_wa(op: f64, trim: f64, skip_dw: f64, measure_dw: f64) -> f64 {
    let sets = [
        "geometry.channels=1".to_string(),
        "geometry.ways=1".into(),
        "geometry.dies=1".into(),
        "geometry.planes=1".into(),
        "geometry.blocks_per_plane=4096".into(),
        "geometry.pages_per_block=64".into(),
        "flash.page_size=4096".into(),
        format!("capacity.overprovisioning={op}"),
        "gc.victim=\"greedy\"".into(),
        "gc.low_watermark=0".into(),
        "gc.high_watermark=0".into(),
        "wear_leveling.enabled=false".into(),
        "ftl.timing=false".into(),
        "ftl.precondition=\"steady\"".into(),
        "ftl.precondition_drive_writes=3".into(),
        format!("workload.trim_ratio={trim}"),
        "stats.interval=\"0.25dw\"".into(),
        format!("run.until=\"writes:{}dw\"", skip_dw + measure_dw),
    ];
    let refs: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
    let out = common::run(&refs);
    let logical = out.summary.capacity.logical_bytes as f64;
    let (mut programs, mut units) = (0.0, 0.0);
    let mut prev = 0u64;
    for r in &out.timeseries.rows {
        let bytes = r.host_bytes_written - prev;
        prev = r.host_bytes_written;
        if r.host_bytes_written as f64 > skip_dw * logical {
            programs += r.wa_interval * bytes as f64;
            units += bytes as f64;
        }
    }
    if trim > 0.0 {
        let t = out.summary.trim.as_ref().expect("a trim section");
        assert!(t.requests > 0 && t.mapped_units > 0, "{t:?}");
    }
    programs / units
}

/// Closed form (see the module docs): a trimmed share `t` of uniform random requests acts as
/// extra spare space, WA = greedy_wa((1 + op) / (1 - t) - 1). Tolerance 2%: the bound
/// `write_amplification.rs` holds the same model to without trims (mean-field error and a
/// finite drive); the number of units holding data fluctuates by about
/// sqrt(t / ((1 - t) L)) < 0.2% of it, and the transient (time constant L requests,
/// (1 - t) drive writes) is skipped for 5 time constants (its remaining excess of valid
/// units, t e^-5 L, is under 0.3% of L).
#[test]
fn trimmed_share_acts_as_spare_space_under_greedy_gc() {
    let op = 0.07;
    for trim in [0.2, 0.4] {
        let op_eff = (1.0 + op) / (1.0 - trim) - 1.0;
        let want = common::greedy_wa(op_eff, 64);
        let got = steady_wa(op, trim, 5.0 * (1.0 - trim), 2.0);
        let err = (got - want).abs() / want;
        println!(
            "trim {trim}: simulated WA {got:.4}, greedy closed form at op {op_eff:.4}: {want:.4} (without trims {:.4}), error {:.2}%",
            common::greedy_wa(op, 64),
            err * 100.0
        );
        assert!(err < 0.02, "trim {trim}: simulated {got}, closed form {want}");
    }
}

/// The same runs without trims still match the closed form at the configured spare space:
/// the measurement window (not the trims) is what the test above varies.
#[test]
fn without_trims_the_window_measures_the_plain_closed_form() {
    let want = common::greedy_wa(0.07, 64);
    let got = steady_wa(0.07, 0.0, 1.0, 2.0);
    let err = (got - want).abs() / want;
    println!("no trim: simulated WA {got:.4}, closed form {want:.4}, error {:.2}%", err * 100.0);
    assert!(err < 0.02, "simulated {got}, closed form {want}");
}

/// Invariant (the integrity oracle): reads, writes and trims of several sizes mixed, with GC
/// running, on the block FTL under both schedulers and on the open-channel host FTL: every
/// read and overwrite is checked against the version last written (a trimmed unit must read
/// as unmapped and cost no flash read) and, at the end, every unit: nothing written and not
/// trimmed is lost.
#[test]
fn oracle_holds_with_trims_mixed_in() {
    let base = [
        "ftl.integrity_oracle=true",
        "workload.read_ratio=0.3",
        "workload.trim_ratio=0.2",
        "workload.sizes=[4096, 16384, 65536]",
        "run.until=\"writes:3dw\"",
        "run.progress=\"off\"",
    ];
    for extra in [
        &[][..],
        &["timing.scheduler=\"queued\""][..],
        &["host.interface=\"open_channel\"", "capacity.overprovisioning=0.3"][..],
    ] {
        let mut sets: Vec<&str> = base.to_vec();
        sets.extend_from_slice(extra);
        let cfg = {
            let mut b = flashlife::ConfigBuilder::new().preset("tiny").unwrap();
            for s in &sets {
                b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            }
            b.build().unwrap()
        };
        let out = Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{extra:?}: {e}"));
        let s = &out.summary;
        let t = s.trim.as_ref().expect("a trim section");
        println!("{extra:?}: {t:?}, unmapped reads {}, checks {}", s.flash.unmapped_reads, s.integrity.checks);
        assert_eq!(s.integrity.violation, None, "{extra:?}");
        assert!(s.integrity.checks > 0);
        assert!(t.requests > 0 && t.mapped_units > 0 && t.mapped_units <= t.units, "{t:?}");
        // Each request is a trim with probability 0.2: over the run's ~6,000 requests the
        // share's standard deviation is sqrt(0.2 * 0.8 / 6000) = 0.005; 0.02 is 4 of them.
        let share = t.requests as f64 / s.run.requests as f64;
        assert!(s.run.requests > 4000 && (share - 0.2).abs() < 0.02, "trim share {share}");
        assert!(s.flash.unmapped_reads > 0, "reads of trimmed units are unmapped reads");
    }
}

/// Invariant, counts from two code paths: a flashlife CSV trace's `T` records become trim
/// requests only with `workload.trace.discards = "trim"` (otherwise they are ignored lines),
/// the run loop counts as many as the file holds, and a read of the trimmed units costs no
/// flash read (all its units are unmapped).
#[test]
fn csv_trims_replay_only_when_asked() {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    writeln!(f, "time_ns,op,offset,size").unwrap();
    // Write 64 KiB, trim its middle 32 KiB, read the trimmed part, read all of it; then trim
    // 4 KiB less than a unit at the end (nothing whole: nothing deallocated) and read it.
    writeln!(f, "0,W,0,65536").unwrap();
    writeln!(f, "1000,T,16384,32768").unwrap();
    writeln!(f, "2000,R,16384,32768").unwrap();
    writeln!(f, "3000,R,0,65536").unwrap();
    writeln!(f, "4000,T,53248,12288").unwrap();
    writeln!(f, "5000,R,49152,16384").unwrap();
    f.flush().unwrap();
    let path = f.path().display().to_string();
    let run = |discards: &str| {
        common::run(&[
            "workload.kind=\"trace\"",
            &format!("workload.trace.path={path:?}"),
            &format!("workload.trace.discards={discards:?}"),
            "ftl.integrity_oracle=true",
            "run.progress=\"off\"",
        ])
    };
    let ignored = run("ignore");
    let unit = ignored.summary.capacity.mapping_unit_bytes;
    assert!(ignored.summary.trim.is_none());
    assert_eq!(ignored.summary.host.read_requests + ignored.summary.host.write_requests, 4);
    assert_eq!(unit, 16384, "the default drive's mapping unit, which the offsets above assume");
    assert_eq!(ignored.summary.flash.unmapped_reads, 0);
    let trimmed = run("trim");
    let t = trimmed.summary.trim.as_ref().expect("a trim section");
    assert_eq!((t.requests, t.bytes, t.units, t.mapped_units), (2, 32768 + 12288, 32768 / unit, 32768 / unit));
    assert_eq!(trimmed.summary.flash.unmapped_reads, 2 * 32768 / unit);
    assert_eq!(trimmed.summary.integrity.violation, None);
    assert!(trimmed.summary.flash.page_reads < ignored.summary.flash.page_reads);
}

/// Configuration errors name the key and what was expected; the default configuration's
/// text carries no trim key (its hash does not move).
#[test]
fn trim_configuration() {
    let text = common::config(&[]).to_toml();
    assert!(!text.contains("trim_ratio") && !text.contains("discards"), "{text}");
    let on = common::config(&["workload.trim_ratio=0.25"]).to_toml();
    assert!(on.contains("trim_ratio = 0.25"), "{on}");
    let err = |sets: &[&str]| {
        let mut b = flashlife::ConfigBuilder::new();
        for s in sets {
            b = b.set(s).unwrap();
        }
        b.build().map(|_| ()).unwrap_err().to_string()
    };
    let e = err(&["workload.read_ratio=0.7", "workload.trim_ratio=0.5"]);
    assert!(e.contains("workload.trim_ratio") && e.contains("1 - read_ratio"), "{e}");
    let e = err(&["workload.kind=\"trace\"", "workload.trace.path=\"x\"", "workload.trim_ratio=0.1"]);
    assert!(e.contains("workload.trim_ratio") && e.contains("discards"), "{e}");
    let e = err(&["workload.trace.discards=\"keep\""]);
    assert!(e.contains("workload.trace.discards") && e.contains("trim"), "{e}");
}
