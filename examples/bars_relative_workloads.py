"""Bars: block erasures of greedy and cost-benefit GC relative to FIFO, per workload.

The form of ZombieNAND's Figure 5 and Reusable SSD's Figures 7-8 (bars relative to a baseline,
one group per workload). Runs 9 short simulations of the `tiny` drive.

    python examples/bars_relative_workloads.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import flashlife
from flashlife import plots

WORKLOADS = {
    "uniform": {"kind": "uniform"},
    "read-mix": {"kind": "uniform", "read_ratio": 0.5},
    "hot-quarter": {"kind": "uniform", "working_set": 0.25},
}


def main(out_dir: str | Path = "out/examples") -> Path:
    out = Path(out_dir)
    df = flashlife.sweep(
        "tiny",
        {"gc.victim": ["fifo", "greedy", "cost_benefit"]},
        workloads=WORKLOADS,
        until="writes:0.5dw",
    )
    path = out / "bars_relative_workloads.png"
    plots.bars_relative(df, group="workload", metric="flash.block_erases", baseline_label="fifo", path=path)
    return path


if __name__ == "__main__":
    print(main(*sys.argv[1:2]))
