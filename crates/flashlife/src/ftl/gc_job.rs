//! Cleaning a block as a resumable job: move its valid units a page at a time, then erase it.
//!
//! Each [`Ftl::step_job`] does one piece of work (one page's valid units moved, or the erase)
//! and says whether more is left, so a scheduler that interleaves GC with host work can advance
//! a job between host operations and preempt it between pages. Today's callers run a job to
//! its end at once ([`Ftl::run_job`]), in the order the work was always done, so results are
//! those of the whole-block relocation the job replaced.

use super::*;

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
    block: u32,
    /// The block's pool: its units move into this pool's GC stream when it has room.
    plane: u32,
    page: u32,
    /// A page whose data is still in the controller (its program failed), not on the flash.
    buffered: Option<u32>,
    cause: Cause,
    /// When the job's work may start.
    ready: u64,
    /// When its work so far finishes.
    done: u64,
    /// Erase the block once its data is moved (false: the caller retires it).
    erase: bool,
    phase: Phase,
    /// Pages ahead whose map entries are requested before they are needed.
    ahead: u32,
}

impl Ftl {
    /// A job emptying `block` of its valid units from `ready` on (erasing it at the end when
    /// `erase`). The block must already be out of the victim policy's candidates.
    pub(super) fn start_job(
        &mut self,
        block: u32,
        buffered: Option<u32>,
        ready: u64,
        cause: Cause,
        erase: bool,
    ) -> CleanJob {
        let upp = self.upp_by_mode[self.flash.mode(block).index()];
        let ahead = prefetch::GC_PREFETCH_UNITS.div_ceil(upp.max(1));
        let base = block * self.slots_per_block;
        for page in 0..ahead.min(self.geo.pages_per_block) {
            self.prefetch_page_map(base + page * self.max_upp, upp);
        }
        CleanJob {
            block,
            plane: self.geo.plane_of_block(block),
            page: 0,
            buffered,
            cause,
            ready,
            done: ready,
            erase,
            phase: Phase::Move,
            ahead,
        }
    }

    /// Do the job's next piece of work: move the valid units of its next page that holds
    /// some, or erase the block. Returns false once nothing is left (or the drive died).
    pub(super) fn step_job(&mut self, job: &mut CleanJob) -> bool {
        match job.phase {
            Phase::Move => {
                self.move_next_page(job);
                if self.death.is_some() {
                    job.phase = Phase::Finished;
                }
            }
            Phase::Erase => {
                job.done = job.done.max(self.erase_block(job.block, job.ready, job.cause));
                job.phase = Phase::Finished;
            }
            Phase::Finished => {}
        }
        job.phase != Phase::Finished
    }

    /// Run a job to its end; returns when its last operation finishes.
    pub(super) fn run_job(&mut self, mut job: CleanJob) -> u64 {
        while self.step_job(&mut job) {}
        job.done
    }

    /// Move the units of the job's next page that holds valid ones; past the last page (or
    /// once the block holds nothing valid), go on to the erase.
    fn move_next_page(&mut self, job: &mut CleanJob) {
        let block = job.block;
        let upp = self.upp_by_mode[self.flash.mode(block).index()];
        let base = block * self.slots_per_block;
        let ppb = self.geo.pages_per_block;
        while job.page < ppb && self.blocks.valid[block as usize] > 0 {
            let page = job.page;
            job.page += 1;
            if page + job.ahead < ppb {
                self.prefetch_page_map(base + (page + job.ahead) * self.max_upp, upp);
            }
            let first = base + page * self.max_upp;
            let n = (0..upp).filter(|&s| self.map.owner(first + s) != UNMAPPED).count() as u32;
            if n == 0 {
                continue;
            }
            // A translation block's pages are the cached map's work (`mapping_cache.rs`).
            let cause = if self.cmt.is_some()
                && (0..upp).any(|s| {
                    self.map.owner(first + s) != UNMAPPED && self.is_translation_unit(self.map.owner(first + s))
                }) {
                Cause::Mapping
            } else {
                job.cause
            };
            let data_ready = if job.buffered == Some(page) {
                job.ready
            } else if self.sw.as_ref().is_some_and(|sw| sw.is_second(first)) {
                self.read_second(first, job.ready, job.cause)
            } else {
                let reads = self.counters.page_reads.get(Cause::Mapping);
                let r = self.read_page(block * ppb + page, n, job.ready, cause);
                if let Some(c) = self.cmt.as_mut().filter(|_| cause == Cause::Mapping) {
                    c.counters.translation_reads += self.counters.page_reads.get(Cause::Mapping) - reads;
                }
                r
            };
            for s in 0..upp {
                let from = first + s;
                let lpn = self.map.owner(from);
                if lpn == UNMAPPED {
                    continue;
                }
                job.done = job.done.max(self.move_unit(lpn, from, job.plane, data_ready, cause));
                if self.death.is_some() {
                    return;
                }
            }
            return; // one page per step
        }
        if !self.in_gc {
            // A job outside GC (retirement, levelling, reclaim) updates the translation pages
            // its moves changed now; GC does it once per episode (`collect`).
            job.done = job.done.max(self.flush_map_updates(job.ready, job.plane));
        }
        job.phase = if job.erase { Phase::Erase } else { Phase::Finished };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ftl.victim.remove(victim, plane, valid);
        ftl.blocks.state[victim as usize] = BlockState::Cleaning;
        let upp = ftl.upp_by_mode[ftl.flash.mode(victim).index()];
        let mut job = ftl.start_job(victim, None, 0, Cause::Gc, true);
        let (mut steps, mut last) = (0u32, valid);
        let n = ftl.logical_units();
        while ftl.step_job(&mut job) {
            steps += 1;
            let now = ftl.blocks.valid[victim as usize];
            assert!(last - now <= upp, "one step moves at most one page's units ({} -> {now})", last);
            last = now;
            for i in 0..3 {
                ftl.write((steps * 131 + i * 17) % n, 1, 0);
            }
        }
        assert!(steps >= 2, "the job took {steps} steps: not resumable in pieces");
        assert_eq!(ftl.block_state(victim), BlockState::Free);
        assert_eq!(ftl.blocks.valid[victim as usize], 0);
        assert_eq!(ftl.verify_all(), None);
        assert_eq!(ftl.integrity_violation(), None);
    }
}
