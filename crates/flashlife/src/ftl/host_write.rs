//! A host write as a resumable operation: units are placed one by one, and when the next one
//! needs a block from a pool that is due for garbage collection, or a second-write technique
//! needs blocks recycled, the write stops and says so ([`WriteStep::NeedSpace`]) instead of
//! cleaning from inside its own call stack. Whoever drives the write decides when the
//! cleaning runs; [`Ftl::write`] has it run at once, in the order the work was always done,
//! which is the reservation scheduler's way.
//!
//! GC policy (when a pool is due): free blocks fall below the low watermark, and every host
//! block opened after that is paid for by cleaning until one more block is free, until the
//! high watermark is reached (`GcWatermarks`). GC work is thus interleaved with host writes
//! rather than done in one long burst. When the scheduler steps cleaning (the queued one),
//! a due pool with a free block above the reserve only records the debt, and the write asks
//! for cleaning at once only at the reserve (`gc_steps.rs`).

use super::*;

/// A host write in progress.
pub(super) struct HostWrite {
    /// The next unit to place, and one past the last.
    next: u32,
    end: u32,
    /// Units in the request (techniques classify by request size).
    units: u32,
    /// When the request's data is in the controller.
    ready: Done,
    /// When the units placed so far are safe.
    done: Done,
    /// The unit being placed, once it has been taken off its old slot: when its data is
    /// ready (a technique that declined it may have read something first).
    unit_ready: Option<Done>,
    /// The unit is off its old slot and was offered to the technique, which asked for space:
    /// offer it again (without taking it off again).
    offered: bool,
    /// Pools tried for this unit.
    tries: usize,
    /// The pool in turn has had the cleaning it asked for: take its block now.
    space_made: bool,
}

/// What a host write needs next.
pub(super) enum WriteStep {
    /// Every unit is placed; the last is safe at this time.
    Done(Done),
    /// The drive died placing it (no pool had space); what was placed is safe at this time.
    Died(Done),
    /// `plane` must be cleaned to `target` free blocks before the next unit can be placed;
    /// its data is ready at `ready`.
    NeedSpace { plane: u32, target: usize, ready: Done, by: Asker },
}

/// Who asked for the cleaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Asker {
    /// The pool is due (its watermarks): the next unit would take a block there.
    Pool,
    /// The second-write technique needs blocks recycled there (its own GC, `collect`).
    Technique,
}

/// What taking the next unit gave.
enum Unit {
    /// To be placed as a first write, its data ready at this time.
    Ready(Done),
    /// The technique wrote it.
    Written,
    /// The technique asked for `plane` to be cleaned towards `target` first.
    NeedSpace { plane: u32, target: usize },
}

impl HostWrite {
    pub(super) fn new(first: u32, units: u32, ready: Done) -> Self {
        HostWrite {
            next: first,
            end: first + units,
            units,
            ready,
            done: ready,
            unit_ready: None,
            offered: false,
            tries: 0,
            space_made: false,
        }
    }
}

impl Ftl {
    /// Write `units` mapping units from `first`, the data being in the controller at
    /// `ready`. Returns when the last of them is safe (programmed, or buffered in an open
    /// page). Cleaning the write asks for, then deferred maintenance (failed and cold blocks),
    /// run at once, before the write's remaining units.
    pub fn write(&mut self, first: u32, units: u32, ready: Done) -> Done {
        let ready = self.map_lookup(first, units, ready, true);
        let mut w = HostWrite::new(first, units, ready);
        loop {
            match self.write_step(&mut w) {
                WriteStep::Done(done) => return self.settle(done).max(done),
                WriteStep::Died(done) => return done,
                WriteStep::NeedSpace { plane, target, ready, by } => {
                    let done = self.collect(plane, ready, target);
                    if self.foreground_gc {
                        self.wait_for_cleaning(&mut w, plane, ready, done);
                    }
                    if by == Asker::Pool {
                        self.pools[plane as usize].cleaned();
                        if self.steps_cleaning() {
                            // The hard threshold (`gc_steps.rs`): the write waits for the
                            // cleaning it could not do without, which goes first on its die.
                            let die = self.die_of_plane(plane);
                            self.sched.hard_threshold(die);
                            if done != ready {
                                self.sched.wait_for(done);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Foreground cleaning (`gc.mode = "foreground"`, DiskSim's SSD model): the write that
    /// asked for the cleaning of `plane` completes no earlier than the whole clean-up, which
    /// goes first on its die (under the queued scheduler, where GC is otherwise background
    /// work no request waits for). Whoever asked (a due pool, or Reusable SSD's recycling).
    fn wait_for_cleaning(&mut self, w: &mut HostWrite, plane: u32, ready: Done, done: Done) {
        w.done = w.done.max(done);
        if done != ready {
            let die = self.die_of_plane(plane);
            self.sched.hard_threshold(die);
            self.sched.wait_for(done);
        }
    }

    /// Place units of `w` until it is done or needs a pool cleaned.
    pub(super) fn write_step(&mut self, w: &mut HostWrite) -> WriteStep {
        while w.next < w.end {
            let lpn = w.next;
            let ready = match w.unit_ready {
                Some(r) => r,
                None => match self.take_unit(lpn, w) {
                    Unit::Ready(r) => r,
                    Unit::Written => {
                        w.next += 1;
                        continue;
                    }
                    Unit::NeedSpace { plane, target } => {
                        return WriteStep::NeedSpace { plane, target, ready: w.ready, by: Asker::Technique };
                    }
                },
            };
            if self.allocation == Allocation::Static && w.tries == 0 {
                // A static address-to-plane mapping: the unit's logical address picks its
                // plane (a full pool still sends it on in rotation, below).
                self.stripe_pos = lpn as usize % self.stripe.len();
            }
            loop {
                let plane = self.stripe[self.stripe_pos];
                if !self.pools[plane as usize].own.exhausted {
                    if !std::mem::take(&mut w.space_made) {
                        if let Some(target) = self.pools[plane as usize].gc_due() {
                            if self.steps_cleaning() && self.pools[plane as usize].may_open(Stream::Host) {
                                // The soft threshold, when the scheduler steps cleaning: the
                                // pool owes it, and the write takes its block now.
                                let free = self.pools[plane as usize].free.len();
                                self.pools[plane as usize].own.idle = false;
                                self.owe_cleaning(plane, free);
                            } else {
                                w.space_made = true;
                                return WriteStep::NeedSpace { plane, target, ready, by: Asker::Pool };
                            }
                        }
                    } else if self.steps_cleaning() {
                        // Past the hard threshold's cleaning at once: the block this write
                        // takes is owed back (`gc_debt.rs`).
                        self.owe_back_taken_block(plane);
                    }
                    if let Some((slot, programmed)) = self.place(plane, Stream::Host, lpn, ready, Cause::Host) {
                        if let Some(o) = &mut self.oracle {
                            o.write(lpn, slot);
                        }
                        if let Some(t) = programmed {
                            w.done = w.done.max(t);
                            self.advance_stripe();
                        }
                        break;
                    }
                    self.pools[plane as usize].own.exhausted = true;
                }
                // A full pool: try the next in rotation (each pool once), whatever the allocation.
                self.stripe_pos = self.next_in_rotation();
                w.tries += 1;
                if w.tries > self.stripe.len() {
                    self.die("no pool has space for host data".into());
                    return WriteStep::Died(w.done);
                }
            }
            w.unit_ready = None;
            w.next += 1;
        }
        WriteStep::Done(w.done)
    }

    /// Take `lpn` off its old slot (once) and offer it to the technique.
    fn take_unit(&mut self, lpn: u32, w: &mut HostWrite) -> Unit {
        if !std::mem::take(&mut w.offered) {
            if let Some(o) = &mut self.oracle {
                // The version being overwritten must still be where the map says: a unit lost
                // and then overwritten would otherwise go unnoticed.
                let slot = self.map.slot(lpn);
                let owner = if slot == UNMAPPED { UNMAPPED } else { self.map.owner(slot) };
                o.check("overwrite", lpn, slot, owner);
            }
            self.invalidate(lpn);
            self.counters.host_unit_writes += 1;
        }
        let mut ready = w.ready;
        if let Some(mut t) = self.technique.take() {
            let verdict = t.host_unit(self, lpn, w.units, ready);
            self.technique = Some(t);
            match verdict {
                Verdict::Taken(t) => {
                    w.done = w.done.max(t);
                    return Unit::Written;
                }
                Verdict::Declined(r) => ready = r,
                Verdict::NeedSpace { plane, target } => {
                    w.offered = true;
                    return Unit::NeedSpace { plane, target };
                }
            }
        }
        w.unit_ready = Some(ready);
        w.tries = 0;
        Unit::Ready(ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a static mapping every unit lands on the plane its logical address names (the
    /// pools are never full here), and nothing is lost.
    #[test]
    fn static_allocation_puts_each_unit_on_its_address_plane() {
        let mut ftl = super::super::tests::full_tiny_drive_with_oracle();
        ftl.allocation = Allocation::Static;
        let n = ftl.logical_units();
        let planes = ftl.stripe.len() as u32;
        let mut off_plane = 0;
        for i in 0..20_000u32 {
            let lpn = (i * 7919) % n;
            ftl.write(lpn, 1, Done::START);
            let block = ftl.map.slot(lpn) / ftl.slots_per_block;
            if ftl.geo.plane_of_block(block) != ftl.stripe[(lpn % planes) as usize] {
                off_plane += 1;
            }
        }
        assert_eq!(off_plane, 0, "units placed away from their address's plane");
        assert_eq!(ftl.verify_all(), None);
        assert_eq!(ftl.integrity_violation(), None);
    }

    /// A host write that reaches a pool due for cleaning stops and says so, having cleaned
    /// nothing itself; resumed after the cleaning, it places every unit and loses nothing.
    #[test]
    fn a_write_asks_for_cleaning_instead_of_doing_it() {
        let mut ftl = super::super::tests::full_tiny_drive_with_oracle();
        let n = ftl.logical_units();
        let (mut asked, mut lpn) = (0u32, 0u32);
        while asked < 3 {
            let mut w = HostWrite::new(lpn % n, 1, Done::START);
            lpn += 977;
            loop {
                let (victims, erases) = (ftl.counters.gc_victims, ftl.counters.block_erases.get(Cause::Gc));
                match ftl.write_step(&mut w) {
                    WriteStep::Done(_) => break,
                    WriteStep::Died(_) => panic!("the drive died: {:?}", ftl.death()),
                    WriteStep::NeedSpace { plane, target, ready, .. } => {
                        asked += 1;
                        assert_eq!(ftl.counters.gc_victims, victims, "the write step cleaned a victim itself");
                        assert_eq!(ftl.counters.block_erases.get(Cause::Gc), erases);
                        assert!(ftl.pools[plane as usize].free.len() < target, "asked for space it had");
                        ftl.collect(plane, ready, target);
                        assert!(ftl.counters.gc_victims > victims, "the cleaning asked for found nothing");
                        ftl.pools[plane as usize].cleaned();
                    }
                }
            }
            assert!(lpn < 100 * n, "no write asked for cleaning in 100 drive writes");
        }
        assert_eq!(ftl.verify_all(), None);
        assert_eq!(ftl.integrity_violation(), None);
    }

    /// Reusable SSD's host path asks for its erase-or-recycle GC instead of running it: a
    /// write step that ends asking for space on the technique's behalf has cleaned and
    /// recycled nothing itself (counted by the FTL's GC counter and the technique's recycle
    /// counter), and the driver's cleaning it asked for recycles blocks; the same unit is then
    /// offered again, and nothing is lost.
    #[test]
    fn a_second_write_asks_for_recycling_instead_of_doing_it() {
        let cfg = crate::ConfigBuilder::new()
            .preset("reusable-small")
            .and_then(|b| b.set("geometry.blocks_per_plane=256"))
            .and_then(|b| b.set("ftl.integrity_oracle=true"))
            .and_then(|b| b.build())
            .unwrap();
        let mut ftl = crate::sim::build_ftl(&cfg).unwrap();
        ftl.precondition(true, 1.0, 7);
        let n = ftl.logical_units();
        let recycled = |ftl: &Ftl| ftl.second_write_counters().expect("second writes on").blocks_recycled;
        let (mut asked, mut lpn) = (0u32, 0u32);
        while asked < 3 {
            let mut w = HostWrite::new(lpn % n, 1, Done::START);
            lpn += 977;
            loop {
                let before = (ftl.counters.gc_victims, recycled(&ftl));
                match ftl.write_step(&mut w) {
                    WriteStep::Done(_) => break,
                    WriteStep::Died(_) => panic!("the drive died: {:?}", ftl.death()),
                    WriteStep::NeedSpace { plane, target, ready, by } => {
                        let now = (ftl.counters.gc_victims, recycled(&ftl));
                        assert!(by == Asker::Pool || now == before, "GC ran inside the step");
                        ftl.collect(plane, ready, target);
                        // Count the asks whose cleaning found work (a plane with enough free
                        // blocks recycles nothing, and the unit becomes a first write).
                        asked += (by == Asker::Technique && recycled(&ftl) > now.1) as u32;
                        if by == Asker::Pool {
                            let p = &mut ftl.pools[plane as usize];
                            p.marks.cleaned(p.free.len());
                        }
                    }
                }
            }
            assert!(lpn < 100 * n, "no ask of the technique's recycled anything in 100 drive writes");
        }
        assert_eq!(ftl.verify_all(), None);
        assert_eq!(ftl.integrity_violation(), None);
    }
}
