"""Histogram: blocks per erase count with and without wear leveling.

Two short runs of `tiny` under a skewed workload (a quarter of the drive written).

    python examples/erase_histogram.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import flashlife
from flashlife import plots


def main(out_dir: str | Path = "out/examples") -> Path:
    out = Path(out_dir)
    workload = {"kind": "uniform", "working_set": 0.25}
    runs = {
        f"wear leveling {'on' if on else 'off'}": flashlife.run(
            "tiny", workload, until="writes:2dw", overrides={"wear_leveling.enabled": on}
        )
        for on in (True, False)
    }
    path = out / "erase_histogram.png"
    plots.erase_histogram(runs, path=path)
    return path


if __name__ == "__main__":
    print(main(*sys.argv[1:2]))
