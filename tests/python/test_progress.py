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
    assert log.getvalue() == "", "auto stays quiet off a terminal"
    lines = ProgressReport("on", stream=log, log_every=0)
    lines.started -= 2
    lines(0.25, 500, "life used")
    assert log.getvalue().startswith("flashlife:  25.0% life used | 500 requests")
    with pytest.raises(ValueError, match="auto, on or off"):
        ProgressReport("sometimes")
