"""Reusable SSD's trace drives sized to the trace's footprint (`reproduce/_footprint.py`).
References: a hand-made trace whose distinct pages are known, and the FTL's own rule for the
logical space (floor(physical / (1 + op)))."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from flashlife.reproduce._footprint import footprint, size_drive


def test_footprint_counts_distinct_pages_of_reads_and_writes(tmp_path: Path) -> None:
    # DiskSim ASCII: time device block(512 B) count flags (1 = read). Pages 0, 1 (twice), 2
    # (a read) and 10-11 (one 8 KiB write): 5 distinct 4 KiB pages, 3 writes.
    t = tmp_path / "t.ascii"
    t.write_text("0.0 0 0 8 0\n1.0 0 8 8 0\n2.0 0 8 8 0\n3.0 0 16 8 1\n4.0 0 80 16 0\n")
    fp = footprint(t)
    assert (fp.pages, fp.exact, fp.writes, fp.requests) == (5, True, 4, 5)


@pytest.mark.parametrize("pages", [20_422, 28_775, 513_000])
@pytest.mark.parametrize("op", [0.07, 0.28])
def test_sized_drive_is_the_smallest_that_holds_the_footprint(pages: int, op: float) -> None:
    d = size_drive(pages, op, ways=2, planes=2, pages_per_block=64)
    logical = lambda b: math.floor(d.ways * 2 * b * 64 / (1 + op))  # noqa: E731
    assert d.logical_pages == logical(d.blocks_per_plane) >= pages
    assert logical(d.blocks_per_plane - 1) < pages, "one block per plane fewer would also hold it"
    assert d.over_footprint == pytest.approx(1.0, abs=0.02)
    assert d.overrides() == {"geometry.ways": d.ways, "geometry.blocks_per_plane": d.blocks_per_plane}


def test_small_footprints_take_fewer_chips_then_the_smallest_drive() -> None:
    # 7,142 pages (Financial1's first 10k requests) need 60 blocks per plane on 1 chip at op
    # 7%: one chip of the 64-block minimum, 7% larger than the footprint.
    d = size_drive(7_142, 0.07, ways=2, planes=2, pages_per_block=64)
    assert (d.ways, d.blocks_per_plane) == (1, 64)
    assert d.over_footprint == pytest.approx(64 * 2 * 64 / 1.07 // 1 / 7_142)
    # A tiny trace cannot fill the smallest drive: said by the ratio, not hidden.
    assert size_drive(369, 0.07, ways=4, planes=2, pages_per_block=64).over_footprint > 10
    with pytest.raises(ValueError):
        size_drive(0, 0.07, ways=2, planes=2, pages_per_block=64)
