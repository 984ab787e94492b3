"""Progress of long runs, drawn on the Python side: the core only reports how far it is.

`run.progress` decides: `auto` draws a bar on a terminal and stays quiet otherwise, `on`
draws a bar on a terminal and, elsewhere (a batch job's log, a pipe), writes a line every
`log_every` seconds, `off` says nothing. Nothing is drawn for runs shorter than a second.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressReport:
    """A callable for `flashlife.run(progress=...)` that draws the run's progress on `stream`."""

    def __init__(self, mode: str = "auto", stream: TextIO | None = None, log_every: float = 30.0):
        if mode not in ("auto", "on", "off"):
            raise ValueError(f"progress mode must be auto, on or off, not {mode!r}")
        self.stream = stream if stream is not None else sys.stderr
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.bar = mode != "off" and tty
        self.lines = mode == "on" and not tty
        self.log_every = log_every
        self.started = time.monotonic()
        self.last_line = self.started
        self.drawn = False

    def __call__(self, fraction: float, requests: int, label: str) -> None:
        now = time.monotonic()
        elapsed = now - self.started
        if elapsed < 1.0 or not (self.bar or self.lines):
            return
        rate = requests / elapsed
        # The run's own estimate: this segment's time scaled by the share still to go.
        eta = f"{elapsed * (1 - fraction) / fraction:.0f}s" if fraction > 0 else "?"
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
