"""Results are never lost and never lie (issue 21): each case a hostile or careless user
found is reproduced here through the `flashlife` command, as a user meets it.

The disk-full cases use the process's file-size limit (`ulimit -f`, RLIMIT_FSIZE) in the child
instead of a small filesystem: it needs no mount, and Python ignores SIGXFSZ, so the writes
fail with EFBIG as they would with ENOSPC."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from summary_shape import shape_errors

import flashlife
from flashlife import _core

ROOT = Path(__file__).resolve().parents[2]

# Long enough that a signal lands mid-run; the first periodic checkpoint (1 drive write in)
# comes within a second or two.
LONG = ["--preset", "default", "--set", 'run.until="writes:30dw"', "--set", 'run.checkpoint_every="1dw"']
SHORT = ["--preset", "default", "--set", 'run.until="writes:4dw"', "--set", 'run.checkpoint_every="1dw"']
PROCESS_FIELDS = ("wall_seconds", "page_ops_per_second", "peak_rss_bytes")


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "flashlife.cli", *args]


def flashlife_cli(*args: str, limit_bytes: int | None = None, cwd: Path | None = None, timeout: float = 300):
    def limit() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        cli(*args), capture_output=True, text=True, timeout=timeout, preexec_fn=limit, cwd=cwd
    )


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(folder: Path) -> dict[str, str]:
    """Every file's hash, but the lock file's (it holds the id of the last process to lock)."""
    files = (p for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".flashlife.lock")
    return {str(p.relative_to(folder)): sha(p) for p in files}


def comparable(summary: dict) -> dict:
    s = json.loads(json.dumps(summary))
    for k in PROCESS_FIELDS:
        del s["run"][k]
    return s


def interrupted_run(out: Path, args: list[str] = LONG) -> subprocess.CompletedProcess[str]:
    """`flashlife run` stopped by SIGTERM as soon as its first periodic checkpoint exists."""
    proc = subprocess.Popen(
        cli("run", *args, "--out", str(out), "--quiet"), stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not (out / "checkpoint.bin").exists():
        assert proc.poll() is None, f"the run ended before its first checkpoint: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "no checkpoint after 120 s"
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


def tiny_run(out: Path) -> subprocess.CompletedProcess[str]:
    return flashlife_cli("run", "--preset", "tiny", "--until", "requests:1000", "--out", str(out))


def write_msr_trace(path: Path, requests: int = 50) -> None:
    # MSR Cambridge: Timestamp (100 ns ticks), Hostname, DiskNumber, Type, Offset, Size, ResponseTime
    lines = (f"{128166372000000000 + i * 10000},h,0,Write,{i * 4096},4096,0\n" for i in range(requests))
    path.write_text("".join(lines))


def top_level_outputs(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


# 1. A finished or resumed run is never lost at the last step.
def test_a_resume_that_cannot_write_its_results_keeps_its_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "r"
    interrupted_run(out, SHORT)
    before = sha(out / "checkpoint.bin")
    # 64 KiB: too small for the checkpoint (about 4 MiB) and for latency_cdf.csv (~0.5 MiB).
    p = flashlife_cli("run", "--resume", str(out), limit_bytes=64 << 10)
    assert p.returncode == 2, p.stderr
    assert "flashlife: error:" in p.stderr and "Traceback" not in p.stderr
    assert sha(out / "checkpoint.bin") == before, "the checkpoint must survive a failed end"
    assert not (out / "summary.json").exists(), "no final summary without all the files"
    assert not [f for f in os.listdir(out) if f.endswith(".tmp")], "temporary files left behind"
    for f in top_level_outputs(out):  # whatever was renamed into place is whole
        assert f == "checkpoint.bin" or (out / f).read_text().endswith("\n"), f
    # With room, the same resume finishes, and equals the uninterrupted run.
    p = flashlife_cli("run", "--resume", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    assert not (out / "checkpoint.bin").exists() and not (out / "partial").exists()
    whole = flashlife.run("default", until="writes:4dw", overrides={"run.checkpoint_every": "1dw"})
    done = json.loads((out / "summary.json").read_text())
    assert comparable(done) == comparable(whole.summary)


# 2. A new run never silently destroys an interrupted run, nor shares a folder with another.
def test_a_new_run_refuses_a_folder_with_a_checkpoint_unless_told(tmp_path: Path) -> None:
    out = tmp_path / "r"
    interrupted_run(out)
    before = snapshot(out)
    p = flashlife_cli("run", "--preset", "tiny", "--out", str(out))
    assert p.returncode == 2
    assert "--resume" in p.stderr and "--overwrite" in p.stderr, p.stderr
    assert snapshot(out) == before, "a refused run touched the folder"
    p = flashlife_cli("run", "--preset", "tiny", "--until", "requests:2000", "--out", str(out), "--overwrite")
    assert p.returncode == 0, p.stderr
    assert not (out / "checkpoint.bin").exists() and not (out / "partial").exists()
    assert json.loads((out / "summary.json").read_text())["run"]["requests"] == 2000


def test_finished_results_are_not_replaced_without_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert (
        flashlife_cli("run", "--preset", "tiny", "--until", "requests:1000", "--out", str(out)).returncode
        == 0
    )
    before = snapshot(out)
    p = flashlife_cli("run", "--preset", "tiny", "--until", "requests:2000", "--out", str(out))
    assert p.returncode == 2 and "--overwrite" in p.stderr, p.stderr
    assert snapshot(out) == before


def test_two_runs_never_share_a_folder(tmp_path: Path) -> None:
    out = tmp_path / "r"
    out.mkdir()
    with open(out / ".flashlife.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running flashlife holds it
        p = flashlife_cli("run", "--preset", "tiny", "--until", "requests:1000", "--out", str(out))
    assert p.returncode == 2 and "another flashlife run" in p.stderr, p.stderr
    assert not (out / "summary.json").exists()


# 3. An unwritable --out is found before the run, not after it.
def test_an_unwritable_out_is_refused_before_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    t = time.monotonic()
    p = flashlife_cli("run", *LONG, "--out", str(blocker / "sub"))
    assert p.returncode == 2 and "cannot create the output folder" in p.stderr, p.stderr
    # /proc/self exists but takes no new files, even for root (chmod would not stop root).
    p = flashlife_cli("run", *LONG, "--out", "/proc/self")
    assert p.returncode == 2 and "not writable" in p.stderr, p.stderr
    assert time.monotonic() - t < 30, "the folder must be checked before the 30-drive-write run"


# 4. Interrupted results never look complete.
def test_interrupted_results_are_partial(tmp_path: Path) -> None:
    out = tmp_path / "r"
    p = interrupted_run(out)
    assert "partial" in p.stderr and "--resume" in p.stderr, p.stderr
    assert not (out / "summary.json").exists(), "an interrupted run must not leave a final summary"
    partial = json.loads((out / "partial" / "summary.json").read_text())
    assert partial["run"]["stop"] == "interrupted"
    assert {"timeseries.csv", "latency_cdf.csv", "config.toml"} <= set(os.listdir(out / "partial"))


def test_a_killed_overwrite_leaves_no_old_results_behind(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert (
        flashlife_cli("run", "--preset", "tiny", "--until", "requests:1000", "--out", str(out)).returncode
        == 0
    )
    proc = subprocess.Popen(cli("run", *LONG, "--out", str(out), "--overwrite", "--quiet"))
    deadline = time.monotonic() + 120
    while not (out / "checkpoint.bin").exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.kill()
    proc.wait(timeout=60)
    assert not (out / "summary.json").exists(), "the previous run's summary would pass for this one's"
    assert (out / "checkpoint.bin").exists()


# 5. A periodic checkpoint that cannot be written does not kill a run that would finish.
def test_a_failed_periodic_checkpoint_is_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "r"
    # 1 MiB: room for every output (the CDF is ~0.5 MiB), not for the ~4 MiB checkpoint.
    p = flashlife_cli("run", *SHORT, "--out", str(out), "--quiet", limit_bytes=1 << 20)
    assert p.returncode == 0, p.stderr
    assert "warning: periodic checkpoint not written" in p.stderr, p.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["stop"].startswith("writes:")
    assert summary["run"]["warnings"] and "checkpoint" in summary["run"]["warnings"][0]
    assert shape_errors(summary) == [], "run.warnings is the optional field flashlife.summary declares"
    assert not [f for f in os.listdir(out) if f.endswith(".tmp")], "a failed checkpoint left its .tmp"
    assert not (out / "checkpoint.bin").exists()


# 7. Memory: refused with a message, never an abort (rc 134) of the process or interpreter.
def test_oversized_configurations_are_errors_not_aborts(tmp_path: Path) -> None:
    p = flashlife_cli("config", "--set", "host.queue_depth=4294967295")
    assert p.returncode == 2 and "host.queue_depth" in p.stderr, p.stderr
    sets = [f"--set=geometry.{k}=65536" for k in ("channels", "ways", "dies", "planes", "blocks_per_plane")]
    p = flashlife_cli("config", *sets)
    assert p.returncode == 2 and "geometry" in p.stderr and "2^32" in p.stderr, p.stderr
    with pytest.raises(_core.FlashlifeError, match="run.memory_limit"):
        flashlife.run("bench-16g", overrides={"run.memory_limit": "64MiB"}, until="requests:10")


def test_a_sweep_point_that_aborts_is_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text('base = "tiny"\nuntil = "requests:1000"\n[grid]\n"gc.victim" = ["greedy", "fifo"]\n')
    env = {**os.environ, "FLASHLIFE_TEST_ABORT_POINT": '"fifo"'}  # the fifo point calls abort()
    out = tmp_path / "o"
    p = subprocess.run(
        cli("sweep", str(grid), "--out", str(out), "--no-progress", "--backend", "process"),
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert p.returncode == 1, p.stderr
    assert "2 points: 1 ran, 0 already in" in p.stdout and "1 failed" in p.stdout, p.stdout
    assert "SIGABRT" in p.stderr and ".error.json" in p.stderr, p.stderr
    rows = (out / "results.csv").read_text()
    assert "SIGABRT" in rows


# 8. Every run stops on Ctrl-C.
def test_huge_d_choices_is_bounded_by_the_candidates() -> None:
    r = flashlife.run(
        "tiny", until="writes:2dw", overrides={"gc.victim": "random", "gc.d_choices": 4294967295}
    )
    assert r.summary["gc"]["victims"] > 0


def test_ctrl_c_during_preconditioning_stops_at_once(tmp_path: Path) -> None:
    out = tmp_path / "r"
    proc = subprocess.Popen(
        cli("run", "--preset", "salvage-table1", "--out", str(out)), stderr=subprocess.PIPE, text=True
    )
    time.sleep(3.0)  # well inside the preconditioning of 33.6 M pages
    assert proc.poll() is None, proc.stderr.read()
    t = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - t < 2.0, "Ctrl-C took too long during preconditioning"
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert not out.exists(), "nothing to keep: the folder this run created is gone"


# 9. No silent saturation; undefined ratios are null.
def test_time_overflow_is_an_error_naming_the_key(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    # MSR Cambridge: Timestamp (100 ns ticks), Hostname, DiskNumber, Type, Offset, Size, ResponseTime
    trace.write_text(
        "".join(f"{128166372000000000 + i * 10000},h,0,Write,{i * 4096},4096,0\n" for i in range(50))
    )
    p = flashlife_cli(
        "run", "--preset", "tiny", "--trace", str(trace), "--set", "workload.trace.time_scale=1e300",
        "--set", 'host.arrivals="timestamps"', "--until", "end", "--out", str(tmp_path / "a"),
    )  # fmt: skip
    assert p.returncode == 2 and "workload.trace.time_scale" in p.stderr, p.stderr
    with pytest.raises(_core.FlashlifeError, match="rate_iops"):
        flashlife.run(
            "tiny",
            until="requests:100",
            overrides={"workload.arrival.process": "poisson", "workload.arrival.rate_iops": 1e-300},
        )


def test_write_amplification_of_a_read_only_run_is_null() -> None:
    r = flashlife.run("tiny", {"read_ratio": 1.0}, until="requests:2000")
    assert r.summary["write_amplification"] is None
    assert "n/a" in str(r)


# 10. The smaller ones.
def test_a_relative_trace_path_survives_a_move(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    (tmp_path / "elsewhere").mkdir()
    trace = tmp_path / "here" / "t.csv"
    trace.write_text(
        "".join(f"{128166372000000000 + i * 10000},h,0,Write,{i * 4096},4096,0\n" for i in range(50))
    )
    p = flashlife_cli(
        "run", "--preset", "tiny", "--trace", "t.csv", "--until", "end", "--out", "r", cwd=trace.parent
    )
    assert p.returncode == 0, p.stderr
    config = (tmp_path / "here" / "r" / "config.toml").read_text()
    assert str(trace) in config, "config.toml must rerun from anywhere"
    rerun = str(tmp_path / "here" / "r" / "config.toml")
    p = flashlife_cli("run", rerun, "--out", "again", cwd=tmp_path / "elsewhere")
    assert p.returncode == 0, p.stderr


def test_a_type_error_names_the_key() -> None:
    p = flashlife_cli("config", "--set", 'host.queue_depth="four"')
    assert p.returncode == 2 and "host.queue_depth" in p.stderr and "four" in p.stderr, p.stderr


def test_a_set_with_a_newline_is_refused() -> None:
    p = flashlife_cli("config", "--set", "gc.victim=fifo\nseed=3")
    assert p.returncode == 2 and "gc.victim" in p.stderr and "line break" in p.stderr, p.stderr


def test_a_failed_run_leaves_no_empty_folder(tmp_path: Path) -> None:
    out = tmp_path / "r"
    p = flashlife_cli("run", "--preset", "tiny", "--trace", str(tmp_path / "missing.csv"), "--out", str(out))
    assert p.returncode == 2 and "missing.csv" in p.stderr, p.stderr
    assert not out.exists()


# Provenance (issue 20): a result says what produced it.
def test_a_result_names_its_configuration_and_trace(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    write_msr_trace(trace)
    out = tmp_path / "r"
    p = flashlife_cli("run", "--preset", "tiny", "--trace", str(trace), "--until", "end", "--out", str(out))
    assert p.returncode == 0, p.stderr
    prov = json.loads((out / "summary.json").read_text())["provenance"]
    assert prov["flashlife_version"] == _core.__version__ and prov["scheduler"] == "queued"
    assert prov["trace"] == {"path": str(trace), "bytes": trace.stat().st_size, "sha256": sha(trace)}
    text = (out / "config.toml").read_text()
    body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    assert hashlib.sha256(body.encode()).hexdigest() == prov["config_sha256"]
    assert prov["config_sha256"] in text.splitlines()[0], "the header names the hash"
    # The build's commit: one git knows when the core was built from this checkout (an
    # installed package from elsewhere may name another; a source distribution names none).
    commit = prov["build_commit"]
    assert commit == _core.__build_commit__
    if commit is not None:
        assert commit in text.splitlines()[0], "the header names the commit"
        sha_hex = commit.removesuffix("+dirty")
        assert re.fullmatch(r"[0-9a-f]{40}", sha_hex), commit
        if (ROOT / ".git").exists():
            known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", sha_hex + "^{commit}"])
            assert known.returncode == 0, f"{commit} is not a commit of this checkout"
