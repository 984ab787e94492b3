//! `gc.stream`: where cleaning writes the units it moves. `separate` (the default) gives moved
//! units a block of their own; `shared` writes them into the host writes' open block, as
//! DiskSim's SSD model does (the Reusable SSD paper's standard drive). Where the moves go is
//! checked inside the FTL (`ftl/gc.rs`, `a_shared_stream_moves_into_the_host_writes_block`);
//! here: nothing written is lost under every scheduler and mode that allows the shared stream
//! (the integrity oracle), and the refusals name the key.

mod common;

use flashlife::{RunOutput, Simulator};

/// The PEER drive, 90% of 4 KiB writes to 10% of the space, oracle on, with `extra`.
fn run(extra: &[&str]) -> RunOutput {
    let base = [
        "ftl.integrity_oracle=true",
        "workload.read_ratio=0.2",
        "workload.kind=\"hotcold\"",
        "workload.hotcold.hot_requests=0.9",
        "workload.hotcold.hot_space=0.1",
        "run.until=\"writes:2dw\"",
    ];
    let cfg = common::config(&[common::PEER, &base, extra].concat());
    Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_shared_stream_loses_nothing_wherever_it_is_allowed() {
    for (name, sets) in [
        ("fast-forward", ["ftl.timing=false", "gc.mode=\"standard\""]),
        ("reservation", ["timing.scheduler=\"reservation\"", "gc.mode=\"standard\""]),
        ("reservation, foreground", ["timing.scheduler=\"reservation\"", "gc.mode=\"foreground\""]),
        ("queued, foreground", ["timing.scheduler=\"queued\"", "gc.mode=\"foreground\""]),
    ] {
        let sep = run(&sets);
        let shared = run(&[&sets[..], &["gc.stream=\"shared\""]].concat());
        for (s, o) in [("separate", &sep), ("shared", &shared)] {
            let i = &o.summary.integrity;
            assert!(i.oracle && i.checks > 0 && i.violation.is_none(), "{name} {s}: {:?}", i.violation);
            assert_eq!(i.out_of_order_programs, 0, "{name} {s}");
            assert!(o.summary.gc.valid_units_moved > 0, "{name} {s}: no cleaning");
            assert!(!o.summary.lifetime.dead, "{name} {s}: {:?}", o.summary.lifetime.death_reason);
        }
        // The option is not inert: the same requests, other blocks.
        assert_eq!(sep.summary.host, shared.summary.host, "{name}: the host side differs");
        assert_ne!(sep.summary.flash.block_erases, shared.summary.flash.block_erases, "{name}");
    }
}

#[test]
fn a_shared_stream_is_refused_where_it_is_not_modelled() {
    // Cleaning stepped by the queued scheduler owes back the host blocks host writes open; a
    // host block a cleaning step opened would not be.
    let e = common::config_error(&["gc.stream=\"shared\"", "timing.scheduler=\"queued\""]);
    assert!(e.contains("gc.stream") && e.contains("queued"), "{e}");
    let e = common::config_error(&["gc.stream=\"shared\"", "host.interface=\"open_channel\""]);
    assert!(e.contains("gc.stream") && e.contains("open_channel"), "{e}");
    let e = common::config_error(&["gc.stream=\"shared\"", "reusable.enabled=true"]);
    assert!(e.contains("gc.stream") && e.contains("reusable"), "{e}");
    let e = common::config_error(&["gc.stream=\"together\""]);
    assert!(e.contains("gc.stream") && e.contains("separate") && e.contains("shared"), "{e}");
}
