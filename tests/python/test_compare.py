"""flashlife.compare: a technique beside its baseline, and `flashlife compare`."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

import flashlife
from flashlife.compare import DEFAULT_METRICS, compare_results

QUICK = "writes:1dw"


@pytest.fixture(scope="module")
def greedy_vs_fifo():
    return flashlife.compare({"gc.victim": "greedy"}, {"gc.victim": "fifo"}, until=QUICK, base="tiny")


def test_greedy_writes_less_than_fifo(greedy_vs_fifo):
    df = greedy_vs_fifo
    assert list(df.columns) == ["baseline", "technique", "ratio"]
    assert df.index.name == "metric"
    wa = df.loc["write_amplification"]
    assert wa["ratio"] < 1.0
    assert wa["ratio"] == pytest.approx(wa["technique"] / wa["baseline"])
    assert df.loc["flash.block_erases", "ratio"] < 1.0
    # Same workload and amount written by both.
    assert df.loc["lifetime.host_bytes_written", "ratio"] == 1.0
    assert df.loc["lifetime.drive_writes", "baseline"] == pytest.approx(1.0)
    for m in ("latency_us.write.mean", "latency_us.write.p99", "throughput.iops"):
        assert m in df.index and math.isfinite(df.loc[m, "ratio"])
    # No reads: the ratio of two zeros is not a number, not 1 or a division error.
    assert math.isnan(df.loc["latency_us.read.mean", "ratio"])
    assert df.attrs["technique"]["run"]["seed"] == df.attrs["baseline"]["run"]["seed"] == 1


def test_same_config_ratios_are_one():
    df = flashlife.compare("tiny", "tiny", until="writes:0.25dw", seed=4, metrics=["write_amplification"])
    assert list(df.index) == ["write_amplification"]
    assert df.loc["write_amplification", "ratio"] == 1.0


def test_matches_two_separate_runs():
    kw = {"until": "writes:0.25dw", "seed": 2}
    df = flashlife.compare(
        "tiny", "tiny", workload={"read_ratio": 0.4}, overrides={"gc.victim": "fifo"}, **kw
    )
    r = flashlife.run("tiny", {"read_ratio": 0.4}, overrides={"gc.victim": "fifo"}, **kw)
    assert df.loc["write_amplification", "technique"] == r.summary["write_amplification"]
    assert df.loc["latency_us.read.p99", "baseline"] == r.summary["latency_us"]["read"]["p99"]


def test_out_dir_and_toml_sides(tmp_path):
    side = tmp_path / "fifo.toml"
    side.write_text('[gc]\nvictim = "fifo"\n')
    df = flashlife.compare(None, side, base="tiny", until="writes:0.25dw", out_dir=tmp_path / "cmp")
    assert df.loc["write_amplification", "ratio"] < 1.0
    for name in ("technique", "baseline"):
        assert (tmp_path / "cmp" / name / "summary.json").exists()
    assert (tmp_path / "cmp" / "comparison.csv").stat().st_size > 0
    # A second comparison into the same folder would replace the first: refused unless asked.
    with pytest.raises(flashlife.FlashlifeError, match="--overwrite"):
        flashlife.compare(None, side, base="tiny", until="writes:0.25dw", out_dir=tmp_path / "cmp")
    again = flashlife.compare(
        None, side, base="tiny", until="writes:0.25dw", out_dir=tmp_path / "cmp", overwrite=True
    )
    assert again.loc["write_amplification", "ratio"] == df.loc["write_amplification", "ratio"]


def test_errors():
    with pytest.raises(KeyError, match="no_such_metric"):
        flashlife.compare("tiny", "tiny", until="requests:10", metrics=["no_such_metric"])
    with pytest.raises(flashlife.FlashlifeError, match="gc.victim"):
        flashlife.compare({"gc.victim": "nope"}, None, base="tiny", until="requests:10")
    with pytest.raises(ValueError, match="TOML file"):
        flashlife.compare("fifo-preset", None, base="tiny", until="requests:10")


def test_compare_results_of_summaries():
    a = {"write_amplification": 2.0, "flash": {"block_erases": 10}}
    b = {"write_amplification": 4.0, "flash": {"block_erases": 0}}
    df = compare_results(a, b)
    assert df.loc["write_amplification", "ratio"] == 0.5
    assert math.isnan(df.loc["flash.block_erases", "ratio"])
    assert set(df.index) <= set(DEFAULT_METRICS)


def _cli(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "flashlife.cli", "compare", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_cli_compare_prints_a_table(tmp_path):
    p = _cli(
        "--base", "tiny", "--technique-set", "gc.victim=greedy", "--baseline-set", "gc.victim=fifo",
        "--until", "writes:0.5dw", "--out", str(tmp_path / "c"),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "ratio" in lines[1] and "baseline" in lines[1] and "technique" in lines[1]
    wa = next(line for line in lines if line.startswith("write_amplification"))
    baseline, technique, ratio = map(float, wa.split()[1:])
    assert ratio < 1.0 and ratio == pytest.approx(technique / baseline, rel=1e-4)
    assert (tmp_path / "c" / "comparison.csv").exists()


def test_cli_compare_presets_with_set_for_both_and_csv():
    both = ["--technique", "tiny", "--baseline", "tiny"]
    p = _cli(*both, "--set", "gc.victim=fifo", "--until", "requests:9", "--csv")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("metric,baseline,technique,ratio")


def test_cli_compare_errors():
    p = _cli("--technique", "missing.toml", "--baseline", "tiny")
    assert p.returncode == 2 and "missing.toml" in p.stderr
    p = _cli("--baseline", "tiny")
    assert p.returncode == 2 and "--technique" in p.stderr


def test_example_script(tmp_path):
    import runpy

    mod = runpy.run_path(str(_examples() / "compare_greedy_fifo.py"))
    path = mod["main"](tmp_path)
    assert path.exists() and "write_amplification" in path.read_text()


def _examples():
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "examples"
