//! The flash translation layer: page mapping at mapping-unit granularity, striped
//! allocation with one pool per plane, garbage collection, wear leveling, bad-block
//! management and the integrity oracle.
//!
//! Physical unit slots are numbered `block * slots_per_block + page * max_units_per_page +
//! slot`, so a page's slots stay put when its block changes bit mode (a page then holds
//! fewer units and the upper slots go unused). Two dense arrays map logical units to slots
//! and slots back to logical units; everything else is per block. No allocation happens per
//! page operation.

pub mod bad_block;
mod fastdiv;
pub mod oracle;
mod prefetch;
pub mod read_model;
pub mod second_write;
pub mod victim;
pub mod wear_leveling;

use std::collections::VecDeque;

use crate::config::Config;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::flash::{BitMode, EraseStatus, FlashArray, Geometry, ProgramStatus};
use crate::stats::{Cause, FlashCounters};
use bad_block::{BadBlockPolicy, FailureAction, SalvageState};
use fastdiv::Divisor;
use oracle::Oracle;
use read_model::{NoReadModel, ReadModel};
use second_write::{SecondWriteTechnique, SecondWrites, Verdict};
use victim::{VictimPolicy, VictimView};
use wear_leveling::{NoWearLeveling, PoolWear, ThresholdWearLeveling, WearLeveling};

/// Free blocks per pool that host writes never take: GC needs one to move data into, and a
/// program failure during GC needs another to carry on.
const GC_RESERVE_BLOCKS: usize = 2;

/// No mapping / no owner.
pub const UNMAPPED: u32 = u32::MAX;
const NONE: u32 = u32::MAX;

/// When a pool garbage-collects: GC starts when free blocks fall below the low watermark
/// (or down to the reserve, for tiny pools) and runs until the high watermark, interleaved
/// with host writes: each host block opened meanwhile is paid for by cleaning until one
/// more block is free. Shared by the device FTL and the open-channel host FTL.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct GcWatermarks {
    pub low: usize,
    pub high: usize,
    collecting: bool,
}

impl GcWatermarks {
    pub fn new(low: usize, high: usize) -> Self {
        GcWatermarks { low, high, collecting: false }
    }

    /// Free blocks to clean up to before a host block is taken from a pool with `free` free
    /// blocks, `reserve` of which host writes never take; `None` when no GC is due.
    #[inline]
    pub fn target(&mut self, free: usize, reserve: usize) -> Option<usize> {
        if free < self.low || free <= reserve + 1 {
            self.collecting = true;
        }
        self.collecting.then(|| (free + 1).min(self.high).max(reserve + 1))
    }

    /// After cleaning: GC stops once the high watermark is reached.
    #[inline]
    pub fn cleaned(&mut self, free: usize) {
        if free >= self.high {
            self.collecting = false;
        }
    }
}

/// Life-cycle state of a block, as the FTL sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BlockState {
    /// Erased, in its pool's free list.
    Free,
    /// An active block being filled.
    Open,
    /// Filled; a GC candidate.
    Full,
    /// Chosen for cleaning, data being moved.
    Cleaning,
    /// Out of service.
    Retired,
    /// Recycled by a second-write technique: its invalid pages await second writes.
    Recycled,
}

/// Write streams with their own active block per pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stream {
    Host = 0,
    Gc = 1,
}

/// What happens to a block the wear model finds worn out at its mode.
#[typetag::serde]
pub trait EndOfLifePolicy: Send {
    /// The mode the block continues in, or `None` to retire it.
    fn next_mode(&mut self, block: u32, mode: BitMode) -> Option<BitMode>;
}

/// Baseline end of life: a worn-out block is retired.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RetireWornOut;

#[typetag::serde]
impl EndOfLifePolicy for RetireWornOut {
    fn next_mode(&mut self, _block: u32, _mode: BitMode) -> Option<BitMode> {
        None
    }
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Active {
    block: u32,
    page: u32,
    slot: u32,
    /// Units per page of this block (at its mode).
    upp: u32,
    /// When the data of the open page's units is all in the controller.
    ready: u64,
}

impl Active {
    const CLOSED: Active = Active { block: NONE, page: 0, slot: 0, upp: 0, ready: 0 };
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Pool {
    free: VecDeque<u32>,
    active: [Active; 2],
    marks: GcWatermarks,
    /// No space could be found here: host writes go elsewhere until data is invalidated.
    exhausted: bool,
    live_blocks: u32,
    erase_sum: u64,
    erases_since_check: u32,
}

/// The page-mapping FTL with its flash array and engine.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Ftl {
    pub flash: FlashArray,
    pub engine: Engine,
    pub geo: Geometry,
    unit_bytes: u64,
    upp_by_mode: [u32; 4],
    max_upp: u32,
    slots_per_block: u32,
    /// Divisions by geometry constants on the hot paths (see `fastdiv.rs`).
    div: Divisors,
    logical_units: u32,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid: Vec<u32>,
    capacity: Vec<u32>,
    state: Vec<BlockState>,
    closed_seq: Vec<u64>,
    seq: u64,
    pools: Vec<Pool>,
    stripe: Vec<u32>,
    stripe_pos: usize,
    victim: Box<dyn VictimPolicy>,
    wl: Box<dyn WearLeveling>,
    end_of_life: Box<dyn EndOfLifePolicy>,
    /// What a failed program does and which pages allocation may use.
    bad_blocks: Box<dyn BadBlockPolicy>,
    salvage: SalvageState,
    oracle: Option<Oracle>,
    pub counters: FlashCounters,
    /// Blocks to retire, with the page whose data is still in the controller (failed program).
    retire_queue: Vec<(u32, Option<u32>)>,
    cold_queue: Vec<u32>,
    live_units: u64,
    required_units: u64,
    death: Option<String>,
    in_gc: bool,
    /// Clean in idle windows of open-loop replay (`gc.background`).
    background_gc: bool,
    relocations: u64,
    relocation_fault: Option<u64>,
    /// Second-write mapping state (Reusable SSD); `None` in the baseline.
    sw: Option<SecondWrites>,
    /// Second-write policy, consulted per host unit and for GC; `None` in the baseline.
    technique: Option<Box<dyn SecondWriteTechnique>>,
    /// Read errors, retries and reclaim decisions (the baseline: none).
    reads: Box<dyn ReadModel>,
    /// Blocks a reclaim policy asked to rewrite, done at the end of the host read.
    reclaim_queue: Vec<u32>,
}

/// Divisors of the slot and block numbering.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Divisors {
    slots_per_block: Divisor,
    max_upp: Divisor,
    pages_per_block: Divisor,
    blocks_per_plane: Divisor,
    planes_per_die: Divisor,
}

/// Sizes the FTL derives from the configuration.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    pub unit_bytes: u64,
    pub logical_units: u32,
    pub physical_units: u64,
}

impl Layout {
    /// Mapping unit and logical capacity for a configuration.
    pub fn of(cfg: &Config) -> Result<Layout> {
        let geo = Geometry::new(&cfg.geometry);
        let native = cfg.flash.bit_mode;
        let lowest = if cfg.flash.end_of_life == "retire" { native } else { BitMode::Slc };
        let smallest_page = cfg.flash.page_bytes(lowest);
        let unit_bytes = if cfg.ftl.mapping_unit == 0 { smallest_page } else { cfg.ftl.mapping_unit };
        if !smallest_page.is_multiple_of(unit_bytes) || smallest_page < unit_bytes {
            return Err(Error::config(
                "ftl.mapping_unit",
                unit_bytes,
                format!("a divisor of the smallest page size the drive reaches ({smallest_page} bytes)"),
            ));
        }
        // Every mode a block can reach must hold whole units (e.g. a 16 KiB TLC page scaled by
        // bits per cell gives a 5461-byte SLC page: set `flash.<mode>.page_size`).
        for bits in lowest.bits()..=native.bits() {
            let mode = BitMode::from_bits(bits).unwrap_or(native);
            let page = cfg.flash.page_bytes(mode);
            if page == 0 || !page.is_multiple_of(unit_bytes) || page > cfg.flash.page_size {
                return Err(Error::config(
                    format!("flash.{}.page_size", mode.name()),
                    page,
                    format!(
                        "a multiple of the mapping unit ({unit_bytes} bytes), at most flash.page_size, for every mode a block can reach"
                    ),
                ));
            }
        }
        let upp = cfg.flash.page_size / unit_bytes;
        let physical_units = geo.pages() * upp;
        // Slots are numbered in 32 bits, with one value reserved for "unmapped".
        if physical_units >= UNMAPPED as u64 {
            return Err(Error::config(
                "geometry",
                physical_units,
                "a drive of fewer than 2^32-1 physical mapping units (pages x page_size / mapping unit)",
            ));
        }
        let op = cfg.capacity.overprovisioning();
        let logical = (physical_units as f64 / (1.0 + op)).floor() as u64;
        if logical == 0 || logical >= UNMAPPED as u64 {
            return Err(Error::config("geometry", physical_units, "a drive of 1 to 2^32-2 logical mapping units"));
        }
        Ok(Layout { unit_bytes, logical_units: logical as u32, physical_units })
    }
}

/// Policies a technique puts into the FTL in place of the baseline's (built by the technique
/// registry, `techniques::ftl_plugins`): the FTL names no technique itself.
#[derive(Default)]
pub struct Plugins {
    /// GC victim choice for a `gc.victim` the baseline does not know.
    pub victim: Option<Box<dyn VictimPolicy>>,
    /// What a worn-out block becomes (baseline: retired).
    pub end_of_life: Option<Box<dyn EndOfLifePolicy>>,
}

impl Ftl {
    /// Build the FTL, its flash array and engine, for a validated configuration, with the
    /// techniques' `plugins` in place of the baseline's policies.
    pub fn new(cfg: &Config, flash: FlashArray, engine: Engine, plugins: Plugins) -> Result<Ftl> {
        let geo = flash.geo;
        let layout = Layout::of(cfg)?;
        let unit_bytes = layout.unit_bytes;
        let upp_by_mode = BitMode::ALL.map(|m| (flash.page_bytes(m) / unit_bytes) as u32);
        let max_upp = upp_by_mode.iter().copied().max().unwrap_or(1).max(1);
        let slots_per_block = geo.pages_per_block * max_upp;
        let blocks = geo.blocks();
        let native_upp = upp_by_mode[flash.native_mode().index()];
        let block_units = geo.pages_per_block * native_upp;
        let planes = geo.planes();
        let bpp = geo.blocks_per_plane as usize;
        let mark = |frac: f64, min: usize| ((frac * bpp as f64).ceil() as usize).max(min);
        let low = mark(cfg.gc.low_watermark, GC_RESERVE_BLOCKS + 1);
        let high = mark(cfg.gc.high_watermark, low + 1);
        if high + 2 > bpp {
            return Err(Error::config(
                "gc.high_watermark",
                cfg.gc.high_watermark,
                format!("a watermark leaving blocks for data (a plane has {bpp} blocks)"),
            ));
        }
        let pools = (0..planes)
            .map(|p| Pool {
                free: (p * geo.blocks_per_plane..(p + 1) * geo.blocks_per_plane).collect(),
                active: [Active::CLOSED; 2],
                marks: GcWatermarks::new(low, high),
                exhausted: false,
                live_blocks: geo.blocks_per_plane,
                erase_sum: 0,
                erases_since_check: 0,
            })
            .collect();
        let seed = cfg.seed ^ 0x6763_5f76_6963_7469; // the "gc" stream
        let victim: Box<dyn VictimPolicy> = match plugins.victim {
            Some(v) => v,
            None => victim::build(&cfg.gc.victim, cfg.gc.d_choices, blocks, planes, slots_per_block, seed)?,
        };
        let end_of_life = plugins.end_of_life.unwrap_or_else(|| Box::new(RetireWornOut));
        let wl: Box<dyn WearLeveling> = if cfg.wear_leveling.enabled {
            Box::new(ThresholdWearLeveling { threshold: cfg.wear_leveling.threshold })
        } else {
            Box::new(NoWearLeveling)
        };
        let slots = blocks as u64 * slots_per_block as u64;
        let oracle = cfg.ftl.integrity_oracle.then(|| Oracle::new(layout.logical_units, slots));
        let live_units = blocks as u64 * block_units as u64;
        let required_units = layout.logical_units as u64 + (high as u64 * planes as u64 * block_units as u64);
        if live_units < required_units {
            return Err(Error::config(
                "capacity",
                format!("{:.4}", cfg.capacity.overprovisioning()),
                format!("more spare space than the GC high watermark holds ({} blocks of {} per plane)", high, bpp),
            ));
        }
        Ok(Ftl {
            stripe: geo.stripe_order(),
            geo,
            flash,
            engine,
            unit_bytes,
            upp_by_mode,
            max_upp,
            slots_per_block,
            div: Divisors {
                slots_per_block: Divisor::new(slots_per_block),
                max_upp: Divisor::new(max_upp),
                pages_per_block: Divisor::new(geo.pages_per_block),
                blocks_per_plane: Divisor::new(geo.blocks_per_plane),
                planes_per_die: Divisor::new(geo.planes_per_die),
            },
            logical_units: layout.logical_units,
            l2p: prefetch::map_vec(layout.logical_units as usize, UNMAPPED),
            p2l: prefetch::map_vec(slots as usize, UNMAPPED),
            valid: vec![0; blocks as usize],
            capacity: vec![block_units; blocks as usize],
            state: vec![BlockState::Free; blocks as usize],
            closed_seq: vec![0; blocks as usize],
            seq: 0,
            pools,
            stripe_pos: 0,
            victim,
            wl,
            end_of_life,
            bad_blocks: bad_block::build(&cfg.failures.on_program_failure, blocks, geo.pages_per_block)?,
            salvage: SalvageState::default(),
            oracle,
            counters: FlashCounters::default(),
            retire_queue: Vec::new(),
            cold_queue: Vec::new(),
            live_units,
            required_units,
            death: None,
            in_gc: false,
            background_gc: cfg.gc.background,
            relocations: 0,
            relocation_fault: None,
            sw: None,
            technique: None,
            reads: Box::new(NoReadModel),
            reclaim_queue: Vec::new(),
        })
    }

    /// Replace the end-of-life policy.
    pub fn set_end_of_life(&mut self, policy: Box<dyn EndOfLifePolicy>) {
        self.end_of_life = policy;
    }

    /// Replace the read model (error-aware reads, read reclaim, hints).
    pub fn set_read_model(&mut self, model: Box<dyn ReadModel>) {
        self.reads = model;
    }

    /// The read model in use.
    pub fn read_model(&self) -> &dyn ReadModel {
        self.reads.as_ref()
    }

    /// The read model, mutable (to reset its statistics).
    pub fn read_model_mut(&mut self) -> &mut dyn ReadModel {
        self.reads.as_mut()
    }

    /// Mapping unit in bytes.
    pub fn unit_bytes(&self) -> u64 {
        self.unit_bytes
    }

    /// Logical mapping units exported to the host.
    pub fn logical_units(&self) -> u32 {
        self.logical_units
    }

    /// Why the drive died, if it did.
    pub fn death(&self) -> Option<&str> {
        self.death.as_deref()
    }

    /// The integrity oracle's first violation, if any.
    pub fn integrity_violation(&self) -> Option<&str> {
        self.oracle.as_ref().and_then(|o| o.violation.as_deref())
    }

    /// Oracle checks done (0 when the oracle is off).
    pub fn integrity_checks(&self) -> u64 {
        self.oracle.as_ref().map_or(0, |o| o.checks)
    }

    /// Test hook: the `n`-th relocation from now drops its unit (a deliberately broken
    /// relocation, for testing that the oracle fires).
    pub fn inject_relocation_fault(&mut self, n: u64) {
        self.relocation_fault = Some(self.relocations + n);
    }

    /// Free blocks over all pools.
    pub fn free_blocks(&self) -> u64 {
        self.pools.iter().map(|p| p.free.len() as u64).sum()
    }

    /// Blocks retired.
    pub fn dead_blocks(&self) -> u64 {
        self.state.iter().filter(|&&s| s == BlockState::Retired).count() as u64
    }

    /// Live (not retired) blocks by bit mode, SLC first.
    pub fn blocks_by_mode(&self) -> [u64; 4] {
        let mut n = [0u64; 4];
        for b in 0..self.geo.blocks() {
            if self.state[b as usize] != BlockState::Retired {
                n[self.flash.mode(b).index()] += 1;
            }
        }
        n
    }

    /// Units the live blocks can hold, and units needed for the logical space plus the GC reserve.
    pub fn capacity_units(&self) -> (u64, u64) {
        (self.live_units, self.required_units)
    }

    /// Block state.
    pub fn block_state(&self, block: u32) -> BlockState {
        self.state[block as usize]
    }

    /// Valid units in a block.
    pub fn valid_units(&self, block: u32) -> u32 {
        self.valid[block as usize]
    }

    #[inline]
    fn block_of(&self, slot: u32) -> u32 {
        self.div.slots_per_block.div(slot)
    }

    #[inline]
    fn page_of(&self, slot: u32) -> u32 {
        self.div.max_upp.div(self.div.slots_per_block.div_rem(slot).1)
    }

    /// `geo.plane_of_block`, without a divide.
    #[inline]
    fn plane_of_block(&self, block: u32) -> u32 {
        self.div.blocks_per_plane.div(block)
    }

    /// `geo.die_of_plane`, without a divide.
    #[inline]
    fn die_of_plane(&self, plane: u32) -> u32 {
        self.div.planes_per_die.div(plane)
    }

    #[inline]
    fn die_of_block(&self, block: u32) -> u32 {
        self.die_of_plane(self.plane_of_block(block))
    }

    fn pool_wear(&self, plane: u32) -> PoolWear {
        let p = &self.pools[plane as usize];
        PoolWear { mean_erases: p.erase_sum as f64 / p.live_blocks.max(1) as f64 }
    }

    fn die(&mut self, reason: String) {
        if self.death.is_none() {
            self.death = Some(reason);
        }
    }

    /// Forget the mapping of `lpn` (its data is being overwritten).
    #[inline]
    fn invalidate(&mut self, lpn: u32) {
        let slot = self.l2p[lpn as usize];
        if slot == UNMAPPED {
            return;
        }
        if self.sw.is_some() {
            self.unlink_second_half(slot);
        }
        self.l2p[lpn as usize] = UNMAPPED;
        self.p2l[slot as usize] = UNMAPPED;
        let b = self.block_of(slot);
        self.note_page_invalid(b);
        let old = self.valid[b as usize];
        self.valid[b as usize] = old - 1;
        let plane = self.plane_of_block(b);
        if self.state[b as usize] == BlockState::Full {
            self.victim.update(b, plane, old, old - 1);
        }
        self.pools[plane as usize].exhausted = false;
    }

    /// Open a new active block for `stream` in `plane`. Host streams leave the last free
    /// block to GC and drive GC: once free blocks fall below the low watermark, every host
    /// block opened in the pool is paid for by cleaning until one more block is free, until
    /// the high watermark is reached. GC work is thus interleaved with host writes rather
    /// than done in one long burst.
    fn open_block(&mut self, plane: u32, stream: Stream, ready: u64) -> bool {
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
    fn place(&mut self, plane: u32, stream: Stream, lpn: u32, ready: u64, cause: Cause) -> Option<(u32, Option<u64>)> {
        if self.pools[plane as usize].active[stream as usize].block == NONE && !self.open_block(plane, stream, ready) {
            return None;
        }
        let a = &mut self.pools[plane as usize].active[stream as usize];
        let block = a.block;
        let slot = block * self.slots_per_block + a.page * self.max_upp + a.slot;
        a.slot += 1;
        a.ready = a.ready.max(ready);
        self.l2p[lpn as usize] = slot;
        self.p2l[slot as usize] = lpn;
        self.valid[block as usize] += 1;
        self.counters.unit_programs.add(cause, 1);
        let a = self.pools[plane as usize].active[stream as usize];
        if a.slot < a.upp {
            return Some((slot, None));
        }
        let done = self.program_page(plane, stream, cause);
        // A failed program retried on another page moved the unit: report where it is now.
        Some((self.l2p[lpn as usize], Some(done)))
    }

    /// Program the full open page of an active block.
    fn program_page(&mut self, plane: u32, stream: Stream, cause: Cause) -> u64 {
        loop {
            let a = self.pools[plane as usize].active[stream as usize];
            let mode = self.flash.mode(a.block);
            let die = self.die_of_plane(plane);
            let bytes = a.upp as u64 * self.unit_bytes;
            let done = self.engine.program(die, a.ready, bytes, self.flash.program_ns(mode, a.page));
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

    fn close_block(&mut self, block: u32, plane: u32) {
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
                let slot = self.l2p[lpn as usize];
                let owner = if slot == UNMAPPED { UNMAPPED } else { self.p2l[slot as usize] };
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

    /// Read `units` mapping units from `first`, issued at `ready`. Returns when the last
    /// page's data has crossed its channel.
    pub fn read(&mut self, first: u32, units: u32, ready: u64) -> u64 {
        let mut done = ready;
        let mut run_page = NONE; // (block * pages + page) of the current run of units
        let mut run_units = 0u32;
        for lpn in first..first + units {
            let slot = self.l2p[lpn as usize];
            if slot == UNMAPPED {
                self.counters.unmapped_reads += 1;
                if let Some(o) = &mut self.oracle {
                    o.check("read", lpn, 0, UNMAPPED);
                }
                continue;
            }
            if let Some(o) = &mut self.oracle {
                o.check("read", lpn, slot, self.p2l[slot as usize]);
            }
            if self.sw.as_ref().is_some_and(|sw| sw.is_second(slot)) {
                self.counters.second.paired_host_reads += 1;
                done = done.max(self.read_second(slot, ready, Cause::Host));
                continue;
            }
            let block = self.block_of(slot);
            let page = self.page_of(slot);
            let key = block * self.geo.pages_per_block + page;
            if key == run_page {
                run_units += 1;
                continue;
            }
            if run_page != NONE {
                done = done.max(self.read_page(run_page, run_units, ready, Cause::Host));
            }
            run_page = key;
            run_units = 1;
        }
        if run_page != NONE {
            done = done.max(self.read_page(run_page, run_units, ready, Cause::Host));
        }
        if !self.reclaim_queue.is_empty() {
            // The rewrite starts once the read is served: it delays later requests, not this one.
            self.reclaim_pending(done);
        }
        done
    }

    /// A host read carrying its stream tag, which hint commands may give a latency budget, and
    /// its own latency budget in us (`budget_us`, 0 = none), which wins over hint commands.
    pub fn read_tagged(&mut self, first: u32, units: u32, ready: u64, stream: u16, budget_us: u32) -> u64 {
        self.reads.begin_host_read(first, units, stream, budget_us);
        self.read(first, units, ready)
    }

    /// Sense one page and move `units` of its units over the channel; pages not yet
    /// programmed are served from the controller's buffer.
    fn read_page(&mut self, key: u32, units: u32, ready: u64, cause: Cause) -> u64 {
        let (block, page) = self.div.pages_per_block.div_rem(key);
        if page >= self.flash.next_page(block) && self.state[block as usize] == BlockState::Open {
            self.counters.buffer_hits += 1;
            return ready;
        }
        let mode = self.flash.mode(block);
        let outcome = self.reads.sense(&self.flash, block, page, ready, cause == Cause::Host);
        self.counters.page_reads.add(cause, 1);
        let die = self.die_of_block(block);
        let (sense_ns, bytes) = (self.flash.read_ns(mode, page), units as u64 * self.unit_bytes);
        // Every attempt (the first read, then each retry step) senses and transfers again.
        let mut done = ready;
        for _ in 0..=outcome.steps {
            self.flash.read(block);
            done = self.engine.read(die, done, sense_ns, bytes);
        }
        if outcome.steps > 0 {
            self.counters.read_retries.add(cause, outcome.steps as u64);
        }
        if outcome.uncorrectable {
            self.lose_page(block, page);
        }
        if outcome.reclaim && !self.reclaim_queue.contains(&block) {
            self.reclaim_queue.push(block);
        }
        done
    }

    /// An uncorrectable read: the page's units are lost.
    fn lose_page(&mut self, block: u32, page: u32) {
        self.counters.uncorrectable_reads += 1;
        if let Some(o) = &mut self.oracle {
            let first = block * self.slots_per_block + page * self.max_upp;
            for slot in first..first + self.max_upp {
                if self.p2l[slot as usize] != UNMAPPED {
                    o.lose(slot);
                }
            }
        }
    }

    /// Rewrite the blocks the reclaim policy asked for: move their valid data into the GC
    /// stream and erase them (all counted under `Cause::Reclaim`).
    fn reclaim_pending(&mut self, ready: u64) -> u64 {
        let mut done = ready;
        while let Some(block) = self.reclaim_queue.pop() {
            if self.death.is_some() || self.in_gc {
                self.reclaim_queue.clear();
                break;
            }
            let plane = self.geo.plane_of_block(block);
            if self.pools[plane as usize].free.len() <= GC_RESERVE_BLOCKS {
                // Make room first, as for a failed block: the data needs somewhere to go.
                done = done.max(self.collect(plane, ready, GC_RESERVE_BLOCKS + 1));
            }
            done = done.max(self.reclaim_block(block, plane, ready));
        }
        done
    }

    /// Reclaim one block: a full one is cleaned; an open one (a read-only workload never fills
    /// it) is closed first, its buffered page's units coming from the controller.
    fn reclaim_block(&mut self, block: u32, plane: u32, ready: u64) -> u64 {
        match self.state[block as usize] {
            BlockState::Full => {
                self.counters.reclaimed_blocks += 1;
                self.clean(block, plane, ready, Cause::Reclaim)
            }
            BlockState::Open => {
                let pool = &mut self.pools[plane as usize];
                let Some(stream) = (0..2).find(|&s| pool.active[s].block == block) else {
                    return ready;
                };
                let a = pool.active[stream];
                pool.active[stream] = Active::CLOSED;
                self.state[block as usize] = BlockState::Cleaning;
                self.counters.reclaimed_blocks += 1;
                let moved = self.relocate_block(block, (a.slot > 0).then_some(a.page), ready, Cause::Reclaim);
                if self.death.is_some() {
                    return moved;
                }
                self.erase_block(block, ready, Cause::Reclaim).max(moved)
            }
            _ => ready,
        }
    }

    /// Move every valid unit of `block` into its pool's GC stream. Units of `buffered` (a
    /// page whose program failed) come from the controller, not the flash. Returns when the
    /// last moved page is programmed.
    fn relocate_block(&mut self, block: u32, buffered: Option<u32>, ready: u64, cause: Cause) -> u64 {
        let plane = self.geo.plane_of_block(block);
        let upp = self.upp_by_mode[self.flash.mode(block).index()];
        let base = block * self.slots_per_block;
        let mut done = ready;
        // Map entries of the units `ahead` pages on are requested before they are needed.
        let ahead = prefetch::GC_PREFETCH_UNITS.div_ceil(upp.max(1));
        for page in 0..ahead.min(self.geo.pages_per_block) {
            self.prefetch_page_map(base + page * self.max_upp, upp);
        }
        for page in 0..self.geo.pages_per_block {
            if self.valid[block as usize] == 0 {
                break;
            }
            if page + ahead < self.geo.pages_per_block {
                self.prefetch_page_map(base + (page + ahead) * self.max_upp, upp);
            }
            let first = base + page * self.max_upp;
            let n = (0..upp).filter(|&s| self.p2l[(first + s) as usize] != UNMAPPED).count() as u32;
            if n == 0 {
                continue;
            }
            let data_ready = if buffered == Some(page) {
                ready
            } else if self.sw.as_ref().is_some_and(|sw| sw.is_second(first)) {
                self.read_second(first, ready, cause)
            } else {
                self.read_page(block * self.geo.pages_per_block + page, n, ready, cause)
            };
            for s in 0..upp {
                let from = first + s;
                let lpn = self.p2l[from as usize];
                if lpn == UNMAPPED {
                    continue;
                }
                done = done.max(self.move_unit(lpn, from, plane, data_ready, cause));
                if self.death.is_some() {
                    return done;
                }
            }
        }
        done
    }

    /// Prefetch the map entries of logical units `first..first + units` (a request a few
    /// requests ahead; see `prefetch.rs`). Changes nothing.
    #[inline]
    pub fn prefetch_map(&self, first: u32, units: u32) {
        let last = first.saturating_add(units.min(prefetch::HOST_PREFETCH_UNITS));
        let mut lpn = first;
        while lpn < last {
            prefetch::prefetch(&self.l2p, lpn as usize);
            lpn = (lpn | 15) + 1; // one request per cache line of 16 entries
        }
        if last > first {
            prefetch::prefetch(&self.l2p, last as usize - 1);
        }
    }

    /// Prefetch the reverse-map entries of the slots units `first..first + units` are mapped
    /// to now (the next request: its map entries were prefetched earlier). Changes nothing.
    #[inline]
    pub fn prefetch_slots(&self, first: u32, units: u32) {
        let last = first.saturating_add(units.min(prefetch::HOST_PREFETCH_UNITS));
        for lpn in first..last.min(self.logical_units) {
            let slot = self.l2p[lpn as usize];
            if slot != UNMAPPED {
                prefetch::prefetch(&self.p2l, slot as usize);
            }
        }
    }

    /// Prefetch the map entries of the valid units in the `upp` slots from `first`.
    #[inline]
    fn prefetch_page_map(&self, first: u32, upp: u32) {
        for slot in first..first + upp {
            let lpn = self.p2l[slot as usize];
            if lpn != UNMAPPED {
                prefetch::prefetch(&self.l2p, lpn as usize);
            }
        }
    }

    /// Move one unit from slot `from` to `plane`'s GC stream.
    fn move_unit(&mut self, lpn: u32, from: u32, plane: u32, ready: u64, cause: Cause) -> u64 {
        let b = self.block_of(from);
        // A second-written unit leaves both halves; the oracle knows it by its first half.
        let oracle_from = if self.sw.is_some() { self.unlink_second_half(from) } else { from };
        self.p2l[from as usize] = UNMAPPED;
        self.note_page_invalid(b);
        self.valid[b as usize] -= 1;
        self.l2p[lpn as usize] = UNMAPPED;
        self.relocations += 1;
        if self.relocation_fault == Some(self.relocations) {
            return ready; // the deliberate bug: the unit is dropped
        }
        // Data stays in its plane when it can (copy-back friendly); a plane that has lost
        // too many blocks to hold its share sends it to another plane instead.
        let planes = self.geo.planes();
        for target in (0..planes).map(|i| (plane + i) % planes) {
            if let Some((to, programmed)) = self.place(target, Stream::Gc, lpn, ready, cause) {
                if let Some(o) = &mut self.oracle {
                    o.relocate(lpn, oracle_from, lpn, to);
                }
                return programmed.unwrap_or(ready);
            }
        }
        self.die(format!("no free block in any plane to move data from plane {plane} into"));
        ready
    }

    /// Erase a block whose data has been moved and return it to its pool (or retire it, or
    /// change its mode, as the end-of-life policy says).
    fn erase_block(&mut self, block: u32, ready: u64, cause: Cause) -> u64 {
        debug_assert_eq!(self.valid[block as usize], 0);
        let plane = self.plane_of_block(block);
        let mode = self.flash.mode(block);
        let done = self.engine.erase(self.die_of_block(block), ready, self.flash.erase_ns(mode));
        self.counters.block_erases.add(cause, 1);
        let status = self.flash.erase(block);
        self.pools[plane as usize].erase_sum += 1;
        if let Some(sw) = &mut self.sw {
            sw.on_erase(block);
        }
        match status {
            EraseStatus::Ok => self.make_free(block, plane),
            EraseStatus::Failed => {
                self.counters.erase_failures += 1;
                self.retire(block);
            }
            EraseStatus::WornOut => {
                self.counters.worn_out_blocks += 1;
                match self.end_of_life.next_mode(block, mode) {
                    Some(next) => {
                        self.counters.mode_switches += 1;
                        self.flash.set_mode(block, next);
                        let cap = self.usable_units(block, self.upp_by_mode[next.index()]);
                        self.live_units = self.live_units - self.capacity[block as usize] as u64 + cap as u64;
                        self.capacity[block as usize] = cap;
                        self.check_capacity();
                        self.make_free(block, plane);
                    }
                    None => self.retire(block),
                }
            }
        }
        if self.state[block as usize] != BlockState::Retired {
            let life = self.flash.remaining_cycles(block);
            self.victim.erased(block, plane, self.capacity[block as usize], life);
        }
        done
    }

    fn make_free(&mut self, block: u32, plane: u32) {
        self.state[block as usize] = BlockState::Free;
        let p = &mut self.pools[plane as usize];
        p.free.push_back(block);
        p.erases_since_check += 1;
        let interval = self.wl.check_interval();
        if interval > 0 && p.erases_since_check >= interval {
            p.erases_since_check = 0;
            self.check_cold(plane);
        }
    }

    /// Static wear leveling: find the pool's least-erased full block and queue it for a move
    /// when the policy says it lags too far behind.
    fn check_cold(&mut self, plane: u32) {
        let lo = plane * self.geo.blocks_per_plane;
        let coldest = (lo..lo + self.geo.blocks_per_plane)
            .filter(|&b| self.state[b as usize] == BlockState::Full)
            .min_by_key(|&b| self.flash.erase_count(b));
        if let Some(b) = coldest {
            if self.wl.migrate_cold(self.flash.erase_count(b), self.pool_wear(plane)) && !self.cold_queue.contains(&b) {
                self.cold_queue.push(b);
            }
        }
    }

    fn retire(&mut self, block: u32) {
        let plane = self.geo.plane_of_block(block);
        self.state[block as usize] = BlockState::Retired;
        self.counters.retired_blocks += 1;
        self.live_units -= self.capacity[block as usize] as u64;
        let p = &mut self.pools[plane as usize];
        p.live_blocks -= 1;
        p.erase_sum -= self.flash.erase_count(block) as u64;
        self.victim.erased(block, plane, 0, 0.0);
        self.bad_blocks.on_retire(block);
        self.check_capacity();
    }

    fn check_capacity(&mut self) {
        if self.live_units < self.required_units {
            let (live, need) = (self.live_units, self.required_units);
            self.die(format!(
                "live blocks hold {live} units, fewer than the {need} the logical space and GC reserve need"
            ));
        }
    }

    /// Garbage-collect `plane` until it has `target` free blocks or nothing can be gained.
    fn collect(&mut self, plane: u32, ready: u64, target: usize) -> u64 {
        if self.in_gc {
            return ready;
        }
        if let Some(mut t) = self.technique.take() {
            self.in_gc = true;
            let done = t.collect(self, plane, ready, target);
            self.technique = Some(t);
            self.in_gc = false;
            return done;
        }
        self.in_gc = true;
        let mut done = ready;
        // Policies that do not pick the emptiest block (FIFO, random) may pick one with no
        // invalid data: cleaning it gains nothing but moves the log on. Give up after a whole
        // pool's worth of such picks in a row.
        let mut fruitless = 0;
        while self.pools[plane as usize].free.len() < target && self.death.is_none() {
            let Some(v) = self.select_victim(plane) else { break };
            let valid = self.valid[v as usize];
            if valid >= self.capacity[v as usize] {
                fruitless += 1;
                if self.victim.chooses_least_valid() || fruitless > self.geo.blocks_per_plane {
                    break; // nothing to gain: every candidate is full of valid data
                }
            } else {
                fruitless = 0;
            }
            done = done.max(self.clean(v, plane, ready, Cause::Gc));
            self.counters.gc_victims += 1;
            self.counters.gc_valid_moved += valid as u64;
        }
        self.in_gc = false;
        done
    }

    /// The GC victim of `plane`: the victim policy's choice among the blocks wear leveling
    /// accepts, unless that choice frees nothing while another block would.
    pub(crate) fn select_victim(&mut self, plane: u32) -> Option<u32> {
        let wear = self.pool_wear(plane);
        let view = VictimView {
            valid: &self.valid,
            capacity: &self.capacity,
            closed_seq: &self.closed_seq,
            now_seq: self.seq,
        };
        let (wl, flash) = (&self.wl, &self.flash);
        let mut refused = false;
        let mut accept = |b: u32| {
            let ok = wl.accept_victim(flash.erase_count(b), wear);
            refused |= !ok;
            ok
        };
        let v = self.victim.select(plane, &view, &mut accept)?;
        if self.valid[v as usize] >= self.capacity[v as usize] && (refused || self.victim.chooses_least_valid()) {
            // The choice frees nothing, yet another block may: wear leveling may have turned
            // down every block with invalid data (the worn, hot ones), or blocks differ in
            // capacity (bit modes, bad pages) so the fewest valid units is not the most
            // invalid space. Space comes first: take the block that frees most. A rare event,
            // so a scan of the pool is fine.
            return Some(self.most_invalid_full_block(plane).unwrap_or(v));
        }
        Some(v)
    }

    /// The full block of `plane` with the most invalid units, if any has some.
    fn most_invalid_full_block(&self, plane: u32) -> Option<u32> {
        let lo = plane * self.geo.blocks_per_plane;
        (lo..lo + self.geo.blocks_per_plane)
            .filter(|&b| self.state[b as usize] == BlockState::Full)
            .map(|b| (self.capacity[b as usize].saturating_sub(self.valid[b as usize]), b))
            .filter(|&(free, _)| free > 0)
            .max()
            .map(|(_, b)| b)
    }

    /// Move a full block's data away and erase it.
    fn clean(&mut self, block: u32, plane: u32, ready: u64, cause: Cause) -> u64 {
        self.victim.remove(block, plane, self.valid[block as usize]);
        self.state[block as usize] = BlockState::Cleaning;
        let moved = self.relocate_block(block, None, ready, cause);
        if self.death.is_some() {
            return moved;
        }
        self.erase_block(block, ready, cause).max(moved)
    }

    /// Finish deferred work: blocks that failed a program are emptied and retired, cold
    /// blocks are moved. Returns when the work finishes.
    fn settle(&mut self, ready: u64) -> u64 {
        let mut done = self.rehome_skipped(ready);
        while let Some((block, buffered)) = self.retire_queue.pop() {
            // Make room first: the failed block's data needs somewhere to go.
            let plane = self.geo.plane_of_block(block);
            done = done.max(self.collect(plane, ready, GC_RESERVE_BLOCKS));
            done = done.max(self.relocate_block(block, buffered, ready, Cause::BadBlock));
            self.retire(block);
            if self.death.is_some() {
                return done;
            }
        }
        while let Some(block) = self.cold_queue.pop() {
            if self.state[block as usize] == BlockState::Full && self.death.is_none() {
                let plane = self.geo.plane_of_block(block);
                done = done.max(self.clean(block, plane, ready, Cause::WearLeveling));
            }
        }
        done.max(self.rehome_skipped(ready))
    }

    /// Background work in an idle window: clean pools below their high watermark.
    ///
    /// A plane is cleaned one victim at a time, and only while its die would be free before
    /// the window closes, so background work does not run into the next host command's time
    /// (a victim started near the end may still overrun: GC is not preempted).
    pub fn idle(&mut self, from: u64, until: u64) {
        if !self.background_gc {
            return;
        }
        for plane in 0..self.geo.planes() {
            let die = self.geo.die_of_plane(plane);
            loop {
                let p = &self.pools[plane as usize];
                let free = p.free.len();
                if free >= p.marks.high || self.engine.die_free_at(die).max(from) >= until || self.death.is_some() {
                    break;
                }
                let start = self.engine.die_free_at(die).max(from);
                self.collect(plane, start, free + 1);
                if self.pools[plane as usize].free.len() <= free {
                    break; // nothing more to gain here
                }
            }
        }
        self.settle(from);
    }

    /// Check every logical unit against the oracle (end of a run). Returns the violation.
    pub fn verify_all(&mut self) -> Option<String> {
        let o = self.oracle.as_mut()?;
        for lpn in 0..self.logical_units {
            let slot = self.l2p[lpn as usize];
            if slot == UNMAPPED {
                o.check("final check", lpn, 0, UNMAPPED);
            } else {
                o.check("final check", lpn, slot, self.p2l[slot as usize]);
            }
        }
        o.violation.clone()
    }

    /// Precondition in fast-forward: fill every logical unit once, then overwrite
    /// `drive_writes` of the logical space uniformly at random.
    pub fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64) {
        self.precondition_until(fill, drive_writes, seed, &|| false);
    }

    /// [`Ftl::precondition`], checking `stop` every few thousand writes (a few milliseconds)
    /// so that Ctrl-C is honoured during a long fill; returns false if it stopped early.
    pub fn precondition_until(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        use rand::Rng;
        use rand::SeedableRng;
        const CHECK_EVERY: u64 = 4096;
        let timing = self.engine.timing();
        self.engine.set_timing(false);
        let mut stopped = false;
        if fill {
            for lpn in 0..self.logical_units {
                if (lpn as u64).is_multiple_of(CHECK_EVERY) && stop() {
                    stopped = true;
                    break;
                }
                self.write(lpn, 1, 0);
                if self.death.is_some() {
                    break;
                }
            }
        }
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        let n = if stopped { 0 } else { (drive_writes * self.logical_units as f64) as u64 };
        // The same random sequence, drawn two writes ahead so that the map entries of the
        // next writes can be prefetched (the draws past the end are never used).
        let mut next = [rng.gen_range(0..self.logical_units), rng.gen_range(0..self.logical_units)];
        for i in 0..n {
            if self.death.is_some() {
                break;
            }
            if i.is_multiple_of(CHECK_EVERY) && stop() {
                stopped = true;
                break;
            }
            let lpn = next[0];
            next = [next[1], rng.gen_range(0..self.logical_units)];
            self.prefetch_map(next[1], 1);
            self.prefetch_slots(next[0], 1);
            self.write(lpn, 1, 0);
        }
        self.engine.set_timing(timing);
        !stopped
    }

    /// Bytes of simulator state held per block, page and unit (maps, block tables, flash
    /// array), for the memory target of about 16 bytes per physical page.
    pub fn state_bytes(&self) -> u64 {
        let v = |n: usize, each: usize| (n * each) as u64;
        let blocks = self.geo.blocks() as usize;
        let per_block = std::mem::size_of::<u32>() * 2 // valid, capacity
            + std::mem::size_of::<BlockState>()
            + std::mem::size_of::<u64>() // closed_seq
            + 4 * 4 + 1; // flash array: erase count, write pointer, read counter, mode
        v(self.l2p.len(), 4)
            + v(self.p2l.len(), 4)
            + v(blocks, per_block)
            + self.oracle.as_ref().map_or(0, |_| v(self.l2p.len() + self.p2l.len(), 4))
    }

    /// Mean erase count of the native mode's rated cycles: how far through its life the drive is.
    pub fn life_used(&self) -> f64 {
        let rated = self.flash.wear_model().rated_cycles(self.flash.native_mode()).max(1.0);
        let sum: u64 = self.flash.erase_counts().iter().map(|&c| c as u64).sum();
        sum as f64 / self.geo.blocks().max(1) as f64 / rated
    }
}
