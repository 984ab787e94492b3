//! The block table: per block (or, in the open-channel host FTL, per chunk) its valid units,
//! the units it can hold, its life-cycle state and when it was closed. Both FTLs keep their
//! blocks in one, tell the victim policy through it when a block fills up or loses a valid
//! unit, and GC victim policies read it (`view`).

use super::victim::{VictimPolicy, VictimView};
use super::BlockState;

/// Per-block bookkeeping, indexed by block (chunk) number. `S` is the FTL's own life-cycle
/// state type.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BlockTable<S> {
    /// Valid mapping units in each block.
    pub valid: Vec<u32>,
    /// Units each block can hold (its bit mode and bad pages taken into account).
    pub capacity: Vec<u32>,
    /// Units each block cannot hold because of its bad pages (at its bit mode): erasing the
    /// block never gives them back, so victim policies count them with the valid units.
    pub lost: Vec<u32>,
    pub state: Vec<S>,
    /// The order blocks were closed in (`seq` when each was), for age-based victim policies.
    pub closed_seq: Vec<u64>,
    pub seq: u64,
}

impl<S: Copy> BlockTable<S> {
    /// `blocks` blocks of `capacity` units each, all in `state`.
    pub fn new(blocks: u32, capacity: u32, state: S) -> Self {
        let n = blocks as usize;
        BlockTable {
            valid: vec![0; n],
            capacity: vec![capacity; n],
            lost: vec![0; n],
            state: vec![state; n],
            closed_seq: vec![0; n],
            seq: 0,
        }
    }

    /// `block` was filled: it takes state `full` and the next place in closing order.
    pub fn close(&mut self, block: u32, full: S) {
        self.state[block as usize] = full;
        self.seq += 1;
        self.closed_seq[block as usize] = self.seq;
    }

    /// What a victim policy may look at.
    pub fn view(&self) -> VictimView<'_> {
        VictimView {
            valid: &self.valid,
            capacity: &self.capacity,
            lost: &self.lost,
            closed_seq: &self.closed_seq,
            now_seq: self.seq,
            spare_units: u64::MAX,
        }
    }

    /// Units of `block` that hold no valid data.
    pub fn invalid(&self, block: u32) -> u32 {
        self.capacity[block as usize].saturating_sub(self.valid[block as usize])
    }

    /// What victim policies rank `block` by: the units cleaning it would not free, its valid
    /// units plus those on its bad pages. Without bad pages this is the valid count; with
    /// them, a salvaged block that holds fewer pages ranks by what erasing it gains (its usable
    /// pages' invalid units), not by its valid units alone (salvage paper, Section IV).
    #[inline]
    pub fn victim_key(&self, block: u32) -> u32 {
        self.valid[block as usize] + self.lost[block as usize]
    }

    /// `block` (in pool `pool`) is no longer a GC candidate (chosen as a victim, recycled).
    /// Candidates are told to the victim policy only through the table, so the policy always
    /// hears a block's victim key, never its bare valid count (a mismatch unlinks the block
    /// from the wrong bucket and leaves it a candidate after it is erased).
    pub fn withdraw(&self, block: u32, pool: u32, victim: &mut dyn VictimPolicy) {
        victim.remove(block, pool, self.victim_key(block));
    }

    /// `block` lost `units` to a bad page: its capacity shrinks and the victim key keeps
    /// counting them. Called while the block is open (being programmed), so it is no GC
    /// candidate and no policy has to be told.
    pub fn lose_units(&mut self, block: u32, units: u32) {
        self.capacity[block as usize] -= units;
        self.lost[block as usize] += units;
    }
}

impl BlockTable<BlockState> {
    /// A unit of `block` (in pool `pool`) no longer holds valid data: its valid count falls,
    /// and a GC candidate's new count goes to the victim policy.
    #[inline]
    pub fn unit_invalid(&mut self, block: u32, pool: u32, victim: &mut dyn VictimPolicy) {
        let old = self.victim_key(block);
        self.valid[block as usize] -= 1;
        if self.state[block as usize] == BlockState::Full {
            victim.update(block, pool, old, old - 1);
        }
    }

    /// `block` (in pool `pool`), full and set aside (held by a technique), is a GC candidate
    /// again, in its old place in closing order.
    pub fn reinstate(&mut self, block: u32, pool: u32, victim: &mut dyn VictimPolicy) {
        self.state[block as usize] = BlockState::Full;
        victim.insert(block, pool, self.victim_key(block));
    }

    /// `block` (in pool `pool`) was filled: it becomes a GC candidate.
    pub fn close_full(&mut self, block: u32, pool: u32, victim: &mut dyn VictimPolicy) {
        self.close(block, BlockState::Full);
        victim.insert(block, pool, self.victim_key(block));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_orders_blocks_and_the_view_shows_the_table() {
        let mut t = BlockTable::new(4, 10, 'f');
        t.valid[2] = 7;
        t.close(2, 'F');
        t.close(0, 'F');
        assert_eq!((t.state[2], t.closed_seq[2], t.closed_seq[0], t.seq), ('F', 1, 2, 2));
        assert_eq!(t.state[1], 'f');
        assert_eq!(t.invalid(2), 3);
        let v = t.view();
        assert_eq!((v.valid[2], v.capacity[3], v.closed_seq[0], v.now_seq), (7, 10, 2, 2));
    }

    /// Invariant: the table keeps the victim policy told. Greedy picks the candidate with the
    /// fewest valid units, so the block that lost most units since both filled up is chosen.
    #[test]
    fn filling_and_invalidating_keep_the_victim_policy_told() {
        let mut t = BlockTable::new(4, 8, BlockState::Free);
        let mut v = crate::ftl::victim::build(
            crate::config::VictimName::Baseline(crate::config::VictimKind::Greedy),
            1,
            4,
            1,
            8,
            1,
        )
        .unwrap();
        t.valid[0] = 8;
        t.valid[1] = 8;
        t.close_full(0, 0, v.as_mut());
        t.close_full(1, 0, v.as_mut());
        t.unit_invalid(1, 0, v.as_mut());
        t.unit_invalid(1, 0, v.as_mut());
        assert_eq!((t.valid[1], t.state[1]), (6, BlockState::Full));
        assert_eq!(v.select(0, &t.view(), &mut |_| true), Some(1));
        for _ in 0..3 {
            t.unit_invalid(0, 0, v.as_mut());
        }
        assert_eq!(v.select(0, &t.view(), &mut |_| true), Some(0));
    }

    /// Greedy's aim is the victim whose cleaning frees the most units. A block that lost
    /// three of its eight units to bad pages and holds four valid ones frees one; a whole
    /// block with five valid frees three. Ranked by valid units alone (as before the key) the
    /// first would win.
    #[test]
    fn a_block_with_bad_pages_ranks_by_what_cleaning_it_frees() {
        let mut t = BlockTable::new(2, 8, BlockState::Free);
        let mut v = crate::ftl::victim::build(
            crate::config::VictimName::Baseline(crate::config::VictimKind::Greedy),
            1,
            2,
            1,
            8,
            1,
        )
        .unwrap();
        t.lose_units(0, 3);
        t.valid[0] = 5;
        t.valid[1] = 8;
        t.close_full(0, 0, v.as_mut());
        t.close_full(1, 0, v.as_mut());
        t.unit_invalid(0, 0, v.as_mut());
        for _ in 0..3 {
            t.unit_invalid(1, 0, v.as_mut());
        }
        assert_eq!((t.valid[0], t.invalid(0), t.valid[1], t.invalid(1)), (4, 1, 5, 3));
        assert_eq!(v.select(0, &t.view(), &mut |_| true), Some(1));
        assert_eq!((t.view().key(0), t.view().key(1)), (7, 5));
    }
}
