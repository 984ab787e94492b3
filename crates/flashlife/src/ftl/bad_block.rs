//! Bad-block management: what a failed page program does (`failures.on_program_failure`), and
//! which pages of a block allocation may use.
//!
//! The policy decides ([`BadBlockPolicy`]); the FTL carries the decision out:
//! * [`FailureAction::RetireBlock`] ([`RetireOnFailure`], `retire_block`, the baseline): the
//!   block is closed, its data moved, the block retired. Every page of a block in service is
//!   usable.
//! * [`FailureAction::SkipPage`] (a technique's policy, e.g. runtime bad-block salvage,
//!   `techniques::salvage`): the write is retried at the next usable page of the same block
//!   (`skip_failed_page`), and allocation skips the pages the policy reports bad on every later
//!   use of the block. A block's capacity shrinks by its bad pages.
//!
//! The FTL asks the policy for the next usable page whenever it opens a block or finishes a
//! page, so the baseline pays one virtual call returning its argument.

use std::any::Any;

use serde::Serialize;

use super::{Active, BlockState, Ftl, Stream, UNMAPPED};
use crate::stats::Cause;
use crate::timing::Done;

/// What the FTL does with a block whose page failed to program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FailureAction {
    /// Close the block, move its data, retire it.
    RetireBlock,
    /// The page is recorded bad: retry the write at the block's next usable page.
    SkipPage,
}

/// Bad-block and bad-page counters for the summary (`failures.*`) and the techniques'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct BadBlockStats {
    /// Pages known bad: recorded by a policy that skips them, or whose failure retired their
    /// block (baseline), since the drive was new (preconditioning included).
    pub bad_pages: u64,
    /// Blocks that ever had a failed page program (kept in service or retired for it).
    pub bad_blocks: u64,
    /// Failed writes retried at the next usable page of the same block.
    pub skip_retries: u64,
    /// Units of failed pages whose block had no usable page left, placed in another block.
    pub rehomed_units: u64,
}

/// A bad-block management policy.
#[typetag::serde]
pub trait BadBlockPolicy: Send {
    /// A program of `page` in `block` failed (status register): record it, say what to do.
    fn on_program_failure(&mut self, block: u32, page: u32) -> FailureAction;
    /// The first page at or after `page` that may be programmed, `None` past the last one.
    fn next_usable_page(&self, block: u32, page: u32) -> Option<u32>;
    /// Pages of `block` that can never be used (its capacity is the others).
    fn bad_pages(&self, block: u32) -> u32;
    /// `block` is retired for good.
    fn on_retire(&mut self, block: u32);
    /// Counters for the summary (`bad_pages`, `bad_blocks`; the FTL adds its own).
    fn stats(&self) -> BadBlockStats;
    /// The policy itself, for its technique to read its own state back (its summary section).
    fn as_any(&self) -> &dyn Any;
}

/// The baseline: a block whose program fails is retired.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RetireOnFailure {
    pages_per_block: u32,
    failed: u64,
}

impl RetireOnFailure {
    pub fn new(pages_per_block: u32) -> Self {
        RetireOnFailure { pages_per_block, failed: 0 }
    }
}

#[typetag::serde]
impl BadBlockPolicy for RetireOnFailure {
    fn on_program_failure(&mut self, _block: u32, _page: u32) -> FailureAction {
        self.failed += 1;
        FailureAction::RetireBlock
    }

    #[inline]
    fn next_usable_page(&self, _block: u32, page: u32) -> Option<u32> {
        (page < self.pages_per_block).then_some(page)
    }

    fn bad_pages(&self, _block: u32) -> u32 {
        0
    }

    fn on_retire(&mut self, _block: u32) {}

    fn stats(&self) -> BadBlockStats {
        // A block is closed at its first failure and never programmed again: one failure, one block.
        BadBlockStats { bad_pages: self.failed, bad_blocks: self.failed, ..Default::default() }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// FTL state of skipped pages: failed pages waiting for their data to be placed elsewhere,
/// and counters.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct SkipState {
    /// (block, page) of failed pages with no usable page left in their block.
    rehome_queue: Vec<(u32, u32)>,
    skip_retries: u64,
    rehomed_units: u64,
}

impl Ftl {
    /// A program of the open page of `plane`'s `stream` block failed and the policy skips the
    /// page: the page's units (still in the controller) move to the next usable page of the
    /// same block, whose program the caller retries at once (returns `true`). With no usable
    /// page left, the block is set aside and the units are placed elsewhere in `settle`
    /// (returns `false`). The unit whose arrival filled the page (the last slot) has not been
    /// told to the oracle yet: the caller reads its final slot from the map.
    pub(super) fn skip_failed_page(&mut self, plane: u32, stream: Stream) -> bool {
        let a = self.pools[plane as usize].active[stream as usize];
        let block = a.block;
        // The block loses a page of capacity for good.
        self.blocks.lose_units(block, a.upp);
        self.live_units -= a.upp as u64;
        self.check_capacity();
        let base = block * self.slots_per_block;
        match self.bad_blocks.next_usable_page(block, a.page + 1) {
            Some(next) => {
                for s in 0..a.upp {
                    let from = base + a.page * self.max_upp + s;
                    let to = base + next * self.max_upp + s;
                    let lpn = self.map.owner(from);
                    if lpn == UNMAPPED {
                        continue; // overwritten while the page was open
                    }
                    self.map.claim(from, UNMAPPED);
                    self.map.bind(lpn, to);
                    if s + 1 < a.upp {
                        if let Some(o) = &mut self.oracle {
                            o.relocate(lpn, from, lpn, to);
                        }
                    }
                }
                self.pools[plane as usize].active[stream as usize].page = next;
                self.skipped.skip_retries += 1;
                true
            }
            None => {
                self.pools[plane as usize].active[stream as usize] = Active::CLOSED;
                self.blocks.state[block as usize] = BlockState::Cleaning;
                self.skipped.rehome_queue.push((block, a.page));
                false
            }
        }
    }

    /// Place the units of failed pages that had no good page left in their block (from the
    /// controller, cause `bad_block`), then return the blocks to service as full blocks.
    pub(super) fn rehome_skipped(&mut self, ready: Done) -> Done {
        let mut done = ready;
        while let Some((block, page)) = self.skipped.rehome_queue.pop() {
            let plane = self.geo.plane_of_block(block);
            let first = block * self.slots_per_block + page * self.max_upp;
            for s in 0..self.max_upp {
                let lpn = self.map.owner(first + s);
                if lpn != UNMAPPED {
                    self.skipped.rehomed_units += 1;
                    done = done.max(self.move_unit(lpn, first + s, plane, ready, Cause::BadBlock));
                    if self.death.is_some() {
                        return done;
                    }
                }
            }
            if self.blocks.state[block as usize] == BlockState::Cleaning {
                self.close_block(block, plane);
            }
        }
        done
    }

    /// The block's capacity at `upp` units per page, bad pages left out.
    pub(super) fn usable_units(&self, block: u32, upp: u32) -> u32 {
        (self.geo.pages_per_block - self.bad_blocks.bad_pages(block)) * upp
    }

    /// The bad-block policy (its technique reads its own state back through `as_any`).
    pub fn bad_block_policy(&self) -> &dyn BadBlockPolicy {
        self.bad_blocks.as_ref()
    }

    /// Bad-block and bad-page counters.
    pub fn bad_block_stats(&self) -> BadBlockStats {
        let mut s = self.bad_blocks.stats();
        s.skip_retries = self.skipped.skip_retries;
        s.rehomed_units = self.skipped.rehomed_units;
        s
    }
}
