//! Whole-lifetime benchmark of the ZombieNAND trace drive (4 elements of 512 TLC blocks,
//! 128 pages of 8 KiB): random 4 KiB writes over half the drive until death, baseline and
//! zombie, timing model on. Prints wall time, page operations and page operations per second.
//!
//! ```text
//! cargo bench -p flashlife --bench zombie_lifetime [-- baseline|zombie] [-- --set key=value ...]
//! ```

use flashlife::{ConfigBuilder, Simulator};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let mut which = Vec::new();
    let mut sets = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--set" {
            i += 1;
            sets.push(args.get(i).cloned().expect("--set key=value"));
        } else {
            which.push(args[i].clone());
        }
        i += 1;
    }
    if which.is_empty() {
        which = vec!["baseline".into(), "zombie".into()];
    }
    println!(
        "variant,host_gib_written,drive_writes,page_ops,erases,mode_switches,wall_s,page_ops_per_s,mean_latency_us"
    );
    for v in which {
        let mut b = ConfigBuilder::new().preset(&format!("{v}-trace-tlc")).expect("baseline or zombie");
        for s in ["run.progress=\"off\"".to_string()].iter().chain(&sets) {
            b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        let out = Simulator::new(b.build().expect("config")).and_then(|s| s.run()).expect("run");
        let s = out.summary;
        println!(
            "{v},{:.2},{:.1},{},{},{},{:.2},{:.3e},{:.1}",
            s.lifetime.host_bytes_written as f64 / (1u64 << 30) as f64,
            s.lifetime.drive_writes,
            s.run.page_ops,
            s.flash.block_erases,
            s.lifetime.mode_switches,
            s.run.wall_seconds,
            s.run.page_ops_per_second,
            s.latency_us.all.mean
        );
    }
}
