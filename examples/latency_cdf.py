"""Latency tail: read latency distribution (1 - CDF) of greedy beside FIFO GC on a read/write mix.

Two short runs of `tiny`; the curves go through the summary's p50, p99, p99.9 and max.

    python examples/latency_cdf.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import flashlife
from flashlife import plots


def main(out_dir: str | Path = "out/examples") -> Path:
    out = Path(out_dir)
    workload = {"kind": "uniform", "read_ratio": 0.5}
    runs = {
        victim: flashlife.run("tiny", workload, until="requests:20000", overrides={"gc.victim": victim})
        for victim in ("greedy", "fifo")
    }
    path = out / "latency_cdf.png"
    plots.latency_cdf(runs, op="read", path=path)
    return path


if __name__ == "__main__":
    print(main(*sys.argv[1:2]))
