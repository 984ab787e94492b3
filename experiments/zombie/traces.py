"""ZombieNAND trace-driven runs (paper Figures 5 and 6).

Each trace is replayed in a loop (`workload.trace.loops = 0`), closed loop (timestamps
ignored), its first distinct addresses folded onto half the raw drive (`fold = "remap_first"`;
the paper kept the first 512 MB of unique addresses of every trace for its 1 GB drive), on the
`{baseline,zombie}-trace-{tlc,mlc}` presets at 10/20/30% reserve, until the drive dies.

Outputs in experiments/zombie/results/:
  traces_<scale>.csv           one row per (trace, mode, reserve): lifetimes in host bytes,
                               the ratio, lifetime-average latencies and the zombie's average
                               latency while the baseline lives (the paper's latency claim)
  traces_<scale>_series.csv    mean latency per interval over lifetime normalised to the
                               baseline's death (= 100), the form of Figure 6
  traces_<scale>_bars.png      lifetime ratio bars (flashlife.plots.bars_relative)
  traces_<scale>_latency.png   latency over normalised lifetime (flashlife.plots.over_lifetime)

    python3 experiments/zombie/traces.py            # quick: scaled drive, 3 traces, ~1 min on 2 cores
    python3 experiments/zombie/traces.py quick-all  # scaled drive, every trace (~5 min)
    python3 experiments/zombie/traces.py full       # the paper's trace drive, all traces (days)
    JOBS=2 python3 experiments/zombie/traces.py
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

import flashlife
from flashlife.reproduce.zombienand import ZOMBIE_TRACES

HERE = Path(__file__).resolve().parent
TRACES = HERE.parent.parent.parent / "shared" / "traces"

# (label, path under shared/traces): the traces `flashlife reproduce zombienand` uses. Paper
# Table III used UMass Financial/WebSearch and SNIA (MSR) traces; these are the ones here.
ALL = ZOMBIE_TRACES
# WebSearch (mqsim/wsrch-small.trace) is left out: it has no writes, so no drive ever dies.
QUICK = ["Fin1", "TPC-C", "hm_0"]

# Quick scale: 4 elements of 64 blocks of 32 pages (64 MiB raw as TLC) and every endurance
# divided by 20 (the oxide thresholds are recalibrated from them, so the ratios between modes
# hold), as in the synthetic CI grid.
QUICK_SETS = [
    "geometry.blocks_per_plane=64",
    "geometry.pages_per_block=32",
    "flash.wear.endurance.slc=3750",
    "flash.wear.endurance.mlc=300",
    "flash.wear.endurance.tlc=50",
    "flash.wear.endurance.qlc=15",
]


def raw_bytes(cfg: dict) -> int:
    g = cfg["geometry"]
    dies = g["channels"] * g["ways"] * g["dies"] * g["planes"]
    return dies * g["blocks_per_plane"] * g["pages_per_block"] * cfg["flash"]["page_size"]


def one(job: tuple) -> dict:
    label, path, mode, reserve, variant, sets = job
    cfg = flashlife.resolve_config(f"{variant}-trace-{mode}", overrides=sets)
    half = raw_bytes(cfg) // 2
    overrides = sets + [
        f"capacity.reserve={reserve}",
        'workload.kind="trace"',
        f'workload.trace.path="{path}"',
        "workload.trace.loops=0",
        'workload.trace.fold="remap_first"',
        f"workload.trace.remap_limit_bytes={half}",
        'workload.trace.timestamps="ignore"',
        'run.until="death"',
        'run.progress="off"',
        'stats.interval="0.25dw"',
    ]
    r = flashlife.run(f"{variant}-trace-{mode}", overrides=overrides)
    s = r.summary
    ts = r.timeseries[["time_s", "host_bytes_written", "mean_latency_us", "iops"]].copy()
    # Requests completed in each interval (the weight of its mean latency).
    ts["requests"] = ts.iops * ts.time_s.diff().fillna(ts.time_s)
    return {
        "trace": label,
        "mode": mode,
        "reserve": reserve,
        "variant": variant,
        "host_bytes_written": s["lifetime"]["host_bytes_written"],
        "mean_latency_us": s["latency_us"]["all"]["mean"],
        "mode_switches": s["lifetime"]["mode_switches"],
        "series": ts,
    }


def main(scale: str) -> None:
    full = scale == "full"
    names = [n for n, _ in ALL] if scale in ("full", "quick-all") else QUICK
    sets = [] if full else list(QUICK_SETS)
    jobs = []
    for label, rel in ALL:
        if label not in names:
            continue
        path = TRACES / rel
        if not path.exists():
            print(f"skip {label}: {path} absent")
            continue
        for mode in ("tlc", "mlc"):
            for reserve in (0.1, 0.2, 0.3):
                for variant in ("baseline", "zombie"):
                    jobs.append((label, str(path), mode, reserve, variant, sets))
    workers = int(os.environ.get("JOBS", "2"))
    with ProcessPoolExecutor(workers) as pool:
        runs = list(pool.map(one, jobs))
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    rows, series = [], []
    by = {(r["trace"], r["mode"], r["reserve"], r["variant"]): r for r in runs}
    for (trace, mode, reserve, variant), r in by.items():
        if variant != "zombie":
            continue
        b = by[(trace, mode, reserve, "baseline")]
        life = b["host_bytes_written"]
        zs = r["series"]
        # Request-weighted mean latency of the zombie's intervals that end before the
        # baseline's death: the paper's "never worse while the baseline lives".
        live = zs[(zs.host_bytes_written <= life) & (zs.requests > 0)]
        z_live = (live.mean_latency_us * live.requests).sum() / max(live.requests.sum(), 1)
        rows.append(
            {
                "trace": trace,
                "mode": mode,
                "reserve": reserve,
                "baseline_bytes": life,
                "zombie_bytes": r["host_bytes_written"],
                "lifetime_ratio": r["host_bytes_written"] / life,
                "baseline_latency_us": b["mean_latency_us"],
                "zombie_latency_us": r["mean_latency_us"],
                "zombie_latency_while_baseline_lives_us": z_live,
                "latency_ratio_while_baseline_lives": z_live / b["mean_latency_us"],
                "mode_switches": r["mode_switches"],
            }
        )
        for v, run in (("baseline", b), ("zombie", r)):
            s = run["series"].copy()
            s["life_pct"] = 100.0 * s.host_bytes_written / life
            s["trace"], s["mode"], s["reserve"], s["variant"] = trace, mode, reserve, v
            series.append(s)
    df = pd.DataFrame(rows).sort_values(["mode", "trace", "reserve"])
    csv = out / f"traces_{scale}.csv"
    df.to_csv(csv, index=False, float_format="%.4g")
    pd.concat(series).to_csv(out / f"traces_{scale}_series.csv", index=False, float_format="%.6g")
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    print("wrote", csv)
    try:
        import matplotlib

        matplotlib.use("Agg")
        from flashlife import plots
    except ImportError:
        print("matplotlib not installed: CSV only")
        return
    # Figure 5: bars of zombie / baseline lifetime per trace, one bar per reserve. The
    # baseline differs per reserve, so each bar is already a ratio and the baseline's is 1.
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
    for ax, mode in zip(axes, ("tlc", "mlc"), strict=True):
        ratio = df[df["mode"] == mode]
        bars = [{"trace": t, "variant": "baseline", "life": 1.0} for t in ratio.trace.unique()]
        bars += [
            {"trace": r.trace, "variant": f"{r.reserve:.0%} reserve", "life": r.lifetime_ratio}
            for r in ratio.itertuples()
        ]
        plots.bars_relative(
            pd.DataFrame(bars), "trace", "life", "baseline", by="variant", ax=ax, title=f"{mode.upper()}"
        )
    fig.tight_layout()
    fig.savefig(out / f"traces_{scale}_bars.png", dpi=120)
    # Figure 6: latency over each drive's lifetime, baseline vs zombie, one panel per reserve
    # for the trace with the largest gain.
    best = df.sort_values("lifetime_ratio").iloc[-1]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    for ax, reserve in zip(axes, (0.1, 0.2, 0.3), strict=True):
        key = (best.trace, best["mode"], reserve)
        plots.over_lifetime(
            {v: by[key + (v,)]["series"] for v in ("baseline", "zombie")},
            "mean_latency_us",
            ax=ax,
            title=f"{best.trace} {best['mode'].upper()} {reserve:.0%}",
        )
    fig.tight_layout()
    fig.savefig(out / f"traces_{scale}_latency.png", dpi=120)
    print("wrote", out / f"traces_{scale}_bars.png", "and", out / f"traces_{scale}_latency.png")


if __name__ == "__main__":
    scale = sys.argv[1] if len(sys.argv) > 1 else "quick"
    if scale not in ("quick", "quick-all", "full"):
        sys.exit(f"usage: {sys.argv[0]} [quick|quick-all|full]")
    main(scale)
