"""Drives sized to a trace's footprint: the distinct addresses it touches, plus the
over-provisioning, so that a replay fills the drive and both drives of a comparison clean
(the paper sized its DiskSim drives to its traces' address spaces; folding a small trace
onto the start of a large drive leaves the rest as never-rewritten data and the standard
drive at a write amplification of about 1)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ..api import trace_stats

#: 4 KiB pages: the granularity of `flashlife trace stats`' distinct-address count and the
#: mapping unit of the drives sized here.
PAGE_BYTES = 4096


@dataclass(frozen=True)
class TraceFootprint:
    #: Distinct 4 KiB pages the trace reads or writes.
    pages: int
    #: False when `pages` is the core's HyperLogLog estimate (past a million pages).
    exact: bool
    writes: int
    requests: int
    #: From the first arrival to the last.
    duration_ns: int

    @property
    def rate(self) -> float:
        """Offered requests per second at the trace's own timestamps."""
        return self.requests / (self.duration_ns * 1e-9) if self.duration_ns > 0 else math.inf


def footprint(path: str | os.PathLike) -> TraceFootprint:
    """The trace's footprint, from the core's one-pass streaming reader (memory bounded)."""
    st = trace_stats(path).stats
    return TraceFootprint(
        pages=int(st["distinct_pages"]),
        exact=bool(st["distinct_exact"]),
        writes=int(st["writes"]),
        requests=int(st["requests"]),
        duration_ns=int(st["duration_ns"]),
    )


@dataclass(frozen=True)
class SizedDrive:
    ways: int
    blocks_per_plane: int
    #: Logical pages of the drive (floor(physical / (1 + op)), as the FTL computes them).
    logical_pages: int
    #: The drive's logical space over the footprint: 1.0 up to rounding when the trace fills
    #: it; more when the footprint is below the smallest drive allowed (`min_blocks`, one way).
    over_footprint: float

    def overrides(self) -> dict[str, int]:
        return {"geometry.ways": self.ways, "geometry.blocks_per_plane": self.blocks_per_plane}


def size_drive(
    pages: int, op: float, *, ways: int, planes: int, pages_per_block: int, min_blocks: int = 64
) -> SizedDrive:
    """The drive whose logical space holds `pages` distinct pages at over-provisioning `op`
    (spare / logical), keeping the preset's planes per chip and pages per block: as many of
    the preset's `ways` (chips) as keep at least `min_blocks` blocks per plane (fewer chips
    before blocks too few for the GC thresholds), then the fewest blocks per plane whose
    logical space is at least the footprint."""
    if pages <= 0:
        raise ValueError("a footprint of at least one page")

    def blocks_for(w: int) -> int:
        per_plane = pages * (1.0 + op) / (w * planes * pages_per_block)
        b = max(min_blocks, math.ceil(per_plane))
        while math.floor(w * planes * b * pages_per_block / (1.0 + op)) < pages:
            b += 1  # floor() lost a page
        return b

    w = ways
    while w > 1 and math.ceil(pages * (1.0 + op) / (w * planes * pages_per_block)) < min_blocks:
        w -= 1
    b = blocks_for(w)
    logical = math.floor(w * planes * b * pages_per_block / (1.0 + op))
    return SizedDrive(ways=w, blocks_per_plane=b, logical_pages=logical, over_footprint=logical / pages)
