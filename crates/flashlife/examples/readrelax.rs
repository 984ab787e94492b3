//! Read latency relaxation experiments (also `flashlife reproduce readrelax`, from configuration keys).
//!
//! ```text
//! cargo run --release -p flashlife --example readrelax -- [--small] [longterm|fileserver|mix|all]
//! ```
//!
//! - `longterm`: months of low-rate uniform random reads on a full drive, with no reclaim, a
//!   read-count reclaim and an error-based (aggressive) reclaim: long-read share per month and
//!   how many times reclaim rewrote the data.
//! - `fileserver`: read-heavy (95% reads, 80% of requests on a hot fifth of the drive) and
//!   `mix`: 70% reads, uniform: aggressive reclaim, no reclaim and hints (every read accepts
//!   400 us): read-induced spent lifetime and read latency.
//!
//! Reads are sub-sampled: one simulated read stands for `SAMPLING` reads of the same kind
//! and the read-disturb coefficient is multiplied by `SAMPLING` (exact for the linear
//! disturb term of the `tlc-3d` set, q = 1); writes are all simulated. Rates and request mixes
//! printed are the real ones; latency shares are per simulated (sampled) read.

use flashlife::config::ConfigBuilder;
use flashlife::flash::rber::PowerLawParams;
use flashlife::sim::stream_seed;
use flashlife::techniques::readrelax::{PoissonRandom, PoissonSpec};
use flashlife::{Config, RunOutput, Simulator};

const SAMPLING: f64 = 20.0;

/// `--set key=value` arguments, applied after the experiment's own settings.
fn extra_sets() -> Vec<String> {
    let args: Vec<String> = std::env::args().collect();
    args.windows(2).filter(|w| w[0] == "--set").map(|w| w[1].clone()).collect()
}

fn drive(small: bool) -> Vec<String> {
    let g = if small { 64 } else { 128 };
    let gamma = PowerLawParams::tlc_3d().gamma * SAMPLING;
    [
        "geometry.channels=1".into(),
        "geometry.ways=1".into(),
        "geometry.dies=1".into(),
        "geometry.planes=2".into(),
        format!("geometry.blocks_per_plane={g}"),
        "geometry.pages_per_block=32".into(),
        "flash.page_size=16384".into(),
        "flash.tlc.read_us=70".into(),
        "flash.tlc.program_us=700".into(),
        "flash.tlc.erase_us=3500".into(),
        "flash.tlc.pe_limit=3000".into(),
        "capacity.overprovisioning=0.25".into(),
        "reliability.model=\"power_law\"".into(),
        "reliability.rber_set=\"custom\"".into(),
        format!("reliability.power_law={}", params_toml(gamma)),
        "reliability.base_cycles=1500".into(),
        // The tables of docs/techniques/read-relaxation.md made with this example compare a
        // budget with one page's flash time, as before issue 19 (`flashlife reproduce
        // readrelax` runs the request-level comparison and the calibrated RBER set).
        "reliability.hint_latency=\"page\"".into(),
        format!("reliability.read_count_threshold={}", (100_000.0 / SAMPLING) as u32),
        "stats.interval=\"30d\"".into(),
        "run.progress=\"off\"".into(),
    ]
    .into()
}

fn params_toml(gamma: f64) -> String {
    let p = PowerLawParams::tlc_3d();
    format!(
        "{{epsilon={:e}, alpha={:e}, k={}, beta={:e}, m={}, n={}, gamma={:e}, p={}, q={}, time_unit_s={}, read_unit={}}}",
        p.epsilon, p.alpha, p.k, p.beta, p.m, p.n, gamma, p.p, p.q, p.time_unit_s, p.read_unit
    )
}

fn config(sets: &[String]) -> Config {
    let mut b = ConfigBuilder::new();
    for s in sets.iter().chain(extra_sets().iter()) {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// Real rates: reads per second and drive writes per day, on the hot region and the rest.
#[derive(Clone)]
struct Load {
    reads_per_s: f64,
    dwpd: f64,
    hot_fraction: f64,
    hot_share: f64,
    write_fraction: f64,
}

fn run(sets: &[String], load: &Load) -> RunOutput {
    let cfg = config(sets);
    let layout = flashlife::ftl::Layout::of(&cfg).unwrap();
    let logical = layout.logical_units as u64 * layout.unit_bytes;
    // The simulated stream: reads sub-sampled 1 in SAMPLING, every write kept.
    let reads = load.reads_per_s / SAMPLING;
    let writes = load.dwpd * logical as f64 / 16384.0 / 86_400.0;
    let spec = PoissonSpec {
        rate_per_s: reads + writes,
        read_ratio: reads / (reads + writes),
        request_size: 16384,
        hot_fraction: load.hot_fraction,
        hot_share: load.hot_share,
        write_fraction: load.write_fraction,
        stream: 0,
    };
    let wl = PoissonRandom::new(spec, logical, stream_seed(cfg.seed, "workload")).unwrap();
    let mut sim = Simulator::with_workload(cfg, Box::new(wl)).unwrap();
    sim.set_open_loop(true);
    sim.run().unwrap_or_else(|e| panic!("{e}"))
}

fn longterm(small: bool) {
    let days = if small { 90.0 } else { 180.0 };
    let rate = if small { 20.0 } else { 30.0 };
    println!("## Long-period random reads: {rate} reads/s for {days} days (real rate; 1 in {SAMPLING} simulated)\n");
    let spec = Load { reads_per_s: rate, dwpd: 0.0, hot_fraction: 1.0, hot_share: 1.0, write_fraction: 1.0 };
    let mut rows = Vec::new();
    for policy in ["none", "read_count", "error_based"] {
        let mut sets = drive(small);
        sets.push(format!("reliability.read_reclaim=\"{policy}\""));
        sets.push(format!("run.until=\"time:{days}d\""));
        let out = run(&sets, &spec);
        let s = &out.summary;
        let logical_units = s.capacity.logical_bytes / s.capacity.mapping_unit_bytes;
        let rewrites =
            s.flash.unit_programs_by_cause.get(flashlife::stats::Cause::Reclaim) as f64 / logical_units as f64;
        let rows_ = &out.timeseries.rows;
        // The last row closes a partial interval: keep it only when it is most of one.
        let full = rows_.iter().enumerate().filter(|(i, r)| {
            let prev = if *i == 0 { 0.0 } else { rows_[i - 1].time_s };
            r.time_s - prev > 20.0 * 86_400.0
        });
        let monthly: Vec<String> = full.map(|(_, r)| format!("{:.2}%", 100.0 * r.long_read_share)).collect();
        rows.push(format!(
            "| {policy} | {} | {:.3}% | {:.1} | {} | {:.3}% | {} | {:.1} | {:.1} |",
            monthly.join(" / "),
            100.0 * s.reliability.long_read_share,
            rewrites,
            s.reliability.reclaim_erases,
            100.0 * s.reliability.reclaim_share_of_pe_budget,
            s.reliability.uncorrectable_reads,
            s.latency_us.read.mean,
            s.latency_us.read.p99,
        ));
    }
    println!("| reclaim | long reads (> 400 us) per 30 days | overall | data rewritten (x) | reclaim erases | P/E budget spent | uncorrectable | read mean us | read p99 us |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    println!();
}

fn compare(small: bool, name: &str, spec: Load, days: f64) {
    println!(
        "## {name}: {:.0} reads/s ({:.0}% of them on {:.0}% of the drive) and {} drive writes per day on the last {:.0}% (real rates), {days} days\n",
        spec.reads_per_s,
        100.0 * spec.hot_share,
        100.0 * spec.hot_fraction,
        spec.dwpd,
        100.0 * spec.write_fraction
    );
    println!("| policy | reclaim erases | P/E budget spent by reads | share of erases | read mean us | read p99 us | long reads | uncorrectable |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut base = None;
    for (label, policy, hint) in [
        ("aggressive (error_based)", "error_based", None),
        ("no reclaim", "none", None),
        ("hints (400 us)", "hinted", Some(400)),
        ("hints (250 us)", "hinted", Some(250)),
    ] {
        let mut sets = drive(small);
        sets.push(format!("reliability.read_reclaim=\"{policy}\""));
        sets.push(format!("run.until=\"time:{days}d\""));
        if let Some(us) = hint {
            sets.push(format!("reliability.hints=[{{budget_us={us}}}]"));
        }
        let out = run(&sets, &spec);
        let s = &out.summary;
        let r = &s.reliability;
        let (b_erases, b_mean) = *base.get_or_insert((r.reclaim_erases as f64, s.latency_us.read.mean));
        let vs = |x: f64, b: f64| if b > 0.0 { format!(" ({:+.1}%)", 100.0 * (x / b - 1.0)) } else { String::new() };
        println!(
            "| {label} | {}{} | {:.4}% | {:.1}% | {:.1}{} | {:.1} | {:.3}% | {} |",
            r.reclaim_erases,
            vs(r.reclaim_erases as f64, b_erases),
            100.0 * r.reclaim_share_of_pe_budget,
            100.0 * r.reclaim_share_of_erases,
            s.latency_us.read.mean,
            vs(s.latency_us.read.mean, b_mean),
            s.latency_us.read.p99,
            100.0 * r.long_read_share,
            r.uncorrectable_reads
        );
    }
    println!();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let small = args.iter().any(|a| a == "--small");
    let what = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--set"))
        .map_or("all", |(_, a)| a.as_str());
    let started = std::time::Instant::now();
    let days = if small { 60.0 } else { 120.0 };
    let rate = if small { 100.0 } else { 200.0 };
    if what == "longterm" || what == "all" {
        longterm(small);
    }
    if what == "fileserver" || what == "all" {
        let spec = Load { reads_per_s: rate, dwpd: 0.1, hot_fraction: 0.2, hot_share: 0.8, write_fraction: 1.0 };
        compare(small, "File server (read-heavy)", spec, days);
    }
    if what == "mix" || what == "all" {
        let spec = Load { reads_per_s: rate, dwpd: 1.0, hot_fraction: 1.0, hot_share: 1.0, write_fraction: 0.25 };
        compare(small, "Read/write mix", spec, days);
    }
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
}
