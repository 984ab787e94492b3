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
mod block_table;
mod blocks;
mod chores;
mod fastdiv;
mod gc;
mod gc_debt;
mod gc_job;
mod gc_steps;
mod host_write;
mod maintenance;
mod mapping;
pub mod mapping_cache;
pub mod oracle;
pub mod pool;
mod prefetch;
mod read;
pub mod read_model;
pub mod regions;
pub mod second_write;
pub mod trim;
pub mod victim;
mod wear_level;
pub mod wear_leveling;
mod whole_drive;
mod write;

pub use block_table::BlockTable;
pub use gc::{GcWatermarks, PoolShape};
pub use mapping::Mapping;
pub use pool::{Active, GC_RESERVE_BLOCKS};
pub(crate) use read::PageRuns;
pub(crate) use whole_drive::LogicalSpace;

use crate::config::{Allocation, Config, EndOfLife};
use crate::error::{Error, Result};
use crate::flash::{BitMode, EraseStatus, FlashArray, Geometry, ProgramStatus};
use crate::stats::{Cause, FlashCounters};
use crate::timing::{Done, Scheduler, Transaction};
use bad_block::{BadBlockPolicy, FailureAction, RetireOnFailure, SkipState};
use fastdiv::Divisor;
pub(crate) use gc_debt::{Debt, SteppedCleaner};
pub(crate) use gc_job::{BlockShape, CleanJob, Cleaner};
use oracle::Oracle;
use read_model::{NoReadModel, ReadModel, RequestTiming};
use second_write::{SecondWriteTechnique, SecondWrites, Verdict};
use victim::VictimPolicy;
use wear_leveling::{NoWearLeveling, PoolWear, ThresholdWearLeveling, WearLeveling};

/// No mapping / no owner.
pub const UNMAPPED: u32 = u32::MAX;
const NONE: u32 = u32::MAX;

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
    /// Held by a technique (e.g. recycled for second writes): neither free nor a GC candidate.
    Held,
}

/// Write streams with their own active block per pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stream {
    Host = 0,
    Gc = 1,
    /// Translation pages of a cached mapping table (`mapping_cache.rs`).
    Map = 2,
    /// Data moved by static wear levelling, with `wear_leveling.cold_stream`: by construction
    /// the drive's coldest, so it gets a block of its own. Written into GC's block instead, it
    /// mixes with the survivors of cleaning and goes round with them: on ZombieNAND's
    /// levelled baseline (TLC, 30% reserve, 10% working set, threshold 16) GC victims held
    /// 185.7 valid units of 384 instead of 3.5, write amplification was 2.04 instead of 1.07,
    /// and the drive died after 696 drive writes instead of 1,324 (docs/techniques/
    /// zombienand.md, "Levelling's cold data in a block of its own").
    Cold = 3,
    /// GC and reclaim moves of data in the read model's second placement class
    /// (`ReadModel::placement_classes`, e.g. data whose readers accept slower reads), apart
    /// from the first class's in `Gc`, so each block holds one class.
    Placed = 4,
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

/// The block FTL's own state per pool (plane), beside the shared free list, write points
/// and watermarks (`pool.rs`).
#[derive(serde::Serialize, serde::Deserialize)]
struct PlaneState {
    /// No space could be found here: host writes go elsewhere until data is invalidated.
    exhausted: bool,
    live_blocks: u32,
    erase_sum: u64,
    erases_since_check: u32,
    /// Stepped cleaning (`gc_steps.rs`, `gc_debt.rs`): what the pool owes and its job.
    debt: Debt,
    /// Stepped retirement, levelling and reclaim (`chores.rs`).
    chores: chores::Chores,
    /// What the pool owes was asked for by an idle window (`gc.background`): its moves count
    /// as idle moves.
    idle: bool,
}

type Pool = pool::Pool<PlaneState>;

/// The page-mapping FTL with its flash array. It decides what the flash does and hands each
/// operation to its scheduler as a transaction; the scheduler says when it completes.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Ftl {
    pub flash: FlashArray,
    pub sched: Box<dyn Scheduler>,
    pub geo: Geometry,
    unit_bytes: u64,
    upp_by_mode: [u32; 4],
    max_upp: u32,
    slots_per_block: u32,
    /// Divisions by geometry constants on the hot paths (see `fastdiv.rs`).
    div: Divisors,
    logical_units: u32,
    /// Logical unit <-> slot (`mapping.rs`).
    map: Mapping,
    /// Valid and usable units, state and closing order per block (`block_table.rs`).
    blocks: BlockTable<BlockState>,
    pools: Vec<Pool>,
    stripe: Vec<u32>,
    stripe_pos: usize,
    /// How the next page's plane is chosen (`ftl.allocation`).
    allocation: Allocation,
    victim: Box<dyn VictimPolicy>,
    wl: Box<dyn WearLeveling>,
    /// Where static levelling's moves write: `Stream::Cold` or GC's stream
    /// (`wear_leveling.cold_stream`).
    levelling_stream: Stream,
    /// Where cleaning's moves write: `Stream::Gc`, or `Stream::Host` with `gc.stream =
    /// "shared"` (DiskSim's single open block per plane).
    gc_stream: Stream,
    end_of_life: Box<dyn EndOfLifePolicy>,
    /// What a failed program does and which pages allocation may use.
    bad_blocks: Box<dyn BadBlockPolicy>,
    skipped: SkipState,
    oracle: Option<Oracle>,
    pub counters: FlashCounters,
    /// Blocks to retire, with the page whose data is still in the controller (failed program).
    retire_queue: Vec<(u32, Option<u32>)>,
    cold_queue: Vec<u32>,
    /// Chores queued over all pools (`chores.rs`): none, the usual case, is one test.
    chores_pending: usize,
    live_units: u64,
    required_units: u64,
    death: Option<String>,
    in_gc: bool,
    /// Clean in idle windows of open-loop replay (`gc.background`, and not `foreground_gc`).
    background_gc: bool,
    /// `gc.mode = "foreground"`: the host write that asks for cleaning waits for all of it.
    foreground_gc: bool,
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
    /// Reclaims postponed to idle windows (`reliability.reclaim_when = "idle"`): the block and
    /// its erase count when the reclaim became due (a block erased since is no longer due).
    #[serde(default)]
    postponed: Vec<(u32, u32)>,
    /// The read model wants each host read's predicted timing (cached: asked once).
    #[serde(default)]
    request_timing: bool,
    /// The host read in progress, when `request_timing`: its pages, its dies' queue and its
    /// host transfer (from the scheduler). Lives within one read call.
    #[serde(skip)]
    request: RequestTiming,
    /// What host trims did to the map (`trim.rs`).
    #[serde(default)]
    trims: trim::TrimCounters,
    /// The cached mapping table (`mapping_cache.rs`); `None`: the whole map in DRAM.
    #[serde(default)]
    cmt: Option<mapping_cache::MappingCache>,
    /// GC moves by the flows' ranges (`regions.rs`); `None` without `[[flows]]`.
    #[serde(default)]
    gc_regions: Option<regions::GcRegions>,
    /// Placement class per logical unit, set by each host read from the read model
    /// (`ReadModel::placement_class`); relocations of class 1 write into `Stream::Placed`.
    /// `None` when the read model has one class (the baseline).
    #[serde(default)]
    placement: Option<Vec<u8>>,
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
        let lowest = if cfg.flash.end_of_life == EndOfLife::Retire { native } else { BitMode::Slc };
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
    /// What a failed page program does (baseline: the block is retired).
    pub bad_blocks: Option<Box<dyn BadBlockPolicy>>,
}

impl Ftl {
    /// Build the FTL over its flash array and scheduler, for a validated configuration, with
    /// the techniques' `plugins` in place of the baseline's policies.
    pub fn new(cfg: &Config, flash: FlashArray, sched: Box<dyn Scheduler>, plugins: Plugins) -> Result<Ftl> {
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
        let shape = PoolShape { name: "plane", blocks: "blocks", pools: planes, blocks_per_pool: geo.blocks_per_plane };
        let marks = GcWatermarks::of_config(cfg, shape)?;
        let gc_stream = match cfg.gc.stream {
            crate::config::GcStream::Separate => Stream::Gc,
            crate::config::GcStream::Shared => Stream::Host,
        };
        let pools = (0..planes)
            .map(|p| {
                let own = PlaneState {
                    exhausted: false,
                    live_blocks: geo.blocks_per_plane,
                    erase_sum: 0,
                    erases_since_check: 0,
                    debt: Debt::default(),
                    chores: chores::Chores::new(),
                    idle: false,
                };
                Pool::new(p * geo.blocks_per_plane..(p + 1) * geo.blocks_per_plane, marks, own)
            })
            .collect();
        let seed = cfg.seed ^ 0x6763_5f76_6963_7469; // the "gc" stream
        let victim: Box<dyn VictimPolicy> = match plugins.victim {
            Some(v) => v,
            None => victim::build(cfg.gc.victim, cfg.gc.d_choices, blocks, planes, slots_per_block, seed)?,
        };
        let end_of_life = plugins.end_of_life.unwrap_or_else(|| Box::new(RetireWornOut));
        let wl: Box<dyn WearLeveling> = match (cfg.wear_leveling.enabled, cfg.wear_leveling.measure) {
            (false, _) => Box::new(NoWearLeveling),
            (true, crate::config::WearMeasure::Erases) => {
                Box::new(ThresholdWearLeveling { threshold: cfg.wear_leveling.threshold })
            }
            (true, crate::config::WearMeasure::RemainingLife) => {
                Box::new(wear_level::LifeLeveling { threshold: cfg.wear_leveling.threshold })
            }
        };
        let slots = blocks as u64 * slots_per_block as u64;
        let oracle = cfg.ftl.integrity_oracle.then(|| Oracle::new(layout.logical_units, slots));
        let live_units = blocks as u64 * block_units as u64;
        let required_units = marks.required_units(cfg, shape, live_units, layout.logical_units, block_units)?;
        Ok(Ftl {
            stripe: geo.stripe_order(),
            geo,
            flash,
            sched,
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
            map: Mapping::new(layout.logical_units, slots),
            blocks: BlockTable::new(blocks, block_units, BlockState::Free),
            pools,
            stripe_pos: 0,
            allocation: cfg.allocation(),
            victim,
            wl,
            levelling_stream: if cfg.wear_leveling.cold_stream { Stream::Cold } else { gc_stream },
            gc_stream,
            end_of_life,
            bad_blocks: plugins.bad_blocks.unwrap_or_else(|| Box::new(RetireOnFailure::new(geo.pages_per_block))),
            skipped: SkipState::default(),
            oracle,
            counters: FlashCounters::default(),
            retire_queue: Vec::new(),
            cold_queue: Vec::new(),
            chores_pending: 0,
            live_units,
            required_units,
            death: None,
            in_gc: false,
            background_gc: cfg.gc.background && cfg.gc.mode != crate::config::GcMode::Foreground,
            foreground_gc: cfg.gc.mode == crate::config::GcMode::Foreground,
            relocations: 0,
            relocation_fault: None,
            sw: None,
            technique: None,
            reads: Box::new(NoReadModel),
            reclaim_queue: Vec::new(),
            postponed: Vec::new(),
            request_timing: false,
            request: RequestTiming::default(),
            trims: trim::TrimCounters::default(),
            cmt: None,
            gc_regions: None,
            placement: None,
        })
    }

    /// Count GC moves by these `[first, end)` ranges of logical units from now on.
    pub fn track_gc_regions(&mut self, ranges: Vec<(u32, u32)>) {
        self.gc_regions = Some(regions::GcRegions::new(ranges));
    }

    /// GC moves by range, when tracked.
    pub fn gc_regions(&self) -> Option<&regions::GcRegions> {
        self.gc_regions.as_ref()
    }

    /// Replace the end-of-life policy.
    pub fn set_end_of_life(&mut self, policy: Box<dyn EndOfLifePolicy>) {
        self.end_of_life = policy;
    }

    /// Replace the read model (error-aware reads, read reclaim, hints).
    pub fn set_read_model(&mut self, model: Box<dyn ReadModel>) {
        self.request_timing = model.wants_request_timing();
        self.placement = (model.placement_classes() > 1).then(|| vec![0; self.logical_units as usize]);
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

    /// Units of data GC must move, at least, to bring every pool up to its high watermark of
    /// free blocks (valid units of the emptiest full blocks it would clean): the work a drive
    /// left just below its watermarks (as preconditioning leaves it) owes before it is at rest.
    pub fn gc_debt_units(&self) -> u64 {
        let mut debt = 0u64;
        let mut valid: Vec<u32> = Vec::new();
        for (plane, p) in self.pools.iter().enumerate() {
            let short = p.marks.high.saturating_sub(p.free.len());
            if short == 0 {
                continue;
            }
            let lo = plane as u32 * self.geo.blocks_per_plane;
            valid.clear();
            valid.extend(
                (lo..lo + self.geo.blocks_per_plane)
                    .filter(|&b| self.blocks.state[b as usize] == BlockState::Full)
                    .map(|b| self.blocks.valid[b as usize]),
            );
            valid.sort_unstable();
            debt += valid.iter().take(short).map(|&v| v as u64).sum::<u64>();
        }
        debt
    }

    /// Free blocks over all pools.
    pub fn free_blocks(&self) -> u64 {
        self.pools.iter().map(|p| p.free.len() as u64).sum()
    }

    /// Blocks retired.
    pub fn dead_blocks(&self) -> u64 {
        self.blocks.state.iter().filter(|&&s| s == BlockState::Retired).count() as u64
    }

    /// Live (not retired) blocks by bit mode, SLC first.
    pub fn blocks_by_mode(&self) -> [u64; 4] {
        let mut n = [0u64; 4];
        for b in 0..self.geo.blocks() {
            if self.blocks.state[b as usize] != BlockState::Retired {
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
        self.blocks.state[block as usize]
    }

    /// Valid units in a block.
    pub fn valid_units(&self, block: u32) -> u32 {
        self.blocks.valid[block as usize]
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
        PoolWear { mean_erases: p.own.erase_sum as f64 / p.own.live_blocks.max(1) as f64 }
    }

    fn die(&mut self, reason: String) {
        if self.death.is_none() {
            self.death = Some(reason);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::Ftl;
    use crate::ConfigBuilder;

    /// The `tiny` preset's FTL with the integrity oracle on, filled and overwritten once in
    /// fast-forward: a drive whose pools are at their GC watermarks, for tests of GC and writes.
    pub(crate) fn full_tiny_drive_with_oracle() -> Ftl {
        let cfg = ConfigBuilder::new()
            .preset("tiny")
            .and_then(|b| b.set("ftl.integrity_oracle=true"))
            .and_then(|b| b.build())
            .unwrap();
        let mut ftl = crate::sim::build_ftl(&cfg).unwrap();
        ftl.precondition(true, 1.0, 7);
        ftl
    }
}
