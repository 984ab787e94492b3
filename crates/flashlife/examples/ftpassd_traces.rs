//! FT-PASSD on block I/O traces (the paper's Figures 15 and 16): real traces replayed at their
//! timestamps on the open-channel drive, one program failure at a random point of each run,
//! for OCSSD, FT-PASSD without shift and FT-PASSD with shift; average and maximum write
//! response time relative to OCSSD, and what the device saw at the failure.
//!
//! ```text
//! cargo run --release -p flashlife --example ftpassd_traces -- [--quick] [--traces DIR]
//!     [--time-scale X] [--seed N] [--blocks N] [--set key=value ...]
//! ```
//! `flashlife reproduce ftpassd` runs Figures 15-16 at queue depth 1 from Python. Traces are read in place from
//! `<repo>/../shared/traces` unless `--traces` says otherwise.
//!
//! The drive is `ftpassd-paper` (Table 3: 2 x 4 chips, 1536-page blocks of 16 KiB pages,
//! 1.5 ms programs) cut to `--blocks` blocks per chip (default 64: 12 GiB; 25% over-
//! provisioning, as the paper does not state it), its addresses
//! folded onto the traces (modulo). The failure point: a failure-free OCSSD run counts the
//! page programs P of the trace; every policy then runs with
//! `failures.program_fail_nth_random_within = P` and the same seed, i.e. the same drawn
//! program fails. Until that failure the three policies program the same pages in the same
//! order (the host FTL decides placement; the policies differ only after a failure), so the
//! failure hits the same host page in all three.

use std::path::{Path, PathBuf};

use flashlife::sim::RunOutput;
use flashlife::{ConfigBuilder, Simulator};

const POLICIES: [(&str, &str); 3] =
    [("ocssd", "OCSSD"), ("ft_passd_no_shift", "FT-PASSD (w/o shift)"), ("ft_passd", "FT-PASSD (with shift)")];

/// (label, path under the traces folder). MSR Cambridge first (the paper's traces are MSR),
/// then the other write-carrying traces.
const TRACES: &[(&str, &str)] = &[
    ("hm_0 (window)", "msr/hm_0-window.csv"),
    ("rsrch_1", "msr/rsrch_1.csv"),
    ("wdev_1", "msr/wdev_1.csv"),
    ("wdev_3", "msr/wdev_3.csv"),
    ("web_0 (first 100k)", "msr/web_0-first100k.csv.gz"),
    ("Financial1 (first 10k)", "umass/Financial1-first10k.ascii"),
    ("tpcc (MQSim)", "mqsim/tpcc-small.trace"),
];
const QUICK_TRACES: &[(&str, &str)] = &[("wdev_1", "msr/wdev_1.csv"), ("wdev_3", "msr/wdev_3.csv")];

struct Opts {
    quick: bool,
    dir: PathBuf,
    time_scale: f64,
    seed: u64,
    blocks: u32,
    /// Extra `key=value` settings applied last.
    sets: Vec<String>,
}

fn opts() -> Opts {
    let mut o = Opts {
        quick: false,
        dir: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces")),
        time_scale: 1.0,
        seed: 1,
        blocks: 64,
        sets: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--quick" => o.quick = true,
            "--traces" => o.dir = PathBuf::from(val()),
            "--time-scale" => o.time_scale = val().parse().expect("--time-scale X"),
            "--seed" => o.seed = val().parse().expect("--seed N"),
            "--blocks" => o.blocks = val().parse().expect("--blocks N"),
            "--set" => o.sets.push(val()),
            other => panic!("unknown argument {other}"),
        }
    }
    o
}

fn run(o: &Opts, trace: &Path, policy: &str, buffer_kib: u64, time_scale: f64, failure: &str) -> RunOutput {
    let mut b = ConfigBuilder::new().preset("ftpassd-paper").expect("preset");
    let sets = [
        format!("seed={}", o.seed),
        format!("geometry.blocks_per_plane={}", o.blocks),
        "capacity.overprovisioning=0.25".into(),
        format!("open_channel.device_policy={policy}"),
        format!("open_channel.write_buffer_kib={buffer_kib}"),
        "ftl.integrity_oracle=true".into(),
        "workload.kind=trace".into(),
        format!("workload.trace.path={}", toml_string(trace)),
        format!("workload.trace.time_scale={time_scale}"),
        "run.until=end".into(),
        "run.progress=off".into(),
        failure.into(),
    ];
    for s in sets.iter().chain(&o.sets) {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    let cfg = b.build().unwrap_or_else(|e| panic!("{e}"));
    Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{}: {e}", trace.display()))
}

/// A failure-free OCSSD run counts the trace's page programs P; then the three policies, with
/// one failure at the same random program among P.
fn policies(o: &Opts, path: &Path, buf: u64, scale: f64) -> Option<(u64, Vec<RunOutput>)> {
    let dry = run(o, path, "ocssd", buf, scale, "failures.program_fail_nth=0");
    let programs = dry.summary.integrity.physical_page_programs;
    if programs == 0 {
        return None;
    }
    let fail = format!("failures.program_fail_nth_random_within={programs}");
    Some((programs, POLICIES.iter().map(|(p, _)| run(o, path, p, buf, scale, &fail)).collect()))
}

fn toml_string(p: &Path) -> String {
    format!("\"{}\"", p.display().to_string().replace('\\', "\\\\").replace('"', "\\\""))
}

fn ms(us: f64) -> String {
    format!("{:.2}", us / 1000.0)
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", 100.0 * x)
}

fn main() {
    let o = opts();
    if !o.dir.is_dir() {
        eprintln!("traces folder {} not found (pass --traces DIR)", o.dir.display());
        std::process::exit(2);
    }
    let traces = if o.quick { QUICK_TRACES } else { TRACES };
    let buffers: &[u64] = if o.quick { &[256] } else { &[256, 512, 1024] };
    println!(
        "Drive: ftpassd-paper cut to {} blocks per chip, trace time scale {}, seed {}; one program failure at a random program of each run; integrity oracle on.\n",
        o.blocks, o.time_scale, o.seed
    );
    let mut fig15 = String::from(
        "| trace | buffer/way | policy | writes | mean write (ms) | vs OCSSD | max write (ms) | vs OCSSD |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut fig16 = String::from(
        "| trace | buffer/way | failed program (of) | failed page offset | at (s) | w/o shift: copied pages, retry (ms), buffer use | with shift: retry (ms), migrated pages, buffer use | OCSSD buffer use |\n|---|---|---|---|---|---|---|---|\n",
    );
    // Mean write-response cut of FT-PASSD (with shift) against OCSSD, per buffer size.
    let mut cuts: Vec<(u64, &str, f64)> = Vec::new();
    for &(label, rel) in traces {
        let path = o.dir.join(rel);
        if !path.is_file() {
            eprintln!("skipping {label}: {} not found", path.display());
            continue;
        }
        for &buf in buffers {
            let Some((programs, outs)) = policies(&o, &path, buf, o.time_scale) else {
                eprintln!("skipping {label}: no programs");
                break;
            };
            let base = &outs[0].summary.latency_us.write;
            for ((_, name), out) in POLICIES.iter().zip(&outs) {
                let w = &out.summary.latency_us.write;
                fig15 += &format!(
                    "| {label} | {buf} KiB | {name} | {} | {} | {} | {} | {} |\n",
                    out.summary.host.write_requests,
                    ms(w.mean),
                    pct(w.mean / base.mean - 1.0),
                    ms(w.max),
                    pct(w.max / base.max - 1.0)
                );
            }
            cuts.push((buf, label, 1.0 - outs[2].summary.latency_us.write.mean / base.mean));
            let dev = |i: usize| &outs[i].summary.open_channel.as_ref().expect("open-channel summary").device;
            let nth = outs[0].config.failures.program_fail_nth;
            let use_of =
                |i: usize| dev(i).buffer_utilisation_at_failure.map_or("-".into(), |u| format!("{:.0}%", 100.0 * u));
            let (ns, ws) = (dev(1), dev(2));
            fig16 += &format!(
                "| {label} | {buf} KiB | {nth} ({programs}) | {} | {} | {}, {}, {} | {}, {}, {} | {} |\n",
                ws.first_failure_page.map_or("-".into(), |p| p.to_string()),
                ws.first_failure_ns.map_or("-".into(), |t| format!("{:.1}", t as f64 / 1e9)),
                ns.foreground_copied_pages,
                ms(ns.max_retry_us),
                use_of(1),
                ms(ws.max_retry_us),
                ws.migrated_pages,
                use_of(2),
                use_of(0),
            );
        }
    }
    println!("## Figure 15: write response time, one program failure per run\n\n{fig15}");
    println!("## Figure 16: at the program failure\n\n{fig16}");
    println!("## Mean write response time, FT-PASSD (with shift) against OCSSD\n");
    println!("| buffer/way | average cut | smallest cut | largest cut |\n|---|---|---|---|");
    for &buf in buffers {
        let c: Vec<&(u64, &str, f64)> = cuts.iter().filter(|c| c.0 == buf).collect();
        if c.is_empty() {
            continue;
        }
        let avg = c.iter().map(|c| c.2).sum::<f64>() / c.len() as f64;
        let min = c.iter().min_by(|a, b| a.2.total_cmp(&b.2)).expect("non-empty");
        let max = c.iter().max_by(|a, b| a.2.total_cmp(&b.2)).expect("non-empty");
        println!(
            "| {buf} KiB | {:.1}% | {:.1}% ({}) | {:.1}% ({}) |",
            100.0 * avg,
            100.0 * min.2,
            min.1,
            100.0 * max.2,
            max.1
        );
    }

    // Load: the same traces replayed faster (timestamps multiplied by the scale), 256 KiB per way.
    let scales: &[f64] = if o.quick { &[1.0, 0.01] } else { &[1.0, 0.1, 0.01, 0.001, 0.0001] };
    println!("\n## Load: timestamps scaled, 256 KiB per way\n");
    println!(
        "Mean and max write response relative to OCSSD, and the failed way's buffer use at the failure (w/o shift).\n"
    );
    println!("| trace | time scale | OCSSD mean, max (ms) | w/o shift: mean, max | with shift: mean, max | buffer use at failure | with shift: copies preempted, host ops waiting, longest wait (ms) |");
    println!("|---|---|---|---|---|---|---|");
    let mut by_scale: Vec<(f64, f64)> = Vec::new();
    for &(label, rel) in traces {
        let path = o.dir.join(rel);
        if !path.is_file() {
            continue;
        }
        for &scale in scales {
            let Some((_, outs)) = policies(&o, &path, 256, scale) else { break };
            let w = |i: usize| &outs[i].summary.latency_us.write;
            let rel = |i: usize| format!("{}, {}", pct(w(i).mean / w(0).mean - 1.0), pct(w(i).max / w(0).max - 1.0));
            let dev = |i: usize| &outs[i].summary.open_channel.as_ref().expect("open-channel summary").device;
            let (d, ws) = (dev(1), dev(2));
            println!(
                "| {label} | {scale} | {}, {} | {} | {} | {} | {}, {}, {} |",
                ms(w(0).mean),
                ms(w(0).max),
                rel(1),
                rel(2),
                d.buffer_utilisation_at_failure.map_or("-".into(), |u| format!("{:.0}%", 100.0 * u)),
                ws.migration_preemptions,
                ws.migration_waits,
                ms(ws.max_migration_wait_us)
            );
            by_scale.push((scale, 1.0 - w(2).mean / w(0).mean));
        }
    }
    println!("\n| time scale | average mean-write cut, with shift |\n|---|---|");
    for &scale in scales {
        let c: Vec<f64> = by_scale.iter().filter(|x| x.0 == scale).map(|x| x.1).collect();
        if !c.is_empty() {
            println!("| {scale} | {:.1}% |", 100.0 * c.iter().sum::<f64>() / c.len() as f64);
        }
    }
}
