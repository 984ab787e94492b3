"""Checkpoints from the shell and from Python: a run stopped by SIGTERM (or killed outright
after a periodic checkpoint) and resumed ends exactly as the uninterrupted run; bad checkpoint
files are refused with a clear message and the run folder is left as it was."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import flashlife

# Long enough (tens of millions of page operations) that the signal lands mid-run on any
# machine: the test signals as soon as the first periodic checkpoint (1 drive write in) exists.
LONG = ["--preset", "default", "--set", 'run.until="writes:25dw"', "--set", 'run.checkpoint_every="1dw"']
LONG_CONFIG = "default"
LONG_OVERRIDES = {"run.until": "writes:25dw", "run.checkpoint_every": "1dw"}
PROCESS_FIELDS = ("wall_seconds", "page_ops_per_second", "peak_rss_bytes")


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "flashlife.cli", *args]


def flashlife_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli(*args), capture_output=True, text=True, timeout=600)


def comparable(summary: dict) -> dict:
    """The summary without the fields that describe the process, not the simulation."""
    s = json.loads(json.dumps(summary))
    for k in PROCESS_FIELDS:
        del s["run"][k]
    return s


def start_and_stop_after_first_checkpoint(out: Path, sig: int) -> subprocess.CompletedProcess[str]:
    args = cli("run", *LONG, "--out", str(out), "--quiet")
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not (out / "checkpoint.bin").exists():
        assert proc.poll() is None, f"the run ended before its first checkpoint: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "no checkpoint after 300 s"
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> flashlife.Result:
    return flashlife.run(LONG_CONFIG, overrides=LONG_OVERRIDES)


def folder_digest(folder: Path) -> dict[str, str]:
    """Every file's hash, but the lock file's (it holds the id of the last process to lock)."""
    files = (p for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".flashlife.lock")
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def test_sigterm_then_resume_matches_the_uninterrupted_run(tmp_path: Path, uninterrupted) -> None:
    out = tmp_path / "run"
    r = start_and_stop_after_first_checkpoint(out, signal.SIGTERM)
    assert r.returncode == 143, r.stderr
    assert "flashlife run --resume" in r.stderr and "checkpoint written" in r.stderr
    assert not (out / "summary.json").exists(), "interrupted results must not look final"
    partial = json.loads((out / "partial" / "summary.json").read_text())
    assert partial["run"]["stop"] == "interrupted"
    assert 0 < partial["host"]["write_bytes"] < uninterrupted.summary["host"]["write_bytes"]

    r = flashlife_cli("run", "--resume", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert not (out / "checkpoint.bin").exists(), "a finished run keeps its checkpoint"
    assert not (out / "partial").exists(), "a finished run keeps its partial results"
    resumed = json.loads((out / "summary.json").read_text())
    assert comparable(resumed) == comparable(uninterrupted.summary)
    ts = pd.read_csv(out / "timeseries.csv")
    pd.testing.assert_frame_equal(ts, uninterrupted.timeseries)
    cdf = pd.read_csv(out / "latency_cdf.csv")
    pd.testing.assert_frame_equal(cdf, uninterrupted.latency_cdf)


def test_a_killed_run_goes_on_from_its_last_periodic_checkpoint(tmp_path: Path, uninterrupted) -> None:
    out = tmp_path / "run"
    r = start_and_stop_after_first_checkpoint(out, signal.SIGKILL)
    assert r.returncode == -signal.SIGKILL
    assert not (out / "summary.json").exists()
    resumed = flashlife.resume(out)
    assert comparable(resumed.summary) == comparable(uninterrupted.summary)
    pd.testing.assert_frame_equal(resumed.timeseries, uninterrupted.timeseries)


def test_bad_checkpoints_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = start_and_stop_after_first_checkpoint(out, signal.SIGTERM)
    assert r.returncode == 143, r.stderr
    ckpt = out / "checkpoint.bin"
    good = ckpt.read_bytes()

    def refused(data: bytes, needle: str) -> None:
        ckpt.write_bytes(data)
        before = folder_digest(out)
        r = flashlife_cli("run", "--resume", str(out))
        assert r.returncode == 2
        assert needle in r.stderr and "checkpoint.bin" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert folder_digest(out) == before, "a refused resume changed the run folder"
        with pytest.raises(flashlife.FlashlifeError, match=needle):
            flashlife.resume(out)
        assert folder_digest(out) == before

    refused(good[: len(good) // 3], "truncated")
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x10
    refused(bytes(flipped), "checksum")
    refused((out / "partial" / "config.toml").read_bytes(), "not a flashlife checkpoint")
    ckpt.unlink()
    r = flashlife_cli("run", "--resume", str(out))
    assert r.returncode == 2 and "no checkpoint here" in r.stderr, r.stderr


def test_resume_refuses_a_second_configuration(tmp_path: Path) -> None:
    r = flashlife_cli("run", "--resume", str(tmp_path), "--preset", "tiny")
    assert r.returncode == 2 and "--resume takes the run's configuration" in r.stderr, r.stderr
    r = flashlife_cli("run", "--resume", str(tmp_path), "--out", str(tmp_path / "elsewhere"))
    assert r.returncode == 2 and "same folder" in r.stderr, r.stderr
    r = flashlife_cli("run", "--preset", "tiny")
    assert r.returncode == 2 and "--out" in r.stderr, r.stderr


def test_bad_checkpoint_interval_is_a_config_error() -> None:
    with pytest.raises(flashlife.FlashlifeError, match="run.checkpoint_every"):
        flashlife.run("tiny", overrides={"run.checkpoint_every": "often"})
