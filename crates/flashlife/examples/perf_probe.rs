//! Performance probe: run one configuration and write its outputs, for profiling
//! (`valgrind --tool=cachegrind`, `perf`) and for checking that an optimisation leaves
//! `summary.json` unchanged.
//!
//! `cargo run --release -p flashlife --example perf_probe -- OUT_DIR PRESET [KEY=VALUE ...]`
//! (`PRESET` may be `-` for the defaults, or a `.toml` file: a configuration such as one
//! with `[[flows]]`, which `KEY=VALUE` cannot write).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: perf_probe OUT_DIR PRESET|- [KEY=VALUE ...]");
        std::process::exit(2);
    }
    let mut b = flashlife::ConfigBuilder::new();
    if args[1].ends_with(".toml") {
        b = b.file(&args[1]).expect("configuration file");
    } else if args[1] != "-" {
        b = b.preset(&args[1]).expect("preset");
    }
    for set in &args[2..] {
        b = b.set(set).expect("override");
    }
    let cfg = b.build().expect("config");
    let out_dir = std::path::Path::new(&args[0]);
    std::fs::create_dir_all(out_dir).expect("output directory");
    let cpu0 = cpu_ns();
    let sim = flashlife::Simulator::new(cfg).expect("simulator");
    let cpu1 = cpu_ns();
    let out = sim.run().expect("run");
    let cpu2 = cpu_ns();
    flashlife::run_dir::write_outputs(&out, out_dir).expect("outputs");
    let r = &out.summary.run;
    let run_cpu = (cpu2 - cpu1) as f64 / 1e9;
    println!(
        "{:.2} M page ops/s, {:.2} s run wall, {:.2} M page ops/CPU s, {:.3} s run CPU, {:.3} s setup CPU, {} page ops, WA {:.3}",
        r.page_ops_per_second / 1e6,
        r.wall_seconds,
        r.page_ops as f64 / run_cpu / 1e6,
        run_cpu,
        (cpu1 - cpu0) as f64 / 1e9,
        r.page_ops,
        out.summary.write_amplification
    );
}

/// CPU time of this thread in nanoseconds (Linux `schedstat`; 0 elsewhere): unlike wall time,
/// it does not count the time other processes on a shared machine hold the core.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}
