//! Maintenance besides GC: read reclaim (rewriting blocks the read model flags) and static
//! wear leveling (moving cold data off little-worn blocks).

use super::*;

impl Ftl {
    /// Rewrite the blocks the reclaim policy asked for: move their valid data into the GC
    /// stream and erase them (all counted under `Cause::Reclaim`).
    pub(super) fn reclaim_pending(&mut self, ready: Done) -> Done {
        let mut done = ready;
        while let Some(block) = self.reclaim_queue.pop() {
            if self.death.is_some() || self.in_gc {
                self.reclaim_queue.clear();
                break;
            }
            let plane = self.geo.plane_of_block(block);
            if self.steps_cleaning() {
                self.queue_reclaim(block, plane, ready); // moves stepped (`chores.rs`)
                continue;
            }
            if self.pools[plane as usize].free.len() <= GC_RESERVE_BLOCKS {
                // Make room first, as for a failed block: the data needs somewhere to go.
                done = done.max(self.collect(plane, ready, GC_RESERVE_BLOCKS + 1));
            }
            done = done.max(self.reclaim_block(block, plane, ready));
        }
        done
    }

    /// Postponed reclaims (`reliability.reclaim_when = "idle"`), oldest first, each started
    /// when its die is idle in `[from, until)`; blocks erased since they became due are dropped.
    /// A block whose die stays busy waits for the next window (or its deadline, at a read).
    pub(super) fn reclaim_idle(&mut self, from: u64, until: u64) {
        let mut i = 0;
        while i < self.postponed.len() && self.death.is_none() {
            let (block, erases) = self.postponed[i];
            let state = self.blocks.state[block as usize];
            if self.flash.erase_count(block) != erases || !matches!(state, BlockState::Full | BlockState::Open) {
                self.postponed.remove(i);
                continue;
            }
            let Some(start) = self.sched.idle_start(self.die_of_block(block), from, until) else {
                i += 1;
                continue;
            };
            self.postponed.remove(i);
            self.counters.reclaims_in_idle += 1;
            self.reclaim_queue.push(block);
            self.reclaim_pending(start);
        }
    }

    /// Reclaim one block: a full one is cleaned; an open one (a read-only workload never fills
    /// it) is closed first, its buffered page's units coming from the controller.
    pub(super) fn reclaim_block(&mut self, block: u32, plane: u32, ready: Done) -> Done {
        match self.blocks.state[block as usize] {
            BlockState::Full => {
                self.counters.reclaimed_blocks += 1;
                self.clean(block, plane, ready, Cause::Reclaim)
            }
            BlockState::Open => {
                let pool = &mut self.pools[plane as usize];
                let Some(stream) = pool.stream_in(block) else {
                    return ready;
                };
                let a = pool.active[stream];
                pool.active[stream] = Active::CLOSED;
                self.blocks.state[block as usize] = BlockState::Cleaning;
                self.counters.reclaimed_blocks += 1;
                let moved = self.relocate_block(block, (a.slot > 0).then_some(a.page), ready, Cause::Reclaim);
                if self.death.is_some() {
                    return moved;
                }
                self.erase_block(block, ready, Cause::Reclaim).max(moved)
            }
            _ => ready,
        }
    }

    /// Static wear leveling: find the pool's least-erased full block and queue it for a move
    /// when the policy says it lags too far behind.
    pub(super) fn check_cold(&mut self, plane: u32) {
        if self.wl.migrate_young(0.0, 0.0).is_some() {
            return self.check_young(plane); // levels remaining life (wear_level.rs)
        }
        let lo = plane * self.geo.blocks_per_plane;
        let spare = self.spare_units();
        // A block whose erase the drive cannot afford (the victim policy knows: ZombieNAND's
        // bit drops) is not moved: levelling it would end the drive.
        let coldest = (lo..lo + self.geo.blocks_per_plane)
            .filter(|&b| self.blocks.state[b as usize] == BlockState::Full && self.victim.erase_affordable(b, spare))
            .min_by_key(|&b| self.flash.erase_count(b));
        if let Some(b) = coldest {
            if self.wl.migrate_cold(self.flash.erase_count(b), self.pool_wear(plane)) && !self.cold_queue.contains(&b) {
                self.cold_queue.push(b);
            }
        }
    }
}
