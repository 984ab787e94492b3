//! `workload.kind = "periodic"`: FT-PASSD's micro-benchmark commands from the configuration.

use flashlife::techniques::ftpassd_bench::PeriodicWrites;
use flashlife::workload::{build, IoKind, WorkloadConfig, WorkloadContext, WorkloadKind};
use flashlife::{Config, ConfigBuilder, Simulator};

const MIB: u64 = 1 << 20;

fn periodic(size: u64, interval_ns: u64) -> WorkloadConfig {
    let mut c = WorkloadConfig { kind: WorkloadKind::Periodic, request_size: size, ..WorkloadConfig::default() };
    c.periodic.interval_ns = interval_ns;
    c
}

#[test]
fn arrivals_are_periodic_and_addresses_sequential_and_wrap() {
    // 10 MiB of logical space, 3 MiB commands: 3 fit (the last partial command's room is
    // left out), then the addresses start over.
    let ctx = WorkloadContext { logical_bytes: 10 * MIB, unit_bytes: 16384, seed: 1 };
    let mut w = build(&periodic(3 * MIB, 250_000_000), &ctx).unwrap();
    for i in 0..8u64 {
        let r = w.next_request().unwrap().expect("endless");
        assert_eq!(r.arrival_ns, i * 250_000_000, "command {i}");
        assert_eq!(r.offset, (i % 3) * 3 * MIB, "command {i}");
        assert_eq!(r.size, 3 * MIB);
        assert_eq!(r.kind, IoKind::Write);
    }
    // request_size 0: one mapping unit.
    let mut w = build(&periodic(0, 1_000), &ctx).unwrap();
    let (a, b) = (w.next_request().unwrap().unwrap(), w.next_request().unwrap().unwrap());
    assert_eq!((a.size, a.offset, b.offset, b.arrival_ns), (16384, 0, 16384, 1_000));
}

#[test]
fn periodic_is_open_loop_and_checked() {
    assert!(periodic(MIB, 1).open_loop());
    let bad = |c: WorkloadConfig, key: &str| {
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains(key), "{e}");
    };
    bad(periodic(MIB, 0), "workload.periodic.interval_ns");
    let mut c = periodic(MIB, 1);
    c.read_ratio = 0.5;
    bad(c, "workload.read_ratio");
    let mut c = periodic(MIB, 1);
    c.arrival.process = flashlife::workload::ArrivalProcess::Poisson;
    bad(c, "workload.arrival.process");
    let mut c = WorkloadConfig { kind: WorkloadKind::Mix, ..WorkloadConfig::default() };
    c.mix = vec![periodic(MIB, 1)];
    bad(c, "workload.mix[0].kind");
}

#[test]
fn the_section_is_left_out_at_its_defaults() {
    // Configurations that do not use it keep their text (and configuration hash).
    assert!(!Config::default().to_toml().contains("periodic"));
    let cfg = ConfigBuilder::new()
        .set("workload.kind=\"periodic\"")
        .unwrap()
        .set("workload.periodic.interval_ns=5000")
        .unwrap()
        .build()
        .unwrap();
    let text = cfg.to_toml();
    assert!(text.contains("[workload.periodic]") && text.contains("interval_ns = 5000"), "{text}");
    let again = ConfigBuilder::new().toml_str(&text, "resolved").unwrap().build().unwrap();
    assert_eq!(again.workload.periodic.interval_ns, 5000);
}

#[test]
fn configured_commands_run_as_the_hand_built_workload() {
    // The micro-benchmark of tests/ftpassd.rs, once from the configuration and once with the
    // generator built in code: the same requests, so the same run.
    let sets = [
        "open_channel.device_policy=\"ft_passd\"",
        "run.until=\"requests:12\"",
        "run.progress=\"off\"",
        "failures.program_fail_at=[[0, 40]]",
    ];
    let mut b = ConfigBuilder::new().preset("ftpassd-small").unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    let by_hand = b.clone().build().unwrap();
    let lay = flashlife::host::open_channel::layout(&by_hand).unwrap();
    let wl = PeriodicWrites::new(MIB, 1_000_000_000, lay.logical_units as u64 * lay.unit_bytes).unwrap();
    let a = Simulator::with_workload(by_hand, Box::new(wl)).and_then(|s| s.run()).unwrap().summary;
    for s in [
        "workload.kind=\"periodic\"",
        "workload.arrival.process=\"closed\"",
        "workload.request_size=1048576",
        "workload.periodic.interval_ns=1000000000",
    ] {
        b = b.set(s).unwrap();
    }
    let c = Simulator::new(b.build().unwrap()).and_then(|s| s.run()).unwrap().summary;
    assert_eq!(c.host.write_requests, 12);
    assert_eq!(c.run.simulated_ns, a.run.simulated_ns);
    assert_eq!(c.latency_us.write.mean, a.latency_us.write.mean);
    assert_eq!(c.latency_us.write.max, a.latency_us.write.max);
    // One command a second: the last arrives at 11 s.
    assert!(c.run.simulated_ns >= 11_000_000_000, "{}", c.run.simulated_ns);
}
