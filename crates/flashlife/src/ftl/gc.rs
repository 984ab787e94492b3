//! Garbage collection: choosing a victim (the victim policy, filtered by wear leveling),
//! moving its valid units into the GC stream, erasing it; deferred work after a host write
//! (failed blocks, cold blocks; stepped under the queued scheduler, `chores.rs`); background
//! cleaning in idle windows.

use super::*;

/// When a pool garbage-collects: GC starts when free blocks fall below the low watermark
/// (or down to the reserve, for tiny pools) and runs until the high watermark, interleaved
/// with host writes: each host block opened meanwhile is paid for by cleaning until one
/// more block is free. Shared by the device FTL and the open-channel host FTL.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct GcWatermarks {
    pub low: usize,
    pub high: usize,
    collecting: bool,
}

impl GcWatermarks {
    pub fn new(low: usize, high: usize) -> Self {
        GcWatermarks { low, high, collecting: false }
    }

    /// Free blocks to clean up to before a host block is taken from a pool with `free` free
    /// blocks, `reserve` of which host writes never take; `None` when no GC is due.
    #[inline]
    pub fn target(&mut self, free: usize, reserve: usize) -> Option<usize> {
        if free < self.low || free <= reserve + 1 {
            self.collecting = true;
        }
        self.collecting.then(|| (free + 1).min(self.high).max(reserve + 1))
    }

    /// After cleaning: GC stops once the high watermark is reached.
    #[inline]
    pub fn cleaned(&mut self, free: usize) {
        if free >= self.high {
            self.collecting = false;
        }
    }
}

/// A drive's pools, as the GC watermarks see them (names for configuration errors).
#[derive(Debug, Clone, Copy)]
pub struct PoolShape {
    /// "plane", "parallel unit".
    pub name: &'static str,
    /// "blocks", "chunks".
    pub blocks: &'static str,
    pub pools: u32,
    pub blocks_per_pool: u32,
}

impl GcWatermarks {
    /// The watermarks of each pool: `gc.low_watermark` and `gc.high_watermark` of its
    /// blocks, rounded up, the low one above the reserve and the high one above the low one;
    /// refused when they leave no blocks for data.
    pub fn of_config(cfg: &Config, shape: PoolShape) -> Result<Self> {
        let n = shape.blocks_per_pool as usize;
        let mark = |frac: f64, min: usize| ((frac * n as f64).ceil() as usize).max(min);
        let low = mark(cfg.gc.low_watermark, GC_RESERVE_BLOCKS + 1);
        let high = mark(cfg.gc.high_watermark, low + 1);
        if high + 2 > n {
            let PoolShape { name, blocks, .. } = shape;
            return Err(Error::config(
                "gc.high_watermark",
                cfg.gc.high_watermark,
                format!("a watermark leaving {blocks} for data (a {name} has {n} {blocks})"),
            ));
        }
        Ok(GcWatermarks::new(low, high))
    }

    /// Units the drive must hold: the logical space plus the high watermark's free blocks of
    /// `block_units` units in every pool. Refused when the drive has fewer (`have`).
    pub fn required_units(
        &self,
        cfg: &Config,
        shape: PoolShape,
        have: u64,
        logical_units: u32,
        block_units: u32,
    ) -> Result<u64> {
        let required = logical_units as u64 + self.high as u64 * shape.pools as u64 * block_units as u64;
        if have < required {
            let PoolShape { name, blocks, blocks_per_pool, .. } = shape;
            return Err(Error::config(
                "capacity",
                format!("{:.4}", cfg.capacity.overprovisioning()),
                format!(
                    "more spare space than the GC high watermark holds ({} {blocks} of {blocks_per_pool} per {name})",
                    self.high
                ),
            ));
        }
        Ok(required)
    }
}

impl Ftl {
    /// Move every valid unit of `block` into its pool's GC stream (a levelling move's into its
    /// cold stream, with `wear_leveling.cold_stream`; no erase). Units of
    /// `buffered` (a page whose program failed) come from the controller, not the flash.
    /// Returns when the last moved page is programmed.
    pub(super) fn relocate_block(&mut self, block: u32, buffered: Option<u32>, ready: Done, cause: Cause) -> Done {
        let job = self.start_job(block, buffered, ready, cause, false);
        self.run_job(job)
    }

    /// Move one unit from slot `from` to `plane`'s GC stream (a levelling move's to its cold
    /// stream, with `wear_leveling.cold_stream`; a unit of the read model's second placement
    /// class to the `Placed` stream).
    pub(super) fn move_unit(&mut self, lpn: u32, from: u32, plane: u32, ready: Done, cause: Cause) -> Done {
        let b = self.block_of(from);
        // A second-written unit leaves both halves; the oracle knows it by its first half.
        let oracle_from = if self.sw.is_some() { self.unlink_second_half(from) } else { from };
        self.map.claim(from, UNMAPPED);
        self.note_page_invalid(b);
        self.blocks.valid[b as usize] -= 1;
        self.map.point(lpn, UNMAPPED);
        self.relocations += 1;
        if self.relocation_fault == Some(self.relocations) {
            return ready; // the deliberate bug: the unit is dropped
        }
        // Data stays in its plane when it can (copy-back friendly); a plane that has lost
        // too many blocks to hold its share sends it to another plane instead.
        // A translation page of a cached map goes to a translation block; a data unit's new
        // place changes its map entry.
        let stream = if self.cmt.is_some() && self.is_translation_unit(lpn) {
            if let Some(c) = self.cmt.as_mut() {
                c.counters.gc_translation_moves += 1;
            }
            Stream::Map
        } else {
            self.map_moved(lpn);
            let stream = if cause == Cause::WearLeveling { self.levelling_stream } else { self.gc_stream };
            // Data of the read model's second placement class gets GC's blocks of its own.
            match &self.placement {
                Some(classes) if stream == Stream::Gc && classes.get(lpn as usize) == Some(&1) => Stream::Placed,
                _ => stream,
            }
        };
        let planes = self.geo.planes();
        // The planes from `plane` on, wrapping: counted up rather than taken modulo `planes`,
        // which costs a hardware divide on every unit moved (`planes` is not a constant).
        let first = if plane < planes { plane } else { plane % planes };
        for target in (first..planes).chain(0..first) {
            if let Some((to, programmed)) = self.place(target, stream, lpn, ready, cause) {
                if let (Some(c), Some(_)) = (self.cmt.as_mut(), programmed.filter(|_| stream == Stream::Map)) {
                    c.counters.translation_programs += 1;
                }
                if let Some(o) = &mut self.oracle {
                    o.relocate(lpn, oracle_from, lpn, to);
                }
                return programmed.unwrap_or(ready);
            }
        }
        self.die(format!("no free block in any plane to move data from plane {plane} into"));
        ready
    }

    /// Garbage-collect `plane` until it has `target` free blocks or nothing can be gained.
    pub(super) fn collect(&mut self, plane: u32, ready: Done, target: usize) -> Done {
        if self.in_gc {
            return ready;
        }
        if let Some(mut t) = self.technique.take() {
            self.in_gc = true;
            // A victim the scheduler was stepping is finished first, as below.
            let done = self.finish_pool_job(plane, ready);
            let done = done.max(t.collect(self, plane, ready, target));
            self.technique = Some(t);
            self.in_gc = false;
            return done;
        }
        self.in_gc = true;
        // A victim the scheduler was stepping (`gc_steps.rs`) is finished first: it is
        // part-moved, so the cheapest block to free.
        let done = self.finish_pool_job(plane, ready);
        let done = done.max(self.collect_victims(plane, ready, target));
        let done = done.max(self.flush_map_updates(ready, plane)); // what the loop left, if room
        self.in_gc = false;
        done
    }

    /// The GC victim of `plane`: the victim policy's choice among the blocks wear leveling
    /// accepts, unless that choice frees nothing while another block would.
    pub(crate) fn select_victim(&mut self, plane: u32) -> Option<u32> {
        let wear = self.pool_wear(plane);
        let mut view = self.blocks.view();
        view.spare_units = self.spare_units();
        let (wl, flash) = (&self.wl, &self.flash);
        let mut refused = false;
        let mut accept = |b: u32| {
            let ok = wl.accept_victim(flash.erase_count(b), wear);
            refused |= !ok;
            ok
        };
        let v = self.victim.select(plane, &view, &mut accept)?;
        if self.blocks.valid[v as usize] >= self.blocks.capacity[v as usize]
            && (refused || self.victim.chooses_least_valid())
        {
            // The choice frees nothing, yet another block may: wear leveling may have turned
            // down every block with invalid data (the worn, hot ones), or blocks differ in
            // capacity (bit modes, bad pages) so the fewest valid units is not the most
            // invalid space. Space comes first: take the block that frees most. A rare event,
            // so a scan of the pool is fine.
            return Some(self.most_invalid_full_block(plane).unwrap_or(v));
        }
        Some(v)
    }

    /// The full block of `plane` with the most invalid units, if any has some.
    pub(super) fn most_invalid_full_block(&self, plane: u32) -> Option<u32> {
        let lo = plane * self.geo.blocks_per_plane;
        (lo..lo + self.geo.blocks_per_plane)
            .filter(|&b| self.blocks.state[b as usize] == BlockState::Full)
            .map(|b| (self.blocks.invalid(b), b))
            .filter(|&(free, _)| free > 0)
            .max()
            .map(|(_, b)| b)
    }

    /// Finish deferred work: blocks that failed a program are emptied and retired, cold
    /// blocks are moved. Returns when the work finishes.
    pub(super) fn settle(&mut self, ready: Done) -> Done {
        let mut done = self.rehome_skipped(ready);
        if self.steps_cleaning() {
            // Failed blocks: decided now, moved as the scheduler asks (`chores.rs`).
            self.queue_settled(ready);
        } else if self.chores_pending > 0 {
            done = done.max(self.run_chores(ready)); // left when the scheduler stopped stepping
        }
        while let Some((block, buffered)) = self.retire_queue.pop() {
            // Make room first: the failed block's data needs somewhere to go.
            let plane = self.geo.plane_of_block(block);
            done = done.max(self.collect(plane, ready, GC_RESERVE_BLOCKS));
            done = done.max(self.relocate_block(block, buffered, ready, Cause::BadBlock));
            self.retire(block);
            if self.death.is_some() {
                return done;
            }
        }
        while let Some(block) = self.cold_queue.pop() {
            let plane = self.geo.plane_of_block(block);
            if self.blocks.state[block as usize] == BlockState::Full && self.death.is_none() {
                let Some(ready) = self.prepare_levelling_move(plane, ready) else { continue };
                done = done.max(self.clean(block, plane, ready, Cause::WearLeveling));
            }
        }
        done.max(self.rehome_skipped(ready))
    }

    /// Background work in an idle window: clean pools below their high watermark.
    ///
    /// A plane is cleaned one victim at a time, and only while its die would be free before
    /// the window closes, so background work does not run into the next host command's time
    /// (a victim started near the end may still overrun: GC is not preempted).
    pub fn idle(&mut self, from: u64, until: u64) {
        if !self.postponed.is_empty() {
            self.reclaim_idle(from, until); // read reclaim postponed to idle time (maintenance.rs)
        }
        if !self.background_gc {
            return;
        }
        if self.steps_cleaning() {
            return self.owe_idle_cleaning(from, until); // stepped (`gc_steps.rs`)
        }
        let moved = self.counters.gc_valid_moved;
        for plane in 0..self.geo.planes() {
            let die = self.geo.die_of_plane(plane);
            loop {
                let p = &self.pools[plane as usize];
                let free = p.free.len();
                if free >= p.marks.high || self.death.is_some() {
                    break;
                }
                let Some(start) = self.sched.idle_start(die, from, until) else { break };
                self.collect(plane, start, free + 1);
                if self.pools[plane as usize].free.len() <= free {
                    break; // nothing more to gain here
                }
            }
        }
        self.counters.gc_valid_moved_idle += self.counters.gc_valid_moved - moved;
        // The idle window opens at a plain time, which the settled work waits for.
        self.settle(Done::at(from));
    }
}

/// The block FTL's side of cleaning (`gc_job.rs`): pages at their block's bit mode, data from
/// the flash (or the controller, or a second write's pair), translation pages to their own
/// stream, victims filtered by wear leveling, emptied blocks erased by the block manager.
impl Cleaner for Ftl {
    type State = BlockState;
    const CLEANING: BlockState = BlockState::Cleaning;

    #[inline]
    fn parts(&self) -> (&Mapping, &BlockTable<BlockState>, &dyn VictimPolicy) {
        (&self.map, &self.blocks, self.victim.as_ref())
    }
    #[inline]
    fn parts_mut(&mut self) -> (&mut BlockTable<BlockState>, &mut dyn VictimPolicy) {
        (&mut self.blocks, self.victim.as_mut())
    }
    fn counters_mut(&mut self) -> &mut FlashCounters {
        &mut self.counters
    }
    #[inline]
    fn dead(&self) -> bool {
        self.death.is_some()
    }
    fn pool_of(&self, block: u32) -> u32 {
        self.geo.plane_of_block(block)
    }
    fn blocks_per_pool(&self) -> u32 {
        self.geo.blocks_per_plane
    }
    fn free_in(&self, pool: u32) -> usize {
        self.pools[pool as usize].free.len()
    }
    #[inline]
    fn shape(&self, block: u32) -> BlockShape {
        BlockShape {
            upp: self.upp_by_mode[self.flash.mode(block).index()],
            slots_per_block: self.slots_per_block,
            stride: self.max_upp,
            pages: self.geo.pages_per_block,
        }
    }
    fn select_victim(&mut self, pool: u32) -> Option<u32> {
        Ftl::select_victim(self, pool)
    }
    fn after_victim(&mut self, pool: u32, ready: Done, target: usize) -> Done {
        if self.cmt.is_some() && self.pools[pool as usize].free.len() >= target {
            // A cached map: the translation pages the episode's moves changed, rewritten
            // once each into this plane; the loop then cleans on if they took its space.
            return self.flush_map_updates(ready, pool);
        }
        ready
    }
    #[inline]
    fn read_for_move(&mut self, job: &CleanJob, page: u32, first: u32, n: u32) -> (Done, Cause) {
        let block = job.block;
        // A translation block's pages are the cached map's work (`mapping_cache.rs`).
        let cause = if self.cmt.is_some()
            && (0..job.upp)
                .any(|s| self.map.owner(first + s) != UNMAPPED && self.is_translation_unit(self.map.owner(first + s)))
        {
            Cause::Mapping
        } else {
            job.cause
        };
        let data_ready = if job.buffered == Some(page) {
            job.ready
        } else if self.sw.as_ref().is_some_and(|sw| sw.is_second(first)) {
            self.read_second(first, job.ready, job.cause)
        } else {
            let reads = self.counters.page_reads.get(Cause::Mapping);
            let r = self.read_page(block * self.geo.pages_per_block + page, n, job.ready, cause);
            if let Some(c) = self.cmt.as_mut().filter(|_| cause == Cause::Mapping) {
                c.counters.translation_reads += self.counters.page_reads.get(Cause::Mapping) - reads;
            }
            r
        };
        (data_ready, cause)
    }
    #[inline]
    fn relocate_unit(&mut self, lpn: u32, from: u32, pool: u32, ready: Done, cause: Cause) -> Done {
        self.move_unit(lpn, from, pool, ready, cause)
    }
    #[inline]
    fn note_moved(&mut self, lpn: u32, cause: Cause) {
        if cause == Cause::Gc {
            if let Some(r) = self.gc_regions.as_mut() {
                r.count(lpn);
            }
        }
    }
    fn moved_all(&mut self, job: &CleanJob) -> Done {
        if self.in_gc {
            return job.ready;
        }
        // A job outside GC (retirement, levelling, reclaim) updates the translation pages
        // its moves changed now; GC does it once per episode (`collect`).
        self.flush_map_updates(job.ready, job.plane)
    }
    fn erase_cleaned(&mut self, block: u32, ready: Done, cause: Cause) -> Done {
        self.erase_block(block, ready, cause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: with placement classes, GC moves write class-1 units into the `Placed`
    /// stream and class-0 units into the GC stream, so each destination block holds one class;
    /// nothing is lost. Without classes (`placement = None`) the `Placed` stream is never opened.
    #[test]
    fn relocations_write_each_placement_class_into_blocks_of_its_own() {
        for classes in [false, true] {
            let mut ftl = super::super::tests::full_tiny_drive_with_oracle();
            if classes {
                ftl.placement = Some((0..ftl.logical_units()).map(|l| (l % 3 == 0) as u8).collect());
            }
            let plane = 0;
            for _ in 0..4 {
                let v = ftl.select_victim(plane).unwrap();
                ftl.clean(v, plane, Done::START, Cause::Gc);
            }
            let class_of = |ftl: &Ftl, stream: Stream| -> Vec<u8> {
                let b = ftl.pools[plane as usize].active[stream as usize].block;
                if b == NONE {
                    return Vec::new();
                }
                let first = b * ftl.slots_per_block;
                (first..first + ftl.slots_per_block)
                    .map(|s| ftl.map.owner(s))
                    .filter(|&l| l != UNMAPPED)
                    .map(|l| ftl.placement.as_ref().map_or(0, |p| p[l as usize]))
                    .collect()
            };
            let (gc, placed) = (class_of(&ftl, Stream::Gc), class_of(&ftl, Stream::Placed));
            assert!(!gc.is_empty(), "GC moved data into its stream");
            assert!(gc.iter().all(|&c| c == 0), "class-1 data in GC's block: {gc:?}");
            if classes {
                assert!(!placed.is_empty(), "class-1 data moved into its own stream");
                assert!(placed.iter().all(|&c| c == 1), "class-0 data in the placed block: {placed:?}");
            } else {
                assert!(placed.is_empty(), "no placement classes: no placed block");
            }
            assert_eq!(ftl.verify_all(), None);
            assert_eq!(ftl.integrity_violation(), None);
        }
    }

    /// `gc.stream = "shared"` (DiskSim's layout): cleaning moves units into the host writes'
    /// open block and leaves GC's own block as it was; `"separate"` moves into GC's blocks and
    /// leaves the host block alone. Nothing is lost.
    #[test]
    fn a_shared_stream_moves_into_the_host_writes_block() {
        for shared in [false, true] {
            let mut ftl = super::super::tests::full_tiny_drive_with_oracle();
            if shared {
                ftl.gc_stream = Stream::Host;
            }
            let plane = 0;
            let at = |ftl: &Ftl, stream: Stream| {
                let a = ftl.pools[plane].active[stream as usize];
                (a.block, a.page, a.slot)
            };
            let (host_before, gc_before) = (at(&ftl, Stream::Host), at(&ftl, Stream::Gc));
            // Checked after each victim: a block that fills closes, and the tiny drive's GC
            // blocks come round again after a few victims.
            for _ in 0..4 {
                let (moved_before, gc_prev) = (ftl.relocations, at(&ftl, Stream::Gc));
                let v = ftl.select_victim(plane as u32).unwrap();
                ftl.clean(v, plane as u32, Done::START, Cause::Gc);
                assert!(ftl.relocations > moved_before, "the victim held valid data to move");
                if shared {
                    assert_eq!(at(&ftl, Stream::Gc), gc_before, "a shared stream wrote into GC's own block");
                } else {
                    assert_eq!(at(&ftl, Stream::Host), host_before, "cleaning wrote into the host block");
                    assert_ne!(at(&ftl, Stream::Gc), gc_prev, "GC's block took no move");
                }
            }
            assert_eq!(ftl.verify_all(), None);
            assert_eq!(ftl.integrity_violation(), None);
        }
    }
}
