"""A reproduction's paired runs in which one drive died before the stop: the report marks the
row and leaves it out of its ranges (found at Reusable SSD's paper scale, 2026-11-27: five row
pairs whose Reusable SSD drive died at 0.04-2.0 of 3 drive writes read as results).
Reference: the sweep's own columns (`lifetime.dead`, `lifetime.drive_writes`)."""

from __future__ import annotations

import pandas as pd

from flashlife.reproduce._common import Section, died_early
from flashlife.reproduce.reusable import _add_row, _leave_out_the_dead
from flashlife.reproduce.salvage import spread, spread_cells


def point(enabled: bool, erases: int, dead: bool, drive_writes: float) -> dict[str, object]:
    return {
        "reusable.enabled": enabled,
        "flash.block_erases": erases,
        "latency_us.all.mean": 100.0,
        "techniques.reusable.units": 10,
        "host.write_bytes": 4096 * 30,
        "host_queue_wait_us.mean": 1.0,
        "write_amplification": 2.0,
        "throughput.iops": 1000.0,
        "lifetime.dead": dead,
        "lifetime.drive_writes": drive_writes,
        "lifetime.death_reason": "no pool has space for host data" if dead else "",
    }


def test_a_pair_with_a_dead_drive_is_marked_and_left_out_of_the_ranges() -> None:
    s = Section("fig7_8", "t", paper=[])
    lived = pd.DataFrame([point(False, 100, False, 3.0), point(True, 67, False, 3.0)])
    died = pd.DataFrame([point(False, 100, False, 3.0), point(True, 2, True, 0.04)])
    _add_row(s, "reusable-medium", "zipf(2)", 0.28, "standard", lived)
    _add_row(s, "reusable-medium", "hadoop", 0.07, "standard", died)
    assert [r[0] for r in s.rows] == ["zipf(2)", "hadoop †"]
    kept = _leave_out_the_dead(s, pd.DataFrame(s.data), 3)
    assert list(kept.workload) == ["zipf(2)"]
    (note,) = s.notes
    assert "hadoop reusable-medium op 7%" in note and "Reusable SSD died at 0.04 drive writes" in note
    # Nothing is said when every drive lived.
    s2 = Section("fig7_8", "t", paper=[])
    _add_row(s2, "reusable-medium", "zipf(2)", 0.28, "standard", lived)
    assert len(_leave_out_the_dead(s2, pd.DataFrame(s2.data), 3)) == 1 and s2.notes == []


def test_died_early_reads_the_lifetime_columns() -> None:
    assert died_early(point(True, 1, False, 3.0)) is None
    why = died_early(point(True, 1, True, 1.04482))
    assert why == "died at 1.04 drive writes (no pool has space for host data)"


def salvage_point(seed: int, policy: str, latency: float, dead: bool = False) -> dict[str, object]:
    return {
        "seed": seed,
        "failures.on_program_failure": policy,
        "failures.bad_block_ratio": 0.01,
        "latency_us.all.mean": latency,
        "latency_us.all.p50": latency,
        "latency_us.all.p99": latency,
        "throughput.iops": 1e6 / latency,
        "write_amplification": 2.0,
        "gc.mean_valid_per_victim": 700.0,
        "lifetime.dead": dead,
        "lifetime.drive_writes": 0.2 if dead else 0.25,
        "lifetime.death_reason": "live blocks hold too few units" if dead else "",
    }


def test_salvage_leaves_a_seed_whose_drive_died_out_of_its_ratios() -> None:
    # Found at the paper scale (2026-11-29): the report said a dead seed's ratios were left
    # out, but its mean latency ratio (0.0003 against a baseline stalled before dying) was kept.
    rows = [
        salvage_point(1, "retire_block", 3e6, dead=True),
        salvage_point(1, "skip_page", 1000.0),
        salvage_point(2, "retire_block", 2000.0),
        salvage_point(2, "skip_page", 1000.0),
        salvage_point(3, "retire_block", 1000.0),
        salvage_point(3, "skip_page", 1000.0),
    ]
    mean, sd, d = spread(pd.DataFrame(rows))
    assert len(d) == 2
    assert mean["latency"] == 0.75 and mean["throughput"] == 1.5
    # Every seed dead: no ratio at all, printed as n/a rather than a number.
    mean, sd, d = spread(pd.DataFrame([salvage_point(1, "retire_block", 3e6, dead=True), rows[1]]))
    assert len(d) == 0
    assert spread_cells(mean, sd)[1] == "n/a ± n/a"
