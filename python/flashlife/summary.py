"""The run summary (`summary.json`, `Result.summary`) as types, and its flattening into dotted names.

`Summary` is the schema of `summary.json`: every section is a TypedDict mirroring the core's
serialised structs field for field (crates/flashlife/src/sim/summary.rs and the structs it
embeds). The types are checked against real runs by tests/python/test_summary_types.py, so
they cannot drift from the core unnoticed.

Conventions of the JSON: integers are counts, bytes, nanoseconds or seeds (u64 in the core);
floats are always written with a decimal point; a ratio that is undefined (a division by zero:
no host writes, no GC victims, no simulated time) is `null`, hence `float | None`. Optional
sections (`open_channel`, `scheduler`, `sampling`, `trim`, `cache`, `techniques` and each
technique's section in it, `run.warnings`) are absent rather than null.

This module deliberately does not use `from __future__ import annotations`: Python 3.11's
TypedDict cannot see `NotRequired` inside string annotations, and `__optional_keys__` would be
wrong.
"""

import typing
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

__all__ = [
    "BadPageTableStats",
    "BlocksByMode",
    "BusyShares",
    "Cache",
    "ByCause",
    "ClassDepths",
    "Capacity",
    "DeviceStats",
    "EraseCounts",
    "Estimate",
    "Failures",
    "Flash",
    "Flow",
    "FlowLatency",
    "Gc",
    "Host",
    "HostBuffer",
    "HostPath",
    "Integrity",
    "Latency",
    "LatencySet",
    "MappingCache",
    "Lifetime",
    "MemoryReport",
    "OpenChannel",
    "Provenance",
    "QueueDepth",
    "Reliability",
    "RunInfo",
    "SampledLatency",
    "Salvage",
    "Sampling",
    "SamplingEstimate",
    "SampledWindow",
    "Scheduler",
    "SecondWrites",
    "Summary",
    "Techniques",
    "Throughput",
    "TraceIdentity",
    "Trim",
    "flatten_summary",
    "is_flow_field",
    "summary_fields",
]


class ByCause(TypedDict):
    """Flash operations by what caused them (stats/counters.rs `ByCause`, `Cause::name`)."""

    host: int
    gc: int
    wear_leveling: int
    bad_block: int
    reclaim: int
    #: Device-side migration (FT-PASSD idle-time migration).
    migration: int
    #: Reusable SSD's second writes.
    second_write: int
    #: Translation pages of a cached mapping table (`[mapping_cache]`); present only when
    #: not 0.
    mapping: NotRequired[int]


class Capacity(TypedDict):
    """`capacity`: the drive's size (summary.rs `CapacitySummary`)."""

    physical_bytes: int
    logical_bytes: int
    mapping_unit_bytes: int
    overprovisioning: float
    reserve: float


class Host(TypedDict):
    """`host`: what the host asked for (summary.rs `HostSummary`)."""

    read_requests: int
    write_requests: int
    read_bytes: int
    write_bytes: int
    #: Bytes written to fill the drive before the measured run.
    precondition_bytes: int


class Flash(TypedDict):
    """`flash`: operations on the flash array (summary.rs `FlashSummary`)."""

    page_reads: int
    page_programs: int
    block_erases: int
    page_reads_by_cause: ByCause
    page_programs_by_cause: ByCause
    #: Mapping units programmed, the numerator of write amplification.
    unit_programs_by_cause: ByCause
    block_erases_by_cause: ByCause
    buffer_hits: int
    unmapped_reads: int


class Gc(TypedDict):
    """`gc`: garbage collection (summary.rs `GcSummary`)."""

    victims: int
    valid_units_moved: int
    #: Of those, the units moved in idle windows (background GC in open-loop replay).
    valid_units_moved_idle: int
    #: None (null) when there was no victim.
    mean_valid_per_victim: float | None
    #: With `[[flows]]`: of `valid_units_moved`, those in no flow's range (absent without flows).
    valid_units_moved_outside_flows: NotRequired[int]


class Latency(TypedDict):
    """One latency distribution, in microseconds (stats/latency.rs `LatencySummary`)."""

    count: int
    mean: float
    p50: float
    p99: float
    p999: float
    max: float


class LatencySet(TypedDict):
    """`latency_us`: reads, writes and all requests (summary.rs `LatencySet`)."""

    read: Latency
    write: Latency
    all: Latency


class Throughput(TypedDict):
    """`throughput` over simulated time (summary.rs `Throughput`); None (null) when no simulated
    time passed."""

    #: Requests completed per simulated second.
    iops: float | None
    mb_per_s: float | None
    #: Open loop: the rate requests arrived at; None (null) in closed loop, or when it is
    #: undefined (fewer than two arrivals, or all at one instant).
    offered_iops: float | None


class BlocksByMode(TypedDict):
    """Blocks in each bit mode (flash/mode.rs `BitMode::name`)."""

    slc: int
    mlc: int
    tlc: int
    qlc: int


class EraseCounts(TypedDict):
    """`lifetime.erase_count`: erases per block (summary.rs `ErasesSummary`)."""

    min: int
    mean: float
    max: int
    stddev: float


class Lifetime(TypedDict):
    """`lifetime`: wear and death (summary.rs `Lifetime`)."""

    dead: bool
    #: Why the drive died; None while it lives.
    death_reason: str | None
    host_bytes_written: int
    drive_writes: float
    dead_blocks: int
    mode_switches: int
    blocks_by_mode: BlocksByMode
    erase_count: EraseCounts
    life_used: float


class BadPageTableStats(TypedDict):
    """`techniques.salvage.bad_page_table` (techniques/bpht.rs `BphtStats`)."""

    entries: int
    peak_entries: int
    bad_pages: int
    blocks_with_bad_pages: int
    queries: int
    fast_path_queries: int
    lookups: int
    inserts: int
    merges: int
    memory_bytes: int


class Failures(TypedDict):
    """`failures`: program, erase and read failures and what was retired (summary.rs `Failures`)."""

    program: int
    erase: int
    uncorrectable_reads: int
    bad_pages: int
    retired_blocks: int
    worn_out_blocks: int
    bad_blocks: int
    bad_block_ratio: float


class Integrity(TypedDict):
    """`integrity`: the data-integrity oracle (summary.rs `Integrity`)."""

    oracle: bool
    checks: int
    #: The first violation found; None when there was none.
    violation: str | None
    out_of_order_programs: int
    physical_page_programs: int
    physical_block_erases: int


class RunInfo(TypedDict):
    """`run`: the run itself (summary.rs `RunInfo`). `wall_seconds`, `page_ops_per_second` and
    `peak_rss_bytes` depend on the machine, not on the simulation."""

    seed: int
    requests: int
    simulated_ns: int
    wall_seconds: float
    page_ops: int
    page_ops_per_second: float
    peak_rss_bytes: int
    #: Why the run stopped (e.g. the `run.until` condition met).
    stop: str
    #: Present only when there were warnings (e.g. a periodic checkpoint that failed).
    warnings: NotRequired[list[str]]


class DeviceStats(TypedDict):
    """`open_channel.device`: the device's failure handling and buffers (device/mod.rs
    `DeviceStats`). The `*_at_failure` and `first_failure_*` fields are None without a
    host-path program failure."""

    failures_handled: int
    failures_reported: int
    retries: int
    foreground_copied_pages: int
    migrated_pages: int
    migrations: int
    migration_preemptions: int
    migration_waits: int
    max_migration_wait_us: float
    stalled_writes: int
    max_write_stall_us: float
    reserved_blocks_used: int
    reserved_blocks_left: int
    max_retry_us: float
    buffer_full_waits: int
    max_buffer_wait_us: float
    max_unprogrammed_bytes: int
    mean_unprogrammed_bytes: float
    first_failure_ns: int | None
    first_failure_page: int | None
    buffer_bytes_at_failure: int | None
    buffer_utilisation_at_failure: float | None
    max_buffer_utilisation_at_failure: float


class MemoryReport(TypedDict):
    """`open_channel.memory`: the device policy's metadata (device/memory.rs `MemoryReport`;
    absent for OCSSD, which keeps none)."""

    block_map_bits_per_entry: int
    shift_bits_per_entry: int
    entries: int
    block_map_bytes: int
    shift_table_bytes: int
    open_list_bits_per_entry: int
    open_list_peak_entries: int
    open_list_peak_bytes: int
    total_bytes: int
    page_map_bits_per_entry: int
    page_map_bytes: int


class HostBuffer(TypedDict):
    """`open_channel.host_path.host_buffer`: the host FTL's write buffer (host/write_buffer.rs
    `HostBufferStats`)."""

    capacity_bytes: int
    full_waits: int
    max_wait_us: float
    max_held_bytes: int
    padded_pages: int
    padding_units: int
    flushes: int
    unsent_bytes: int


class HostPath(TypedDict):
    """`open_channel.host_path`, present when the host write path is not the plain stripe
    (host/open_channel.rs `HostPathSummary`)."""

    placement: str
    host_buffer: HostBuffer | None
    #: The minimum write unit per parallel unit (`open_channel.min_write_kib`), bytes.
    min_write_bytes: int
    #: Pages programmed empty to complete a write unit.
    unit_padding_pages: int


class OpenChannel(TypedDict):
    """`open_channel`, present for open-channel drives (host/open_channel.rs `OpenChannelSummary`)."""

    device_policy: str
    write_back: bool
    buffer_bytes_per_way: int
    device: DeviceStats
    #: Program failures the host FTL handled (rewrites of reported pages).
    host_rewrites: int
    #: None for OCSSD, which keeps no failure-manager metadata.
    memory: MemoryReport | None
    #: The host FTL's page map in bytes (4-byte entries), for comparison.
    host_page_map_bytes: int
    #: With `open_channel.placement = "chunk"`, a host buffer or a write unit above a page.
    host_path: NotRequired[HostPath]


class BusyShares(TypedDict):
    """Busy share of one kind of resource: mean over its instances and the extremes."""

    mean: float
    min: float
    max: float


class QueueDepth(TypedDict):
    """Transactions of one class waiting on the dies, each field named for what it is over."""

    #: Time-weighted mean of the waiting transactions on all dies together.
    mean_all_dies: float
    #: `mean_all_dies` divided by the die count.
    mean_per_die: float
    #: The most that ever waited on any one die.
    max_one_die: int


class ClassDepths(TypedDict):
    """`scheduler.queue_depth`: transactions waiting, by class."""

    host_read: QueueDepth
    host_write: QueueDepth
    background: QueueDepth


class Scheduler(TypedDict):
    """`scheduler`, present under `timing.scheduler = "queued"`
    (timing/queued_drive/summary.rs `SchedulerSummary`)."""

    kind: str
    policy: str
    suspension: bool
    elapsed_ns: int
    die_busy: BusyShares
    channel_busy: BusyShares
    #: Each die's busy share, in die order (channel-major: channel, then way, then die).
    die_busy_each: list[float]
    #: Each die's share of its busy time spent on background work (0 for a die never busy).
    background_share_each_die: list[float]
    #: Each channel's busy share, in channel order.
    channel_busy_each: list[float]
    link_busy: float
    #: Share of all dies' busy time spent on background work (GC, wear leveling, ...).
    background_share_of_die_time: float
    queue_depth: ClassDepths
    #: Summed over host transactions: time waiting, ready, while their die ran background work.
    host_behind_background_ns: int
    #: Episodes with background work first on a die (the hard threshold): a pool one block
    #: from its reserve, or host work held for background work (next count).
    hard_threshold_episodes: int
    #: Those in which host work was held for background work: a write at a pool's reserve
    #: waiting for the cleaning decided at once, a host program waiting for its block's erase,
    #: GC erases owed beyond `timing.hard_threshold_erases`.
    host_blocked_episodes: int
    host_wait_on_erase_ns: int
    #: The longest one request waited behind background work away from the hard threshold.
    max_request_behind_background_ns: int
    program_suspensions: int
    erase_suspensions: int
    #: Die operations that ran two planes' pages together (`timing.multi_plane`).
    multi_plane_ops: int
    transactions: int


class Estimate(TypedDict):
    """An estimate with its confidence interval (stats/sampling.rs `Estimate`); the bounds are
    None (null) with fewer than two windows, the value None when nothing was measured."""

    value: float | None
    low: float | None
    high: float | None


class SamplingEstimate(TypedDict):
    """The whole run's mean and p99 (us) estimated from the windows (`LatencyEstimate`)."""

    count: int
    mean: Estimate
    p99: Estimate


class SampledLatency(TypedDict):
    """`sampling.estimate`: reads, writes and all requests."""

    read: SamplingEstimate
    write: SamplingEstimate
    all: SamplingEstimate


class SampledWindow(TypedDict):
    """One measured window (`WindowSummary`): where it sat in the run and what it measured."""

    index: int
    #: Requests served when its warm-up began, and how many requests of the run it stands for.
    start_request: int
    stands_for_requests: int
    #: Simulated time at the start and end of its measurement.
    start_s: float
    end_s: float
    life_used: float
    host_bytes_written: int
    #: Measured requests over the measurement's span; None (null) for a span of no time.
    iops: float | None
    read: Latency
    write: Latency
    all: Latency


class Sampling(TypedDict):
    """`sampling`, present under sampled timing (`sampling.enabled = true`;
    stats/sampling.rs `SamplingSummary`). `latency_us` then holds the measured requests only."""

    every: str
    warmup_requests: int
    window_requests: int
    measured_requests: int
    #: Requests timed (warm-up and measured) and issued in fast-forward.
    timed_requests: int
    fast_forward_requests: int
    #: The confidence level of the intervals (0.95).
    confidence: float
    estimate: SampledLatency
    windows: list[SampledWindow]


class MappingCache(TypedDict):
    """`mapping_cache`, present with a cached mapping table (`mapping_cache.size_bytes > 0`;
    ftl/mapping_cache.rs `MappingCacheSummary`)."""

    #: Entries the cache holds, entries per translation page, translation pages in all.
    entries: int
    entries_per_translation_page: int
    translation_pages: int
    #: Map entries looked up by host reads and writes (one per unit), found cached or not.
    lookups: int
    hits: int
    misses: int
    #: hits / lookups; None without lookups.
    hit_ratio: float | None
    #: Dirty entries evicted (each rewrote its translation page).
    dirty_evictions: int
    #: Dirty entries written back with an evicted one (DFTL's batch update).
    batched_entries: int
    #: Translation pages read on a miss (a page never written is not read).
    miss_reads: int
    #: Translation pages rewritten for evicted dirty entries (read-modify-write).
    writebacks: int
    #: Translation pages rewritten because GC moved data whose entries were not cached.
    gc_updates: int
    #: Translation pages GC moved out of victim blocks.
    gc_translation_moves: int
    #: Flash page reads and programs of translation pages, all of the above.
    translation_reads: int
    translation_programs: int


class Cache(TypedDict):
    """`cache`, present with a DRAM data cache (`cache.size_bytes > 0`; host/interface.rs
    `CacheSummary`)."""

    size_bytes: int
    line_bytes: int
    lines: int
    #: Line accesses of host reads that found every unit they wanted in DRAM.
    read_hits: int
    #: Line accesses of host reads that needed the FTL for some unit.
    read_misses: int
    #: read_hits / (read_hits + read_misses); None without reads.
    read_hit_ratio: float | None
    write_hits: int
    write_misses: int
    #: Dirty lines evicted, and the units they wrote to the FTL.
    destages: int
    destaged_units: int
    #: Units the host wrote (the FTL received `destaged_units` of them).
    host_units_written: int
    #: Dirty units still in DRAM when the run ended (not written to flash).
    dirty_units_at_end: int


class FlowLatency(TypedDict):
    """A flow's response times (sim/flows.rs `FlowLatency`), in microseconds."""

    read: Latency
    write: Latency


class Flow(TypedDict):
    """One element of `flows`, present with `[[flows]]` (sim/flows.rs `FlowSummary`)."""

    name: str
    #: `normal` or `high` (orders host work under the queued scheduler only).
    priority: str
    open_loop: bool
    queue_depth: int
    #: Its slice of the logical space, [start, end) bytes.
    range_bytes: list[int]
    read_requests: int
    write_requests: int
    trim_requests: int
    read_bytes: int
    write_bytes: int
    #: Reads and writes per simulated second, and their MB/s; None (null) without simulated time.
    iops: float | None
    mb_per_s: float | None
    latency_us: FlowLatency
    #: Mapping units it wrote, and their share of the drive's host unit writes.
    host_units_written: int
    host_write_share: float | None
    #: Units of its range GC moved (None, null, where the drive does not count them: the
    #: open-channel host FTL), their share of all GC moves, and per unit it wrote.
    gc_units_moved: int | None
    gc_share: float | None
    gc_units_per_unit_written: float | None


class Trim(TypedDict):
    """`trim`, present when the workload can issue trims (`workload.trim_ratio`,
    `workload.trace.discards = "trim"`; summary.rs `TrimSummary`)."""

    #: Trim requests issued (not counted in `host.read_requests` / `host.write_requests`).
    requests: int
    bytes: int
    #: Mapping units the trims covered whole.
    units: int
    #: Of those, units that held data: invalidated without a program.
    mapped_units: int


class Salvage(TypedDict):
    """`techniques.salvage`, present when program failures are salvaged
    (`failures.on_program_failure = "skip_page"`; techniques/salvage.rs `SalvageSummary`)."""

    #: Blocks in service with bad pages.
    salvaged_blocks: int
    #: Failed writes retried at the next good page of the same block.
    skip_retries: int
    #: Units of failed pages whose block had no good page left, placed in another block.
    rehomed_units: int
    bad_page_table: BadPageTableStats
    bad_page_table_peak_memory_bytes: int


class SecondWrites(TypedDict):
    """`techniques.reusable`, present when Reusable SSD is on (ftl/second_write.rs
    `SecondWriteCounters`)."""

    units: int
    hot_first_writes: int
    encode_failures: int
    encode_fallbacks: int
    prefetch_reads: int
    demand_reads: int
    paired_host_reads: int
    moved_by_gc: int
    blocks_recycled: int
    blocks_reused: int


class Reliability(TypedDict):
    """`reliability`: read retries, long reads and read reclaim (stats/reliability.rs
    `ReliabilitySummary`)."""

    model: str
    read_reclaim: str
    #: Host reads by the number of retry steps they needed (index = steps).
    retry_steps_histogram: list[int]
    mean_retry_steps: float
    read_retries_by_cause: ByCause
    long_read_threshold_us: float
    long_reads: int
    long_read_share: float
    #: Share of host reads slower than each `reliability.read_thresholds_us`, keyed by the
    #: threshold in microseconds ("250"); only when thresholds are set.
    reads_over_us: NotRequired[dict[str, float]]
    uncorrectable_reads: int
    hinted_reads: int
    reclaimed_blocks: int
    reclaim_page_programs: int
    reclaim_erases: int
    reclaim_share_of_pe_budget: float
    reclaim_share_of_erases: float
    #: Reclaims done in idle windows; only when `reliability.reclaim_when = "idle"`.
    reclaims_in_idle: NotRequired[int]


class TraceIdentity(TypedDict):
    """`provenance.trace`: the trace replayed (stats/provenance.rs `TraceIdentity`)."""

    path: str
    bytes: int
    #: SHA-256 of the file's bytes; None (null) when it could not be read at the end of the run.
    sha256: str | None


class Provenance(TypedDict):
    """`provenance`: what produced the result (stats/provenance.rs `Provenance`)."""

    flashlife_version: str
    #: The commit the core was built from (`+dirty` when tracked files differed from it), or
    #: None for a build from a source distribution without `FLASHLIFE_BUILD_COMMIT`.
    build_commit: str | None
    #: The timing model that placed the operations.
    scheduler: str
    #: SHA-256 of the resolved configuration as config.toml holds it (below its comments).
    config_sha256: str
    trace: NotRequired[TraceIdentity]


class Techniques(TypedDict, total=False):
    """`techniques`: each technique's own section, present when the technique is on
    (techniques/mod.rs `summaries`); absent altogether when none has one."""

    reusable: SecondWrites
    salvage: Salvage


class Summary(TypedDict):
    """A run's summary: the schema of `summary.json` (summary.rs `Summary`)."""

    #: Mapping units programmed per unit the host wrote; None (null) without host writes.
    write_amplification: float | None
    capacity: Capacity
    host: Host
    flash: Flash
    gc: Gc
    #: Response time: from a request's arrival to its completion (the headline latency).
    latency_us: LatencySet
    #: Device time: from issue (the drive sees the request) to completion.
    device_time_us: LatencySet
    #: Host queue wait, arrival to issue: non-zero only for open-loop requests that found
    #: every queue slot taken.
    host_queue_wait_us: Latency
    throughput: Throughput
    lifetime: Lifetime
    failures: Failures
    integrity: Integrity
    run: RunInfo
    open_channel: NotRequired[OpenChannel]
    scheduler: NotRequired[Scheduler]
    sampling: NotRequired[Sampling]
    trim: NotRequired[Trim]
    cache: NotRequired[Cache]
    mapping_cache: NotRequired[MappingCache]
    #: The host flows, in configuration order (`[[flows]]`); absent without.
    flows: NotRequired[list[Flow]]
    techniques: NotRequired[Techniques]
    reliability: Reliability
    provenance: Provenance


def summary_fields() -> frozenset[str]:
    """Every dotted name `flatten_summary` can give a summary field (`latency_us.write.p99`):
    what tells a sweep's result columns from its parameter columns. A flow's fields carry its
    name (`flows.NAME.iops`), so they are not listed: `is_flow_field` tells them."""
    return _SUMMARY_FIELDS


def is_flow_field(name: str) -> bool:
    """Is `name` a flow's field as `flatten_summary` names it (`flows.NAME.FIELD...`)?"""
    parts = name.split(".")
    return len(parts) >= 3 and parts[0] == "flows" and ".".join(parts[2:]) in _FLOW_FIELDS


def _fields(tp: Any, prefix: str) -> set[str]:
    out: set[str] = set()
    for name, hint in typing.get_type_hints(tp).items():
        key = f"{prefix}.{name}" if prefix else name
        inner = [a for a in typing.get_args(hint) if typing.is_typeddict(a)] or [hint]
        if typing.is_typeddict(inner[0]):
            out |= _fields(inner[0], key)
        else:
            out.add(key)
    return out


def flatten_summary(summary: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested summary as one flat dict with dotted keys (`latency_us.write.p99`).

    The one flattening of summaries: sweep rows, `compare` and the plots all name metrics this
    way. Lists (`reliability.retry_steps_histogram`, `run.warnings`) stay values, except the
    flows, each under its name (`flows.reader.latency_us.read.p99`).
    """
    out: dict[str, Any] = {}
    for k, v in summary.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if key == "flows" and isinstance(v, list):
            for flow in v:
                rest = {f: x for f, x in flow.items() if f != "name"}
                out.update(flatten_summary(rest, f"flows.{flow['name']}"))
        elif isinstance(v, Mapping):
            out.update(flatten_summary(v, key))
        else:
            out[key] = v
    return out


_SUMMARY_FIELDS = frozenset(_fields(Summary, "") - {"flows"})
_FLOW_FIELDS = frozenset(_fields(Flow, "") - {"name"})
