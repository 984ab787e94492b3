//! Cleaning, written once for both FTLs: a block emptied as a resumable job (move its valid
//! units a page at a time, then erase it), and the GC loop that picks victims and cleans them
//! until a pool has the free blocks it needs.
//!
//! An FTL takes part by implementing [`Cleaner`]: where its slots are, how a page's data is
//! read for a move and where a unit moves to, what happens to an emptied block, and which
//! victim to take. The block FTL (`Ftl`) and the open-channel host FTL
//! (`host::open_channel`) both do; the job, the victim loop and the start of a cleaning are
//! the trait's own methods.
//!
//! Each [`Cleaner::step_job`] does one piece of work (one page's valid units moved, or the
//! erase) and says whether more is left, so a scheduler that interleaves GC with host work can
//! advance a job between host operations and preempt it between pages. Under the queued
//! scheduler the block FTL's soft-threshold and idle-window GC, failed blocks and reclaim
//! (levelling moves stay at once: `chores.rs`), and the open-channel host FTL's soft-threshold GC, are stepped that way, a page
//! when a die has room (`gc_steps.rs`, `chores.rs`, `gc_debt.rs`); every other caller (the
//! reservation scheduler, fast-forward, the hard threshold) runs a job to its end at once
//! ([`Cleaner::run_job`]), in the order the work was always done, so those results are those
//! of the whole-block relocation the job replaced.

use super::victim::VictimPolicy;
use super::{prefetch, BlockTable, Mapping, UNMAPPED};
use crate::stats::{Cause, FlashCounters};
use crate::timing::Done;

/// Where a cleaning job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Phase {
    /// Moving valid units; `page` is the next page to look at.
    Move,
    /// Every valid unit moved: erase next.
    Erase,
    Finished,
}

/// A block being emptied (and, for GC, erased).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct CleanJob {
    pub(crate) block: u32,
    /// The block's pool: its units move into this pool's GC stream when it has room.
    pub(crate) plane: u32,
    page: u32,
    /// A page whose data is still in the controller (its program failed), not on the flash.
    pub(crate) buffered: Option<u32>,
    pub(crate) cause: Cause,
    /// When the job's work may start.
    pub(crate) ready: Done,
    /// When its work so far finishes.
    done: Done,
    /// Units per page of the block (at its mode, which a job does not change).
    pub(crate) upp: u32,
    /// Erase the block once its data is moved (false: the caller retires it).
    erase: bool,
    phase: Phase,
    /// Pages ahead whose map entries are requested before they are needed.
    ahead: u32,
}

/// How a block's slots are laid out: slot `block * slots_per_block + page * stride + s` for
/// `s < upp`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockShape {
    /// Units per page of the block (at its mode).
    pub upp: u32,
    pub slots_per_block: u32,
    /// Slots from one page to the next.
    pub stride: u32,
    pub pages: u32,
}

/// What cleaning needs from an FTL (see the module docs).
pub(crate) trait Cleaner {
    /// The FTL's block life-cycle state.
    type State: Copy;
    /// The state of a block being cleaned (neither free nor a GC candidate).
    const CLEANING: Self::State;

    /// The map, the block table and the victim policy.
    fn parts(&self) -> (&Mapping, &BlockTable<Self::State>, &dyn VictimPolicy);
    fn parts_mut(&mut self) -> (&mut BlockTable<Self::State>, &mut dyn VictimPolicy);
    fn counters_mut(&mut self) -> &mut FlashCounters;
    /// Has the drive died?
    fn dead(&self) -> bool;
    /// The pool `block` belongs to, and the blocks of a pool.
    fn pool_of(&self, block: u32) -> u32;
    fn blocks_per_pool(&self) -> u32;
    /// Free blocks in `pool`.
    fn free_in(&self, pool: u32) -> usize;
    fn shape(&self, block: u32) -> BlockShape;

    /// The GC victim of `pool`, if it has a candidate.
    fn select_victim(&mut self, pool: u32) -> Option<u32>;
    /// Would cleaning `block` free nothing (every unit it can hold is valid)?
    fn gains_nothing(&self, block: u32) -> bool {
        let (_, t, _) = self.parts();
        t.valid[block as usize] >= t.capacity[block as usize]
    }
    /// After a victim of `pool` was cleaned in a GC episode that aims at `target` free blocks:
    /// work the FTL owes for it. Returns when that work finishes (`ready`: none).
    fn after_victim(&mut self, _pool: u32, ready: Done, _target: usize) -> Done {
        ready
    }

    /// The data of page `page` of the job's block (first slot `first`, `n` valid units) for a
    /// move: when it is ready, and the cause its moves count under.
    fn read_for_move(&mut self, job: &CleanJob, page: u32, first: u32, n: u32) -> (Done, Cause);
    /// Move valid unit `lpn` out of slot `from` (its data ready at `ready`), preferably into
    /// `pool`'s GC stream. Returns when it is safe.
    fn relocate_unit(&mut self, lpn: u32, from: u32, pool: u32, ready: Done, cause: Cause) -> Done;
    /// A job for `cause` moved logical unit `lpn` (an account by logical range; nothing by default).
    #[inline]
    fn note_moved(&mut self, _lpn: u32, _cause: Cause) {}
    /// Every valid unit of the job's block has moved. Returns when any work owed for the
    /// moves finishes (`job.ready`: none).
    fn moved_all(&mut self, job: &CleanJob) -> Done {
        job.ready
    }
    /// Erase the emptied `block` (or retire it). Returns when that finishes.
    fn erase_cleaned(&mut self, block: u32, ready: Done, cause: Cause) -> Done;

    /// A job emptying `block` of its valid units from `ready` on (erasing it at the end when
    /// `erase`). The block must already be out of the victim policy's candidates.
    fn start_job(&mut self, block: u32, buffered: Option<u32>, ready: Done, cause: Cause, erase: bool) -> CleanJob {
        let sh = self.shape(block);
        let ahead = prefetch::GC_PREFETCH_UNITS.div_ceil(sh.upp.max(1));
        let base = block * sh.slots_per_block;
        let (map, _, _) = self.parts();
        for page in 0..ahead.min(sh.pages) {
            map.prefetch_owners(base + page * sh.stride, sh.upp);
        }
        CleanJob {
            block,
            plane: self.pool_of(block),
            page: 0,
            buffered,
            cause,
            ready,
            done: ready,
            upp: sh.upp,
            erase,
            phase: Phase::Move,
            ahead,
        }
    }

    /// Do the job's next piece of work: move the valid units of its next page that holds
    /// some, or erase the block. Returns false once nothing is left (or the drive died).
    fn step_job(&mut self, job: &mut CleanJob) -> bool {
        match job.phase {
            Phase::Move => {
                self.move_next_page(job);
                if self.dead() {
                    job.phase = Phase::Finished;
                }
            }
            Phase::Erase => {
                job.done = job.done.max(self.erase_cleaned(job.block, job.ready, job.cause));
                job.phase = Phase::Finished;
            }
            Phase::Finished => {}
        }
        job.phase != Phase::Finished
    }

    /// Run a job to its end; returns when its last operation finishes.
    fn run_job(&mut self, mut job: CleanJob) -> Done {
        while self.step_job(&mut job) {}
        job.done
    }

    /// Move the units of the job's next page that holds valid ones; past the last page (or
    /// once the block holds nothing valid), go on to the erase.
    fn move_next_page(&mut self, job: &mut CleanJob) {
        let block = job.block;
        let sh = self.shape(block);
        let base = block * sh.slots_per_block;
        while job.page < sh.pages && self.parts().1.valid[block as usize] > 0 {
            let page = job.page;
            job.page += 1;
            let map = self.parts().0;
            if page + job.ahead < sh.pages {
                map.prefetch_owners(base + (page + job.ahead) * sh.stride, sh.upp);
            }
            let first = base + page * sh.stride;
            let n = (0..sh.upp).filter(|&s| map.owner(first + s) != UNMAPPED).count() as u32;
            if n == 0 {
                continue;
            }
            let (data_ready, cause) = self.read_for_move(job, page, first, n);
            for s in 0..sh.upp {
                let from = first + s;
                let lpn = self.parts().0.owner(from);
                if lpn == UNMAPPED {
                    continue;
                }
                self.note_moved(lpn, job.cause);
                job.done = job.done.max(self.relocate_unit(lpn, from, job.plane, data_ready, cause));
                if self.dead() {
                    return;
                }
            }
            return; // one page per step
        }
        job.done = job.done.max(self.moved_all(job));
        job.phase = if job.erase { Phase::Erase } else { Phase::Finished };
    }

    /// Take `block` out of the candidates, move its data away and erase it.
    fn clean(&mut self, block: u32, pool: u32, ready: Done, cause: Cause) -> Done {
        let (t, victim) = self.parts_mut();
        t.withdraw(block, pool, victim);
        t.state[block as usize] = Self::CLEANING;
        let job = self.start_job(block, None, ready, cause, true);
        self.run_job(job)
    }

    /// Clean victims of `pool` until it has `target` free blocks or nothing can be gained.
    /// Returns when the last cleaning finishes.
    fn collect_victims(&mut self, pool: u32, ready: Done, target: usize) -> Done {
        let mut done = ready;
        // Policies that do not pick the emptiest block (FIFO, random) may pick one with no
        // invalid data: cleaning it gains nothing but moves the log on. Give up after a whole
        // pool's worth of such picks in a row.
        let mut fruitless = 0;
        while self.free_in(pool) < target && !self.dead() {
            let Some(v) = self.select_victim(pool) else { break };
            let valid = self.parts().1.valid[v as usize];
            if self.gains_nothing(v) {
                fruitless += 1;
                if self.parts().2.chooses_least_valid() || fruitless > self.blocks_per_pool() {
                    break; // nothing to gain: every candidate is full of valid data
                }
            } else {
                fruitless = 0;
            }
            done = done.max(self.clean(v, pool, ready, Cause::Gc));
            let c = self.counters_mut();
            c.gc_victims += 1;
            c.gc_valid_moved += valid as u64;
            done = done.max(self.after_victim(pool, ready, target));
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::BlockState;

    /// Invariant: a job advanced a page at a time, with host overwrites between its steps (as
    /// a scheduler that preempts GC would interleave them), loses nothing and ends with the
    /// block erased and free.
    #[test]
    fn a_job_resumes_between_pages_and_loses_nothing() {
        let mut ftl = super::super::tests::full_tiny_drive_with_oracle();
        let plane = 0;
        let victim = ftl.select_victim(plane).unwrap();
        let valid = ftl.blocks.valid[victim as usize];
        assert!(valid > 0, "the victim should hold data to move");
        ftl.blocks.withdraw(victim, plane, ftl.victim.as_mut());
        ftl.blocks.state[victim as usize] = BlockState::Cleaning;
        let upp = ftl.upp_by_mode[ftl.flash.mode(victim).index()];
        let mut job = ftl.start_job(victim, None, Done::START, Cause::Gc, true);
        let (mut steps, mut last) = (0u32, valid);
        let n = ftl.logical_units();
        while ftl.step_job(&mut job) {
            steps += 1;
            let now = ftl.blocks.valid[victim as usize];
            assert!(last - now <= upp, "one step moves at most one page's units ({} -> {now})", last);
            last = now;
            for i in 0..3 {
                ftl.write((steps * 131 + i * 17) % n, 1, Done::START);
            }
        }
        assert!(steps >= 2, "the job took {steps} steps: not resumable in pieces");
        assert_eq!(ftl.block_state(victim), BlockState::Free);
        assert_eq!(ftl.blocks.valid[victim as usize], 0);
        assert_eq!(ftl.verify_all(), None);
        assert_eq!(ftl.integrity_violation(), None);
    }
}
