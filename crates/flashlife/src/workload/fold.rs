//! Address folding: [`Workload`] adapters that put a trace's addresses inside the simulated
//! drive, the last step of the trace pipeline ([`super::shaping::build_trace`]): modulo the
//! capacity ([`Modulo`]), refused past it ([`CheckBounds`]), or each distinct unit given the
//! next free one in order of first use ([`RemapFirst`], with its memo of replayed requests).

use rustc_hash::FxHashMap;

use super::trace::TraceCounters;
use super::{HostRequest, Workload};
use crate::error::{Error, Result};

/// Folds addresses onto the drive: offset modulo the capacity; a request that would run past
/// the end is moved back to end at it; a request larger than the drive is cut to the drive.
pub struct Modulo<W> {
    inner: W,
    logical: u64,
}

impl<W: Workload> Modulo<W> {
    /// Fold onto `logical` bytes (> 0).
    pub fn new(inner: W, logical: u64) -> Self {
        Modulo { inner, logical: logical.max(1) }
    }
}

impl<W: Workload> Workload for Modulo<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        Ok(self.inner.next_request()?.map(|mut r| {
            if r.size >= self.logical {
                r.offset = 0;
                r.size = self.logical;
            } else {
                r.offset %= self.logical;
                r.offset = r.offset.min(self.logical - r.size);
            }
            r
        }))
    }
    fn counters(&self) -> Option<TraceCounters> {
        self.inner.counters()
    }
}

/// No folding: a request past the end of the drive is an error.
pub struct CheckBounds<W> {
    inner: W,
    logical: u64,
}

impl<W: Workload> CheckBounds<W> {
    /// Check against `logical` bytes.
    pub fn new(inner: W, logical: u64) -> Self {
        CheckBounds { inner, logical }
    }
}

impl<W: Workload> Workload for CheckBounds<W> {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        match self.inner.next_request()? {
            Some(r) if r.offset.saturating_add(r.size) > self.logical => Err(Error::Run(format!(
                "trace request at byte {} ({} bytes) runs past the drive's {} logical bytes; \
                 set workload.trace.fold = \"modulo\" or \"remap_first\"",
                r.offset, r.size, self.logical
            ))),
            other => Ok(other),
        }
    }
    fn counters(&self) -> Option<TraceCounters> {
        self.inner.counters()
    }
}

/// `remap_first`: the first distinct mapping units the trace touches, in order of first
/// appearance, are given consecutive units from 0 (as ZombieNAND kept the first 512 MB of
/// unique addresses). Once `limit` units are mapped, requests touching new units lose those
/// units (counted as dropped). A request whose units land on non-consecutive compact units is
/// split into one request per consecutive run. Memory: one hash entry per kept unit, never
/// more than the drive's unit count.
///
/// What a request folds into never changes after the first time: each of its units was then
/// mapped for good or dropped because the map was full, and the map stays full. So over a
/// source that replays a fixed sequence (a looped trace replayed from memory:
/// [`Workload::replay_index`]) the runs of each request of the sequence are remembered the
/// first time and reused on every later pass without a hash lookup (at most
/// [`REMAP_MEMO_RUNS`] runs; the rest are folded again each time, with the same result).
pub struct RemapFirst<W> {
    inner: W,
    unit: u64,
    limit: u64,
    /// Fx hashing: every unit of every request is looked up, and SipHash was a tenth of a
    /// looped trace run. Keys come from the trace, but a skewed trace can only slow its own
    /// run, and the map is never iterated, so the hasher cannot change a result.
    map: FxHashMap<u64, u64>,
    /// Runs of the remembered requests, then those of the request under way if it is not
    /// remembered (cut off again once it is served).
    runs: Vec<Run>,
    /// For each position of the source's fixed sequence: where its runs are (`NOT_KNOWN`:
    /// not folded yet).
    memo: Vec<Folded>,
    /// At most this many runs are remembered.
    max_runs: usize,
    /// The request being served, and which of `runs` are still to come.
    cur: Option<Serving>,
    dropped: u64,
}

/// At most this many runs (24 bytes each: 24 MiB) are remembered by [`RemapFirst`], for
/// positions below it (16 bytes each: 16 MiB at most, as a looped pass holds at most
/// [`LOOP_CACHE_REQUESTS`] requests); a request past them is folded again on every pass.
pub const REMAP_MEMO_RUNS: usize = 1 << 20;

/// One consecutive run of a folded request, and the units dropped just before it.
#[derive(Debug, Clone, Copy)]
struct Run {
    offset: u64,
    size: u64,
    dropped_before: u64,
}

/// Where a request's runs are in [`RemapFirst::runs`], and the units dropped after the last.
#[derive(Debug, Clone, Copy)]
struct Folded {
    start: u32,
    len: u32,
    dropped_after: u64,
}

const NOT_KNOWN: Folded = Folded { start: u32::MAX, len: 0, dropped_after: 0 };

/// The request [`RemapFirst`] is serving: its runs `next..end` (of `len`) are still to come.
#[derive(Debug, Clone, Copy)]
struct Serving {
    req: HostRequest,
    next: u32,
    end: u32,
    len: u32,
    dropped_after: u64,
    /// Its runs are not remembered: `runs` is cut back to their start once it is served.
    transient: bool,
}

impl<W: Workload> RemapFirst<W> {
    /// Keep at most `limit_bytes / unit` distinct units of `unit` bytes.
    pub fn new(inner: W, unit: u64, limit_bytes: u64) -> Result<Self> {
        Self::with_memo_limit(inner, unit, limit_bytes, REMAP_MEMO_RUNS)
    }

    /// As [`RemapFirst::new`], remembering at most `max_runs` runs (0: fold every request
    /// every time, as a reference for the memo).
    pub fn with_memo_limit(inner: W, unit: u64, limit_bytes: u64, max_runs: usize) -> Result<Self> {
        let limit = limit_bytes / unit.max(1);
        if limit == 0 {
            return Err(Error::config("workload.trace.remap_limit_bytes", limit_bytes, "at least one mapping unit"));
        }
        Ok(RemapFirst {
            inner,
            unit: unit.max(1),
            limit,
            map: FxHashMap::default(),
            runs: Vec::new(),
            memo: Vec::new(),
            max_runs: max_runs.min(REMAP_MEMO_RUNS),
            cur: None,
            dropped: 0,
        })
    }

    /// How many requests of the source's fixed sequence are remembered.
    pub fn remembered(&self) -> usize {
        self.memo.iter().filter(|f| f.start != u32::MAX).count()
    }

    fn lookup(&mut self, u: u64) -> Option<u64> {
        if let Some(&c) = self.map.get(&u) {
            return Some(c);
        }
        let next = self.map.len() as u64;
        if next >= self.limit {
            return None;
        }
        self.map.insert(u, next);
        Some(next)
    }

    /// Fold `req` into consecutive runs appended to `runs`; returns the units dropped after
    /// the last run. The units are looked up in the same order, as many times, as when the
    /// runs were made one call at a time, so the map grows the same way.
    fn fold(&mut self, req: &HostRequest) -> u64 {
        let first_unit = req.offset / self.unit;
        let end = req.offset + req.size; // checked by the readers: no overflow
        let last_unit = (end - 1) / self.unit;
        let mut u = first_unit;
        loop {
            // Skip units that cannot be mapped.
            let mut dropped = 0;
            let start_c = loop {
                if u > last_unit {
                    return dropped;
                }
                if let Some(c) = self.lookup(u) {
                    break c;
                }
                dropped += 1;
                u += 1;
            };
            let run_start = u;
            let mut c = start_c;
            u += 1;
            while u <= last_unit {
                match self.lookup(u) {
                    Some(n) if n == c + 1 => {
                        c = n;
                        u += 1;
                    }
                    _ => break,
                }
            }
            let lo = if run_start == first_unit { req.offset % self.unit } else { 0 };
            let hi = if u - 1 == last_unit { end - last_unit * self.unit } else { self.unit };
            let offset = start_c * self.unit + lo;
            let size = (c - start_c) * self.unit + hi - lo;
            self.runs.push(Run { offset, size, dropped_before: dropped });
        }
    }

    /// Where the runs of `req` (the source's request at `index` of its fixed sequence, if it
    /// has one) are: remembered, or folded now.
    #[inline]
    fn runs_of(&mut self, req: &HostRequest, index: Option<usize>) -> (Folded, bool) {
        match index.and_then(|i| self.memo.get(i)) {
            Some(&f) if f.start != u32::MAX => (f, false),
            _ => self.fold_new(req, index),
        }
    }

    /// Fold `req` now, and remember its runs if it has an `index` and there is room; true if
    /// they are not remembered (`runs` is then cut back once they are served).
    #[inline(never)]
    fn fold_new(&mut self, req: &HostRequest, index: Option<usize>) -> (Folded, bool) {
        let start = self.runs.len();
        let dropped_after = self.fold(req);
        let end = self.runs.len();
        let f = Folded { start: start as u32, len: (end - start) as u32, dropped_after };
        match index.filter(|&i| end <= self.max_runs && i < self.max_runs) {
            Some(i) => {
                if self.memo.len() <= i {
                    self.memo.resize(i + 1, NOT_KNOWN);
                }
                self.memo[i] = f;
                (f, false)
            }
            None => (f, true),
        }
    }

    /// The request under way is served: count what was dropped after its last run.
    fn close(&mut self, s: Serving) {
        self.dropped += s.dropped_after;
        if s.transient {
            self.runs.truncate(s.next as usize - s.len as usize);
        }
    }
}

impl<W: Workload> Workload for RemapFirst<W> {
    /// Inlined into [`Workload::next_batch`]'s loop: returned through memory instead, the
    /// request is written in pieces and read back whole, which stalls every load of it.
    #[inline(always)]
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        if let Some(s) = self.cur.as_mut() {
            if s.next < s.end {
                let run = self.runs[s.next as usize];
                s.next += 1;
                // Dropped units count when the call that passes them returns.
                self.dropped += run.dropped_before;
                return Ok(Some(HostRequest { offset: run.offset, size: run.size, ..s.req }));
            }
            let s = self.cur.take().expect("a request under way");
            self.close(s);
        }
        loop {
            let Some(r) = self.inner.next_request()? else { return Ok(None) };
            let index = self.inner.replay_index();
            let (f, transient) = self.runs_of(&r, index);
            let s = Serving {
                req: r,
                next: f.start,
                end: f.start + f.len,
                len: f.len,
                dropped_after: f.dropped_after,
                transient,
            };
            if f.len == 0 {
                self.close(s);
                continue;
            }
            let run = self.runs[f.start as usize];
            self.dropped += run.dropped_before;
            if f.len > 1 || f.dropped_after > 0 || transient {
                // More to come from this request: kept for the next calls.
                self.cur = Some(Serving { next: f.start + 1, ..s });
            }
            return Ok(Some(HostRequest { offset: run.offset, size: run.size, ..r }));
        }
    }
    fn counters(&self) -> Option<TraceCounters> {
        let mut c = self.inner.counters().unwrap_or_default();
        c.dropped += self.dropped;
        Some(c)
    }
}
