#!/usr/bin/env python3
"""Why salvage's median is above the baseline's at queue depth 32 while its mean and p99 are
below (`salvage-small`, queued scheduler, the preset's watermarks: section `fig4_qd32` at the
quick scale). Runs the section's exposure pilot, then baseline and salvage for each seed and
RBER with the per-request log (`stats.request_log`), and prints per run: mean / p50 / p99
latency, the share of writes served in under 10 ms (the fast mode: the overall median sits in
the near-empty gap between it and the 50-100 ms mode of writes queued behind cleaning), the
share of time and of write arrivals during a stall (a request older than 250 ms in flight),
the fast share of writes inside and outside stalls, the slots of the closed loop that
requests older than 250 ms hold on average, the longest request, and the blocks lost before or
during the run. About 2-3 s a run.

    python3 experiments/salvage/qd32_median.py [--seeds 1,2,3,4,5] [--rbers 1e-12,3e-11]
"""

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import flashlife

STALL_NS = 250e6
FAST_MS = 10.0
BASE = {
    "ftl.precondition_drive_writes": 0.5,
    "host.queue_depth": 32,
    "run.progress": "off",
    "timing.scheduler": "queued",
}
UNTIL = "writes:0.05dw"
WORKLOAD = {"read_ratio": 0.3}


def stall_count(r: pd.DataFrame, t: np.ndarray) -> np.ndarray:
    """Requests older than STALL_NS in flight at each time of `t`."""
    long = r[r.finish_ns - r.arrival_ns > STALL_NS]
    starts = np.sort(long.arrival_ns.to_numpy() + STALL_NS)
    ends = np.sort(long.finish_ns.to_numpy())
    return np.searchsorted(starts, t, side="right") - np.searchsorted(ends, t, side="right")


def one(seed: int, rber: float, policy: str, exposure: float, tmp: Path) -> dict:
    out = tmp / f"{rber:g}_{policy}_{seed}"
    overrides = {
        **BASE,
        "failures.rber": rber,
        "failures.exposure": exposure,
        "failures.on_program_failure": policy,
        "stats.request_log": True,
    }
    res = flashlife.run("salvage-small", WORKLOAD, until=UNTIL, seed=seed, overrides=overrides, out_dir=out)
    s = res.summary
    r = pd.read_csv(out / "requests.csv")
    lat = (r.finish_ns - r.arrival_ns) / 1e6
    writes = (r.op == "write").to_numpy()
    fast = (lat < FAST_MS).to_numpy()
    in_stall = stall_count(r, r.arrival_ns.to_numpy()) > 0
    grid = np.arange(0, r.finish_ns.max(), 1e6)
    held = lat[lat > STALL_NS / 1e6].sum() / (r.finish_ns.max() / 1e6)
    return {
        "rber": f"{rber:g}",
        "seed": seed,
        "policy": "base" if policy == "retire_block" else "salv",
        "lost": s["lifetime"]["dead_blocks"],
        "bad_pages": s["failures"]["bad_pages"],
        "mean_ms": lat.mean(),
        "p50_ms": lat.median(),
        "p99_ms": lat.quantile(0.99),
        "max_ms": lat.max(),
        "fast_w": fast[writes].mean(),
        "stall_time": (stall_count(r, grid) > 0).mean(),
        "stall_w": in_stall[writes].mean(),
        "fast_w_stall": fast[writes & in_stall].mean(),
        "fast_w_calm": fast[writes & ~in_stall].mean(),
        "slots_held": held,
        "bg_q_max": s["scheduler"]["queue_depth"]["background"]["max_one_die"],
        "blocked": s["scheduler"]["host_blocked_episodes"],
        "wa": s["write_amplification"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--rbers", default="1e-12,3e-11")
    a = ap.parse_args()
    seeds = [int(x) for x in a.seeds.split(",")]
    rbers = [float(x) for x in a.rbers.split(",")]
    pilot = flashlife.run(
        "salvage-small",
        WORKLOAD,
        until=UNTIL,
        overrides={**BASE, "failures.model": "injected", "ftl.timing": False},
    )
    exposure = pilot.summary["lifetime"]["erase_count"]["mean"] + 1.0
    print(f"exposure from the pilot: {exposure:.4f}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for rber in rbers:
            for seed in seeds:
                for policy in ("retire_block", "skip_page"):
                    rows.append(one(seed, rber, policy, exposure, Path(tmp)))
    df = pd.DataFrame(rows)
    pd.set_option("display.width", 250)
    print(df.round(3).to_string(index=False))
    print("\nsalvage / baseline per seed:")
    wide = df.pivot_table(index=["rber", "seed"], columns="policy", values=["mean_ms", "p50_ms", "p99_ms"])
    for k in ("mean_ms", "p50_ms", "p99_ms"):
        wide[(k, "ratio")] = wide[(k, "salv")] / wide[(k, "base")]
    print(wide.xs("ratio", axis=1, level=1).round(3).to_string())


if __name__ == "__main__":
    main()
