"""Progress is reported by the core through a callback and drawn on the Python side."""

from __future__ import annotations

import io

import pytest

import flashlife
from flashlife.progress import ProgressReport


def test_the_core_reports_progress_to_a_callable() -> None:
    seen: list[tuple[float, int, str]] = []
    r = flashlife.run("default", until="writes:6dw", progress=lambda f, n, label: seen.append((f, n, label)))
    assert seen, "a run of a few seconds was never reported"
    fractions = [f for f, _, _ in seen]
    requests = [n for _, n, _ in seen]
    assert fractions == sorted(fractions) and all(0.0 <= f <= 1.0 for f in fractions)
    assert requests == sorted(requests) and requests[-1] <= r.summary["run"]["requests"]
    assert {label for _, _, label in seen} == {"done"}


def test_an_exception_in_the_callable_stops_the_run() -> None:
    def stop(fraction: float, requests: int, label: str) -> None:
        raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        flashlife.run("default", until="writes:30dw", progress=stop)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_report_draws_a_bar_on_a_terminal_and_lines_elsewhere() -> None:
    tty = _Tty()
    bar = ProgressReport("auto", stream=tty)
    bar.started -= 2  # a run over a second
    bar(0.5, 1000, "done")
    assert "[###############               ]  50.0% done" in tty.getvalue()
    bar.close()
    assert tty.getvalue().endswith("\r\x1b[K")

    log = io.StringIO()
    ProgressReport("auto", stream=log)(0.5, 1000, "done")
    quiet = ProgressReport("auto", stream=log)
    quiet.started -= 2
    quiet(0.5, 1000, "done")
    assert log.getvalue() == "", "off a terminal, the first line comes after log_every (60 s)"
    assert ProgressReport("auto").log_every == 60.0 and ProgressReport("on").log_every == 10.0
    lines = ProgressReport("auto", stream=log, log_every=0)
    lines.started -= 2
    lines(0.25, 500, "life used")
    assert log.getvalue().startswith("flashlife:  25.0% life used | 500 requests")
    off = io.StringIO()
    silent = ProgressReport("off", stream=off, log_every=0)
    silent.started -= 2
    silent(0.5, 1, "done")
    assert off.getvalue() == ""
    with pytest.raises(ValueError, match="auto, on or off"):
        ProgressReport("sometimes")


def test_rate_and_eta_count_this_process_only_after_a_resume() -> None:
    # A run resumed at 60% (30,000 requests in): 10 s later it is at 70%, 35,000 requests.
    log = io.StringIO()
    report = ProgressReport("on", stream=log, log_every=0)
    report.started -= 20
    report(0.6, 30_000, "done")
    report.first = (report.first[0] - 10, 0.6, 30_000)  # the first report, 10 s ago
    report(0.7, 35_000, "done")
    line = log.getvalue().splitlines()[-1]
    # 5,000 requests in 10 s; 10% took 10 s, 30% to go: 30 s.
    assert "35000 requests, 500/s | ETA 30s" in line, line
