//! Cleaning owed and stepped, written once for both FTLs: what a pool owes, which of a die's
//! pools steps next, when a die's cleaning is urgent and at what pace, and the next victim a
//! stepped clean-up takes.
//!
//! Under the queued scheduler a host block opened below the low watermark does not clean at
//! once: its pool owes cleaning ([`Debt`]) and the scheduler asks for a step when the die has
//! room for background work (the block FTL: `gc_steps.rs`; the open-channel host FTL:
//! `host/open_channel.rs`). An FTL takes part by implementing [`SteppedCleaner`] on top of
//! [`Cleaner`]: where its pools' debts and watermarks are, and which pools a die holds.

use std::ops::Range;

use super::gc_job::{CleanJob, Cleaner};
use super::pool::GC_RESERVE_BLOCKS;
use super::whole_drive::LogicalSpace;
use crate::stats::Cause;
use crate::timing::Done;

/// A pool's stepped cleaning: whether it owes any and up to how many free blocks, the victim
/// being cleaned, victims in a row that gained nothing, and the valid pages of the last
/// victim taken (the pace its die's cleaning needs near the reserve; 0 before the first).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Debt {
    pub owes: bool,
    pub target: usize,
    pub job: Option<CleanJob>,
    pub fruitless: u32,
    pub victim_pages: u32,
}

/// What stepped cleaning needs from an FTL beyond [`Cleaner`] (see the module docs).
pub(crate) trait SteppedCleaner: Cleaner + LogicalSpace {
    fn debt(&self, pool: u32) -> &Debt;
    fn debt_mut(&mut self, pool: u32) -> &mut Debt;
    /// The pool's high watermark (cleaning never owes beyond it).
    fn high_watermark(&self, pool: u32) -> usize;
    /// A clean-up of `pool` has ended: its watermarks learn its free blocks.
    fn mark_cleaned(&mut self, pool: u32);
    /// The pools of `die`, and the die of a pool.
    fn pools_of_die(&self, die: u32) -> Range<u32>;
    fn die_of_pool(&self, pool: u32) -> u32;
    fn pages_per_block(&self) -> u32;
    /// Cleaning is running (its moves must not ask for cleaning in turn), or has stopped.
    fn set_cleaning(&mut self, on: bool);

    /// `pool` owes cleaning up to `target` free blocks: its die will be asked to step it.
    fn owe_cleaning(&mut self, pool: u32, target: usize) {
        let d = self.debt_mut(pool);
        d.target = if d.owes { d.target.max(target) } else { target };
        d.owes = true;
        let die = self.die_of_pool(pool);
        self.scheduler_mut().cleaning_owed(die);
        self.reconsider_urgency(die);
    }

    /// A write is about to take a block of `pool` right after its clean-up at once (the hard
    /// threshold, which stops one block above the reserve): that block is owed back, as at the
    /// soft threshold, or the pool would sit at its reserve owing nothing and every later
    /// block taken there would wait for cleaning at once. Nothing is owed when the clean-up
    /// left the pool at its reserve: the write takes no block there. The one owe-back of the
    /// block FTL's host blocks and translation pages and the open-channel host FTL's chunks.
    fn owe_back_taken_block(&mut self, pool: u32) {
        let free = self.free_in(pool);
        if free > GC_RESERVE_BLOCKS {
            self.owe_cleaning(pool, free);
        }
    }

    /// Is `pool` cleaning before host writes: it owes cleaning with only one block left above
    /// its reserve.
    #[inline]
    fn urgent(&self, pool: u32) -> bool {
        self.debt(pool).owes && self.free_in(pool) <= GC_RESERVE_BLOCKS + 1
    }

    /// Tell the scheduler whether a pool of `die` owes cleaning with only one block left
    /// above its reserve: the next host block there would reach the reserve, where the write
    /// must wait for cleaning decided at once, so stepped cleaning goes first until it is
    /// further away (MQSim's urgent GC mode, at a plane's hard threshold).
    ///
    /// With it, the pace that keeps such a pool level (for a scheduler that paces cleaning
    /// there rather than serving it first): cleaning a victim of `v` valid pages of `n` takes
    /// `2v + 1` transactions (each page read and programmed, then the erase) and frees room
    /// for `n - v` host pages, so that many background transactions per host write keep the
    /// pool where it is. From the urgent pool's last victim (the one being cleaned, usually).
    /// (A pace set by the room host writes have left, rising as it shrinks, was tried and
    /// not kept: updated only at cleaning steps, which a paced die takes rarely, it fell
    /// behind; `docs/architecture.md`.)
    fn reconsider_urgency(&mut self, die: u32) {
        let urgent = self.pools_of_die(die).filter(|&p| self.urgent(p)).min_by_key(|&p| self.free_in(p));
        if let Some(p) = urgent {
            let v = self.debt(p).victim_pages;
            if v > 0 {
                let n = self.pages_per_block();
                self.scheduler_mut().cleaning_pace(die, 2 * v + 1, n.saturating_sub(v).max(1));
            }
        }
        self.scheduler_mut().cleaning_urgent(die, urgent.is_some());
    }

    /// The pool of `die` to step next: of those that owe cleaning, the one with the fewest
    /// free blocks.
    fn owing_pool(&self, die: u32) -> Option<u32> {
        self.pools_of_die(die).filter(|&p| self.debt(p).owes).min_by_key(|&p| self.free_in(p))
    }

    /// Has `pool` the free blocks it owes cleaning back to (its debt's target, at most its
    /// high watermark)?
    fn cleaned_enough(&self, pool: u32) -> bool {
        self.free_in(pool) >= self.debt(pool).target.min(self.high_watermark(pool))
    }

    /// A job for `pool`'s next victim, while the pool is below what it owes and a victim
    /// gains something (as in `collect_victims`).
    fn next_victim(&mut self, pool: u32, now: Done) -> Option<CleanJob> {
        if self.cleaned_enough(pool) {
            self.mark_cleaned(pool);
            return None;
        }
        let v = self.select_victim(pool)?;
        if self.gains_nothing(v) {
            let d = self.debt_mut(pool);
            d.fruitless += 1;
            let fruitless = d.fruitless;
            if self.parts().2.chooses_least_valid() || fruitless > self.blocks_per_pool() {
                self.debt_mut(pool).fruitless = 0;
                return None;
            }
        } else {
            self.debt_mut(pool).fruitless = 0;
        }
        Some(self.take_victim(pool, v, now))
    }

    /// Start cleaning victim `v` of `pool` (out of the candidates) as a stepped job.
    fn take_victim(&mut self, pool: u32, v: u32, now: Done) -> CleanJob {
        let pages = self.parts().1.valid[v as usize].div_ceil(self.shape(v).upp.max(1));
        self.debt_mut(pool).victim_pages = pages;
        let (t, victim) = self.parts_mut();
        t.withdraw(v, pool, victim);
        t.state[v as usize] = Self::CLEANING;
        self.counters_mut().gc_victims += 1;
        self.start_job(v, None, now, Cause::Gc, true)
    }

    /// Do the next piece of `job`, `pool`'s clean-up, at `now` (a page's moves or the erase),
    /// keeping it as the pool's job while work is left. Returns the units it moved (host writes
    /// between steps invalidate others, which are not moved).
    fn advance_job(&mut self, pool: u32, mut job: CleanJob, now: Done) -> u64 {
        job.ready = job.ready.max(now);
        let before = self.parts().1.valid[job.block as usize];
        self.set_cleaning(true);
        let more = self.step_job(&mut job);
        self.set_cleaning(false);
        let moved = (before - self.parts().1.valid[job.block as usize]) as u64;
        self.counters_mut().gc_valid_moved += moved;
        if more {
            self.debt_mut(pool).job = Some(job);
        } else {
            self.mark_cleaned(pool);
        }
        moved
    }

    /// Run `pool`'s job to its end at once (before cleaning there at once: at the hard
    /// threshold, for a failed block or in an idle window). Returns when its work finishes.
    fn finish_pool_job(&mut self, pool: u32, ready: Done) -> Done {
        let Some(mut job) = self.debt_mut(pool).job.take() else { return ready };
        job.ready = job.ready.max(ready);
        let before = self.parts().1.valid[job.block as usize];
        let done = self.run_job(job);
        self.counters_mut().gc_valid_moved += before as u64;
        done
    }
}
