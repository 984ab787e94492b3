//! The device side of an open-channel (physically addressable) SSD: flash, scheduler, per-way
//! write buffers and a program-failure manager chosen by configuration.
//!
//! The host addresses logical blocks (chunks, `lbn`) and page offsets (`lpo`); a fresh device
//! maps logical block `i` of plane `p` to physical block `i` of that plane, and keeps the last
//! `open_channel.reserved_blocks` blocks of every plane as spare never shown to the host. The
//! failure policy ([`policy::FailurePolicy`], given to [`Device::new`]) translates addresses
//! and decides what a failed program does: the baseline's, OCSSD, reports it to the host;
//! techniques' policies (built by the technique registry) handle it on the device, with the
//! capabilities [`DeviceCore`] offers, and report their metadata as a [`MemoryReport`].

pub mod buffer;
mod idle;
pub mod memory;
pub mod policy;

use serde::Serialize;

use crate::flash::{EraseStatus, FlashArray, Geometry, ProgramStatus};
use crate::stats::{Cause, FlashCounters};
use crate::timing::{Done, Scheduler, Transaction};
use buffer::WayBuffer;
use idle::Preempted;
pub use memory::MemoryReport;
use policy::FailurePolicy;

const NONE: u32 = u32::MAX;

/// What the device tells the host about a page write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PageOutcome {
    /// Stored (possibly after a device-side retry).
    Ok,
    /// The program failed and the device did not handle it: the host must rewrite the page
    /// elsewhere (OCSSD semantics; also any policy whose reserve is exhausted).
    Reported,
}

/// Counters of the device's failure handling and buffers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct DeviceStats {
    /// Program failures the device handled itself.
    pub failures_handled: u64,
    /// Program failures reported to the host.
    pub failures_reported: u64,
    /// Programs retried on a reserved block.
    pub retries: u64,
    /// Pages copied in the foreground before a retry (a policy that copies a failed block
    /// before retrying, e.g. FT-PASSD without shift).
    pub foreground_copied_pages: u64,
    /// Pages copied by background migration (e.g. FT-PASSD with shift), and migrations finished.
    /// A migration abandoned for want of a reserved block is not one; the copies it ran are
    /// still migrated pages.
    pub migrated_pages: u64,
    pub migrations: u64,
    /// Background copies that were in progress when a host command arrived (background work
    /// stops after the copy in progress and resumes in the next idle window).
    pub migration_preemptions: u64,
    /// Host-path flash operations (host FTL reads, writes and erases) that were ready on a
    /// die such a copy still held, and the longest wait for it, in us: the tail cost of
    /// background work that cannot know when the next command comes. Under the reservation
    /// scheduler the wait runs to the preempted copy's end; under the queued one it is the
    /// die's time on migration copies while the operation waited (the scheduler counts it).
    pub migration_waits: u64,
    pub max_migration_wait_us: f64,
    /// Page writes held because the device took no writes at the time (a policy's
    /// foreground copy, e.g. FT-PASSD without shift), and the longest hold, in us.
    pub stalled_writes: u64,
    pub max_write_stall_us: f64,
    /// Reserved blocks taken, and left.
    pub reserved_blocks_used: u64,
    pub reserved_blocks_left: u64,
    /// Longest time from a failed program's status to the end of its successful retry, in us.
    pub max_retry_us: f64,
    /// Page admissions that waited for buffer space, and the longest wait in us.
    pub buffer_full_waits: u64,
    pub max_buffer_wait_us: f64,
    /// Acknowledged but not yet programmed bytes (what a power loss would take): the peak
    /// over all buffers, and the time average over the run.
    pub max_unprogrammed_bytes: u64,
    pub mean_unprogrammed_bytes: f64,
    /// The first host-path program failure: when its status was read (ns from the run's
    /// start), the failed page offset in its block (the pages a block copy would move), and
    /// the failed way's buffer at that moment (bytes held, and the fraction of the buffer:
    /// the paper's Figure 16b). `None` without a failure.
    pub first_failure_ns: Option<u64>,
    pub first_failure_page: Option<u32>,
    pub buffer_bytes_at_failure: Option<u64>,
    pub buffer_utilisation_at_failure: Option<f64>,
    /// The highest buffer utilisation at any host-path program failure.
    pub max_buffer_utilisation_at_failure: f64,
}

/// The failed way's buffer at a failure's status time `t`: what was admitted by then and is
/// still held. Pages admitted later but before `t` are added as they arrive.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct FailureSample {
    way: usize,
    t: u64,
    bytes: u64,
}

/// Flash, scheduler and bookkeeping shared by the policies.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct DeviceCore {
    pub flash: FlashArray,
    pub sched: Box<dyn Scheduler>,
    pub counters: FlashCounters,
    pub geo: Geometry,
    pub page_bytes: u64,
    /// Mapping units per page (for unit counters).
    units_per_page: u64,
    /// Physical page -> the host page (lbn * pages_per_block + lpo) it holds; oracle only.
    owner: Option<Vec<u32>>,
    reserve: Vec<Vec<u32>>,
    bad: Vec<bool>,
    bad_count: u64,
    pub stats: DeviceStats,
    violation: Option<String>,
    checks: u64,
    /// The device takes no write from `.0` until `.1` ([`DeviceCore::stall_writes`]).
    write_stall: (Done, Done),
}

impl DeviceCore {
    /// The die physical block `pbn` is on.
    #[inline]
    pub fn die_of(&self, pbn: u32) -> u32 {
        self.geo.die_of_plane(self.geo.plane_of_block(pbn))
    }

    #[inline]
    fn page_index(&self, pbn: u32, ppo: u32) -> usize {
        pbn as usize * self.geo.pages_per_block as usize + ppo as usize
    }

    /// Host page tag of logical page `lpo` of `lbn`.
    #[inline]
    pub fn tag(&self, lbn: u32, lpo: u32) -> u32 {
        lbn * self.geo.pages_per_block + lpo
    }

    /// Program `ppo` of `pbn` with the data of host page `tag`, ready at `ready`.
    pub fn program(&mut self, pbn: u32, ppo: u32, tag: u32, ready: Done, cause: Cause) -> (Done, ProgramStatus) {
        let mode = self.flash.mode(pbn);
        let tx = Transaction::program(self.die_of(pbn), pbn, ppo, mode, self.page_bytes, cause);
        let done = self.sched.submit(&tx, ready);
        self.counters.page_programs.add(cause, 1);
        self.counters.unit_programs.add(cause, self.units_per_page);
        let status = self.flash.program(pbn, ppo);
        if status == ProgramStatus::Failed {
            self.counters.program_failures += 1;
        }
        let i = self.page_index(pbn, ppo);
        if let Some(o) = &mut self.owner {
            o[i] = if status == ProgramStatus::Ok { tag } else { NONE };
        }
        (done, status)
    }

    /// Read `ppo` of `pbn`, which must hold host page `tag` (checked with the oracle on).
    pub fn read(&mut self, pbn: u32, ppo: u32, tag: u32, bytes: u64, ready: Done, cause: Cause) -> Done {
        let i = self.page_index(pbn, ppo);
        if let Some(o) = &self.owner {
            self.checks += 1;
            if o[i] != tag && self.violation.is_none() {
                let pp = self.geo.pages_per_block;
                self.violation = Some(format!(
                    "device read of host block {} page {} from physical block {pbn} page {ppo}, which holds {}",
                    tag / pp,
                    tag % pp,
                    if o[i] == NONE {
                        "nothing".to_string()
                    } else {
                        format!("block {} page {}", o[i] / pp, o[i] % pp)
                    }
                ));
            }
        }
        let mode = self.flash.mode(pbn);
        self.flash.read(pbn);
        self.counters.page_reads.add(cause, 1);
        self.sched.submit(&Transaction::read(self.die_of(pbn), pbn, ppo, mode, bytes, cause), ready)
    }

    /// Copy a page: read `from`, program `to` (the data crosses the channel twice).
    pub fn copy(&mut self, from: (u32, u32), to: (u32, u32), ready: Done, cause: Cause) -> (Done, ProgramStatus) {
        let tag = self.owner.as_ref().map_or(NONE, |o| o[self.page_index(from.0, from.1)]);
        let t = self.read(from.0, from.1, tag, self.page_bytes, ready, cause);
        self.program(to.0, to.1, tag, t, cause)
    }

    /// A reserved block of `plane`, if any is left.
    pub fn take_reserved(&mut self, plane: u32) -> Option<u32> {
        let b = self.reserve[plane as usize].pop()?;
        self.stats.reserved_blocks_used += 1;
        Some(b)
    }

    /// Take `pbn` out of service.
    pub fn retire_block(&mut self, pbn: u32) {
        if !self.bad[pbn as usize] {
            self.bad[pbn as usize] = true;
            self.bad_count += 1;
            self.counters.retired_blocks += 1;
        }
    }

    pub fn is_bad(&self, pbn: u32) -> bool {
        self.bad[pbn as usize]
    }

    /// Take in no write ready in `from..until` before `until` (a foreground copy that holds
    /// the whole device). Overlapping stalls join.
    pub fn stall_writes(&mut self, from: Done, until: Done) {
        let (f, u) = self.write_stall;
        // The stall is a window in time; its end stays the copy's completion, which a
        // write held by it then waits for.
        let overlap = from.as_time() <= u.as_time() && f.as_time() <= until.as_time();
        let earlier = if from.as_time() < f.as_time() { from } else { f };
        self.write_stall = if overlap { (earlier, u.max(until)) } else { (from, until) };
    }

    /// When a write ready at `ready` is taken in, counting the hold.
    #[inline]
    fn write_admitted(&mut self, ready: Done) -> Done {
        let (from, until) = self.write_stall;
        let (t, from, until_t) = (ready.as_time(), from.as_time(), until.as_time());
        if t < from || t >= until_t {
            return ready;
        }
        self.stats.stalled_writes += 1;
        self.stats.max_write_stall_us = self.stats.max_write_stall_us.max((until_t - t) as f64 / 1e3);
        until
    }

    fn record_retry(&mut self, detected: Done, done: Done) {
        self.stats.retries += 1;
        let us = done.as_time().saturating_sub(detected.as_time()) as f64 / 1e3;
        if us > self.stats.max_retry_us {
            self.stats.max_retry_us = us;
        }
    }
}

/// Configuration of a device (its failure policy is given to [`Device::new`] apart).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DeviceParams {
    /// `None`: the policy's own choice.
    pub write_back: Option<bool>,
    pub buffer_bytes_per_way: u64,
    pub reserved_blocks_per_plane: u32,
    pub units_per_page: u64,
    pub oracle: bool,
}

/// An open-channel device.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Device {
    pub core: DeviceCore,
    policy: Box<dyn FailurePolicy>,
    buffers: Vec<WayBuffer>,
    write_back: bool,
    /// Physical block a logical block starts on (its plane fixes its die and way).
    home: Vec<u32>,
    exposure_ns_bytes: u128,
    last_sample: u64,
    /// A failure whose buffer utilisation is still being completed.
    failure_sample: Option<FailureSample>,
    /// No host command outstanding since this time (`idle_since`), until one arrives.
    idle_since: Option<u64>,
    preempted: Option<Preempted>,
    /// The last background step submitted under a stepping scheduler (`idle.rs`): the next
    /// one waits for it.
    #[serde(default = "last_step_none")]
    last_step: Done,
    /// The host FTL writes from its own buffer (`open_channel.host_buffer_kib`): its page
    /// writes are not the current request's, which completed when its data was buffered.
    #[serde(default)]
    host_buffered: bool,
}

fn last_step_none() -> Done {
    Done::START
}

impl Device {
    /// A fresh device. Logical blocks are numbered plane-major, `host_blocks_per_plane` each;
    /// `policy` builds the failure policy from each logical block's initial physical block.
    pub fn new(
        flash: FlashArray,
        mut sched: Box<dyn Scheduler>,
        p: &DeviceParams,
        policy: impl FnOnce(Vec<u32>, Geometry) -> Box<dyn FailurePolicy>,
    ) -> crate::error::Result<Device> {
        let geo = flash.geo;
        let bpp = geo.blocks_per_plane;
        let r = p.reserved_blocks_per_plane;
        let host_bpp = bpp - r;
        let home: Vec<u32> = (0..geo.planes()).flat_map(|plane| (0..host_bpp).map(move |i| plane * bpp + i)).collect();
        // Reserved blocks are taken from the top of each plane.
        let reserve =
            (0..geo.planes()).map(|plane| (plane * bpp + host_bpp..(plane + 1) * bpp).rev().collect()).collect();
        let page_bytes = flash.page_bytes(flash.native_mode());
        let policy = policy(home.clone(), geo);
        let write_back = p.write_back.unwrap_or(policy.write_back());
        let ways = (geo.channels * geo.ways) as usize;
        let owner = p.oracle.then(|| vec![NONE; geo.pages() as usize]);
        // Under a scheduler that queues work, the wait a migration copy causes is inside the
        // scheduler: it counts the host work held behind the copies (`stats`).
        sched.watch_background(Cause::Migration);
        let core = DeviceCore {
            counters: FlashCounters::default(),
            page_bytes,
            units_per_page: p.units_per_page,
            owner,
            reserve,
            bad: vec![false; geo.blocks() as usize],
            bad_count: 0,
            stats: DeviceStats { reserved_blocks_left: (r * geo.planes()) as u64, ..Default::default() },
            violation: None,
            checks: 0,
            write_stall: (Done::START, Done::START),
            flash,
            sched,
            geo,
        };
        Ok(Device {
            core,
            policy,
            buffers: (0..ways).map(|_| WayBuffer::new(p.buffer_bytes_per_way, page_bytes)).collect(),
            write_back,
            home,
            exposure_ns_bytes: 0,
            last_sample: 0,
            failure_sample: None,
            idle_since: None,
            preempted: None,
            last_step: Done::START,
            host_buffered: false,
        })
    }

    /// Page writes from now on come from the host FTL's own buffer: they are not the current
    /// request's, which completed when its data was buffered.
    pub fn set_host_buffered(&mut self, on: bool) {
        self.host_buffered = on;
    }

    /// Logical blocks the host may use.
    pub fn logical_blocks(&self) -> u32 {
        self.home.len() as u32
    }

    pub fn write_back(&self) -> bool {
        self.write_back
    }

    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    #[inline]
    fn way_of(&self, lbn: u32) -> usize {
        let die = self.core.die_of(self.home[lbn as usize]);
        (die / self.core.geo.dies_per_chip) as usize
    }

    /// Plane (parallel unit) of a logical block.
    #[inline]
    pub fn plane_of(&self, lbn: u32) -> u32 {
        self.core.geo.plane_of_block(self.home[lbn as usize])
    }

    /// Write logical page `lpo` of `lbn`, its data in the controller at `ready`. Returns when
    /// the host sees the write complete (buffered for write-back, programmed for
    /// write-through) and the outcome.
    pub fn write_page(&mut self, lbn: u32, lpo: u32, ready: Done, cause: Cause) -> (Done, PageOutcome) {
        let way = self.way_of(lbn);
        let bytes = self.core.page_bytes;
        let ready = self.core.write_admitted(ready);
        let admission = self.buffers[way].admit(ready, bytes, &mut *self.core.sched);
        let admitted = admission.at;
        // The device's statistics (buffer waits, exposure, samples) are in plain time.
        let (ready_t, admitted_t) = (ready.as_time(), admitted.as_time());
        if let Some(f) = &mut self.failure_sample {
            if f.way == way && admitted_t <= f.t {
                f.bytes += bytes;
            }
        }
        // (Under the reservation scheduler a page that waited has `admitted_t > ready_t`;
        // under the queued one the wait is on a pending program, estimated.)
        if admission.waited {
            self.core.stats.buffer_full_waits += 1;
            let us = admitted_t.saturating_sub(ready_t) as f64 / 1e3;
            if us > self.core.stats.max_buffer_wait_us {
                self.core.stats.max_buffer_wait_us = us;
            }
        }
        let (pbn, ppo) = self.policy.translate_write(lbn, lpo);
        self.behind_background(pbn, admitted);
        let tag = self.core.tag(lbn, lpo);
        // Write-back: the host is answered when its data is buffered (`ack` below), not when
        // the program (or a retry after a failure) ends.
        // A host-buffered write's program is never the request's (it completed when buffered).
        self.core.sched.set_detached(self.write_back || self.host_buffered);
        let (done, status) = self.core.program(pbn, ppo, tag, admitted, cause);
        let (release, outcome) = if status == ProgramStatus::Ok {
            self.policy.programmed(lbn);
            (done, PageOutcome::Ok)
        } else {
            self.sample_failure(way, done.as_time(), lpo, bytes);
            match self.policy.program_failed(&mut self.core, lbn, lpo, done) {
                Some(retried) => {
                    self.core.stats.failures_handled += 1;
                    self.core.record_retry(done, retried);
                    (retried, PageOutcome::Ok)
                }
                None => {
                    self.core.stats.failures_reported += 1;
                    (done, PageOutcome::Reported)
                }
            }
        };
        self.core.sched.set_detached(false);
        self.buffers[way].push(release, bytes);
        let ack = if self.write_back && outcome == PageOutcome::Ok { admitted } else { release };
        if !self.host_buffered {
            self.core.sched.wait_for(ack);
        }
        let (release_t, ack_t) = (release.as_time(), ack.as_time());
        if release_t > ack_t {
            self.exposure_ns_bytes += (release_t - ack_t) as u128 * bytes as u128;
            if admitted_t >= self.last_sample {
                self.last_sample = admitted_t;
                let sched = &*self.core.sched;
                let held: u64 = self.buffers.iter_mut().map(|b| b.occupancy(admitted_t, sched)).sum();
                self.core.stats.max_unprogrammed_bytes = self.core.stats.max_unprogrammed_bytes.max(held);
            }
        }
        (ack, outcome)
    }

    /// A program on `way` failed, its status read at `t`: start sampling the way's buffer
    /// (what is held after `t`, plus the failed page itself).
    fn sample_failure(&mut self, way: usize, t: u64, lpo: u32, bytes: u64) {
        if let Some(prev) = self.failure_sample.take() {
            Self::finish_sample(&mut self.core.stats, &self.buffers, prev);
        }
        let s = &mut self.core.stats;
        if s.first_failure_ns.is_none() {
            s.first_failure_ns = Some(t);
            s.first_failure_page = Some(lpo);
        }
        let held = self.buffers[way].held_after(t, &*self.core.sched) + bytes;
        self.failure_sample = Some(FailureSample { way, t, bytes: held });
    }

    fn finish_sample(stats: &mut DeviceStats, buffers: &[WayBuffer], f: FailureSample) {
        let cap = buffers[f.way].capacity();
        let bytes = f.bytes.min(cap);
        let u = bytes as f64 / cap.max(1) as f64;
        if stats.buffer_bytes_at_failure.is_none() {
            stats.buffer_bytes_at_failure = Some(bytes);
            stats.buffer_utilisation_at_failure = Some(u);
        }
        stats.max_buffer_utilisation_at_failure = stats.max_buffer_utilisation_at_failure.max(u);
    }

    /// Read logical page `lpo` of `lbn` (`bytes` of it cross the channel).
    pub fn read_page(&mut self, lbn: u32, lpo: u32, bytes: u64, ready: Done, cause: Cause) -> Done {
        let (pbn, ppo) = self.policy.translate_read(lbn, lpo);
        self.behind_background(pbn, ready);
        let tag = self.core.tag(lbn, lpo);
        self.core.read(pbn, ppo, tag, bytes, ready, cause)
    }

    /// Check, without timing, that logical page `lpo` of `lbn` translates to a page holding it.
    pub fn verify_page(&mut self, lbn: u32, lpo: u32) -> bool {
        let (pbn, ppo) = self.policy.translate_read(lbn, lpo);
        let tag = self.core.tag(lbn, lpo);
        match &self.core.owner {
            Some(o) => {
                self.core.checks += 1;
                let ok = o[self.core.page_index(pbn, ppo)] == tag;
                if !ok && self.core.violation.is_none() {
                    self.core.violation =
                        Some(format!("final check: host block {lbn} page {lpo} not at physical {pbn} page {ppo}"));
                }
                ok
            }
            None => true,
        }
    }

    /// Erase logical block `lbn`.
    pub fn erase(&mut self, lbn: u32, ready: Done, cause: Cause) -> (Done, EraseStatus) {
        let pbn = self.policy.erase(&mut self.core, lbn);
        self.behind_background(pbn, ready);
        let mode = self.core.flash.mode(pbn);
        let tx = Transaction::erase(self.core.die_of(pbn), pbn, mode, cause);
        let done = self.core.sched.submit(&tx, ready);
        self.core.counters.block_erases.add(cause, 1);
        let status = self.core.flash.erase(pbn);
        if let Some(o) = &mut self.core.owner {
            let first = pbn as usize * self.core.geo.pages_per_block as usize;
            o[first..first + self.core.geo.pages_per_block as usize].fill(NONE);
        }
        match status {
            EraseStatus::Ok => {}
            EraseStatus::Failed => {
                self.core.counters.erase_failures += 1;
                self.core.retire_block(pbn);
            }
            EraseStatus::WornOut => {
                self.core.counters.worn_out_blocks += 1;
                self.core.retire_block(pbn);
            }
        }
        (done, status)
    }

    /// The host retires `lbn` (a chunk that failed a program it was told about).
    pub fn retire(&mut self, lbn: u32) {
        let pbn = self.policy.erase(&mut self.core, lbn);
        self.core.retire_block(pbn);
    }

    /// Physical blocks out of service.
    pub fn dead_blocks(&self) -> u64 {
        self.core.bad_count
    }

    pub fn violation(&self) -> Option<&str> {
        self.core.violation.as_deref()
    }

    pub fn checks(&self) -> u64 {
        self.core.checks
    }

    /// Forget counters (after preconditioning).
    pub fn reset_counters(&mut self) {
        self.core.counters = FlashCounters::default();
        self.core.flash.ops = Default::default();
        let left = self.core.reserve.iter().map(|r| r.len() as u64).sum();
        self.core.stats = DeviceStats { reserved_blocks_left: left, ..Default::default() };
        self.exposure_ns_bytes = 0;
        self.failure_sample = None;
    }

    /// Device statistics at the end of a run of `simulated_ns`.
    pub fn stats(&self, simulated_ns: u64) -> DeviceStats {
        let mut s = self.core.stats.clone();
        if let Some(f) = self.failure_sample {
            Self::finish_sample(&mut s, &self.buffers, f);
        }
        if let Some((waits, max_ns)) = self.core.sched.waits_behind_watched() {
            s.migration_waits = waits;
            s.max_migration_wait_us = max_ns as f64 / 1e3;
        }
        s.reserved_blocks_left = self.core.reserve.iter().map(|r| r.len() as u64).sum();
        s.mean_unprogrammed_bytes =
            if simulated_ns == 0 { 0.0 } else { self.exposure_ns_bytes as f64 / simulated_ns as f64 };
        s
    }

    /// The failure manager's metadata, if it keeps any.
    pub fn memory(&self) -> Option<MemoryReport> {
        self.policy.memory(self.core.geo.blocks() as u64)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{FlashConfig, GeometryConfig};
    use crate::flash::failure::InjectedFailures;
    use crate::flash::wear::FixedPeLimit;
    use policy::Ocssd;

    /// One plane of 8 blocks of 4 pages (2 reserved), a failure at block 0 page 2, with the
    /// failure policy `policy` builds.
    pub(crate) fn device(policy: impl FnOnce(Vec<u32>, Geometry) -> Box<dyn FailurePolicy>) -> Device {
        device_on(1, policy)
    }

    /// As [`device`], with `ways` ways of one plane each on one channel (logical blocks 0-5 on
    /// way 0, 6-11 on way 1, ...).
    pub(crate) fn device_on(ways: u32, policy: impl FnOnce(Vec<u32>, Geometry) -> Box<dyn FailurePolicy>) -> Device {
        device_with(ways, 2, &[[0, 2]], policy)
    }

    /// As [`device_on`], with `reserved` reserved blocks per plane (the top ones) and program
    /// failures at the `fail_at` places (block, page) instead.
    pub(crate) fn device_with(
        ways: u32,
        reserved: u32,
        fail_at: &[[u32; 2]],
        policy: impl FnOnce(Vec<u32>, Geometry) -> Box<dyn FailurePolicy>,
    ) -> Device {
        let geo = Geometry::new(&GeometryConfig {
            channels: 1,
            ways,
            dies: 1,
            planes: 1,
            blocks_per_plane: 8,
            pages_per_block: 4,
        });
        let cfg = FlashConfig::default();
        let fail = InjectedFailures::new(1, 0.0, 0.0, fail_at);
        let flash = FlashArray::new(geo, &cfg, Box::new(FixedPeLimit::new([100; 4])), Some(Box::new(fail)));
        let sched = Box::new(crate::timing::Reservation::new(
            flash.times().clone(),
            true,
            1000.0,
            0.0,
            1000.0,
            1,
            vec![0; ways as usize],
        ));
        let p = DeviceParams {
            write_back: None,
            buffer_bytes_per_way: 4 * cfg.page_size,
            reserved_blocks_per_plane: reserved,
            units_per_page: 1,
            oracle: true,
        };
        Device::new(flash, sched, &p, policy).unwrap()
    }

    /// The baseline's device.
    pub(crate) fn ocssd() -> Device {
        device(|home, _| Box::new(Ocssd::new(home)))
    }

    #[test]
    fn a_read_of_the_wrong_page_is_caught() {
        let mut d = ocssd();
        d.write_page(1, 0, Done::START, Cause::Host);
        d.write_page(1, 1, Done::START, Cause::Host);
        // Physical block 1 page 0 holds host page 0 of block 1, not page 1.
        d.core.read(1, 0, d.core.tag(1, 1), 4096, Done::START, Cause::Host);
        assert!(d.violation().is_some());
    }

    /// OCSSD 2.0 semantics: write-through (the host waits for the program) and a failed
    /// program (block 0 page 2) is reported to the host, not handled.
    #[test]
    fn ocssd_writes_through_and_reports_failures() {
        let mut o = ocssd();
        let (ack, outcome) = o.write_page(0, 0, Done::START, Cause::Host);
        assert!(ack.as_time() > 0 && outcome == PageOutcome::Ok);
        o.write_page(0, 1, Done::START, Cause::Host);
        assert_eq!(o.write_page(0, 2, Done::START, Cause::Host).1, PageOutcome::Reported);
        assert_eq!((o.core.stats.failures_reported, o.core.stats.failures_handled), (1, 0));
        assert!(o.memory().is_none());
    }
}
