//! FT-PASSD's two device policies (the paper's Table 4), over the device's capabilities
//! ([`DeviceCore`]: program, read, copy, take a reserved block, retire a block): without
//! shift ([`BlockCopy`]) and with shift ([`Shifted`], the proposal, over [`ShiftTranslator`]).

use super::ShiftTranslator;
use crate::config::FtPassdConfig;
use crate::device::memory::MemoryReport;
use crate::device::policy::FailurePolicy;
use crate::device::DeviceCore;
use crate::flash::{Geometry, ProgramStatus};
use crate::stats::Cause;
use crate::timing::Done;

/// The policy `open_channel.device_policy = name` selects (one of [`FtPassdConfig::POLICIES`]);
/// `home[lbn]` is each logical block's initial physical block.
pub fn build(name: &str, cfg: &FtPassdConfig, home: Vec<u32>, geo: Geometry) -> Box<dyn FailurePolicy> {
    if name == FtPassdConfig::NO_SHIFT {
        Box::new(BlockCopy { map: home, geo })
    } else {
        debug_assert_eq!(name, FtPassdConfig::SHIFT);
        let t = ShiftTranslator::new(home, geo.pages_per_block);
        Box::new(Shifted { t, geo, pending: Vec::new(), cursor: 0, idle_timeout_ns: cfg.idle_timeout_ns() })
    }
}

/// FT-PASSD without shift: write-back, a block map only. A failed program makes the device
/// copy the block's written pages to a reserved block, in the foreground, then retry at the
/// same page offset there; no write is taken in until the retry ends.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct BlockCopy {
    map: Vec<u32>,
    geo: Geometry,
}

#[typetag::serde]
impl FailurePolicy for BlockCopy {
    fn name(&self) -> &'static str {
        FtPassdConfig::NO_SHIFT
    }
    fn write_back(&self) -> bool {
        true
    }
    #[inline]
    fn translate_write(&self, lbn: u32, lpo: u32) -> (u32, u32) {
        (self.map[lbn as usize], lpo)
    }
    fn program_failed(&mut self, core: &mut DeviceCore, lbn: u32, lpo: u32, detected: Done) -> Option<Done> {
        let failed = self.map[lbn as usize];
        let plane = self.geo.plane_of_block(failed);
        let tag = core.tag(lbn, lpo);
        'fresh: loop {
            let r = core.take_reserved(plane)?;
            // The copy runs page after page and the retry after it, each waiting for the one
            // before: on one die the reservation scheduler serialises them in booking order
            // anyway, and a scheduler that queues work must not let the retry (which releases
            // the failed page's buffer space) or a later page pass an earlier one.
            let mut after = detected;
            for p in 0..lpo {
                core.stats.foreground_copied_pages += 1;
                let (copied, status) = core.copy((failed, p), (r, p), after, Cause::BadBlock);
                if status == ProgramStatus::Failed {
                    core.retire_block(r);
                    continue 'fresh;
                }
                after = copied;
            }
            let (done, status) = core.program(r, lpo, tag, after, Cause::BadBlock);
            if status == ProgramStatus::Failed {
                core.retire_block(r);
                continue;
            }
            self.map[lbn as usize] = r;
            core.retire_block(failed);
            // The paper (Section III-B): the device cannot process write commands during the
            // copy, on any way.
            core.stall_writes(detected, done);
            return Some(done);
        }
    }
    fn erase(&mut self, _: &mut DeviceCore, lbn: u32) -> u32 {
        self.map[lbn as usize]
    }
    fn memory(&self, physical_blocks: u64) -> Option<MemoryReport> {
        Some(MemoryReport::new(self.map.len() as u64, physical_blocks, self.geo.pages_per_block, false, 0, 0))
    }
}

/// FT-PASSD with shift (the proposal): write-back; a failed program is retried at once on
/// page 0 of a reserved block, recorded in the logical block's open block list; once the list
/// holds a block's worth of pages, idle time migrates the older pages behind the retried ones
/// and the shift table records the offset (Algorithms 1-3). Migration is background work the
/// device runs one copy at a time once it has been idle for `ftpassd.idle_timeout_us`.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Shifted {
    t: ShiftTranslator,
    geo: Geometry,
    /// Logical blocks whose open block list holds a whole block, awaiting migration.
    pending: Vec<u32>,
    /// Copies done of the first pending block's migration.
    cursor: u32,
    /// `ftpassd.idle_timeout_us`, in ns.
    idle_timeout_ns: u64,
}

impl Shifted {
    /// The translator (for tests and reports).
    pub fn translator(&self) -> &ShiftTranslator {
        &self.t
    }

    /// Copy `lbn` whole, in logical order, into a fresh reserved block (shift 0), starting at
    /// `ready`: the fallback when a migration copy fails. Returns when the copies end, or
    /// `None` when the reserve is exhausted.
    fn remap_whole(&mut self, core: &mut DeviceCore, lbn: u32, ready: Done) -> Option<Done> {
        let plane = self.geo.plane_of_block(self.t.translate_read(lbn, 0).0);
        'fresh: loop {
            let n = core.take_reserved(plane)?;
            let mut done = ready;
            for lpo in 0..self.geo.pages_per_block {
                let src = self.t.translate_read(lbn, lpo);
                core.stats.migrated_pages += 1;
                let (end, status) = core.copy(src, (n, lpo), ready, Cause::Migration);
                done = done.max(end);
                if status == ProgramStatus::Failed {
                    core.retire_block(n);
                    continue 'fresh;
                }
            }
            for b in self.t.remap(lbn, n) {
                core.retire_block(b);
            }
            return Some(done);
        }
    }
}

#[typetag::serde]
impl FailurePolicy for Shifted {
    fn name(&self) -> &'static str {
        FtPassdConfig::SHIFT
    }
    fn write_back(&self) -> bool {
        true
    }
    #[inline]
    fn translate_write(&self, lbn: u32, lpo: u32) -> (u32, u32) {
        self.t.translate_write(lbn, lpo)
    }
    #[inline]
    fn translate_read(&self, lbn: u32, lpo: u32) -> (u32, u32) {
        self.t.translate_read(lbn, lpo)
    }
    #[inline]
    fn programmed(&mut self, lbn: u32) {
        if self.t.shift(lbn).is_none() {
            self.t.written(lbn);
            if self.t.ready_to_migrate(lbn) && !self.pending.contains(&lbn) {
                self.pending.push(lbn);
            }
        }
    }
    fn program_failed(&mut self, core: &mut DeviceCore, lbn: u32, lpo: u32, detected: Done) -> Option<Done> {
        let plane = self.geo.plane_of_block(self.t.translate_write(lbn, lpo).0);
        let tag = core.tag(lbn, lpo);
        loop {
            let r = core.take_reserved(plane)?;
            self.t.program_failed(lbn, lpo, r);
            let (pbn, ppo) = self.t.translate_write(lbn, lpo);
            let (done, status) = core.program(pbn, ppo, tag, detected, Cause::BadBlock);
            if status == ProgramStatus::Ok {
                self.programmed(lbn);
                return Some(done);
            }
            // The retry failed too: Algorithm 1 again adds a block to the tail.
        }
    }
    fn erase(&mut self, core: &mut DeviceCore, lbn: u32) -> u32 {
        if let Some(i) = self.pending.iter().position(|&l| l == lbn) {
            if i == 0 {
                self.cursor = 0;
            }
            self.pending.remove(i);
        }
        let (pbn, bad) = self.t.erase(lbn);
        for b in bad {
            core.retire_block(b);
        }
        pbn
    }
    fn idle_timeout_ns(&self) -> u64 {
        self.idle_timeout_ns
    }
    /// Algorithm 3, one copy a step: the next copy's die (source and target are on the failed
    /// block's plane), after finishing the migrations whose copies are all done.
    fn next_background(&mut self, core: &mut DeviceCore) -> Option<u32> {
        while let Some(&lbn) = self.pending.first() {
            match self.t.migration_step(lbn, self.cursor) {
                Some((_, _, tb, _)) => return Some(core.die_of(tb)),
                None => {
                    for b in self.t.finish_migration(lbn) {
                        core.retire_block(b);
                    }
                    core.stats.migrations += 1;
                    self.cursor = 0;
                    self.pending.remove(0);
                }
            }
        }
        None
    }
    fn background_step(&mut self, core: &mut DeviceCore, start: Done) -> Done {
        let lbn = self.pending[0];
        let (sb, sp, tb, tp) = self.t.migration_step(lbn, self.cursor).expect("next_background named a copy");
        core.stats.migrated_pages += 1;
        let (done, status) = core.copy((sb, sp), (tb, tp), start, Cause::Migration);
        if status == ProgramStatus::Failed {
            // The target failed: copy the block whole into a fresh one instead (one step).
            self.cursor = 0;
            self.pending.remove(0);
            return match self.remap_whole(core, lbn, done) {
                Some(end) => {
                    core.stats.migrations += 1;
                    end
                }
                // No reserved block left: the migration is abandoned and the logical block
                // keeps its open block list (its reads still land on its data). It is not a
                // migration; the copies that ran stay in `migrated_pages` (die time spent).
                None => done,
            };
        }
        self.cursor += 1;
        done
    }
    fn memory(&self, physical_blocks: u64) -> Option<MemoryReport> {
        let (entries, lists) = self.t.peak();
        Some(MemoryReport::new(
            self.t.blocks() as u64,
            physical_blocks,
            self.geo.pages_per_block,
            true,
            entries as u64,
            lists as u64,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tests::{device, device_on, device_with, ocssd};
    use crate::device::{Device, PageOutcome};

    fn ftpassd(name: &'static str) -> Device {
        device(move |home, geo| build(name, &FtPassdConfig::default(), home, geo))
    }

    /// FT-PASSD with shift and an idle timeout of `timeout_us`, after Figure 10's writes:
    /// block 0 failed at page 2, two copies pending. Returns the device and when the last
    /// write's program ended (the device's dies are free from then on).
    fn shifted_after_failure(timeout_us: u64) -> (Device, u64) {
        let cfg = FtPassdConfig { idle_timeout_us: timeout_us };
        let mut d = device(move |home, geo| build(FtPassdConfig::SHIFT, &cfg, home, geo));
        for lpo in 0..4 {
            d.write_page(0, lpo, Done::START, Cause::Host);
        }
        let free = d.core.sched.die_free_at(0);
        (d, free)
    }

    /// Figure 10 on the device (block 0 fails at page 2): every read lands on the page holding
    /// its data before and after the migration (the device's oracle checks), and migration
    /// copies the two pages written before the failure.
    #[test]
    fn figure_10_on_the_device_reads_land_on_the_right_pages() {
        let mut d = ftpassd(FtPassdConfig::SHIFT);
        for lpo in 0..4 {
            assert_eq!(d.write_page(0, lpo, Done::START, Cause::Host).1, PageOutcome::Ok);
        }
        assert_eq!(d.core.stats.failures_handled, 1);
        for lpo in 0..4 {
            assert!(d.verify_page(0, lpo), "before migration: {:?}", d.violation());
        }
        d.idle_since(10_000_000_000);
        d.command_arrived(20_000_000_000);
        assert_eq!((d.core.stats.migrations, d.core.stats.migrated_pages), (1, 2));
        for lpo in 0..4 {
            d.read_page(0, lpo, 4096, Done::at(20_000_000_000), Cause::Host);
        }
        assert!(d.violation().is_none(), "{:?}", d.violation());
        // The failed block and nothing else is out of service; the reserved block took over.
        assert_eq!(d.dead_blocks(), 1);
        assert!(d.core.is_bad(0));
    }

    /// Without shift, the failed block's two written pages are copied in the foreground, and
    /// write-back answers the first pages at once (OCSSD, write-through, waits).
    #[test]
    fn no_shift_copies_in_the_foreground_and_write_through_waits() {
        let mut d = ftpassd(FtPassdConfig::NO_SHIFT);
        let mut acks = Vec::new();
        for lpo in 0..4 {
            acks.push(d.write_page(0, lpo, Done::START, Cause::Host).0);
        }
        assert_eq!(d.core.stats.foreground_copied_pages, 2);
        for lpo in 0..4 {
            assert!(d.verify_page(0, lpo));
        }
        // Write-back: the first pages complete at once, from the buffer.
        assert_eq!(acks[0], Done::START);
        assert!(ocssd().write_page(0, 0, Done::START, Cause::Host).0.as_time() > 0);
    }

    /// Migration starts only once the device has been idle for the timeout: a command that
    /// arrives earlier finds nothing done, and the idle window after it starts the count again.
    #[test]
    fn migration_waits_for_the_idle_timeout() {
        let (mut d, free) = shifted_after_failure(2000);
        d.idle_since(free);
        d.command_arrived(free + 1_999_999);
        assert_eq!(d.core.stats.migrated_pages, 0, "1 ns short of the timeout");
        d.idle_since(free + 2_000_000);
        d.command_arrived(free + 3_000_000);
        assert_eq!(d.core.stats.migrated_pages, 0, "a new window counts from its own start");
        d.idle_since(free + 4_000_000);
        d.command_arrived(free + 1_000_000_000);
        assert_eq!((d.core.stats.migrated_pages, d.core.stats.migrations), (2, 1));
        assert_eq!((d.core.stats.migration_preemptions, d.core.stats.migration_waits), (0, 0));
    }

    /// A command arriving during a copy stops migration after that copy (one page moved, not
    /// two); a read on the copy's die waits for it, and the wait is counted; the next idle
    /// window resumes where migration stopped, and every read still lands on its data.
    #[test]
    fn a_command_preempts_migration_after_the_copy_in_progress() {
        let (mut d, free) = shifted_after_failure(0);
        d.idle_since(free);
        let arrival = free + 1;
        d.command_arrived(arrival);
        let s = &d.core.stats;
        assert_eq!((s.migrated_pages, s.migrations, s.migration_preemptions), (1, 0, 1));
        let copy_end = d.core.sched.die_free_at(0);
        assert!(copy_end > arrival);
        // Page 2 (retried on the reserved block) is read on the copy's die.
        let done = d.read_page(0, 2, 4096, Done::at(arrival), Cause::Host).as_time();
        let s = &d.core.stats;
        assert_eq!(s.migration_waits, 1);
        assert_eq!(s.max_migration_wait_us, (copy_end - arrival) as f64 / 1e3);
        assert!(done > copy_end, "the read ran after the copy: {done} <= {copy_end}");
        // A read once the copy is over does not wait.
        d.read_page(0, 3, 4096, Done::at(done), Cause::Host);
        assert_eq!(d.core.stats.migration_waits, 1);
        d.idle_since(done + 1_000_000);
        d.command_arrived(done + 1_000_000_000);
        assert_eq!((d.core.stats.migrated_pages, d.core.stats.migrations), (2, 1));
        for lpo in 0..4 {
            d.read_page(0, lpo, 4096, Done::at(done + 1_000_000_000), Cause::Host);
        }
        assert!(d.violation().is_none(), "{:?}", d.violation());
    }

    /// A migration copy that fails when no reserved block is left for the fallback (copying
    /// the block whole into a fresh one) abandons the migration: it is not counted as one.
    /// The logical block keeps its open block list, every read still lands on its data, and
    /// nothing is left to migrate.
    #[test]
    fn a_failed_migration_copy_without_reserve_is_not_a_migration() {
        // One reserved block (7): block 0 fails at page 2 and the retry takes block 7; the
        // first migration copy, block 0 page 0 to block 7 page 2, fails too.
        let cfg = FtPassdConfig::default();
        let mut d = device_with(1, 1, &[[0, 2], [7, 2]], move |home, geo| build(FtPassdConfig::SHIFT, &cfg, home, geo));
        for lpo in 0..4 {
            assert_eq!(d.write_page(0, lpo, Done::START, Cause::Host).1, PageOutcome::Ok);
        }
        assert_eq!(d.core.stats.failures_handled, 1);
        assert_eq!(d.stats(0).reserved_blocks_left, 0);
        d.idle_since(10_000_000_000);
        d.command_arrived(20_000_000_000);
        let s = &d.core.stats;
        assert_eq!((s.migrations, s.migrated_pages), (0, 1), "{s:?}");
        for lpo in 0..4 {
            d.read_page(0, lpo, 4096, Done::at(20_000_000_000), Cause::Host);
        }
        assert!(d.violation().is_none(), "{:?}", d.violation());
        // The abandoned migration is not taken up again.
        d.idle_since(30_000_000_000);
        d.command_arrived(40_000_000_000);
        assert_eq!((d.core.stats.migrations, d.core.stats.migrated_pages), (0, 1));
    }

    /// Without shift the device takes no write, on any way, while it copies the failed block
    /// (the paper, Section III-B); with shift a write to another way is taken at once.
    #[test]
    fn no_shift_stalls_writes_to_every_way_during_the_copy() {
        let ack_elsewhere = |name: &'static str| {
            let mut d = device_on(2, move |home, geo| build(name, &FtPassdConfig::default(), home, geo));
            for lpo in 0..3 {
                d.write_page(0, lpo, Done::START, Cause::Host);
            }
            let failed = d.core.stats.first_failure_ns.expect("block 0 page 2 failed");
            // Logical block 6 is on the other way, its buffer empty.
            let ready = failed + 1;
            (d.write_page(6, 0, Done::at(ready), Cause::Host).0.as_time() - ready, d.core.stats.clone())
        };
        let (shift_wait, _) = ack_elsewhere(FtPassdConfig::SHIFT);
        assert_eq!(shift_wait, 0);
        let (wait, stats) = ack_elsewhere(FtPassdConfig::NO_SHIFT);
        assert_eq!(stats.foreground_copied_pages, 2);
        assert_eq!(stats.stalled_writes, 1);
        // The hold is the copy of two pages and the retry, from the failure's status on.
        assert_eq!(stats.max_write_stall_us, wait as f64 / 1e3);
        assert!(stats.max_retry_us > 0.0 && wait as f64 / 1e3 >= stats.max_retry_us - 0.001, "{wait} {stats:?}");
    }
}
