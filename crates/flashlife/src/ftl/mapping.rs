//! The mapping: logical unit -> slot (`l2p`) and back (`p2l`) in [`Mapping`], with each
//! block's count of valid units; forgetting a unit's old copy on an overwrite; prefetching map entries ahead
//! of their use (see `prefetch.rs`).

use super::*;

/// The two maps, kept in step (the block FTL's and the open-channel host FTL's): `l2p[lpn]` is the slot holding logical unit `lpn` (or
/// [`UNMAPPED`]), `p2l[slot]` the unit a slot holds (or [`UNMAPPED`]). A Reusable SSD second
/// write is the one place a unit has two slots: both name it in `p2l`, `l2p` names the first.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Mapping {
    l2p: Vec<u32>,
    p2l: Vec<u32>,
}

impl Mapping {
    /// Every unit and slot unmapped (the maps get transparent huge pages where the OS allows).
    pub fn new(logical_units: u32, slots: u64) -> Mapping {
        Mapping {
            l2p: prefetch::map_vec(logical_units as usize, UNMAPPED),
            p2l: prefetch::map_vec(slots as usize, UNMAPPED),
        }
    }

    /// The slot of logical unit `lpn`, or [`UNMAPPED`].
    #[inline]
    pub fn slot(&self, lpn: u32) -> u32 {
        self.l2p[lpn as usize]
    }

    /// The logical unit `slot` holds, or [`UNMAPPED`].
    #[inline]
    pub fn owner(&self, slot: u32) -> u32 {
        self.p2l[slot as usize]
    }

    /// Point `lpn` at `slot` (or [`UNMAPPED`]); the reverse map is the caller's to set.
    #[inline]
    pub fn point(&mut self, lpn: u32, slot: u32) {
        self.l2p[lpn as usize] = slot;
    }

    /// Record that `slot` holds `lpn` (or nothing: [`UNMAPPED`]).
    #[inline]
    pub fn claim(&mut self, slot: u32, lpn: u32) {
        self.p2l[slot as usize] = lpn;
    }

    /// Map `lpn` to `slot` both ways.
    #[inline]
    pub fn bind(&mut self, lpn: u32, slot: u32) {
        self.point(lpn, slot);
        self.claim(slot, lpn);
    }

    /// Request the cache line of `lpn`'s entry (changes nothing).
    #[inline]
    pub fn prefetch_unit(&self, lpn: u32) {
        prefetch::prefetch(&self.l2p, lpn as usize);
    }

    /// Request the cache line of `slot`'s entry (changes nothing).
    #[inline]
    pub fn prefetch_slot(&self, slot: u32) {
        prefetch::prefetch(&self.p2l, slot as usize);
    }

    /// Request the map entries of the units the `n` slots from `first` hold (a page GC is
    /// about to move). Changes nothing.
    #[inline]
    pub fn prefetch_owners(&self, first: u32, n: u32) {
        for slot in first..first + n {
            let lpn = self.owner(slot);
            if lpn != UNMAPPED {
                self.prefetch_unit(lpn);
            }
        }
    }

    /// Bytes the maps hold.
    pub fn bytes(&self) -> u64 {
        4 * (self.l2p.len() + self.p2l.len()) as u64
    }
}

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
        let slot = self.map.slot(lpn);
        if slot == UNMAPPED {
            return;
        }
        if self.sw.is_some() {
            self.unlink_second_half(slot);
        }
        self.map.point(lpn, UNMAPPED);
        self.map.claim(slot, UNMAPPED);
        let b = self.block_of(slot);
        self.note_page_invalid(b);
        let plane = self.plane_of_block(b);
        self.blocks.unit_invalid(b, plane, self.victim.as_mut());
        self.pools[plane as usize].own.exhausted = false;
    }

    /// Prefetch the map entries of logical units `first..first + units` (a request a few
    /// requests ahead; see `prefetch.rs`). Changes nothing.
    #[inline]
    pub fn prefetch_map(&self, first: u32, units: u32) {
        let last = first.saturating_add(units.min(prefetch::HOST_PREFETCH_UNITS));
        let mut lpn = first;
        while lpn < last {
            self.map.prefetch_unit(lpn);
            lpn = (lpn | 15) + 1; // one request per cache line of 16 entries
        }
        if last > first {
            self.map.prefetch_unit(last - 1);
        }
    }

    /// Prefetch the reverse-map entries of the slots units `first..first + units` are mapped
    /// to now (the next request: its map entries were prefetched earlier). Changes nothing.
    #[inline]
    pub fn prefetch_slots(&self, first: u32, units: u32) {
        let last = first.saturating_add(units.min(prefetch::HOST_PREFETCH_UNITS));
        for lpn in first..last.min(self.logical_units) {
            let slot = self.map.slot(lpn);
            if slot != UNMAPPED {
                self.map.prefetch_slot(slot);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: bound units and slots name each other; unbinding leaves both unmapped.
    #[test]
    fn the_maps_stay_in_step() {
        let mut m = Mapping::new(8, 16);
        assert!((0..8).all(|l| m.slot(l) == UNMAPPED) && (0..16).all(|s| m.owner(s) == UNMAPPED));
        m.bind(3, 11);
        m.bind(5, 2);
        assert_eq!((m.slot(3), m.owner(11), m.slot(5), m.owner(2)), (11, 3, 2, 5));
        m.point(3, UNMAPPED);
        m.claim(11, UNMAPPED);
        assert_eq!((m.slot(3), m.owner(11)), (UNMAPPED, UNMAPPED));
        assert_eq!(m.bytes(), 4 * (8 + 16));
    }
}
