//! ZombieNAND (Wilson, Jung, Kandemir): worn-out blocks drop one bit per cell instead of
//! dying, and garbage collection "wear-unlevels" a small early-switch pool so that some blocks
//! become fast, long-lived zombies early.
//!
//! Three policies, chosen by configuration:
//! - [`DropBit`], an [`EndOfLifePolicy`] (`flash.end_of_life = "drop_bit"`): on an erase that
//!   finds a block dead at its mode (the wear model says so), TLC -> MLC -> SLC; dead SLC
//!   retires. The FTL calls it only on `EraseStatus::WornOut`, so no block switches early.
//! - [`ZombieVictim`], a [`VictimPolicy`] (`gc.victim = "zombie"`): the usage table of the
//!   paper's Algorithm 2 (candidates bucketed by valid pages; within a bucket early-switch
//!   blocks first, then by remaining life, most first) and the skip rule of Algorithm 3 (a
//!   normal block whose remaining life is below `zombie.life_threshold` times the average is
//!   passed over; early-switch blocks never are). Two deviations, both for progress: the skip
//!   reorders a bucket but does not send GC to fuller buckets, and a victim must free more
//!   units than it holds valid, counting the capacity it loses if this erase finds it dead.
//!   With `zombie.affordable_drops` (on by default), GC and static levelling also pass over a
//!   block whose next erase would be a drop the drive's spare capacity no longer covers
//!   ([`VictimPolicy::erase_affordable`]); the paper is silent on this.
//! - [`early_switch_blocks`]: the pool size of Equation 1.
//!
//! **Element.** The paper's element is one flash chip with its own GC (128 blocks in the
//! synthetic drive, 512 in the trace drive). Our GC and allocation run per plane (one pool per
//! plane), so the element is a pool: Equation 1 is applied per plane with B = blocks per plane,
//! and the early-switch blocks are the first ones of each plane. The ZombieNAND presets model
//! an element as one die with one plane (the scheduler times dies, not planes, so nothing is lost).

use crate::config::{Config, EndOfLife};
use crate::flash::{BitMode, FlashArray};
use crate::ftl::victim::{VictimPolicy, VictimView};
use crate::ftl::EndOfLifePolicy;

const NONE: u32 = u32::MAX;

/// Equation 1: early-switch blocks per element, `floor((R - W) * B / 2^(S - 2))`, with R the
/// reserve and W the GC high watermark as fractions of the drive, B the blocks per element
/// and S the starting bits per cell (TLC halves the pool, MLC keeps it whole). 0 when
/// R <= W or S = 1 (an SLC drive has nothing to drop to).
pub fn early_switch_blocks(reserve: f64, high_watermark: f64, blocks_per_element: u32, start_bits: u32) -> u32 {
    if start_bits < 2 || reserve <= high_watermark {
        return 0;
    }
    let n = (reserve - high_watermark) * blocks_per_element as f64 / (1u64 << (start_bits - 2)) as f64;
    // A hair of tolerance so that, e.g., (0.30 - 0.05) * 128 / 2 = 16 exactly stays 16.
    ((n + 1e-9).floor() as u32).min(blocks_per_element)
}

/// ZombieNAND's end of life: one bit per cell fewer, until SLC; a dead SLC block retires.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct DropBit;

#[typetag::serde]
impl EndOfLifePolicy for DropBit {
    fn next_mode(&mut self, _block: u32, mode: BitMode) -> Option<BitMode> {
        mode.lower()
    }
}

/// The usage table and wear-unleveling victim choice of Algorithms 2 and 3.
///
/// Candidates sit in intrusive lists per (pool, bucket, class), class 0 the early-switch
/// blocks and class 1 the normal ones; the bucket is the block's valid pages, i.e.
/// `valid_units * pages_per_block / capacity_units` (a block of any bit mode full of valid
/// data is in bucket `pages_per_block`, which is never chosen: "blocks without any invalid
/// pages are not considered"). Remaining life changes only at an erase and is pushed in by
/// the FTL ([`VictimPolicy::erased`]), so the pool averages are kept incrementally and a
/// choice costs a scan of the lowest non-empty buckets only. No allocation after `new`.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ZombieVictim {
    pages_per_block: u32,
    buckets: u32,
    threshold: f64,
    head: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    bucket: Vec<u32>,
    early: Vec<bool>,
    /// Units each block holds at its mode (0 once retired).
    capacity: Vec<u32>,
    /// Units a block holds at each mode, SLC first.
    units_by_mode: [u32; 4],
    /// Cycles each block can still take at its mode.
    life: Vec<f64>,
    /// Lowest bucket that may be non-empty, per pool.
    low: Vec<u32>,
    /// Sum and count of the remaining life of each pool's live normal blocks.
    normal_life: Vec<f64>,
    normal_blocks: Vec<u32>,
    early_per_pool: u32,
    /// `zombie.affordable_drops` on a drive whose worn blocks drop a bit: pass over a block
    /// whose drop the spare capacity cannot cover. Off on a drive that retires worn blocks.
    affordable_drops: bool,
}

impl ZombieVictim {
    /// The policy for a configuration; `units_by_mode` is what a block holds at each mode
    /// (SLC first), `flash` gives each block's starting remaining life.
    pub fn new(cfg: &Config, flash: &FlashArray, units_by_mode: [u32; 4]) -> Self {
        let block_units = units_by_mode[flash.native_mode().index()];
        let geo = flash.geo;
        let (blocks, pools, bpp) = (geo.blocks(), geo.planes(), geo.blocks_per_plane);
        let early_per_pool = if cfg.zombie.early_switch {
            early_switch_blocks(cfg.capacity.reserve(), cfg.gc.high_watermark, bpp, flash.native_mode().bits())
        } else {
            0
        };
        let early: Vec<bool> = (0..blocks).map(|b| b % bpp < early_per_pool).collect();
        let life: Vec<f64> = (0..blocks).map(|b| flash.remaining_cycles(b)).collect();
        let mut normal_life = vec![0.0; pools as usize];
        let mut normal_blocks = vec![0; pools as usize];
        for b in 0..blocks {
            if !early[b as usize] {
                normal_life[(b / bpp) as usize] += life[b as usize];
                normal_blocks[(b / bpp) as usize] += 1;
            }
        }
        let ppb = geo.pages_per_block;
        let buckets = ppb + 1;
        ZombieVictim {
            pages_per_block: ppb,
            buckets,
            threshold: cfg.zombie.life_threshold,
            head: vec![NONE; (pools * buckets * 2) as usize],
            next: vec![NONE; blocks as usize],
            prev: vec![NONE; blocks as usize],
            bucket: vec![NONE; blocks as usize],
            early,
            capacity: vec![block_units; blocks as usize],
            units_by_mode,
            life,
            low: vec![0; pools as usize],
            normal_life,
            normal_blocks,
            early_per_pool,
            affordable_drops: cfg.zombie.affordable_drops && cfg.flash.end_of_life == EndOfLife::DropBit,
        }
    }

    /// Early-switch blocks per pool (Equation 1, or 0 without the pool).
    pub fn early_per_pool(&self) -> u32 {
        self.early_per_pool
    }

    /// Is `block` in the early-switch pool?
    pub fn is_early(&self, block: u32) -> bool {
        self.early[block as usize]
    }

    /// Mean remaining life of `pool`'s live normal blocks.
    pub fn average_normal_life(&self, pool: u32) -> f64 {
        let n = self.normal_blocks[pool as usize];
        if n == 0 {
            0.0
        } else {
            self.normal_life[pool as usize] / n as f64
        }
    }

    #[inline]
    fn key(&self, block: u32, valid: u32) -> u32 {
        let cap = self.capacity[block as usize].max(1);
        ((valid as u64 * self.pages_per_block as u64) / cap as u64).min(self.pages_per_block as u64) as u32
    }

    #[inline]
    fn list(&self, pool: u32, bucket: u32, early: bool) -> usize {
        ((pool * self.buckets + bucket) * 2 + if early { 0 } else { 1 }) as usize
    }

    fn link(&mut self, block: u32, pool: u32, bucket: u32) {
        let s = self.list(pool, bucket, self.early[block as usize]);
        let h = self.head[s];
        self.next[block as usize] = h;
        self.prev[block as usize] = NONE;
        if h != NONE {
            self.prev[h as usize] = block;
        }
        self.head[s] = block;
        self.bucket[block as usize] = bucket;
        let low = &mut self.low[pool as usize];
        *low = (*low).min(bucket);
    }

    fn unlink(&mut self, block: u32, pool: u32) {
        let bucket = self.bucket[block as usize];
        if bucket == NONE {
            return;
        }
        let (n, p) = (self.next[block as usize], self.prev[block as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            let s = self.list(pool, bucket, self.early[block as usize]);
            self.head[s] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
        self.bucket[block as usize] = NONE;
    }

    /// Units `block` will hold after its next erase: less when that erase will find it worn
    /// out at its mode (it then drops a bit, or retires from SLC).
    #[inline]
    fn capacity_after_erase(&self, block: u32) -> u32 {
        let b = block as usize;
        if self.life[b] >= 1.0 {
            return self.capacity[b];
        }
        let units = self.capacity[b];
        // The mode is the one whose capacity this is; one bit fewer is the next lower entry.
        match self.units_by_mode.iter().position(|&u| u == units) {
            Some(0) | None => 0,
            Some(i) => self.units_by_mode[i - 1],
        }
    }

    /// The block with the most remaining life in a list, among those `ok` takes.
    fn most_life(&self, mut b: u32, ok: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        let mut best: Option<u32> = None;
        while b != NONE {
            if best.is_none_or(|c| self.life[b as usize] > self.life[c as usize]) && ok(b) {
                best = Some(b);
            }
            b = self.next[b as usize];
        }
        best
    }
}

#[typetag::serde]
impl VictimPolicy for ZombieVictim {
    fn insert(&mut self, block: u32, pool: u32, valid: u32) {
        let k = self.key(block, valid);
        self.link(block, pool, k);
    }

    #[inline]
    fn update(&mut self, block: u32, pool: u32, _old_valid: u32, new_valid: u32) {
        let k = self.key(block, new_valid);
        if k != self.bucket[block as usize] {
            self.unlink(block, pool);
            self.link(block, pool, k);
        }
    }

    fn remove(&mut self, block: u32, pool: u32, _valid: u32) {
        self.unlink(block, pool);
    }

    fn erased(&mut self, block: u32, pool: u32, capacity: u32, remaining_life: f64) {
        let b = block as usize;
        let was_live = self.capacity[b] > 0;
        if !self.early[b] && was_live {
            self.normal_life[pool as usize] -= self.life[b];
            self.normal_blocks[pool as usize] -= 1;
        }
        self.capacity[b] = capacity;
        self.life[b] = if capacity == 0 { 0.0 } else { remaining_life };
        if !self.early[b] && capacity > 0 {
            self.normal_life[pool as usize] += self.life[b];
            self.normal_blocks[pool as usize] += 1;
        }
    }

    fn chooses_least_valid(&self) -> bool {
        true
    }

    /// The early-switch pool is its own wear class: its wear is concentrated on purpose
    /// (Section III-B: "early-switch blocks are not wear-leveled against normal blocks (and
    /// importantly, vice-versa), early-switch blocks are wear-leveled amongst themselves").
    fn wear_class(&self, block: u32) -> u8 {
        self.early[block as usize] as u8
    }

    /// A block's next erase is unaffordable when it will find the block worn out at its mode
    /// (no cycle left) and the capacity it then loses (a bit per cell, or the whole block from
    /// SLC) exceeds what the live blocks hold beyond the logical space and GC's reserve: the
    /// very check that ends the drive at that erase (`Ftl::check_capacity`). A block with bad
    /// pages is not recognised by its capacity and counts as losing it all (conservative).
    #[inline]
    fn erase_affordable(&self, block: u32, spare_units: u64) -> bool {
        let b = block as usize;
        if !self.affordable_drops || self.life[b] >= 1.0 {
            return true;
        }
        (self.capacity[b] - self.capacity_after_erase(block)) as u64 <= spare_units
    }

    fn select(&mut self, pool: u32, view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        // Cleaning should free more than it moves, counting the capacity a dying block loses
        // at this erase: with blocks of several modes, a victim can otherwise cost free space.
        // And it should not be the erase that kills the drive while another would do.
        if let Some(b) = self.select_by(pool, view, accept, true, true) {
            return Some(b);
        }
        // When every candidate is about to die with more valid data than it will hold after
        // its erase (uniform wear at the end of life), cleaning costs free space, but a drive
        // must go on cleaning, and retiring or switching the dying blocks, until its capacity
        // falls to the high watermark: that is its death (Section III), not the victim policy
        // running out of choices.
        if let Some(b) = self.select_by(pool, view, accept, false, true) {
            return Some(b);
        }
        // Only blocks whose erase the drive cannot afford are left: cleaning one is its death,
        // which the FTL's capacity check declares at that erase (no looping, no stall).
        if !self.affordable_drops {
            return None; // the passes above already took every candidate
        }
        self.select_by(pool, view, accept, false, false)
    }
}

impl ZombieVictim {
    fn select_by(
        &mut self,
        pool: u32,
        view: &VictimView,
        accept: &mut dyn FnMut(u32) -> bool,
        must_gain: bool,
        must_afford: bool,
    ) -> Option<u32> {
        let floor = self.threshold * self.average_normal_life(pool);
        let start = self.low[pool as usize];
        let spare = view.spare_units;
        let gains = |p: &ZombieVictim, b: u32| {
            (!must_gain || view.valid[b as usize] < p.capacity_after_erase(b))
                && (!must_afford || p.erase_affordable(b, spare))
        };
        // Bucket `pages_per_block` holds blocks without invalid data: never considered.
        for k in start..self.pages_per_block {
            let (he, hn) = (self.head[self.list(pool, k, true)], self.head[self.list(pool, k, false)]);
            if he == NONE && hn == NONE {
                if k == self.low[pool as usize] {
                    self.low[pool as usize] = k + 1;
                }
                continue;
            }
            // Within a bucket: early-switch blocks first (never skipped), most life first, so
            // they are wear-levelled among themselves.
            if let Some(b) = self.most_life(he, &mut |b| gains(self, b)) {
                return Some(b);
            }
            // Then normal blocks, most life first, passing over the worn ones...
            let life = &self.life;
            if let Some(b) = self.most_life(hn, &mut |b| life[b as usize] >= floor && gains(self, b) && accept(b)) {
                return Some(b);
            }
            // ... which are still taken before a block with more valid pages: valid pages are
            // the first criterion (Section III-B), so the skip only reorders a bucket. Skipping
            // to fuller buckets, as Algorithm 3 read literally does, moved so much data that
            // zombie drives died before the baseline (docs/techniques/zombienand.md).
            if let Some(b) = self.most_life(hn, &mut |b| gains(self, b)) {
                return Some(b);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equation_1_matches_the_paper() {
        // (R - W) * B / 2^(S-2) with the synthetic element (B = 128) and W = 5%.
        assert_eq!(early_switch_blocks(0.20, 0.05, 128, 3), 9); // 19.2 / 2 = 9.6
        assert_eq!(early_switch_blocks(0.20, 0.05, 128, 2), 19); // 19.2 / 1
        assert_eq!(early_switch_blocks(0.30, 0.05, 128, 3), 16); // 32 / 2
        assert_eq!(early_switch_blocks(0.30, 0.05, 512, 3), 64);
        assert_eq!(early_switch_blocks(0.10, 0.05, 128, 3), 3); // 6.4 / 2
        assert_eq!(early_switch_blocks(0.05, 0.05, 128, 3), 0); // R = W: no room
        assert_eq!(early_switch_blocks(0.04, 0.05, 128, 2), 0);
        assert_eq!(early_switch_blocks(0.30, 0.05, 128, 1), 0); // SLC cannot drop a bit
        assert_eq!(early_switch_blocks(0.45, 0.05, 128, 4), 12); // QLC: / 4
    }

    #[test]
    fn drop_bit_steps_down_to_slc_then_retires() {
        let mut p = DropBit;
        assert_eq!(p.next_mode(0, BitMode::Tlc), Some(BitMode::Mlc));
        assert_eq!(p.next_mode(0, BitMode::Mlc), Some(BitMode::Slc));
        assert_eq!(p.next_mode(0, BitMode::Slc), None);
        assert_eq!(p.next_mode(0, BitMode::Qlc), Some(BitMode::Tlc));
    }

    fn policy(early: bool) -> (ZombieVictim, FlashArray) {
        policy_with(early, &[])
    }

    fn policy_with(early: bool, sets: &[&str]) -> (ZombieVictim, FlashArray) {
        let mut b = crate::ConfigBuilder::new();
        for s in sets {
            b = b.set(s).unwrap();
        }
        let cfg = b
            .set("geometry.channels=1")
            .and_then(|b| b.set("geometry.ways=1"))
            .and_then(|b| b.set("geometry.planes=1"))
            .and_then(|b| b.set("geometry.blocks_per_plane=32"))
            .and_then(|b| b.set("geometry.pages_per_block=4"))
            .and_then(|b| b.set("capacity.reserve=0.3"))
            .and_then(|b| b.set("gc.high_watermark=0.05"))
            .and_then(|b| b.set("flash.wear_model=\"oxide\""))
            .and_then(|b| b.set(&format!("zombie.early_switch={early}")))
            .and_then(|b| b.build())
            .unwrap();
        // The oxide wear model alone (no failures): the array the run would build.
        let geo = crate::flash::Geometry::new(&cfg.geometry);
        let seed = crate::seeds::stream_seed(cfg.seed, "wear");
        let wear = crate::flash::oxide::OxideWear::new(&cfg.flash.wear, geo.blocks() as usize, seed).unwrap();
        let flash = FlashArray::new(geo, &cfg.flash, Box::new(wear), None);
        // TLC start: (0.30 - 0.05) * 32 / 2 = 4 early blocks (0..4).
        (ZombieVictim::new(&cfg, &flash, [4, 8, 16, 20]), flash)
    }

    fn view(valid: &[u32]) -> VictimView<'_> {
        VictimView { valid, capacity: &[], lost: &[], closed_seq: &[], now_seq: 0, spare_units: u64::MAX }
    }

    #[test]
    fn usage_table_prefers_fewer_valid_then_early_then_more_life() {
        let (mut p, _) = policy(true);
        assert_eq!(p.early_per_pool(), 4);
        assert!(p.is_early(3) && !p.is_early(4));
        let mut valid = vec![0u32; 32];
        let put = |p: &mut ZombieVictim, valid: &mut Vec<u32>, b: u32, v: u32| {
            valid[b as usize] = v;
            p.insert(b, 0, v);
        };
        // 16 units, 4 pages: bucket = valid / 4.
        put(&mut p, &mut valid, 10, 4); // bucket 1, normal
        put(&mut p, &mut valid, 2, 7); // bucket 1, early
        put(&mut p, &mut valid, 11, 3); // bucket 0, normal
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(11), "fewest valid pages first");
        p.remove(11, 0, 3);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(2), "early block first within a bucket");
        p.remove(2, 0, 7);
        p.erased(12, 0, 16, 2000.0); // more life than block 10 (1000)
        put(&mut p, &mut valid, 12, 5);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(12), "then the most remaining life");
        // Full blocks are never chosen.
        p.remove(12, 0, 5);
        p.remove(10, 0, 4);
        put(&mut p, &mut valid, 13, 16);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), None);
        valid[13] = 15;
        p.update(13, 0, 16, 15);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(13));
        // A block this erase will find dead holds less afterwards (TLC 16 -> MLC units):
        // with more valid units than that, cleaning it would cost space, so a block that
        // gains is taken first even with more valid units ...
        p.remove(13, 0, 15);
        let units = p.units_by_mode;
        p.erased(14, 0, units[2], 0.0);
        put(&mut p, &mut valid, 14, units[1] + 1);
        put(&mut p, &mut valid, 15, units[2] - 1);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(15), "a victim that gains space first");
        // ... but when none gains, the dying block is still cleaned: a drive goes on to its
        // capacity death rather than stop collecting.
        p.remove(15, 0, units[2] - 1);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(14), "no gain anywhere: the least valid");
        valid[14] = units[1] - 1;
        p.update(14, 0, units[1] + 1, units[1] - 1);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(14));
    }

    #[test]
    fn worn_normal_blocks_are_skipped_but_early_ones_are_not() {
        let (mut p, _) = policy(true);
        let avg = p.average_normal_life(0);
        assert!((avg - 1000.0).abs() < 1.0, "fresh TLC blocks: {avg}");
        let mut valid = vec![0u32; 32];
        // Normal block 20 is nearly worn out: passed over for a healthy one in its bucket.
        p.erased(20, 0, 16, 100.0);
        p.insert(20, 0, 0);
        valid[21] = 2;
        p.insert(21, 0, 2);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(21));
        // An early block as worn is taken first.
        p.erased(1, 0, 16, 100.0);
        p.insert(1, 0, 0);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(1));
        p.remove(1, 0, 0);
        p.remove(21, 0, 2);
        // A worn block is still taken before one with more valid pages.
        valid[22] = 9;
        p.insert(22, 0, 9);
        assert_eq!(p.select(0, &view(&valid), &mut |_| true), Some(20), "worn, but emptier than block 22");
        // Retired blocks leave the average.
        let before = p.average_normal_life(0);
        p.remove(20, 0, 0);
        p.erased(20, 0, 0, 0.0);
        assert!(p.average_normal_life(0) > before);
    }

    #[test]
    fn a_drop_the_spare_cannot_cover_is_passed_over_until_nothing_else_is_left() {
        let (mut p, _) = policy_with(false, &["flash.end_of_life=\"drop_bit\""]);
        let units = p.units_by_mode; // SLC, MLC, TLC: 4, 8, 16 units a block
        let mut valid = vec![0u32; 32];
        fn with_spare(valid: &[u32], spare: u64) -> VictimView<'_> {
            VictimView { spare_units: spare, ..view(valid) }
        }
        // Block 5: TLC at its end (its next erase drops it to MLC: 8 units lost), emptiest.
        p.erased(5, 0, units[2], 0.0);
        valid[5] = 1;
        p.insert(5, 0, 1);
        // Block 6: an SLC zombie with life left, more valid data.
        p.erased(6, 0, units[0], 5000.0);
        valid[6] = 2;
        p.insert(6, 0, 2);
        assert!(p.erase_affordable(5, 8) && !p.erase_affordable(5, 7) && p.erase_affordable(6, 0));
        assert_eq!(p.select(0, &with_spare(&valid, 8), &mut |_| true), Some(5), "affordable: fewest valid first");
        assert_eq!(p.select(0, &with_spare(&valid, 7), &mut |_| true), Some(6), "a drop too many: passed over");
        // Only the dying block left: it is taken, and the drive dies at its erase.
        p.remove(6, 0, 2);
        assert_eq!(p.select(0, &with_spare(&valid, 0), &mut |_| true), Some(5));
        // A drive that retires worn blocks (the levelled baseline) is not affected.
        let (mut base, _) = policy(false);
        base.erased(5, 0, units[2], 0.0);
        base.insert(5, 0, 1);
        base.erased(6, 0, units[2], 500.0);
        valid[6] = 8; // a fuller bucket than block 5's (the life skip only reorders a bucket)
        base.insert(6, 0, 8);
        assert!(base.erase_affordable(5, 0));
        assert_eq!(base.select(0, &with_spare(&valid, 0), &mut |_| true), Some(5));
    }

    #[test]
    fn without_the_pool_every_block_is_normal() {
        let (p, _) = policy(false);
        assert_eq!(p.early_per_pool(), 0);
        assert!((0..32).all(|b| !p.is_early(b)));
    }
}
