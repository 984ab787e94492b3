//! The per-request latency log (`stats.request_log`). References: the summary's own
//! histograms (the log's response times must average to the summary's mean), causality
//! (arrival <= issue <= finish), and the checkpoint invariant (a resumed run's log is the
//! uninterrupted run's, byte for byte).

mod common;

use flashlife::run_dir::{run_to_dir, DirOptions};
use flashlife::sim::Control;
use flashlife::{checkpoint, Simulator};

fn cfg(extra: &[&str]) -> flashlife::Config {
    common::config(
        &[common::PEER, &["workload.read_ratio=0.3", "run.until=\"requests:20000\"", "stats.request_log=true"], extra]
            .concat(),
    )
}

struct Row {
    arrival: u64,
    issue: u64,
    finish: u64,
    op: String,
    bytes: u64,
    behind: Option<u64>,
}

fn rows(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("arrival_ns,issue_ns,finish_ns,op,bytes,behind_background_ns,hard_threshold"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 7, "{l}");
            Row {
                arrival: f[0].parse().unwrap(),
                issue: f[1].parse().unwrap(),
                finish: f[2].parse().unwrap(),
                op: f[3].to_string(),
                bytes: f[4].parse().unwrap(),
                behind: (!f[5].is_empty()).then(|| f[5].parse().unwrap()),
            }
        })
        .collect()
}

#[test]
fn a_run_folder_gets_one_row_per_request_agreeing_with_the_summary() {
    for scheduler in ["reservation", "queued"] {
        let dir = tempfile::tempdir().unwrap();
        let set = format!("timing.scheduler=\"{scheduler}\"");
        let out = run_to_dir(cfg(&[&set]), dir.path(), DirOptions::default(), Control::default()).unwrap();
        assert!(!dir.path().join("requests.csv.part").exists());
        let rows = rows(&std::fs::read_to_string(dir.path().join("requests.csv")).unwrap());
        let s = &out.summary;
        assert_eq!(rows.len() as u64, s.run.requests, "{scheduler}");
        assert_eq!(rows.iter().filter(|r| r.op == "read").count() as u64, s.host.read_requests);
        assert!(rows.iter().all(|r| r.arrival <= r.issue && r.issue < r.finish && r.bytes == 4096), "{scheduler}");
        let mean_us = rows.iter().map(|r| (r.finish - r.arrival) as f64).sum::<f64>() / rows.len() as f64 / 1e3;
        let want = s.latency_us.all.mean;
        assert!((mean_us - want).abs() < 1e-6 * want, "{scheduler}: log mean {mean_us} us, summary {want} us");
        // Only the queued scheduler separates the wait behind background work.
        let known = rows.iter().filter(|r| r.behind.is_some()).count();
        if scheduler == "queued" {
            assert_eq!(known, rows.len());
            assert!(rows.iter().any(|r| r.behind.unwrap() > 0), "no request waited behind GC");
        } else {
            assert_eq!(known, 0);
        }
    }
}

#[test]
fn a_log_needs_a_run_folder() {
    let e = Simulator::new(cfg(&[])).and_then(|s| s.run()).err().expect("refused").to_string();
    assert!(e.contains("stats.request_log") && e.contains("--out"), "{e}");
}

/// Stopped twice (checkpoints) and resumed, the log is the uninterrupted run's byte for
/// byte: rows written after a checkpoint are not repeated.
#[test]
fn a_resumed_run_continues_its_log_exactly() {
    let c = cfg(&["timing.scheduler=\"queued\""]);
    let whole_dir = tempfile::tempdir().unwrap();
    let whole_log = whole_dir.path().join("whole.csv");
    let mut sim = Simulator::new(c.clone()).unwrap();
    sim.set_request_log(whole_log.clone());
    sim.run().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let (ckpt, log) = (checkpoint::path_in(dir.path()), dir.path().join("log.csv"));
    let mut sim = Simulator::new(c).unwrap();
    sim.set_checkpoint_path(ckpt.clone());
    for stop in [4_321, 15_000] {
        sim.set_request_log(log.clone());
        sim.set_interrupt_after(stop);
        assert_eq!(sim.run().unwrap().summary.run.stop, "interrupted");
        // As a run that crashed after its checkpoint would: rows the resumed run must drop.
        std::fs::write(&log, [std::fs::read(&log).unwrap(), b"1,2,3,write,4096,,\n".to_vec()].concat()).unwrap();
        sim = Simulator::resume(&ckpt).unwrap();
    }
    sim.set_request_log(log.clone());
    sim.run().unwrap();
    assert_eq!(std::fs::read(&log).unwrap(), std::fs::read(&whole_log).unwrap());
}
