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
use crate::timing::{Transaction, Wait};

/// The policy `open_channel.device_policy = name` selects (one of [`FtPassdConfig::POLICIES`]);
/// `home[lbn]` is each logical block's initial physical block.
pub fn build(name: &str, home: Vec<u32>, geo: Geometry) -> Box<dyn FailurePolicy> {
    if name == FtPassdConfig::NO_SHIFT {
        Box::new(BlockCopy { map: home, geo })
    } else {
        debug_assert_eq!(name, FtPassdConfig::SHIFT);
        let t = ShiftTranslator::new(home, geo.pages_per_block);
        Box::new(Shifted { t, geo, pending: Vec::new(), cursor: 0 })
    }
}

/// FT-PASSD without shift: write-back, a block map only. A failed program makes the device
/// copy the block's written pages to a reserved block, in the foreground, then retry at the
/// same page offset there.
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
    fn program_failed(&mut self, core: &mut DeviceCore, lbn: u32, lpo: u32, detected: u64) -> Option<u64> {
        let failed = self.map[lbn as usize];
        let plane = self.geo.plane_of_block(failed);
        let tag = core.tag(lbn, lpo);
        'fresh: loop {
            let r = core.take_reserved(plane)?;
            for p in 0..lpo {
                core.stats.foreground_copied_pages += 1;
                if core.copy((failed, p), (r, p), detected, Cause::BadBlock).1 == ProgramStatus::Failed {
                    core.retire_block(r);
                    continue 'fresh;
                }
            }
            let (done, status) = core.program(r, lpo, tag, detected, Cause::BadBlock);
            if status == ProgramStatus::Failed {
                core.retire_block(r);
                continue;
            }
            self.map[lbn as usize] = r;
            core.retire_block(failed);
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
/// and the shift table records the offset (Algorithms 1-3).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Shifted {
    t: ShiftTranslator,
    geo: Geometry,
    /// Logical blocks whose open block list holds a whole block, awaiting migration.
    pending: Vec<u32>,
    /// Copies done of the first pending block's migration.
    cursor: u32,
}

impl Shifted {
    /// The translator (for tests and reports).
    pub fn translator(&self) -> &ShiftTranslator {
        &self.t
    }

    /// Copy `lbn` whole, in logical order, into a fresh reserved block (shift 0): the fallback
    /// when a migration copy fails. Returns false when the reserve is exhausted.
    fn remap_whole(&mut self, core: &mut DeviceCore, lbn: u32, ready: u64) -> bool {
        let plane = self.geo.plane_of_block(self.t.translate_read(lbn, 0).0);
        'fresh: loop {
            let Some(n) = core.take_reserved(plane) else { return false };
            for lpo in 0..self.geo.pages_per_block {
                let src = self.t.translate_read(lbn, lpo);
                core.stats.migrated_pages += 1;
                if core.copy(src, (n, lpo), ready, Cause::Migration).1 == ProgramStatus::Failed {
                    core.retire_block(n);
                    continue 'fresh;
                }
            }
            for b in self.t.remap(lbn, n) {
                core.retire_block(b);
            }
            return true;
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
    fn program_failed(&mut self, core: &mut DeviceCore, lbn: u32, lpo: u32, detected: u64) -> Option<u64> {
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
    /// Algorithm 3, one copy at a time, stopping before a copy would run past `until` (the
    /// host command that ends the idle window is served first); the next window resumes.
    fn idle(&mut self, core: &mut DeviceCore, from: u64, until: u64) {
        while let Some(&lbn) = self.pending.first() {
            match self.t.migration_step(lbn, self.cursor) {
                Some((sb, sp, tb, tp)) => {
                    // The copy: a read on the source's die, a program on the target's.
                    let copy = [
                        Transaction::read(
                            core.die_of(sb),
                            sb,
                            sp,
                            core.flash.mode(sb),
                            core.page_bytes,
                            Cause::Migration,
                        ),
                        Transaction::program(
                            core.die_of(tb),
                            tb,
                            tp,
                            core.flash.mode(tb),
                            core.page_bytes,
                            Cause::Migration,
                        ),
                    ];
                    if core.sched.timing() && !core.sched.fits_before(&copy, from, until, Wait::Dies) {
                        return;
                    }
                    core.stats.migrated_pages += 1;
                    if core.copy((sb, sp), (tb, tp), from, Cause::Migration).1 == ProgramStatus::Failed {
                        // The target failed: copy the block whole into a fresh one instead.
                        self.cursor = 0;
                        self.pending.remove(0);
                        self.remap_whole(core, lbn, from);
                        core.stats.migrations += 1;
                        continue;
                    }
                    self.cursor += 1;
                }
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
    use crate::device::tests::{device, ocssd};
    use crate::device::{Device, PageOutcome};

    fn ftpassd(name: &'static str) -> Device {
        device(move |home, geo| build(name, home, geo))
    }

    /// Figure 10 on the device (block 0 fails at page 2): every read lands on the page holding
    /// its data before and after the migration (the device's oracle checks), and migration
    /// copies the two pages written before the failure.
    #[test]
    fn figure_10_on_the_device_reads_land_on_the_right_pages() {
        let mut d = ftpassd(FtPassdConfig::SHIFT);
        for lpo in 0..4 {
            assert_eq!(d.write_page(0, lpo, 0, Cause::Host).1, PageOutcome::Ok);
        }
        assert_eq!(d.core.stats.failures_handled, 1);
        for lpo in 0..4 {
            assert!(d.verify_page(0, lpo), "before migration: {:?}", d.violation());
        }
        d.idle(10_000_000_000, 20_000_000_000);
        assert_eq!((d.core.stats.migrations, d.core.stats.migrated_pages), (1, 2));
        for lpo in 0..4 {
            d.read_page(0, lpo, 4096, 20_000_000_000, Cause::Host);
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
            acks.push(d.write_page(0, lpo, 0, Cause::Host).0);
        }
        assert_eq!(d.core.stats.foreground_copied_pages, 2);
        for lpo in 0..4 {
            assert!(d.verify_page(0, lpo));
        }
        // Write-back: the first pages complete at once, from the buffer.
        assert_eq!(acks[0], 0);
        assert!(ocssd().write_page(0, 0, 0, Cause::Host).0 > 0);
    }
}
