//! The salvage paper's full Table I drive (33.6 million pages of 16 KiB) with runtime bad-block
//! salvage and the lognormal page error model: peak memory and page operations per second.
//!
//! ```text
//! cargo bench -p flashlife --bench salvage_table1 [-- WRITES [POLICY]]   # default 0.1dw skip_page
//! ```
//!
//! The drive is filled in fast-forward (`ftl.precondition = "full"`), then `WRITES` of a 30%-read
//! uniform mix run with the timing model on. The exposure is set so that the error rate is the
//! paper's RBER 3e-11 spread over about two programs per page.

use std::time::Instant;

use flashlife::techniques::salvage::SalvageSummary;
use flashlife::{ConfigBuilder, Simulator};

fn main() -> flashlife::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let writes = args.first().cloned().unwrap_or_else(|| "0.1dw".into());
    let policy = args.get(1).cloned().unwrap_or_else(|| "skip_page".into());
    let mut b = ConfigBuilder::new().preset("salvage-table1")?;
    for s in [
        "ftl.precondition=\"full\"".to_string(),
        "workload.read_ratio=0.3".into(),
        "failures.exposure=2".into(),
        format!("failures.on_program_failure=\"{policy}\""),
        format!("run.until=\"writes:{writes}\""),
        "run.progress=\"off\"".into(),
    ] {
        b = b.set(&s)?;
    }
    let cfg = b.build()?;
    let pages = flashlife::flash::Geometry::new(&cfg.geometry).pages();
    let t = Instant::now();
    let sim = Simulator::new(cfg)?;
    let fill_s = t.elapsed().as_secs_f64();
    let fill_ops = sim.ftl().flash.geo.pages(); // upper bound reference only
    let out = sim.run()?;
    let s = &out.summary;
    println!(
        "drive: {pages} pages ({:.1} GiB raw), policy {policy}",
        s.capacity.physical_bytes as f64 / (1u64 << 30) as f64
    );
    println!("fill (fast-forward): {fill_s:.1} s for {fill_ops} pages");
    println!(
        "timed run: {} requests, {} page ops in {:.1} s wall = {:.2} M page ops/s",
        s.run.requests,
        s.run.page_ops,
        s.run.wall_seconds,
        s.run.page_ops_per_second / 1e6
    );
    println!(
        "peak RSS {:.0} MiB ({:.1} bytes per physical page)",
        s.run.peak_rss_bytes as f64 / (1u64 << 20) as f64,
        s.run.peak_rss_bytes as f64 / pages as f64
    );
    let t: SalvageSummary = s.technique("salvage").unwrap_or_default();
    println!(
        "failures: {} bad pages in {} blocks, table peak {} entries ({} bytes), {} lookups, WA {:.3}",
        s.failures.bad_pages,
        s.failures.bad_blocks,
        t.bad_page_table.peak_entries,
        t.bad_page_table_peak_memory_bytes,
        t.bad_page_table.lookups,
        s.write_amplification
    );
    println!("{}", s.to_text());
    Ok(())
}
