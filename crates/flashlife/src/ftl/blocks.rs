//! The block manager: what an erase does to a block (free again, retired, or a lower bit
//! mode, as the end-of-life policy says), retirement, and the capacity check that defines the
//! drive's death.

use super::*;

impl Ftl {
    /// Erase a block whose data has been moved and return it to its pool (or retire it, or
    /// change its mode, as the end-of-life policy says).
    pub(super) fn erase_block(&mut self, block: u32, ready: Done, cause: Cause) -> Done {
        debug_assert_eq!(self.blocks.valid[block as usize], 0);
        let plane = self.plane_of_block(block);
        let mode = self.flash.mode(block);
        let done = self.sched.submit(&Transaction::erase(self.die_of_block(block), block, mode, cause), ready);
        self.counters.block_erases.add(cause, 1);
        let status = self.flash.erase(block);
        self.pools[plane as usize].own.erase_sum += 1;
        if let Some(sw) = &mut self.sw {
            sw.on_erase(block);
        }
        match status {
            EraseStatus::Ok => self.make_free(block, plane),
            EraseStatus::Failed => {
                self.counters.erase_failures += 1;
                self.retire(block);
            }
            EraseStatus::WornOut => {
                self.counters.worn_out_blocks += 1;
                match self.end_of_life.next_mode(block, mode) {
                    Some(next) => {
                        self.counters.mode_switches += 1;
                        self.flash.set_mode(block, next);
                        let cap = self.usable_units(block, self.upp_by_mode[next.index()]);
                        self.live_units = self.live_units - self.blocks.capacity[block as usize] as u64 + cap as u64;
                        self.blocks.capacity[block as usize] = cap;
                        // Its bad pages hold as many units as a page at the new mode does.
                        self.blocks.lost[block as usize] =
                            self.bad_blocks.bad_pages(block) * self.upp_by_mode[next.index()];
                        self.check_capacity();
                        self.make_free(block, plane);
                    }
                    None => self.retire(block),
                }
            }
        }
        if self.blocks.state[block as usize] != BlockState::Retired {
            let life = self.flash.remaining_cycles(block);
            self.victim.erased(block, plane, self.blocks.capacity[block as usize], life);
        }
        done
    }

    pub(super) fn make_free(&mut self, block: u32, plane: u32) {
        self.blocks.state[block as usize] = BlockState::Free;
        let p = &mut self.pools[plane as usize];
        p.free.push_back(block);
        p.own.erases_since_check += 1;
        let interval = self.wl.check_interval();
        if interval > 0 && p.own.erases_since_check >= interval {
            p.own.erases_since_check = 0;
            self.check_cold(plane);
        }
    }

    pub(super) fn retire(&mut self, block: u32) {
        let plane = self.geo.plane_of_block(block);
        self.blocks.state[block as usize] = BlockState::Retired;
        self.counters.retired_blocks += 1;
        self.live_units -= self.blocks.capacity[block as usize] as u64;
        let p = &mut self.pools[plane as usize];
        p.own.live_blocks -= 1;
        p.own.erase_sum -= self.flash.erase_count(block) as u64;
        self.victim.erased(block, plane, 0, 0.0);
        self.bad_blocks.on_retire(block);
        self.check_capacity();
    }

    /// Units the live blocks hold beyond what the drive needs: an erase that costs more
    /// capacity than this ends it (`check_capacity`).
    pub(super) fn spare_units(&self) -> u64 {
        self.live_units.saturating_sub(self.required_units)
    }

    pub(super) fn check_capacity(&mut self) {
        if self.live_units < self.required_units {
            let (live, need) = (self.live_units, self.required_units);
            self.die(format!(
                "live blocks hold {live} units, fewer than the {need} the logical space and GC reserve need"
            ));
        }
    }
}
