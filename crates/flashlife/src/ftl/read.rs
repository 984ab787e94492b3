//! Host and internal reads: runs of units on one page are sensed once; the read model
//! decides retries, uncorrectable pages and reclaim requests.

use super::*;

/// Units of a request that lie on one page are read with one sense: the request's units
/// grouped into runs of consecutive units on one page (`key`: block * pages + page). Both
/// FTLs read this way.
pub(crate) struct PageRuns {
    key: u32,
    units: u32,
}

impl PageRuns {
    pub(crate) fn new() -> Self {
        PageRuns { key: NONE, units: 0 }
    }

    /// One more unit, on page `key`: the run it ends (page, units), if it starts a new one.
    #[inline]
    pub(crate) fn add(&mut self, key: u32) -> Option<(u32, u32)> {
        if key == self.key {
            self.units += 1;
            return None;
        }
        let ended = (self.key != NONE).then_some((self.key, self.units));
        (self.key, self.units) = (key, 1);
        ended
    }

    /// The last run, if any unit was added.
    #[inline]
    pub(crate) fn finish(self) -> Option<(u32, u32)> {
        (self.key != NONE).then_some((self.key, self.units))
    }
}

impl Ftl {
    /// Read `units` mapping units from `first`, issued at `ready`. Returns when the last
    /// page's data has crossed its channel. Blocks the read model flags are rewritten after
    /// the read is served: the rewrite delays later requests, not this one.
    pub fn read(&mut self, first: u32, units: u32, ready: Done) -> Done {
        let ready = self.map_lookup(first, units, ready, false);
        let done = self.read_units(first, units, ready);
        // Before the blocks flagged are reclaimed, so that their moves see the classes.
        self.classify_read(first, units);
        if !self.reclaim_queue.is_empty() {
            self.reclaim_pending(done);
        }
        done
    }

    /// With placement classes (`placement`): the units read take the class their reader asked
    /// for (a unit beyond the logical space, a cached map's translation unit, keeps none).
    fn classify_read(&mut self, first: u32, units: u32) {
        if let Some(classes) = self.placement.as_mut() {
            let class = self.reads.placement_class();
            let end = ((first + units) as usize).min(classes.len());
            if let Some(units) = classes.get_mut(first as usize..end) {
                units.fill(class);
            }
        }
    }

    /// The reads of a host read request, nothing else.
    fn read_units(&mut self, first: u32, units: u32, ready: Done) -> Done {
        let mut done = ready;
        let mut runs = PageRuns::new();
        for lpn in first..first + units {
            let slot = self.map.slot(lpn);
            if slot == UNMAPPED {
                self.counters.unmapped_reads += 1;
                if let Some(o) = &mut self.oracle {
                    o.check("read", lpn, 0, UNMAPPED);
                }
                continue;
            }
            if let Some(o) = &mut self.oracle {
                o.check("read", lpn, slot, self.map.owner(slot));
            }
            if let Some(sw) = self.sw.as_mut().filter(|sw| sw.is_second(slot)) {
                sw.counters.paired_host_reads += 1;
                done = done.max(self.read_second(slot, ready, Cause::Host));
                continue;
            }
            let key = self.block_of(slot) * self.geo.pages_per_block + self.page_of(slot);
            if let Some((page, n)) = runs.add(key) {
                done = done.max(self.read_page(page, n, ready, Cause::Host));
            }
        }
        if let Some((page, n)) = runs.finish() {
            done = done.max(self.read_page(page, n, ready, Cause::Host));
        }
        done
    }

    /// A host read carrying its stream tag, which hint commands may give a latency budget, and
    /// its own latency budget in us (`budget_us`, 0 = none), which wins over hint commands.
    pub fn read_tagged(&mut self, first: u32, units: u32, ready: Done, stream: u16, budget_us: u32) -> Done {
        self.reads.begin_host_read(first, units, stream, budget_us);
        if self.request_timing {
            // Before any of the request's pages is submitted: its own pages are not its queue.
            let (pages, queue_ns) = self.pages_and_queue(first, units, ready);
            let host_ns = self.sched.cost_ns(&Transaction::host(units as u64 * self.unit_bytes));
            self.request = RequestTiming { pages, attempt_ns: 0, queue_ns, host_ns };
        }
        self.read(first, units, ready)
    }

    /// Pages a read of `units` units from `first` senses (runs of units on one page), and the
    /// longest queue the scheduler reports for their dies at `ready`.
    fn pages_and_queue(&self, first: u32, units: u32, ready: Done) -> (u32, u64) {
        let mut runs = PageRuns::new();
        let (mut pages, mut queue) = (0, 0);
        for lpn in first..first + units {
            let slot = self.map.slot(lpn);
            if slot != UNMAPPED {
                let block = self.block_of(slot);
                let key = block * self.geo.pages_per_block + self.page_of(slot);
                pages += runs.add(key).is_some() as u32;
                queue = queue.max(self.sched.die_backlog_ns(self.die_of_block(block), ready.as_time()));
            }
        }
        (pages + runs.finish().is_some() as u32, queue)
    }

    /// Sense one page and move `units` of its units over the channel; pages not yet
    /// programmed are served from the controller's buffer.
    pub(super) fn read_page(&mut self, key: u32, units: u32, ready: Done, cause: Cause) -> Done {
        self.read_page_for(key, units, ready, cause, false)
    }

    /// [`Ftl::read_page`], `for_host`: the read is on a host request's path although done for
    /// `cause` (a cached map's miss: [`Transaction::for_host`]).
    pub(super) fn read_page_for(&mut self, key: u32, units: u32, ready: Done, cause: Cause, for_host: bool) -> Done {
        let (block, page) = self.div.pages_per_block.div_rem(key);
        if page >= self.flash.next_page(block) && self.blocks.state[block as usize] == BlockState::Open {
            self.counters.buffer_hits += 1;
            return ready;
        }
        let mode = self.flash.mode(block);
        let die = self.die_of_block(block);
        let tx = Transaction::read(die, block, page, mode, units as u64 * self.unit_bytes, cause);
        let tx = if for_host { tx.for_host() } else { tx };
        if self.request_timing && cause == Cause::Host {
            // The scheduler priced the attempt, the queue and the host transfer; the read model
            // compares their sum with the budget.
            self.reads.request_timing(RequestTiming { attempt_ns: self.sched.cost_ns(&tx), ..self.request });
        }
        // The read model's clock (retention age) reads the completion as a time.
        let outcome = self.reads.sense(&self.flash, block, page, ready.as_time(), cause == Cause::Host);
        self.counters.page_reads.add(cause, 1);
        // Every attempt (the first read, then each retry step) senses and transfers again.
        let mut done = ready;
        for _ in 0..=outcome.steps {
            self.flash.read(block);
            done = self.sched.submit(&tx, done);
        }
        if outcome.steps > 0 {
            self.counters.read_retries.add(cause, outcome.steps as u64);
        }
        if outcome.uncorrectable {
            self.lose_page(block, page);
        }
        if outcome.urgent {
            if !self.reclaim_queue.contains(&block) {
                self.reclaim_queue.push(block);
            }
        } else if outcome.reclaim && !self.postponed.iter().any(|&(b, _)| b == block) {
            self.postponed.push((block, self.flash.erase_count(block)));
        }
        done
    }

    /// An uncorrectable read: the page's units are lost.
    pub(super) fn lose_page(&mut self, block: u32, page: u32) {
        self.counters.uncorrectable_reads += 1;
        if let Some(o) = &mut self.oracle {
            let first = block * self.slots_per_block + page * self.max_upp;
            for slot in first..first + self.max_upp {
                if self.map.owner(slot) != UNMAPPED {
                    o.lose(slot);
                }
            }
        }
    }
}
