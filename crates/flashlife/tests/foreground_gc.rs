//! `gc.mode = "foreground"`: DiskSim's SSD model cleans in the foreground ("Cleaning in
//! background = 0"), the host write that finds too few free blocks waiting for the whole
//! clean-up. References: closed forms on a drive that is idle whenever a request arrives (each
//! write starts on free dies, so its latency is its own program plus exactly the cleaning it
//! triggered), and the standard mode's idle-window cleaning, which hides all of it.

mod common;

use flashlife::run_dir::{run_to_dir, DirOptions};
use flashlife::sim::Control;
use flashlife::stats::Cause;

/// The PEER drive at QD1 for 0.3 drive writes of 4 KiB random writes, with `extra`.
fn config(extra: &[&str]) -> flashlife::Config {
    let qd1 = ["host.queue_depth=1", "run.until=\"writes:0.3dw\"", "stats.request_log=true"];
    common::config(&[common::PEER, &qd1, extra].concat())
}

/// Write latencies (us, issue to finish) from the run's request log, and its summary.
fn run(extra: &[&str]) -> (Vec<f64>, flashlife::sim::summary::Summary) {
    let dir = tempfile::tempdir().unwrap();
    let out = run_to_dir(config(extra), dir.path(), DirOptions::default(), Control::default()).unwrap();
    let text = std::fs::read_to_string(dir.path().join("requests.csv")).unwrap();
    let lat = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f[3], "write");
            (f[2].parse::<u64>().unwrap() - f[1].parse::<u64>().unwrap()) as f64 / 1e3
        })
        .collect();
    (lat, out.summary)
}

const T_R: f64 = 75.0;
const T_P: f64 = 750.0;
const T_E: f64 = 3800.0;
const XFER: f64 = 4096.0 / 400.0; // a page over the 400 MB/s channel

/// Under foreground cleaning at QD1, closed loop, a request finds every die free (the one
/// before it waited for all the cleaning it caused), so each write's latency is its own
/// service time plus the cleaning it triggered: the writes' latency beyond the shortest one
/// adds up to the die time of all GC (each move a read, two transfers and a program; each
/// erase), within 2%, and no more writes waited for an erase than there were victims.
/// In the standard mode, open loop with a second between writes (a victim is at most
/// 64 x 845 us + 3.8 ms = 58 ms here), the same drive cleans in the gaps and no write
/// waits for an erase. Both schedulers.
#[test]
fn a_write_that_triggers_cleaning_waits_for_its_moves_and_erase() {
    for sched in ["reservation", "queued"] {
        let set = format!("timing.scheduler=\"{sched}\"");
        let (lat, s) = run(&[&set, "gc.mode=\"foreground\""]);
        let base = lat.iter().cloned().fold(f64::INFINITY, f64::min);
        let excess: f64 = lat.iter().map(|l| l - base).sum();
        let moves = s.flash.page_programs_by_cause.get(Cause::Gc) as f64;
        let gc_reads = s.flash.page_reads_by_cause.get(Cause::Gc) as f64;
        let erases = s.flash.block_erases_by_cause.get(Cause::Gc) as f64;
        assert!(erases > 50.0, "{sched}: too little GC to tell ({erases} erases)");
        assert_eq!(s.gc.valid_units_moved_idle, 0, "{sched}: foreground mode cleaned in an idle window");
        let gc_us = gc_reads * (T_R + XFER) + moves * (T_P + XFER) + erases * T_E;
        assert!(
            (excess - gc_us).abs() < 0.02 * gc_us,
            "{sched}: writes waited {excess:.0} us beyond service, GC took {gc_us:.0} us of die time"
        );
        let waited = lat.iter().filter(|&&l| l >= T_E).count() as u64;
        assert!(
            waited > 0 && waited <= s.gc.victims,
            "{sched}: {waited} writes waited for an erase, {} victims",
            s.gc.victims
        );

        let gaps = [
            "workload.arrival.process=\"bursty\"",
            "workload.arrival.burst_requests=1",
            "workload.arrival.burst_gap_ns=1000000000",
        ];
        let (lat, s) = run(&[&[set.as_str()], &gaps[..]].concat());
        assert!(s.flash.block_erases > 50, "{sched}: too little GC in the standard run to tell");
        let worst = lat.iter().cloned().fold(0.0, f64::max);
        assert!(worst < T_E, "{sched}: standard mode, a write waited {worst:.0} us (idle cleaning should hide GC)");
    }
}

/// A misspelt mode is refused, naming the key and the modes it takes.
#[test]
fn a_bad_gc_mode_is_refused_by_name() {
    let e = common::config_error(&["gc.mode=\"blocking\""]);
    assert!(e.contains("gc.mode") && e.contains("foreground") && e.contains("standard"), "{e}");
}

/// Foreground cleaning is the block FTL's: the open-channel host FTL refuses it by name.
#[test]
fn foreground_cleaning_needs_the_block_interface() {
    let e = common::config_error(&["gc.mode=\"foreground\"", "host.interface=\"open_channel\""]);
    assert!(e.contains("gc.mode") && e.contains("open_channel"), "{e}");
}
