//! The host interface the simulator drives: a block device (the FTL inside the drive,
//! `host.interface = "block"`) or an open-channel stack (a host FTL over a physically
//! addressed device, `"open_channel"`). Both share the flash model, scheduler and counters.

use super::open_channel::{OpenChannel, OpenChannelSummary};
use crate::flash::FlashArray;
use crate::ftl::trim::TrimCounters;
use crate::ftl::Ftl;
use crate::stats::FlashCounters;
use crate::timing::{Done, Scheduler, Transaction};

/// What a DRAM data cache in front of the drive did (`summary.cache`; the cache is
/// `cache.rs`, and reports this through [`Drive::cache_summary`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CacheSummary {
    pub size_bytes: u64,
    pub line_bytes: u64,
    pub lines: u32,
    /// Line accesses of host reads that found every unit they wanted in DRAM.
    pub read_hits: u64,
    /// Line accesses of host reads that needed the FTL for some unit.
    pub read_misses: u64,
    /// read_hits / (read_hits + read_misses); `None` without reads.
    pub read_hit_ratio: Option<f64>,
    /// Line accesses of host writes that found their line cached.
    pub write_hits: u64,
    pub write_misses: u64,
    /// Dirty lines evicted, and the units they wrote to the FTL.
    pub destages: u64,
    pub destaged_units: u64,
    /// Units the host wrote (the FTL received `destaged_units` of them).
    pub host_units_written: u64,
    /// Dirty units in DRAM when the run ended (not written to flash).
    pub dirty_units_at_end: u64,
}

/// What the run loop needs of a drive, whichever side its FTL is on.
#[typetag::serde]
pub trait Drive: Send {
    /// Write `units` mapping units from `first`, data ready at `ready`; returns the completion.
    fn write(&mut self, first: u32, units: u32, ready: Done) -> Done;
    /// Read `units` mapping units from `first`, issued at `ready`, for host stream `stream`
    /// (hint commands) with the request's own latency budget `budget_us` (0 = none); returns
    /// when data is out.
    fn read(&mut self, first: u32, units: u32, ready: Done, stream: u16, budget_us: u32) -> Done;
    /// Deallocate (TRIM) `units` mapping units from `first`: they become invalid without a
    /// program and read as unmapped until written again. A change of the map: no flash work.
    fn trim(&mut self, first: u32, units: u32);
    /// What trims did to the map so far.
    fn trim_counters(&self) -> TrimCounters;
    /// An idle window in open-loop replay (no host command outstanding).
    fn idle(&mut self, from: u64, until: u64);
    /// Decide one step of the cleaning owed on `die` at time `now` (the scheduler asked:
    /// `EventDriven::background_wanted`); false when nothing is owed there. A drive whose
    /// FTL never says it owes cleaning (`Scheduler::cleaning_owed`) is never asked.
    fn step_cleaning(&mut self, _die: u32, _now: Done) -> bool {
        false
    }
    /// A command with `bytes` crosses the host link.
    fn host_transfer(&mut self, ready: Done, bytes: u64) -> Done;
    /// The scheduler timing the drive's work.
    fn scheduler(&self) -> &dyn Scheduler;
    fn scheduler_mut(&mut self) -> &mut dyn Scheduler;
    /// Fill and overwrite in fast-forward, checking `stop` every few thousand writes;
    /// returns false if it stopped early.
    fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool;
    /// Forget counters (after preconditioning).
    fn reset_counters(&mut self);
    fn death(&self) -> Option<&str>;
    fn life_used(&self) -> f64;
    fn integrity_violation(&self) -> Option<&str>;
    fn integrity_checks(&self) -> u64;
    fn verify_all(&mut self) -> Option<String>;
    fn unit_bytes(&self) -> u64;
    fn logical_units(&self) -> u32;
    fn counters(&self) -> &FlashCounters;
    fn flash(&self) -> &FlashArray;
    fn flash_mut(&mut self) -> &mut FlashArray;
    fn free_blocks(&self) -> u64;
    fn dead_blocks(&self) -> u64;
    fn blocks_by_mode(&self) -> [u64; 4];
    /// Units GC owes to bring its pools up to their high watermarks (0 where not known).
    fn gc_debt_units(&self) -> u64 {
        0
    }
    /// The DRAM data cache's section of the summary (`None` without a cache).
    fn cache_summary(&self) -> Option<CacheSummary> {
        None
    }
    /// The open-channel section of the summary (`None` for a block device).
    fn open_channel_summary(&self, _simulated_ns: u64) -> Option<OpenChannelSummary> {
        None
    }
    /// A hint that units `first..first + units` will be accessed two requests from now:
    /// fetch their map entries into the cache. Must change nothing.
    fn prefetch_map(&self, _first: u32, _units: u32) {}
    /// A hint that units `first..first + units` will be accessed by the next request (after
    /// `prefetch_map` for them): fetch what their current mappings point to. Must change nothing.
    fn prefetch_slots(&self, _first: u32, _units: u32) {}
    /// The block FTL, when this is one.
    fn as_ftl(&self) -> Option<&Ftl> {
        None
    }
    fn as_ftl_mut(&mut self) -> Option<&mut Ftl> {
        None
    }
}

#[typetag::serde]
impl Drive for Ftl {
    fn write(&mut self, first: u32, units: u32, ready: Done) -> Done {
        Ftl::write(self, first, units, ready)
    }
    fn read(&mut self, first: u32, units: u32, ready: Done, stream: u16, budget_us: u32) -> Done {
        Ftl::read_tagged(self, first, units, ready, stream, budget_us)
    }
    fn trim(&mut self, first: u32, units: u32) {
        Ftl::trim(self, first, units)
    }
    fn trim_counters(&self) -> TrimCounters {
        Ftl::trim_counters(self)
    }
    fn idle(&mut self, from: u64, until: u64) {
        Ftl::idle(self, from, until)
    }
    fn step_cleaning(&mut self, die: u32, now: Done) -> bool {
        Ftl::step_cleaning(self, die, now)
    }
    fn host_transfer(&mut self, ready: Done, bytes: u64) -> Done {
        self.sched.submit(&Transaction::host(bytes), ready)
    }
    fn scheduler(&self) -> &dyn Scheduler {
        self.sched.as_ref()
    }
    fn scheduler_mut(&mut self) -> &mut dyn Scheduler {
        self.sched.as_mut()
    }
    fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        Ftl::precondition_until(self, fill, drive_writes, seed, stop)
    }
    fn prefetch_map(&self, first: u32, units: u32) {
        Ftl::prefetch_map(self, first, units)
    }
    fn prefetch_slots(&self, first: u32, units: u32) {
        Ftl::prefetch_slots(self, first, units)
    }
    fn reset_counters(&mut self) {
        self.flash.ops = Default::default();
        self.counters = Default::default();
        if let Some(c) = self.second_write_counters_mut() {
            *c = Default::default();
        }
        self.read_model_mut().reset_stats();
        self.reset_trim_counters();
        self.reset_mapping_cache_counters();
    }
    fn death(&self) -> Option<&str> {
        Ftl::death(self)
    }
    fn life_used(&self) -> f64 {
        Ftl::life_used(self)
    }
    fn integrity_violation(&self) -> Option<&str> {
        Ftl::integrity_violation(self)
    }
    fn integrity_checks(&self) -> u64 {
        Ftl::integrity_checks(self)
    }
    fn verify_all(&mut self) -> Option<String> {
        Ftl::verify_all(self)
    }
    fn unit_bytes(&self) -> u64 {
        Ftl::unit_bytes(self)
    }
    fn logical_units(&self) -> u32 {
        Ftl::logical_units(self)
    }
    fn counters(&self) -> &FlashCounters {
        &self.counters
    }
    fn flash(&self) -> &FlashArray {
        &self.flash
    }
    fn flash_mut(&mut self) -> &mut FlashArray {
        &mut self.flash
    }
    fn free_blocks(&self) -> u64 {
        Ftl::free_blocks(self)
    }
    fn dead_blocks(&self) -> u64 {
        Ftl::dead_blocks(self)
    }
    fn blocks_by_mode(&self) -> [u64; 4] {
        Ftl::blocks_by_mode(self)
    }
    fn as_ftl(&self) -> Option<&Ftl> {
        Some(self)
    }
    fn gc_debt_units(&self) -> u64 {
        Ftl::gc_debt_units(self)
    }
    fn as_ftl_mut(&mut self) -> Option<&mut Ftl> {
        Some(self)
    }
}

#[typetag::serde]
impl Drive for OpenChannel {
    fn write(&mut self, first: u32, units: u32, ready: Done) -> Done {
        OpenChannel::write(self, first, units, ready)
    }
    fn read(&mut self, first: u32, units: u32, ready: Done, _stream: u16, _budget_us: u32) -> Done {
        OpenChannel::read(self, first, units, ready)
    }
    fn trim(&mut self, first: u32, units: u32) {
        OpenChannel::trim(self, first, units)
    }
    fn trim_counters(&self) -> TrimCounters {
        self.trims
    }
    fn idle(&mut self, from: u64, until: u64) {
        OpenChannel::idle(self, from, until)
    }
    fn step_cleaning(&mut self, die: u32, now: Done) -> bool {
        OpenChannel::step_cleaning(self, die, now)
    }
    fn host_transfer(&mut self, ready: Done, bytes: u64) -> Done {
        // A write's or trim's first contact with the drive (a read's comes earlier, in `read`).
        self.command_arrived(ready.as_time()); // idle detection: a plain time
        self.dev.core.sched.submit(&Transaction::host(bytes), ready)
    }
    fn scheduler(&self) -> &dyn Scheduler {
        self.dev.core.sched.as_ref()
    }
    fn scheduler_mut(&mut self) -> &mut dyn Scheduler {
        self.dev.core.sched.as_mut()
    }
    fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        OpenChannel::precondition(self, fill, drive_writes, seed, stop)
    }
    fn reset_counters(&mut self) {
        self.dev.reset_counters();
        self.trims = TrimCounters::default();
    }
    fn death(&self) -> Option<&str> {
        OpenChannel::death(self)
    }
    fn life_used(&self) -> f64 {
        OpenChannel::life_used(self)
    }
    fn integrity_violation(&self) -> Option<&str> {
        OpenChannel::integrity_violation(self)
    }
    fn integrity_checks(&self) -> u64 {
        OpenChannel::integrity_checks(self)
    }
    fn verify_all(&mut self) -> Option<String> {
        OpenChannel::verify_all(self)
    }
    fn unit_bytes(&self) -> u64 {
        OpenChannel::unit_bytes(self)
    }
    fn logical_units(&self) -> u32 {
        OpenChannel::logical_units(self)
    }
    fn counters(&self) -> &FlashCounters {
        OpenChannel::counters(self)
    }
    fn flash(&self) -> &FlashArray {
        &self.dev.core.flash
    }
    fn flash_mut(&mut self) -> &mut FlashArray {
        &mut self.dev.core.flash
    }
    fn free_blocks(&self) -> u64 {
        OpenChannel::free_blocks(self)
    }
    fn dead_blocks(&self) -> u64 {
        self.dev.dead_blocks()
    }
    fn blocks_by_mode(&self) -> [u64; 4] {
        OpenChannel::blocks_by_mode(self)
    }
    fn open_channel_summary(&self, simulated_ns: u64) -> Option<OpenChannelSummary> {
        Some(self.summary(simulated_ns))
    }
}
