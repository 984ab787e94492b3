"""Early-switch pool ablation at CI scale: zombie / baseline lifetime (host bytes written until
death) at 3 reserves x 2 working sets x TLC/MLC, three seeds each, two processes.

    python3 experiments/zombie/pool_ablation.py                                  # presets: no pool
    python3 experiments/zombie/pool_ablation.py '{"zombie.early_switch": True}'  # the paper's pool

The optional argument is a Python dict literal of keys set on the zombie runs only.
"""

from __future__ import annotations

import ast
import sys
from concurrent.futures import ProcessPoolExecutor

import flashlife

# The CI scale of crates/flashlife/tests/zombie.rs: 32-page blocks, every endurance / 10.
SMALL = {
    "geometry.pages_per_block": 32,
    "flash.wear.endurance.slc": 7500,
    "flash.wear.endurance.mlc": 600,
    "flash.wear.endurance.tlc": 100,
    "flash.wear.endurance.qlc": 30,
    "ftl.timing": False,
    "run.progress": "off",
    "workload.read_ratio": 0.5,
    "run.until": "death",
}
SEEDS = [1, 2, 3]
POINTS = [(m, r, w) for m in ["tlc", "mlc"] for r in [0.07, 0.15, 0.3] for w in [0.1, 1.0]]


def lifetime(job: tuple) -> tuple[int, int, float]:
    variant, mode, reserve, ws, extra, seed = job
    keys = {**SMALL, "capacity.reserve": reserve, "workload.working_set": ws, "seed": seed, **extra}
    s = flashlife.run(f"{variant}-synthetic-{mode}", overrides=keys).summary
    return s["lifetime"]["host_bytes_written"], s["lifetime"]["mode_switches"], s["write_amplification"]


def main() -> None:
    extra = ast.literal_eval(sys.argv[1]) if len(sys.argv) > 1 else {}
    variants = [("baseline", {}), ("zombie", extra)]
    jobs = [(v, *p, keys, s) for p in POINTS for s in SEEDS for v, keys in variants]
    with ProcessPoolExecutor(2) as pool:
        results = list(pool.map(lifetime, jobs))
    per_point = 2 * len(SEEDS)
    for i, p in enumerate(POINTS):
        chunk = results[i * per_point : (i + 1) * per_point]
        pairs = list(zip(chunk[0::2], chunk[1::2], strict=True))
        ratios = " ".join(f"{z[0] / b[0]:.3f}" for b, z in pairs)
        b, z = pairs[0]
        print(f"{p}: zombie/baseline {ratios}  switches={z[1]} WA baseline {b[2]:.2f} zombie {z[2]:.2f}")


if __name__ == "__main__":
    main()
