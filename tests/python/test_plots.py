"""flashlife.plots (Agg backend), `flashlife plot`, and the example scripts."""

from __future__ import annotations

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import runpy  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import flashlife  # noqa: E402
from flashlife import plots  # noqa: E402
from flashlife.cli import main  # noqa: E402

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUICK = "writes:0.5dw"


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plots_sweep")
    flashlife.sweep(
        "tiny",
        {"capacity.overprovisioning": [0.07, 0.28], "gc.victim": ["greedy", "fifo"]},
        workloads={"uniform": {"read_ratio": 0.0}, "mix": {"read_ratio": 0.5}},
        until=QUICK,
        results_dir=out,
        max_workers=2,
    )
    return out


@pytest.fixture(scope="module")
def df(sweep_dir) -> pd.DataFrame:
    return flashlife.load_results(sweep_dir)


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("plots_runs")


@pytest.fixture(scope="module")
def runs(runs_dir) -> dict[str, flashlife.Result]:
    """Greedy and FIFO runs on a read/write mix, also written to runs_dir/greedy and runs_dir/fifo."""
    wl = {"read_ratio": 0.5}
    return {
        v: flashlife.run("tiny", wl, until="writes:1dw", overrides={"gc.victim": v}, out_dir=runs_dir / v)
        for v in ("greedy", "fifo")
    }


def _saved(path: Path) -> None:
    assert path.exists() and path.stat().st_size > 1000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_heatmap_relative_to_baseline_rows(df, tmp_path):
    path = tmp_path / "h.png"
    fig = plots.heatmap(
        df, "capacity.overprovisioning", "workload", "write_amplification", {"gc.victim": "fifo"}, path=path
    )
    _saved(path)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "capacity.overprovisioning"
    assert ax.get_ylabel() == "workload"
    assert ax.get_title() == "write_amplification relative to baseline"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.07", "0.28"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["mix", "uniform"]
    data = ax.images[0].get_array()
    assert data.shape == (2, 2)
    assert (data < 1.0).all()  # greedy / FIFO
    assert fig.axes[1].get_ylabel() == "write_amplification / baseline"  # the colour bar
    # Cell values: the mean over seeds of greedy divided by FIFO's.
    g = df[
        (df["gc.victim"] == "greedy") & (df["workload"] == "mix") & (df["capacity.overprovisioning"] == 0.07)
    ]
    f = df[
        (df["gc.victim"] == "fifo") & (df["workload"] == "mix") & (df["capacity.overprovisioning"] == 0.07)
    ]
    assert data[0, 0] == pytest.approx(g["write_amplification"].mean() / f["write_amplification"].mean())


def test_heatmap_absolute_number_and_frame_baselines(df):
    greedy = df[df["gc.victim"] == "greedy"]
    fifo = df[df["gc.victim"] == "fifo"]
    fig = plots.heatmap(greedy, "capacity.overprovisioning", "workload", "write_amplification", title="WA")
    assert fig.axes[0].get_title() == "WA"
    absolute = fig.axes[0].images[0].get_array()
    assert (absolute > 1.0).all()
    fig = plots.heatmap(greedy, "capacity.overprovisioning", "workload", "write_amplification", 2.0)
    np.testing.assert_allclose(np.asarray(fig.axes[0].images[0].get_array()), np.asarray(absolute) / 2.0)
    fig = plots.heatmap(greedy, "capacity.overprovisioning", "workload", "write_amplification", fifo)
    assert (fig.axes[0].images[0].get_array() < 1.0).all()
    with pytest.raises(KeyError, match="no_such"):
        plots.heatmap(df, "no_such", "workload", "write_amplification")
    with pytest.raises(ValueError, match="no baseline rows"):
        plots.heatmap(df, "capacity.overprovisioning", "workload", "write_amplification", {"gc.victim": "x"})


def test_bars_relative(df, tmp_path):
    path = tmp_path / "b.png"
    op = {"capacity.overprovisioning": 0.07}
    fig = plots.bars_relative(df, "workload", "flash.block_erases", "fifo", where=op, path=path)
    _saved(path)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "workload"
    assert ax.get_ylabel() == "flash.block_erases relative to fifo"
    assert ax.get_title() == "flash.block_erases relative to gc.victim=fifo\n(capacity.overprovisioning=0.07)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["uniform", "mix"]
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 2 and all(0 < h < 1 for h in heights)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["gc.victim=greedy"]
    fig = plots.bars_relative(
        df, "workload", "flash.block_erases", "fifo", by="gc.victim", include_baseline=True, where=op
    )
    assert [p.get_height() for p in fig.axes[0].patches][2:] == [1.0, 1.0]
    with pytest.raises(ValueError, match="nope"):
        plots.bars_relative(df, "workload", "flash.block_erases", "nope", where=op)


def test_over_lifetime(runs, tmp_path):
    path = tmp_path / "l.png"
    fig = plots.over_lifetime(runs, "p99_latency_us", path=path)
    _saved(path)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "normalised lifetime (host bytes written / final)"
    assert ax.get_ylabel() == "p99_latency_us"
    assert ax.get_title() == "p99_latency_us over lifetime"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["greedy", "fifo"]
    y = ax.lines[0].get_ydata()
    assert (y > 0).all()  # no empty interval drawn as a latency of 0
    x = ax.lines[0].get_xdata()
    assert x[-1] == pytest.approx(1.0) and (x > 0).all() and (pd.Series(x).diff().dropna() >= 0).all()
    fig = plots.over_lifetime(runs["greedy"].timeseries, "wa_cumulative", title="WA")
    assert fig.axes[0].get_title() == "WA" and fig.axes[0].get_legend() is None
    with pytest.raises(KeyError, match="bogus"):
        plots.over_lifetime(runs["greedy"], "bogus")


def test_over_lifetime_of_a_sampled_run_draws_one_point_per_window():
    r = flashlife.run(
        "tiny",
        until="writes:4dw",
        overrides={
            "sampling.enabled": True,
            "sampling.every": "20%",
            "sampling.warmup_requests": 500,
            "sampling.window_requests": 1000,
        },
    )
    windows = r.summary["sampling"]["windows"]
    y = plots.over_lifetime(r, "mean_latency_us").axes[0].lines[0].get_ydata()
    assert list(y) == pytest.approx([w["all"]["mean"] for w in windows])
    # Bookkeeping columns keep every row.
    wa = plots.over_lifetime(r, "wa_cumulative").axes[0].lines[0].get_ydata()
    assert len(wa) == len(r.timeseries)


def test_erase_histogram(runs, tmp_path):
    path = tmp_path / "e.png"
    r = runs["greedy"]
    fig = plots.erase_histogram(r, path=path)
    _saved(path)
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == (
        "erase count",
        "blocks",
        "erase count histogram",
    )
    assert sum(p.get_height() for p in ax.patches) == r.erase_histogram["blocks"].sum()
    fig = plots.erase_histogram({k: v.erase_histogram for k, v in runs.items()})
    assert len(fig.axes[0].lines) == 2


def test_latency_cdf(runs, df, tmp_path):
    path = tmp_path / "c.png"
    fig = plots.latency_cdf(runs, op="read", path=path)
    _saved(path)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "read latency (us)"
    assert ax.get_ylabel() == "fraction of requests at least this slow (1 - CDF)"
    assert ax.get_title() == "read latency distribution"
    # A Result carries the whole histogram: one point per bucket, from the fastest request
    # (all requests at least that slow) to the slowest (1 / count of them).
    r = runs["greedy"]
    s = r.summary["latency_us"]["read"]
    x = list(ax.lines[0].get_xdata())
    y = list(ax.lines[0].get_ydata())
    reads = r.latency_cdf[r.latency_cdf["op"] == "read"]
    assert len(x) == len(reads) > 4
    assert y[0] == 1.0 and x == sorted(x)
    assert x[-1] == pytest.approx(s["max"], rel=1e-3)
    assert y[-1] * s["count"] >= 1.0 - 1e-9
    assert all(a >= b for a, b in zip(y, y[1:], strict=False))
    # The CDF reaches the median at the summary's p50.
    cdf = plots.latency_cdf(r, op="read", tail=False).axes[0].lines[0]
    median_at = next(xv for xv, f in zip(cdf.get_xdata(), cdf.get_ydata(), strict=True) if f >= 0.5)
    assert median_at == pytest.approx(s["p50"], rel=1e-3)
    # A summary has percentiles only: the curve goes through them.
    fig = plots.latency_cdf(r.summary, op="read")
    assert list(fig.axes[0].lines[0].get_xdata()) == [s["p50"], s["p99"], s["p999"], s["max"]]
    assert list(fig.axes[0].lines[0].get_ydata())[:3] == pytest.approx([0.5, 0.01, 0.001])
    fig = plots.latency_cdf(runs["fifo"].summary, op="write", tail=False)
    assert fig.axes[0].get_ylabel() == "fraction of requests (CDF)"
    assert list(fig.axes[0].lines[0].get_ydata()) == [0.5, 0.99, 0.999, 1.0]
    fig = plots.latency_cdf(df.iloc[0], op="all")  # a row of sweep results
    assert len(fig.axes[0].lines) == 1
    with pytest.raises(ValueError, match="no read requests"):
        plots.latency_cdf(df[df["workload"] == "uniform"].iloc[0], op="read")


def test_draws_into_given_axes(df):
    from matplotlib.figure import Figure

    fig = Figure()
    ax1, ax2 = fig.subplots(1, 2)
    out = plots.bars_relative(
        df, "workload", "write_amplification", "fifo", ax=ax2, where={"capacity.overprovisioning": 0.07}
    )
    assert out is fig and len(ax2.patches) == 2 and len(ax1.patches) == 0


def test_missing_matplotlib_is_a_clear_error(df, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"flashlife\[plot\]"):
        plots.bars_relative(
            df, "workload", "write_amplification", "fifo", where={"capacity.overprovisioning": 0.07}
        )


class _Done:
    def __init__(self, returncode: int, out: str, err: str):
        self.returncode, self.stdout, self.stderr = returncode, out, err


@pytest.fixture
def cli_plot(capsys):
    """`flashlife plot ARGS` in this process (a subprocess per figure would mostly time imports)."""

    def call(*args: str) -> _Done:
        capsys.readouterr()
        rc = main(["plot", *args])
        captured = capsys.readouterr()
        return _Done(rc, captured.out, captured.err)

    return call


def test_cli_plot_every_kind(sweep_dir, runs, runs_dir, tmp_path, cli_plot):
    run_dirs = [str(runs_dir / v) for v in runs]
    jobs = {
        "heatmap": [str(sweep_dir), "--x", "capacity.overprovisioning", "--y", "workload",
                    "--metric", "write_amplification", "--baseline", "gc.victim=fifo"],
        "bars": [str(sweep_dir / "results.csv"), "--metric", "flash.block_erases", "--baseline", "fifo",
                 "--where", "capacity.overprovisioning=0.07"],
        "lifetime": [*run_dirs, "--metric", "wa_cumulative"],
        "erase": [run_dirs[0]],
        "cdf": [*run_dirs, "--op", "read"],
    }  # fmt: skip
    for kind, args in jobs.items():
        out = tmp_path / f"{kind}.png"
        p = cli_plot(*args, "--kind", kind, "--out", str(out))
        assert p.returncode == 0, (kind, p.stderr)
        assert p.stdout.strip() == f"wrote {out}"
        _saved(out)


def test_cli_plot_errors(sweep_dir, tmp_path, cli_plot):
    out = str(tmp_path / "x.png")
    p = cli_plot(str(sweep_dir), "--kind", "heatmap", "--metric", "write_amplification", "--out", out)
    assert p.returncode == 2 and "--x" in p.stderr
    p = cli_plot(str(tmp_path / "nowhere"), "--kind", "erase", "--out", out)
    assert p.returncode == 2 and "erase_histogram.csv" in p.stderr
    p = cli_plot(str(sweep_dir), "--kind", "bars", "--metric", "nope", "--baseline", "fifo", "--out", out)
    assert p.returncode == 2 and "nope" in p.stderr


@pytest.mark.parametrize(
    "script",
    [
        "heatmap_op_vs_workingset.py",
        "bars_relative_workloads.py",
        "latency_over_lifetime.py",
        "erase_histogram.py",
        "latency_cdf.py",
    ],
)
def test_example_scripts(script, tmp_path):
    mod = runpy.run_path(str(EXAMPLES / script))
    path = mod["main"](tmp_path)
    _saved(Path(path))


def test_plots_refuse_to_average_different_configurations(df, sweep_dir, tmp_path, cli_plot):
    # Rows of both victims, and only over-provisioning and workload on the axes: averaging them
    # would draw values no configuration produced.
    with pytest.raises(ValueError, match=r"vary in gc\.victim: greedy, fifo"):
        plots.heatmap(df, "capacity.overprovisioning", "workload", "write_amplification")
    greedy = {"gc.victim": "greedy"}
    fig = plots.heatmap(df, "capacity.overprovisioning", "workload", "write_amplification", where=greedy)
    assert fig.axes[0].get_title() == "write_amplification\n(gc.victim=greedy)"
    cells = fig.axes[0].images[0].get_array()
    g = df[
        (df["gc.victim"] == "greedy") & (df["workload"] == "mix") & (df["capacity.overprovisioning"] == 0.07)
    ]
    assert cells[0, 0] == pytest.approx(g["write_amplification"].mean())
    with pytest.raises(ValueError, match="no rows match"):
        plots.heatmap(
            df, "capacity.overprovisioning", "workload", "write_amplification", where={"gc.victim": "x"}
        )
    with pytest.raises(ValueError, match=r"vary in capacity\.overprovisioning: 0\.07, 0\.28"):
        plots.bars_relative(df, "workload", "flash.block_erases", "fifo")
    out = str(tmp_path / "h.png")
    args = [str(sweep_dir), "--kind", "heatmap", "--x", "capacity.overprovisioning", "--y", "workload"]
    p = cli_plot(*args, "--metric", "write_amplification", "--out", out)
    assert p.returncode == 2 and "gc.victim" in p.stderr and "--where" in p.stderr, p.stderr
    p = cli_plot(*args, "--metric", "write_amplification", "--where", "gc.victim=greedy", "--out", out)
    assert p.returncode == 0, p.stderr
    _saved(Path(out))
    p = cli_plot(*args, "--metric", "write_amplification", "--where", "gc.victim=nope", "--out", out)
    assert p.returncode == 2 and "no rows match" in p.stderr, p.stderr
