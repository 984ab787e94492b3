//! Runtime bad-block salvage, the paper's Figure 4: baseline (`retire_block`) vs salvage
//! (`skip_page`) across the six RBER inputs, on a synthetic mix.
//!
//! ```text
//! cargo run --release -p flashlife --example salvage_fig4 -- [--preset salvage-small|salvage-table1]
//!     [--writes 1dw] [--read-ratio 0.3] [--seeds 1] [--rbers 1e-12,5e-12,...] [--csv out.csv] [--set k=v ...]
//! ```
//!
//! `--label NAME` names the workload in the CSV (set the workload itself with `--set workload.*`,
//! e.g. a trace, or with `--config FILE`, a TOML file merged over the preset, e.g.
//! `python/flashlife/reproduce/salvage_workloads/vdi.toml`; a file's keys replace
//! `--read-ratio`, and `--set` goes over both). With `--seeds N` a summary line per RBER gives the mean and the spread
//! (sample standard deviation) of the normalised numbers over the seeds.
//!
//! Each RBER runs the baseline and salvage on the same drive, workload and seed. The failure
//! exposure (`failures.exposure`, the programs a page gets over the experiment) comes from a
//! pilot run without failures in fast-forward: mean erases per block + 1.

use flashlife::flash::page_errors::{expected_bad_block_ratio, PAPER_RBERS};
use flashlife::sim::summary::Summary;
use flashlife::techniques::salvage::SalvageSummary;
use flashlife::{ConfigBuilder, Result, Simulator};

struct Args {
    preset: String,
    writes: String,
    read_ratio: f64,
    seeds: u64,
    rbers: Vec<f64>,
    csv: Option<String>,
    label: String,
    config: Option<String>,
    sets: Vec<String>,
}

fn parse() -> Args {
    let mut a = Args {
        preset: "salvage-small".into(),
        writes: "1dw".into(),
        read_ratio: 0.3,
        seeds: 1,
        rbers: PAPER_RBERS.to_vec(),
        csv: None,
        label: "synthetic".into(),
        config: None,
        sets: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().unwrap_or_else(|| panic!("{k} needs a value"));
        match k.as_str() {
            "--preset" => a.preset = v(),
            "--writes" => a.writes = v(),
            "--read-ratio" => a.read_ratio = v().parse().expect("--read-ratio"),
            "--seeds" => a.seeds = v().parse().expect("--seeds"),
            "--rbers" => a.rbers = v().split(',').map(|x| x.trim().parse().expect("--rbers")).collect(),
            "--csv" => a.csv = Some(v()),
            "--label" => a.label = v(),
            "--config" => a.config = Some(v()),
            "--set" => a.sets.push(v()),
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

fn run(args: &Args, extra: &[String]) -> Result<Summary> {
    let mut b = ConfigBuilder::new().preset(&args.preset)?.set(&format!("workload.read_ratio={}", args.read_ratio))?;
    if let Some(path) = &args.config {
        b = b.file(path)?;
    }
    let base = [format!("run.until=\"writes:{}\"", args.writes), "run.progress=\"off\"".to_string()];
    for s in base.iter().chain(&args.sets).chain(extra) {
        b = b.set(s)?;
    }
    Ok(Simulator::new(b.build()?)?.run()?.summary)
}

fn main() -> Result<()> {
    let args = parse();
    let pilot = run(&args, &["failures.model=\"injected\"".into(), "ftl.timing=false".into()])?;
    let exposure = pilot.lifetime.erase_count.mean + 1.0;
    let workload = match &args.config {
        Some(path) => path.clone(),
        None => format!("read ratio {}", args.read_ratio),
    };
    eprintln!(
        "preset {}, {} of writes, {workload}: exposure {:.2} programs per page (pilot: WA {:.2})",
        args.preset, args.writes, exposure, pilot.write_amplification
    );
    let cfg = ConfigBuilder::new().preset(&args.preset)?.build()?;
    let page_bits = cfg.flash.page_size * 8;
    let header =
        "workload,rber,seed,policy,expected_bad_block_ratio,bad_block_ratio,bad_blocks,bad_pages,retired_blocks,\
                  mean_latency_us,p50_latency_us,p99_latency_us,iops,mb_per_s,write_amplification,mean_valid_per_victim,\
                  table_peak_entries,table_peak_memory_bytes,table_lookups,out_of_order_programs,wall_s";
    let mut csv = vec![header.to_string()];
    println!(
        "{:>8} {:>5} | {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>8} {:>8} | {:>6} {:>6} | {:>5}",
        "rber",
        "seed",
        "bb base",
        "bb salv",
        "lat norm",
        "thr norm",
        "WA norm",
        "vpv base",
        "vpv salv",
        "retir",
        "peak",
        "expect"
    );
    for &rber in &args.rbers {
        // Salvage / baseline: mean, p50 and p99 latency, throughput; the two bad-block ratios.
        let mut norm: [Vec<f64>; 6] = Default::default();
        for seed in 1..=args.seeds {
            let mut rows = Vec::new();
            for policy in ["retire_block", "skip_page"] {
                let s = run(
                    &args,
                    &[
                        format!("failures.rber={rber:e}"),
                        format!("failures.exposure={exposure}"),
                        format!("failures.on_program_failure=\"{policy}\""),
                        format!("seed={seed}"),
                    ],
                )?;
                let f = &s.failures;
                let t: SalvageSummary = s.technique("salvage").unwrap_or_default();
                let expect =
                    expected_bad_block_ratio(rber, page_bits, cfg.failures.sigma, cfg.geometry.pages_per_block);
                csv.push(format!(
                    "{},{rber:e},{seed},{policy},{expect:.6},{:.6},{},{},{},{:.2},{:.2},{:.2},{:.1},{:.2},{:.4},{:.2},{},{},{},{},{:.1}",
                    args.label,
                    f.bad_block_ratio,
                    f.bad_blocks,
                    f.bad_pages,
                    f.retired_blocks,
                    s.latency_us.all.mean,
                    s.latency_us.all.p50,
                    s.latency_us.all.p99,
                    s.throughput.iops,
                    s.throughput.mb_per_s,
                    s.write_amplification,
                    s.gc.mean_valid_per_victim,
                    t.bad_page_table.peak_entries,
                    t.bad_page_table_peak_memory_bytes,
                    t.bad_page_table.lookups,
                    s.integrity.out_of_order_programs,
                    s.run.wall_seconds
                ));
                if std::env::var_os("SALVAGE_DUMP").is_some() {
                    eprintln!(
                        "--- {policy}\n{}{}",
                        s.to_text(),
                        serde_json::to_string(&(&s.failures, &s.techniques, &s.scheduler)).unwrap_or_default()
                    );
                    eprintln!("{}", serde_json::to_string(&s.flash).unwrap_or_default());
                }
                rows.push((s, expect));
            }
            let (b, s) = (&rows[0].0, &rows[1].0);
            for (v, x) in norm.iter_mut().zip([
                s.latency_us.all.mean / b.latency_us.all.mean,
                s.latency_us.all.p50 / b.latency_us.all.p50,
                s.latency_us.all.p99 / b.latency_us.all.p99,
                s.throughput.iops / b.throughput.iops,
                b.failures.bad_block_ratio,
                s.failures.bad_block_ratio,
            ]) {
                v.push(x);
            }
            println!(
                "{:>8.0e} {:>5} | {:>8.3}% {:>8.3}% | {:>9.3} {:>9.3} {:>9.3} | {:>8.1} {:>8.1} | {:>6} {:>6} | {:>4.2}%",
                rber,
                seed,
                b.failures.bad_block_ratio * 100.0,
                s.failures.bad_block_ratio * 100.0,
                s.latency_us.all.mean / b.latency_us.all.mean,
                s.throughput.iops / b.throughput.iops,
                s.write_amplification / b.write_amplification,
                b.gc.mean_valid_per_victim,
                s.gc.mean_valid_per_victim,
                b.failures.retired_blocks,
                s.technique::<SalvageSummary>("salvage").unwrap_or_default().bad_page_table.peak_entries,
                rows[0].1 * 100.0
            );
        }
        if args.seeds > 1 {
            let ms = |v: &[f64]| {
                let m = v.iter().sum::<f64>() / v.len() as f64;
                let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
                (m, var.sqrt())
            };
            let [l, p50, p99, t, bb, bs] = norm.each_ref().map(|v| ms(v));
            println!(
                "{:>8.0e}  mean | latency {:.3} +- {:.3} (p50 {:.3} +- {:.3}, p99 {:.3} +- {:.3}), throughput {:.3} +- {:.3}, \
                 bad blocks {:.3}% / {:.3}% ({} seeds)",
                rber,
                l.0,
                l.1,
                p50.0,
                p50.1,
                p99.0,
                p99.1,
                t.0,
                t.1,
                bb.0 * 100.0,
                bs.0 * 100.0,
                args.seeds
            );
        }
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, csv.join("\n") + "\n").map_err(|e| flashlife::Error::io(path, e))?;
    }
    Ok(())
}
