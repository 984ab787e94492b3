//! Results that look wrong say why (issue "a researcher's tool"): the default drive's short run
//! and a small real trace on the default drive carry the warnings a careful engineer would give.
//! References: the causes themselves, measured in the same run (GC owed at the start, units
//! written, the share of the drive the trace touched).

mod common;

fn warnings(sets: &[&str]) -> Vec<String> {
    common::run(sets).summary.run.warnings
}

fn has(w: &[String], start: &str) -> bool {
    w.iter().any(|x| x.starts_with(start))
}

/// The default drive, a few thousand writes after steady-state preconditioning: its GC repays
/// the preconditioning's debt, and its write tail is a stall.
#[test]
fn the_default_drive_run_briefly_says_its_gc_repays_a_debt() {
    let w = warnings(&["run.until=\"requests:3000\"", "run.progress=\"off\""]);
    assert!(has(&w, "the run wrote 3000 mapping units, fewer than the"), "{w:?}");
    // Under reservation the debt's clean-ups are booked whole inside writes: a stall.
    let r = ["run.until=\"requests:3000\"", "run.progress=\"off\"", "timing.scheduler=\"reservation\""];
    assert!(has(&warnings(&r), "write latency p99"), "{w:?}");
    // Written past the debt, the same drive's GC is the workload's own: no debt warning.
    let w = warnings(&["run.until=\"writes:0.2dw\"", "run.progress=\"off\""]);
    assert!(!has(&w, "the run wrote"), "{w:?}");
}

mod shared_traces {
    use super::*;

    fn trace(file: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(file);
        assert!(p.exists(), "needs ../shared/traces: {} not found", p.display());
        format!("workload.trace.path={:?}", p.canonicalize().unwrap().display().to_string())
    }

    /// A real MSR trace of a few hundred requests on the 8 GiB default drive: it touches a
    /// sliver of the drive, and the GC it sees is the preconditioning's.
    #[test]
    #[ignore = "needs ../shared/traces"]
    fn a_small_trace_on_a_big_drive_says_so() {
        let path = trace("msr/hm_0-first200.csv");
        let w = warnings(&["workload.kind=\"trace\"", &path, "run.until=\"end\"", "run.progress=\"off\""]);
        assert!(has(&w, "the trace touched 0.0"), "{w:?}");
        assert!(has(&w, "the run wrote"), "{w:?}");
    }
}
