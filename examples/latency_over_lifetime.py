"""Line plot: p99 write latency over normalised lifetime, greedy beside FIFO GC.

The form of ZombieNAND's Figure 6 (latency as the drive ages). Two short runs of `tiny`.

    python examples/latency_over_lifetime.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import flashlife
from flashlife import plots


def main(out_dir: str | Path = "out/examples") -> Path:
    out = Path(out_dir)
    runs = {
        victim: flashlife.run("tiny", until="writes:2dw", overrides={"gc.victim": victim})
        for victim in ("greedy", "fifo")
    }
    path = out / "latency_over_lifetime.png"
    plots.over_lifetime(runs, "p99_latency_us", path=path)
    return path


if __name__ == "__main__":
    print(main(*sys.argv[1:2]))
