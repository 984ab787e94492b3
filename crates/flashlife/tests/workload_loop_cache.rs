//! Looped replay from memory: a small trace's first pass is cached and replayed, and every
//! later pass must give exactly what re-opening and re-parsing the file gives (requests,
//! arrival offsets, counters between any two requests, the end and the errors).
//!
//! The reference is the same pipeline with the cache off (`Looped::with_cache_limit(.., 0)`),
//! which opens the file again for every pass; the test counts the opens to show it does.
//! The test on a real trace is in `shared_traces`: ignored by default, run by
//! `scripts/test.sh` when `<repo>/../shared/traces` exists.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use flashlife::workload::shaping::{Filter, IgnoreTimestamps, Looped, RemapFirst, TimeScale};
use flashlife::workload::{build, HostRequest, IoKind, TraceConfig, TraceReader, Workload, WorkloadConfig};
use flashlife::workload::{Fold, Timestamps, TraceFilter, WorkloadContext, WorkloadKind};

/// The pipeline `build` assembles for `cfg`, by hand, over a `Looped` that caches passes of at
/// most `cache` requests (0: re-open the file every pass); `opens` counts the file's openings.
/// `remap_first` remembers the runs of a replayed pass's requests (up to its default limit).
fn pipeline(cfg: &TraceConfig, ctx: &WorkloadContext, cache: usize, opens: Arc<AtomicUsize>) -> Box<dyn Workload> {
    pipeline_memo(cfg, ctx, cache, opens, flashlife::workload::shaping::REMAP_MEMO_RUNS)
}

/// As [`pipeline`], with `remap_first` remembering at most `memo` runs.
fn pipeline_memo(
    cfg: &TraceConfig,
    ctx: &WorkloadContext,
    cache: usize,
    opens: Arc<AtomicUsize>,
    memo: usize,
) -> Box<dyn Workload> {
    let path = cfg.path.clone();
    let reader_cfg = cfg.clone();
    let keep = match cfg.filter {
        TraceFilter::Reads => Some(IoKind::Read),
        TraceFilter::Writes => Some(IoKind::Write),
        TraceFilter::All => None,
    };
    let open = move || -> flashlife::Result<Box<dyn Workload>> {
        opens.fetch_add(1, Ordering::Relaxed);
        let r = TraceReader::open(&path, &reader_cfg)?;
        Ok(match keep {
            Some(k) => Box::new(Filter::new(r, k)),
            None => Box::new(r),
        })
    };
    let mut w: Box<dyn Workload> = Box::new(Looped::with_cache_limit(open, cfg.loops, cache).unwrap());
    if cfg.time_scale != 1.0 {
        w = Box::new(TimeScale::new(w, cfg.time_scale));
    }
    if cfg.timestamps == Timestamps::Ignore {
        w = Box::new(IgnoreTimestamps(w));
    }
    assert_eq!(cfg.fold, Fold::RemapFirst, "the tests fold with remap_first");
    let limit = if cfg.remap_limit_bytes == 0 { ctx.logical_bytes } else { cfg.remap_limit_bytes };
    Box::new(RemapFirst::with_memo_limit(w, ctx.unit_bytes, limit.min(ctx.logical_bytes), memo).unwrap())
}

/// What a workload does at one step: a request, the end, or an error's text.
type Step = Result<Option<HostRequest>, String>;

fn step(w: &mut dyn Workload) -> Step {
    w.next_request().map_err(|e| e.to_string())
}

/// Drive `a` (the one under test) and `b` (the reference) side by side for at most `max`
/// steps, comparing every step and the counters after it; returns the number of requests.
fn same_streams(a: &mut dyn Workload, b: &mut dyn Workload, max: u64) -> u64 {
    assert_eq!(a.counters(), b.counters(), "counters before the first request");
    let mut n = 0;
    for i in 0..max {
        let (x, y) = (step(a), step(b));
        assert_eq!(x, y, "step {i}");
        assert_eq!(a.counters(), b.counters(), "counters after step {i}");
        match x {
            Ok(Some(_)) => n += 1,
            // After the end or an error, one more call must agree too.
            _ => {
                assert_eq!(step(a), step(b), "the step after {i}");
                assert_eq!(a.counters(), b.counters(), "counters after the step after {i}");
                break;
            }
        }
    }
    n
}

fn write_trace(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(text.as_bytes()).unwrap();
    p.display().to_string()
}

/// Compare the cached pipeline (both as `build` makes it and by hand, with a given cache
/// limit) with the re-reading one over `max` steps; returns (requests, opens when cached).
fn compare(cfg: &TraceConfig, ctx: &WorkloadContext, cache: usize, max: u64) -> (u64, usize) {
    let (cached_opens, ref_opens) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut reference = pipeline_memo(cfg, ctx, 0, ref_opens.clone(), 0);
    let mut cached = pipeline(cfg, ctx, cache, cached_opens.clone());
    let n = same_streams(&mut *cached, &mut *reference, max);
    let wc = WorkloadConfig { kind: WorkloadKind::Trace, trace: cfg.clone(), ..WorkloadConfig::default() };
    let mut built = build(&wc, ctx).unwrap();
    let mut reference = pipeline_memo(cfg, ctx, 0, Arc::new(AtomicUsize::new(0)), 0);
    assert_eq!(same_streams(&mut *built, &mut *reference, max), n, "build() against the reference");
    let passes = reference.counters().unwrap().passes as usize;
    if n > 0 && passes > 0 {
        assert!(ref_opens.load(Ordering::Relaxed) >= passes, "the reference re-opens the file every pass");
    }
    (n, cached_opens.load(Ordering::Relaxed))
}

/// A flashlife CSV trace with everything the counters see: a header, comments and blank lines
/// (ignored), a malformed line (skipped), a time going backwards (clamped), reads among the
/// writes (for the filters), requests spanning several units and the same units again (for
/// remap_first), and ignored lines after the last request.
const TRACE: &str = "time_ns,op,offset,size\n\
    # a comment\n\
    1000,W,0,4096\n\
    2000,R,1048576,8192\n\
    \n\
    3000,W,10485760,12288\n\
    2500,W,4096,4096\n\
    4000,W,not-a-number,4096\n\
    5000,R,0,4096\n\
    6000,W,99999744,16384\n\
    7000,W,1048576,4096\n\
    8000,R,10485760,4096\n\
    # trailing comment\n\
    \n";

fn ctx() -> WorkloadContext {
    WorkloadContext { logical_bytes: 1 << 30, unit_bytes: 4096, seed: 1 }
}

fn trace_cfg(path: String) -> TraceConfig {
    TraceConfig { path, loops: 0, fold: Fold::RemapFirst, skip_bad_lines: true, ..TraceConfig::default() }
}

#[test]
fn cached_loop_replay_matches_rereading_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "t.csv", TRACE);
    for filter in [TraceFilter::All, TraceFilter::Reads, TraceFilter::Writes] {
        for timestamps in [Timestamps::Honour, Timestamps::Ignore] {
            for (time_scale, limit_units) in [(1.0, 0), (0.5, 5), (3.0, 2)] {
                let mut cfg = trace_cfg(path.clone());
                cfg.filter = filter;
                cfg.timestamps = timestamps;
                cfg.time_scale = time_scale;
                cfg.remap_limit_bytes = limit_units * 4096;
                let what = format!("{filter:?} {timestamps:?} x{time_scale} limit {limit_units}");
                // Endless: 200 passes' worth of steps.
                let (n, opens) = compare(&cfg, &ctx(), usize::MAX, 2000);
                assert_eq!(n, 2000, "{what}");
                assert_eq!(opens, 1, "{what}: later passes come from memory");
                // Finite: the end, its counters and the calls after it.
                for loops in [2, 3, 7] {
                    cfg.loops = loops;
                    let (n, opens) = compare(&cfg, &ctx(), usize::MAX, 10_000);
                    assert!(n > 0 && n < 10_000, "{what}: {loops} passes end");
                    assert_eq!(opens, 1, "{what}");
                }
            }
        }
    }
}

#[test]
fn a_pass_larger_than_the_cache_is_streamed_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "t.csv", TRACE);
    let cfg = trace_cfg(path);
    // 8 requests a pass; a cache of 5 gives up during the first pass and every pass re-reads.
    let (n, opens) = compare(&cfg, &ctx(), 5, 800);
    assert_eq!(n, 800);
    assert!(opens >= 80, "{opens} opens");
    // A cache of exactly the pass keeps it.
    let (_, opens) = compare(&cfg, &ctx(), 8, 800);
    assert_eq!(opens, 1);
}

#[test]
fn errors_are_the_same_with_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    // Without skip_bad_lines the malformed line is an error, in the first pass.
    let path = write_trace(dir.path(), "t.csv", TRACE);
    let mut cfg = trace_cfg(path);
    cfg.skip_bad_lines = false;
    let (n, _) = compare(&cfg, &ctx(), usize::MAX, 100);
    assert_eq!(n, 4, "four requests before the bad line");
    // A pass that the filter empties: the same error, at once.
    let path = write_trace(dir.path(), "w.csv", "time_ns,op,offset,size\n0,W,0,4096\n");
    let mut cfg = trace_cfg(path);
    cfg.filter = TraceFilter::Reads;
    assert_eq!(compare(&cfg, &ctx(), usize::MAX, 100).0, 0);
    // A time going backwards without clamping: the error of the first pass.
    let path = write_trace(dir.path(), "b.csv", "time_ns,op,offset,size\n10,W,0,4096\n5,W,4096,4096\n");
    let mut cfg = trace_cfg(path);
    cfg.non_monotonic = flashlife::workload::NonMonotonic::Error;
    cfg.skip_bad_lines = false;
    assert_eq!(compare(&cfg, &ctx(), usize::MAX, 100).0, 1);
}

/// The reference of the tests below: the file re-read every pass, every request folded anew.
fn reference(cfg: &TraceConfig, ctx: &WorkloadContext) -> Box<dyn Workload> {
    pipeline_memo(cfg, ctx, 0, Arc::new(AtomicUsize::new(0)), 0)
}

#[test]
fn remap_first_remembers_replayed_requests_and_folds_them_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "t.csv", TRACE);
    // Limits of 0 (room for all), 5 and 2 units (requests lose units, some all of theirs);
    // memo limits from none to all: the rest of a pass is then folded again each time.
    for limit_units in [0, 5, 2] {
        for memo in [0, 1, 3, usize::MAX] {
            let mut cfg = trace_cfg(path.clone());
            cfg.remap_limit_bytes = limit_units * 4096;
            let mut w = pipeline_memo(&cfg, &ctx(), usize::MAX, Arc::new(AtomicUsize::new(0)), memo);
            assert_eq!(
                same_streams(&mut *w, &mut *reference(&cfg, &ctx()), 2000),
                2000,
                "limit {limit_units}, memo {memo}"
            );
        }
    }
    // The memo is used: after a few passes every request of the pass is remembered.
    let cfg = trace_cfg(path);
    let open = move || -> flashlife::Result<Box<dyn Workload>> { Ok(Box::new(TraceReader::open(&cfg.path, &cfg)?)) };
    let mut w = RemapFirst::new(Looped::new(open, 0).unwrap(), 4096, 1 << 30).unwrap();
    for _ in 0..100 {
        w.next_request().unwrap().unwrap();
    }
    assert_eq!(w.remembered(), 8, "the pass's 8 requests");
}

/// A flashlife CSV trace of `lines` (time, op, offset, size): unaligned requests over a small
/// space, so that remap_first splits and drops.
fn random_trace(lines: &[(bool, u64, u64)]) -> String {
    let mut t = String::from("time_ns,op,offset,size\n");
    for (i, (read, offset, size)) in lines.iter().enumerate() {
        t += &format!("{},{},{offset},{size}\n", i * 1000, if *read { "R" } else { "W" });
    }
    t
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn remembered_folds_match_folding_anew(
        lines in proptest::collection::vec((proptest::bool::ANY, 0u64..20 * 4096, 1u64..3 * 4096), 1..12),
        limit_units in 1u64..16,
        memo in proptest::prop_oneof![0usize..6, proptest::strategy::Just(usize::MAX)],
        ignore: bool,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = trace_cfg(write_trace(dir.path(), "t.csv", &random_trace(&lines)));
        cfg.remap_limit_bytes = limit_units * 4096;
        cfg.timestamps = if ignore { Timestamps::Ignore } else { Timestamps::Honour };
        let mut w = pipeline_memo(&cfg, &ctx(), usize::MAX, Arc::new(AtomicUsize::new(0)), memo);
        same_streams(&mut *w, &mut *reference(&cfg, &ctx()), 300);
        let wc = WorkloadConfig { kind: WorkloadKind::Trace, trace: cfg.clone(), ..WorkloadConfig::default() };
        same_streams(&mut *build(&wc, &ctx()).unwrap(), &mut *reference(&cfg, &ctx()), 300);
    }
}

/// `n` requests drawn from `w` in batches of `batch`: the requests, then the end or the error.
fn batches(w: &mut dyn Workload, batch: usize, n: usize) -> Vec<Step> {
    let mut got = std::collections::VecDeque::new();
    let mut out = Vec::new();
    while out.len() < n {
        let ended = w.next_batch(&mut got, batch);
        out.extend(got.drain(..).map(|r| Ok(Some(r))));
        match ended {
            Ok(false) => assert!(!out.is_empty() || batch == 0, "a batch that is not the end holds requests"),
            Ok(true) => {
                out.push(Ok(None));
                break;
            }
            Err(e) => {
                out.push(Err(e.to_string()));
                break;
            }
        }
    }
    out.truncate(n);
    out
}

#[test]
fn batches_are_the_requests_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "t.csv", TRACE);
    let wc = |cfg: &TraceConfig| WorkloadConfig {
        kind: WorkloadKind::Trace,
        trace: cfg.clone(),
        ..WorkloadConfig::default()
    };
    // Endless, a finite loop (its end), and an error in the first pass (no skipping).
    let mut endless = trace_cfg(path.clone());
    endless.remap_limit_bytes = 3 * 4096;
    let finite = TraceConfig { loops: 3, ..endless.clone() };
    let failing = TraceConfig { skip_bad_lines: false, ..endless.clone() };
    for cfg in [endless, finite, failing] {
        let mut one = reference(&cfg, &ctx());
        let want: Vec<Step> = (0..500)
            .map(|_| step(&mut *one))
            .scan(false, |done, s| {
                // Up to and including the end or the error.
                if *done {
                    return None;
                }
                *done = !matches!(s, Ok(Some(_)));
                Some(s)
            })
            .collect();
        for batch in [1, 3, 64] {
            let got = batches(&mut *build(&wc(&cfg), &ctx()).unwrap(), batch, want.len());
            assert_eq!(got, want, "batches of {batch}, {} steps", want.len());
        }
    }
}

/// Ignored by default; `scripts/test.sh` runs them (`-- --ignored shared_traces::`) when
/// `../shared/traces` exists.
mod shared_traces {
    use super::*;

    fn trace(rel: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(rel);
        assert!(p.is_file(), "needs ../shared/traces: {} not found", p.display());
        p.display().to_string()
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn financial1_looped_and_remapped_replays_the_same_from_memory() {
        // The ZombieNAND trace drive's workload: Financial1 looped forever, remap_first onto
        // 768 MiB, as the performance note measures; and onto 16 MiB, where most units drop.
        for (limit, timestamps) in [(805_306_368u64, Timestamps::Ignore), (16 << 20, Timestamps::Honour)] {
            let mut cfg = trace_cfg(trace("umass/Financial1-first10k.ascii"));
            cfg.skip_bad_lines = false;
            cfg.remap_limit_bytes = limit;
            cfg.timestamps = timestamps;
            let ctx = WorkloadContext { logical_bytes: 1 << 31, unit_bytes: 4096, seed: 1 };
            // 10,000 lines a pass: a few passes, the last one cut short.
            let (n, opens) = compare(&cfg, &ctx, usize::MAX, 55_000);
            assert_eq!(n, 55_000);
            assert_eq!(opens, 1);
        }
    }
}
