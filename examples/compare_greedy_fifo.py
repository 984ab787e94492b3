"""Table: greedy GC (the "technique") beside FIFO (the baseline), same workload and seed.

python examples/compare_greedy_fifo.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import flashlife


def main(out_dir: str | Path = "out/examples") -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df = flashlife.compare(
        {"gc.victim": "greedy"},
        {"gc.victim": "fifo"},
        workload={"kind": "uniform", "read_ratio": 0.3},
        until="writes:1dw",
        base="tiny",
    )
    print(df.to_string(float_format=lambda v: f"{v:.4g}"))
    path = out / "compare_greedy_fifo.csv"
    df.to_csv(path)
    return path


if __name__ == "__main__":
    print(main(*sys.argv[1:2]))
