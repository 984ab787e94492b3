//! The open-channel host FTL's pblk-like write path (issue 19): the host write buffer
//! (`open_channel.host_buffer_kib`) and single-chunk placement (`open_channel.placement`).
//! Every configuration names its scheduler (`timing.scheduler`).

use flashlife::host::open_channel::OpenChannel;
use flashlife::sim::{build_open_channel, RunOutput};
use flashlife::techniques::ftpassd_bench::PeriodicWrites;
use flashlife::timing::Done;
use flashlife::{Config, ConfigBuilder, Simulator};

const MIB: u64 = 1 << 20;
const SECOND: u64 = 1_000_000_000;
const PROGRAM_NS: u64 = 1_500_000;

fn config(preset: &str, sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::new().preset(preset).unwrap();
    for s in sets {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// `ftpassd-small` with 4 KiB mapping units (4 to a 16 KiB page), under `scheduler`.
fn drive(scheduler: &str, sets: &[&str]) -> OpenChannel {
    let mut all = vec![format!("timing.scheduler={scheduler}"), "ftl.mapping_unit=4096".to_string()];
    all.extend(sets.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    build_open_channel(&config("ftpassd-small", &refs)).unwrap()
}

#[test]
fn a_write_completes_when_buffered_not_when_programmed() {
    // Write-through device (OCSSD): without a host buffer a write waits for its program.
    let mut plain = drive("reservation", &["open_channel.device_policy=ocssd"]);
    assert!(plain.write(0, 4, Done::START).as_time() >= PROGRAM_NS);
    let mut hb = drive("reservation", &["open_channel.device_policy=ocssd", "open_channel.host_buffer_kib=64"]);
    // A full page (4 units) goes to the device at once, a partial one stays: both complete
    // when buffered.
    assert_eq!(hb.write(0, 4, Done::START), Done::START);
    assert_eq!(hb.write(4, 2, Done::at(10)), Done::at(10));
    assert_eq!(hb.host_buffer_held(10), 6);
    // The device completes the first page at ~1.5 ms: its units are freed, the partial page's not.
    assert_eq!(hb.host_buffer_held(2 * PROGRAM_NS), 2);
    let s = hb.host_buffer_stats().unwrap();
    assert_eq!((s.padded_pages, s.unsent_bytes), (0, 2 * 4096));
}

#[test]
fn the_buffer_never_exceeds_its_size_and_a_full_buffer_waits() {
    for scheduler in ["reservation", "queued"] {
        // 32 KiB: 8 units, two pages.
        let mut oc = drive(scheduler, &["open_channel.device_policy=ocssd", "open_channel.host_buffer_kib=32"]);
        let cap = oc.host_buffer_units();
        assert_eq!(cap, 8);
        let mut t = 0;
        let mut lpn = 0;
        let mut last = 0;
        for i in 0..200u32 {
            let n = 1 + i % 7;
            let done = oc.write(lpn, n, Done::at(t)).as_time();
            assert!(done >= t, "{scheduler}: a write completed before it began");
            assert!(oc.host_buffer_held(t) <= cap, "{scheduler}: buffer over its size");
            last = last.max(done);
            lpn = (lpn + n) % 1000;
            t += 10_000;
        }
        let s = oc.host_buffer_stats().unwrap();
        assert!(s.max_held_bytes <= s.capacity_bytes, "{scheduler}: {s:?}");
        assert_eq!(s.capacity_bytes, 32 * 1024);
        // 4 units every 10 us against one program per 1.5 ms a chip: the buffer fills.
        assert!(s.full_waits > 0, "{scheduler}: {s:?}");
        if scheduler == "reservation" {
            // Completion times are exact here: a full buffer made writes wait for programs.
            assert!(last > 200 * 10_000 + PROGRAM_NS, "{scheduler}: last write done at {last} ns");
        }
    }
}

#[test]
fn a_flush_pads_each_partial_page_once() {
    let mut oc = drive("reservation", &["open_channel.host_buffer_kib=64", "open_channel.placement=chunk"]);
    // Two commands on two parallel units, each leaving a partial page.
    oc.write(0, 5, Done::START);
    oc.write(100, 2, Done::START);
    // The full page went to a write-back device (FT-PASSD), which completed it at once.
    assert_eq!(oc.host_buffer_held(0), 1 + 2);
    let programs = oc.counters().host_unit_writes;
    let done = oc.flush_host_buffer(Done::at(1000));
    assert!(done.as_time() >= 1000);
    let s = oc.host_buffer_stats().unwrap();
    assert_eq!((s.padded_pages, s.padding_units, s.flushes, s.unsent_bytes), (2, 3 + 2, 1, 0));
    // A second flush has nothing to pad.
    oc.flush_host_buffer(Done::at(2000));
    let s = oc.host_buffer_stats().unwrap();
    assert_eq!((s.padded_pages, s.padding_units, s.flushes), (2, 5, 2));
    assert_eq!(oc.counters().host_unit_writes, programs, "padding is not host data");
    assert!(oc.verify_all().is_none());
}

#[test]
fn chunk_placement_puts_a_command_on_one_parallel_unit() {
    let mut chunk = drive("reservation", &["open_channel.placement=chunk"]);
    let mut stripe = drive("reservation", &[]);
    let pus = |oc: &OpenChannel, first: u32, n: u32| {
        let mut v: Vec<u32> = (first..first + n).map(|l| oc.parallel_unit_of(l).unwrap()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // 64 units = 16 pages.
    chunk.write(0, 64, Done::START);
    chunk.write(64, 64, Done::START);
    stripe.write(0, 64, Done::START);
    let (a, b) = (pus(&chunk, 0, 64), pus(&chunk, 64, 64));
    assert_eq!(a.len(), 1, "one command, parallel units {a:?}");
    assert_eq!(b.len(), 1);
    assert_ne!(a, b, "the next command goes to the next parallel unit");
    assert_eq!(pus(&stripe, 0, 64).len(), 8, "the stripe spreads a command over every unit");
    assert!(chunk.verify_all().is_none());
}

#[test]
fn a_command_smaller_than_the_write_unit_is_padded_to_it() {
    for scheduler in ["reservation", "queued"] {
        // 16 KiB pages of 4 units; a 64 KiB write unit = 4 pages.
        let mut oc = drive(scheduler, &["open_channel.min_write_kib=64"]);
        let programs = |oc: &OpenChannel| oc.counters().page_programs.total();
        // One unit (4 KiB): its page padded, then 3 empty pages to complete the unit.
        oc.write(0, 1, Done::START);
        assert_eq!(programs(&oc), 4, "{scheduler}");
        // 16 pages: four whole units, one a parallel unit in stripe order, nothing padded.
        oc.write(1000, 64, Done::at(10 * PROGRAM_NS));
        assert_eq!(programs(&oc), 4 + 16, "{scheduler}");
        let pu = |lpn: u32| oc.parallel_unit_of(lpn).unwrap();
        for unit in 0..4 {
            let first = 1000 + 16 * unit;
            assert!((first..first + 16).all(|l| pu(l) == pu(first)), "{scheduler}: write unit {unit} split");
        }
        let mut units: Vec<u32> = (0..4).map(|u| pu(1000 + 16 * u)).collect();
        units.sort_unstable();
        units.dedup();
        assert_eq!(units.len(), 4, "{scheduler}: the stripe moves on after a write unit");
        // 5 pages: one whole unit and one page padded with 3 empty pages.
        oc.write(2000, 20, Done::at(20 * PROGRAM_NS));
        assert_eq!(programs(&oc), 20 + 8, "{scheduler}");
        let s = oc.summary(0);
        let hp = s.host_path.expect("host path section with a write unit");
        assert_eq!((hp.min_write_bytes, hp.unit_padding_pages), (64 * 1024, 3 + 3), "{scheduler}");
        assert_eq!(oc.counters().host_unit_writes, 1 + 64 + 20, "padding is not host data");
        assert!(oc.verify_all().is_none());
    }
    // The default (one page) writes page by page over the units: 5 pages, 5 programs.
    let mut page = drive("reservation", &[]);
    page.write(0, 20, Done::START);
    assert_eq!(page.counters().page_programs.total(), 5);
    assert!(page.summary(0).host_path.is_none());
}

#[test]
fn a_flush_pads_the_write_unit() {
    let mut oc = drive("reservation", &["open_channel.host_buffer_kib=256", "open_channel.min_write_kib=64"]);
    // 6 units: one full page sent, 2 units buffered in the next page.
    oc.write(0, 6, Done::START);
    assert_eq!(oc.counters().page_programs.total(), 1);
    oc.flush_host_buffer(Done::at(1000));
    // The partial page padded, then 2 empty pages: one 4-page unit.
    assert_eq!(oc.counters().page_programs.total(), 4);
    assert_eq!(oc.summary(0).host_path.unwrap().unit_padding_pages, 2);
    assert!(oc.verify_all().is_none());
}

#[test]
fn a_write_unit_that_does_not_tile_a_chunk_is_refused() {
    // ftpassd-small: 16 KiB pages, 64 pages a chunk.
    for (v, ok) in
        [("0", true), ("16", true), ("64", true), ("1024", true), ("20", false), ("48", false), ("2048", false)]
    {
        let r = ConfigBuilder::new()
            .preset("ftpassd-small")
            .unwrap()
            .set(&format!("open_channel.min_write_kib={v}"))
            .and_then(|b| b.build());
        match (r, ok) {
            (Ok(_), true) => {}
            (Err(e), false) => {
                let m = e.to_string();
                assert!(m.contains("open_channel.min_write_kib") && m.contains("16 KiB pages"), "{v}: {m}");
            }
            (r, _) => panic!("min_write_kib = {v}: {:?}", r.map(|_| ())),
        }
    }
}

/// A random mixed workload with program failures through host GC: nothing acknowledged is
/// lost, whatever the policy, with the host buffer and single-chunk placement.
#[test]
fn nothing_written_is_lost_through_the_host_buffer() {
    // (policy, scheduler, write unit in KiB: 0 = one page)
    let cases = [
        ("ocssd", "reservation", 0),
        ("ft_passd", "reservation", 0),
        ("ft_passd", "queued", 0),
        ("ocssd", "queued", 64),
    ];
    for (policy, scheduler, unit) in cases {
        let cfg = config(
            "ftpassd-small",
            &[
                &format!("open_channel.device_policy={policy}"),
                &format!("timing.scheduler={scheduler}"),
                "ftl.mapping_unit=4096",
                "open_channel.host_buffer_kib=128",
                "open_channel.placement=chunk",
                &format!("open_channel.min_write_kib={unit}"),
                "failures.program_fail_rate=0.002",
                "run.until=writes:1.5dw",
                "ftl.precondition=full",
            ],
        );
        let out = Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{policy}: {e}"));
        let s = &out.summary;
        assert!(s.integrity.violation.is_none(), "{policy}, {scheduler}");
        assert!(s.integrity.checks > 20_000, "{policy}, {scheduler}: {} checks", s.integrity.checks);
        assert!(s.failures.program > 5, "{policy}, {scheduler}: {} program failures", s.failures.program);
        assert!(s.gc.victims > 0, "{policy}, {scheduler}: no host GC");
        let oc = s.open_channel.as_ref().unwrap();
        let hp = oc.host_path.as_ref().expect("host path section");
        assert_eq!(hp.placement, "chunk");
        let hb = hp.host_buffer.as_ref().expect("host buffer section");
        assert!(hb.max_held_bytes <= hb.capacity_bytes, "{hb:?}");
        assert_eq!(s.integrity.physical_page_programs, s.flash.page_programs, "{policy}, {scheduler}");
        assert_eq!(hp.min_write_bytes, if unit == 0 { 16 } else { unit } * 1024);
    }
}

/// Figure 14's micro-benchmark on the paper's drive cut to 16 blocks a chip: `n` commands
/// of `size` bytes a second, one failure at page 40 of chunk 0, up to 8 commands in flight
/// (pblk keeps one write in flight per parallel unit; 8 chips).
fn periodic(sets: &[&str], size: u64, n: u64) -> RunOutput {
    let mut all = vec![
        format!("run.until=requests:{n}"),
        "timing.scheduler=reservation".to_string(),
        "host.queue_depth=8".to_string(),
        "geometry.blocks_per_plane=16".to_string(),
        "capacity.overprovisioning=1.0".to_string(),
        "ftl.integrity_oracle=true".to_string(),
        "failures.program_fail_at=[[0, 40]]".to_string(),
    ];
    all.extend(sets.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let cfg = config("ftpassd-paper", &refs);
    let lay = flashlife::host::open_channel::layout(&cfg).unwrap();
    let wl = PeriodicWrites::new(size, SECOND, lay.logical_units as u64 * lay.unit_bytes).unwrap();
    Simulator::with_workload(cfg, Box::new(wl)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
}

fn mean_ms(policy: &str, buffer_kib: u64, size: u64) -> f64 {
    let sets = [
        format!("open_channel.device_policy={policy}"),
        format!("open_channel.write_buffer_kib={buffer_kib}"),
        "open_channel.placement=chunk".to_string(),
    ];
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    periodic(&refs, size, 6).summary.latency_us.write.mean / 1000.0
}

#[test]
fn figure_14_trends_under_single_chunk_placement() {
    // (a) Partial 1 MiB writes: OCSSD the same at every buffer size, FT-PASSD falling as the
    // buffer grows until it holds the command (64 pages on one chip).
    let oc: Vec<f64> = [256, 1024].iter().map(|&b| mean_ms("ocssd", b, MIB)).collect();
    let ft: Vec<f64> = [256, 512, 1024].iter().map(|&b| mean_ms("ft_passd", b, MIB)).collect();
    assert!((oc[0] - oc[1]).abs() < 0.01 * oc[0], "OCSSD {oc:?}");
    assert!(ft[0] > ft[1] && ft[1] > ft[2], "FT-PASSD should fall with the buffer: {ft:?}");
    assert!(ft[2] < 0.1 * oc[0], "a buffer holding the command: {ft:?} vs OCSSD {oc:?}");
    // (b) Sequential 16 MiB: 1024 pages on one chip take longer than the interval; the
    // buffer is always full and FT-PASSD is close to OCSSD at every size.
    for b in [256, 2048] {
        let (o, f) = (mean_ms("ocssd", b, 16 * MIB), mean_ms("ft_passd", b, 16 * MIB));
        assert!(f <= o && f > 0.8 * o, "{b} KiB: FT-PASSD {f} ms vs OCSSD {o} ms");
    }
}

#[test]
fn bad_values_are_refused_with_the_key() {
    let err = |set: &str| {
        let b = ConfigBuilder::new().preset("ftpassd-small").unwrap().set("timing.scheduler=reservation").unwrap();
        match b.set(set).and_then(|b| b.build()) {
            Ok(_) => panic!("{set} accepted"),
            Err(e) => e.to_string(),
        }
    };
    let e = err("open_channel.host_buffer_kib=8");
    assert!(e.contains("open_channel.host_buffer_kib") && e.contains("at least one page (16 KiB)"), "{e}");
    let e = err("open_channel.placement=\"diagonal\"");
    assert!(e.contains("open_channel.placement") && e.contains("chunk"), "{e}");
}
