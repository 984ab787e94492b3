"""The drop timeline `experiments/zombie/rerun_point.py` prints for a drop-bit run (the
ZombieNAND doc's "when the blocks dropped" figures come from it). Reference: a hand-made time
series whose waves are known."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "zombie" / "rerun_point.py"


def load():
    spec = importlib.util.spec_from_file_location("rerun_point", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write(path: Path, rows: list[tuple[int, int, int, int, int]]) -> Path:
    # (host bytes, switches, SLC, MLC, dead) on a drive of 10 blocks that starts all MLC.
    lines = ["host_bytes_written,dead_blocks,mode_switches,blocks_slc,blocks_mlc,blocks_tlc,blocks_qlc"]
    lines += [f"{b},{dead},{sw},{slc},{mlc},0,0" for b, sw, slc, mlc, dead in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_drops_split_into_waves_at_a_pause_of_one_percent_of_the_baseline_life(tmp_path: Path) -> None:
    rp = load()
    # Baseline life 1,000 bytes: drops at 99.5% and 100.0% (one wave: 0.5 apart), none until
    # 103.0% (a pause of 3.0, a new wave), death at 104.0%.
    ts = write(
        tmp_path / "ts.csv",
        [
            (500, 0, 0, 10, 0),
            (995, 2, 2, 8, 0),
            (1000, 3, 3, 7, 0),
            (1020, 3, 3, 7, 0),
            (1030, 5, 5, 5, 0),
            (1040, 5, 4, 5, 1),
        ],
    )
    assert rp.drop_waves(ts, 1000.0) == [
        "life 99.50-100.00: drops 1-3 (3); then SLC 3, MLC 7, dead 0",
        "life 103.00-103.00: drops 4-5 (2); then SLC 5, MLC 5, dead 0",
        "death at life 104.00 (5 drops in all)",
    ]


def test_a_retiring_drive_has_no_timeline(tmp_path: Path) -> None:
    rp = load()
    ts = tmp_path / "ts.csv"
    ts.write_text("host_bytes_written,dead_blocks\n100,0\n")
    assert rp.drop_waves(ts, 100.0) == ["no mode columns in the time series (not a drop-bit drive)"]
