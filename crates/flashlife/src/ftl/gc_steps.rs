//! Cleaning stepped by the scheduler (`timing.scheduler = "queued"`, timing on).
//!
//! Deciding a whole clean-up when a host block is opened below the low watermark moves pages
//! whose validity was read long before the moves run (a later host write may make them
//! stale) and queues thousands of transactions per die. A controller decides GC as its dies
//! have room for it, so here:
//! - **Soft threshold.** A host block opened in a pool below the low watermark, with a free
//!   block above the reserve, records that the pool owes cleaning ([`SteppedCleaner::owe_cleaning`], `gc_debt.rs`) and
//!   tells the scheduler which die; the write goes on at once. What is owed is what the
//!   cleaning at once would have done: the block the write takes, so the pool is cleaned
//!   back to the free blocks it had (not on to the high watermark: free blocks held beyond
//!   that are spare space GC does not get, and write amplification would rise).
//! - **Steps.** When that die runs short of background work, the run loop calls
//!   [`Ftl::step_cleaning`]: the pool's [`CleanJob`] (one victim at a time, started here)
//!   moves one page's valid units, or erases its block, at that moment. A pool owes cleaning
//!   until it is back at its target, or nothing more can be gained. While it owes cleaning
//!   one block from its reserve, its die serves background work first
//!   (`Scheduler::cleaning_urgent`), so that stepping catches up before the reserve.
//! - **Hard threshold.** A host block wanted in a pool at the reserve cannot wait for the
//!   steps: the write asks for the cleaning at once (`WriteStep::NeedSpace`), which finishes
//!   the pool's job and cleans on to one block above the reserve (`collect`), and the request
//!   waits for that work, its die serving background work first meanwhile
//!   (`Scheduler::wait_for`, counted as a hard-threshold episode). The block the write then
//!   takes is owed back as at the soft threshold; without that debt the pool would stay at
//!   its reserve and every later host block there would wait for cleaning at once.
//!
//! - **Idle windows** (`gc.background`, open loop): a pool below its high watermark whose die
//!   is idle owes cleaning up to it, stepped like the rest (`owe_idle_cleaning`).
//! - **Other background work** (failed-block retirement, read reclaim) is decided at once
//!   and its moves stepped the same way, ahead of the die's GC (`chores.rs`); levelling
//!   moves still run at once (`chores.rs` says why).
//!
//! Under the reservation scheduler, and in fast-forward, nothing steps: cleaning is decided at
//! once, as it always was. Reusable SSD's second-write GC (the technique set in
//! `Ftl::technique`) steps too: the technique recycles at once what it recycles (no flash
//! work) and names the next block to erase (`SecondWriteTechnique::next_erase`), whose moves
//! step like any victim's; a hot unit whose lane has no recycled block still has the
//! technique's GC run at once. Every other technique (ZombieNAND's victim and end-of-life
//! policies, salvage's bad-block policy, read relaxation's read model) keeps the baseline's
//! GC.

use super::*;

impl Ftl {
    /// Is soft-threshold cleaning stepped on request (see the module docs) rather than run at
    /// once?
    #[inline]
    pub(super) fn steps_cleaning(&self) -> bool {
        // Foreground cleaning (`gc.mode`) is decided whole when a write asks for it.
        !self.foreground_gc && self.sched.steps_cleaning()
    }

    /// Decide one step of cleaning on `die` at time `now`: in its pool that owes cleaning and
    /// has the fewest free blocks, the next page's moves or its victim's erase (taking a new
    /// victim when none is being cleaned). Returns false when no pool of the die owes any.
    pub fn step_cleaning(&mut self, die: u32, now: Done) -> bool {
        if !self.steps_cleaning() {
            return false;
        }
        // Retirement and reclaim moves first, unless their pool's GC must go first
        // (`chores.rs`).
        while let Some((plane, gc_first)) = self.chore_pool(die).filter(|_| self.death.is_none()) {
            if gc_first && self.step_pool(plane, now) {
                self.reconsider_urgency(die);
                return true;
            }
            if self.step_chore(plane, now) {
                self.reconsider_urgency(die);
                return true;
            }
        }
        while self.death.is_none() {
            let Some(plane) = self.owing_pool(die) else { break };
            if self.step_pool(plane, now) {
                self.reconsider_urgency(die);
                return true;
            }
            self.pools[plane as usize].own.debt.owes = false;
            self.pools[plane as usize].own.idle = false;
        }
        self.reconsider_urgency(die);
        false
    }

    /// Stepped idle-window cleaning (`gc.background`): each pool below its high watermark
    /// whose die is idle in `[from, until)` owes cleaning up to it. The steps run as the die
    /// has room, before or after the window closes alike: background work yields to host work
    /// at each transaction, so the next command waits for at most the stock of four, where a
    /// victim decided at once queued a whole block's moves (846 background transactions on a
    /// die at Poisson 2,000 IOPS on the test drive). Moves for such a debt count as idle
    /// moves until a host write adds to it.
    pub(super) fn owe_idle_cleaning(&mut self, from: u64, until: u64) {
        for plane in 0..self.geo.planes() {
            let p = &self.pools[plane as usize];
            if p.free.len() >= p.marks.high || self.death.is_some() {
                continue;
            }
            let high = p.marks.high;
            if self.sched.idle_start(self.geo.die_of_plane(plane), from, until).is_some() {
                self.pools[plane as usize].own.idle = !self.pools[plane as usize].own.debt.owes;
                self.owe_cleaning(plane, high);
            }
        }
        // The idle window opens at a plain time, which the settled work waits for.
        self.settle(Done::at(from));
    }

    /// A job for `plane`'s next victim: the baseline's ([`SteppedCleaner::next_victim`]), or
    /// the second-write technique's next block to erase (Reusable SSD, which recycles on the
    /// way what it does not erase).
    fn next_stepped_victim(&mut self, plane: u32, now: Done) -> Option<CleanJob> {
        let Some(mut t) = self.technique.take() else { return self.next_victim(plane, now) };
        let target = self.pools[plane as usize].own.debt.target;
        let v = t.next_erase(self, plane, target);
        self.technique = Some(t);
        let Some(v) = v else {
            self.pools[plane as usize].cleaned();
            return None;
        };
        Some(self.take_victim(plane, v, now))
    }

    /// One step of `plane`'s cleaning; false if it owes none after all.
    fn step_pool(&mut self, plane: u32, now: Done) -> bool {
        let p = plane as usize;
        let job = match self.pools[p].own.debt.job.take() {
            Some(job) => job,
            // Once the pool is back to its target, the translation pages the episode's moves
            // changed (a cached map), a page per step, as `collect` rewrites them once per
            // episode; cleaning goes on if they take the pool below it again.
            None if self.cleaned_enough(plane) && self.step_map_update(now, plane) => return true,
            None => match self.next_stepped_victim(plane, now) {
                Some(job) => job,
                None => return false,
            },
        };
        let moved = self.advance_job(plane, job, now);
        if self.pools[p].own.idle {
            self.counters.gc_valid_moved_idle += moved;
        }
        true
    }
}

/// The block FTL's pools are its planes; their debts are in the planes' state.
impl SteppedCleaner for Ftl {
    #[inline]
    fn debt(&self, plane: u32) -> &Debt {
        &self.pools[plane as usize].own.debt
    }
    #[inline]
    fn debt_mut(&mut self, plane: u32) -> &mut Debt {
        &mut self.pools[plane as usize].own.debt
    }
    fn high_watermark(&self, plane: u32) -> usize {
        self.pools[plane as usize].marks.high
    }
    fn mark_cleaned(&mut self, plane: u32) {
        self.pools[plane as usize].cleaned();
    }
    fn pools_of_die(&self, die: u32) -> std::ops::Range<u32> {
        self.geo.planes_of_die(die)
    }
    #[inline]
    fn die_of_pool(&self, plane: u32) -> u32 {
        self.die_of_plane(plane)
    }
    fn pages_per_block(&self) -> u32 {
        self.geo.pages_per_block
    }
    fn set_cleaning(&mut self, on: bool) {
        self.in_gc = on;
    }
}
