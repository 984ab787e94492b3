"""Wall time of one sweep on the thread and the process backend (docs/performance.md).

    python scripts/bench_sweep.py [--reps 5] [--preset tiny] [--until writes:1dw] [--max-workers N]

Runs the same 8-point sweep (gc.victim x 4 overprovisioning levels) on each backend in turn,
`--reps` times, and prints each backend's median wall time and every repetition's. Checks on
the way that both backends give the same rows, apart from the wall-clock fields.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import flashlife
from flashlife.sweep import WALL_FIELDS

GRID = {"gc.victim": ["greedy", "fifo"], "capacity.overprovisioning": [0.07, 0.14, 0.21, 0.28]}


def one(backend: str, args: argparse.Namespace):
    t0 = time.perf_counter()
    df = flashlife.sweep(
        args.preset, GRID, until=args.until, backend=backend, max_workers=args.max_workers, progress=False
    )
    return time.perf_counter() - t0, df.drop(columns=[c for c in WALL_FIELDS if c in df.columns])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--until", default="writes:1dw")
    ap.add_argument("--max-workers", type=int, default=None, help="default: one per core")
    args = ap.parse_args()
    backends = ("thread", "process")
    times: dict[str, list[float]] = {b: [] for b in backends}
    rows = {}
    one("thread", args)  # warm up: the page cache, the first import of everything
    for _ in range(args.reps):
        for b in backends:
            seconds, df = one(b, args)
            times[b].append(seconds)
            rows[b] = df
    if not rows["thread"].equals(rows["process"]):
        raise SystemExit("the backends gave different results")
    points = math.prod(map(len, GRID.values()))
    print(f"sweep of {points} points ({args.preset}, {args.until}), {args.reps} reps:")
    for b in backends:
        reps = " ".join(f"{t:.2f}" for t in times[b])
        print(f"  {b:<8} median {statistics.median(times[b]):6.2f} s   ({reps})")


if __name__ == "__main__":
    main()
