//! A cached mapping table (`[mapping_cache]`), after DFTL (Gupta, Kim, Urgaonkar, "DFTL: a
//! flash translation layer employing demand-based selective caching of page-level address
//! mappings", ASPLOS 2009): the logical-to-physical map lives on flash in translation pages,
//! DRAM holds a cache of map entries (the CMT) and the directory of where each translation
//! page is (the GTD).
//!
//! What is modelled:
//! - The CMT: `size_bytes / entry_bytes` entries, LRU over single entries (DFTL uses a
//!   segmented LRU; plain LRU is what Che's approximation describes). Every logical unit a
//!   host read or write names is looked up; a miss loads the entry.
//! - Translation page `t` holds the entries of units `t * per_page ..`, one mapping unit of
//!   `unit_bytes / entry_bytes` entries. It is stored as a hidden logical unit
//!   (`logical_units + t`) in the same [`Mapping`]: the GTD is that unit's map entry, and GC
//!   finds a valid translation page in a victim through the reverse map like any unit.
//!   Translation pages are written into their own active block per pool ([`Stream::Map`]),
//!   so translation blocks are separate from data blocks.
//! - A miss reads the unit's translation page (a flash read, [`Cause::Mapping`]); the host
//!   request's data reads (or its data's programs) wait for it. One read per translation
//!   page per request. A translation page never written holds no mapping: the GTD knows it,
//!   and the miss costs no flash read.
//! - Evicting a dirty entry rewrites its translation page: read-modify-write (a read of the
//!   old translation page, then a program of the new one elsewhere; both
//!   [`Cause::Mapping`]), and every other dirty cached entry of that page is written with it
//!   and becomes clean (DFTL's batch update). Nothing waits for the write-back.
//! - GC moving a data unit changes its entry: if cached, the cached entry becomes dirty (no
//!   flash work); otherwise its translation page is updated by a read-modify-write
//!   ([`Cause::Mapping`]), once per translation page per GC episode (the victims one call of
//!   `collect` cleans to bring its plane up to its target; a block moved outside GC, by
//!   retirement, levelling or reclaim: per block), into the episode's plane (as GC keeps data
//!   in its plane). DFTL batches per victim block; per episode batches more. When the plane has
//!   no free block left outside the GC reserve, the remaining updates wait (in DRAM, not
//!   counted) for the next episode, merged with its own. Without that, uniform random data on
//!   a drive with little spare space spirals: a victim of `v` valid units touches about `v`
//!   translation pages when there are many, so cleaning a data block costs more pages than it
//!   frees, and greedy GC, blind to that cost, drains its plane and then the others.
//! - GC moving a valid translation page out of a victim (a translation block) reads and
//!   programs it as [`Cause::Mapping`], not [`Cause::Gc`]: every flash operation the cached
//!   map adds is then under one key, and `gc` counts stay comparable with a run without it.
//!   The erase of a translation block is GC's ([`Cause::Gc`]): GC chose the block.
//!
//! Simplified: a trim of a cached entry makes it dirty, of an uncached one costs nothing;
//! CMT entries cost `entry_bytes` of DRAM (DFTL's entries also hold the logical address);
//! the GTD's DRAM is not counted; the entries a request misses are loaded before any of its
//! data work starts. The simulator still keeps its dense full map (`Mapping`) as the truth
//! of where data is: the cache decides only the flash work and its timing.

use super::*;
use crate::lru::LruList;

/// What the cached mapping table did (`summary.mapping_cache`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MappingCacheCounters {
    /// Map entries looked up by host reads and writes, and of those found cached.
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    /// Dirty entries evicted (each rewrote its translation page, unless batched into another's).
    pub dirty_evictions: u64,
    /// Translation pages read on a miss (misses on pages never written read nothing).
    pub miss_reads: u64,
    /// Translation pages rewritten for evicted dirty entries (read-modify-write).
    pub writebacks: u64,
    /// Dirty entries written back together with an evicted one (DFTL's batch update).
    pub batched_entries: u64,
    /// Translation pages rewritten because GC moved data whose entries were not cached.
    pub gc_updates: u64,
    /// Translation pages moved by GC out of victim blocks.
    pub gc_translation_moves: u64,
    /// Flash reads and page programs of translation pages, all causes of the above.
    pub translation_reads: u64,
    pub translation_programs: u64,
}

/// `summary.mapping_cache`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MappingCacheSummary {
    /// Entries the cache holds, entries per translation page, translation pages in all.
    pub entries: u64,
    pub entries_per_translation_page: u64,
    pub translation_pages: u64,
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    /// hits / lookups (NaN, null in JSON, without lookups).
    pub hit_ratio: f64,
    pub dirty_evictions: u64,
    pub batched_entries: u64,
    pub miss_reads: u64,
    pub writebacks: u64,
    pub gc_updates: u64,
    pub gc_translation_moves: u64,
    pub translation_reads: u64,
    pub translation_programs: u64,
}

/// What a lookup found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Hit,
    /// A miss; `writeback` is the translation page to rewrite for the dirty entry evicted
    /// to make room (its batch already made clean).
    Miss {
        writeback: Option<u32>,
    },
}

/// The CMT: an LRU of map entries over dense arrays (no allocation per access), with a dirty
/// bit per logical unit and a count of dirty cached entries per translation page.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct MappingCache {
    capacity: u32,
    per_page: u32,
    /// Per logical unit: its cache slot, or `NONE`.
    slot_of: Vec<u32>,
    /// Per cache slot: the unit, and the slots' LRU order.
    unit: Vec<u32>,
    lru: LruList,
    /// One bit per logical unit: its cached entry is newer than its translation page.
    dirty: Vec<u64>,
    /// Per translation page: dirty cached entries.
    dirty_in_page: Vec<u32>,
    /// Translation pages GC must update for the block being cleaned (reused).
    pending: Vec<u32>,
    /// The plane the next translation page is written to.
    cursor: u32,
    pub counters: MappingCacheCounters,
}

impl MappingCache {
    pub fn new(logical_units: u32, capacity: u32, per_page: u32) -> Self {
        let capacity = capacity.clamp(1, logical_units.max(1));
        let pages = logical_units.div_ceil(per_page);
        MappingCache {
            capacity,
            per_page,
            slot_of: vec![NONE; logical_units as usize],
            unit: Vec::with_capacity(capacity as usize),
            lru: LruList::new(0, capacity),
            dirty: vec![0; (logical_units as usize).div_ceil(64)],
            dirty_in_page: vec![0; pages as usize],
            pending: Vec::new(),
            cursor: 0,
            counters: MappingCacheCounters::default(),
        }
    }

    /// Translation pages covering the logical space.
    pub fn pages(&self) -> u32 {
        self.dirty_in_page.len() as u32
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    pub fn per_page(&self) -> u32 {
        self.per_page
    }

    /// The translation page of `lpn`.
    #[inline]
    pub fn page_of(&self, lpn: u32) -> u32 {
        lpn / self.per_page
    }

    #[inline]
    pub fn is_cached(&self, lpn: u32) -> bool {
        self.slot_of[lpn as usize] != NONE
    }

    #[inline]
    fn is_dirty(&self, lpn: u32) -> bool {
        self.dirty[(lpn >> 6) as usize] & (1 << (lpn & 63)) != 0
    }

    #[inline]
    fn set_dirty(&mut self, lpn: u32) {
        if !self.is_dirty(lpn) {
            self.dirty[(lpn >> 6) as usize] |= 1 << (lpn & 63);
            let t = self.page_of(lpn);
            self.dirty_in_page[t as usize] += 1;
        }
    }

    /// Translation page `t` was written with every cached entry it covers: they are clean.
    /// Returns how many were dirty.
    pub fn clean_page(&mut self, t: u32) -> u32 {
        let n = std::mem::take(&mut self.dirty_in_page[t as usize]);
        if n > 0 {
            let lo = t as u64 * self.per_page as u64;
            let hi = (lo + self.per_page as u64).min(self.slot_of.len() as u64);
            let mut i = lo;
            while i < hi {
                let w = (i >> 6) as usize;
                let bit = i & 63;
                let span = (64 - bit).min(hi - i);
                let mask = if span == 64 { u64::MAX } else { ((1u64 << span) - 1) << bit };
                self.dirty[w] &= !mask;
                i += span;
            }
        }
        n
    }

    /// Look `lpn` up; `write`: its entry changes (becomes dirty). A miss loads the entry,
    /// evicting the least recently used one when full.
    pub fn access(&mut self, lpn: u32, write: bool) -> Access {
        self.counters.lookups += 1;
        let s = self.slot_of[lpn as usize];
        if s != NONE {
            self.counters.hits += 1;
            self.lru.touch(s);
            if write {
                self.set_dirty(lpn);
            }
            return Access::Hit;
        }
        self.counters.misses += 1;
        let mut writeback = None;
        let s = if (self.unit.len() as u32) < self.capacity {
            self.unit.push(lpn);
            self.lru.add_slot();
            self.unit.len() as u32 - 1
        } else {
            let s = self.lru.tail();
            let old = self.unit[s as usize];
            self.lru.unlink(s);
            self.slot_of[old as usize] = NONE;
            if self.is_dirty(old) {
                self.counters.dirty_evictions += 1;
                let t = self.page_of(old);
                let batch = self.clean_page(t) as u64;
                self.counters.batched_entries += batch - 1;
                writeback = Some(t);
            }
            self.unit[s as usize] = lpn;
            s
        };
        self.slot_of[lpn as usize] = s;
        self.lru.push_front(s);
        if write {
            self.set_dirty(lpn);
        }
        Access::Miss { writeback }
    }

    /// GC moved `lpn`: a cached entry becomes dirty; otherwise its translation page is due
    /// for an update (returns true: the caller queues it).
    #[inline]
    fn moved(&mut self, lpn: u32) -> bool {
        if self.is_cached(lpn) {
            self.set_dirty(lpn);
            false
        } else {
            true
        }
    }

    /// A trim changed `lpn`'s entry: dirty if cached (uncached: not charged).
    pub fn trimmed(&mut self, lpn: u32) {
        if self.is_cached(lpn) {
            self.set_dirty(lpn);
        }
    }

    /// Forget the counters (after preconditioning).
    pub fn reset_counters(&mut self) {
        self.counters = MappingCacheCounters::default();
    }

    /// Bytes of simulator state.
    pub fn bytes(&self) -> u64 {
        4 * self.slot_of.len() as u64 + 12 * self.capacity as u64 + self.slot_of.len() as u64 / 8
    }
}

impl Ftl {
    /// Put a cached mapping table in (before any write: the map must be empty), with
    /// `capacity` entries of which `per_page` fill a translation page.
    pub fn set_mapping_cache(&mut self, capacity: u32, per_page: u32) {
        let cmt = MappingCache::new(self.logical_units, capacity, per_page);
        let pages = cmt.pages();
        let units = self.logical_units + pages;
        let slots = self.geo.blocks() as u64 * self.slots_per_block as u64;
        self.map = Mapping::new(units, slots);
        if self.oracle.is_some() {
            self.oracle = Some(Oracle::new(units, slots));
        }
        self.required_units += pages as u64;
        self.cmt = Some(cmt);
    }

    /// Forget the cached mapping table's counters (after preconditioning).
    pub(crate) fn reset_mapping_cache_counters(&mut self) {
        if let Some(c) = self.cmt.as_mut() {
            c.reset_counters();
        }
    }

    /// The cached mapping table, if there is one.
    pub fn mapping_cache(&self) -> Option<&MappingCache> {
        self.cmt.as_ref()
    }

    /// Its summary section.
    pub fn mapping_cache_summary(&self) -> Option<MappingCacheSummary> {
        let c = self.cmt.as_ref()?;
        let k = c.counters;
        Some(MappingCacheSummary {
            entries: c.capacity as u64,
            entries_per_translation_page: c.per_page as u64,
            translation_pages: c.pages() as u64,
            lookups: k.lookups,
            hits: k.hits,
            misses: k.misses,
            hit_ratio: if k.lookups == 0 { f64::NAN } else { k.hits as f64 / k.lookups as f64 },
            dirty_evictions: k.dirty_evictions,
            batched_entries: k.batched_entries,
            miss_reads: k.miss_reads,
            writebacks: k.writebacks,
            gc_updates: k.gc_updates,
            gc_translation_moves: k.gc_translation_moves,
            translation_reads: k.translation_reads,
            translation_programs: k.translation_programs,
        })
    }

    /// Look up the entries of units `first..first + units` for a host request issued at
    /// `ready` (`write`: they change). Returns when the translation pages its misses read
    /// are in; without a cached mapping table, `ready`.
    #[inline]
    pub(super) fn map_lookup(&mut self, first: u32, units: u32, ready: Done, write: bool) -> Done {
        if self.cmt.is_none() {
            return ready;
        }
        self.map_lookup_cached(first, units, ready, write)
    }

    fn map_lookup_cached(&mut self, first: u32, units: u32, ready: Done, write: bool) -> Done {
        let mut done = ready;
        let mut last_read = NONE;
        for lpn in first..first + units {
            let Some(c) = self.cmt.as_mut() else { return ready };
            let Access::Miss { writeback } = c.access(lpn, write) else { continue };
            let t = c.page_of(lpn);
            if let Some(w) = writeback {
                if let Some(c) = self.cmt.as_mut() {
                    c.counters.writebacks += 1;
                }
                self.write_translation_page(w, ready, None);
            }
            if t != last_read {
                last_read = t;
                // The request's data work waits for this read: it is on the host's path.
                let (r, read) = self.read_translation_page(t, ready, true);
                if let Some(c) = self.cmt.as_mut().filter(|_| read) {
                    c.counters.miss_reads += 1;
                }
                done = done.max(r);
            }
        }
        done
    }

    /// Read translation page `t`: returns when it is in, and whether a flash read happened
    /// (a page never written holds no mapping and is not read). `for_host`: a host request
    /// waits for it (a miss), so a scheduler with classes queues it as host work.
    fn read_translation_page(&mut self, t: u32, ready: Done, for_host: bool) -> (Done, bool) {
        let tl = self.logical_units + t;
        let slot = self.map.slot(tl);
        if slot == UNMAPPED {
            return (ready, false);
        }
        if let Some(o) = &mut self.oracle {
            o.check("translation read", tl, slot, self.map.owner(slot));
        }
        let key = self.block_of(slot) * self.geo.pages_per_block + self.page_of(slot);
        let reads = self.counters.page_reads.get(Cause::Mapping);
        let done = self.read_page_for(key, 1, ready, Cause::Mapping, for_host);
        let read = self.counters.page_reads.get(Cause::Mapping) > reads;
        if let Some(c) = self.cmt.as_mut().filter(|_| read) {
            c.counters.translation_reads += 1;
        }
        (done, read)
    }

    /// Rewrite translation page `t` with the current entries (read-modify-write) into a
    /// translation block. `gc_plane`: GC is writing it, into that plane first (it may take the
    /// pools' reserve; outside GC a pool due for cleaning is cleaned first, as for a host
    /// block). Returns when the new copy is safe.
    fn write_translation_page(&mut self, t: u32, ready: Done, gc_plane: Option<u32>) -> Done {
        let planes = self.geo.planes();
        let in_gc = gc_plane.is_some();
        let mut start = gc_plane.unwrap_or_else(|| self.cmt.as_ref().map_or(0, |c| c.cursor));
        if !in_gc {
            // Room first, as for a host block: a pool due for cleaning is cleaned before its
            // block is taken, and the reserve is left to GC (whose own map updates, made
            // during this cleaning, may rewrite this very page: the copy read below is the
            // latest).
            let mut room = false;
            for i in 0..planes {
                let plane = (start + i) % planes;
                if self.pools[plane as usize].active[Stream::Map as usize].block != NONE {
                    (start, room) = (plane, true);
                    break;
                }
                if let Some(target) = self.pools[plane as usize].gc_target() {
                    let free = self.pools[plane as usize].free.len();
                    if self.steps_cleaning() && free > GC_RESERVE_BLOCKS {
                        // The soft threshold when the scheduler steps cleaning, as for a
                        // host block (`host_write.rs`): the pool owes it, the page takes
                        // its block now.
                        self.pools[plane as usize].own.idle = false;
                        self.owe_cleaning(plane, free);
                    } else {
                        self.collect(plane, ready, target);
                        self.pools[plane as usize].cleaned();
                        if self.steps_cleaning() {
                            // The block the page takes is owed back, as for a host block
                            // past the hard threshold (`gc_debt.rs`).
                            self.owe_back_taken_block(plane);
                        }
                    }
                }
                if self.pools[plane as usize].free.len() > GC_RESERVE_BLOCKS {
                    (start, room) = (plane, true);
                    break;
                }
            }
            if !room {
                self.die(format!("no pool has space for translation page {t} outside the GC reserve"));
                return ready;
            }
        }
        let (r, _) = self.read_translation_page(t, ready, false);
        let tl = self.logical_units + t;
        if let Some(o) = &mut self.oracle {
            let slot = self.map.slot(tl);
            let owner = if slot == UNMAPPED { UNMAPPED } else { self.map.owner(slot) };
            o.check("translation overwrite", tl, slot, owner);
        }
        self.invalidate(tl);
        for i in 0..planes {
            let plane = (start + i) % planes;
            if let Some((slot, programmed)) = self.place(plane, Stream::Map, tl, r, Cause::Mapping) {
                if let Some(o) = &mut self.oracle {
                    o.write(tl, slot);
                }
                if let Some(c) = self.cmt.as_mut() {
                    if programmed.is_some() {
                        if !in_gc {
                            c.cursor = (plane + 1) % planes;
                        }
                        c.counters.translation_programs += 1;
                    }
                }
                return programmed.unwrap_or(r);
            }
        }
        let free: Vec<usize> = self.pools.iter().map(|p| p.free.len()).collect();
        let valid: u64 = (0..self.geo.blocks()).map(|b| self.blocks.valid[b as usize] as u64).sum();
        self.die(format!(
            "no free block in any plane for translation page {t} (free {free:?}, valid {valid}, logical {}, in_gc {})",
            self.logical_units, self.in_gc
        ));
        r
    }

    /// GC moved data unit `lpn` (called by `move_unit`).
    #[inline]
    pub(super) fn map_moved(&mut self, lpn: u32) {
        if let Some(c) = self.cmt.as_mut() {
            if c.moved(lpn) {
                let t = c.page_of(lpn);
                if c.pending.last() != Some(&t) {
                    c.pending.push(t);
                    if c.pending.len() > 2 * c.dirty_in_page.len() {
                        c.pending.sort_unstable(); // deferred updates: keep one per page
                        c.pending.dedup();
                    }
                }
            }
        }
    }

    /// The translation pages GC's moves of uncached entries changed, rewritten once each
    /// into `plane` first (after a cleaned block's moves). Returns when the last is safe.
    pub(super) fn flush_map_updates(&mut self, ready: Done, plane: u32) -> Done {
        let Some(c) = self.cmt.as_mut() else { return ready };
        if c.pending.is_empty() {
            return ready;
        }
        let mut pending = std::mem::take(&mut c.pending);
        pending.sort_unstable();
        pending.dedup();
        let was = std::mem::replace(&mut self.in_gc, true);
        let mut done = ready;
        let mut written = 0;
        for &t in &pending {
            let p = &self.pools[plane as usize];
            if self.death.is_some()
                || (p.active[Stream::Map as usize].block == NONE && p.free.len() <= GC_RESERVE_BLOCKS)
            {
                break; // no room outside the reserve: the rest waits for a later cleaning
            }
            written += 1;
            if let Some(c) = self.cmt.as_mut() {
                c.counters.gc_updates += 1;
                c.clean_page(t); // the rewrite carries every cached entry of the page too
            }
            done = done.max(self.write_translation_page(t, ready, Some(plane)));
        }
        self.in_gc = was;
        pending.drain(..written);
        if let Some(c) = self.cmt.as_mut() {
            c.pending = pending; // what is left, in the allocation kept
        }
        done
    }

    /// One translation page that stepped GC's moves changed (`gc_steps.rs`), rewritten into
    /// `plane` first: what `flush_map_updates` does once per episode when cleaning runs at
    /// once, a page per step. False when none is pending or the plane has no room outside the
    /// reserve (the rest then waits, as in `flush_map_updates`).
    pub(super) fn step_map_update(&mut self, ready: Done, plane: u32) -> bool {
        let Some(c) = self.cmt.as_mut() else { return false };
        let p = &self.pools[plane as usize];
        if c.pending.is_empty()
            || self.death.is_some()
            || (p.active[Stream::Map as usize].block == NONE && p.free.len() <= GC_RESERVE_BLOCKS)
        {
            return false;
        }
        // One write per page however many of its entries moved (`map_moved` dedups lazily);
        // the list is nearly sorted between steps, which the sort finds in one pass.
        c.pending.sort_unstable();
        c.pending.dedup();
        let Some(t) = c.pending.pop() else { return false };
        c.counters.gc_updates += 1;
        c.clean_page(t);
        let was = std::mem::replace(&mut self.in_gc, true);
        self.write_translation_page(t, ready, Some(plane));
        self.in_gc = was;
        true
    }

    /// Is the unit `lpn` of the map a translation page?
    #[inline]
    pub(super) fn is_translation_unit(&self, lpn: u32) -> bool {
        lpn >= self.logical_units
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant (LRU by definition): with room for 2 entries, A B A C evicts B (the least
    /// recently used), so A hits and B misses; a dirty eviction reports its translation page
    /// and cleans the other dirty cached entries of that page with it (batch update).
    #[test]
    fn lru_order_and_batched_write_back() {
        let mut c = MappingCache::new(64, 2, 8);
        assert_eq!(c.access(1, true), Access::Miss { writeback: None });
        assert_eq!(c.access(2, true), Access::Miss { writeback: None });
        assert_eq!(c.access(1, false), Access::Hit);
        // 3 evicts 2 (dirty, page 0): page 0 is rewritten with 1's entry too.
        assert_eq!(c.access(3, false), Access::Miss { writeback: Some(0) });
        assert_eq!(c.counters.batched_entries, 1);
        assert!(!c.is_dirty(1));
        assert_eq!(c.access(1, false), Access::Hit);
        // 20 evicts 3 (clean): no write-back.
        assert_eq!(c.access(20, false), Access::Miss { writeback: None });
        // 40 evicts 1 (clean since the batch).
        assert_eq!(c.access(40, false), Access::Miss { writeback: None });
        assert_eq!((c.counters.hits, c.counters.misses, c.counters.dirty_evictions), (2, 5, 1));
    }
}
