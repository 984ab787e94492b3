//! FT-PASSD micro-benchmarks (the paper's Figures 13 and 14) on the `ftpassd-paper` drive,
//! scaled to 16 blocks per chip (the benchmarks touch only the first few chunks).
//!
//! `cargo run --release -p flashlife --example ftpassd_micro [-- --quick]` prints Markdown
//! tables; `flashlife reproduce ftpassd` runs the same figures from the installed package.

use flashlife::sim::RunOutput;
use flashlife::techniques::ftpassd_bench::PeriodicWrites;
use flashlife::{ConfigBuilder, Simulator};

const MIB: u64 = 1 << 20;
const SECOND: u64 = 1_000_000_000;
const POLICIES: [(&str, &str); 3] =
    [("ocssd", "OCSSD"), ("ft_passd_no_shift", "FT-PASSD (w/o shift)"), ("ft_passd", "FT-PASSD (with shift)")];

fn run(policy: &str, buffer_kib: u64, size: u64, commands: u64, fail: Option<u32>) -> RunOutput {
    let mut b = ConfigBuilder::new().preset("ftpassd-paper").expect("preset");
    let mut sets = vec![
        format!("open_channel.device_policy={policy}"),
        format!("open_channel.write_buffer_kib={buffer_kib}"),
        format!("run.until=requests:{commands}"),
        "geometry.blocks_per_plane=16".into(),
        "capacity.overprovisioning=1.0".into(),
        "ftl.integrity_oracle=true".into(),
    ];
    if let Some(offset) = fail {
        sets.push(format!("failures.program_fail_at=[[0, {offset}]]"));
    }
    for s in &sets {
        b = b.set(s).expect("setting");
    }
    let cfg = b.build().expect("config");
    let lay = flashlife::host::open_channel::layout(&cfg).expect("layout");
    let wl = PeriodicWrites::new(size, SECOND, lay.logical_units as u64 * lay.unit_bytes).expect("workload");
    Simulator::with_workload(cfg, Box::new(wl)).and_then(|s| s.run()).expect("run")
}

fn ms(us: f64) -> String {
    format!("{:.1}", us / 1000.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let commands = if quick { 8 } else { 40 };
    let buffers: &[u64] = if quick { &[256, 2048] } else { &[256, 512, 1024, 2048] };

    println!("## Figure 14: one command a second, one program failure (chunk 0 of chip 0, page 40)\n");
    println!("| workload | buffer/way | policy | mean write (ms) | max write (ms) | max unprogrammed (KiB) |");
    println!("|---|---|---|---|---|---|");
    for (name, size) in [("partial 1 MiB", MIB), ("sequential 16 MiB", 16 * MIB)] {
        for &buf in buffers {
            for (p, label) in POLICIES {
                let s = run(p, buf, size, commands, Some(40)).summary;
                let d = &s.open_channel.as_ref().expect("open-channel summary").device;
                println!(
                    "| {name} | {buf} KiB | {label} | {} | {} | {} |",
                    ms(s.latency_us.write.mean),
                    ms(s.latency_us.write.max),
                    d.max_unprogrammed_bytes / 1024
                );
            }
        }
    }

    // Failures on the first page a command writes to chip 0 (multiples of 64 pages for 8 MiB
    // commands, 128 for 16 MiB, 256 for 32 MiB), so that the rest of the command queues behind.
    let offsets: &[u32] = if quick { &[0, 256, 512] } else { &[0, 128, 256, 384, 512] };
    let offsets_b: &[u32] = &[0, 256, 512];
    println!("\n## Figure 13(a): max latency (ms) against the failed page offset, 8 MiB a second\n");
    print!("| policy | buffer/way |");
    for o in offsets {
        print!(" offset {o} |");
    }
    println!("\n|---|---|{}", "---|".repeat(offsets.len()));
    let mut copy_row = Vec::new();
    for (p, label) in &POLICIES[1..] {
        for &buf in &[512u64, 1024, 2048] {
            print!("| {label} | {buf} KiB |");
            for &o in offsets {
                // 64 pages per chip per command: run until two commands past the failure.
                let s = run(p, buf, 8 * MIB, o as u64 / 64 + 3, Some(o)).summary;
                print!(" {} |", ms(s.latency_us.write.max));
                if *p == "ft_passd_no_shift" && buf == 512 {
                    copy_row.push(s.open_channel.expect("summary").device.max_retry_us);
                }
            }
            println!();
        }
    }
    print!("| block copy + retry time | |");
    for us in &copy_row {
        print!(" {} |", ms(*us));
    }
    println!();

    println!("\n## Figure 13(b): max latency (ms) against the failed page offset, buffer 1024 KiB/way\n");
    print!("| policy | command |");
    for o in offsets_b {
        print!(" offset {o} |");
    }
    println!("\n|---|---|{}", "---|".repeat(offsets_b.len()));
    for (p, label) in &POLICIES[1..] {
        for mib in [8u64, 16, 32] {
            print!("| {label} | {mib} MiB |");
            for &o in offsets_b {
                let per_chip = mib * MIB / 16384 / 8;
                let s = run(p, 1024, mib * MIB, o as u64 / per_chip + 3, Some(o)).summary;
                print!(" {} |", ms(s.latency_us.write.max));
            }
            println!();
        }
    }

    let m = run("ft_passd", 1024, MIB, 8, Some(3)).summary.open_channel.expect("summary").memory.expect("memory");
    println!(
        "\n## Metadata (this 128-block drive)\n\nblock map {} bits/entry, shift {} bits/entry: {} B + {} B; open block lists at peak {} entries, {} B; page map {} B",
        m.block_map_bits_per_entry,
        m.shift_bits_per_entry,
        m.block_map_bytes,
        m.shift_table_bytes,
        m.open_list_peak_entries,
        m.open_list_peak_bytes,
        m.page_map_bytes
    );
}
