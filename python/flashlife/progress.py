"""Progress of long runs, drawn on the Python side: the core only reports how far it is.

`run.progress` decides: `auto` draws a bar on a terminal and, elsewhere (a batch job's log,
Jupyter, a pipe), writes a line every 60 s; `on` does the same with a line every 10 s; `off`
says nothing. Nothing is drawn for runs shorter than a second. Rates and the ETA count only
this process's part of a run, so they are right after a resume too.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

#: Seconds between log lines off a terminal, by mode.
LOG_EVERY = {"auto": 60.0, "on": 10.0}


class ProgressReport:
    """A callable for `flashlife.run(progress=...)` that draws the run's progress on `stream`."""

    def __init__(self, mode: str = "auto", stream: TextIO | None = None, log_every: float | None = None):
        if mode not in ("auto", "on", "off"):
            raise ValueError(f"progress mode must be auto, on or off, not {mode!r}")
        self.stream = stream if stream is not None else sys.stderr
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.bar = mode != "off" and tty
        self.lines = mode != "off" and not tty
        self.log_every = log_every if log_every is not None else LOG_EVERY.get(mode, 60.0)
        self.started = time.monotonic()
        self.last_line = self.started
        self.drawn = False
        #: (time, fraction, requests) of the first report: a resumed run starts part-way.
        self.first: tuple[float, float, int] | None = None

    def __call__(self, fraction: float, requests: int, label: str) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = (now, fraction, requests)
        if now - self.started < 1.0 or not (self.bar or self.lines):
            return
        t0, f0, r0 = self.first
        span = max(now - t0, 1e-9)
        rate = (requests - r0) / span
        # The run's own estimate: the time this process took for its share, scaled to what is left.
        eta = f"{span * (1 - fraction) / (fraction - f0):.0f}s" if fraction > f0 else "?"
        text = f"{fraction * 100:5.1f}% {label} | {requests} requests, {rate:.0f}/s | ETA {eta}"
        if self.bar:
            filled = int(fraction * 30)
            self.stream.write(f"\r[{'#' * filled}{' ' * (30 - filled)}] {text}\x1b[K")
            self.drawn = True
        elif now - self.last_line >= self.log_every:
            self.stream.write(f"flashlife: {text}\n")
            self.last_line = now
        self.stream.flush()

    def close(self) -> None:
        """Clear the bar (a finished run prints its summary in its place)."""
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False
