//! The queued scheduler driving whole runs (`timing.scheduler = "queued"`). References: the
//! closed-form throughput of a die-bound drive (every die busy, each host write costing its
//! program plus its share of GC reads, programs and erases); Little's law; Wu & He (FAST'12:
//! suspension cuts read latency under writes); and invariants (nothing written is lost, the
//! same seed gives the same bytes, the FTL's decisions do not depend on the scheduler).

mod common;

use flashlife::stats::Cause;
use flashlife::RunOutput;

fn run(extra: &[&str]) -> RunOutput {
    common::run(&[common::PEER, extra].concat())
}

const QUEUED: &str = "timing.scheduler=\"queued\"";
const RESERVATION: &str = "timing.scheduler=\"reservation\"";
/// Strict rotation (the queued scheduler's default allocation is `least_loaded`).
const ROTATION: &str = "ftl.allocation=\"rotation\"";

/// Die time per host write from the run's own operation counts: the closed form
/// dies / (WA x (tPROG + tR) + erase share), with each page's channel transfer (which holds
/// the die) counted beside its array time.
fn die_bound_iops(s: &flashlife::sim::summary::Summary) -> f64 {
    let xfer_us = 4096.0 / 400.0; // 4 KiB over a 400 MB/s channel
    let (t_r, t_p, t_e) = (75.0 + xfer_us, 750.0 + xfer_us, 3800.0);
    let writes = s.host.write_requests as f64;
    let per_write_us =
        (s.flash.page_programs as f64 * t_p + s.flash.page_reads as f64 * t_r + s.flash.block_erases as f64 * t_e)
            / writes;
    8.0 / (per_write_us * 1e-6)
}

#[test]
fn a_die_bound_drive_keeps_its_dies_busy_and_reaches_the_closed_form() {
    let q = run(&[QUEUED, "ftl.allocation=\"least_loaded\""]).summary;
    let sched = q.scheduler.as_ref().expect("a queued run has a scheduler section");
    assert!(sched.die_busy.mean >= 0.90, "dies busy {:.3} of the time", sched.die_busy.mean);
    let bound = die_bound_iops(&q);
    let iops = q.throughput.iops;
    assert!((iops - bound).abs() <= 0.05 * bound, "{iops:.0} IOPS against the closed form's {bound:.0}");
    let little = q.latency_us.all.mean * 1e-6 * iops;
    assert!((little - 32.0).abs() < 0.02 * 32.0, "Little's law: {little} requests in the drive, not 32");
    // The reservation scheduler on the same drive leaves dies idle while work waits.
    let r = run(&[RESERVATION, "ftl.allocation=\"least_loaded\""]).summary;
    assert!(r.scheduler.is_none());
    assert!(iops > 1.05 * r.throughput.iops, "queued {iops:.0} vs reservation {:.0} IOPS", r.throughput.iops);
}

/// GC advances a page at a time behind host work. Paced at the soft threshold in the ratio
/// its write amplification needs (about eight GC transactions per host write here), no write
/// waits behind as much as one victim's worth of GC (a victim's valid pages read and
/// programmed, then its erase), and the tail is below a victim too. Unpaced, GC runs only
/// when a die has no host work or, one block from a pool's reserve, first (the hard
/// threshold, which the summary counts), and the tail then is several victims' worth.
///
/// The soft threshold needs room above the reserve to pace in: the peer drive's watermarks
/// (3 and 4 free blocks of 96) put it one block from the reserve, where stepped cleaning
/// goes first at once, so this runs with 10% and 12%. Pacing decides cleaning earlier, when
/// victims hold more valid data, so it does add work (write amplification 5.9 against 5.1
/// here); what it keeps is the die time per page operation: throughput x write
/// amplification agrees within 5%.
#[test]
fn paced_gc_keeps_every_write_within_a_victim_of_gc() {
    let victim_us = 64.0 * (75.0 + 750.0 + 2.0 * 4096.0 / 400.0) + 3800.0;
    // Served first one block from the reserve (not the default victim's pace): the unpaced
    // run is the whole-clean-up tail this test contrasts with.
    let roomy = [
        QUEUED,
        "ftl.allocation=\"least_loaded\"",
        "gc.low_watermark=0.1",
        "gc.high_watermark=0.12",
        "timing.urgent_gc_pace=\"first\"",
    ];
    let paced = run(&[&roomy[..], &["timing.gc_ratio=[8, 1]"]].concat()).summary;
    let s = paced.scheduler.as_ref().expect("scheduler section");
    let waited_us = s.max_request_behind_background_ns as f64 / 1e3;
    assert!(waited_us > 0.0, "GC never delayed a host write: the drive had no GC?");
    assert!(waited_us < victim_us, "a write waited {waited_us:.0} us behind GC, a victim is {victim_us:.0} us");
    assert!(paced.latency_us.write.p99 < victim_us, "write p99 {} us", paced.latency_us.write.p99);
    let unpaced = run(&roomy).summary;
    let u = unpaced.scheduler.as_ref().unwrap();
    assert!(u.hard_threshold_episodes > 0, "no pool came within a block of its reserve unpaced");
    // The tail's warning names the queued scheduler's counters, not the reservation model.
    let tail = unpaced.run.warnings.iter().find(|w| w.starts_with("write latency p99"));
    let tail = tail.unwrap_or_else(|| panic!("no tail warning: {:?}", unpaced.run.warnings));
    assert!(tail.contains("hard_threshold_episodes") && !tail.contains("reservation"), "{tail}");
    assert!(unpaced.latency_us.write.p99 > 2.0 * victim_us, "unpaced p99 {} us", unpaced.latency_us.write.p99);
    let work = |s: &flashlife::sim::summary::Summary| s.throughput.iops * s.write_amplification;
    let ratio = work(&paced) / work(&unpaced);
    assert!((0.95..1.05).contains(&ratio), "{ratio}");
}

/// The hard threshold paced (`timing.urgent_gc_ratio`): on the peer drive's own watermarks
/// (3 and 4 free blocks of 96, no room between the soft and the hard threshold) a pool owes
/// cleaning only one block from its reserve, and its die then serves the whole clean-up
/// before its host writes: the write tail is several victims' worth (the unpaced run of the
/// test above). Paced instead, at about what the write amplification needs (here 16
/// background transactions per host write, about 2v + 1 per n - v for victims of v valid
/// pages of n at write amplification 5), the die's writes share it with the cleaning, and
/// the tail stays below one victim, with no host work held for cleaning more than rarely.
/// Measured 2026-11-24 on the default drive (`perf_probe OUT default
/// 'timing.scheduler="queued"' 'ftl.allocation="least_loaded"' 'timing.urgent_gc_ratio=[16,
/// 1]'`): write p99 56 ms against 1.37 s, 727 against 705 IOPS, WA 8.90 against 9.16.
///
/// Paced by the victim being cleaned (the default, `timing.urgent_gc_pace = "victim"`: 2v + 1
/// background transactions per n - v host writes, nothing to set), the same holds. Served
/// first is `timing.urgent_gc_pace = "first"`.
#[test]
fn the_hard_threshold_paced_keeps_writes_within_a_victim() {
    let victim_us = 64.0 * (75.0 + 750.0 + 2.0 * 4096.0 / 400.0) + 3800.0;
    let ll = "ftl.allocation=\"least_loaded\"";
    let served_first = run(&[QUEUED, ll, "ftl.integrity_oracle=true", "timing.urgent_gc_pace=\"first\""]).summary;
    // The last: no pace key, the default (a key that changes nothing stands in for it).
    for pace in ["timing.urgent_gc_ratio=[16, 1]", "timing.urgent_gc_pace=\"victim\"", "run.progress=\"off\""] {
        paced_within_a_victim(&served_first, &[QUEUED, ll, "ftl.integrity_oracle=true", pace], victim_us);
    }
}

fn paced_within_a_victim(served_first: &flashlife::sim::summary::Summary, sets: &[&str], victim_us: f64) {
    let paced = run(sets).summary;
    let (a, b) = (served_first.scheduler.as_ref().unwrap(), paced.scheduler.as_ref().unwrap());
    println!(
        "{}: served first: write p99 {:.0} us, max {:.0} us, {:.0} IOPS, WA {:.3}, held {}; paced: p99 {:.0} us, max {:.0} us, {:.0} IOPS, WA {:.3}, held {} (a victim {victim_us:.0} us)",
        sets[sets.len() - 1],
        served_first.latency_us.write.p99,
        served_first.latency_us.write.max,
        served_first.throughput.iops,
        served_first.write_amplification,
        a.host_blocked_episodes,
        paced.latency_us.write.p99,
        paced.latency_us.write.max,
        paced.throughput.iops,
        paced.write_amplification,
        b.host_blocked_episodes,
    );
    assert!(
        served_first.latency_us.write.p99 > 2.0 * victim_us,
        "served first: p99 {}",
        served_first.latency_us.write.p99
    );
    assert!(paced.latency_us.write.p99 < victim_us, "paced: p99 {} us", paced.latency_us.write.p99);
    // The check itself: no request waited behind more than a victim's worth of
    // background work on its dies, unless some of its work ran at the hard threshold (those
    // are counted apart, in the episodes printed above).
    let waited_us = b.max_request_behind_background_ns as f64 / 1e3;
    println!("  paced: the longest wait behind background work off the hard threshold {waited_us:.0} us");
    assert!(waited_us > 0.0, "no request waited behind GC: the drive had no GC?");
    assert!(
        waited_us < victim_us,
        "a request waited {waited_us:.0} us behind background work; a victim is {victim_us:.0} us"
    );
    assert!(paced.throughput.iops > 0.95 * served_first.throughput.iops);
    assert_eq!(paced.integrity.violation, None);
}

/// Stepped cleaning keeps the backlog to the stock a die asks for: at most four background
/// transactions in flight per die (`timing/queued_drive/stock.rs`), so no more than that wait
/// in a die's background queue, where deciding a whole clean-up at a host write queued
/// hundreds on this drive (814 at `145aa5b`) and thousands on the default one. The hard
/// threshold's cleaning at once, which would queue more, is not reached here with the
/// cleaning near the reserve served first; paced by its victim (the default) a pool touches
/// its reserve now and then, and that cleaning queued up to 66 on a die (2026-11-25).
#[test]
fn stepped_cleaning_keeps_the_background_backlog_to_a_few_transactions() {
    for alloc in ["rotation", "least_loaded"] {
        let a = format!("ftl.allocation=\"{alloc}\"");
        let q = run(&[QUEUED, &a, "ftl.integrity_oracle=true", "timing.urgent_gc_pace=\"first\""]).summary;
        let s = q.scheduler.as_ref().unwrap();
        assert!(q.flash.block_erases > 1000, "{alloc}: too little GC to tell ({} erases)", q.flash.block_erases);
        assert!(
            s.queue_depth.background.max_one_die <= 4,
            "{alloc}: {} background transactions queued on a die",
            s.queue_depth.background.max_one_die
        );
        assert_eq!(q.integrity.violation, None);
    }
}

/// Cleaning decided when its die has room moves the data that is still valid then: a page a
/// host write invalidated in the meantime is not moved, where a clean-up decided at once
/// moves it and the host write then invalidates the copy. On random overwrites with
/// `least_loaded` (the default allocation under the queued scheduler in the issue), write
/// amplification under the queued scheduler is at most the reservation scheduler's. With
/// rotation, cleaning near the reserve served first, they are within 1% (5.03 against 5.01):
/// a die cleaning first holds the host writes bound for it, so few overwrites land while its
/// moves wait; paced by its victim (the default) the queued drive cleans later, emptier
/// victims (4.79 against 5.01, 2026-11-25), at most 1% above.
#[test]
fn stepped_cleaning_moves_no_more_than_cleaning_at_once() {
    let ll = "ftl.allocation=\"least_loaded\"";
    let q = run(&[QUEUED, ll]).summary;
    let r = run(&[RESERVATION, ll]).summary;
    assert_eq!(q.host.write_requests, r.host.write_requests);
    assert!(q.write_amplification <= r.write_amplification, "{} vs {}", q.write_amplification, r.write_amplification);
    let r = run(&[RESERVATION]).summary;
    let first = run(&[QUEUED, ROTATION, "timing.urgent_gc_pace=\"first\""]).summary;
    let ratio = first.write_amplification / r.write_amplification;
    assert!((0.99..1.01).contains(&ratio), "rotation: {} vs {}", first.write_amplification, r.write_amplification);
    let paced = run(&[QUEUED, ROTATION]).summary;
    assert!(
        paced.write_amplification <= 1.01 * r.write_amplification,
        "rotation, paced: {} vs {}",
        paced.write_amplification,
        r.write_amplification
    );
}

/// Wu & He (FAST'12): reads suspending programs and erases wait less than reads that queue
/// behind them.
#[test]
fn suspension_cuts_read_latency_under_writes() {
    let mix = ["workload.read_ratio=0.3", "run.until=\"requests:40000\""];
    let off = run(&[&mix[..], &[QUEUED]].concat()).summary;
    let on = run(&[&mix[..], &[QUEUED, "timing.suspension=true"]].concat()).summary;
    let s = on.scheduler.as_ref().unwrap();
    assert!(s.program_suspensions + s.erase_suspensions > 0, "nothing was suspended");
    assert!(
        on.latency_us.read.mean < 0.8 * off.latency_us.read.mean,
        "read mean {:.0} us with suspension vs {:.0} us without",
        on.latency_us.read.mean,
        off.latency_us.read.mean
    );
    assert_eq!(off.scheduler.unwrap().program_suspensions, 0);
}

/// The host's own work does not depend on the scheduler (timing has no say in where host data
/// goes with rotation); cleaning does, since the queued scheduler has it decided a page at a
/// time when a die has room (so the GC counts differ: served first near the reserve by under
/// 2% here; paced by the victim, the default, it moves 3.1% less, 83,706 against 86,421 GC
/// programs on 2026-11-25, never more than 2% above). Nothing is lost, and a second run gives
/// the same bytes.
#[test]
fn the_queued_scheduler_keeps_host_work_and_is_deterministic() {
    let base = ["ftl.integrity_oracle=true", "workload.read_ratio=0.3", "run.until=\"requests:30000\""];
    let q1 = run(&[&base[..], &[QUEUED]].concat());
    let q2 = run(&[&base[..], &[QUEUED]].concat());
    let r = run(&base);
    let (qf, rf) = (&q1.summary.flash, &r.summary.flash);
    assert_eq!(qf.page_programs_by_cause.get(Cause::Host), rf.page_programs_by_cause.get(Cause::Host));
    assert_eq!(qf.page_reads_by_cause.get(Cause::Host), rf.page_reads_by_cause.get(Cause::Host));
    let gc = |f: &flashlife::sim::summary::FlashSummary| f.page_programs_by_cause.get(Cause::Gc) as f64;
    assert!(gc(qf) / gc(rf) < 1.02, "GC programs {} vs {}", gc(qf), gc(rf));
    assert_eq!(q1.summary.integrity.violation, None);
    assert!(q1.summary.integrity.checks > 0);
    let json = |o: &RunOutput| {
        let mut v = serde_json::to_value(&o.summary).unwrap();
        v["run"] = serde_json::Value::Null; // wall-clock fields
        v.to_string()
    };
    assert_eq!(json(&q1), json(&q2));
}

/// First in, first out across classes keeps reservation's order of magnitude. (Measured:
/// 1,807 against 905 IOPS, 1.997, at `dfefbb9`; 1,895, 2.09, once rotation passes over a plane
/// that is cleaning first, whose writes would wait: the reservation scheduler books each GC
/// burst whole on its die, the queued one overlaps it with other dies' host work. The bound
/// was 2.0.)
#[test]
fn fifo_order_stays_within_the_reservation_order_of_magnitude() {
    let fifo = run(&[QUEUED, "timing.policy=\"fifo\"", "run.until=\"requests:30000\""]).summary;
    let res = run(&[RESERVATION, "run.until=\"requests:30000\""]).summary;
    let ratio = fifo.throughput.iops / res.throughput.iops;
    assert!((0.5..3.0).contains(&ratio), "fifo {} vs reservation {} IOPS", fifo.throughput.iops, res.throughput.iops);
    assert_eq!(fifo.scheduler.unwrap().policy, "fifo");
}

/// An open-loop stream far below the drive's capacity sees the device's bare service time:
/// a read's response is its sense, transfer and host link time.
#[test]
fn a_light_open_loop_read_stream_sees_bare_service_times() {
    let q = run(&[
        QUEUED,
        "workload.read_ratio=1.0",
        "workload.arrival.process=\"poisson\"",
        "workload.arrival.rate_iops=200.0",
        "gc.background=false",
        "run.until=\"requests:4000\"",
    ])
    .summary;
    let bare_us = 75.0 + 4096.0 / 400.0 + 2.0 + 4096.0 / 600.0;
    let p50 = q.latency_us.read.p50;
    assert!((p50 - bare_us).abs() < 0.05 * bare_us, "median read {p50} us, bare service {bare_us:.1} us");
}

#[test]
fn suspension_settings_need_the_queued_scheduler() {
    let e = flashlife::ConfigBuilder::new()
        .set("timing.scheduler=\"reservation\"")
        .unwrap()
        .set("timing.suspension=true")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("timing.scheduler"), "{e}");
}

/// The time series carries the scheduler's view per interval under the queued scheduler
/// (and only there); weighted by the intervals' lengths, the dies' busy shares add up to the
/// summary's whole-run share, and the intervals' longest queues to the whole run's longest.
/// The summary's per-die and per-channel lists agree with its mean, least and most.
#[test]
fn the_time_series_splits_the_scheduler_counters_by_interval() {
    let q = run(&[QUEUED, "workload.read_ratio=0.3", "run.until=\"requests:40000\"", "stats.interval=\"20ms\""]);
    let csv = q.timeseries.to_csv();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert!(header.ends_with(&[
        "die_busy",
        "channel_busy",
        "background_share",
        "queue_host_read",
        "queue_host_write",
        "queue_background",
        "die_busy_max",
        "queue_host_read_max",
        "queue_host_write_max",
        "queue_background_max"
    ]));
    let rows = &q.timeseries.rows;
    assert!(rows.len() > 5, "{} rows", rows.len());
    let whole = q.summary.scheduler.as_ref().unwrap();
    let dies = whole.die_busy_each.len() as f64;
    let (mut prev, mut weighted) = (0.0, 0.0);
    let mut longest = [0u32; 3];
    for r in rows {
        let s = r.sched.expect("every row has the scheduler's columns");
        assert!((0.0..=1.0 + 1e-9).contains(&s.die_busy) && s.queue_background >= 0.0);
        assert!((s.die_busy - 1e-9..=1.0 + 1e-9).contains(&s.die_busy_max), "{s:?}");
        // No die can have waited more than the most on one die, on average.
        for (mean, max) in [
            (s.queue_host_read, s.queue_host_read_max),
            (s.queue_host_write, s.queue_host_write_max),
            (s.queue_background, s.queue_background_max),
        ] {
            assert!(mean <= dies * max as f64 + 1e-9, "{s:?}");
        }
        longest[0] = longest[0].max(s.queue_host_read_max);
        longest[1] = longest[1].max(s.queue_host_write_max);
        longest[2] = longest[2].max(s.queue_background_max);
        weighted += s.die_busy * (r.time_s - prev);
        prev = r.time_s;
    }
    let mean = weighted / prev;
    assert!((mean - whole.die_busy.mean).abs() < 0.01, "intervals {mean:.4} vs whole run {:.4}", whole.die_busy.mean);
    let d = &whole.queue_depth;
    assert_eq!(longest, [d.host_read.max_one_die, d.host_write.max_one_die, d.background.max_one_die]);
    assert!(longest[1] > 0 && longest[2] > 0, "{longest:?}: no queue to tell");
    for (each, shares) in [(&whole.die_busy_each, &whole.die_busy), (&whole.channel_busy_each, &whole.channel_busy)] {
        let m = each.iter().sum::<f64>() / each.len() as f64;
        assert!((m - shares.mean).abs() < 1e-9, "{m} vs {shares:?}");
        assert_eq!(each.iter().copied().fold(f64::INFINITY, f64::min), shares.min);
        assert_eq!(each.iter().copied().fold(0.0, f64::max), shares.max);
    }
    // The per-die background shares, weighted by each die's busy time, are the drive's.
    let bg: f64 = whole.background_share_each_die.iter().zip(&whole.die_busy_each).map(|(s, b)| s * b).sum();
    let busy: f64 = whole.die_busy_each.iter().sum();
    assert!((bg / busy - whole.background_share_of_die_time).abs() < 1e-9);
    let r = run(&[RESERVATION, "run.until=\"requests:2000\""]);
    assert!(!r.timeseries.to_csv().lines().next().unwrap().contains("die_busy"));
}

/// Writes to an empty two-plane drive (no GC): die-bound at dies / (tPROG + transfer) one
/// plane at a time, and with multi-plane operations at dies x planes / (tPROG + 2 transfers),
/// each within 3% (the saturation bound of the checks).
#[test]
fn multi_plane_programs_reach_the_die_bound_of_both_planes() {
    let empty = [QUEUED, "geometry.planes=2", "ftl.precondition=\"empty\"", "run.until=\"writes:0.5dw\""];
    let xfer_us = 4096.0 / 400.0;
    let one = run(&empty).summary;
    let bound_one = 8.0 / ((750.0 + xfer_us) * 1e-6);
    assert!((one.throughput.iops - bound_one).abs() < 0.03 * bound_one, "{} vs {bound_one}", one.throughput.iops);
    let two = run(&[&empty[..], &["timing.multi_plane=true"]].concat()).summary;
    let bound_two = 16.0 / ((750.0 + 2.0 * xfer_us) * 1e-6);
    assert!((two.throughput.iops - bound_two).abs() < 0.03 * bound_two, "{} vs {bound_two}", two.throughput.iops);
    let s = two.scheduler.unwrap();
    assert!(
        s.multi_plane_ops * 2 > two.host.write_requests * 9 / 10,
        "{} pairs for {} writes",
        s.multi_plane_ops,
        two.host.write_requests
    );
    assert_eq!(one.scheduler.unwrap().multi_plane_ops, 0);
}
