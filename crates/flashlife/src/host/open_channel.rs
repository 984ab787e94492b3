//! A pblk-like host FTL over an open-channel device (`host.interface = "open_channel"`).
//!
//! The page map lives in host memory at mapping-unit granularity; chunks (the device's
//! logical blocks) are written sequentially, one active chunk per parallel unit (plane) and
//! stream, host pages striped over the parallel units in the same order as the block FTL.
//! Host garbage collection picks victims with the configured [`VictimPolicy`] and erases
//! chunks through the device. A program failure the device reports (OCSSD) makes the host
//! close the chunk, rewrite the page's data at its next write position and retire the chunk
//! when it is collected. Every read and relocation is checked by the integrity [`Oracle`],
//! and the device checks that each read lands on the physical page holding it.
//!
//! Two options bring the write path nearer pblk's (`docs/techniques/ft-passd.md`, "The
//! host write path"): `open_channel.placement = "chunk"` puts a whole command on one
//! parallel unit, and `open_channel.host_buffer_kib` gives the host FTL its own write buffer
//! ([`HostBuffer`]): a write completes once buffered, full pages go to the device as they
//! fill, and only a flush pads a partial page.

use serde::Serialize;

use super::write_buffer::{HostBuffer, HostBufferStats};
use crate::config::{Config, HostPlacement, WriteCompletion};
use crate::device::{Device, DeviceParams, DeviceStats, MemoryReport, PageOutcome};
use crate::error::{Error, Result};
use crate::flash::{EraseStatus, FlashArray, Geometry};
use crate::ftl::oracle::Oracle;
use crate::ftl::pool::{Active, Pool};
use crate::ftl::trim::{trim_units, TrimCounters};
use crate::ftl::victim::{self, VictimPolicy};
use crate::ftl::{
    BlockShape, BlockState, BlockTable, CleanJob, Cleaner, Debt, GcWatermarks, LogicalSpace, SteppedCleaner,
};
use crate::ftl::{Layout, Mapping, PageRuns, PoolShape, Stream, UNMAPPED};
use crate::stats::{Cause, FlashCounters};
use crate::techniques;
use crate::timing::{Done, Scheduler};

/// The open-channel sections of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct OpenChannelSummary {
    pub device_policy: &'static str,
    pub write_back: bool,
    pub buffer_bytes_per_way: u64,
    pub device: DeviceStats,
    /// Program failures the host FTL handled (rewrites of reported pages).
    pub host_rewrites: u64,
    /// The device's failure-manager metadata (absent for OCSSD, which keeps none).
    pub memory: Option<MemoryReport>,
    /// The host FTL's page map, in bytes (4-byte entries), for comparison.
    pub host_page_map_bytes: u64,
    /// The host write path when not the plain one (`open_channel.placement`,
    /// `open_channel.host_buffer_kib`); absent for the stripe without a host buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<HostPathSummary>,
}

/// `summary.open_channel.host_path`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HostPathSummary {
    /// `stripe` or `chunk`.
    pub placement: String,
    /// The host write buffer (`None` without one).
    pub host_buffer: Option<HostBufferStats>,
    /// The minimum write unit per parallel unit, bytes (`open_channel.min_write_kib`).
    #[serde(default)]
    pub min_write_bytes: u64,
    /// Pages programmed with no data to complete a write unit (at a command's end without a
    /// host buffer, at a flush with one).
    #[serde(default)]
    pub unit_padding_pages: u64,
}

/// Host-visible logical capacity of an open-channel configuration.
pub fn layout(cfg: &Config) -> Result<Layout> {
    let geo = Geometry::new(&cfg.geometry);
    let base = Layout::of(cfg)?;
    let upp = cfg.flash.page_size / base.unit_bytes;
    let r = cfg.open_channel.reserved_blocks;
    if r + 4 > geo.blocks_per_plane {
        return Err(Error::config(
            "open_channel.reserved_blocks",
            r,
            format!("fewer than blocks_per_plane - 4 ({})", geo.blocks_per_plane.saturating_sub(4)),
        ));
    }
    let chunks = (geo.blocks_per_plane - r) as u64 * geo.planes() as u64;
    let physical_units = chunks * geo.pages_per_block as u64 * upp;
    let logical = (physical_units as f64 / (1.0 + cfg.capacity.overprovisioning())).floor() as u64;
    if logical == 0 || logical >= UNMAPPED as u64 {
        return Err(Error::config("geometry", physical_units, "a drive of 1 to 2^32-2 logical mapping units"));
    }
    Ok(Layout { unit_bytes: base.unit_bytes, logical_units: logical as u32, physical_units })
}

/// The host FTL and the device below it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct OpenChannel {
    pub dev: Device,
    geo: Geometry,
    unit_bytes: u64,
    upp: u32,
    ppb: u32,
    spc: u32,
    chunks_per_pu: u32,
    logical_units: u32,
    /// Logical unit <-> slot, as the block FTL keeps them.
    map: Mapping,
    /// Valid and usable units, state and closing order per chunk (the block FTL's table).
    blocks: BlockTable<BlockState>,
    /// The device reported a failed program in this chunk: retire it when collected.
    failed: Vec<bool>,
    /// Free chunks, host and GC write points, GC watermarks and stepped cleaning per parallel
    /// unit (the block FTL's pools).
    pus: Vec<Pool<Debt>>,
    stripe: Vec<u32>,
    stripe_pos: usize,
    victim: Box<dyn VictimPolicy>,
    oracle: Option<Oracle>,
    death: Option<String>,
    in_gc: bool,
    host_rewrites: u64,
    scratch: Vec<(u32, u32)>,
    buffer_bytes_per_way: u64,
    /// What host trims did to the map.
    #[serde(default)]
    pub(crate) trims: TrimCounters,
    /// `open_channel.placement = "chunk"`: a command's pages go to one parallel unit.
    #[serde(default)]
    chunk_placement: bool,
    /// The host FTL's write buffer (`open_channel.host_buffer_kib`).
    #[serde(default)]
    hbuf: Option<HostBuffer>,
    /// Pages per write unit (`open_channel.min_write_kib`; 0, in older checkpoints, = 1).
    #[serde(default)]
    unit_pages: u32,
    /// Pages programmed empty to complete a write unit.
    #[serde(default)]
    unit_padding_pages: u64,
}

impl OpenChannel {
    pub fn new(cfg: &Config, flash: FlashArray, sched: Box<dyn Scheduler>) -> Result<OpenChannel> {
        let geo = flash.geo;
        let lay = layout(cfg)?;
        let upp = (cfg.flash.page_size / lay.unit_bytes) as u32;
        let oc = &cfg.open_channel;
        let write_back = match oc.write_completion {
            WriteCompletion::WriteBack => Some(true),
            WriteCompletion::WriteThrough => Some(false),
            WriteCompletion::Auto => None,
        };
        let params = DeviceParams {
            write_back,
            buffer_bytes_per_way: oc.write_buffer_kib * 1024,
            reserved_blocks_per_plane: oc.reserved_blocks,
            units_per_page: upp as u64,
            oracle: cfg.ftl.integrity_oracle,
        };
        let mut dev = Device::new(flash, sched, &params, |home, geo| techniques::device_policy(cfg, home, geo))?;
        let hbuf =
            (oc.host_buffer_kib > 0).then(|| HostBuffer::new(oc.host_buffer_kib * 1024, lay.unit_bytes, geo.planes()));
        dev.set_host_buffered(hbuf.is_some());
        let ppb = geo.pages_per_block;
        let spc = ppb * upp;
        let chunks = dev.logical_blocks();
        let pus_n = geo.planes();
        let cpp = chunks / pus_n;
        let shape = PoolShape { name: "parallel unit", blocks: "chunks", pools: pus_n, blocks_per_pool: cpp };
        let marks = GcWatermarks::of_config(cfg, shape)?;
        marks.required_units(cfg, shape, chunks as u64 * spc as u64, lay.logical_units, spc)?;
        let pus = (0..pus_n).map(|p| Pool::new(p * cpp..(p + 1) * cpp, marks, Debt::default())).collect();
        let seed = crate::seeds::stream_seed(cfg.seed, "host_gc");
        let victim = victim::build(cfg.gc.victim, cfg.gc.d_choices, chunks, pus_n, spc, seed)?;
        let slots = chunks as u64 * spc as u64;
        Ok(OpenChannel {
            stripe: geo.stripe_order(),
            geo,
            unit_bytes: lay.unit_bytes,
            upp,
            ppb,
            spc,
            chunks_per_pu: cpp,
            logical_units: lay.logical_units,
            map: Mapping::new(lay.logical_units, slots),
            blocks: BlockTable::new(chunks, spc, BlockState::Free),
            failed: vec![false; chunks as usize],
            pus,
            stripe_pos: 0,
            victim,
            oracle: cfg.ftl.integrity_oracle.then(|| Oracle::new(lay.logical_units, slots)),
            death: None,
            in_gc: false,
            host_rewrites: 0,
            scratch: Vec::with_capacity(upp as usize),
            buffer_bytes_per_way: params.buffer_bytes_per_way,
            trims: TrimCounters::default(),
            chunk_placement: oc.placement == HostPlacement::Chunk,
            hbuf,
            unit_pages: if oc.min_write_kib == 0 { 1 } else { (oc.min_write_kib * 1024 / cfg.flash.page_size) as u32 },
            unit_padding_pages: 0,
            dev,
        })
    }

    pub fn unit_bytes(&self) -> u64 {
        self.unit_bytes
    }

    pub fn logical_units(&self) -> u32 {
        self.logical_units
    }

    pub fn death(&self) -> Option<&str> {
        self.death.as_deref()
    }

    fn die(&mut self, reason: String) {
        if self.death.is_none() {
            self.death = Some(reason);
        }
    }

    pub fn counters(&self) -> &FlashCounters {
        &self.dev.core.counters
    }

    pub fn free_blocks(&self) -> u64 {
        self.pus.iter().map(|p| p.free.len() as u64).sum()
    }

    pub fn integrity_violation(&self) -> Option<&str> {
        self.oracle.as_ref().and_then(|o| o.violation.as_deref()).or_else(|| self.dev.violation())
    }

    pub fn integrity_checks(&self) -> u64 {
        self.oracle.as_ref().map_or(0, |o| o.checks) + self.dev.checks()
    }

    #[inline]
    fn pu_of(&self, chunk: u32) -> u32 {
        chunk / self.chunks_per_pu
    }

    #[inline]
    fn invalidate(&mut self, lpn: u32) {
        let slot = self.map.slot(lpn);
        if slot == UNMAPPED {
            return;
        }
        self.map.point(lpn, UNMAPPED);
        self.unmap_slot(slot);
    }

    #[inline]
    fn unmap_slot(&mut self, slot: u32) {
        self.map.claim(slot, UNMAPPED);
        let c = slot / self.spc;
        self.blocks.unit_invalid(c, self.pu_of(c), self.victim.as_mut());
    }

    /// Before a host unit takes a new chunk of `pu`: clean the unit if its watermarks say so.
    /// As the block FTL does (`ftl/gc_steps.rs`): when the scheduler steps cleaning and a
    /// free chunk is left above the reserve, the unit owes cleaning and the write goes on
    /// (the soft threshold); otherwise the host FTL's GC runs at once, ahead of the write's
    /// remaining pages, and under a stepping scheduler the write waits for it, its die
    /// serving that work first (the hard threshold).
    fn make_space_for_host(&mut self, pu: u32, ready: Done) {
        let Some(target) = self.pus[pu as usize].gc_due() else { return };
        let steps = self.steps_cleaning();
        if steps && self.pus[pu as usize].may_open(Stream::Host) {
            let free = self.pus[pu as usize].free.len();
            self.owe_cleaning(pu, free);
            return;
        }
        let done = self.collect(pu, ready, target);
        self.pus[pu as usize].cleaned();
        if steps {
            let sched = self.dev.core.sched.as_mut();
            sched.hard_threshold(self.geo.die_of_plane(pu));
            if done != ready {
                sched.wait_for(done);
            }
            // The chunk the write now takes is owed back, as at the soft threshold
            // (`ftl/gc_debt.rs`).
            self.owe_back_taken_block(pu);
        }
    }

    /// Is cleaning owed and stepped on request (the queued scheduler with timing on) rather
    /// than run at once?
    #[inline]
    fn steps_cleaning(&self) -> bool {
        self.dev.core.sched.steps_cleaning()
    }

    /// Decide one step of the host FTL's cleaning on `die` at `now`: in its parallel unit
    /// that owes cleaning and has the fewest free chunks, the next page's moves or its
    /// victim's erase; with none owed, the device's next background step there. Returns false
    /// when there is neither.
    pub fn step_cleaning(&mut self, die: u32, now: Done) -> bool {
        if !self.steps_cleaning() {
            return false;
        }
        while self.death.is_none() {
            let Some(pu) = self.owing_pool(die) else { break };
            if self.step_pu(pu, now) {
                self.reconsider_urgency(die);
                return true;
            }
            self.pus[pu as usize].own.owes = false;
        }
        self.reconsider_urgency(die);
        // Then the device's own background work (a failure policy's migration, while idle).
        self.death.is_none() && self.dev.step_background(die, now)
    }

    /// One step of `pu`'s cleaning; false if it owes none after all.
    fn step_pu(&mut self, pu: u32, now: Done) -> bool {
        let job = match self.pus[pu as usize].own.job.take() {
            Some(job) => job,
            None => match self.next_victim(pu, now) {
                Some(job) => job,
                None => return false,
            },
        };
        self.advance_job(pu, job, now);
        true
    }

    /// Open a chunk for `stream`; host streams leave the last free chunks to GC.
    fn open_chunk(&mut self, pu: u32, stream: Stream) -> bool {
        let p = &mut self.pus[pu as usize];
        if !p.may_open(stream) {
            return false;
        }
        let Some(chunk) = p.free.pop_front() else { return false };
        p.active[stream as usize] = Active::opened(chunk, 0, self.upp);
        self.blocks.state[chunk as usize] = BlockState::Open;
        true
    }

    /// Give `lpn` the next slot of `pu`'s `stream` chunk. Returns the slot and whether the
    /// page is now full (the caller programs it with [`Self::flush`]).
    #[inline]
    fn place(&mut self, pu: u32, stream: Stream, lpn: u32, ready: Done) -> Option<(u32, bool)> {
        if self.pus[pu as usize].active[stream as usize].is_closed() && !self.open_chunk(pu, stream) {
            return None;
        }
        let a = &mut self.pus[pu as usize].active[stream as usize];
        let chunk = a.block;
        let (slot, full) = a.take_slot(self.spc, self.upp, ready);
        self.map.bind(lpn, slot);
        self.blocks.valid[chunk as usize] += 1;
        Some((slot, full))
    }

    /// Program the open page of `pu`'s `stream` chunk (padding unused slots). Returns when the
    /// device completes it.
    fn flush(&mut self, pu: u32, stream: Stream, cause: Cause) -> Done {
        let a = self.pus[pu as usize].active[stream as usize];
        if a.is_closed() || a.slot == 0 {
            return a.ready;
        }
        let done = self.program_open_page(pu, stream, a, cause);
        if stream == Stream::Host {
            if let Some(b) = &mut self.hbuf {
                // The page's buffered units are freed when the device has completed it (after
                // a reported failure: when their rewrite has).
                b.page_sent(pu, done, self.upp - a.slot);
            }
        }
        done
    }

    fn program_open_page(&mut self, pu: u32, stream: Stream, a: Active, cause: Cause) -> Done {
        let (ack, outcome) = self.dev.write_page(a.block, a.page, a.ready, cause);
        if outcome == PageOutcome::Reported {
            return self.rewrite_failed(pu, stream, a, cause).max(ack);
        }
        let next = (a.page + 1 < self.ppb).then_some(a.page + 1);
        if self.pus[pu as usize].active[stream as usize].programmed(next) {
            self.close_chunk(a.block, pu);
        }
        ack
    }

    fn close_chunk(&mut self, chunk: u32, pu: u32) {
        self.blocks.close_full(chunk, pu, self.victim.as_mut());
    }

    /// The device reported a failed program (OCSSD): close the chunk (retired when collected)
    /// and rewrite the page's units at the next write position of the stripe.
    fn rewrite_failed(&mut self, pu: u32, stream: Stream, a: Active, cause: Cause) -> Done {
        self.host_rewrites += 1;
        self.failed[a.block as usize] = true;
        self.blocks.capacity[a.block as usize] = a.page * self.upp;
        self.pus[pu as usize].active[stream as usize] = Active::CLOSED;
        let first = a.block * self.spc + a.page * self.upp;
        let mut moved = std::mem::take(&mut self.scratch);
        moved.clear();
        for slot in first..first + a.slot {
            let lpn = self.map.owner(slot);
            if lpn != UNMAPPED {
                moved.push((lpn, slot));
                self.map.point(lpn, UNMAPPED);
                self.unmap_slot(slot);
            }
        }
        self.close_chunk(a.block, pu);
        let mut done = a.ready;
        let n = moved.len();
        for (i, &(lpn, from)) in moved.iter().enumerate() {
            done = done.max(self.place_anywhere(lpn, from, stream, a.ready, cause, i + 1 == n));
        }
        self.scratch = moved;
        done
    }

    /// Place a unit whose data is in host memory (it moved from `from`) on the next parallel
    /// unit that takes it, and program its page when full or when `last`.
    fn place_anywhere(&mut self, lpn: u32, from: u32, stream: Stream, ready: Done, cause: Cause, last: bool) -> Done {
        let n = self.stripe.len();
        for _ in 0..n {
            self.stripe_pos = (self.stripe_pos + 1) % n;
            let pu = self.stripe[self.stripe_pos];
            if stream == Stream::Host {
                self.make_space_for_host(pu, ready);
            }
            if let Some((slot, full)) = self.place(pu, stream, lpn, ready) {
                if let Some(o) = &mut self.oracle {
                    o.relocate(lpn, from, lpn, slot);
                }
                return if full || last { self.flush(pu, stream, cause) } else { ready };
            }
        }
        self.die("no parallel unit has space to rewrite data after a program failure".into());
        ready
    }

    /// Write `units` units from `first`, their data in host memory at `ready`. Returns when
    /// the write completes: the device has completed every page (without a host buffer), or
    /// every unit is in the host buffer.
    pub fn write(&mut self, first: u32, units: u32, ready: Done) -> Done {
        self.command_arrived(ready.as_time()); // idle detection: a plain time
        let mut done = ready;
        for lpn in first..first + units {
            if let Some(o) = &mut self.oracle {
                o.check_mapped("overwrite", lpn, &self.map);
            }
            self.invalidate(lpn);
            // The unit's program is counted by the device when it programs the page.
            self.dev.core.counters.host_unit_writes += 1;
            // With a host buffer the unit's data is there (and the write done with it) once it
            // finds room; without, the device answers for its page.
            let at = if self.hbuf.is_some() { self.buffer_room(ready) } else { ready };
            done = done.max(at);
            let mut tries = 0;
            loop {
                let pu = self.stripe[self.stripe_pos];
                self.make_space_for_host(pu, at);
                if let Some((slot, full)) = self.place(pu, Stream::Host, lpn, at) {
                    if let Some(o) = &mut self.oracle {
                        o.write(lpn, slot);
                    }
                    if let Some(b) = &mut self.hbuf {
                        b.admitted(pu);
                    }
                    if full {
                        let programmed = self.flush(pu, Stream::Host, Cause::Host);
                        if self.hbuf.is_none() {
                            done = done.max(programmed);
                        }
                        if !self.chunk_placement && self.unit_complete(pu) {
                            self.stripe_pos = (self.stripe_pos + 1) % self.stripe.len();
                        }
                    }
                    break;
                }
                self.stripe_pos = (self.stripe_pos + 1) % self.stripe.len();
                tries += 1;
                if tries > self.stripe.len() {
                    self.die("no parallel unit has space for host data".into());
                    return done;
                }
            }
            if self.death.is_some() {
                return done;
            }
        }
        if self.chunk_placement {
            // The next command goes to the next parallel unit.
            self.stripe_pos = (self.stripe_pos + 1) % self.stripe.len();
        }
        if (self.upp > 1 || self.unit_pages > 1) && self.hbuf.is_none() {
            // A command's last page, and its last write unit, are written padded: completion
            // is synchronous per command.
            for pu in 0..self.geo.planes() {
                if self.pus[pu as usize].active[Stream::Host as usize].slot > 0 {
                    done = done.max(self.flush(pu, Stream::Host, Cause::Host));
                }
                done = done.max(self.pad_unit(pu, ready));
            }
        }
        done
    }

    /// `pu`'s host write point is at a write unit's boundary (or has no open chunk).
    fn unit_complete(&self, pu: u32) -> bool {
        let a = &self.pus[pu as usize].active[Stream::Host as usize];
        a.is_closed() || (a.slot == 0 && a.page.is_multiple_of(self.unit_pages.max(1)))
    }

    /// Program empty pages on `pu`'s host write point, from `ready` on, until its write unit
    /// is complete (the device takes whole units). Returns when the last of them completes.
    fn pad_unit(&mut self, pu: u32, ready: Done) -> Done {
        let mut done = ready;
        while !self.unit_complete(pu) {
            let a = &mut self.pus[pu as usize].active[Stream::Host as usize];
            debug_assert_eq!(a.slot, 0, "a partial page is flushed before its unit is padded");
            a.ready = a.ready.max(ready);
            let a = *a;
            self.unit_padding_pages += 1;
            done = done.max(self.program_open_page(pu, Stream::Host, a, Cause::Host));
        }
        done
    }

    /// When a unit whose data is ready at `ready` finds room in the host buffer. A buffer
    /// full of partial pages (nothing sent whose completion would free it) is flushed first.
    fn buffer_room(&mut self, ready: Done) -> Done {
        loop {
            let b = self.hbuf.as_mut().expect("a host buffer");
            if let Some(t) = b.room_at(ready, &mut *self.dev.core.sched) {
                if t != ready {
                    // (`t` is the later of the two.) The write waits for the page whose completion frees its room.
                    self.dev.core.sched.wait_for(t);
                }
                return t;
            }
            self.flush_host_buffer(ready);
        }
    }

    /// Flush the host buffer at `t`: every partial host page holding buffered units goes to
    /// the device, padded (each once). Returns when the device has completed them (`t`
    /// without a host buffer or partial page).
    pub fn flush_host_buffer(&mut self, t: Done) -> Done {
        let Some(b) = &mut self.hbuf else { return t };
        b.flushed();
        let pus: Vec<u32> = b.partial_pages().collect();
        let mut done = t;
        for pu in pus {
            let a = &mut self.pus[pu as usize].active[Stream::Host as usize];
            a.ready = a.ready.max(t);
            done = done.max(self.flush(pu, Stream::Host, Cause::Host));
        }
        if self.unit_pages > 1 {
            // The device takes whole write units: pad every unit left open.
            for pu in 0..self.geo.planes() {
                done = done.max(self.pad_unit(pu, t));
            }
        }
        done
    }

    /// The host buffer's counters (`None` without one).
    pub fn host_buffer_stats(&self) -> Option<HostBufferStats> {
        self.hbuf.as_ref().map(HostBuffer::stats)
    }

    /// Units the host buffer holds at `t` (0 without one).
    pub fn host_buffer_held(&mut self, t: u64) -> u32 {
        let sched = &*self.dev.core.sched;
        self.hbuf.as_mut().map_or(0, |b| b.held_at(t, sched))
    }

    /// The host buffer's size in units (0 without one).
    pub fn host_buffer_units(&self) -> u32 {
        self.hbuf.as_ref().map_or(0, HostBuffer::capacity_units)
    }

    /// The parallel unit holding logical unit `lpn` (`None` if unmapped).
    pub fn parallel_unit_of(&self, lpn: u32) -> Option<u32> {
        let slot = self.map.slot(lpn);
        (slot != UNMAPPED).then(|| self.pu_of(slot / self.spc))
    }

    /// Deallocate `units` units from `first` (as pblk handles a discard): the host FTL drops
    /// their mappings, the chunks' valid counts fall, and the device is not told (its pages
    /// hold stale data GC will not move).
    pub fn trim(&mut self, first: u32, units: u32) {
        trim_units(self, first, units);
    }

    /// Is `slot` in a page still in host memory (a stream's partly filled page)?
    #[inline]
    fn in_host_memory(&self, slot: u32) -> bool {
        let c = slot / self.spc;
        if self.blocks.state[c as usize] != BlockState::Open {
            return false;
        }
        let page = (slot % self.spc) / self.upp;
        let pu = self.pu_of(c) as usize;
        self.pus[pu].active.iter().any(|a| a.block == c && a.page == page && a.slot > 0)
    }

    /// Read `units` units from `first`. Returns when the last page's data has crossed its
    /// channel.
    pub fn read(&mut self, first: u32, units: u32, ready: Done) -> Done {
        self.command_arrived(ready.as_time()); // idle detection: a plain time
        let mut done = ready;
        let mut runs = PageRuns::new();
        for lpn in first..first + units {
            let slot = self.map.slot(lpn);
            if let Some(o) = &mut self.oracle {
                o.check_mapped("read", lpn, &self.map);
            }
            if slot == UNMAPPED {
                self.dev.core.counters.unmapped_reads += 1;
                continue;
            }
            if self.in_host_memory(slot) {
                self.dev.core.counters.buffer_hits += 1;
                continue;
            }
            if let Some((key, n)) = runs.add(slot / self.upp) {
                done = done.max(self.read_page(key, n, ready, Cause::Host));
            }
        }
        if let Some((key, n)) = runs.finish() {
            done = done.max(self.read_page(key, n, ready, Cause::Host));
        }
        done
    }

    /// Read host page `key` (chunk * pages + page), `units` of it crossing the channel.
    fn read_page(&mut self, key: u32, units: u32, ready: Done, cause: Cause) -> Done {
        let (chunk, page) = (key / self.ppb, key % self.ppb);
        self.dev.read_page(chunk, page, units as u64 * self.unit_bytes, ready, cause)
    }

    /// Host GC of `pu` up to `target` free chunks (the shared victim loop, `ftl::gc_job`).
    fn collect(&mut self, pu: u32, ready: Done, target: usize) -> Done {
        if self.in_gc {
            return ready;
        }
        self.in_gc = true;
        // A victim being stepped is finished first: it is part-moved, so the cheapest to free.
        let done = self.finish_pool_job(pu, ready);
        let done = done.max(self.collect_victims(pu, ready, target));
        self.in_gc = false;
        done
    }

    fn retire(&mut self, chunk: u32) {
        self.blocks.state[chunk as usize] = BlockState::Retired;
        self.blocks.capacity[chunk as usize] = 0;
    }

    /// Move one unit (data in host memory) to the GC stream of `pu`, or of another unit.
    fn move_unit(&mut self, lpn: u32, from: u32, pu: u32, ready: Done, cause: Cause) -> Done {
        let n = self.geo.planes();
        for target in (0..n).map(|i| (pu + i) % n) {
            if let Some((slot, full)) = self.place(target, Stream::Gc, lpn, ready) {
                if let Some(o) = &mut self.oracle {
                    o.relocate(lpn, from, lpn, slot);
                }
                return if full { self.flush(target, Stream::Gc, cause) } else { ready };
            }
        }
        self.die(format!("no chunk in any parallel unit to move data from unit {pu} into"));
        ready
    }

    /// An idle window from `from`: the device is told it is idle, not when the window ends
    /// (`_until`, which the run loop knows from the workload): it learns that from the next
    /// command ([`OpenChannel::command_arrived`]) and runs its background work then.
    pub fn idle(&mut self, from: u64, _until: u64) {
        self.dev.idle_since(from);
    }

    /// A host command reaches the drive at `t` (its first call: the host transfer of a write
    /// or trim, the read itself).
    #[inline]
    pub fn command_arrived(&mut self, t: u64) {
        self.dev.command_arrived(t);
    }

    /// Check every logical unit against the oracle, then the device's translation of each
    /// one on the flash.
    pub fn verify_all(&mut self) -> Option<String> {
        self.oracle.as_mut()?.check_all(&self.map, self.logical_units);
        for lpn in 0..self.logical_units {
            let slot = self.map.slot(lpn);
            if slot != UNMAPPED && !self.in_host_memory(slot) {
                let key = slot / self.upp;
                self.dev.verify_page(key / self.ppb, key % self.ppb);
            }
        }
        self.integrity_violation().map(str::to_string)
    }

    /// Fill, then overwrite at random, in fast-forward (the block FTL's preconditioning, a
    /// page of units per fill write). `stop` is checked every few thousand writes; returns
    /// false if it stopped early.
    pub fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        self.fill_and_overwrite(fill, drive_writes, seed, stop)
    }

    /// Live (not retired) physical blocks by bit mode.
    pub fn blocks_by_mode(&self) -> [u64; 4] {
        let mut n = [0u64; 4];
        for b in 0..self.geo.blocks() {
            if !self.dev.core.is_bad(b) {
                n[self.dev.core.flash.mode(b).index()] += 1;
            }
        }
        n
    }

    /// Mean erase count over the native mode's rated cycles.
    pub fn life_used(&self) -> f64 {
        self.dev.core.flash.life_used()
    }

    /// The open-channel summary at the end of a run.
    pub fn summary(&self, simulated_ns: u64) -> OpenChannelSummary {
        OpenChannelSummary {
            device_policy: self.dev.policy_name(),
            write_back: self.dev.write_back(),
            buffer_bytes_per_way: self.buffer_bytes_per_way,
            device: self.dev.stats(simulated_ns),
            host_rewrites: self.host_rewrites,
            memory: self.dev.memory(),
            host_page_map_bytes: self.logical_units as u64 * 4,
            host_path: (self.chunk_placement || self.hbuf.is_some() || self.unit_pages > 1).then(|| HostPathSummary {
                placement: if self.chunk_placement { "chunk" } else { "stripe" }.to_string(),
                host_buffer: self.host_buffer_stats(),
                min_write_bytes: self.unit_pages.max(1) as u64 * self.upp as u64 * self.unit_bytes,
                unit_padding_pages: self.unit_padding_pages,
            }),
        }
    }
}

/// The host FTL's side of cleaning (`ftl::gc_job`): chunks of one bit mode, pages read from
/// the device, units moved to a parallel unit's GC stream; a chunk with a reported program
/// failure is worth cleaning however full, and retired instead of erased.
impl Cleaner for OpenChannel {
    type State = BlockState;
    const CLEANING: BlockState = BlockState::Cleaning;

    fn parts(&self) -> (&Mapping, &BlockTable<BlockState>, &dyn VictimPolicy) {
        (&self.map, &self.blocks, self.victim.as_ref())
    }
    fn parts_mut(&mut self) -> (&mut BlockTable<BlockState>, &mut dyn VictimPolicy) {
        (&mut self.blocks, self.victim.as_mut())
    }
    fn counters_mut(&mut self) -> &mut FlashCounters {
        &mut self.dev.core.counters
    }
    fn dead(&self) -> bool {
        self.death.is_some()
    }
    fn pool_of(&self, chunk: u32) -> u32 {
        self.pu_of(chunk)
    }
    fn blocks_per_pool(&self) -> u32 {
        self.chunks_per_pu
    }
    fn free_in(&self, pu: u32) -> usize {
        self.pus[pu as usize].free.len()
    }
    fn shape(&self, _chunk: u32) -> BlockShape {
        BlockShape { upp: self.upp, slots_per_block: self.spc, stride: self.upp, pages: self.ppb }
    }
    fn select_victim(&mut self, pu: u32) -> Option<u32> {
        let view = self.blocks.view();
        self.victim.select(pu, &view, &mut |_| true)
    }
    fn gains_nothing(&self, chunk: u32) -> bool {
        let c = chunk as usize;
        self.blocks.valid[c] >= self.blocks.capacity[c] && !self.failed[c]
    }
    fn read_for_move(&mut self, job: &CleanJob, page: u32, _first: u32, n: u32) -> (Done, Cause) {
        (self.read_page(job.block * self.ppb + page, n, job.ready, job.cause), job.cause)
    }
    fn relocate_unit(&mut self, lpn: u32, from: u32, pu: u32, ready: Done, cause: Cause) -> Done {
        self.map.point(lpn, UNMAPPED);
        self.unmap_slot(from);
        self.move_unit(lpn, from, pu, ready, cause)
    }
    fn erase_cleaned(&mut self, chunk: u32, ready: Done, cause: Cause) -> Done {
        if self.failed[chunk as usize] {
            self.dev.retire(chunk);
            self.retire(chunk);
            return ready;
        }
        let (erased, status) = self.dev.erase(chunk, ready, cause);
        if status == EraseStatus::Ok {
            self.blocks.state[chunk as usize] = BlockState::Free;
            let pu = self.pu_of(chunk);
            self.pus[pu as usize].free.push_back(chunk);
        } else {
            self.retire(chunk);
        }
        erased
    }
}

/// The host FTL's pools are its parallel units (planes).
impl SteppedCleaner for OpenChannel {
    #[inline]
    fn debt(&self, pu: u32) -> &Debt {
        &self.pus[pu as usize].own
    }
    #[inline]
    fn debt_mut(&mut self, pu: u32) -> &mut Debt {
        &mut self.pus[pu as usize].own
    }
    fn high_watermark(&self, pu: u32) -> usize {
        self.pus[pu as usize].marks.high
    }
    fn mark_cleaned(&mut self, pu: u32) {
        self.pus[pu as usize].cleaned();
    }
    fn pools_of_die(&self, die: u32) -> std::ops::Range<u32> {
        self.geo.planes_of_die(die)
    }
    fn die_of_pool(&self, pu: u32) -> u32 {
        self.geo.die_of_plane(pu)
    }
    fn pages_per_block(&self) -> u32 {
        self.ppb
    }
    fn set_cleaning(&mut self, on: bool) {
        self.in_gc = on;
    }
}

/// Trims and preconditioning, as the block FTL does them (`ftl::whole_drive`).
impl LogicalSpace for OpenChannel {
    fn logical_units(&self) -> u32 {
        self.logical_units
    }
    fn died(&self) -> bool {
        self.death.is_some()
    }
    fn map_parts(&mut self) -> (&Mapping, Option<&mut Oracle>, &mut TrimCounters) {
        (&self.map, self.oracle.as_mut(), &mut self.trims)
    }
    fn unmap_unit(&mut self, lpn: u32, _trim: bool) {
        self.invalidate(lpn);
    }
    fn scheduler_mut(&mut self) -> &mut dyn Scheduler {
        self.dev.core.sched.as_mut()
    }
    fn write_now(&mut self, first: u32, units: u32) {
        self.write(first, units, Done::START);
    }
    fn fill_units(&self) -> u32 {
        // A write unit a fill write, so that filling pads nothing.
        self.upp * self.unit_pages.max(1)
    }
}
