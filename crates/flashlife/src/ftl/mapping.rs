//! The mapping: logical unit -> slot (`l2p`) and back (`p2l`), with each block's count of
//! valid units; forgetting a unit's old copy on an overwrite; prefetching map entries ahead
//! of their use (see `prefetch.rs`).

use super::*;

impl Ftl {
    #[inline]
    pub(super) fn block_of(&self, slot: u32) -> u32 {
        self.div.slots_per_block.div(slot)
    }

    #[inline]
    pub(super) fn page_of(&self, slot: u32) -> u32 {
        self.div.max_upp.div(self.div.slots_per_block.div_rem(slot).1)
    }

    /// Forget the mapping of `lpn` (its data is being overwritten).
    #[inline]
    pub(super) fn invalidate(&mut self, lpn: u32) {
        let slot = self.l2p[lpn as usize];
        if slot == UNMAPPED {
            return;
        }
        if self.sw.is_some() {
            self.unlink_second_half(slot);
        }
        self.l2p[lpn as usize] = UNMAPPED;
        self.p2l[slot as usize] = UNMAPPED;
        let b = self.block_of(slot);
        self.note_page_invalid(b);
        let old = self.valid[b as usize];
        self.valid[b as usize] = old - 1;
        let plane = self.plane_of_block(b);
        if self.state[b as usize] == BlockState::Full {
            self.victim.update(b, plane, old, old - 1);
        }
        self.pools[plane as usize].exhausted = false;
    }

    /// Prefetch the map entries of logical units `first..first + units` (a request a few
    /// requests ahead; see `prefetch.rs`). Changes nothing.
    #[inline]
    pub fn prefetch_map(&self, first: u32, units: u32) {
        let last = first.saturating_add(units.min(prefetch::HOST_PREFETCH_UNITS));
        let mut lpn = first;
        while lpn < last {
            prefetch::prefetch(&self.l2p, lpn as usize);
            lpn = (lpn | 15) + 1; // one request per cache line of 16 entries
        }
        if last > first {
            prefetch::prefetch(&self.l2p, last as usize - 1);
        }
    }

    /// Prefetch the reverse-map entries of the slots units `first..first + units` are mapped
    /// to now (the next request: its map entries were prefetched earlier). Changes nothing.
    #[inline]
    pub fn prefetch_slots(&self, first: u32, units: u32) {
        let last = first.saturating_add(units.min(prefetch::HOST_PREFETCH_UNITS));
        for lpn in first..last.min(self.logical_units) {
            let slot = self.l2p[lpn as usize];
            if slot != UNMAPPED {
                prefetch::prefetch(&self.p2l, slot as usize);
            }
        }
    }

    /// Prefetch the map entries of the valid units in the `upp` slots from `first`.
    #[inline]
    pub(super) fn prefetch_page_map(&self, first: u32, upp: u32) {
        for slot in first..first + upp {
            let lpn = self.p2l[slot as usize];
            if lpn != UNMAPPED {
                prefetch::prefetch(&self.l2p, lpn as usize);
            }
        }
    }
}
