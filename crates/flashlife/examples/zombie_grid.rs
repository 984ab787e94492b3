//! ZombieNAND synthetic grid (the paper's Figure 3): for each starting mode, write share,
//! reserve and working set, run the baseline and the zombie drive to death and report the
//! lifetime ratio and the ratio of lifetime-average latencies, as CSV.
//!
//! ```text
//! cargo run --release --example zombie_grid -- [--small] [--jobs N] [--timing] [--out FILE]
//!     [--modes tlc,mlc] [--reserves 0.06,0.1,...] [--working-sets 0.1,...] [--reads 0.9,0.5,0.1]
//!     [--endurance-scale F] [--baseline baseline|baseline-unlevelled] [--capacity bits|table1]
//!     [--set key=value ...]
//! ```
//! `life_used` columns: `lifetime.life_used` at death, the mean erase count over the starting
//! mode's rated cycles (the share of rated erases the drive used).
//! `--small` is the CI grid (scaled endurance, smaller blocks); the default is the full grid
//! on the paper's synthetic drive. `flashlife reproduce zombienand` runs the same grids from Python.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use flashlife::{ConfigBuilder, Simulator};

#[derive(Clone, Debug)]
struct Point {
    mode: String,
    read: f64,
    reserve: f64,
    ws: f64,
}

fn list(s: &str) -> Vec<f64> {
    s.split(',').map(|x| x.trim().parse().expect("a number")).collect()
}

struct Outcome {
    bytes: u64,
    drive_writes: f64,
    latency_us: f64,
    switches: u64,
    erases: u64,
    wall: f64,
    page_ops: u64,
    life_used: f64,
}

fn run(p: &Point, zombie: bool, baseline: &str, sets: &[String]) -> Outcome {
    let preset = format!("{}-synthetic-{}", if zombie { "zombie" } else { baseline }, p.mode);
    let mut b = ConfigBuilder::new().preset(&preset).expect("preset");
    let mut all = vec![
        format!("capacity.reserve={}", p.reserve),
        format!("workload.working_set={}", p.ws),
        format!("workload.read_ratio={}", p.read),
    ];
    all.extend(sets.iter().cloned());
    if p.mode == "tlc" && sets.iter().any(|s| s == "flash.capacity_on_drop=\"page_size\"") {
        // Table I's TLC page (the presets' 6 KiB is the 3:2:1 reading's).
        all.push("flash.page_size=8192".into());
        all.push("flash.tlc.page_size=8192".into());
    }
    for s in &all {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    let cfg = b.build().unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let out = Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{p:?} zombie={zombie}: {e}"));
    let s = out.summary;
    Outcome {
        bytes: s.lifetime.host_bytes_written,
        drive_writes: s.lifetime.drive_writes,
        latency_us: s.latency_us.all.mean,
        switches: s.lifetime.mode_switches,
        erases: s.flash.block_erases,
        wall: s.run.wall_seconds,
        page_ops: s.run.page_ops,
        life_used: s.lifetime.life_used,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut small = false;
    let mut jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut out_path: Option<String> = None;
    let mut timing = false;
    let mut modes = vec!["tlc".to_string(), "mlc".to_string()];
    let mut reserves = None;
    let mut wss = None;
    let mut reads = None;
    let mut scale = None;
    let mut sets = Vec::new();
    let mut baseline = "baseline".to_string();
    let mut i = 0;
    while i < args.len() {
        let next = |i: &mut usize| {
            *i += 1;
            args.get(*i).cloned().unwrap_or_else(|| panic!("{} needs a value", args[*i - 1]))
        };
        match args[i].as_str() {
            "--small" => small = true,
            "--timing" => timing = true,
            "--jobs" => jobs = next(&mut i).parse().expect("--jobs N"),
            "--out" => out_path = Some(next(&mut i)),
            "--modes" => modes = next(&mut i).split(',').map(str::to_string).collect(),
            "--reserves" => reserves = Some(list(&next(&mut i))),
            "--working-sets" => wss = Some(list(&next(&mut i))),
            "--reads" => reads = Some(list(&next(&mut i))),
            "--endurance-scale" => scale = Some(next(&mut i).parse::<f64>().expect("a number")),
            "--set" => sets.push(next(&mut i)),
            // `baseline` (levelled, the paper's) or `baseline-unlevelled`.
            "--baseline" => baseline = next(&mut i),
            // Capacity after a bit drop: `bits` (3:2:1, the presets) or `table1` (8/4/2 KiB).
            "--capacity" => match next(&mut i).as_str() {
                "bits" => {}
                "table1" => sets.push("flash.capacity_on_drop=\"page_size\"".into()),
                other => panic!("--capacity bits|table1, not {other}"),
            },
            other => panic!("unknown argument {other}"),
        }
        i += 1;
    }
    let (reserves, wss, reads, scale) = if small {
        (
            reserves.unwrap_or(vec![0.07, 0.2, 0.3]),
            wss.unwrap_or(vec![0.1, 0.5, 1.0]),
            reads.unwrap_or(vec![0.5]),
            scale.unwrap_or(0.1),
        )
    } else {
        (
            reserves.unwrap_or(vec![0.06, 0.10, 0.15, 0.20, 0.25, 0.30]),
            wss.unwrap_or(vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),
            reads.unwrap_or(vec![0.9, 0.5, 0.1]),
            scale.unwrap_or(1.0),
        )
    };
    if small {
        sets.push("geometry.pages_per_block=32".into());
    }
    if scale != 1.0 {
        let e = |c: f64| ((c * scale).round() as u64).max(2);
        sets.push(format!("flash.wear.endurance.slc={}", e(75_000.0)));
        sets.push(format!("flash.wear.endurance.mlc={}", e(6_000.0)));
        sets.push(format!("flash.wear.endurance.tlc={}", e(1_000.0)));
        sets.push(format!("flash.wear.endurance.qlc={}", e(300.0).min(e(1_000.0) - 1)));
        // The levelling spread in cycles scales with the endurance (the presets' 16).
        sets.push(format!("wear_leveling.threshold={}", ((16.0 * scale).round() as u64).max(2)));
    }
    sets.push(format!("ftl.timing={timing}"));
    sets.push("run.progress=\"off\"".into());

    let mut points = Vec::new();
    for m in &modes {
        for &r in &reads {
            for &res in &reserves {
                for &ws in &wss {
                    points.push(Point { mode: m.clone(), read: r, reserve: res, ws });
                }
            }
        }
    }
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let rows: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = points.get(k) else { break };
                let b = run(p, false, &baseline, &sets);
                let z = run(p, true, &baseline, &sets);
                let lat = if b.latency_us > 0.0 { z.latency_us / b.latency_us } else { f64::NAN };
                let row = format!(
                    "{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.2},{:.2},{:.4},{},{},{},{:.2},{:.2},{:.3e},{:.4},{:.4}",
                    p.mode,
                    p.read,
                    p.reserve,
                    p.ws,
                    b.bytes,
                    z.bytes,
                    z.bytes as f64 / b.bytes.max(1) as f64,
                    b.drive_writes,
                    z.drive_writes,
                    b.latency_us,
                    z.latency_us,
                    lat,
                    z.switches,
                    b.erases,
                    z.erases,
                    b.wall,
                    z.wall,
                    (b.page_ops + z.page_ops) as f64 / (b.wall + z.wall).max(1e-9),
                    b.life_used,
                    z.life_used,
                );
                eprintln!("{row}");
                rows.lock().unwrap().push((k, row));
            });
        }
    });
    let mut rows = rows.into_inner().unwrap();
    rows.sort();
    let mut csv = String::from(
        "mode,read_ratio,reserve,working_set,baseline_bytes,zombie_bytes,lifetime_ratio,baseline_drive_writes,zombie_drive_writes,baseline_latency_us,zombie_latency_us,latency_ratio,mode_switches,baseline_erases,zombie_erases,baseline_wall_s,zombie_wall_s,page_ops_per_s,baseline_life_used,zombie_life_used\n",
    );
    for (_, r) in rows {
        csv += &r;
        csv.push('\n');
    }
    match out_path {
        Some(p) => std::fs::write(&p, &csv).expect("write the CSV"),
        None => print!("{csv}"),
    }
    eprintln!("{} points in {:.1} s", points.len(), started.elapsed().as_secs_f64());
}
