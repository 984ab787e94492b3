"""The `flashlife` command: runs, outputs, and clear one-line errors on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import flashlife as flashlife_package

QUICK = ["--preset", "tiny", "--set", 'run.until="writes:0.3dw"']


def flashlife(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flashlife.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_presets_lists_names_and_descriptions() -> None:
    r = flashlife("presets")
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert "default" in names and "tiny" in names
    assert all(len(line.split(None, 1)) == 2 for line in r.stdout.splitlines())


def test_run_writes_the_contracted_files(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = flashlife("run", *QUICK, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "WA" in r.stdout
    for name in ["summary.json", "timeseries.csv", "config.toml", "erase_histogram.csv"]:
        assert (out / name).stat().st_size > 0, name
    s = json.loads((out / "summary.json").read_text())
    assert s["write_amplification"] >= 1.0
    for section, keys in {
        "host": ["read_requests", "write_requests", "read_bytes", "write_bytes"],
        "flash": ["page_reads", "page_programs", "block_erases", "page_programs_by_cause"],
        "throughput": ["iops", "mb_per_s"],
        "lifetime": ["dead", "host_bytes_written", "drive_writes", "dead_blocks", "blocks_by_mode"],
        "failures": ["program", "erase", "uncorrectable_reads", "bad_pages"],
        "run": ["seed", "simulated_ns", "wall_seconds", "page_ops", "page_ops_per_second", "peak_rss_bytes"],
    }.items():
        for k in keys:
            assert k in s[section], f"{section}.{k}"
    for kind in ["read", "write", "all"]:
        for k in ["mean", "p50", "p99", "p999", "max"]:
            assert k in s["latency_us"][kind]
    for cause in ["host", "gc", "reclaim", "migration", "second_write"]:
        assert cause in s["flash"]["page_programs_by_cause"]
    # The resolved configuration reproduces the run.
    again = tmp_path / "again"
    r2 = flashlife("run", str(out / "config.toml"), "--out", str(again))
    assert r2.returncode == 0, r2.stderr
    s2 = json.loads((again / "summary.json").read_text())
    assert s2["flash"] == s["flash"]


def test_json_flag_prints_the_summary(tmp_path: Path) -> None:
    r = flashlife("run", *QUICK, "--out", str(tmp_path), "--json", "--seed", "7")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["run"]["seed"] == 7


@pytest.mark.parametrize(
    ("setting", "key"),
    [
        ("geometry.channels=0", "geometry.channels"),
        ("ftl.mapping_unit=8192", "ftl.mapping_unit"),
        ("capacity.overprovisioning=-0.1", "capacity.overprovisioning"),
        ("geometry.chanels=4", "geometry.chanels"),
        ('gc.victim="greddy"', "gc.victim"),
        ("flash.page_size=1000", "flash.page_size"),
    ],
)
def test_bad_configs_fail_with_one_line_naming_the_key(tmp_path: Path, setting: str, key: str) -> None:
    r = flashlife("run", "--preset", "tiny", "--set", setting, "--out", str(tmp_path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert key in lines[0]
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr


def test_misspelt_key_gets_a_suggestion(tmp_path: Path) -> None:
    r = flashlife("run", "--preset", "tiny", "--set", "geometry.chanels=4", "--out", str(tmp_path))
    assert "did you mean `geometry.channels`" in r.stderr


def test_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    r = flashlife("run", str(tmp_path / "nope.toml"), "--out", str(tmp_path))
    assert r.returncode == 2
    assert "nope.toml" in r.stderr and "Traceback" not in r.stderr


def test_a_closed_pipe_ends_quietly():
    # `flashlife config --preset default | head -1`: the reader is gone before the output.
    proc = subprocess.Popen(
        [sys.executable, "-m", "flashlife.cli", "config", "--preset", "default"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141, err
    assert err == "", err


def test_version_is_the_packages() -> None:
    import tomllib
    from importlib.metadata import version

    r = flashlife("--version")
    assert r.returncode == 0, r.stderr
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    assert version("flashlife") == project["version"]
    commit = flashlife_package.__build_commit__
    assert r.stdout == f"flashlife {project['version']}" + (f", commit {commit}" if commit else "") + "\n"


def test_version_names_the_core_when_it_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    import flashlife as package
    from flashlife import __version__ as core
    from flashlife.cli import version_text

    monkeypatch.setattr(package, "__build_commit__", None)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "9.9.9")
    assert version_text() == f"flashlife 9.9.9 (core {core})"
    monkeypatch.setattr(package, "__build_commit__", "abc123")
    assert version_text() == f"flashlife 9.9.9 (core {core}, commit abc123)"
    monkeypatch.setattr(package, "__build_commit__", None)

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert version_text() == f"flashlife {core}"
