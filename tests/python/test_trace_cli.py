"""`flashlife trace stats` and replaying real traces from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces"


def flashlife(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flashlife.cli", *args], capture_output=True, text=True, timeout=300
    )


def need(rel: str) -> Path:
    p = TRACES / rel
    if not p.exists():
        pytest.skip(f"{p} is absent: the shared traces folder is not beside this checkout")
    return p


def test_trace_stats_of_rsrch_1(tmp_path: Path) -> None:
    trace = need("msr/rsrch_1.csv")
    r = flashlife("trace", "stats", str(trace), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["requests"] == 13780
    # An independent count of the file's read share.
    lines = trace.read_text().splitlines()
    reads = sum(1 for line in lines if line.split(",")[3] == "Read")
    assert s["read_share"] == pytest.approx(reads / len(lines), abs=1e-9)
    text = flashlife("trace", "stats", str(trace))
    assert "13780" in text.stdout.replace(",", "")
    plot = tmp_path / "reuse.png"
    r = flashlife("trace", "stats", str(trace), "--plot", str(plot))
    assert r.returncode == 0, r.stderr
    assert plot.stat().st_size > 0


def test_bad_trace_line_names_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "128166372003061629,rsrch,1,Write,3221225472,4096,10\n128166372003061630,rsrch,1,Write,abc,4096,10\n"
    )
    r = flashlife("trace", "stats", str(bad), "--format", "msr")
    assert r.returncode == 2
    line = r.stderr.strip()
    assert f"{bad}:2:" in line and "offset" in line, line
    assert "Traceback" not in r.stderr


def test_run_replays_a_real_trace(tmp_path: Path) -> None:
    trace = need("msr/hm_0-window.csv")
    r = flashlife(
        "run", "--preset", "tiny", "--trace", str(trace), "--until", "end", "--out", str(tmp_path), "--json"
    )
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["host"]["read_requests"] + s["host"]["write_requests"] == 7016
