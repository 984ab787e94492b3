//! Background work besides GC, stepped by the scheduler like GC (`gc_steps.rs`): a failed
//! block emptied before it is retired, a read reclaim.
//!
//! Under the reservation scheduler and in fast-forward each is run at once where it is
//! decided (`settle`, `reclaim_pending`), a whole block's moves queued together. Under the
//! queued scheduler that put thousands of transactions on one die at once, and every host
//! operation there behind them (a failed block on the baseline's `retire_block` held a die
//! for a block's worth of moves). Here the decision is still taken at once, and only the
//! moves wait:
//! - **Retirement.** The failed block is already out of service (closed, state `Cleaning`,
//!   never a write point or a victim again); its job is queued on its pool, and the block is
//!   retired when the job has moved its last unit.
//! - **Read reclaim.** The block is taken out of service when the read asks for it (a full
//!   block out of the victim candidates, an open one closed, its open page's units still in
//!   the controller), and counted; its job moves the data and erases it.
//! - **Levelling moves are not stepped** (they run at once in `settle`, as before): stepped,
//!   on `tiny` under queued at 20 drive writes they raised GC erases by 12% and levelling
//!   erases by 44% against the same run timed only in windows
//!   (`tests/sampled_timing.rs`), for a reason not found yet.
//!
//! A pool's chores are stepped when its die asks for background work, before its GC, except
//! at the reserve: then its GC is owed and goes first, as the eager code makes room before a
//! failed block's data moves. The die asks for them at `timing.chore_ratio`'s pace against
//! its host work, reads included (`Scheduler::chores_owed`), not only when it has none: a
//! saturated drive never had such a moment. When the scheduler stops stepping (timing
//! switched off), what is left runs at once at the next `settle`.

use std::collections::VecDeque;

use super::*;

/// A pool's queued background work (see the module docs): a block being emptied.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(super) struct Chore {
    job: CleanJob,
    /// Retire the block afterwards (its job does not erase).
    retire: bool,
    /// The pool's free blocks when it was queued, which its cleaning owes it back.
    free: u32,
}

/// Chores per pool, kept in the block FTL's `PlaneState`.
pub(super) type Chores = VecDeque<Chore>;

impl Ftl {
    /// Chores queued and not finished over all pools (retirements and reclaims whose moves
    /// are still being stepped).
    pub fn chores_pending(&self) -> usize {
        self.chores_pending
    }

    /// Queue `chore` on `plane`, and tell the scheduler its die has work, and work of this
    /// kind (which it gives a share of the die: `Scheduler::chores_owed`).
    fn queue_chore(&mut self, plane: u32, chore: Chore) {
        self.pools[plane as usize].own.chores.push_back(chore);
        self.chores_pending += 1;
        let die = self.die_of_plane(plane);
        self.sched.cleaning_owed(die);
        self.sched.chores_owed(die, true);
    }

    /// The first pool of `die` with chores queued.
    fn chore_plane(&self, die: u32) -> Option<u32> {
        self.geo.planes_of_die(die).find(|&p| !self.pools[p as usize].own.chores.is_empty())
    }

    /// Stepped `settle`: failed blocks become chores (levelling moves stay at once: see the
    /// module docs).
    pub(super) fn queue_settled(&mut self, ready: Done) {
        let mut retire = std::mem::take(&mut self.retire_queue);
        // The eager loop pops: the same order.
        while let Some((block, buffered)) = retire.pop() {
            let job = self.start_job(block, buffered, ready, Cause::BadBlock, false);
            let plane = self.geo.plane_of_block(block);
            let free = self.pools[plane as usize].free.len() as u32;
            self.queue_chore(plane, Chore { job, retire: true, free });
        }
        self.retire_queue = retire;
    }

    /// Stepped reclaim of `block`: out of service now, counted, its moves queued.
    pub(super) fn queue_reclaim(&mut self, block: u32, plane: u32, ready: Done) {
        let buffered = match self.blocks.state[block as usize] {
            BlockState::Full => {
                self.blocks.withdraw(block, plane, self.victim.as_mut());
                None
            }
            BlockState::Open => {
                let pool = &mut self.pools[plane as usize];
                let Some(stream) = pool.stream_in(block) else { return };
                let a = pool.active[stream];
                pool.active[stream] = Active::CLOSED;
                (a.slot > 0).then_some(a.page)
            }
            _ => return,
        };
        self.blocks.state[block as usize] = BlockState::Cleaning;
        self.counters.reclaimed_blocks += 1;
        let job = self.start_job(block, buffered, ready, Cause::Reclaim, true);
        let free = self.pools[plane as usize].free.len() as u32;
        self.queue_chore(plane, Chore { job, retire: false, free });
    }

    /// A pool of `die` with chores, if any, and whether its GC must go first (see the
    /// module docs).
    pub(super) fn chore_pool(&mut self, die: u32) -> Option<(u32, bool)> {
        if self.chores_pending == 0 {
            return None;
        }
        let plane = self.chore_plane(die)?;
        let pool = &self.pools[plane as usize];
        if pool.free.len() <= GC_RESERVE_BLOCKS && !pool.own.debt.owes {
            self.owe_cleaning(plane, GC_RESERVE_BLOCKS + 1);
        }
        // GC first only at the reserve. One block above it (where GC's urgency starts) a pool
        // that lost a block to retirement stays on a saturated drive (architecture.md, "Still
        // to do"), and with GC first there its chores never ran: 7 failed blocks, 0 retired
        // in 40,000 requests (`tests/checkpoint.rs`'s mid-retirement drive). A chore's moves
        // take a block from the pool when they fill one, which puts GC first again.
        let pool = &self.pools[plane as usize];
        let gc_first = pool.free.len() <= GC_RESERVE_BLOCKS && pool.own.debt.owes;
        Some((plane, gc_first))
    }

    /// One step of `plane`'s first chore at `now`; false if it had none left to do.
    pub(super) fn step_chore(&mut self, plane: u32, now: Done) -> bool {
        let p = plane as usize;
        let Some(Chore { mut job, retire, free }) = self.pools[p].own.chores.pop_front() else {
            return false;
        };
        self.chores_pending -= 1;
        job.ready = job.ready.max(now);
        if self.step_job(&mut job) {
            self.pools[p].own.chores.push_front(Chore { job, retire, free });
            self.chores_pending += 1;
        } else {
            if retire {
                self.retire(job.block);
            }
            let die = self.die_of_plane(plane);
            if self.chore_plane(die).is_none() {
                self.sched.chores_owed(die, false);
            }
        }
        if (self.pools[p].free.len() as u32) < free && self.death.is_none() {
            // The moves took free blocks (a retired block gives none back): the pool's
            // cleaning owes them back, or a pool kept at its soft threshold's level would
            // sink a block per retirement and sit at the reserve.
            self.owe_cleaning(plane, free as usize);
        }
        true
    }

    /// Run every queued chore to its end at once (the scheduler no longer steps). Returns
    /// when the work finishes.
    pub(super) fn run_chores(&mut self, ready: Done) -> Done {
        let mut done = ready;
        for plane in 0..self.geo.planes() {
            while !self.pools[plane as usize].own.chores.is_empty() && self.death.is_none() {
                if self.pools[plane as usize].free.len() <= GC_RESERVE_BLOCKS {
                    done = done.max(self.collect(plane, ready, GC_RESERVE_BLOCKS));
                }
                let Some(Chore { job, retire, .. }) = self.pools[plane as usize].own.chores.pop_front() else {
                    break;
                };
                self.chores_pending -= 1;
                done = done.max(self.run_job(job));
                if retire {
                    self.retire(job.block);
                }
            }
        }
        if self.death.is_some() {
            for p in &mut self.pools {
                p.own.chores.clear();
            }
            self.chores_pending = 0;
        }
        for die in 0..self.geo.dies() {
            if self.chore_plane(die).is_none() {
                self.sched.chores_owed(die, false);
            }
        }
        done
    }
}
