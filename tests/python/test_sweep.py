"""flashlife.sweep on the local process pool: rows, columns, results folder, resuming, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import flashlife
from flashlife.sweep import WALL_FIELDS, load_grid, load_results, load_timeseries

QUICK = "writes:0.5dw"
GRID = {"capacity.overprovisioning": [0.07, 0.28], "gc.victim": ["greedy", "fifo"]}


def _drop_wall(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=[c for c in WALL_FIELDS if c in df.columns])


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[pd.DataFrame, Path]:
    out = tmp_path_factory.mktemp("sweep")
    df = flashlife.sweep("tiny", GRID, seeds=[1, 2], until=QUICK, results_dir=out, max_workers=2)
    return df, out


def test_one_row_per_point_in_grid_order(swept):
    df, _ = swept
    assert len(df) == 8
    assert list(df.columns[:5]) == ["point", "capacity.overprovisioning", "gc.victim", "workload", "seed"]
    assert list(df["capacity.overprovisioning"]) == [0.07] * 4 + [0.28] * 4
    assert list(df["gc.victim"]) == ["greedy", "greedy", "fifo", "fifo"] * 2
    assert list(df["seed"]) == [1, 2] * 4
    assert set(df["workload"]) == {"base"}
    assert df["point"].is_unique
    assert sorted(df.attrs["ran"]) == sorted(df["point"]) and df.attrs["reused"] == []


def test_summary_is_flattened_with_dotted_names(swept):
    df, _ = swept
    for col in (
        "write_amplification",
        "latency_us.write.p99",
        "latency_us.all.mean",
        "lifetime.drive_writes",
        "flash.block_erases",
        "throughput.iops",
        "run.seed",
        "summary.capacity.overprovisioning",
    ):
        assert col in df.columns, col
    assert (df["run.seed"] == df["seed"]).all()
    assert (df["lifetime.drive_writes"] == 0.5).all()
    # The grid value stays in its column; what the drive got is summary.KEY.
    assert df["summary.capacity.overprovisioning"].to_numpy() == pytest.approx(
        df["capacity.overprovisioning"].to_numpy(), rel=0.02
    )
    # Less spare space, and FIFO instead of greedy, both write more.
    wa = df.groupby(["capacity.overprovisioning", "gc.victim"])["write_amplification"].mean()
    assert wa[(0.07, "greedy")] > wa[(0.28, "greedy")]
    assert wa[(0.07, "fifo")] > wa[(0.07, "greedy")]


def test_rows_match_single_runs(swept):
    df, _ = swept
    row = df.iloc[5]
    r = flashlife.run(
        "tiny",
        until=QUICK,
        seed=int(row["seed"]),
        overrides={k: row[k] for k in GRID},
    )
    flat = flashlife.flatten_summary(r.summary)
    for k in ("write_amplification", "flash.block_erases", "latency_us.write.p99", "run.simulated_ns"):
        assert row[k] == flat[k], k


def test_results_folder(swept):
    df, out = swept
    points = sorted((out / "points").glob("*.json"))
    assert len(points) == 8
    assert {p.stem for p in points} == set(df["point"])
    data = json.loads(points[0].read_text())
    assert set(data) == {"params", "row"}
    assert (out / "sweep.json").exists()
    csv = pd.read_csv(out / "results.csv")
    assert len(csv) == 8 and list(csv.columns) == list(df.columns)
    pq = pd.read_parquet(out / "results.parquet")
    pd.testing.assert_frame_equal(_drop_wall(pq), _drop_wall(df), check_dtype=False)
    loaded = load_results(out)
    assert list(loaded["point"]) == list(df["point"])
    ts = load_timeseries(out, df["point"].iloc[0])
    assert "p99_latency_us" in ts.columns and len(ts) > 0


def test_rerun_runs_only_missing_points(tmp_path):
    out = tmp_path / "s"
    first = flashlife.sweep("tiny", GRID, seeds=[1, 2], until=QUICK, results_dir=out, max_workers=2)
    files = {p.stem: p for p in (out / "points").glob("*.json")}
    # Lose three points (as if the sweep had been killed before they finished), spoil one.
    lost = list(first["point"].iloc[[0, 3, 6]])
    for key in lost:
        files[key].unlink()
    spoiled = first["point"].iloc[7]
    files[spoiled].write_text("{not json")
    kept = {k: files[k].stat().st_mtime_ns for k in files if k not in lost and k != spoiled}
    again = flashlife.sweep("tiny", GRID, seeds=[1, 2], until=QUICK, results_dir=out, max_workers=2)
    assert sorted(again.attrs["ran"]) == sorted([*lost, spoiled])
    assert sorted(again.attrs["reused"]) == sorted(kept)
    for key, mtime in kept.items():
        assert (out / "points" / f"{key}.json").stat().st_mtime_ns == mtime
    pd.testing.assert_frame_equal(_drop_wall(first), _drop_wall(again))
    # A third time: nothing runs.
    third = flashlife.sweep("tiny", GRID, seeds=[1, 2], until=QUICK, results_dir=out, progress=False)
    assert third.attrs["ran"] == [] and len(third.attrs["reused"]) == 8
    # A changed sweep definition is a different point.
    other = flashlife.sweep("tiny", GRID, seeds=[1], until="writes:0.25dw", results_dir=out, max_workers=1)
    assert len(other.attrs["ran"]) == 4


def test_workloads_and_fixed_overrides():
    df = flashlife.sweep(
        "tiny",
        {"gc.victim": ["greedy"]},
        workloads={"w": {"read_ratio": 0.0}, "rw": {"read_ratio": 0.5}},
        until="requests:3000",
        overrides={"ftl.timing": False},
        max_workers=1,
    )
    assert list(df["workload"]) == ["w", "rw"]
    reads = dict(zip(df["workload"], df["host.read_requests"], strict=True))
    assert reads["w"] == 0 and reads["rw"] > 1000


def test_numpy_grid_values():
    import numpy as np

    df = flashlife.sweep(
        "tiny",
        {"capacity.overprovisioning": np.array([0.1, 0.2]), "wear_leveling.threshold": np.arange(8, 10)},
        until="requests:200",
        max_workers=1,
    )
    assert len(df) == 4 and list(df["wear_leveling.threshold"]) == [8, 9, 8, 9]


def test_grid_over_a_workload_key_overrides_the_workload():
    df = flashlife.sweep(
        "tiny",
        {"workload.read_ratio": [0.0, 1.0]},
        workloads={"mix": {"read_ratio": 0.5}},
        until="requests:2000",
        max_workers=1,
    )
    assert list(df["host.read_requests"]) == [0, 2000]


def test_bad_point_fails_before_anything_runs(tmp_path):
    with pytest.raises(flashlife.FlashlifeError) as e:
        flashlife.sweep("tiny", {"gc.victim": ["greedy", "fiffo"]}, until=QUICK, results_dir=tmp_path)
    assert "fiffo" in str(e.value) and "gc.victim" in str(e.value)
    assert not list((tmp_path / "points").glob("*.json"))
    with pytest.raises(flashlife.FlashlifeError, match="unknown key"):
        flashlife.sweep("tiny", {"gc.victm": ["greedy"]}, until=QUICK)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"grid": {"seed": [1, 2]}}, "seeds="),
        ({"grid": {"gc.victim": []}}, "no values"),
        ({"seeds": []}, "seeds"),
        ({"backend": "threads"}, "backend"),
        ({"backend": "dask"}, "client="),
    ],
)
def test_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        flashlife.sweep("tiny", **{"grid": {"gc.victim": ["greedy"]}, **kwargs})


def test_grid_file_and_cli(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'base = "tiny"\nuntil = "writes:0.25dw"\nseeds = [1, 2]\n'
        '[grid]\n"capacity.overprovisioning" = [0.07, 0.28]\n'
        "[workloads.rand]\nread_ratio = 0.3\n"
        '[set]\n"gc.victim" = "fifo"\n'
    )
    kwargs = load_grid(grid)
    assert kwargs["grid"] == {"capacity.overprovisioning": [0.07, 0.28]}
    assert kwargs["seeds"] == [1, 2] and kwargs["overrides"] == {"gc.victim": "fifo"}
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "flashlife.cli", "sweep", str(grid), "--out", str(out), "--max-workers", "2"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "4 points: 4 ran" in p.stdout
    df = pd.read_csv(out / "results.csv")
    assert len(df) == 4 and set(df["workload"]) == {"rand"}
    assert (df["host.read_requests"] > 0).all()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "0 ran, 4 already" in p.stdout


def test_grid_file_nested_keys_and_relative_base(tmp_path):
    (tmp_path / "drive.toml").write_text('[gc]\nvictim = "fifo"\n')
    grid = tmp_path / "g.toml"
    grid.write_text('base = "drive.toml"\n[grid]\ncapacity.overprovisioning = [0.1]\n')
    kwargs = load_grid(grid)
    assert kwargs["base"] == str((tmp_path / "drive.toml").resolve())
    df = flashlife.sweep(**{**kwargs, "until": "requests:100"}, max_workers=1)
    assert list(df.columns[:2]) == ["point", "capacity.overprovisioning"]
    grid.write_text('base = "tiny"\nbogus = 1\n')
    with pytest.raises(ValueError, match="bogus"):
        load_grid(grid)
    grid.write_text('base = "tiny"\n[grid]\n"gc.victim" = "fifo"\n')
    with pytest.raises(ValueError, match="list"):
        load_grid(grid)


def test_cli_sweep_error_is_clean(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text('base = "tiny"\n[grid]\n"gc.victim" = ["nope"]\n')
    p = subprocess.run(
        [sys.executable, "-m", "flashlife.cli", "sweep", str(grid), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert p.returncode == 2
    assert p.stderr.startswith("flashlife: error:") and "nope" in p.stderr


def test_progress_bar_always(capsys):
    flashlife.sweep(
        "tiny", {"gc.victim": ["greedy", "fifo"]}, until="requests:100", max_workers=1, progress="always"
    )
    err = capsys.readouterr().err
    assert "sweep" in err and "2/2" in err


def test_no_progress_bar_off_a_terminal(capsys):
    flashlife.sweep("tiny", {"gc.victim": ["greedy"]}, until="requests:100", max_workers=1, progress=True)
    assert capsys.readouterr().err == ""


def test_grid_over_the_stop_condition():
    df = flashlife.sweep("tiny", {"run.until": ["requests:50", "requests:60"]}, max_workers=1)
    assert list(df["host.write_requests"]) == [50, 60]


def test_parquet_failure_leaves_results_csv(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise TypeError("no parquet today")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", refuse)
    with pytest.warns(UserWarning, match="no parquet today"):
        flashlife.sweep("tiny", {"gc.victim": ["greedy"]}, until="requests:50", results_dir=tmp_path)
    assert (tmp_path / "results.csv").exists() and not (tmp_path / "results.parquet").exists()
    assert not list(tmp_path.glob(".results.parquet*"))


def test_a_point_gets_the_defaults_its_own_keys_imply():
    """`ftl.allocation` unset follows `timing.scheduler` (least_loaded under queued, rotation
    under reservation): a point that sets the scheduler must run what `run` runs with the same
    arguments, not the allocation the base preset resolved to under its own scheduler."""
    until = "requests:3000"
    df = flashlife.sweep("tiny", {"timing.scheduler": ["queued", "reservation"]}, until=until, max_workers=1)
    for sched, mean in zip(df["timing.scheduler"], df["latency_us.write.mean"], strict=True):
        r = flashlife.run("tiny", until=until, overrides={"timing.scheduler": sched})
        assert mean == r.summary["latency_us"]["write"]["mean"], sched
    # The allocations differ on this drive, so the check above tells them apart.
    rot, ll = (
        flashlife.run(
            "tiny", until=until, overrides={"timing.scheduler": "reservation", "ftl.allocation": a}
        ).summary["latency_us"]["write"]["mean"]
        for a in ("rotation", "least_loaded")
    )
    assert rot != ll
