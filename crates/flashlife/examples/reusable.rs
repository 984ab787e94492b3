//! One Reusable SSD experiment point on a Zipf workload: prints one JSON line.
//!
//! `cargo run --release --example reusable -- --preset reusable-small --alpha 1 \
//!     [--read-ratio 0.0] [--set key=value ...]`
//! (the stop condition is `run.until`, e.g. `--set 'run.until="writes:4dw"'`).

use flashlife::ftl::Layout;
use flashlife::sim::stream_seed;
use flashlife::techniques::zipf::Zipf;
use flashlife::{ConfigBuilder, Simulator};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run() -> flashlife::Result<()> {
    let mut b = ConfigBuilder::new();
    let (mut alpha, mut read_ratio) = (1.0f64, 0.0f64);
    let mut args = std::env::args().skip(1);
    let bad =
        |what: &str| flashlife::Error::config("argument", what, "--preset P | --alpha A | --read-ratio R | --set k=v");
    while let Some(a) = args.next() {
        let v = args.next().ok_or_else(|| bad(&a))?;
        match a.as_str() {
            "--preset" => b = b.preset(&v)?,
            "--set" => b = b.set(&v)?,
            "--alpha" => alpha = v.parse().map_err(|_| bad(&v))?,
            "--read-ratio" => read_ratio = v.parse().map_err(|_| bad(&v))?,
            _ => return Err(bad(&a)),
        }
    }
    let mut cfg = b.build()?;
    cfg.run.progress = "off".into();
    let l = Layout::of(&cfg)?;
    let seed = stream_seed(cfg.seed, "workload");
    let z = Zipf::new(l.logical_units as u64 * l.unit_bytes, l.unit_bytes, alpha, read_ratio, seed)?;
    let out = Simulator::with_workload(cfg, Box::new(z))?.run()?;
    let s = &out.summary;
    let line = serde_json::json!({
        "erases": s.flash.block_erases,
        "mean_us": s.latency_us.all.mean,
        "write_mean_us": s.latency_us.write.mean,
        "read_mean_us": s.latency_us.read.mean,
        "host_bytes": s.host.write_bytes,
        "second_writes": s.second_writes,
        "dead": s.lifetime.death_reason,
        "wall_s": s.run.wall_seconds,
    });
    println!("{line}");
    Ok(())
}
