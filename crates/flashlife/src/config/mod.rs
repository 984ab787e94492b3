//! Configuration: a TOML schema with documented defaults (see `docs/configuration.md`).
//!
//! A configuration is built in layers: the defaults, then a preset, then a TOML file, then
//! `--set a.b.c=value` overrides. Layers are merged as TOML trees before the typed
//! configuration is read, so a partial table (`[flash.slc] read_us = 30`) keeps the
//! defaults of its other keys. Unknown keys are rejected with a suggestion; ranges are
//! checked by [`Config::validate`].

mod cache;
mod choices;
mod flash_parts;
pub mod flows;
mod ftpassd;
mod layers;
mod mapping_cache;
mod policy_name;
pub mod presets;
pub mod reliability;
mod sampling;
mod timing;
mod zombie;

use serde::{Deserialize, Serialize};

pub use layers::ConfigBuilder;
pub use reliability::{ReadHint, ReliabilityConfig};

use crate::error::{Error, Result};
use crate::flash::mode::{BitMode, ModeParams};
use crate::flash::oxide::OxideParams;
use crate::workload::WorkloadConfig;
pub use cache::CacheConfig;
pub use choices::{
    Allocation, Arrivals, CapacityOnDrop, DevicePolicyKind, EndOfLife, FailureSource, GcMode, GcStream, HintLatency,
    HostPlacement, HotColdKind, Interface, OnProgramFailure, PairLayout, Precondition, PrefetchIssue, ProgressMode,
    RberSet, ReadReclaim, ReclaimWhen, ReliabilityModel, SecondWriteRetry, VictimKind, WearMeasure, WearModelKind,
    WriteCompletion,
};
pub use flows::{FlowConfig, FlowPriority};
pub use ftpassd::FtPassdConfig;
pub use mapping_cache::MappingCacheConfig;
pub use policy_name::{Baseline, DevicePolicyName, PolicyName, VictimName};
pub use sampling::{Every, SamplingConfig};
pub use timing::{QueuePolicy, SchedulerKind, TimingConfig, UrgentPace};
pub use zombie::ZombieConfig;

/// The whole, resolved configuration of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Master seed; every random stream (workload, failures, GC, ...) derives from it by name.
    pub seed: u64,
    pub geometry: GeometryConfig,
    pub flash: FlashConfig,
    pub capacity: CapacityConfig,
    pub host: HostConfig,
    pub ftl: FtlConfig,
    pub gc: GcConfig,
    pub wear_leveling: WearLevelingConfig,
    pub failures: FailureConfig,
    pub open_channel: OpenChannelConfig,
    pub workload: WorkloadConfig,
    pub run: RunConfig,
    pub stats: StatsConfig,
    pub reusable: ReusableConfig,
    pub reliability: ReliabilityConfig,
    pub zombie: ZombieConfig,
    /// `[ftpassd]`: FT-PASSD's device policies. Left out of a written configuration at its default.
    #[serde(skip_serializing_if = "FtPassdConfig::is_default")]
    pub ftpassd: FtPassdConfig,
    /// `[timing]`: the scheduler. Always written (see [`TimingConfig`]).
    pub timing: TimingConfig,
    /// `[sampling]`: sampled timing. Left out of a written configuration at its default (off).
    #[serde(skip_serializing_if = "SamplingConfig::is_default")]
    pub sampling: SamplingConfig,
    /// `[cache]`: the DRAM data cache. Left out of a written configuration at its default (off).
    #[serde(skip_serializing_if = "CacheConfig::is_default")]
    pub cache: CacheConfig,
    /// `[mapping_cache]`: the cached mapping table (DFTL-like). Left out of a written
    /// configuration at its default (off: the whole map in DRAM).
    #[serde(skip_serializing_if = "MappingCacheConfig::is_default")]
    pub mapping_cache: MappingCacheConfig,
    /// `[[flows]]`: several host flows at once; empty (the default, then left out of a
    /// written configuration): the single `[workload]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            geometry: GeometryConfig::default(),
            flash: FlashConfig::default(),
            capacity: CapacityConfig::default(),
            host: HostConfig::default(),
            ftl: FtlConfig::default(),
            gc: GcConfig::default(),
            wear_leveling: WearLevelingConfig::default(),
            failures: FailureConfig::default(),
            open_channel: OpenChannelConfig::default(),
            workload: WorkloadConfig::default(),
            run: RunConfig::default(),
            stats: StatsConfig::default(),
            reusable: ReusableConfig::default(),
            reliability: ReliabilityConfig::default(),
            zombie: ZombieConfig::default(),
            ftpassd: FtPassdConfig::default(),
            timing: TimingConfig::default(),
            sampling: SamplingConfig::default(),
            cache: CacheConfig::default(),
            mapping_cache: MappingCacheConfig::default(),
            flows: Vec::new(),
        }
    }
}

/// `[geometry]`: the drive's parallel structure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GeometryConfig {
    /// Channels (independent buses).
    pub channels: u32,
    /// Chips (ways) per channel.
    pub ways: u32,
    /// Dies per chip.
    pub dies: u32,
    /// Planes per die. Each plane is its own allocation pool.
    pub planes: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
}

impl Default for GeometryConfig {
    fn default() -> Self {
        GeometryConfig { channels: 4, ways: 2, dies: 1, planes: 2, blocks_per_plane: 256, pages_per_block: 128 }
    }
}

/// `[flash]`: cell technology, page size and per-mode timing and endurance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlashConfig {
    /// Bit mode every block starts in.
    pub bit_mode: BitMode,
    /// Bytes a page holds at the starting bit mode; at other modes it scales with bits per cell.
    pub page_size: u64,
    /// Channel bus bandwidth in MB/s (10^6 bytes per second).
    pub channel_mb_per_s: f64,
    /// Wear model: `fixed` (a P/E limit per mode, `flash.<mode>.pe_limit`) or `oxide`
    /// (ZombieNAND's oxide-stress model, parameters in `[flash.wear]`; the trapped charge
    /// carries over across a bit-mode change).
    pub wear_model: WearModelKind,
    /// What happens to a block found worn out at erase: `retire`, or `drop_bit` (ZombieNAND:
    /// the block continues with one bit per cell fewer, TLC -> MLC -> SLC; a worn-out SLC
    /// block retires). With `drop_bit` the mapping unit defaults to the SLC page.
    pub end_of_life: EndOfLife,
    /// What a page holds once its block has dropped to a lower bit mode (ZombieNAND).
    /// `bits_per_cell` (the default): the same cells keep one bit fewer each, so a page holds
    /// `flash.page_size` x bits / starting bits (TLC : MLC : SLC = 3 : 2 : 1; the paper's "one
    /// bit of capacity is lost upon every transition"); a lower mode's `flash.<mode>.page_size`
    /// must then be 0 or that size. `page_size`: each mode holds its own
    /// `flash.<mode>.page_size` (the paper's Table I, 8 / 4 / 2 KiB: 4 : 2 : 1), 0 still
    /// scaling by bits. See docs/techniques/zombienand.md, "Capacity after a bit drop".
    /// Written to TOML only when not the default, so configurations that predate the key
    /// keep their text (and hash).
    #[serde(skip_serializing_if = "CapacityOnDrop::is_bits_per_cell")]
    pub capacity_on_drop: CapacityOnDrop,
    /// Oxide-stress wear model parameters, for `wear_model = "oxide"` (see `docs/models/wear.md`).
    pub wear: OxideParams,
    pub slc: ModeParams,
    pub mlc: ModeParams,
    pub tlc: ModeParams,
    pub qlc: ModeParams,
}

impl Default for FlashConfig {
    fn default() -> Self {
        FlashConfig {
            bit_mode: BitMode::Tlc,
            page_size: 16384,
            channel_mb_per_s: 400.0,
            wear_model: WearModelKind::Fixed,
            end_of_life: EndOfLife::Retire,
            capacity_on_drop: CapacityOnDrop::BitsPerCell,
            wear: OxideParams::default(),
            slc: ModeParams::default_for(BitMode::Slc),
            mlc: ModeParams::default_for(BitMode::Mlc),
            tlc: ModeParams::default_for(BitMode::Tlc),
            qlc: ModeParams::default_for(BitMode::Qlc),
        }
    }
}

impl FlashConfig {
    /// Parameters of one mode.
    pub fn mode(&self, mode: BitMode) -> &ModeParams {
        match mode {
            BitMode::Slc => &self.slc,
            BitMode::Mlc => &self.mlc,
            BitMode::Tlc => &self.tlc,
            BitMode::Qlc => &self.qlc,
        }
    }

    /// Bytes a page holds at `mode`: `page_size` scaled by bits per cell relative to the
    /// starting mode, unless `capacity_on_drop = "page_size"` and `flash.<mode>.page_size` is
    /// set (the starting mode always holds `page_size`: validated).
    pub fn page_bytes(&self, mode: BitMode) -> u64 {
        match (self.capacity_on_drop, self.mode(mode).page_size) {
            (CapacityOnDrop::PageSize, explicit) if explicit != 0 => explicit,
            _ => self.bits_per_cell_page(mode),
        }
    }

    /// `page_size` x bits of `mode` / bits of the starting mode: the bytes the starting mode's
    /// page of cells holds at `mode` (`capacity_on_drop = "bits_per_cell"`).
    pub fn bits_per_cell_page(&self, mode: BitMode) -> u64 {
        self.page_size * mode.bits() as u64 / self.bit_mode.bits() as u64
    }
}

/// `[capacity]`: exactly one of the two ways of stating spare space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CapacityConfig {
    /// (physical - logical) / logical, e.g. 0.07 or 0.28 (Reusable SSD's convention).
    /// A table that states neither key gets this one, at 0.07.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overprovisioning: Option<f64>,
    /// (physical - logical) / physical, e.g. 0.20 (ZombieNAND's "reserved area").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve: Option<f64>,
}

impl Default for CapacityConfig {
    fn default() -> Self {
        CapacityConfig { overprovisioning: Some(0.07), reserve: None }
    }
}

impl CapacityConfig {
    /// The spare space as overprovisioning, whichever way it was stated.
    pub fn overprovisioning(&self) -> f64 {
        match (self.overprovisioning, self.reserve) {
            (Some(op), _) => op,
            (None, Some(r)) => r / (1.0 - r),
            (None, None) => 0.07,
        }
    }

    /// The spare space as a reserve fraction of the physical space.
    pub fn reserve(&self) -> f64 {
        let op = self.overprovisioning();
        op / (1.0 + op)
    }
}

/// `[host]`: the host interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Outstanding requests in closed-loop replay.
    pub queue_depth: u32,
    /// Host link bandwidth in MB/s (SATA 3 Gb/s: 300).
    pub link_mb_per_s: f64,
    /// Fixed cost of each command on the link, in microseconds.
    pub command_overhead_us: f64,
    /// Where the FTL runs: `block` (inside the drive, LBA commands) or `open_channel` (a
    /// pblk-like host FTL sending physical reads, writes and erases to a device with a
    /// write buffer and a program-failure manager, see `[open_channel]`).
    pub interface: Interface,
    /// Request issue: `closed` (queue-depth closed loop, unless the workload itself is
    /// open-loop) or `timestamps` (open loop at each request's arrival time; gaps with
    /// nothing outstanding are idle time for background work).
    pub arrivals: Arrivals,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            queue_depth: 32,
            link_mb_per_s: 600.0,
            command_overhead_us: 2.0,
            interface: Interface::Block,
            arrivals: Arrivals::Closed,
        }
    }
}

/// `[open_channel]`: the device of `host.interface = "open_channel"` (FT-PASSD, issue #8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OpenChannelConfig {
    /// Program-failure manager: `ocssd` (write-through; failures reported to the host FTL,
    /// which rewrites elsewhere), `ft_passd_no_shift` (write-back; block map; on a failure
    /// the block's written pages are copied to a reserved block in the foreground, then the
    /// program is retried) or `ft_passd` (write-back; retry at once on page 0 of a reserved
    /// block; block map + shift table + open block lists; migration in idle time).
    pub device_policy: DevicePolicyName,
    /// Write completion: `auto` (the policy's: write-through for `ocssd`, write-back for the
    /// FT-PASSD policies), `write_through` (complete after the NAND program) or `write_back`
    /// (complete once the data is in the device buffer, unless the buffer is full).
    pub write_completion: WriteCompletion,
    /// Device write buffer per way (chip), in KiB; flushed first in, first out.
    pub write_buffer_kib: u64,
    /// Blocks per plane the device keeps as spare for failed programs, never given to the host.
    pub reserved_blocks: u32,
    /// Where the host FTL puts a write command's pages: `stripe` (page by page over every
    /// parallel unit in stripe order) or `chunk` (the whole command in one parallel unit's open
    /// chunk, the next command on the next unit). Left out of `config.toml` at its default.
    #[serde(skip_serializing_if = "HostPlacement::is_stripe")]
    pub placement: HostPlacement,
    /// The host FTL's own write buffer (pblk's ring buffer), in KiB; 0 = none (a write
    /// completes when the device has completed its pages, its last page padded). With one, a
    /// write completes once its units are in it, full pages go to the device as they fill, and
    /// a partial page waits for the next write or a flush. Left out of `config.toml` at 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub host_buffer_kib: u64,
    /// The host's minimum write unit per parallel unit, in KiB (pblk's `min_write_pgs`, the
    /// device's optimal write size `ws_opt`); 0 = one flash page. The host writes this many
    /// pages to a parallel unit before the stripe moves on, and pads a command's (or a
    /// flush's) last write unit to whole units. Left out of `config.toml` at 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub min_write_kib: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Default for OpenChannelConfig {
    fn default() -> Self {
        OpenChannelConfig {
            device_policy: DevicePolicyName::Technique(FtPassdConfig::SHIFT),
            write_completion: WriteCompletion::Auto,
            write_buffer_kib: 1024,
            reserved_blocks: 4,
            placement: HostPlacement::Stripe,
            host_buffer_kib: 0,
            min_write_kib: 0,
        }
    }
}

/// `[ftl]`: mapping and run-wide FTL options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// Mapping unit in bytes; 0 picks the smallest page size the drive can reach.
    pub mapping_unit: u64,
    /// Track, per mapping unit, the version last written and check every read and relocation.
    pub integrity_oracle: bool,
    /// Start state: `empty`, `full` (every unit written once, sequentially) or `steady`
    /// (full, then `precondition_drive_writes` of uniform random overwrites), in fast-forward.
    pub precondition: Precondition,
    /// Drive writes of random overwrite after the fill, for `precondition = "steady"`.
    pub precondition_drive_writes: f64,
    /// Timing model on; off runs at bookkeeping speed (latencies are then zero).
    pub timing: bool,
    /// Which plane a host write's next page goes to: `rotation` (strict rotation over the
    /// planes, channel first), `least_loaded` (the plane whose die can start new work
    /// soonest, ties in rotation order) or `static` (the unit's logical address picks the
    /// plane: logical unit mod planes, in rotation order). Unset: `least_loaded` under the
    /// queued scheduler, `rotation` under reservation (what its recorded results, golden and
    /// lifetime runs, were made with); [`Config::allocation`] resolves it. Written only when
    /// set, so configurations that predate the key keep their text (and hash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation: Option<Allocation>,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            mapping_unit: 0,
            integrity_oracle: false,
            precondition: Precondition::Steady,
            precondition_drive_writes: 1.0,
            timing: true,
            allocation: None,
        }
    }
}

/// `[gc]`: garbage collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GcConfig {
    /// Victim policy: `greedy`, `fifo`, `cost_benefit` or `random` (d-choices), or a
    /// technique's (`zombie`: ZombieNAND's usage table).
    pub victim: VictimName,
    /// For `random`: sample this many candidates and take the one with fewest valid units.
    pub d_choices: u32,
    /// GC starts when a pool's free blocks fall below this fraction of its blocks.
    pub low_watermark: f64,
    /// ... and runs until free blocks reach this fraction.
    pub high_watermark: f64,
    /// Clean in idle windows of open-loop replay (no host command outstanding), up to the
    /// high watermark, so that bursts find free blocks.
    pub background: bool,
    /// `standard` (cleaning decided as above: in idle windows with `background`, stepped
    /// behind host work under the queued scheduler) or `foreground` (DiskSim's SSD model with
    /// "Cleaning in background = 0": the host write that triggers cleaning waits for the whole
    /// clean-up, which goes first on its die, and nothing is cleaned in idle windows, whatever
    /// `background` says). Written to TOML only when not the default, so configurations that
    /// predate the key keep their text (and hash).
    #[serde(skip_serializing_if = "GcMode::is_standard")]
    pub mode: GcMode,
    /// `separate` (moved units go to a block of their own, apart from host writes: two open
    /// blocks per plane) or `shared` (into the host writes' open block, as DiskSim's SSD model
    /// does; the Reusable SSD paper's standard drive). Written to TOML only when not the
    /// default.
    #[serde(skip_serializing_if = "GcStream::is_separate")]
    pub stream: GcStream,
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            victim: VictimName::Baseline(VictimKind::Greedy),
            d_choices: 1,
            low_watermark: 0.01,
            high_watermark: 0.02,
            background: true,
            mode: GcMode::Standard,
            stream: GcStream::Separate,
        }
    }
}

/// `[wear_leveling]`: threshold wear leveling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WearLevelingConfig {
    pub enabled: bool,
    /// Victims whose erase count exceeds the pool average by more than this are skipped, and
    /// a full block this far below the average is moved so its cold data frees it. With
    /// `measure = "remaining_life"`, cycles of remaining life instead of erases.
    pub threshold: u32,
    /// What is levelled: `erases` (erase counts, dynamic and static, every block of a pool),
    /// or `remaining_life` (static only: the full block with the most cycles left at its bit
    /// mode is moved when it has more than `threshold` cycles more than its pool's most worn
    /// block; only the blocks the victim policy levels count, so ZombieNAND's early-switch
    /// pool is never moved nor compared; dynamic levelling is left to the victim policy, e.g.
    /// `gc.victim = "zombie"`'s life-based skip). Written to TOML only when not the default.
    #[serde(skip_serializing_if = "WearMeasure::is_erases")]
    pub measure: WearMeasure,
    /// Static levelling's moves write into a block of their own (the cold stream) instead of
    /// GC's. The moved data is the drive's coldest; in GC's block it mixes with cleaning's
    /// survivors and goes round with them (ZombieNAND's levelled baseline, TLC, 30% reserve,
    /// 10% working set: write amplification 2.04 instead of 1.07). The price is one more
    /// partly written block per pool, which costs spare space on drives with few blocks.
    /// Written to TOML only when on.
    #[serde(skip_serializing_if = "is_false")]
    pub cold_stream: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl Default for WearLevelingConfig {
    fn default() -> Self {
        WearLevelingConfig { enabled: true, threshold: 16, measure: WearMeasure::Erases, cold_stream: false }
    }
}

/// `[failures]`: program and erase failures (injected, or from a page error model) and what the
/// FTL does about them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FailureConfig {
    /// Where program failures come from: `injected` (the rates and places below only) or
    /// `lognormal` (the salvage paper's page error levels, `failures.rber`, `failures.sigma`,
    /// `failures.exposure`; injected failures, if any are set, are added to it).
    pub model: FailureSource,
    /// For `lognormal`: the raw bit error rate whose page failure probability
    /// `1 - (1 - rber)^(page bits)` is the mode of the page error levels. The salvage paper's
    /// inputs: 1e-12, 5e-12, 1e-11, 3e-11, 5e-11, 1e-10.
    pub rber: f64,
    /// For `lognormal`: sigma of the page error levels (0.5, measured on 3D TLC).
    pub sigma: f64,
    /// For `lognormal`: programs of a page over which its error level is the probability that it
    /// fails at least once; each program fails with `1 - (1 - level)^(1/exposure)`. Set it to
    /// the programs a page gets over the experiment (precondition included) to reproduce the
    /// paper's bad-block ratios (0.01% .. 1.5%, 0.45% at RBER 3e-11).
    pub exposure: f64,
    /// Probability that any page program fails.
    pub program_fail_rate: f64,
    /// Probability that any block erase fails.
    pub erase_fail_rate: f64,
    /// Programs that fail, as `[block, page]` pairs, the first time each is programmed.
    pub program_fail_at: Vec<[u32; 2]>,
    /// What a failed program does: `retire_block` (move the block's data, retire it) or
    /// `skip_page` (runtime bad-block salvage: record the page in the bad-page history table,
    /// retry the write at the next good page of the block, skip bad pages from then on).
    pub on_program_failure: OnProgramFailure,
    /// The N-th page program of the run fails (1-based, counting programs of every cause
    /// after preconditioning, wherever it lands); 0 = none. One failure at a reproducible
    /// point of a trace (FT-PASSD's Figure 15 setup).
    pub program_fail_nth: u64,
    /// When positive: draw `program_fail_nth` uniformly in 1..=this from the seeded stream
    /// `failure_point` (a failure "at a random point" of a run with about this many programs).
    /// The run's config.toml records the drawn value in `program_fail_nth` (and 0 here).
    pub program_fail_nth_random_within: u64,
}

impl Default for FailureConfig {
    fn default() -> Self {
        FailureConfig {
            model: FailureSource::Injected,
            rber: 3e-11,
            sigma: 0.5,
            exposure: 1.0,
            program_fail_rate: 0.0,
            erase_fail_rate: 0.0,
            program_fail_at: Vec::new(),
            on_program_failure: OnProgramFailure::RetireBlock,
            program_fail_nth: 0,
            program_fail_nth_random_within: 0,
        }
    }
}

/// `[run]`: when to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// `death`, `requests:N`, `time:T` (e.g. `time:10s`, `time:500ms`), `writes:BYTES`
    /// (e.g. `writes:64GiB`, `writes:3dw` for drive writes), or `end` (end of a finite trace).
    pub until: String,
    /// Progress bar: `auto` (on a terminal), `on` or `off`.
    pub progress: ProgressMode,
    /// Write a checkpoint into the run folder every this much simulated time (`10s`) or host
    /// bytes written (`64GiB`, `0.5dw`); empty for none. An interrupted run (SIGINT, SIGTERM)
    /// writes one whatever this says.
    pub checkpoint_every: String,
    /// The most memory the run may need (estimated from the drive before anything is
    /// allocated): `auto` (what the machine has available), `off`, or bytes (`16GiB`).
    pub memory_limit: String,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            until: "writes:2dw".into(),
            progress: ProgressMode::Auto,
            checkpoint_every: String::new(),
            memory_limit: "auto".into(),
        }
    }
}

/// What `run.memory_limit` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLimit {
    /// What the machine has available when the run starts.
    Auto,
    Off,
    Bytes(u64),
}

impl RunConfig {
    /// `run.memory_limit`, parsed.
    pub fn memory_limit(&self) -> Result<MemoryLimit> {
        match self.memory_limit.trim() {
            "auto" => Ok(MemoryLimit::Auto),
            "off" => Ok(MemoryLimit::Off),
            s => parse_bytes(s, 0).filter(|&b| b > 0).map(MemoryLimit::Bytes).ok_or_else(|| {
                Error::config("run.memory_limit", s, "auto, off, or a positive byte count such as 16GiB")
            }),
        }
    }

    /// The periodic checkpoint interval, `None` when off.
    pub fn checkpoint_interval(&self, logical_bytes: u64) -> Result<Option<Interval>> {
        let s = self.checkpoint_every.trim();
        if s.is_empty() {
            return Ok(None);
        }
        parse_interval("run.checkpoint_every", s, logical_bytes).map(Some)
    }
}

/// `[stats]`: output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsConfig {
    /// Time-series interval: a time (`100ms`, `1s`) or host bytes written (`1GiB`, `0.1dw`).
    pub interval: String,
    /// Write one CSV row per request (`requests.csv` in the run folder). Written to TOML only
    /// when on, so configurations that predate the key keep their text (and hash).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub request_log: bool,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig { interval: "0.05dw".into(), request_log: false }
    }
}

/// `[reusable]`: Reusable SSD (paper `001`): WOM-coded second writes on recycled block pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReusableConfig {
    /// Turn second writes on. Needs two planes per die, the mapping unit equal to the page
    /// and `flash.end_of_life = "retire"`.
    pub enabled: bool,
    /// Requests smaller than this many bytes are hot (second-write candidates); larger ones
    /// and GC moves are cold first writes (paper: 64 KiB).
    pub hot_threshold: u64,
    /// Hot/cold classifier: `size` (the paper's: hot if the request is smaller than
    /// `hot_threshold`) or `recency` (also require the unit's previous write to be among the
    /// last `recency_window` host units written).
    pub hot_cold: HotColdKind,
    /// Window of `recency`, in host units written; 0 = R, the over-provisioning in units (the
    /// data the second-write partition can hold at the paper's 2R cap).
    pub recency_window: u64,
    /// Probability that one WOM encoding attempt succeeds (paper: 0.95, polar code of Table 2(d)).
    pub success_probability: f64,
    /// What a failed encoding does: `same_data` (one retry on the same invalid data, no extra
    /// read: the paper's design), `extra_read` (read the next invalid pair and retry there) or
    /// `none` (fall back to a first write at once).
    pub retry: SecondWriteRetry,
    /// Read the next invalid pair as soon as a second write completes, off the critical path.
    pub prefetch: bool,
    /// When the prefetch read occupies the die and channel: `idle` (only in idle time: if the
    /// die and its channel have been idle long enough before the next hot unit, the data is
    /// already in RAM at no cost, otherwise it is read on demand; host work is never delayed,
    /// as the paper observed) or `eager` (issued first-come first-served the moment the second
    /// write completes, ahead of the host's next request).
    pub prefetch_issue: PrefetchIssue,
    /// Where the two halves of a second write go: `parallel` (same offset in the two planes'
    /// RecycledActive blocks, one multi-plane operation) or `sequential` (two consecutive
    /// invalid pages of one block: the paper's ablation).
    pub layout: PairLayout,
    /// GC runs when clean + recycled blocks in a plane fall below this fraction of its blocks
    /// (paper: 1%).
    pub gc_threshold: f64,
    /// A victim is erased rather than recycled when its plane has fewer clean blocks than this
    /// (paper: 2; at least the FTL's GC reserve plus one is used).
    pub min_clean_blocks: u32,
    /// Recycled + reused blocks may not exceed this many times R = physical - logical blocks
    /// (paper: 2, which keeps the exported capacity).
    pub max_recycled_factor: f64,
    /// Second writes stop on blocks past this fraction of their P/E budget (paper: 0.3).
    pub max_life_fraction: f64,
    /// Over-provisioning kept for first writes, as a fraction of R: a victim is erased rather
    /// than recycled when recycling it would leave the first-write blocks less spare space
    /// than this. The spare space is counted from the data, not assumed: the recycled and
    /// reused blocks take `blocks x block size` of the physical space and hold the data of
    /// their valid pages (each second write once), so first writes keep
    /// `R - (blocks x block size - data held)`.
    /// The paper's 2R cap is the same balance assuming the partition is full of live second
    /// writes (R of data in 2R blocks: first writes keep 0). 0 turns the rule off (the 2R cap
    /// alone, the paper's design).
    pub first_write_op: f64,
}

impl Default for ReusableConfig {
    fn default() -> Self {
        ReusableConfig {
            enabled: false,
            hot_threshold: 64 * 1024,
            hot_cold: HotColdKind::Size,
            recency_window: 0,
            success_probability: 0.95,
            retry: SecondWriteRetry::SameData,
            prefetch: true,
            prefetch_issue: PrefetchIssue::Idle,
            layout: PairLayout::Parallel,
            gc_threshold: 0.01,
            min_clean_blocks: 2,
            max_recycled_factor: 2.0,
            max_life_fraction: 0.3,
            first_write_op: 0.0,
        }
    }
}

impl ReusableConfig {
    fn validate(&self, cfg: &Config) -> Result<()> {
        if self.recency_window > u32::MAX as u64 / 2 {
            return Err(Error::config(
                "reusable.recency_window",
                self.recency_window,
                "at most 2^31 units (0 = the over-provisioning)",
            ));
        }
        if !(0.0..=1.0).contains(&self.success_probability) {
            return Err(Error::config(
                "reusable.success_probability",
                self.success_probability,
                "a probability in [0, 1]",
            ));
        }
        if self.hot_threshold == 0 {
            return Err(Error::config("reusable.hot_threshold", self.hot_threshold, "a positive number of bytes"));
        }
        if !(0.0..0.5).contains(&self.gc_threshold) {
            return Err(Error::config("reusable.gc_threshold", self.gc_threshold, "a fraction in [0, 0.5)"));
        }
        if !(self.max_recycled_factor.is_finite() && self.max_recycled_factor >= 0.0) {
            return Err(Error::config(
                "reusable.max_recycled_factor",
                self.max_recycled_factor,
                "a non-negative number",
            ));
        }
        if !(0.0..=1.0).contains(&self.max_life_fraction) {
            return Err(Error::config("reusable.max_life_fraction", self.max_life_fraction, "a fraction in [0, 1]"));
        }
        if !(0.0..1.0).contains(&self.first_write_op) {
            return Err(Error::config("reusable.first_write_op", self.first_write_op, "a fraction of R in [0, 1)"));
        }
        if self.enabled {
            if cfg.geometry.planes != 2 {
                return Err(Error::config(
                    "geometry.planes",
                    cfg.geometry.planes,
                    "2 when reusable.enabled (block pairs span the two planes of a die)",
                ));
            }
            let unit = if cfg.ftl.mapping_unit == 0 { cfg.flash.page_size } else { cfg.ftl.mapping_unit };
            if unit != cfg.flash.page_size {
                return Err(Error::config(
                    "ftl.mapping_unit",
                    unit,
                    "the page size when reusable.enabled (a second write stores one logical page)",
                ));
            }
            if cfg.flash.end_of_life != EndOfLife::Retire {
                return Err(Error::config(
                    "flash.end_of_life",
                    cfg.flash.end_of_life,
                    "\"retire\" when reusable.enabled (second writes assume a block keeps its mode)",
                ));
            }
        }
        Ok(())
    }
}

/// The deepest host queue accepted (`host.queue_depth`): NVMe's 65,536 entries.
pub const MAX_QUEUE_DEPTH: u32 = 1 << 16;

/// What stops a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopCondition {
    Death,
    Requests(u64),
    TimeNs(u64),
    WriteBytes(u64),
    EndOfWorkload,
}

/// A time-series interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Interval {
    TimeNs(u64),
    WriteBytes(u64),
}

fn parse_duration_ns(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.trim().parse().ok()?;
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" | "" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        "d" => 86400e9,
        _ => return None,
    };
    let ns = v * scale;
    (ns.is_finite() && (0.0..1.8e19).contains(&ns)).then_some(ns as u64)
}

/// Parse a byte count with an optional unit (`4096`, `64KiB`, `1.5GB`, `3dw` for drive writes).
pub fn parse_bytes(s: &str, drive_bytes: u64) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.trim().parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tib" => 1024.0f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "dw" => drive_bytes as f64,
        _ => return None,
    };
    let b = v * scale;
    (b.is_finite() && (0.0..1.8e19).contains(&b)).then_some(b as u64)
}

impl RunConfig {
    /// The stop condition, given the logical capacity for `dw` units.
    pub fn stop_condition(&self, logical_bytes: u64) -> Result<StopCondition> {
        let bad = || {
            Error::config(
                "run.until",
                &self.until,
                "death, end, requests:N, time:T (e.g. time:10s) or writes:BYTES (e.g. writes:64GiB, writes:3dw)",
            )
        };
        let u = self.until.trim();
        match u.split_once(':') {
            None if u == "death" => Ok(StopCondition::Death),
            None if u == "end" => Ok(StopCondition::EndOfWorkload),
            Some(("requests", n)) => n.trim().parse().map(StopCondition::Requests).map_err(|_| bad()),
            Some(("time", t)) => parse_duration_ns(t).map(StopCondition::TimeNs).ok_or_else(bad),
            Some(("writes", b)) => parse_bytes(b, logical_bytes).map(StopCondition::WriteBytes).ok_or_else(bad),
            _ => Err(bad()),
        }
    }
}

impl StatsConfig {
    /// The time-series interval, given the logical capacity for `dw` units.
    pub fn interval(&self, logical_bytes: u64) -> Result<Interval> {
        parse_interval("stats.interval", &self.interval, logical_bytes)
    }
}

/// A positive simulated time (`100ms`, `1s`) or host byte count (`1GiB`, `0.05dw`).
pub(crate) fn parse_interval(key: &str, s: &str, logical_bytes: u64) -> Result<Interval> {
    let s = s.trim();
    let is_time = ["ns", "us", "ms", "s", "min", "h", "d"]
        .iter()
        .any(|u| s.ends_with(u) && !s.ends_with("dw") && !s.to_ascii_lowercase().ends_with("ib"));
    let parsed = if is_time {
        parse_duration_ns(s).filter(|&v| v > 0).map(Interval::TimeNs)
    } else {
        parse_bytes(s, logical_bytes).filter(|&v| v > 0).map(Interval::WriteBytes)
    };
    parsed.ok_or_else(|| Error::config(key, s, "a positive time (100ms, 1s) or byte count (1GiB, 0.05dw)"))
}

fn positive(key: &str, v: u32) -> Result<()> {
    if v == 0 {
        return Err(Error::config(key, v, "a positive integer"));
    }
    Ok(())
}

fn positive_f(key: &str, v: f64) -> Result<()> {
    if !(v.is_finite() && v > 0.0) {
        return Err(Error::config(key, v, "a positive number"));
    }
    Ok(())
}

impl Config {
    /// Check every range and cross-key constraint; the error names the key.
    pub fn validate(&self) -> Result<()> {
        let g = &self.geometry;
        positive("geometry.channels", g.channels)?;
        positive("geometry.ways", g.ways)?;
        positive("geometry.dies", g.dies)?;
        positive("geometry.planes", g.planes)?;
        positive("geometry.blocks_per_plane", g.blocks_per_plane)?;
        positive("geometry.pages_per_block", g.pages_per_block)?;
        if g.pages_per_block > 1 << 16 {
            return Err(Error::config("geometry.pages_per_block", g.pages_per_block, "at most 65536"));
        }
        let f = &self.flash;
        if f.page_size < 512 || !f.page_size.is_multiple_of(512) {
            return Err(Error::config("flash.page_size", f.page_size, "a multiple of 512 bytes"));
        }
        positive_f("flash.channel_mb_per_s", f.channel_mb_per_s)?;
        f.wear.validate()?;
        let native = f.mode(f.bit_mode).page_size;
        if native != 0 && native != f.page_size {
            return Err(Error::config(
                format!("flash.{}.page_size", f.bit_mode.name()),
                native,
                format!("0 or flash.page_size ({}) for the starting mode", f.page_size),
            ));
        }
        for mode in BitMode::ALL {
            let m = f.mode(mode);
            let key = |k: &str| format!("flash.{}.{}", mode.name(), k);
            // One bit per cell per transition: a lower mode's page follows from the starting
            // page, so an explicit size that disagrees is a contradiction, not a choice.
            let derived = f.bits_per_cell_page(mode);
            let exact = (f.page_size * mode.bits() as u64).is_multiple_of(f.bit_mode.bits() as u64);
            if f.capacity_on_drop == CapacityOnDrop::BitsPerCell
                && mode.bits() < f.bit_mode.bits()
                && m.page_size != 0
                && (m.page_size != derived || !exact)
            {
                return Err(Error::config(
                    key("page_size"),
                    m.page_size,
                    format!(
                        "0 or {derived} (flash.page_size x {} / {} bits) with flash.capacity_on_drop = \"bits_per_cell\"; set flash.capacity_on_drop = \"page_size\" for per-mode page sizes (Table I)",
                        mode.bits(),
                        f.bit_mode.bits()
                    ),
                ));
            }
            for (k, v) in [("read_us", m.read_us), ("program_us", m.program_us), ("erase_us", m.erase_us)] {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(Error::config(key(k), v, "a non-negative number of microseconds"));
                }
            }
            positive(&key("pe_limit"), m.pe_limit)?;
            if m.page_size != 0 && !m.page_size.is_multiple_of(512) {
                return Err(Error::config(key("page_size"), m.page_size, "0 (scale by bits) or a multiple of 512"));
            }
            for (k, list) in [
                ("read_us_by_page_type", &m.read_us_by_page_type),
                ("program_us_by_page_type", &m.program_us_by_page_type),
            ] {
                if !list.is_empty() && list.len() != mode.bits() as usize {
                    return Err(Error::config(
                        key(k),
                        format!("{list:?}"),
                        format!("empty or {} values (one per page type)", mode.bits()),
                    ));
                }
            }
        }
        let c = &self.capacity;
        match (c.overprovisioning, c.reserve) {
            (Some(_), Some(_)) => {
                return Err(Error::config(
                    "capacity",
                    "overprovisioning and reserve",
                    "only one of capacity.overprovisioning and capacity.reserve",
                ))
            }
            (Some(op), None) if !(op.is_finite() && op > 0.0 && op <= 10.0) => {
                return Err(Error::config("capacity.overprovisioning", op, "a number in (0, 10]"))
            }
            (None, Some(r)) if !(r.is_finite() && r > 0.0 && r < 1.0) => {
                return Err(Error::config("capacity.reserve", r, "a fraction in (0, 1)"))
            }
            _ => {}
        }
        let h = &self.host;
        positive("host.queue_depth", h.queue_depth)?;
        if h.queue_depth > MAX_QUEUE_DEPTH {
            return Err(Error::config(
                "host.queue_depth",
                h.queue_depth,
                format!("at most {MAX_QUEUE_DEPTH} (the deepest NVMe queue)"),
            ));
        }
        positive_f("host.link_mb_per_s", h.link_mb_per_s)?;
        if !(h.command_overhead_us.is_finite() && h.command_overhead_us >= 0.0) {
            return Err(Error::config("host.command_overhead_us", h.command_overhead_us, "a non-negative number"));
        }
        let oc = &self.open_channel;
        if oc.write_buffer_kib == 0 || oc.write_buffer_kib.saturating_mul(1024) < self.flash.page_size {
            return Err(Error::config(
                "open_channel.write_buffer_kib",
                oc.write_buffer_kib,
                format!("at least one page ({} KiB)", self.flash.page_size.div_ceil(1024)),
            ));
        }
        if oc.host_buffer_kib != 0 && oc.host_buffer_kib.saturating_mul(1024) < self.flash.page_size {
            // The buffer drains whole pages: it must hold one, or no page could ever fill.
            return Err(Error::config(
                "open_channel.host_buffer_kib",
                oc.host_buffer_kib,
                format!("0 (none) or at least one page ({} KiB)", self.flash.page_size.div_ceil(1024)),
            ));
        }
        if oc.min_write_kib != 0 {
            // Write units tile a chunk: a whole number of pages, a whole number of them a chunk.
            let bytes = oc.min_write_kib.saturating_mul(1024);
            let pages = bytes / self.flash.page_size;
            if !bytes.is_multiple_of(self.flash.page_size)
                || pages == 0
                || !(g.pages_per_block as u64).is_multiple_of(pages)
            {
                return Err(Error::config(
                    "open_channel.min_write_kib",
                    oc.min_write_kib,
                    format!(
                        "0 (one page) or a whole number of {} KiB pages that divides a chunk's {} pages",
                        self.flash.page_size.div_ceil(1024),
                        g.pages_per_block
                    ),
                ));
            }
        }
        if h.interface == Interface::OpenChannel && oc.reserved_blocks + 4 > g.blocks_per_plane {
            return Err(Error::config(
                "open_channel.reserved_blocks",
                oc.reserved_blocks,
                format!("at most geometry.blocks_per_plane - 4 ({})", g.blocks_per_plane.saturating_sub(4)),
            ));
        }
        let t = &self.ftl;
        if t.mapping_unit != 0 && (t.mapping_unit < 512 || !t.mapping_unit.is_multiple_of(512)) {
            return Err(Error::config("ftl.mapping_unit", t.mapping_unit, "0 (auto) or a multiple of 512 bytes"));
        }
        if t.mapping_unit > f.page_size {
            return Err(Error::config("ftl.mapping_unit", t.mapping_unit, "at most flash.page_size"));
        }
        if t.mapping_unit != 0 && !f.page_size.is_multiple_of(t.mapping_unit) {
            return Err(Error::config("ftl.mapping_unit", t.mapping_unit, "a divisor of flash.page_size"));
        }
        if !(t.precondition_drive_writes.is_finite() && t.precondition_drive_writes >= 0.0) {
            return Err(Error::config(
                "ftl.precondition_drive_writes",
                t.precondition_drive_writes,
                "a non-negative number",
            ));
        }
        let gc = &self.gc;
        positive("gc.d_choices", gc.d_choices)?;
        if !(0.0..0.5).contains(&gc.low_watermark) {
            return Err(Error::config("gc.low_watermark", gc.low_watermark, "a fraction in [0, 0.5)"));
        }
        if !(gc.high_watermark >= gc.low_watermark && gc.high_watermark < 0.5) {
            return Err(Error::config("gc.high_watermark", gc.high_watermark, "a fraction in [gc.low_watermark, 0.5)"));
        }
        let fl = &self.failures;
        for (k, v) in
            [("failures.program_fail_rate", fl.program_fail_rate), ("failures.erase_fail_rate", fl.erase_fail_rate)]
        {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::config(k, v, "a probability between 0 and 1"));
            }
        }
        if !(fl.rber.is_finite() && (0.0..=crate::flash::rber::MAX_RBER).contains(&fl.rber)) {
            return Err(Error::config("failures.rber", fl.rber, "a bit error rate in [0, 0.5]"));
        }
        if !(fl.sigma.is_finite() && (0.0..=10.0).contains(&fl.sigma)) {
            return Err(Error::config("failures.sigma", fl.sigma, "a number in [0, 10]"));
        }
        if !(fl.exposure.is_finite() && fl.exposure >= 1e-6) {
            return Err(Error::config("failures.exposure", fl.exposure, "a positive number of programs"));
        }
        if fl.program_fail_nth > 0 && fl.program_fail_nth_random_within > 0 {
            return Err(Error::config(
                "failures.program_fail_nth_random_within",
                fl.program_fail_nth_random_within,
                "0 when failures.program_fail_nth is set (one or the other)",
            ));
        }
        // Checked: five 32-bit factors can overflow even 64 bits.
        let blocks = [g.ways, g.dies, g.planes, g.blocks_per_plane]
            .iter()
            .try_fold(g.channels as u64, |acc, &x| acc.checked_mul(x as u64))
            .filter(|&b| b < u32::MAX as u64)
            .ok_or_else(|| {
                Error::config(
                    "geometry",
                    format!("{} x {} x {} x {} x {}", g.channels, g.ways, g.dies, g.planes, g.blocks_per_plane),
                    "channels x ways x dies x planes x blocks_per_plane below 2^32 blocks",
                )
            })?;
        for &[b, p] in &fl.program_fail_at {
            if b as u64 >= blocks || p >= g.pages_per_block {
                return Err(Error::config(
                    "failures.program_fail_at",
                    format!("[{b}, {p}]"),
                    format!("[block < {blocks}, page < {}]", g.pages_per_block),
                ));
            }
        }
        if blocks * g.pages_per_block as u64 * 4 >= u32::MAX as u64 {
            return Err(Error::config("geometry", blocks * g.pages_per_block as u64, "fewer than 2^30 pages in all"));
        }
        self.workload.validate()?;
        flows::validate(&self.flows, h.queue_depth, MAX_QUEUE_DEPTH)?;
        if !self.flows.is_empty() && self.sampling.enabled {
            return Err(Error::config(
                "sampling.enabled",
                true,
                "false with [[flows]] (sampled timing follows one stream of requests)",
            ));
        }
        self.zombie.validate()?;
        self.ftpassd.validate()?;
        self.timing.validate()?;
        self.sampling.validate(self.ftl.timing)?;
        self.cache.validate()?;
        self.mapping_cache.validate()?;
        if self.mapping_cache.enabled() {
            let refuse = |why: &str| {
                Err(Error::config("mapping_cache.size_bytes", self.mapping_cache.size_bytes, why.to_string()))
            };
            if self.host.interface == Interface::OpenChannel {
                return refuse("0 with host.interface = \"open_channel\" (the cached mapping table is the block FTL's; the open-channel host FTL keeps its map in host DRAM)");
            }
            if self.reusable.enabled {
                return refuse(
                    "0 with reusable.enabled (second writes give a unit two slots; not modelled with a cached map)",
                );
            }
        }
        if self.gc.stream == GcStream::Shared {
            let refuse = |why: &str| Err(Error::config("gc.stream", "shared", why.to_string()));
            if self.host.interface == Interface::OpenChannel {
                return refuse(
                    "\"separate\" with host.interface = \"open_channel\" (a shared stream is the block FTL's)",
                );
            }
            if self.reusable.enabled {
                return refuse("\"separate\" with reusable.enabled (Reusable SSD's collector writes its own blocks; the shared stream is a standard drive's)");
            }
            if self.ftl.timing && self.timing.scheduler == SchedulerKind::Queued && self.gc.mode == GcMode::Standard {
                return refuse("\"separate\" where the queued scheduler steps cleaning (a host block opened by a cleaning step would not be owed back); with timing.scheduler = \"reservation\", gc.mode = \"foreground\" or ftl.timing = false");
            }
        }
        if self.gc.mode == GcMode::Foreground && self.host.interface == Interface::OpenChannel {
            return Err(Error::config(
                "gc.mode",
                "foreground",
                "\"standard\" with host.interface = \"open_channel\" (foreground cleaning is the block FTL's)",
            ));
        }
        self.run.stop_condition(1)?;
        self.stats.interval(1 << 40)?;
        self.run.checkpoint_interval(1 << 40)?;
        if let (Some(Interval::TimeNs(_)), false) = (self.run.checkpoint_interval(1 << 40)?, self.ftl.timing) {
            return Err(Error::config(
                "run.checkpoint_every",
                &self.run.checkpoint_every,
                "a byte count (simulated time stands still when ftl.timing is off)",
            ));
        }
        self.run.memory_limit()?;
        self.reusable.validate(self)?;
        self.reliability.validate()?;
        Ok(())
    }

    /// `ftl.allocation` as the run uses it: the key when set, else the scheduler's default
    /// (`least_loaded` under queued, `rotation` under reservation).
    pub fn allocation(&self) -> Allocation {
        self.ftl.allocation.unwrap_or(match self.timing.scheduler {
            SchedulerKind::Queued => Allocation::LeastLoaded,
            SchedulerKind::Reservation => Allocation::Rotation,
        })
    }

    /// The full configuration as TOML (what `config.toml` in a run folder holds).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# could not serialise the configuration: {e}\n"))
    }
}
