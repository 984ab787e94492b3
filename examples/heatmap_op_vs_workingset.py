"""Heat map: write amplification of greedy GC relative to FIFO, over overprovisioning x working set.

The form of ZombieNAND's Figure 3 (a technique's gain over its baseline across two parameters).
Runs 18 short simulations of the `tiny` drive; takes a few seconds.

    python examples/heatmap_op_vs_workingset.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import flashlife
from flashlife import plots


def main(out_dir: str | Path = "out/examples") -> Path:
    out = Path(out_dir)
    df = flashlife.sweep(
        "tiny",
        {
            "capacity.overprovisioning": [0.07, 0.14, 0.28],
            "workload.working_set": [0.25, 0.5, 1.0],
            "gc.victim": ["greedy", "fifo"],
        },
        until="writes:0.5dw",
        results_dir=out / "heatmap_sweep",
    )
    path = out / "heatmap_op_vs_workingset.png"
    plots.heatmap(
        df,
        x="capacity.overprovisioning",
        y="workload.working_set",
        metric="write_amplification",
        baseline={"gc.victim": "fifo"},
        title="write amplification, greedy / FIFO",
        path=path,
    )
    return path


if __name__ == "__main__":
    print(main(*sys.argv[1:2]))
