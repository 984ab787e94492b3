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

use std::collections::VecDeque;

use serde::Serialize;

use crate::config::{Config, WriteCompletion};
use crate::device::{Device, DeviceParams, DeviceStats, PageOutcome};
use crate::error::{Error, Result};
use crate::flash::{EraseStatus, FlashArray, Geometry};
use crate::ftl::oracle::Oracle;
use crate::ftl::trim::TrimCounters;
use crate::ftl::victim::{self, VictimPolicy};
use crate::ftl::{random_overwrites, Layout, Mapping, CHECK_EVERY, UNMAPPED};
use crate::ftl::{BlockTable, GcWatermarks};
use crate::stats::{Cause, FlashCounters};
use crate::techniques::ftpassd::MemoryReport;
use crate::timing::Scheduler;

const NONE: u32 = u32::MAX;
/// Free chunks per parallel unit host writes never take (room for GC and its failures).
const GC_RESERVE_CHUNKS: usize = 2;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum ChunkState {
    Free,
    Open,
    Full,
    Cleaning,
    Retired,
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Active {
    chunk: u32,
    page: u32,
    slot: u32,
    ready: u64,
}

impl Active {
    const CLOSED: Active = Active { chunk: NONE, page: 0, slot: 0, ready: 0 };
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Pu {
    free: VecDeque<u32>,
    active: [Active; 2],
    marks: GcWatermarks,
}

const HOST: usize = 0;
const GC: usize = 1;

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
    blocks: BlockTable<ChunkState>,
    /// The device reported a failed program in this chunk: retire it when collected.
    failed: Vec<bool>,
    pus: Vec<Pu>,
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
            policy: oc.device_policy,
            write_back,
            buffer_bytes_per_way: oc.write_buffer_kib * 1024,
            reserved_blocks_per_plane: oc.reserved_blocks,
            units_per_page: upp as u64,
            oracle: cfg.ftl.integrity_oracle,
        };
        let dev = Device::new(flash, sched, &params)?;
        let ppb = geo.pages_per_block;
        let spc = ppb * upp;
        let chunks = dev.logical_blocks();
        let pus_n = geo.planes();
        let cpp = chunks / pus_n;
        let mark = |frac: f64, min: usize| ((frac * cpp as f64).ceil() as usize).max(min);
        let low = mark(cfg.gc.low_watermark, GC_RESERVE_CHUNKS + 1);
        let high = mark(cfg.gc.high_watermark, low + 1);
        if high + 2 > cpp as usize {
            return Err(Error::config(
                "gc.high_watermark",
                cfg.gc.high_watermark,
                format!("a watermark leaving chunks for data (a parallel unit has {cpp} chunks)"),
            ));
        }
        let required = lay.logical_units as u64 + high as u64 * pus_n as u64 * spc as u64;
        if (chunks as u64 * spc as u64) < required {
            return Err(Error::config(
                "capacity",
                format!("{:.4}", cfg.capacity.overprovisioning()),
                format!("more spare space than the GC high watermark holds ({high} chunks of {cpp} per parallel unit)"),
            ));
        }
        let pus = (0..pus_n)
            .map(|p| Pu {
                free: (p * cpp..(p + 1) * cpp).collect(),
                active: [Active::CLOSED; 2],
                marks: GcWatermarks::new(low, high),
            })
            .collect();
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
            blocks: BlockTable::new(chunks, spc, ChunkState::Free),
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
        let old = self.blocks.valid[c as usize];
        self.blocks.valid[c as usize] = old - 1;
        if self.blocks.state[c as usize] == ChunkState::Full {
            self.victim.update(c, self.pu_of(c), old, old - 1);
        }
    }

    /// Before a host unit takes a new chunk of `pu`: clean the unit if its watermarks say so
    /// (the host FTL's GC runs at once, ahead of the write's remaining pages).
    fn make_space_for_host(&mut self, pu: u32, ready: u64) {
        let p = &mut self.pus[pu as usize];
        if p.active[HOST].chunk != NONE {
            return;
        }
        if let Some(target) = p.marks.target(p.free.len(), GC_RESERVE_CHUNKS) {
            self.collect(pu, ready, target);
            let p = &mut self.pus[pu as usize];
            p.marks.cleaned(p.free.len());
        }
    }

    /// Open a chunk for `stream`; host streams leave the last free chunks to GC.
    fn open_chunk(&mut self, pu: u32, stream: usize) -> bool {
        if stream == HOST && self.pus[pu as usize].free.len() <= GC_RESERVE_CHUNKS {
            return false;
        }
        let Some(chunk) = self.pus[pu as usize].free.pop_front() else { return false };
        self.blocks.state[chunk as usize] = ChunkState::Open;
        self.pus[pu as usize].active[stream] = Active { chunk, page: 0, slot: 0, ready: 0 };
        true
    }

    /// Give `lpn` the next slot of `pu`'s `stream` chunk. Returns the slot and whether the
    /// page is now full (the caller programs it with [`Self::flush`]).
    #[inline]
    fn place(&mut self, pu: u32, stream: usize, lpn: u32, ready: u64) -> Option<(u32, bool)> {
        if self.pus[pu as usize].active[stream].chunk == NONE && !self.open_chunk(pu, stream) {
            return None;
        }
        let a = &mut self.pus[pu as usize].active[stream];
        let slot = a.chunk * self.spc + a.page * self.upp + a.slot;
        a.slot += 1;
        a.ready = a.ready.max(ready);
        let full = a.slot == self.upp;
        let c = a.chunk;
        self.map.bind(lpn, slot);
        self.blocks.valid[c as usize] += 1;
        Some((slot, full))
    }

    /// Program the open page of `pu`'s `stream` chunk (padding unused slots). Returns when the
    /// device completes it.
    fn flush(&mut self, pu: u32, stream: usize, cause: Cause) -> u64 {
        let a = self.pus[pu as usize].active[stream];
        if a.chunk == NONE || a.slot == 0 {
            return a.ready;
        }
        let (ack, outcome) = self.dev.write_page(a.chunk, a.page, a.ready, cause);
        if outcome == PageOutcome::Reported {
            return self.rewrite_failed(pu, stream, a, cause).max(ack);
        }
        let act = &mut self.pus[pu as usize].active[stream];
        act.page += 1;
        act.slot = 0;
        act.ready = 0;
        if act.page == self.ppb {
            *act = Active::CLOSED;
            self.close_chunk(a.chunk, pu);
        }
        ack
    }

    fn close_chunk(&mut self, chunk: u32, pu: u32) {
        self.blocks.close(chunk, ChunkState::Full);
        self.victim.insert(chunk, pu, self.blocks.valid[chunk as usize]);
    }

    /// The device reported a failed program (OCSSD): close the chunk (retired when collected)
    /// and rewrite the page's units at the next write position of the stripe.
    fn rewrite_failed(&mut self, pu: u32, stream: usize, a: Active, cause: Cause) -> u64 {
        self.host_rewrites += 1;
        self.failed[a.chunk as usize] = true;
        self.blocks.capacity[a.chunk as usize] = a.page * self.upp;
        self.pus[pu as usize].active[stream] = Active::CLOSED;
        let first = a.chunk * self.spc + a.page * self.upp;
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
        self.close_chunk(a.chunk, pu);
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
    fn place_anywhere(&mut self, lpn: u32, from: u32, stream: usize, ready: u64, cause: Cause, last: bool) -> u64 {
        let n = self.stripe.len();
        for _ in 0..n {
            self.stripe_pos = (self.stripe_pos + 1) % n;
            let pu = self.stripe[self.stripe_pos];
            if stream == HOST {
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
    /// the device has completed every page.
    pub fn write(&mut self, first: u32, units: u32, ready: u64) -> u64 {
        let mut done = ready;
        for lpn in first..first + units {
            if let Some(o) = &mut self.oracle {
                let slot = self.map.slot(lpn);
                let owner = if slot == UNMAPPED { UNMAPPED } else { self.map.owner(slot) };
                o.check("overwrite", lpn, slot, owner);
            }
            self.invalidate(lpn);
            // The unit's program is counted by the device when it programs the page.
            self.dev.core.counters.host_unit_writes += 1;
            let mut tries = 0;
            loop {
                let pu = self.stripe[self.stripe_pos];
                self.make_space_for_host(pu, ready);
                if let Some((slot, full)) = self.place(pu, HOST, lpn, ready) {
                    if let Some(o) = &mut self.oracle {
                        o.write(lpn, slot);
                    }
                    if full {
                        done = done.max(self.flush(pu, HOST, Cause::Host));
                        self.stripe_pos = (self.stripe_pos + 1) % self.stripe.len();
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
        if self.upp > 1 {
            // A command's last page is written padded: completion is synchronous per command.
            for pu in 0..self.geo.planes() {
                if self.pus[pu as usize].active[HOST].slot > 0 {
                    done = done.max(self.flush(pu, HOST, Cause::Host));
                }
            }
        }
        done
    }

    /// Deallocate `units` units from `first` (as pblk handles a discard): the host FTL drops
    /// their mappings, the chunks' valid counts fall, and the device is not told (its pages
    /// hold stale data GC will not move).
    pub fn trim(&mut self, first: u32, units: u32) {
        for lpn in first..first + units {
            let slot = self.map.slot(lpn);
            if let Some(o) = &mut self.oracle {
                let owner = if slot == UNMAPPED { UNMAPPED } else { self.map.owner(slot) };
                o.check("trim", lpn, slot, owner);
                o.trim(lpn);
            }
            if slot != UNMAPPED {
                self.trims.mapped_units += 1;
                self.invalidate(lpn);
            }
        }
        self.trims.units += units as u64;
    }

    /// Is `slot` in a page still in host memory (the GC stream's partly filled page)?
    #[inline]
    fn in_host_memory(&self, slot: u32) -> bool {
        let c = slot / self.spc;
        if self.blocks.state[c as usize] != ChunkState::Open {
            return false;
        }
        let page = (slot % self.spc) / self.upp;
        let pu = self.pu_of(c) as usize;
        self.pus[pu].active.iter().any(|a| a.chunk == c && a.page == page && a.slot > 0)
    }

    /// Read `units` units from `first`. Returns when the last page's data has crossed its
    /// channel.
    pub fn read(&mut self, first: u32, units: u32, ready: u64) -> u64 {
        let mut done = ready;
        let mut run = NONE;
        let mut n = 0u32;
        for lpn in first..first + units {
            let slot = self.map.slot(lpn);
            if let Some(o) = &mut self.oracle {
                let owner = if slot == UNMAPPED { UNMAPPED } else { self.map.owner(slot) };
                o.check("read", lpn, if slot == UNMAPPED { 0 } else { slot }, owner);
            }
            if slot == UNMAPPED {
                self.dev.core.counters.unmapped_reads += 1;
                continue;
            }
            if self.in_host_memory(slot) {
                self.dev.core.counters.buffer_hits += 1;
                continue;
            }
            let key = slot / self.upp;
            if key == run {
                n += 1;
                continue;
            }
            if run != NONE {
                done = done.max(self.read_page(run, n, ready, Cause::Host));
            }
            run = key;
            n = 1;
        }
        if run != NONE {
            done = done.max(self.read_page(run, n, ready, Cause::Host));
        }
        done
    }

    /// Read host page `key` (chunk * pages + page), `units` of it crossing the channel.
    fn read_page(&mut self, key: u32, units: u32, ready: u64, cause: Cause) -> u64 {
        let (chunk, page) = (key / self.ppb, key % self.ppb);
        self.dev.read_page(chunk, page, units as u64 * self.unit_bytes, ready, cause)
    }

    fn collect(&mut self, pu: u32, ready: u64, target: usize) -> u64 {
        if self.in_gc {
            return ready;
        }
        self.in_gc = true;
        let mut done = ready;
        let mut fruitless = 0;
        while self.pus[pu as usize].free.len() < target && self.death.is_none() {
            let view = self.blocks.view();
            let Some(v) = self.victim.select(pu, &view, &mut |_| true) else { break };
            let valid = self.blocks.valid[v as usize];
            if valid >= self.blocks.capacity[v as usize] && !self.failed[v as usize] {
                fruitless += 1;
                if self.victim.chooses_least_valid() || fruitless > self.chunks_per_pu {
                    break;
                }
            } else {
                fruitless = 0;
            }
            done = done.max(self.clean(v, pu, ready));
            let c = &mut self.dev.core.counters;
            c.gc_victims += 1;
            c.gc_valid_moved += valid as u64;
        }
        self.in_gc = false;
        done
    }

    /// Move a chunk's valid units to the GC stream and erase it (or retire a failed chunk).
    fn clean(&mut self, chunk: u32, pu: u32, ready: u64) -> u64 {
        self.victim.remove(chunk, pu, self.blocks.valid[chunk as usize]);
        self.blocks.state[chunk as usize] = ChunkState::Cleaning;
        let mut done = ready;
        let base = chunk * self.spc;
        for page in 0..self.ppb {
            if self.blocks.valid[chunk as usize] == 0 {
                break;
            }
            let first = base + page * self.upp;
            let n = (first..first + self.upp).filter(|&s| self.map.owner(s) != UNMAPPED).count() as u32;
            if n == 0 {
                continue;
            }
            let data = self.read_page(chunk * self.ppb + page, n, ready, Cause::Gc);
            for from in first..first + self.upp {
                let lpn = self.map.owner(from);
                if lpn == UNMAPPED {
                    continue;
                }
                self.map.point(lpn, UNMAPPED);
                self.unmap_slot(from);
                done = done.max(self.move_unit(lpn, from, pu, data));
                if self.death.is_some() {
                    return done;
                }
            }
        }
        if self.failed[chunk as usize] {
            self.dev.retire(chunk);
            self.retire(chunk, pu);
            return done;
        }
        let (erased, status) = self.dev.erase(chunk, ready, Cause::Gc);
        if status == EraseStatus::Ok {
            self.blocks.state[chunk as usize] = ChunkState::Free;
            self.pus[pu as usize].free.push_back(chunk);
        } else {
            self.retire(chunk, pu);
        }
        done.max(erased)
    }

    fn retire(&mut self, chunk: u32, _pu: u32) {
        self.blocks.state[chunk as usize] = ChunkState::Retired;
        self.blocks.capacity[chunk as usize] = 0;
    }

    /// Move one unit (data in host memory) to the GC stream of `pu`, or of another unit.
    fn move_unit(&mut self, lpn: u32, from: u32, pu: u32, ready: u64) -> u64 {
        let n = self.geo.planes();
        for target in (0..n).map(|i| (pu + i) % n) {
            if let Some((slot, full)) = self.place(target, GC, lpn, ready) {
                if let Some(o) = &mut self.oracle {
                    o.relocate(lpn, from, lpn, slot);
                }
                return if full { self.flush(target, GC, Cause::Gc) } else { ready };
            }
        }
        self.die(format!("no chunk in any parallel unit to move data from unit {pu} into"));
        ready
    }

    /// An idle window: the device migrates, the host cleans units below the high watermark.
    pub fn idle(&mut self, from: u64, until: u64) {
        self.dev.idle(from, until);
    }

    /// Check every logical unit against the oracle and the device's translation.
    pub fn verify_all(&mut self) -> Option<String> {
        self.oracle.as_ref()?;
        for lpn in 0..self.logical_units {
            let slot = self.map.slot(lpn);
            let o = self.oracle.as_mut().expect("checked");
            if slot == UNMAPPED {
                o.check("final check", lpn, 0, UNMAPPED);
                continue;
            }
            o.check("final check", lpn, slot, self.map.owner(slot));
            if !self.in_host_memory(slot) {
                let key = slot / self.upp;
                self.dev.verify_page(key / self.ppb, key % self.ppb);
            }
        }
        self.integrity_violation().map(str::to_string)
    }

    /// Fill, then overwrite at random, in fast-forward (as the block FTL does).
    /// `stop` is checked every few thousand writes; returns false if it stopped early.
    pub fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        let timing = self.dev.core.sched.timing();
        self.dev.core.sched.set_timing(false);
        let mut stopped = false;
        if fill {
            let step = self.upp.max(1);
            let mut lpn = 0;
            let mut writes = 0u64;
            while lpn < self.logical_units && self.death.is_none() {
                if writes.is_multiple_of(CHECK_EVERY) && stop() {
                    stopped = true;
                    break;
                }
                let n = step.min(self.logical_units - lpn);
                self.write(lpn, n, 0);
                lpn += n;
                writes += 1;
            }
        }
        if !stopped {
            let n = (drive_writes * self.logical_units as f64) as u64;
            stopped = !random_overwrites(seed, self.logical_units, n, stop, |lpn, _| {
                if self.death.is_some() {
                    return false;
                }
                self.write(lpn, 1, 0);
                true
            });
        }
        self.dev.core.sched.set_timing(timing);
        !stopped
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
        let f = &self.dev.core.flash;
        let rated = f.wear_model().rated_cycles(f.native_mode()).max(1.0);
        let sum: u64 = f.erase_counts().iter().map(|&c| c as u64).sum();
        sum as f64 / self.geo.blocks().max(1) as f64 / rated
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
        }
    }
}
