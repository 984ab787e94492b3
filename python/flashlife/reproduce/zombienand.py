"""ZombieNAND (Wilson, Jung, Kandemir, MASCOTS 2014): Figure 3, the synthetic grid, and Figures
5-6, real traces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ._common import GIB, Context, Section, num, pyplot, save_figure

#: CI scale of the synthetic grid: 32-page blocks, every endurance / 10 (tests/zombie.rs).
ZOMBIE_SMALL = {
    "geometry.pages_per_block": 32,
    "flash.wear.endurance.slc": 7500,
    "flash.wear.endurance.mlc": 600,
    "flash.wear.endurance.tlc": 100,
    "flash.wear.endurance.qlc": 30,
}
#: Quick scale of the trace runs: 4 elements of 64 blocks of 32 pages, endurance / 20.
ZOMBIE_TRACE_SMALL = {
    "geometry.blocks_per_plane": 64,
    "geometry.pages_per_block": 32,
    "flash.wear.endurance.slc": 3750,
    "flash.wear.endurance.mlc": 300,
    "flash.wear.endurance.tlc": 50,
    "flash.wear.endurance.qlc": 15,
}
ZOMBIE_TRACES = [
    ("Fin1", "umass/Financial1-first10k.ascii"),
    ("TPC-C", "mqsim/tpcc-small.trace"),
    ("hm_0", "msr/hm_0-window.csv"),
    ("rsrch_1", "msr/rsrch_1.csv"),
    ("wdev_1", "msr/wdev_1.csv"),
    ("web_0", "msr/web_0-first100k.csv.gz"),
    ("CloudPhysics", "cloudphysics/cloudPhysicsIO.csv"),
    ("hadoop", "blkparse/hadoop-blktrace.txt"),
]


def _zombie_pairs(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Baseline (retire) and zombie (drop_bit) rows side by side, one row per point."""
    cols = [*keys, "lifetime.host_bytes_written", "latency_us.all.mean", "lifetime.mode_switches"]
    b = df[df["flash.end_of_life"] == "retire"][cols]
    z = df[df["flash.end_of_life"] == "drop_bit"][cols]
    m = b.merge(z, on=keys, suffixes=("_base", "_zombie"))
    m["lifetime_ratio"] = m["lifetime.host_bytes_written_zombie"] / m["lifetime.host_bytes_written_base"]
    m["latency_ratio"] = m["latency_us.all.mean_zombie"] / m["latency_us.all.mean_base"]
    return m


def zombie_fig3(ctx: Context) -> Section:
    s = Section(
        "fig3",
        "Figure 3: lifetime under synthetic random I/O, ZombieNAND against the baseline",
        paper=[
            '"ZombieNAND *never* hurts the lifetime of the SSD when compared against an SSD without it '
            'for over five-hundred different synthetic experiments" (Section I)',
            '"as high as 16 times for fully random synthetic I/O" for TLC; for MLC '
            '"reaches 325% in synthetic tests" (Section I, results of Figure 3)',
            '"for reserved areas smaller than around 13%, there is no real change in lifetime or '
            'latency" (Section IV, Figure 3)',
        ],
    )
    reserves = ctx.pick([0.07, 0.3], [0.07, 0.2, 0.3], [0.06, 0.10, 0.15, 0.20, 0.25, 0.30])
    wss = ctx.pick([0.1, 1.0], [0.1, 0.5, 1.0], [round(0.1 * i, 1) for i in range(1, 11)])
    reads = ctx.pick([0.5], [0.5], [0.9, 0.5, 0.1])
    sets: dict[str, Any] = dict(ZOMBIE_SMALL) if ctx.quick else {}
    sets.update({"ftl.timing": False, "run.progress": "off"})
    s.setup = [
        'Baseline: the same preset with `flash.end_of_life = "retire"` (the zombie presets '
        "`zombie-synthetic-{tlc,mlc}` differ from `baseline-synthetic-*` in that key only); both run "
        "to death in fast-forward (`ftl.timing = false`: lifetime only, no latency).",
        "Lifetime = host bytes written until death; ratio = zombie / baseline at the same point.",
        "Both drives are the presets' (usage-table GC, wear levelling as the preset's comment describes); "
        "the paper's early-switch pool is off (`zombie.early_switch = false`, the presets' choice; "
        "docs/techniques/zombienand.md says why).",
    ]
    if ctx.quick:
        s.setup.append(
            "Scaled element (quick/smoke): 32-page blocks, every endurance divided by 10 (TLC 100, MLC 600, "
            "SLC 7,500 cycles); write share 50% only; "
            f"reserves {', '.join(f'{r:.0%}' for r in reserves)}, "
            f"working sets {', '.join(f'{w:.0%}' for w in wss)}."
        )
    else:
        s.setup.append(
            "The paper's synthetic element (128 blocks of 128 pages, endurance 1,000 / 6,000 / 75,000); "
            "write shares 10/50/90%; reserves 6-30%, working sets 10-100%."
        )
    frames = []
    for mode in ("tlc", "mlc"):
        df = ctx.sweep(
            f"fig3_{mode}",
            f"baseline-synthetic-{mode}",
            grid={
                "flash.end_of_life": ["retire", "drop_bit"],
                "capacity.reserve": reserves,
                "workload.working_set": wss,
                "workload.read_ratio": reads,
            },
            until="death",
            overrides=sets,
        )
        m = _zombie_pairs(df, ["capacity.reserve", "workload.working_set", "workload.read_ratio"])
        m["mode"] = mode
        frames.append(m)
    m = pd.concat(frames, ignore_index=True)
    shown = 0.5 if 0.5 in reads else reads[0]
    s.columns = ["start mode", "reserve", *[f"ws {w:.0%}" for w in wss]]
    for mode in ("tlc", "mlc"):
        for r in reserves:
            sel = m[(m["mode"] == mode) & (m["capacity.reserve"] == r) & (m["workload.read_ratio"] == shown)]
            cells = []
            for w in wss:
                row = sel[sel["workload.working_set"] == w]
                v = float(row["lifetime_ratio"].iloc[0]) if len(row) else float("nan")
                cells.append(num(v, ".2f"))
                s.data.append({"mode": mode, "reserve": r, "working_set": w, "read_ratio": shown, "ratio": v})
            s.rows.append([mode.upper(), f"{r:.0%}", *cells])
    lo = m["lifetime_ratio"].min()
    below13 = m[m["capacity.reserve"] < 0.13]["lifetime_ratio"]
    best = {mode: m[m["mode"] == mode]["lifetime_ratio"].max() for mode in ("tlc", "mlc")}
    s.extra.append(
        (
            "Beside the paper",
            ["claim (paper)", "paper", "ours (this run)"],
            [
                [
                    "never below the baseline",
                    "over 500 synthetic runs",
                    f"lowest ratio {num(lo)} over {len(m)} points",
                ],
                ["TLC best gain", "16x", f"{num(best['tlc'], '.2f')}x"],
                ["MLC best gain", "325%", f"{num(best['mlc'], '.2f')}x"],
                [
                    "no change below ~13% reserve",
                    "no real change",
                    f"ratios {num(below13.min())}-{num(below13.max())} below 13%" if len(below13) else "n/a",
                ],
            ],
        )
    )
    s.notes.append(
        f"Table: zombie / baseline lifetime at write share {1 - shown:.0%}, "
        f"{len(m)} points in all (both modes{', three write shares' if len(reads) > 1 else ''})."
    )
    plt = pyplot()
    if plt is not None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for ax, mode in zip(axes, ("tlc", "mlc"), strict=True):
            sel = m[(m["mode"] == mode) & (m["workload.read_ratio"] == shown)]
            grid = sel.pivot_table(
                index="capacity.reserve", columns="workload.working_set", values="lifetime_ratio"
            )
            im = ax.imshow(grid.values, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(grid.columns)), [f"{w:.0%}" for w in grid.columns])
            ax.set_yticks(range(len(grid.index)), [f"{r:.0%}" for r in grid.index])
            for (i, j), v in pd.DataFrame(grid.values).stack().items():
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="w", fontsize=8)
            ax.set_xlabel("working set")
            ax.set_ylabel("reserve")
            ax.set_title(f"{mode.upper()}: zombie / baseline lifetime (write share {1 - shown:.0%})")
            fig.colorbar(im, ax=ax)
        save_figure(ctx, s, fig)
    return s


def _raw_bytes(cfg: Mapping[str, Any]) -> int:
    g = cfg["geometry"]
    dies = g["channels"] * g["ways"] * g["dies"] * g["planes"]
    return dies * g["blocks_per_plane"] * g["pages_per_block"] * cfg["flash"]["page_size"]


def zombie_fig5(ctx: Context) -> Section:
    s = Section(
        "fig5",
        "Figures 5 and 6: lifetime and latency on traces",
        paper=[
            '"for TLC drives it can extend the lifetime from 20% to over 11 times for traces" and '
            '"For MLC drives this lifetime extension ranges from 73% to 375%" (Section I; Figure 5)',
            '"never hurts the lifetime ... over sixty trace-driven runs" (Section I)',
        ],
    )
    names = ctx.pick(["Fin1"], ["Fin1"], [n for n, _ in ZOMBIE_TRACES])
    modes = ctx.pick(["tlc"], ["tlc", "mlc"], ["tlc", "mlc"])
    reserves = ctx.pick([0.3], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    sets: dict[str, Any] = dict(ZOMBIE_TRACE_SMALL) if ctx.quick else {}
    sets.update({"run.progress": "off", "stats.interval": "0.25dw"})
    s.setup = [
        "Traces replayed in a loop (`workload.trace.loops = 0`), closed loop (timestamps ignored), their "
        'first distinct addresses folded onto half the raw drive (`fold = "remap_first"`; the paper kept '
        "the first 512 MB of unique addresses for its 1 GB drive), on `{baseline,zombie}-trace-{tlc,mlc}`, "
        "until death, timing on. The paper's UMass WebSearch and SNIA traces are not all available: we use "
        "the traces beside the checkout.",
    ]
    if ctx.quick:
        s.setup.append(
            "Scaled drive (quick/smoke): 4 elements of 64 blocks of 32 pages, every endurance divided by 20; "
            f"traces {', '.join(names)}; modes {', '.join(m.upper() for m in modes)}."
        )
    found = [(n, ctx.trace(rel), rel) for n, rel in ZOMBIE_TRACES if n in names]
    missing = [rel for _, p, rel in found if p is None]
    workloads = {n: p for n, p, _ in found if p is not None}
    if not workloads:
        s.skipped = f"no trace found under {ctx.traces} (looked for {', '.join(missing)})"
        return s
    if missing:
        s.notes.append(f"Skipped (not found under {ctx.traces}): {', '.join(missing)}.")
    frames = []
    for mode in modes:
        half = _raw_bytes(ctx.resolve(f"baseline-trace-{mode}", overrides=sets)) // 2
        wls = {
            n: {
                "kind": "trace",
                "trace": {
                    "path": str(p),
                    "loops": 0,
                    "fold": "remap_first",
                    "remap_limit_bytes": half,
                    "timestamps": "ignore",
                },
            }
            for n, p in workloads.items()
        }
        df = ctx.sweep(
            f"fig5_{mode}",
            f"baseline-trace-{mode}",
            grid={"flash.end_of_life": ["retire", "drop_bit"], "capacity.reserve": reserves},
            workloads=wls,
            until="death",
            overrides=sets,
        )
        m = _zombie_pairs(df, ["workload", "capacity.reserve"])
        m["mode"] = mode
        frames.append(m)
    m = pd.concat(frames, ignore_index=True)
    s.columns = [
        "trace",
        "mode",
        "reserve",
        "baseline GiB written",
        "zombie GiB written",
        "lifetime ratio",
        "latency ratio (lifetime mean)",
    ]
    for d in m.sort_values(["mode", "workload", "capacity.reserve"]).to_dict("records"):
        s.data.append(
            {
                "trace": d["workload"],
                "mode": d["mode"],
                "reserve": d["capacity.reserve"],
                "ratio": d["lifetime_ratio"],
                "latency_ratio": d["latency_ratio"],
            }
        )
        s.rows.append(
            [
                d["workload"],
                d["mode"].upper(),
                f"{d['capacity.reserve']:.0%}",
                num(d["lifetime.host_bytes_written_base"] / GIB, ".2f"),
                num(d["lifetime.host_bytes_written_zombie"] / GIB, ".2f"),
                num(d["lifetime_ratio"]),
                num(d["latency_ratio"]),
            ]
        )
    s.notes.append(
        "Latency ratio: each drive's mean over its own lifetime (the zombie's includes its extra life in "
        "slower modes); the paper's latency claim is about the time the baseline lives (Figure 6)."
    )
    plt = pyplot()
    if plt is not None:
        fig, axes = plt.subplots(1, len(modes), figsize=(5 * len(modes), 3.4), squeeze=False)
        for ax, mode in zip(axes[0], modes, strict=True):
            sel = m[m["mode"] == mode]
            traces = list(dict.fromkeys(sel["workload"]))
            width = 0.8 / max(len(reserves), 1)
            for i, r in enumerate(reserves):
                vals = [
                    float(
                        sel[(sel["workload"] == t) & (sel["capacity.reserve"] == r)]["lifetime_ratio"].iloc[0]
                    )
                    for t in traces
                ]
                ax.bar([k + i * width for k in range(len(traces))], vals, width, label=f"{r:.0%} reserve")
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_xticks([k + width * (len(reserves) - 1) / 2 for k in range(len(traces))], traces)
            ax.set_ylabel("zombie / baseline lifetime")
            ax.set_title(mode.upper())
            ax.legend(fontsize=8)
        save_figure(ctx, s, fig)
    return s
