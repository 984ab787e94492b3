//! FT-PASSD (issue #8): open-channel device with a write buffer and program-failure managers.
//! Trends checked against the paper (Lee et al., IEEE Access 2020, Section V) and integrity
//! through failures, retries, copies and migrations.

use flashlife::sim::RunOutput;
use flashlife::techniques::ftpassd_bench::PeriodicWrites;
use flashlife::workload::{HostRequest, IoKind, Workload};
use flashlife::{Config, ConfigBuilder, Result, Simulator};

const MIB: u64 = 1 << 20;
const SECOND: u64 = 1_000_000_000;

fn config(preset: &str, sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::new().preset(preset).unwrap();
    for s in sets {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// Commands of `size` bytes, one a second, `n` of them.
fn periodic(preset: &str, sets: &[&str], size: u64, n: u64) -> RunOutput {
    let mut all = vec![format!("run.until=requests:{n}")];
    all.extend(sets.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let cfg = config(preset, &refs);
    let logical = flashlife::host::open_channel::layout(&cfg).unwrap();
    let wl = PeriodicWrites::new(size, SECOND, logical.logical_units as u64 * logical.unit_bytes).unwrap();
    Simulator::with_workload(cfg, Box::new(wl)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
}

fn policy(p: &str) -> String {
    format!("open_channel.device_policy={p}")
}

#[test]
fn partial_writes_complete_from_the_buffer() {
    // 1 MiB a second: the buffer drains between commands. OCSSD waits for 8 programs per
    // chip; FT-PASSD completes once the data is in the buffers (paper: up to 88% lower).
    let oc = periodic("ftpassd-small", &[&policy("ocssd")], MIB, 40);
    let ft = periodic("ftpassd-small", &[&policy("ft_passd")], MIB, 40);
    let (a, b) = (oc.summary.latency_us.write.mean, ft.summary.latency_us.write.mean);
    // OCSSD: 8 pages per chip at 1.5 ms each.
    assert!(a > 8.0 * 1500.0, "OCSSD mean {a} us");
    assert!(b < 0.2 * a, "FT-PASSD mean {b} us vs OCSSD {a} us");
    let d = ft.summary.open_channel.as_ref().unwrap();
    assert!(d.write_back && !oc.summary.open_channel.as_ref().unwrap().write_back);
    // Acknowledged but unprogrammed data: up to a command's worth, none for write-through.
    assert!(d.device.max_unprogrammed_bytes > 0 && d.device.max_unprogrammed_bytes <= MIB);
    assert_eq!(oc.summary.open_channel.as_ref().unwrap().device.max_unprogrammed_bytes, 0);
}

#[test]
fn sequential_writes_gain_little_when_the_buffer_is_full() {
    // 16 MiB a second with 256 KiB per way: 128 pages per chip against 16 buffered.
    let oc = periodic("ftpassd-small", &[&policy("ocssd")], 16 * MIB, 12);
    let ft = periodic("ftpassd-small", &[&policy("ft_passd")], 16 * MIB, 12);
    let (a, b) = (oc.summary.latency_us.write.mean, ft.summary.latency_us.write.mean);
    let gain = 1.0 - b / a;
    assert!((0.0..0.25).contains(&gain), "gain {gain:.3} (OCSSD {a} us, FT-PASSD {b} us)");
    // Bigger buffers help sequential writes only as far as they hold the command.
    let big = periodic("ftpassd-small", &[&policy("ft_passd"), "open_channel.write_buffer_kib=1024"], 16 * MIB, 12);
    assert!(big.summary.latency_us.write.mean < b);
}

/// One program failure at `offset` of the first chunk of chip 0 (physical block 0), during
/// 16 MiB commands with 256 KiB per way, on the paper's 1536-page blocks.
fn failure_at(p: &str, offset: u32, scheduler: &str) -> RunOutput {
    let fail = format!("failures.program_fail_at=[[0, {offset}]]");
    // 128 pages per chip per command: the failure happens in command offset / 128.
    let n = offset as u64 / 128 + 3;
    let sets = [
        policy(p),
        fail,
        "geometry.blocks_per_plane=16".into(),
        "capacity.overprovisioning=1.0".into(),
        "open_channel.write_buffer_kib=256".into(),
        "ftl.integrity_oracle=true".into(),
        format!("timing.scheduler=\"{scheduler}\""),
    ];
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    periodic("ftpassd-paper", &refs, 16 * MIB, n)
}

///
/// Under either scheduler: under the queued one the copy and the retry are background work
/// queued behind the device's host programs, so the stall holds only if the retry waits for
/// the copy's last page and the failed page's buffer space is released when the retry has
/// really finished (`device/buffer.rs`). Before both (2026-11-24) the queued scheduler gave
/// every offset the same 100.9 ms and a 1.5 ms retry.
#[test]
fn without_shift_latency_grows_with_the_failed_offset_with_shift_it_does_not() {
    for scheduler in ["reservation", "queued"] {
        failure_latency_by_offset(scheduler);
    }
}

fn failure_latency_by_offset(scheduler: &str) {
    let failure_at = |p: &str, offset: u32| failure_at(p, offset, scheduler);
    let base = failure_at("ft_passd", 1535).summary.latency_us.write.max; // failure never reached
    println!("{scheduler}: no failure, max write {base:.0} us");
    let mut last = 0.0;
    // Offsets at the same place in a command (40 of its 128 pages per chip), so that the
    // same number of the command's pages queue behind the failed one.
    for offset in [40u32, 168, 296, 424] {
        let ns = failure_at("ft_passd_no_shift", offset);
        let s = failure_at("ft_passd", offset);
        let dn = &ns.summary.open_channel.as_ref().unwrap().device;
        let ds = &s.summary.open_channel.as_ref().unwrap().device;
        assert_eq!((dn.failures_handled, ds.failures_handled), (1, 1), "offset {offset}");
        assert_eq!(dn.foreground_copied_pages, offset as u64);
        // The copy: a read (100 us), two transfers and a program (1.5 ms) per page.
        assert!(dn.max_retry_us >= offset as f64 * 1600.0, "offset {offset}: retry {} us", dn.max_retry_us);
        // With shift the retry is one program on a reserved block: a few ms at most.
        assert!(ds.max_retry_us < 5_000.0, "offset {offset}: retry {} us", ds.max_retry_us);
        let (mn, ms) = (ns.summary.latency_us.write.max, s.summary.latency_us.write.max);
        println!(
            "{scheduler}: offset {offset}: max write {mn:.0} us w/o shift, {ms:.0} us with; retry {:.0} us",
            dn.max_retry_us
        );
        assert!(mn > last, "offset {offset}: max {mn} us not above {last} us");
        last = mn;
        assert!(ms < base + 5_000.0, "offset {offset}: with shift max {ms} us vs {base} us without failure");
        if offset >= 200 {
            // A freeze: hundreds of ms beyond the normal command latency.
            assert!(mn > base + 250_000.0, "offset {offset}: max {mn} us vs {base} us");
        }
    }
}

/// The write buffer follows the programs, not estimates of them: one 8 MiB command, 512 KiB
/// per way, a program failure on the first page it writes to chip 0. FT-PASSD retries the page
/// on a reserved block (one more program), so the command takes about what it takes without
/// a failure, under either scheduler. Before the buffer asked the scheduler whether a program
/// had finished (`Scheduler::completed`), the queued scheduler released the failed page's space
/// at the retry's estimate and the command took 100.8 ms against 51.8 ms without a failure
/// (docs/techniques/ft-passd.md, 2026-11-24; 54.9 ms now, the reservation scheduler 53.3 ms).
#[test]
fn a_failure_in_the_first_buffer_full_costs_one_retry() {
    for scheduler in ["reservation", "queued"] {
        let run = |fail: &str| {
            let sched = format!("timing.scheduler=\"{scheduler}\"");
            let mut sets = vec![
                "geometry.blocks_per_plane=16",
                "capacity.overprovisioning=1.0",
                "open_channel.write_buffer_kib=512",
                sched.as_str(),
            ];
            sets.extend((!fail.is_empty()).then_some(fail));
            periodic("ftpassd-paper", &sets, 8 * MIB, 1).summary.latency_us.write.max
        };
        let (clean, failed) = (run(""), run("failures.program_fail_at=[[0, 0]]"));
        println!("{scheduler}: 8 MiB command {clean:.0} us, with a failure on its first page {failed:.0} us");
        assert!(failed < clean * 1.15, "{scheduler}: {failed} us against {clean} us");
    }
}

/// Random reads and writes of 16-256 KiB every 2 ms (open loop), over part of the drive.
struct Mixed {
    rng: u64,
    t: u64,
    span_pages: u64,
    page: u64,
}

impl Mixed {
    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }
}

impl Workload for Mixed {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        let pages = 1 + self.next() % 16;
        let first = self.next() % (self.span_pages - pages);
        let kind = if self.next().is_multiple_of(3) { IoKind::Read } else { IoKind::Write };
        self.t += 2_000_000 + self.next() % 4_000_000;
        Ok(Some(HostRequest {
            arrival_ns: self.t,
            kind,
            offset: first * self.page,
            size: pages * self.page,
            stream: 0,
            budget_us: 0,
        }))
    }
}

/// One page copy with nothing in its way, in us: the slowest page type's read and program
/// and the page's two trips over the channel.
fn one_copy_us(cfg: &Config) -> f64 {
    let m = cfg.flash.mode(cfg.flash.bit_mode);
    let slowest = |base: f64, by_type: &[f64]| by_type.iter().copied().fold(base, f64::max);
    let transfer_us = cfg.flash.page_bytes(cfg.flash.bit_mode) as f64 / cfg.flash.channel_mb_per_s;
    slowest(m.read_us, &m.read_us_by_page_type) + slowest(m.program_us, &m.program_us_by_page_type) + 2.0 * transfer_us
}

#[test]
fn every_acknowledged_write_survives_failures_and_migrations() {
    // Under the queued scheduler the host FTL's cleaning is stepped between host commands.
    // Under it FT-PASSD's idle migration runs as events in the gaps between commands
    // (`device/idle.rs`); before 2026-11-25 it never ran there (no migration on this mix).
    for (p, scheduler) in [("ocssd", "reservation"), ("ft_passd_no_shift", "reservation"), ("ft_passd", "reservation")]
        .into_iter()
        .chain([("ocssd", "queued"), ("ft_passd_no_shift", "queued"), ("ft_passd", "queued")])
    {
        let sched = format!("timing.scheduler={scheduler}");
        let cfg = config(
            "ftpassd-small",
            &[
                &policy(p),
                "failures.program_fail_rate=0.002",
                "run.until=writes:1.5dw",
                "ftl.precondition=full",
                &sched,
            ],
        );
        let p = &format!("{p}, {scheduler}")[..];
        let copy_us = one_copy_us(&cfg);
        let lay = flashlife::host::open_channel::layout(&cfg).unwrap();
        let span_pages = lay.logical_units as u64 * lay.unit_bytes / 16384;
        let wl = Mixed { rng: 0x9e37_79b9_7f4a_7c15, t: 0, span_pages, page: 16384 };
        let out =
            Simulator::with_workload(cfg, Box::new(wl)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{p}: {e}"));
        let s = &out.summary;
        assert!(s.integrity.violation.is_none());
        assert!(s.integrity.checks > 20_000, "{p}: {} checks", s.integrity.checks);
        assert!(s.failures.program > 5, "{p}: {} program failures", s.failures.program);
        assert!(s.gc.victims > 0, "{p}: no host GC");
        assert_eq!(s.integrity.out_of_order_programs, 0, "{p}");
        let d = &s.open_channel.as_ref().unwrap().device;
        match p.split(',').next().unwrap() {
            "ocssd" => assert!(d.failures_reported > 0 && d.failures_handled == 0),
            "ft_passd" => assert!(d.migrations > 0 && d.migrated_pages > 0, "{p}: {d:?}"),
            _ => assert!(d.foreground_copied_pages > 0, "{p}: {d:?}"),
        }
        // The tail cost of migration, counted one wait at a time under both schedulers
        // (before 2026-11-26 the queued scheduler counted none): host work waits for at most
        // the copy in progress on its die, whose time is the slack's reference. The line also
        // gives the failures handled and reported and the reserve left in the measured run:
        // preconditioning's failures use the reserve up with shift, so every failure of the
        // measured run is reported (docs/techniques/ft-passd.md, "Reserved blocks").
        println!(
            "{p}: {} migrations, {} migrated pages, {} preempted copies, {} waits, longest {:.1} us (one copy {copy_us:.1} us); \
             failures {} handled, {} reported, {} reserved blocks left",
            d.migrations,
            d.migrated_pages,
            d.migration_preemptions,
            d.migration_waits,
            d.max_migration_wait_us,
            d.failures_handled,
            d.failures_reported,
            d.reserved_blocks_left
        );
        if d.migrated_pages > 0 {
            assert!(d.migration_waits > 0, "{p}: {d:?}");
            assert!(d.max_migration_wait_us > 0.0 && d.max_migration_wait_us <= copy_us * 1.01, "{p}: {d:?}");
        } else {
            assert_eq!((d.migration_waits, d.max_migration_wait_us), (0, 0.0), "{p}");
        }
        // Physical programs equal the programs counted by cause.
        assert_eq!(s.integrity.physical_page_programs, s.flash.page_programs, "{p}");
    }
}

/// The host FTL cleans as the block FTL does under the queued scheduler: a parallel unit
/// below its low watermark owes cleaning, stepped when its die has room for background work,
/// and only a unit at its reserve cleans at once with the write waiting. Before (2026-11-24)
/// it cleaned at once at the low watermark: on this drive 312 episodes each held host
/// programs behind a whole clean-up, 22.6 s of host programs waited for erases, and the write
/// p99 was 23.6 ms against 1.43 ms under reservation.
///
/// The check is the scheduler issue's: no write waits behind more than one victim's worth of
/// cleaning (here a whole block moved and erased, 64 x (read + program + two transfers) +
/// erase, 121.6 ms), which the reservation scheduler's cleaning at once exceeds (549.98 ms).
/// Since the device's write buffer bounds the programs in flight (2026-11-29,
/// `Scheduler::join`), the write p99 is one program's wait for buffer space under both
/// schedulers with GC served first near the reserve (1,484 us queued, 1,427 us reservation),
/// 4,624 us paced by the victim (the default): the buffer frees space in the order pages
/// entered it, and a host page waits for the space of an older GC page, which its die serves
/// as background work. Those waits are host work held behind background work too (196 and
/// 354 of 463 and 451 urgent episodes), and `host_wait_on_erase_ns` counts them with the
/// waits for erases, so neither is a measure of the stepping here.
#[test]
fn the_host_ftls_cleaning_is_stepped_under_the_queued_scheduler() {
    let run = |sets: &[&str]| {
        let cfg = config("ftpassd-small", &[sets, &["run.progress=\"off\""]].concat());
        Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{sets:?}: {e}"))
    };
    let queued = "timing.scheduler=queued";
    let first = run(&[queued, "timing.urgent_gc_pace=\"first\""]).summary;
    let paced = run(&[queued]).summary; // the default pace near the reserve: the victim's
    let res = run(&["timing.scheduler=reservation"]).summary;
    assert!(first.gc.victims > 100, "the run should clean: {} victims", first.gc.victims);
    // ftpassd-small: 64 pages of 16 KiB a block, TLC 100 / 1500 / 15000 us, 500 MB/s channels.
    let xfer_us = 16384.0 / 500.0;
    let victim_us = 64.0 * (100.0 + 1500.0 + 2.0 * xfer_us) + 15000.0;
    assert!(res.latency_us.write.max > victim_us, "the premise: cleaning at once holds a write longer");
    for (name, q) in [("first", &first), ("paced", &paced)] {
        let w = &q.latency_us.write;
        println!(
            "{name}: write p99 {:.1} us, max {:.1} us; reservation {:.1} / {:.1}",
            w.p99, w.max, res.latency_us.write.p99, res.latency_us.write.max
        );
        assert!(
            w.max < victim_us,
            "{name}: a write waited {:.1} us, more than a victim's worth ({victim_us:.1} us)",
            w.max
        );
        // The same decisions up to the order of moves: write amplification within 1%.
        let (wq, wr) = (q.write_amplification, res.write_amplification);
        assert!((wq / wr - 1.0).abs() < 0.01, "{name}: WA {wq:.4} queued, {wr:.4} reservation");
        assert!(q.scheduler.as_ref().expect("a queued run has a scheduler section").hard_threshold_episodes > 0);
    }
    // Served first near the reserve, a write waits at most about one program for its space.
    let one_program_us = 1500.0 + xfer_us + 16384.0 / 3200.0 + 2.0;
    assert!(first.latency_us.write.p99 < one_program_us, "first: write p99 {:.1} us", first.latency_us.write.p99);
}

#[test]
fn memory_is_reported_against_a_page_map() {
    let out = periodic(
        "ftpassd-paper",
        &["geometry.blocks_per_plane=16", "capacity.overprovisioning=1.0", "failures.program_fail_at=[[0, 3]]"],
        MIB,
        4,
    );
    let m = out.summary.open_channel.as_ref().unwrap().memory.unwrap();
    // 128 blocks of 1536 pages: 7 bits a block-map entry, 11 a shift entry.
    assert_eq!((m.block_map_bits_per_entry, m.shift_bits_per_entry), (7, 11));
    assert_eq!(m.open_list_peak_entries, 2);
    assert!(m.total_bytes * 100 < m.page_map_bytes);
    let json = out.summary.to_json();
    assert!(json.contains("\"open_channel\"") && json.contains("shift_table_bytes"));
}

#[test]
fn the_block_interface_summary_has_no_open_channel_section() {
    let out = Simulator::new(config("tiny", &["run.until=writes:0.1dw"])).and_then(|s| s.run()).unwrap();
    assert!(out.summary.open_channel.is_none());
    assert!(!out.summary.to_json().contains("\"open_channel\""));
}

#[test]
fn presets_run_with_the_configured_workload() {
    // The configured (uniform, timestamp-less) workload on the open-channel interface: every
    // request arrives at 0, so the queue depth of 1 serialises them.
    for p in ["ocssd", "ft_passd_no_shift", "ft_passd"] {
        let cfg = config("ftpassd-small", &[&policy(p), "run.until=requests:3000", "failures.program_fail_rate=0.001"]);
        let out = Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert_eq!(out.summary.host.write_requests, 3000);
        assert!(out.summary.integrity.violation.is_none());
    }
}

/// Write amplification counts each host unit's program once (the device counts the pages it
/// programs; the host FTL used to count its units again, doubling the host share): on a fresh
/// drive written far below its capacity there is no GC, so every unit the host wrote is
/// programmed once, or still waits in a way's write buffer.
#[test]
fn host_programs_are_counted_once_on_the_open_channel_drive() {
    let cfg = config("ftpassd-small", &["run.until=requests:2000", "run.progress=\"off\""]);
    let buffer_bytes = (cfg.geometry.channels * cfg.geometry.ways) as u64 * cfg.open_channel.write_buffer_kib * 1024;
    let out = Simulator::new(cfg).and_then(|s| s.run()).unwrap();
    let s = &out.summary;
    let buffered_units = buffer_bytes / s.capacity.mapping_unit_bytes;
    let by_cause = &s.flash.unit_programs_by_cause;
    let host_units = s.host.write_bytes / s.capacity.mapping_unit_bytes;
    assert_eq!(s.gc.victims, 0, "no GC on a fresh drive written this little");
    let programmed = by_cause.get(flashlife::stats::Cause::Host);
    assert!(programmed <= host_units, "{programmed} host unit programs for {host_units} units written");
    assert!(programmed + buffered_units >= host_units, "{programmed} + {buffered_units} buffered < {host_units}");
    assert!(s.write_amplification <= 1.0, "WA {}", s.write_amplification);
}

/// A write-back device's buffer bounds the programs in flight under either scheduler: at
/// queue depth 32 on an empty drive (no cleaning yet) every way's 256 KiB (16 pages) is full,
/// so each write waits for the space of the way's oldest page, and the drive writes at the
/// dies' rate, dies / (tPROG + transfer). Before the queued scheduler joined a page's data
/// and the program holding its space (`Scheduler::join`, 2026-11-29), the later *estimate*
/// won, which was the data's: every page went in at once (write p50 7 us), up to 420
/// programs queued on a die, and one write in a hundred waited 0.1-1.5 s behind them.
#[test]
fn a_write_back_buffer_bounds_the_programs_in_flight() {
    let run = |scheduler: &str| {
        let sched = format!("timing.scheduler=\"{scheduler}\"");
        let sets = [sched.as_str(), "host.queue_depth=32", "run.until=\"writes:0.5dw\"", "run.progress=\"off\""];
        Simulator::new(config("ftpassd-small", &sets)).and_then(|s| s.run()).unwrap().summary
    };
    // ftpassd-small: 8 dies, TLC program 1500 us, 16 KiB over 500 MB/s channels.
    let program_us = 1500.0 + 16384.0 / 500.0;
    let dies_rate = 8.0 / (program_us / 1e6);
    for scheduler in ["reservation", "queued"] {
        let s = run(scheduler);
        assert_eq!(s.gc.victims, 0, "{scheduler}: the premise is a drive that has not cleaned yet");
        let iops = s.throughput.iops;
        let w = &s.latency_us.write;
        println!("{scheduler}: {iops:.0} IOPS against {dies_rate:.0}; write p50 {:.0} us, max {:.0} us", w.p50, w.max);
        assert!((iops / dies_rate - 1.0).abs() < 0.03, "{scheduler}: {iops:.0} IOPS against {dies_rate:.0}");
        // Every write waits for its way's oldest program to end, no write for more than the
        // sixteen programs its way holds.
        assert!(w.p50 > 0.9 * program_us, "{scheduler}: write p50 {:.1} us", w.p50);
        assert!(w.max < 16.0 * program_us, "{scheduler}: write max {:.1} us", w.max);
        if let Some(q) = &s.scheduler {
            let most = q.queue_depth.host_write.max_one_die;
            assert!(most <= 16, "{scheduler}: {most} host programs queued on a die, the buffer holds 16");
        }
    }
}
