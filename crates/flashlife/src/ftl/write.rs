//! Write allocation: which plane the next host unit goes to (strict stripe rotation over the
//! planes, `stripe`), the active blocks of each pool's host and GC streams, and programming a
//! page once its units are in. The host write itself is in `host_write.rs`.

use super::*;

impl Ftl {
    /// Open a new active block for `stream` in `plane`. Host streams leave the last free
    /// blocks to GC (whose cleaning a host write asks for beforehand: `host_write.rs`).
    pub(super) fn open_block(&mut self, plane: u32, stream: Stream, ready: Done, cause: Cause) -> bool {
        // Host writes leave the GC reserve alone; cleaning's moves into a shared stream may
        // take it (they are what frees blocks).
        let moves_into_host = stream == Stream::Host && cause != Cause::Host;
        if !(self.pools[plane as usize].may_open(stream) || moves_into_host) {
            return false;
        }
        let (block, page) = loop {
            let Some(block) = self.pools[plane as usize].free.pop_front() else {
                return false;
            };
            match self.bad_blocks.next_usable_page(block, 0) {
                Some(page) => break (block, page),
                None => self.retire(block), // not one usable page left
            }
        };
        self.blocks.state[block as usize] = BlockState::Open;
        self.reads.on_open(block, ready.as_time()); // the retention clock starts
        let upp = self.upp_by_mode[self.flash.mode(block).index()];
        self.pools[plane as usize].active[stream as usize] = Active::opened(block, page, upp);
        true
    }

    /// Place `lpn` in the next slot of `plane`'s `stream` active block. Returns the slot and,
    /// when the unit completed its page, the time the page program finishes.
    #[inline]
    pub(super) fn place(
        &mut self,
        plane: u32,
        stream: Stream,
        lpn: u32,
        ready: Done,
        cause: Cause,
    ) -> Option<(u32, Option<Done>)> {
        if self.pools[plane as usize].active[stream as usize].is_closed()
            && !self.open_block(plane, stream, ready, cause)
        {
            return None;
        }
        let a = &mut self.pools[plane as usize].active[stream as usize];
        let block = a.block;
        let (slot, full) = a.take_slot(self.slots_per_block, self.max_upp, ready);
        self.map.bind(lpn, slot);
        self.blocks.valid[block as usize] += 1;
        self.counters.unit_programs.add(cause, 1);
        if !full {
            return Some((slot, None));
        }
        let done = self.program_page(plane, stream, cause);
        // A failed program retried on another page moved the unit: report where it is now.
        Some((self.map.slot(lpn), Some(done)))
    }

    /// Program the full open page of an active block.
    pub(super) fn program_page(&mut self, plane: u32, stream: Stream, cause: Cause) -> Done {
        loop {
            let a = self.pools[plane as usize].active[stream as usize];
            let mode = self.flash.mode(a.block);
            let die = self.die_of_plane(plane);
            let bytes = a.upp as u64 * self.unit_bytes;
            let done = self.sched.submit(&Transaction::program(die, a.block, a.page, mode, bytes, cause), a.ready);
            self.counters.page_programs.add(cause, 1);
            let status = self.flash.program(a.block, a.page);
            if status == ProgramStatus::Failed {
                // The status register reports the failure at once; the page's data is still in
                // the controller.
                self.counters.program_failures += 1;
                match self.bad_blocks.on_program_failure(a.block, a.page) {
                    // Close the block and move everything it holds elsewhere.
                    FailureAction::RetireBlock => {
                        self.pools[plane as usize].active[stream as usize] = Active::CLOSED;
                        self.blocks.state[a.block as usize] = BlockState::Cleaning;
                        self.retire_queue.push((a.block, Some(a.page)));
                        return done;
                    }
                    // Retry at the block's next good page (bad_block.rs).
                    FailureAction::SkipPage => {
                        if self.skip_failed_page(plane, stream) {
                            continue;
                        }
                        return done;
                    }
                }
            }
            let next = self.bad_blocks.next_usable_page(a.block, a.page + 1);
            if self.pools[plane as usize].active[stream as usize].programmed(next) {
                self.close_block(a.block, plane);
            }
            return done;
        }
    }

    pub(super) fn close_block(&mut self, block: u32, plane: u32) {
        self.blocks.close_full(block, plane, self.victim.as_mut());
    }

    /// The plane the next host first write goes to (the striping position).
    pub fn stripe_plane(&self) -> u32 {
        self.stripe[self.stripe_pos]
    }

    /// Move the striping position on, to the plane the next page goes to (after a page was
    /// programmed, or a technique placed a host unit on its die): the next in rotation, or
    /// with `least_loaded` the plane whose die can start new work soonest, ties going to the
    /// next in rotation (so that with every die equally free, timing off included, it is
    /// rotation). With `static` the next unit's logical address picks its plane when it is
    /// placed. A full pool is the write loop's business: it steps on in rotation.
    ///
    /// Under stepped cleaning (the queued scheduler) rotation passes over a plane whose pool
    /// is cleaning first (`urgent`), unless every plane is: its die serves background work
    /// before host writes, so a write placed there waits, holding a host queue slot, and with
    /// one write in `planes` landing there the whole queue soon waited on that die while the
    /// others idled (the default drive under queued: 578.5 IOPS with strict rotation, 631.7
    /// passing over urgent planes, 656 with cleaning at once). `least_loaded` is left as it
    /// was: passing over urgent planes there moved its IOPS by 0.01% and its p99 up 5%.
    pub fn advance_stripe(&mut self) {
        let next = self.next_in_rotation();
        self.stripe_pos = match self.allocation {
            // Static: the next unit's address will pick its plane.
            Allocation::Static => next,
            // Only stepped cleaning owes (`gc_steps.rs`); with timing off (fast-forward) a
            // debt left from a timed stretch is not stepped, and rotation stays strict.
            Allocation::Rotation if !self.urgent(self.stripe[next]) || !self.steps_cleaning() => next,
            Allocation::Rotation => {
                let n = self.stripe.len();
                (1..n)
                    .map(|k| if next + k >= n { next + k - n } else { next + k })
                    .find(|&i| !self.urgent(self.stripe[i]))
                    .unwrap_or(next)
            }
            Allocation::LeastLoaded => self.least_loaded_from(next),
        };
    }

    /// The striping position, from `next` on in rotation, whose die can start new work
    /// soonest (the first of equals). Called for every page a host stream fills, over every
    /// plane: the dies' times are read as one slice, not asked for one call at a time, and a
    /// die free now ends the search, since none can be freer (in fast-forward every die is:
    /// `bench-16g`'s fill took 2.9-3.1 s of CPU with a call per plane, 2.2-2.4 s now).
    fn least_loaded_from(&self, next: usize) -> usize {
        let n = self.stripe.len();
        let order = (next..n).chain(0..next);
        let mut best = (u64::MAX, next);
        // The base is common to every die: comparing the offsets compares the times.
        let Some((_, offsets)) = self.sched.die_free_offsets() else {
            for i in order {
                let free = self.sched.die_free_at(self.die_of_plane(self.stripe[i]));
                if free < best.0 {
                    best = (free, i);
                }
            }
            return best.1;
        };
        for i in order {
            let off = offsets[self.die_of_plane(self.stripe[i]) as usize];
            if off < best.0 {
                best = (off, i);
                if off == 0 {
                    break;
                }
            }
        }
        best.1
    }

    /// The striping position after this one in rotation.
    #[inline]
    pub(super) fn next_in_rotation(&self) -> usize {
        if self.stripe_pos + 1 == self.stripe.len() {
            0
        } else {
            self.stripe_pos + 1
        }
    }
}
