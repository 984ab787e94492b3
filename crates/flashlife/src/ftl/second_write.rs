//! Second writes (Reusable SSD, paper `001`): the FTL's side of them, the mechanism a
//! second-write technique (`techniques::reusable`) drives through two hooks.
//!
//! # Hooks
//! - [`SecondWriteTechnique::host_unit`] is consulted for every host unit `Ftl::write` is
//!   about to place: the technique stores it as a second write (`Verdict::Taken`) or declines
//!   (`Verdict::Declined`, with the time its data is ready for a first write, e.g. after a
//!   failed encoding). When it needs recycled blocks it has not got, it asks for space
//!   (`Verdict::NeedSpace`) as the host write itself does: the write stops, its driver runs
//!   the GC, and the unit is offered again. No GC runs inside the technique's host path.
//! - [`SecondWriteTechnique::collect`] replaces the baseline GC loop: the technique chooses,
//!   for each victim, between erasing it (the baseline `clean`) and recycling it.
//!   [`SecondWriteTechnique::next_erase`] is the same choice one victim at a time, for GC
//!   stepped under the queued scheduler (`gc_steps.rs`).
//!
//! # Slot encoding
//! A second-written logical unit lives on two physical pages, its *halves*. The page map
//! (`l2p`) points at the first half: the plane-0 page in the parallel layout, the lower page
//! in the sequential one. The reverse map (`p2l`) names the unit at both halves, and each half
//! counts as valid in its block, so GC sees what cleaning either block costs and relocates the
//! unit from whichever block it cleans. One bit per slot marks first halves (`head`) and one
//! second halves (`tail`); the partner of a half is found through the block map (`pair`, the
//! paper's: a plane-0 block and its plane-1 pair, same page offset) or, in the sequential
//! layout, is the next page of the same block. Unlinking one half (overwrite, relocation)
//! unlinks the other. Memory: 2 bits per page and 4 bytes per block. A second write needs one
//! mapping unit per page (checked by the configuration).

use super::*;

/// What a second-write technique did with a host unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Verdict {
    /// Stored as a second write; done at this time.
    Taken(Done),
    /// Not taken: write it as a first write, its data being ready at this time.
    Declined(Done),
    /// Not yet: `plane` must be garbage-collected first (the `collect` hook, towards `target`
    /// free blocks). The FTL offers the same unit again once that has run; the technique keeps
    /// where it stopped.
    NeedSpace { plane: u32, target: usize },
}

/// A second-write policy (Reusable SSD). Called with the FTL it lives in; while it runs, the
/// FTL's own hooks fall back to the baseline (the policy is taken out of the FTL).
#[typetag::serde]
pub trait SecondWriteTechnique: Send {
    /// Host unit `lpn` of a request of `request_units` units, its data in the controller at
    /// `ready`, its old version already invalidated.
    fn host_unit(&mut self, ftl: &mut Ftl, lpn: u32, request_units: u32, ready: Done) -> Verdict;
    /// Garbage-collect `plane`: the FTL wants `target` free blocks (see `Ftl::open_block`).
    fn collect(&mut self, ftl: &mut Ftl, plane: u32, ready: Done, target: usize) -> Done;
    /// The same GC stepped (under the queued scheduler, `gc_steps.rs`): do at once what needs
    /// no flash work (recycling) and return `plane`'s next block to erase, whose data the FTL
    /// then moves a page per step; `None` once `collect` would have stopped. The FTL asks
    /// again when that block is erased.
    fn next_erase(&mut self, ftl: &mut Ftl, plane: u32, target: usize) -> Option<u32>;
}

/// A block's place in the Reusable SSD life cycle (clean and used are the FTL's free and
/// full blocks holding first writes only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BlockKind {
    /// Clean or used: first writes only.
    First,
    /// Recycled: its invalid pages are available for second writes.
    Recycled,
    /// Reused: its invalid pages were used by second writes; erased when next chosen by GC.
    Reused,
}

/// Second-write mapping state kept by the FTL.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SecondWrites {
    head: Vec<u64>,
    tail: Vec<u64>,
    /// The block map: a block's pair in the other plane of its die (parallel layout).
    pair: Vec<u32>,
    kind: Vec<BlockKind>,
    sequential: bool,
    slots_per_block: u32,
    slots_per_page: u32,
    recycled: u32,
    reused: u32,
    /// Second-written units currently mapped (each on two halves).
    live: u64,
    /// Valid pages (first writes and second-write halves) in recycled and reused blocks.
    partition_valid: u64,
    /// What happened so far (the measured run's, after preconditioning).
    pub(super) counters: SecondWriteCounters,
}

#[inline]
fn get(bits: &[u64], i: u32) -> bool {
    bits[(i >> 6) as usize] >> (i & 63) & 1 != 0
}

#[inline]
fn put(bits: &mut [u64], i: u32, on: bool) {
    let w = &mut bits[(i >> 6) as usize];
    if on {
        *w |= 1 << (i & 63);
    } else {
        *w &= !(1 << (i & 63));
    }
}

/// What happened to hot units and blocks under second writes: the technique's summary
/// section (`techniques.reusable`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SecondWriteCounters {
    /// Logical units stored as second writes (each on two physical pages).
    pub units: u64,
    /// Hot units written as first writes because no recycled pair was available.
    pub hot_first_writes: u64,
    /// Encoding attempts that failed (each retried or fallen back).
    pub encode_failures: u64,
    /// Hot units written as first writes after every encoding attempt failed.
    pub encode_fallbacks: u64,
    /// Pairs of invalid pages read ahead (prefetch) and read on demand.
    pub prefetch_reads: u64,
    pub demand_reads: u64,
    /// Host reads of second-written units (two pages each).
    pub paired_host_reads: u64,
    /// Second-written units moved by GC as first writes (read from both halves, decoded).
    pub moved_by_gc: u64,
    /// GC victims recycled instead of erased.
    pub blocks_recycled: u64,
    /// Blocks that became reused (their invalid pages exhausted by second writes).
    pub blocks_reused: u64,
}

impl SecondWrites {
    fn new(blocks: u32, slots_per_block: u32, slots_per_page: u32, sequential: bool) -> Self {
        let words = (blocks as u64 * slots_per_block as u64).div_ceil(64) as usize;
        SecondWrites {
            head: vec![0; words],
            tail: vec![0; words],
            pair: vec![NONE; blocks as usize],
            kind: vec![BlockKind::First; blocks as usize],
            sequential,
            slots_per_block,
            slots_per_page,
            recycled: 0,
            reused: 0,
            live: 0,
            partition_valid: 0,
            counters: SecondWriteCounters::default(),
        }
    }

    /// Does `slot` hold a half of a second-written unit?
    #[inline]
    pub fn is_second(&self, slot: u32) -> bool {
        get(&self.head, slot) || get(&self.tail, slot)
    }

    /// The other half of the unit whose half is at `slot`.
    #[inline]
    fn partner(&self, slot: u32, head: bool) -> u32 {
        if self.sequential {
            if head {
                slot + self.slots_per_page
            } else {
                slot - self.slots_per_page
            }
        } else {
            let b = slot / self.slots_per_block;
            self.pair[b as usize] * self.slots_per_block + slot % self.slots_per_block
        }
    }

    /// `block` was erased: it is clean again and its pairing is dissolved (cleaning it moved
    /// every second-written unit with a half in it, so its pair holds none either).
    pub(super) fn on_erase(&mut self, block: u32) {
        match self.kind[block as usize] {
            BlockKind::Recycled => self.recycled -= 1,
            BlockKind::Reused => self.reused -= 1,
            BlockKind::First => {}
        }
        // Cleaning moved or unlinked every valid page first, so the partition's count has
        // already dropped by all of this block's.
        self.kind[block as usize] = BlockKind::First;
        let p = self.pair[block as usize];
        if p != NONE {
            self.pair[p as usize] = NONE;
            self.pair[block as usize] = NONE;
        }
    }
}

impl Ftl {
    /// Install a second-write technique (Reusable SSD); `sequential` selects the layout whose
    /// halves are consecutive pages of one block instead of a pair of blocks.
    pub fn set_second_writes(&mut self, technique: Box<dyn SecondWriteTechnique>, sequential: bool) {
        self.sw = Some(SecondWrites::new(self.geo.blocks(), self.slots_per_block, self.max_upp, sequential));
        self.technique = Some(technique);
    }

    /// Unlink the other half of the second-written unit at `slot` (no-op for a first write).
    /// Returns the unit's first half (where the oracle keeps its version).
    pub(super) fn unlink_second_half(&mut self, slot: u32) -> u32 {
        let Some(sw) = self.sw.as_mut() else { return slot };
        let head = get(&sw.head, slot);
        if !head && !get(&sw.tail, slot) {
            return slot;
        }
        let partner = sw.partner(slot, head);
        for s in [slot, partner] {
            put(&mut sw.head, s, false);
            put(&mut sw.tail, s, false);
        }
        sw.live -= 1;
        self.map.claim(partner, UNMAPPED);
        let b = self.block_of(partner);
        self.note_page_invalid(b);
        let plane = self.geo.plane_of_block(b);
        self.blocks.unit_invalid(b, plane, self.victim.as_mut());
        self.pools[plane as usize].own.exhausted = false;
        if head {
            slot
        } else {
            partner
        }
    }

    /// Read both halves of the second-written unit at `slot` and decode it. Parallel layout:
    /// one multi-plane read (one sense, both pages over the channel); sequential: two reads.
    pub(super) fn read_second(&mut self, slot: u32, ready: Done, cause: Cause) -> Done {
        let Some(sw) = self.sw.as_mut() else { return ready };
        let head = get(&sw.head, slot);
        let partner = sw.partner(slot, head);
        let sequential = sw.sequential;
        if cause != Cause::Host {
            sw.counters.moved_by_gc += 1;
        }
        let (a, b) = (self.block_of(slot), self.block_of(partner));
        let (pa, pb) = (self.page_of(slot), self.page_of(partner));
        let mode = self.flash.mode(a);
        let die = self.die_of_block(a);
        self.flash.read(a);
        self.flash.read(b);
        self.counters.page_reads.add(cause, 2);
        let unit = self.unit_bytes;
        if sequential {
            let t = self.sched.submit(&Transaction::read(die, a, pa, mode, unit, cause), ready);
            self.sched.submit(&Transaction::read(die, b, pb, mode, unit, cause), ready).max(t)
        } else {
            // One multi-plane read: one sense, both pages over the channel.
            self.sched.submit(&Transaction::read(die, a, pa, mode, 2 * unit, cause), ready)
        }
    }

    /// Can `page` of `block` take half of a second write: programmed once, its data invalid?
    #[inline]
    pub fn page_free_for_second(&self, block: u32, page: u32) -> bool {
        let slot = block * self.slots_per_block + page * self.max_upp;
        page < self.flash.next_page(block)
            && self.map.owner(slot) == UNMAPPED
            && !self.sw.as_ref().is_some_and(|sw| sw.is_second(slot))
    }

    /// Map `lpn` to the second write programmed on `page0` of `block0` (first half) and
    /// `page1` of `block1`. Timing is the technique's; this is bookkeeping and counting.
    pub fn map_second(&mut self, lpn: u32, block0: u32, page0: u32, block1: u32, page1: u32) {
        let s0 = block0 * self.slots_per_block + page0 * self.max_upp;
        let s1 = block1 * self.slots_per_block + page1 * self.max_upp;
        debug_assert!(self.page_free_for_second(block0, page0) && self.page_free_for_second(block1, page1));
        debug_assert_eq!(self.map.slot(lpn), UNMAPPED);
        self.map.bind(lpn, s0);
        self.map.claim(s1, lpn);
        self.blocks.valid[block0 as usize] += 1;
        self.blocks.valid[block1 as usize] += 1;
        if let Some(sw) = self.sw.as_mut() {
            put(&mut sw.head, s0, true);
            put(&mut sw.tail, s1, true);
            sw.live += 1;
            sw.partition_valid += 2; // both blocks are recycled (RecycledActive)
            sw.counters.units += 1;
        }
        self.flash.second_program(block0, page0);
        self.flash.second_program(block1, page1);
        self.counters.page_programs.add(Cause::SecondWrite, 2);
        self.counters.unit_programs.add(Cause::SecondWrite, 1);
        if let Some(o) = &mut self.oracle {
            o.write(lpn, s0);
            o.relocate(lpn, s0, lpn, s1);
        }
    }

    /// Pair `block0` (plane 0 of a die) with `block1` (plane 1) in the block map.
    pub fn pair_blocks(&mut self, block0: u32, block1: u32) {
        if let Some(sw) = self.sw.as_mut() {
            sw.pair[block0 as usize] = block1;
            sw.pair[block1 as usize] = block0;
        }
    }

    /// Recycle a GC victim: no data moves, its invalid pages become second-write space.
    pub fn recycle_block(&mut self, block: u32) {
        let plane = self.geo.plane_of_block(block);
        self.blocks.withdraw(block, plane, self.victim.as_mut());
        self.blocks.state[block as usize] = BlockState::Held;
        if let Some(sw) = self.sw.as_mut() {
            sw.kind[block as usize] = BlockKind::Recycled;
            sw.recycled += 1;
            sw.partition_valid += self.blocks.valid[block as usize] as u64;
            sw.counters.blocks_recycled += 1;
        }
    }

    /// Give a recycled block that no lane has opened back to the first writes (no data moves):
    /// it is a used block again, a GC candidate, and its invalid pages are first-write spare
    /// space. The inverse of [`Ftl::recycle_block`].
    pub fn give_back(&mut self, block: u32) {
        let plane = self.geo.plane_of_block(block);
        if let Some(sw) = self.sw.as_mut() {
            debug_assert_eq!(sw.kind[block as usize], BlockKind::Recycled);
            debug_assert_eq!(sw.pair[block as usize], NONE, "a lane's block is closed, not given back");
            sw.kind[block as usize] = BlockKind::First;
            sw.recycled -= 1;
            sw.partition_valid -= self.blocks.valid[block as usize] as u64;
        }
        self.blocks.reinstate(block, plane, self.victim.as_mut());
    }

    /// A recycled block's invalid pages are used up: it is reused, a GC candidate again.
    pub fn close_reused(&mut self, block: u32) {
        let plane = self.geo.plane_of_block(block);
        if let Some(sw) = self.sw.as_mut() {
            sw.kind[block as usize] = BlockKind::Reused;
            sw.recycled -= 1;
            sw.reused += 1;
            sw.counters.blocks_reused += 1;
        }
        self.close_block(block, plane);
    }

    /// The second-write counters, for the technique to count what it does (`None` without a
    /// second-write technique).
    pub fn second_write_counters_mut(&mut self) -> Option<&mut SecondWriteCounters> {
        self.sw.as_mut().map(|sw| &mut sw.counters)
    }

    /// The second-write counters so far (`None` without a second-write technique).
    pub fn second_write_counters(&self) -> Option<SecondWriteCounters> {
        self.sw.as_ref().map(|sw| sw.counters)
    }

    /// A block's life-cycle kind.
    pub fn block_kind(&self, block: u32) -> BlockKind {
        self.sw.as_ref().map_or(BlockKind::First, |sw| sw.kind[block as usize])
    }

    /// Blocks recycled and reused, over the drive.
    pub fn recycled_and_reused(&self) -> (u32, u32) {
        self.sw.as_ref().map_or((0, 0), |sw| (sw.recycled, sw.reused))
    }

    /// Second-written units currently mapped: the logical data the recycled and reused
    /// blocks hold as second writes.
    pub fn second_write_units(&self) -> u64 {
        self.sw.as_ref().map_or(0, |sw| sw.live)
    }

    /// Valid pages in recycled and reused blocks: first-write data left in them when they
    /// were recycled, and second-write halves.
    pub fn partition_valid_pages(&self) -> u64 {
        self.sw.as_ref().map_or(0, |sw| sw.partition_valid)
    }

    /// A valid page of `block` is about to become invalid: keep the partition's count.
    #[inline]
    pub(super) fn note_page_invalid(&mut self, block: u32) {
        if let Some(sw) = self.sw.as_mut() {
            if sw.kind[block as usize] != BlockKind::First {
                sw.partition_valid -= 1;
            }
        }
    }

    /// What cleaning `plane` can win back without a recycled block: the invalid units of its GC
    /// candidates (its used and reused blocks) and the room left in its GC stream's open
    /// block, which takes the data cleaning moves before a clean block must.
    pub fn reclaimable_units(&self, plane: u32) -> u64 {
        let lo = plane * self.geo.blocks_per_plane;
        let invalid: u64 = (lo..lo + self.geo.blocks_per_plane)
            .filter(|&b| self.blocks.state[b as usize] == BlockState::Full)
            .map(|b| self.blocks.invalid(b) as u64)
            .sum();
        let a = self.pools[plane as usize].active[Stream::Gc as usize];
        let room = if a.is_closed() { 0 } else { (self.geo.pages_per_block - a.page) * a.upp - a.slot };
        invalid + room as u64
    }

    /// Free (clean) blocks in `plane`.
    pub fn free_blocks_in(&self, plane: u32) -> usize {
        self.pools[plane as usize].free.len()
    }

    /// Units `block` holds at its mode.
    pub fn block_capacity(&self, block: u32) -> u32 {
        self.blocks.capacity[block as usize]
    }

    /// Free blocks a pool keeps for GC (host writes never take them).
    pub const GC_RESERVE: usize = GC_RESERVE_BLOCKS;

    /// Clean a GC victim the baseline way: move its valid data as first writes, erase it.
    pub fn clean_victim(&mut self, block: u32, plane: u32, ready: Done) -> Done {
        self.counters.gc_victims += 1;
        self.counters.gc_valid_moved += self.blocks.valid[block as usize] as u64;
        self.clean(block, plane, ready, Cause::Gc)
    }
}
