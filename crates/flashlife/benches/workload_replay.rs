//! The workload layer alone: a small trace looped without end, folded with `remap_first` and
//! replayed closed loop (timestamps ignored), as the ZombieNAND trace drive replays UMass
//! Financial1 to death. Prints CPU nanoseconds per request drawn, for:
//! - `batch`: the pipeline `workload::build` makes, drawn as the run loop draws it
//!   (`Workload::next_batch`, 64 at a time);
//! - `single`: the same pipeline, one `next_request` at a time through its box;
//! - `fold-anew`: the same by hand with `remap_first` remembering nothing
//!   (`RemapFirst::with_memo_limit(.., 0)`): every unit of every request hashed, as before the
//!   memo.
//!
//! The trace is made up here (10,000 requests of 512 B to 8 KiB at sector offsets over
//! 40 MiB, 70% writes, a written region reread), so that anyone can run it:
//!
//! ```text
//! cargo bench -p flashlife --bench workload_replay [-- REQUESTS]
//! ```

use std::collections::VecDeque;
use std::io::Write;
use std::time::Instant;

use flashlife::workload::shaping::{IgnoreTimestamps, Looped, RemapFirst};
use flashlife::workload::{build, Fold, Timestamps, TraceConfig, TraceReader, Workload, WorkloadConfig};
use flashlife::workload::{WorkloadContext, WorkloadKind};

fn main() {
    let n: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(20_000_000);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("trace.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("trace file"));
    writeln!(f, "time_ns,op,offset,size").unwrap();
    let mut x: u64 = 1;
    for i in 0..10_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let sector = (x >> 33) % (40 << 11); // 512-byte sectors over 40 MiB
        let size = 512 * (1 + (x >> 20) % 16);
        let op = if (x >> 12) % 10 < 7 { "W" } else { "R" };
        writeln!(f, "{},{op},{},{size}", i * 1000, sector * 512).unwrap();
    }
    drop(f);
    let cfg = TraceConfig {
        path: path.display().to_string(),
        loops: 0,
        fold: Fold::RemapFirst,
        remap_limit_bytes: 768 << 20,
        timestamps: Timestamps::Ignore,
        ..TraceConfig::default()
    };
    let ctx = WorkloadContext { logical_bytes: 1 << 30, unit_bytes: 4096, seed: 1 };
    let wc = WorkloadConfig { kind: WorkloadKind::Trace, trace: cfg.clone(), ..WorkloadConfig::default() };

    println!("variant,requests,ns_per_request,checksum");
    let mut w = build(&wc, &ctx).expect("pipeline");
    time("batch", n, || {
        let mut buf = VecDeque::with_capacity(64);
        let (mut got, mut sum) = (0u64, 0u64);
        while got < n {
            w.next_batch(&mut buf, 64).expect("requests");
            for r in buf.drain(..) {
                sum = sum.wrapping_add(r.offset ^ r.size);
                got += 1;
            }
        }
        sum
    });
    let mut w = build(&wc, &ctx).expect("pipeline");
    time("single", n, || (0..n).fold(0u64, |s, _| s.wrapping_add(draw(&mut *w))));
    let open = move || -> flashlife::Result<Box<dyn Workload>> { Ok(Box::new(TraceReader::open(&cfg.path, &cfg)?)) };
    let looped = IgnoreTimestamps(Looped::new(open, 0).expect("loop"));
    let mut w = RemapFirst::with_memo_limit(looped, ctx.unit_bytes, 768 << 20, 0).expect("remap_first");
    time("fold-anew", n, || (0..n).fold(0u64, |s, _| s.wrapping_add(draw(&mut w))));
}

fn draw(w: &mut dyn Workload) -> u64 {
    let r = w.next_request().expect("a request").expect("endless");
    r.offset ^ r.size
}

/// Time `f` (which draws `n` requests and returns a checksum, so that nothing is optimised
/// out): CPU time of this thread where Linux tells it (a shared machine's other users then do
/// not count), wall time elsewhere.
fn time(name: &str, n: u64, f: impl FnOnce() -> u64) {
    let (t, cpu) = (Instant::now(), cpu_ns());
    let sum = f();
    let ns = match (cpu, cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64,
        _ => t.elapsed().as_nanos() as f64,
    };
    println!("{name},{n},{:.2},{sum:x}", ns / n as f64);
}

/// CPU time of this thread in nanoseconds (Linux `schedstat`).
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}
