"""The `flashlife` command is built on the public Python API, and prints exactly what the core
produced: the summary JSON, the resolved TOML, the preset list and the trace statistics."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import flashlife
import flashlife.cli
from flashlife import _core


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flashlife.cli", *args], capture_output=True, text=True, timeout=300
    )


def write_msr_trace(path: Path, requests: int = 50) -> None:
    # MSR Cambridge: Timestamp (100 ns ticks), Hostname, DiskNumber, Type, Offset, Size, ResponseTime
    lines = (f"{128166372000000000 + i * 10000},h,0,Write,{i * 4096},4096,0\n" for i in range(requests))
    path.write_text("".join(lines))


def test_cli_calls_no_core_function() -> None:
    tree = ast.parse(Path(flashlife.cli.__file__).read_text())
    core_uses = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "_core"]
    imports = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not core_uses and "_core" not in imports, core_uses


def test_run_json_prints_the_cores_summary_json(tmp_path: Path) -> None:
    r = cli("run", "--preset", "tiny", "--until", "requests:500", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    # The core's pretty-printed text (the file's), not a re-encoding of the parsed dict.
    assert r.stdout == (tmp_path / "summary.json").read_text().rstrip("\n") + "\n"


def test_resume_of_a_finished_folder_fails_as_before(tmp_path: Path) -> None:
    r = cli("run", "--resume", str(tmp_path))
    assert r.returncode == 2 and r.stderr.startswith("flashlife: error: "), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_config_prints_the_cores_toml() -> None:
    r = cli("config", "--preset", "tiny", "--set", "gc.victim=fifo", "--seed", "4")
    assert r.returncode == 0, r.stderr
    assert r.stdout == _core.resolve_config(preset="tiny", overrides=["seed=4", "gc.victim=fifo"])


def test_config_layers_a_file_on_a_preset(tmp_path: Path) -> None:
    # The layering `run`'s single config argument cannot express: a preset, then a file.
    f = tmp_path / "mine.toml"
    f.write_text('[gc]\nvictim = "fifo"\n')
    r = cli("config", str(f), "--preset", "tiny")
    assert r.returncode == 0, r.stderr
    assert r.stdout == _core.resolve_config(preset="tiny", files=[str(f)])
    assert r.stdout != _core.resolve_config(files=[str(f)])


def test_presets_lists_every_preset_in_order() -> None:
    r = cli("presets")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "".join(f"{n:<24} {d}\n" for n, d in _core.list_presets())
    assert flashlife.presets() == dict(_core.list_presets())


def test_trace_stats_prints_the_cores_statistics(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    write_msr_trace(trace)
    as_json, text = _core.trace_stats(str(trace))
    r = cli("trace", "stats", str(trace), "--json")
    assert r.returncode == 0, r.stderr
    assert r.stdout == as_json + ("" if text.endswith("\n") else "\n")
    r = cli("trace", "stats", str(trace))
    assert r.stdout == text + ("" if text.endswith("\n") else "\n")


def test_public_trace_stats(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    write_msr_trace(trace, requests=40)
    ts = flashlife.trace_stats(trace, format="msr")
    assert ts.stats["requests"] == 40 and ts.stats == json.loads(ts.stats_json)
    assert str(ts) == ts.text and "text" not in repr(ts)
    # A mapping of options is flattened as run's overrides are.
    nested = flashlife.trace_stats(trace, overrides={"workload": {"trace": {"format": "msr"}}})
    assert nested.stats == ts.stats
    with pytest.raises(TypeError, match="overrides"):
        flashlife.trace_stats(trace, overrides="workload.trace.format=msr")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="key=value"):
        flashlife.trace_stats(trace, overrides=[3])  # type: ignore[list-item]
    with pytest.raises(flashlife.FlashlifeError, match="nope"):
        flashlife.trace_stats(tmp_path / "nope.csv")
