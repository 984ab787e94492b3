//! Trace shaping: loop replay, address folding, time scaling, filters, bounds.

use std::io::Write;

use flashlife::workload::shaping::{Looped, RemapFirst};
use flashlife::workload::{build, HostRequest, IoKind, Workload, WorkloadConfig, WorkloadContext};
use flashlife::workload::{Fold, Timestamps, TraceFilter, WorkloadKind};

fn write_trace(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn trace_cfg(path: &std::path::Path) -> WorkloadConfig {
    let mut c = WorkloadConfig { kind: WorkloadKind::Trace, ..WorkloadConfig::default() };
    c.trace.path = path.display().to_string();
    c
}

fn ctx(logical: u64) -> WorkloadContext {
    WorkloadContext { logical_bytes: logical, unit_bytes: 4096, seed: 1 }
}

fn drain(w: &mut dyn Workload, max: usize) -> Vec<HostRequest> {
    let mut v = Vec::new();
    while v.len() < max {
        match w.next_request().unwrap() {
            Some(r) => v.push(r),
            None => break,
        }
    }
    v
}

const TRACE: &str = "time_ns,op,offset,size\n1000,W,0,4096\n2000,R,1048576,8192\n4000,W,10485760,4096\n";

#[test]
fn loop_replay_restarts_with_a_time_offset() {
    let f = write_trace(TRACE);
    let mut c = trace_cfg(f.path());
    c.trace.loops = 3;
    let mut w = build(&c, &ctx(1 << 40)).unwrap();
    let v = drain(&mut *w, 100);
    assert_eq!(v.len(), 9);
    let t: Vec<u64> = v.iter().map(|r| r.arrival_ns).collect();
    // Pass length 3000 ns, mean gap 1500 ns: passes start at 0, 4500, 9000.
    assert_eq!(t, vec![0, 1000, 3000, 4500, 5500, 7500, 9000, 10000, 12000]);
    assert_eq!(v[3].offset, v[0].offset);
    let k = w.counters().unwrap();
    assert_eq!((k.passes, k.requests), (3, 9));

    c.trace.loops = 0; // endless
    let mut w = build(&c, &ctx(1 << 40)).unwrap();
    let v = drain(&mut *w, 30_000);
    assert_eq!(v.len(), 30_000);
    assert!(v.windows(2).all(|p| p[0].arrival_ns <= p[1].arrival_ns));
}

#[test]
fn loop_over_an_empty_filtered_pass_is_an_error_not_a_hang() {
    let f = write_trace("time_ns,op,offset,size\n0,W,0,4096\n");
    let mut c = trace_cfg(f.path());
    c.trace.loops = 0;
    c.trace.filter = TraceFilter::Reads;
    let mut w = build(&c, &ctx(1 << 30)).unwrap();
    let e = w.next_request().unwrap_err().to_string();
    assert!(e.contains("produced no request"), "{e}");
}

#[test]
fn filters_keep_reads_or_writes() {
    let f = write_trace(TRACE);
    let mut c = trace_cfg(f.path());
    c.trace.filter = TraceFilter::Writes;
    let mut w = build(&c, &ctx(1 << 40)).unwrap();
    let v = drain(&mut *w, 10);
    assert!(v.len() == 2 && v.iter().all(|r| r.kind == IoKind::Write));
    assert_eq!(w.counters().unwrap().filtered, 1);
    c.trace.filter = TraceFilter::Reads;
    let v = drain(&mut *build(&c, &ctx(1 << 40)).unwrap(), 10);
    assert!(v.len() == 1 && v[0].kind == IoKind::Read);
}

#[test]
fn time_scaling_and_ignoring_timestamps() {
    let f = write_trace(TRACE);
    let mut c = trace_cfg(f.path());
    c.trace.time_scale = 0.5;
    let t: Vec<u64> = drain(&mut *build(&c, &ctx(1 << 40)).unwrap(), 10).iter().map(|r| r.arrival_ns).collect();
    assert_eq!(t, vec![0, 500, 1500]);
    c.trace.timestamps = Timestamps::Ignore;
    assert!(!c.open_loop());
    assert!(drain(&mut *build(&c, &ctx(1 << 40)).unwrap(), 10).iter().all(|r| r.arrival_ns == 0));
}

#[test]
fn modulo_fold_keeps_every_request_inside_the_drive() {
    let f = write_trace(
        "time_ns,op,offset,size\n0,W,0,4096\n1,W,1048576,8192\n2,W,1044480,8192\n3,W,5000000,4096000\n4,W,100,512\n",
    );
    let logical = 1 << 20; // 1 MiB drive
    let v = drain(&mut *build(&trace_cfg(f.path()), &ctx(logical)).unwrap(), 10);
    assert!(v.iter().all(|r| r.offset + r.size <= logical && r.size > 0));
    assert_eq!((v[1].offset, v[1].size), (0, 8192)); // 1 MiB mod 1 MiB
    assert_eq!((v[2].offset, v[2].size), (logical - 8192, 8192)); // straddles the end: moved back
    assert_eq!((v[3].offset, v[3].size), (0, logical)); // larger than the drive: cut
    assert_eq!((v[4].offset, v[4].size), (100, 512));
}

#[test]
fn fold_none_reports_requests_past_the_end() {
    let f = write_trace(TRACE);
    let mut c = trace_cfg(f.path());
    c.trace.fold = Fold::None;
    let mut w = build(&c, &ctx(2 << 20)).unwrap();
    w.next_request().unwrap().unwrap();
    w.next_request().unwrap().unwrap();
    let e = w.next_request().unwrap_err().to_string();
    assert!(e.contains("runs past the drive's 2097152 logical bytes"), "{e}");
}

#[test]
fn remap_first_is_compact_ordered_bounded_and_splits_runs() {
    let f = write_trace(
        "time_ns,op,offset,size\n\
         0,W,40960000,4096\n\
         1,W,8192,8192\n\
         2,R,40960000,100\n\
         3,W,4096,12288\n\
         4,W,999997440,4096\n\
         5,W,8192,4096\n",
    );
    let mut c = trace_cfg(f.path());
    c.trace.fold = Fold::RemapFirst;
    c.trace.remap_limit_bytes = 4 * 4096; // keep 4 distinct units
    let mut w = build(&c, &ctx(1 << 30)).unwrap();
    let v: Vec<(u64, u64)> = drain(&mut *w, 20).iter().map(|r| (r.offset, r.size)).collect();
    // Units in order of appearance: 10000 -> 0, 2 -> 1, 3 -> 2, then 1 -> 3 (limit reached).
    // Request 3 covers units 1,2,3 -> compact 3 | 1,2: split in two runs.
    assert_eq!(v, vec![(0, 4096), (4096, 8192), (0, 100), (12288, 4096), (4096, 8192), (4096, 4096)]);
    let k = w.counters().unwrap();
    assert_eq!(k.dropped, 1, "the unit past the limit is dropped");
    assert!(v.iter().all(|(o, s)| o + s <= 4 * 4096));
}

/// Heap bytes live on this thread (allocations minus frees), for the memory test below: a
/// counting global allocator, per thread so that tests running in parallel do not mix.
mod heap {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static LIVE: Cell<i64> = const { Cell::new(0) };
    }

    pub struct Counting;

    fn add(n: i64) {
        let _ = LIVE.try_with(|c| c.set(c.get() + n));
    }

    // SAFETY: every call is forwarded to the system allocator unchanged; the count is a side
    // effect in a thread-local `Cell` (const-initialised, so it never allocates itself).
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let p = System.alloc(l);
            if !p.is_null() {
                add(l.size() as i64);
            }
            p
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            System.dealloc(p, l);
            add(-(l.size() as i64));
        }
    }

    /// Bytes allocated and not yet freed by this thread.
    pub fn live() -> i64 {
        LIVE.with(|c| c.get())
    }
}

#[global_allocator]
static ALLOC: heap::Counting = heap::Counting;

#[test]
fn remap_first_memory_is_bounded_by_the_drive() {
    // Random 4 KiB writes over 16 TiB, far more distinct units than the drive (1000 units)
    // holds: the first 1000 distinct units are kept, every later new unit is dropped, and the
    // heap the remapper holds stops growing at the drive's size (measured by a counting
    // allocator). Reference: an independent replay of the rule with a set.
    struct Spray {
        state: u64,
        left: u64,
    }
    impl Workload for Spray {
        fn next_request(&mut self) -> flashlife::Result<Option<HostRequest>> {
            if self.left == 0 {
                return Ok(None);
            }
            self.left -= 1;
            self.state = self.state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let offset = (self.state >> 32) << 12;
            Ok(Some(HostRequest { arrival_ns: 0, kind: IoKind::Write, offset, size: 4096, stream: 0, budget_us: 0 }))
        }
    }
    let units = 1000u64;
    // Expected outcome, without the remapper: the first `units` distinct units are kept.
    let expect = |n: u64| {
        let mut src = Spray { state: 1, left: n };
        let mut kept = std::collections::HashSet::new();
        let (mut served, mut dropped) = (0u64, 0u64);
        while let Some(r) = src.next_request().unwrap() {
            let u = r.offset / 4096;
            if kept.contains(&u) || (kept.len() as u64) < units && kept.insert(u) {
                served += 1;
            } else {
                dropped += 1;
            }
        }
        (served, dropped, kept.len() as u64)
    };
    // (served, dropped, heap bytes the remapper holds at the end) for `n` source requests.
    let measure = |n: u64| {
        let before = heap::live();
        let mut w = RemapFirst::new(Spray { state: 1, left: n }, 4096, units * 4096).unwrap();
        let (mut served, mut top) = (0u64, 0u64);
        while let Some(r) = w.next_request().unwrap() {
            assert!(r.offset + r.size <= units * 4096, "{r:?}");
            top = top.max(r.offset / 4096 + 1);
            served += 1;
        }
        let held = heap::live() - before;
        let dropped = w.counters().unwrap().dropped;
        drop(w);
        (served, dropped, top, held)
    };
    let (small, large) = (2 * units, 200 * units);
    let (s1, d1, top1, held1) = measure(small);
    let (s2, d2, top2, held2) = measure(large);
    eprintln!("{small} requests: {s1} served, {d1} dropped, {held1} B held; {large}: {s2}, {d2}, {held2} B");
    let (e1, f1, k1) = expect(small);
    let (e2, f2, k2) = expect(large);
    assert_eq!((k1, k2), (units, units), "both runs cross the limit");
    assert_eq!((s1, d1), (e1, f1));
    assert_eq!((s2, d2), (e2, f2));
    assert!(d2 > 190 * units, "most of the long run is new units past the limit: {d2}");
    assert_eq!((top1, top2), (units, units), "compact units fill the drive exactly");
    // Memory: the same after 2,000 and 200,000 requests (the map stopped at the limit), and a
    // few dozen bytes per drive unit (a hash entry is 16 bytes; the table at most doubles).
    assert_eq!(held1, held2, "the remapper's heap grew past the limit");
    assert!(held2 > 0 && held2 <= 48 * units as i64, "{held2} B for {units} units");
}

#[test]
fn looped_over_a_custom_source() {
    let opens = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = opens.clone();
    let open = move || -> flashlife::Result<Box<dyn Workload>> {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let f = write_trace(TRACE);
        let r = flashlife::workload::TraceReader::open(f.path(), &Default::default())?;
        Ok(Box::new(r))
    };
    let mut w = Looped::new(open.clone(), 2).unwrap();
    assert_eq!(drain(&mut w, 100).len(), 6);
    // The small pass is replayed from memory: the source is opened once.
    assert_eq!(opens.load(std::sync::atomic::Ordering::Relaxed), 1);
    let mut w = Looped::with_cache_limit(open, 2, 0).unwrap();
    assert_eq!(drain(&mut w, 100).len(), 6);
    assert_eq!(opens.load(std::sync::atomic::Ordering::Relaxed), 3, "without the cache, once per pass");
}
