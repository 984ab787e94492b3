//! A write-back DRAM data cache in front of a drive's FTL (`[cache]`): LRU over lines of
//! `units_per_line` mapping units.
//!
//! - A **write** puts its units in their lines (allocating a line on a miss) and marks them
//!   dirty; it is done when its data is in DRAM (a [`Transaction::dram`]) and, if its
//!   allocation evicted a dirty line, when that line's destage (an FTL write of its dirty
//!   units) completes: the space it reuses is free only then. No background flushing.
//! - A **read** of units all in the cache is a hit, served from DRAM. Otherwise the missing
//!   units are read from the FTL (runs of consecutive units) and the units present from DRAM,
//!   and the missing units are then kept (read-allocate); a dirty line this evicts is
//!   destaged, and the read does not wait for it.
//! - A **trim** drops its units from the cache (dirty or not) and trims them in the FTL.
//!
//! The cache decides; the scheduler times ([`Transaction::dram`]: a fixed delay under either
//! scheduler); no time arithmetic here. Under the queued scheduler a request waits for the
//! host-path work submitted while it is handled, so the destage a read's allocation causes
//! is submitted detached (`Scheduler::set_detached`), as a write-back device's programs are.
//! Dirty data left in DRAM at the end of a run stays there (counted, not flushed): the
//! integrity check knows where each unit's latest version is. With `ftl.integrity_oracle`
//! the cache keeps its own versions (host's latest, each cached unit's, the FTL's) and checks
//! every hit, every miss and, at the end, every unit, on top of the FTL's oracle.
//!
//! Dense arrays sized at construction; nothing is allocated per request.

use super::interface::{CacheSummary, Drive};
use super::open_channel::OpenChannelSummary;
use crate::config::Config;
use crate::error::Result;
use crate::flash::FlashArray;
use crate::ftl::trim::TrimCounters;
use crate::ftl::Ftl;
use crate::lru::LruList;
use crate::stats::FlashCounters;
use crate::timing::{Done, Scheduler, Transaction};

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct Counts {
    read_hits: u64,
    read_misses: u64,
    write_hits: u64,
    write_misses: u64,
    destages: u64,
    destaged_units: u64,
    host_units: u64,
}

/// Versions for the end-to-end check (with `ftl.integrity_oracle`).
#[derive(serde::Serialize, serde::Deserialize)]
struct Versions {
    /// The host's latest version of each unit (a trim makes a new, empty one).
    latest: Vec<u32>,
    /// The version the FTL holds of each unit.
    below: Vec<u32>,
    /// The version each cached unit holds, `slot * units_per_line + i`.
    cached: Vec<u32>,
    checks: u64,
    violation: Option<String>,
}

impl Versions {
    fn fail(&mut self, msg: String) {
        if self.violation.is_none() {
            self.violation = Some(msg);
        }
    }
}

/// A drive with a DRAM data cache in front of it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct CachedDrive {
    inner: Box<dyn Drive>,
    upl: u32,
    unit_bytes: u64,
    line_bytes: u64,
    /// Cache slot of each logical line, or NONE.
    slot_of: Vec<u32>,
    /// Logical line each slot holds, or NONE.
    tag: Vec<u32>,
    valid: Vec<u64>,
    dirty: Vec<u64>,
    /// The slots' LRU order.
    lru: LruList,
    /// Slots holding nothing.
    free: Vec<u32>,
    counts: Counts,
    versions: Option<Versions>,
}

#[inline]
fn mask(lo: u32, n: u32) -> u64 {
    (if n == 64 { u64::MAX } else { (1u64 << n) - 1 }) << lo
}

impl CachedDrive {
    /// Put the cache `cfg.cache` describes in front of `inner`.
    pub fn new(cfg: &Config, inner: Box<dyn Drive>) -> Result<CachedDrive> {
        let unit_bytes = inner.unit_bytes();
        let (lines, upl) = cfg.cache.lines(unit_bytes)?;
        let logical_lines = inner.logical_units().div_ceil(upl);
        let n = lines as usize;
        let versions = cfg.ftl.integrity_oracle.then(|| Versions {
            latest: vec![0; inner.logical_units() as usize],
            below: vec![0; inner.logical_units() as usize],
            cached: vec![0; n * upl as usize],
            checks: 0,
            violation: None,
        });
        Ok(CachedDrive {
            upl,
            unit_bytes,
            line_bytes: upl as u64 * unit_bytes,
            slot_of: vec![NONE; logical_lines as usize],
            tag: vec![NONE; n],
            valid: vec![0; n],
            dirty: vec![0; n],
            lru: LruList::new(n as u32, n as u32),
            free: (0..lines).rev().collect(),
            counts: Counts::default(),
            versions,
            inner,
        })
    }

    /// The cache's section of the summary.
    pub fn summary(&self) -> CacheSummary {
        let c = &self.counts;
        let reads = c.read_hits + c.read_misses;
        CacheSummary {
            size_bytes: self.tag.len() as u64 * self.line_bytes,
            line_bytes: self.line_bytes,
            lines: self.tag.len() as u32,
            read_hits: c.read_hits,
            read_misses: c.read_misses,
            read_hit_ratio: (reads > 0).then(|| c.read_hits as f64 / reads as f64),
            write_hits: c.write_hits,
            write_misses: c.write_misses,
            destages: c.destages,
            destaged_units: c.destaged_units,
            host_units_written: c.host_units,
            dirty_units_at_end: self.dirty.iter().map(|d| d.count_ones() as u64).sum(),
        }
    }

    /// Write the dirty units of slot `s` to the FTL, data ready at `ready`; returns when done.
    fn destage(&mut self, s: u32, ready: Done) -> Done {
        let mut d = self.dirty[s as usize];
        let mut done = ready;
        if d == 0 {
            return done;
        }
        let base = self.tag[s as usize] * self.upl;
        self.counts.destages += 1;
        self.counts.destaged_units += d.count_ones() as u64;
        while d != 0 {
            let lo = d.trailing_zeros();
            let len = (!(d >> lo)).trailing_zeros().min(64 - lo);
            done = done.max(self.inner.write(base + lo, len, ready));
            if let Some(v) = &mut self.versions {
                for i in lo..lo + len {
                    v.below[(base + i) as usize] = v.cached[(s * self.upl + i) as usize];
                }
            }
            d &= !mask(lo, len);
        }
        self.dirty[s as usize] = 0;
        done
    }

    /// A slot for logical line `line`, evicting the least recently used one if none is free:
    /// (slot, when the evicted line's destage completes).
    fn allocate(&mut self, line: u32, ready: Done) -> (u32, Done) {
        let (s, done) = match self.free.pop() {
            Some(s) => (s, ready),
            None => {
                let s = self.lru.tail();
                let done = self.destage(s, ready);
                self.lru.unlink(s);
                self.slot_of[self.tag[s as usize] as usize] = NONE;
                (s, done)
            }
        };
        self.tag[s as usize] = line;
        self.valid[s as usize] = 0;
        self.dirty[s as usize] = 0;
        self.slot_of[line as usize] = s;
        self.lru.push_front(s);
        (s, done)
    }
}

/// The lines of units `first..first + units` for `upl` units per line: (line, first unit in
/// it, units).
#[inline]
fn lines(upl: u32, first: u32, units: u32) -> impl Iterator<Item = (u32, u32, u32)> {
    let end = first + units;
    let mut lpn = first;
    std::iter::from_fn(move || {
        if lpn >= end {
            return None;
        }
        let (line, lo) = (lpn / upl, lpn % upl);
        let n = (upl - lo).min(end - lpn);
        lpn += n;
        Some((line, lo, n))
    })
}

#[typetag::serde]
impl Drive for CachedDrive {
    fn write(&mut self, first: u32, units: u32, ready: Done) -> Done {
        let mut done = ready;
        for (line, lo, n) in lines(self.upl, first, units) {
            let m = mask(lo, n);
            let mut s = self.slot_of[line as usize];
            if s == NONE {
                self.counts.write_misses += 1;
                let (slot, freed) = self.allocate(line, ready);
                done = done.max(freed);
                s = slot;
            } else {
                self.counts.write_hits += 1;
                self.lru.touch(s);
            }
            self.valid[s as usize] |= m;
            self.dirty[s as usize] |= m;
            if let Some(v) = &mut self.versions {
                for i in lo..lo + n {
                    let u = (line * self.upl + i) as usize;
                    v.latest[u] = v.latest[u].wrapping_add(1);
                    v.cached[(s * self.upl + i) as usize] = v.latest[u];
                }
            }
        }
        self.counts.host_units += units as u64;
        let bytes = units as u64 * self.unit_bytes;
        done.max(self.inner.scheduler_mut().submit(&Transaction::dram(bytes), ready))
    }

    fn read(&mut self, first: u32, units: u32, ready: Done, stream: u16, budget_us: u32) -> Done {
        let mut done = ready;
        let mut from_dram = 0u64;
        for (line, lo, n) in lines(self.upl, first, units) {
            let m = mask(lo, n);
            let s = self.slot_of[line as usize];
            let have = if s == NONE { 0 } else { self.valid[s as usize] & m };
            if let Some(v) = &mut self.versions {
                for i in lo..lo + n {
                    let u = (line * self.upl + i) as usize;
                    v.checks += 1;
                    let (held, at) = if have & (1 << i) != 0 {
                        (v.cached[(s * self.upl + i) as usize], "the cache")
                    } else {
                        (v.below[u], "the drive")
                    };
                    if held != v.latest[u] {
                        let msg = format!(
                            "cached read of unit {u}: {at} holds version {held}, the host last wrote {}",
                            v.latest[u]
                        );
                        v.fail(msg);
                    }
                }
            }
            from_dram += have.count_ones() as u64;
            if have == m {
                self.counts.read_hits += 1;
                self.lru.touch(s);
                continue;
            }
            self.counts.read_misses += 1;
            let mut miss = m & !have;
            while miss != 0 {
                let i = miss.trailing_zeros();
                let len = (!(miss >> i)).trailing_zeros().min(64 - i);
                done = done.max(self.inner.read(line * self.upl + i, len, ready, stream, budget_us));
                miss &= !mask(i, len);
            }
            // Keep what was read; a dirty line evicted for it is destaged in the background:
            // its programs are not this read's (a scheduler that completes work later would
            // otherwise hold the read until they end).
            let s = if s == NONE {
                self.inner.scheduler_mut().set_detached(true);
                let (s, _) = self.allocate(line, ready);
                self.inner.scheduler_mut().set_detached(false);
                s
            } else {
                s
            };
            self.lru.touch(s);
            let fill = m & !self.valid[s as usize];
            self.valid[s as usize] |= m;
            if let Some(v) = &mut self.versions {
                for i in lo..lo + n {
                    if fill & (1 << i) != 0 {
                        v.cached[(s * self.upl + i) as usize] = v.below[(line * self.upl + i) as usize];
                    }
                }
            }
        }
        if from_dram > 0 {
            let hit = self.inner.scheduler_mut().submit(&Transaction::dram(from_dram * self.unit_bytes), ready);
            done = done.max(hit);
        }
        done
    }

    fn trim(&mut self, first: u32, units: u32) {
        for (line, lo, n) in lines(self.upl, first, units) {
            let m = mask(lo, n);
            let s = self.slot_of[line as usize];
            if s != NONE {
                self.valid[s as usize] &= !m;
                self.dirty[s as usize] &= !m;
                if self.valid[s as usize] == 0 {
                    self.lru.unlink(s);
                    self.slot_of[line as usize] = NONE;
                    self.tag[s as usize] = NONE;
                    self.free.push(s);
                }
            }
            if let Some(v) = &mut self.versions {
                for i in lo..lo + n {
                    let u = (line * self.upl + i) as usize;
                    v.latest[u] = v.latest[u].wrapping_add(1);
                    v.below[u] = v.latest[u]; // the drive's "unmapped" is the latest
                }
            }
        }
        self.inner.trim(first, units);
    }

    fn trim_counters(&self) -> TrimCounters {
        self.inner.trim_counters()
    }
    fn idle(&mut self, from: u64, until: u64) {
        self.inner.idle(from, until)
    }
    fn step_cleaning(&mut self, die: u32, now: Done) -> bool {
        self.inner.step_cleaning(die, now)
    }
    fn host_transfer(&mut self, ready: Done, bytes: u64) -> Done {
        self.inner.host_transfer(ready, bytes)
    }
    fn scheduler(&self) -> &dyn Scheduler {
        self.inner.scheduler()
    }
    fn scheduler_mut(&mut self) -> &mut dyn Scheduler {
        self.inner.scheduler_mut()
    }
    /// Preconditioning writes the drive below in fast-forward; the cache starts empty.
    fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        self.inner.precondition(fill, drive_writes, seed, stop)
    }
    fn reset_counters(&mut self) {
        self.inner.reset_counters();
        self.counts = Counts::default();
    }
    fn death(&self) -> Option<&str> {
        self.inner.death()
    }
    fn life_used(&self) -> f64 {
        self.inner.life_used()
    }
    fn integrity_violation(&self) -> Option<&str> {
        self.versions.as_ref().and_then(|v| v.violation.as_deref()).or_else(|| self.inner.integrity_violation())
    }
    fn integrity_checks(&self) -> u64 {
        self.versions.as_ref().map_or(0, |v| v.checks) + self.inner.integrity_checks()
    }
    /// Every unit's latest version is in the cache (dirty) or in the drive, then the drive's
    /// own final check.
    fn verify_all(&mut self) -> Option<String> {
        if let Some(v) = &mut self.versions {
            for u in 0..v.latest.len() {
                let line = u as u32 / self.upl;
                let i = u as u32 % self.upl;
                let s = self.slot_of[line as usize];
                let dirty = s != NONE && self.dirty[s as usize] & (1 << i) != 0;
                let held = if dirty { v.cached[(s * self.upl + i) as usize] } else { v.below[u] };
                v.checks += 1;
                if held != v.latest[u] {
                    let at = if dirty { "the cache" } else { "the drive" };
                    let msg = format!(
                        "final check of unit {u}: {at} holds version {held}, the host last wrote {}",
                        v.latest[u]
                    );
                    v.fail(msg);
                }
            }
        }
        let below = self.inner.verify_all();
        self.integrity_violation().map(str::to_string).or(below)
    }
    fn unit_bytes(&self) -> u64 {
        self.unit_bytes
    }
    fn logical_units(&self) -> u32 {
        self.inner.logical_units()
    }
    fn counters(&self) -> &FlashCounters {
        self.inner.counters()
    }
    fn flash(&self) -> &FlashArray {
        self.inner.flash()
    }
    fn flash_mut(&mut self) -> &mut FlashArray {
        self.inner.flash_mut()
    }
    fn free_blocks(&self) -> u64 {
        self.inner.free_blocks()
    }
    fn dead_blocks(&self) -> u64 {
        self.inner.dead_blocks()
    }
    fn blocks_by_mode(&self) -> [u64; 4] {
        self.inner.blocks_by_mode()
    }
    fn gc_debt_units(&self) -> u64 {
        self.inner.gc_debt_units()
    }
    fn open_channel_summary(&self, simulated_ns: u64) -> Option<OpenChannelSummary> {
        self.inner.open_channel_summary(simulated_ns)
    }
    fn prefetch_map(&self, first: u32, units: u32) {
        self.inner.prefetch_map(first, units)
    }
    fn prefetch_slots(&self, first: u32, units: u32) {
        self.inner.prefetch_slots(first, units)
    }
    fn cache_summary(&self) -> Option<CacheSummary> {
        Some(self.summary())
    }
    fn as_ftl(&self) -> Option<&Ftl> {
        self.inner.as_ftl()
    }
    fn as_ftl_mut(&mut self) -> Option<&mut Ftl> {
        self.inner.as_ftl_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiny drive behind a cache of `lines` lines of one mapping unit.
    fn cached(lines: u64) -> CachedDrive {
        let b = crate::ConfigBuilder::new().preset("tiny").unwrap().set("ftl.integrity_oracle=true").unwrap();
        let unit = crate::ftl::Layout::of(&b.clone().build().unwrap()).unwrap().unit_bytes;
        let cfg = b.set(&format!("cache.size_bytes={}", lines * unit)).unwrap().build().unwrap();
        let inner: Box<dyn Drive> = Box::new(crate::sim::build_ftl(&cfg).unwrap());
        CachedDrive::new(&cfg, inner).unwrap()
    }

    /// Reference: the definition of LRU (evict the least recently used line) and of
    /// write-back (a dirty line reaches the FTL only when evicted), checked on a 2-line cache
    /// against the FTL's own count of units it received.
    #[test]
    fn lru_write_back_by_hand() {
        let mut d = cached(2);
        assert_eq!(d.tag.len(), 2);
        d.write(1, 1, Done::START);
        d.write(2, 1, Done::START);
        d.read(1, 1, Done::START, 0, 0); // hit: 1 becomes most recent
        assert_eq!(d.inner.counters().host_unit_writes, 0, "nothing destaged yet");
        d.write(3, 1, Done::START); // evicts 2 (least recent), dirty: destaged
        assert_eq!(d.inner.counters().host_unit_writes, 1);
        assert_eq!(d.slot_of[2], NONE);
        d.read(2, 1, Done::START, 0, 0); // miss from the FTL; evicts 1, dirty: destaged
        assert_eq!(d.inner.counters().host_unit_writes, 2);
        let s = d.summary();
        assert_eq!((s.read_hits, s.read_misses, s.write_hits, s.write_misses), (1, 1, 0, 3));
        assert_eq!((s.destages, s.destaged_units, s.host_units_written, s.dirty_units_at_end), (2, 2, 3, 1));
        d.trim(3, 1); // the dirty unit 3 is dropped, never written
        assert_eq!(d.summary().dirty_units_at_end, 0);
        assert_eq!(d.verify_all(), None);
        assert!(d.integrity_checks() > 0);
    }

    /// Invariant: the end-to-end check fires when the cache loses a dirty unit.
    #[test]
    fn losing_a_dirty_unit_is_caught() {
        let mut d = cached(4);
        d.write(5, 1, Done::START);
        let s = d.slot_of[5];
        d.dirty[s as usize] = 0; // forget it is dirty
        d.write(6, 1, Done::START);
        d.write(7, 1, Done::START);
        d.write(8, 1, Done::START);
        d.write(9, 1, Done::START); // evicts 5 without a destage
        d.read(5, 1, Done::START, 0, 0);
        assert!(d.integrity_violation().is_some_and(|v| v.contains("unit 5")), "{:?}", d.integrity_violation());
    }
}
