//! Write allocation: which plane the next host unit goes to (strict stripe rotation over the
//! planes, `stripe`), the active blocks of each pool's host and GC streams, and programming a
//! page once its units are in.

use super::*;

impl Ftl {
    /// Open a new active block for `stream` in `plane`. Host streams leave the last free
    /// block to GC and drive GC: once free blocks fall below the low watermark, every host
    /// block opened in the pool is paid for by cleaning until one more block is free, until
    /// the high watermark is reached. GC work is thus interleaved with host writes rather
    /// than done in one long burst.
    pub(super) fn open_block(&mut self, plane: u32, stream: Stream, ready: u64) -> bool {
        if stream == Stream::Host {
            let p = &mut self.pools[plane as usize];
            if let Some(target) = p.marks.target(p.free.len(), GC_RESERVE_BLOCKS) {
                self.collect(plane, ready, target);
                let p = &mut self.pools[plane as usize];
                p.marks.cleaned(p.free.len());
            }
            if self.pools[plane as usize].free.len() <= GC_RESERVE_BLOCKS {
                return false;
            }
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
        self.state[block as usize] = BlockState::Open;
        self.reads.on_open(block, ready);
        let upp = self.upp_by_mode[self.flash.mode(block).index()];
        self.pools[plane as usize].active[stream as usize] = Active { block, page, slot: 0, upp, ready: 0 };
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
        ready: u64,
        cause: Cause,
    ) -> Option<(u32, Option<u64>)> {
        if self.pools[plane as usize].active[stream as usize].block == NONE && !self.open_block(plane, stream, ready) {
            return None;
        }
        let a = &mut self.pools[plane as usize].active[stream as usize];
        let block = a.block;
        let slot = block * self.slots_per_block + a.page * self.max_upp + a.slot;
        a.slot += 1;
        a.ready = a.ready.max(ready);
        self.map.bind(lpn, slot);
        self.valid[block as usize] += 1;
        self.counters.unit_programs.add(cause, 1);
        let a = self.pools[plane as usize].active[stream as usize];
        if a.slot < a.upp {
            return Some((slot, None));
        }
        let done = self.program_page(plane, stream, cause);
        // A failed program retried on another page moved the unit: report where it is now.
        Some((self.map.slot(lpn), Some(done)))
    }

    /// Program the full open page of an active block.
    pub(super) fn program_page(&mut self, plane: u32, stream: Stream, cause: Cause) -> u64 {
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
                        self.state[a.block as usize] = BlockState::Cleaning;
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
            let active = &mut self.pools[plane as usize].active[stream as usize];
            active.slot = 0;
            active.ready = 0;
            match next {
                Some(page) => active.page = page,
                None => {
                    *active = Active::CLOSED;
                    self.close_block(a.block, plane);
                }
            }
            return done;
        }
    }

    pub(super) fn close_block(&mut self, block: u32, plane: u32) {
        self.state[block as usize] = BlockState::Full;
        self.seq += 1;
        self.closed_seq[block as usize] = self.seq;
        self.victim.insert(block, plane, self.valid[block as usize]);
    }

    /// The plane the next host first write goes to (the striping position).
    pub fn stripe_plane(&self) -> u32 {
        self.stripe[self.stripe_pos]
    }

    /// Move the striping position on (a technique placed a host unit on its die).
    pub fn advance_stripe(&mut self) {
        self.stripe_pos += 1;
        if self.stripe_pos == self.stripe.len() {
            self.stripe_pos = 0;
        }
    }

    /// Write `units` mapping units from `first`, the data being in the controller at
    /// `ready`. Returns when the last of them is safe (programmed, or buffered in an open page).
    pub fn write(&mut self, first: u32, units: u32, ready: u64) -> u64 {
        let mut done = ready;
        for lpn in first..first + units {
            if let Some(o) = &mut self.oracle {
                // The version being overwritten must still be where the map says: a unit
                // lost and then overwritten would otherwise go unnoticed.
                let slot = self.map.slot(lpn);
                let owner = if slot == UNMAPPED { UNMAPPED } else { self.map.owner(slot) };
                o.check("overwrite", lpn, slot, owner);
            }
            self.invalidate(lpn);
            self.counters.host_unit_writes += 1;
            let mut ready = ready;
            if let Some(mut t) = self.technique.take() {
                let verdict = t.host_unit(self, lpn, units, ready);
                self.technique = Some(t);
                match verdict {
                    Verdict::Taken(t) => {
                        done = done.max(t);
                        continue;
                    }
                    Verdict::Declined(r) => ready = r,
                }
            }
            let mut tries = 0;
            loop {
                let plane = self.stripe[self.stripe_pos];
                if !self.pools[plane as usize].exhausted {
                    if let Some((slot, programmed)) = self.place(plane, Stream::Host, lpn, ready, Cause::Host) {
                        if let Some(o) = &mut self.oracle {
                            o.write(lpn, slot);
                        }
                        if let Some(t) = programmed {
                            done = done.max(t);
                            self.advance_stripe();
                        }
                        break;
                    }
                    self.pools[plane as usize].exhausted = true;
                }
                self.advance_stripe();
                tries += 1;
                if tries > self.stripe.len() {
                    self.die("no pool has space for host data".into());
                    return done;
                }
            }
        }
        self.settle(done).max(done)
    }
}
