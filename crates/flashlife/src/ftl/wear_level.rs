//! Static wear leveling by remaining life, aware of blocks whose wear is concentrated on
//! purpose (`wear_leveling.measure = "remaining_life"`).
//!
//! The erase-count leveller ([`super::wear_leveling::ThresholdWearLeveling`]) counts every
//! block of a pool in its mean and moves the least-erased full block when it lags. On a drive
//! whose blocks drop a bit per cell at death (ZombieNAND) that levels the wrong thing twice:
//! the early-switch pool's blocks, erased more on purpose, raise the mean, so the leveller
//! pulls the normal blocks up after them (the pool's concentrated wear is spent on the whole
//! drive); and a zombie has thousands of cycles more than its erase count says, so erase
//! counts mark as worn the very blocks with the most life. This leveller compares cycles left
//! at each block's current mode (`FlashArray::remaining_cycles`), and only within a class:
//! one bit mode and one wear class of the victim policy (`VictimPolicy::wear_class`: the
//! early-switch pool is class 1, levelled among itself). In each class the full block with
//! the most life left is a candidate for a move (its data goes to the GC stream, the block
//! back to the free list) when it has more than `threshold` cycles more than the class's most
//! worn live block; the candidate furthest over is moved.
//! The spread, not the distance to the mean: with a small hot set the
//! mean hardly moves while the hot blocks wear out (measured: at 10% working set and a 100-
//! cycle endurance a mean rule with threshold 16 never fired before the drive died at 16% of
//! its rated erases), and the paper's optimum is that "when a cell finally is erased and
//! declared dead, all of the remaining cells are also one erase from death themselves".
//! Dynamic levelling (which victims GC may take) stays with the victim policy: ZombieNAND's usage table skips normal blocks below `zombie.life_threshold`
//! of the mean remaining life (Algorithm 3).

use super::wear_leveling::{PoolWear, WearLeveling};
use super::*;

/// Static levelling of remaining life (see the module doc).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct LifeLeveling {
    /// Cycles of remaining life above its class's most worn block at which the youngest
    /// full block of the class is moved.
    pub threshold: u32,
}

#[typetag::serde]
impl WearLeveling for LifeLeveling {
    fn accept_victim(&self, _erases: u32, _pool: PoolWear) -> bool {
        true
    }
    fn migrate_cold(&self, _min: u32, _pool: PoolWear) -> bool {
        false
    }
    fn check_interval(&self) -> u32 {
        (self.threshold / 2).max(4)
    }
    fn migrate_young(&self, most: f64, least: f64) -> Option<bool> {
        Some(most > least + self.threshold as f64)
    }
}

impl Ftl {
    /// Queue one full block of `plane` for a levelling move: in each class of blocks levelled
    /// together (the victim policy's wear class and the bit mode), the full block with the
    /// most remaining life is a candidate when it has more than the policy's threshold above
    /// the class's most worn live block; the candidate furthest over is queued.
    pub(super) fn check_young(&mut self, plane: u32) {
        const CLASSES: usize = 2 * 4;
        let lo = plane * self.geo.blocks_per_plane;
        let mut least = [f64::INFINITY; CLASSES];
        let mut best: [Option<(f64, u32)>; CLASSES] = [None; CLASSES];
        let spare = self.spare_units();
        for b in lo..lo + self.geo.blocks_per_plane {
            let state = self.blocks.state[b as usize];
            if state == BlockState::Retired {
                continue;
            }
            let class = self.wear_class_of(b);
            let life = self.flash.remaining_cycles(b);
            least[class] = least[class].min(life);
            // A block whose erase the drive cannot afford (ZombieNAND: a bit drop past the
            // reserve) is never a candidate. It has no cycle left at its mode, so the spread
            // rule would not pick it anyway; the check keeps that true for any policy.
            if state == BlockState::Full
                && best[class].is_none_or(|(l, _)| life > l)
                && self.victim.erase_affordable(b, spare)
            {
                best[class] = Some((life, b));
            }
        }
        let pick = (0..CLASSES)
            .filter_map(|c| best[c].map(|(most, b)| (most - least[c], most, least[c], b)))
            .filter(|&(_, most, least, _)| self.wl.migrate_young(most, least) == Some(true))
            .max_by(|x, y| x.0.total_cmp(&y.0));
        if let Some((_, _, _, b)) = pick {
            if !self.cold_queue.contains(&b) {
                self.cold_queue.push(b);
            }
        }
    }

    /// Levelling class of `block`: the victim policy's wear class times 4 plus its bit mode.
    fn wear_class_of(&self, block: u32) -> usize {
        (self.victim.wear_class(block).min(1) as usize) * 4 + self.flash.mode(block).index()
    }

    /// Just before a levelling move (`settle`), for a remaining-life leveller (the
    /// erase-count one moves as before: `Some(ready)`). A move must not take the blocks GC
    /// needs: with fewer than GC's reserve of free blocks left in `plane` the move waits for
    /// a later check (without this, a drive whose blocks all wear out together died of "no
    /// free block" instead of by its capacity; cleaning first, as read reclaim does, could
    /// loop without freeing anything once dying blocks shrink as they are erased). Then the
    /// plane's free block of wear class 0 with the least remaining life goes to the front of
    /// its free list, so the move's (cold) data parks on a worn block rather than on
    /// whichever block the list holds next. Only right before the move: done at check time
    /// instead, the host stream took the worn block first and it wore faster still (CI-scale
    /// MLC drive, 30% reserve, 10% working set, threshold 8: dead at 56% of its rated
    /// erases); without it, cold data hopped between young blocks (threshold 2: 65%).
    /// Returns when the move may start, or `None` to skip it (and the queue).
    pub(super) fn prepare_levelling_move(&mut self, plane: u32, ready: Done) -> Option<Done> {
        if self.wl.migrate_young(0.0, 0.0).is_none() {
            return Some(ready);
        }
        if self.pools[plane as usize].free.len() < GC_RESERVE_BLOCKS {
            // Drop the queue: the move waits for a later check.
            self.cold_queue.clear();
            return None;
        }
        let free = &self.pools[plane as usize].free;
        let worn = (0..free.len())
            .filter(|&i| self.victim.wear_class(free[i]) == 0)
            .min_by(|&i, &j| self.flash.remaining_cycles(free[i]).total_cmp(&self.flash.remaining_cycles(free[j])));
        if let Some(i) = worn.filter(|&i| i > 0) {
            let free = &mut self.pools[plane as usize].free;
            if let Some(b) = free.remove(i) {
                free.push_front(b);
            }
        }
        Some(ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_only_a_block_far_enough_above_the_most_worn() {
        let p = LifeLeveling { threshold: 16 };
        assert_eq!(p.migrate_young(120.0, 100.0), Some(true));
        assert_eq!(p.migrate_young(116.0, 100.0), Some(false));
        assert_eq!(p.check_interval(), 8);
        assert!(p.accept_victim(u32::MAX, PoolWear { mean_erases: 0.0 }));
    }
}
