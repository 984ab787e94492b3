//! One Reusable SSD experiment point: runs the configured drive and workload (any
//! `workload.*` keys: `kind = "zipf"`, a trace, ...) and prints one JSON line.
//!
//! `cargo run --release --example reusable -- --preset reusable-small \
//!     --set 'workload.kind="zipf"' --set workload.zipf.alpha=2 [--set key=value ...]`
//! (the stop condition is `run.until`, e.g. `--set 'run.until="writes:4dw"'`).

use flashlife::stats::Cause;
use flashlife::{ConfigBuilder, Simulator};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run() -> flashlife::Result<()> {
    let mut b = ConfigBuilder::new();
    let mut args = std::env::args().skip(1);
    let bad = |what: &str| flashlife::Error::config("argument", what, "--preset P | --set k=v");
    while let Some(a) = args.next() {
        let v = args.next().ok_or_else(|| bad(&a))?;
        match a.as_str() {
            "--preset" => b = b.preset(&v)?,
            "--set" => b = b.set(&v)?,
            _ => return Err(bad(&a)),
        }
    }
    let mut cfg = b.build()?;
    cfg.run.progress = flashlife::config::ProgressMode::Off;
    let out = Simulator::new(cfg)?.run()?;
    let s = &out.summary;
    let f = &s.flash;
    let line = serde_json::json!({
        "erases": f.block_erases,
        "mean_us": s.latency_us.all.mean,
        "p99_us": s.latency_us.all.p99,
        "write_mean_us": s.latency_us.write.mean,
        "read_mean_us": s.latency_us.read.mean,
        "write_requests": s.host.write_requests,
        "read_requests": s.host.read_requests,
        "host_bytes": s.host.write_bytes,
        "wa": s.write_amplification,
        "gc_moved": s.gc.valid_units_moved,
        "gc_valid_per_victim": s.gc.mean_valid_per_victim,
        "host_programs": f.page_programs_by_cause.get(Cause::Host),
        "gc_programs": f.page_programs_by_cause.get(Cause::Gc),
        "second_programs": f.page_programs_by_cause.get(Cause::SecondWrite),
        "second_reads": f.page_reads_by_cause.get(Cause::SecondWrite),
        "second_writes": s.techniques.get("reusable"),
        "simulated_s": s.run.simulated_ns as f64 * 1e-9,
        "dead": s.lifetime.death_reason,
        "drive_writes": s.lifetime.drive_writes,
        "max_erase_count": s.lifetime.erase_count.max,
        "wall_s": s.run.wall_seconds,
    });
    println!("{line}");
    Ok(())
}
