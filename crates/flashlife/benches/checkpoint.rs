//! Checkpoint cost on the 16 GiB benchmark drive: time to write the checkpoint of a run
//! interrupted after `REQUESTS` requests, its size, and the time to load it and resume.
//!
//! ```text
//! cargo bench -p flashlife --bench checkpoint [-- REQUESTS [PRESET]]   # default 200000 bench-16g
//! ```

use std::time::Instant;

use flashlife::{checkpoint, ConfigBuilder, Simulator};

fn main() -> flashlife::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let requests: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let preset = args.get(1).cloned().unwrap_or_else(|| "bench-16g".into());
    let cfg = ConfigBuilder::new()
        .preset(&preset)?
        .set(&format!("run.until=\"requests:{}\"", requests + 1000))?
        .set("run.progress=\"off\"")?
        .build()?;
    let pages = flashlife::flash::Geometry::new(&cfg.geometry).pages();
    let dir = std::env::temp_dir().join(format!("flashlife-checkpoint-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| flashlife::Error::io(dir.display(), e))?;
    let path = checkpoint::path_in(&dir);

    let mut sim = Simulator::new(cfg)?;
    sim.set_checkpoint_path(path.clone());
    sim.set_interrupt_after(requests);
    let out = sim.run()?;
    // The interrupted run's wall time includes the checkpoint; time a second write alone by
    // resuming (load) and interrupting again at once (write).
    let bytes = std::fs::metadata(&path).map_err(|e| flashlife::Error::io(path.display(), e))?.len();
    let t = Instant::now();
    let mut resumed = Simulator::resume(&path)?;
    let load_s = t.elapsed().as_secs_f64();
    resumed.set_interrupt_after(requests);
    let t = Instant::now();
    let _ = resumed.run()?;
    let write_s = t.elapsed().as_secs_f64();
    std::fs::remove_dir_all(&dir).map_err(|e| flashlife::Error::io(dir.display(), e))?;
    println!("drive: {preset}, {pages} pages; interrupted after {} requests", out.summary.run.requests);
    println!(
        "checkpoint: {:.1} MiB ({:.2} bytes per physical page); write {write_s:.2} s; load + workload fast-forward {load_s:.2} s",
        bytes as f64 / (1u64 << 20) as f64,
        bytes as f64 / pages as f64
    );
    Ok(())
}
