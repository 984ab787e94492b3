"""flashlife.sweep on a real Dask cluster (two worker processes over TCP on loopback)."""

from __future__ import annotations

import logging

import pandas as pd
import pytest

import flashlife
from flashlife.sweep import WALL_FIELDS

distributed = pytest.importorskip("dask.distributed")

QUICK = "writes:0.5dw"
GRID = {"capacity.overprovisioning": [0.07, 0.28], "gc.victim": ["greedy", "fifo"]}
SEEDS = [1, 2]


def _drop_wall(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=list(WALL_FIELDS))


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as c:
        yield c


def test_dask_sweep_matches_the_local_backend(cluster, tmp_path):
    with distributed.Client(cluster) as client:
        remote = flashlife.sweep(
            "tiny", GRID, seeds=SEEDS, until=QUICK, backend="dask", client=client, results_dir=tmp_path
        )
        # Both workers took part.
        assert len(client.scheduler_info()["workers"]) == 2
    local = flashlife.sweep("tiny", GRID, seeds=SEEDS, until=QUICK, backend="local", max_workers=2)
    assert len(remote) == 8
    assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
    pd.testing.assert_frame_equal(_drop_wall(remote), _drop_wall(local))
    assert len(list((tmp_path / "points").glob("*.json"))) == 8
    assert (tmp_path / "results.csv").exists()


def test_dask_by_scheduler_address_and_resume(cluster, tmp_path):
    where = {"backend": "dask", "scheduler": cluster.scheduler_address, "results_dir": tmp_path}
    first = flashlife.sweep("tiny", GRID, seeds=[3], until=QUICK, **where)
    assert len(first.attrs["ran"]) == 4
    (tmp_path / "points" / f"{first['point'].iloc[1]}.json").unlink()
    again = flashlife.sweep("tiny", GRID, seeds=[3], until=QUICK, **where)
    assert again.attrs["ran"] == [first["point"].iloc[1]]
    pd.testing.assert_frame_equal(_drop_wall(first), _drop_wall(again))


def test_dask_run_error_reaches_the_caller(cluster):
    # A configuration that validates but fails when the drive is built is reported by point.
    with distributed.Client(cluster) as client:
        with pytest.raises(flashlife.FlashlifeError, match="sweep point"):
            flashlife.sweep(
                "tiny",
                {"workload.request_size": [4096, 1 << 40]},
                until="requests:10",
                backend="dask",
                client=client,
                on_error="raise",
            )


def test_cli_sweep_on_dask(cluster, tmp_path, capsys):
    from flashlife.cli import main

    grid = tmp_path / "grid.toml"
    grid.write_text('base = "tiny"\nuntil = "requests:500"\n[grid]\n"gc.victim" = ["greedy", "fifo"]\n')
    out = tmp_path / "out"
    args = [
        "sweep",
        str(grid),
        "--out",
        str(out),
        "--backend",
        "dask",
        "--scheduler",
        cluster.scheduler_address,
    ]
    assert main([*args, "--no-progress"]) == 0
    assert "2 points: 2 ran" in capsys.readouterr().out
    assert len(pd.read_csv(out / "results.csv")) == 2
