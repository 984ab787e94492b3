"""ZombieNAND (Wilson, Jung, Kandemir, MASCOTS 2014): Figure 3, the synthetic grid, and Figures
5-6, real traces."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..sweep import load_timeseries
from ._common import GIB, Context, Section, num, pyplot, save_figure

#: CI scale of the synthetic grid (tests/zombie.rs, `zombie_grid --small`): 32-page blocks,
#: every endurance / 10, and the leveller's spread in cycles scaled with it (the presets' 16
#: cycles against 1,000 is 1.6%; left at 16 against 100 the baseline would be levelled ten
#: times more loosely than the presets' drive).
ZOMBIE_SMALL = {
    "geometry.pages_per_block": 32,
    "flash.wear.endurance.slc": 7500,
    "flash.wear.endurance.mlc": 600,
    "flash.wear.endurance.tlc": 100,
    "flash.wear.endurance.qlc": 30,
    "wear_leveling.threshold": 2,
}
#: Quick scale of the trace runs: 4 elements of 64 blocks of 32 pages, endurance / 20, the
#: leveller's spread scaled alike (16 / 20, at least 2 cycles, as `zombie_grid` scales it).
ZOMBIE_TRACE_SMALL = {
    "geometry.blocks_per_plane": 64,
    "geometry.pages_per_block": 32,
    "flash.wear.endurance.slc": 3750,
    "flash.wear.endurance.mlc": 300,
    "flash.wear.endurance.tlc": 50,
    "flash.wear.endurance.qlc": 15,
    "wear_leveling.threshold": 2,
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
    cols = [*keys, "point", "lifetime.host_bytes_written", "latency_us.all.mean", "lifetime.mode_switches"]
    b = df[df["flash.end_of_life"] == "retire"][cols]
    z = df[df["flash.end_of_life"] == "drop_bit"][cols]
    m = b.merge(z, on=keys, suffixes=("_base", "_zombie"))
    m["lifetime_ratio"] = m["lifetime.host_bytes_written_zombie"] / m["lifetime.host_bytes_written_base"]
    m["latency_ratio"] = m["latency_us.all.mean_zombie"] / m["latency_us.all.mean_base"]
    return m


def zombie_fig3(ctx: Context) -> Section:
    s = Section(
        "fig3",
        "Figure 3: lifetime and latency under synthetic random I/O, ZombieNAND against the baseline",
        paper=[
            '"ZombieNAND *never* hurts the lifetime of the SSD when compared against an SSD without it '
            'for over five-hundred different synthetic experiments" (Section I)',
            '"as high as 16 times for fully random synthetic I/O" for TLC; for MLC '
            '"reaches 325% in synthetic tests" (Section I, results of Figure 3)',
            '"for reserved areas smaller than around 13%, there is no real change in lifetime or '
            'latency" (Section IV, Figure 3)',
            '"The latency results depict *latency average over the entire lifetime of the SSD* ... even '
            "though sometimes the latencies are worse than the baseline average, *these degradations only "
            'occur after the life of the baseline SSD has expired*" (Section IV, Figure 3)',
        ],
    )
    reserves = ctx.pick([0.07, 0.3], [0.07, 0.2, 0.3], [0.06, 0.10, 0.15, 0.20, 0.25, 0.30])
    wss = ctx.pick([0.1, 1.0], [0.1, 0.5, 1.0], [round(0.1 * i, 1) for i in range(1, 11)])
    reads = ctx.pick([0.5], [0.5], [0.9, 0.5, 0.1])
    sets: dict[str, Any] = dict(ZOMBIE_SMALL) if ctx.quick else {}
    # Timing on: the latency half of the figure. Closed-loop decisions do not depend on time, so
    # the lifetimes are those of a fast-forward run. The paper-scale drive is timed in sampled
    # windows (docs/performance.md, "Sampled timing"); the scaled one costs nothing to time in full.
    sets.update({"ftl.timing": True, "run.progress": "off"})
    if not ctx.quick:
        sets["sampling.enabled"] = True
    s.setup = [
        'Baseline: the same preset with `flash.end_of_life = "retire"` (the zombie presets '
        "`zombie-synthetic-{tlc,mlc}` differ from `baseline-synthetic-*` in that key only); both run "
        "to death, closed loop at the preset's queue depth, timed"
        + (
            " in full."
            if ctx.quick
            else " in sampled windows (`sampling.enabled = true`: mean latency estimated)."
        )
        + f" Latency = mean over the drive's whole life under the `{ctx.scheduler}` scheduler.",
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
    lat_rows = []
    for mode in ("tlc", "mlc"):
        for r in reserves:
            sel = m[(m["mode"] == mode) & (m["capacity.reserve"] == r) & (m["workload.read_ratio"] == shown)]
            cells = []
            for w in wss:
                row = sel[sel["workload.working_set"] == w]
                v = float(row["latency_ratio"].iloc[0]) if len(row) else float("nan")
                cells.append(num(v, ".2f"))
                for d in s.data:
                    if (d["mode"], d["reserve"], d["working_set"]) == (mode, r, w):
                        d["latency_ratio"] = v
            lat_rows.append([mode.upper(), f"{r:.0%}", *cells])
    s.extra.append(
        ("Mean latency over each drive's whole life, zombie / baseline", list(s.columns), lat_rows)
    )
    lat13 = m[m["capacity.reserve"] < 0.13]["latency_ratio"]
    s.notes.append(
        "Latency: the paper's heat maps show the mean over the whole life, so the zombie drive's ratio "
        "includes its afterlife in fewer bits per cell (Figure 6 shows it over time); below 13% reserve "
        f"ours is {num(lat13.min())}-{num(lat13.max())}, over all points "
        f"{num(m['latency_ratio'].min())}-{num(m['latency_ratio'].max())}."
        if len(lat13)
        else "Latency: the mean over each drive's whole life."
    )
    s.notes.append(
        f"Table: zombie / baseline lifetime at write share {1 - shown:.0%}, "
        f"{len(m)} points in all (both modes{', three write shares' if len(reads) > 1 else ''})."
    )
    plt = pyplot()
    if plt is not None:
        fig, axes = plt.subplots(2, 2, figsize=(10, 7.0))
        panels = itertools.product(
            enumerate((("lifetime_ratio", "lifetime"), ("latency_ratio", "mean latency"))),
            enumerate(("tlc", "mlc")),
        )
        for (i, (col, what)), (j, mode) in panels:
            ax = axes[i][j]
            sel = m[(m["mode"] == mode) & (m["workload.read_ratio"] == shown)]
            grid = sel.pivot_table(index="capacity.reserve", columns="workload.working_set", values=col)
            im = ax.imshow(grid.values, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(grid.columns)), [f"{w:.0%}" for w in grid.columns])
            ax.set_yticks(range(len(grid.index)), [f"{r:.0%}" for r in grid.index])
            for (i, j), v in pd.DataFrame(grid.values).stack().items():
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="w", fontsize=8)
            ax.set_xlabel("working set")
            ax.set_ylabel("reserve")
            ax.set_title(
                f"{mode.upper()}: zombie / baseline {what} (write share {1 - shown:.0%})", fontsize=9
            )
            fig.colorbar(im, ax=ax)
        save_figure(ctx, s, fig)
    return s


def _raw_bytes(cfg: Mapping[str, Any]) -> int:
    g = cfg["geometry"]
    dies = g["channels"] * g["ways"] * g["dies"] * g["planes"]
    return dies * g["blocks_per_plane"] * g["pages_per_block"] * cfg["flash"]["page_size"]


_TRACE_SETUP = (
    "Traces replayed in a loop (`workload.trace.loops = 0`), closed loop (timestamps ignored), their "
    'first distinct addresses folded onto half the raw drive (`fold = "remap_first"`; the paper kept '
    "the first 512 MB of unique addresses for its 1 GB drive), on `{baseline,zombie}-trace-{tlc,mlc}`, "
    "until death, timing on. The paper's UMass WebSearch and SNIA traces are not all available: we use "
    "the traces beside the checkout."
)


def _trace_runs(ctx: Context) -> dict[str, Any]:
    """The trace sweeps behind Figures 5 and 6 (baseline and zombie, each trace, mode and
    reserve, to death), run once per reproduction: `pairs` (one row per point, baseline and
    zombie side by side, with each one's sweep point), `dirs` (mode -> the sweep's folder),
    `setup`, `notes`, `modes`, `reserves`, or `skipped`."""
    if "traces" in ctx.shared:
        return ctx.shared["traces"]
    names = ctx.pick(["Fin1"], ["Fin1", "TPC-C", "hm_0"], [n for n, _ in ZOMBIE_TRACES])
    modes = ctx.pick(["tlc"], ["tlc", "mlc"], ["tlc", "mlc"])
    reserves = ctx.pick([0.3], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    sets: dict[str, Any] = dict(ZOMBIE_TRACE_SMALL) if ctx.quick else {}
    sets.update({"run.progress": "off", "stats.interval": "0.25dw"})
    out: dict[str, Any] = {"setup": [_TRACE_SETUP], "notes": [], "modes": modes, "reserves": reserves}
    ctx.shared["traces"] = out
    if ctx.quick:
        out["setup"].append(
            "Scaled drive (quick/smoke): 4 elements of 64 blocks of 32 pages, every endurance divided by 20; "
            f"traces {', '.join(names)}; modes {', '.join(m.upper() for m in modes)}."
        )
    found = [(n, ctx.trace(rel), rel) for n, rel in ZOMBIE_TRACES if n in names]
    missing = [rel for _, p, rel in found if p is None]
    workloads = {n: p for n, p, _ in found if p is not None}
    if not workloads:
        out["skipped"] = f"no trace found under {ctx.traces} (looked for {', '.join(missing)})"
        return out
    if missing:
        out["notes"].append(f"Skipped (not found under {ctx.traces}): {', '.join(missing)}.")
    frames, dirs = [], {}
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
        dirs[mode] = ctx.data_dir(f"fig5_{mode}")
    out["pairs"] = pd.concat(frames, ignore_index=True)
    out["dirs"] = dirs
    return out


def zombie_fig5(ctx: Context) -> Section:
    s = Section(
        "fig5",
        "Figure 5: lifetime on traces",
        paper=[
            '"for TLC drives it can extend the lifetime from 20% to over 11 times for traces" and '
            '"For MLC drives this lifetime extension ranges from 73% to 375%" (Section I; Figure 5)',
            '"never hurts the lifetime ... over sixty trace-driven runs" (Section I)',
        ],
    )
    runs = _trace_runs(ctx)
    s.setup = list(runs["setup"])
    s.notes = list(runs["notes"])
    if "skipped" in runs:
        s.skipped = runs["skipped"]
        return s
    m, modes, reserves = runs["pairs"], runs["modes"], runs["reserves"]
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
        "slower modes); the paper's latency claim is about the time the baseline lives (Figure 6, next)."
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
            ax.set_xticks(
                [k + width * (len(reserves) - 1) / 2 for k in range(len(traces))],
                traces,
                rotation=30,
                ha="right",
                fontsize=8,
            )
            ax.set_ylabel("zombie / baseline lifetime")
            ax.set_title(mode.upper())
            ax.set_ylim(0, ax.get_ylim()[1] * 1.2)
            ax.legend(fontsize=8, ncol=len(reserves), loc="upper left")
        save_figure(ctx, s, fig)
    return s


def _life_axis(ts: pd.DataFrame, base_bytes: float, own_bytes: float) -> pd.DataFrame:
    """A run's time series on Figure 6's 200-point axis: 0-100 is the baseline's life (host
    bytes written up to its death), 100-200 the zombie drive's afterlife (the bytes it writes
    after the baseline died, up to its own death). Each interval keeps its request count, the
    weight of its mean latency."""
    ts = ts[["time_s", "host_bytes_written", "mean_latency_us", "iops"]].copy()
    ts["requests"] = ts["iops"] * ts["time_s"].diff().fillna(ts["time_s"])
    b = ts["host_bytes_written"]
    after = own_bytes - base_bytes
    ts["life"] = (100.0 * b / base_bytes).where(
        b <= base_bytes, 100.0 + 100.0 * (b - base_bytes) / (after if after > 0 else 1.0)
    )
    return ts[ts["requests"] > 0]


def _per_point(ts: pd.DataFrame) -> pd.DataFrame:
    """A time series on the life axis as the paper draws it, one point per unit of the
    200-point range: each unit's mean latency weighted by the requests of its intervals."""
    unit = ts["life"].clip(upper=199.999).floordiv(1.0)
    w = ts["mean_latency_us"] * ts["requests"]
    g = pd.DataFrame({"unit": unit, "w": w, "n": ts["requests"]}).groupby("unit").sum()
    return pd.DataFrame({"life": g.index + 0.5, "mean_latency_us": g["w"] / g["n"]})


def _weighted_mean(ts: pd.DataFrame) -> float:
    w = ts["requests"].sum()
    return float((ts["mean_latency_us"] * ts["requests"]).sum() / w) if w > 0 else float("nan")


def fig6_point(sweep_dir: Path, d: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, tuple[float, ...]]:
    """One Figure 6 point from a baseline / zombie pair (a row of `_zombie_pairs`) of the sweep
    in `sweep_dir`: both time series on the life axis, and the zombie's latency over the
    baseline's lifetime mean while the baseline lives (0-95), in its last 5% (95-100), over the
    afterlife (100-200) and in the afterlife's worst interval."""
    base_b = float(d["lifetime.host_bytes_written_base"])
    zomb_b = float(d["lifetime.host_bytes_written_zombie"])
    bts = _life_axis(load_timeseries(sweep_dir, d["point_base"]), base_b, base_b)
    zts = _life_axis(load_timeseries(sweep_dir, d["point_zombie"]), base_b, zomb_b)
    ref = float(d["latency_us.all.mean_base"])
    early = _weighted_mean(zts[zts["life"] <= 95.0]) / ref
    late = _weighted_mean(zts[(zts["life"] > 95.0) & (zts["life"] <= 100.0)]) / ref
    after = zts[zts["life"] > 100.0]
    after_mean = _weighted_mean(after) / ref
    after_worst = float(after["mean_latency_us"].max()) / ref if len(after) else float("nan")
    return bts, zts, (early, late, after_mean, after_worst)


def zombie_fig6(ctx: Context) -> Section:
    s = Section(
        "fig6",
        "Figure 6: latency over the whole lifetime on traces",
        paper=[
            '"Latencies over the entire lifetimes ... normalized over a 200 point range. Vertical line at '
            "x-axis 100 demarcates death of the baseline, and ... x-axis 200 indicates death of the "
            'ZombieNAND-enhanced drive. Latencies all shown relative to the baseline" (Figure 6 caption)',
            '"it does not hurt the traces which do not benefit as much from the scheme until the baseline '
            'is within 5% from death" and "increased reserve ... seems to have a negative impact on the '
            'post-baseline-death latencies for some of the traces" (Section IV)',
        ],
    )
    runs = _trace_runs(ctx)
    s.setup = [
        "The runs of Figure 5 (same drives, traces and reserves), their time series every 0.25 drive "
        "writes. Each interval's mean latency is weighted by the requests it completed; every latency "
        "is divided by the baseline's mean over its whole life (the paper's 1.0). The figure draws one "
        "point per unit of the 200-point axis (the request-weighted mean of its intervals), the zombie "
        "drive solid, the baseline dotted, on a log scale."
    ]
    s.notes = list(runs["notes"])
    if "skipped" in runs:
        s.skipped = runs["skipped"]
        return s
    m, dirs = runs["pairs"], runs["dirs"]
    s.columns = [
        "trace",
        "mode",
        "reserve",
        "zombie, life 0-95",
        "zombie, life 95-100",
        "zombie, afterlife 100-200 (mean)",
        "zombie, afterlife (worst interval)",
    ]
    series: dict[tuple[str, str, float], tuple[pd.DataFrame, pd.DataFrame]] = {}
    for d in m.sort_values(["mode", "workload", "capacity.reserve"]).to_dict("records"):
        bts, zts, (early, late, after_mean, after_worst) = fig6_point(dirs[d["mode"]], d)
        series[(d["workload"], d["mode"], d["capacity.reserve"])] = (bts, zts)
        s.data.append(
            {
                "trace": d["workload"],
                "mode": d["mode"],
                "reserve": d["capacity.reserve"],
                "while_baseline_lives": early,
                "baseline_last_5pct": late,
                "afterlife_mean": after_mean,
                "afterlife_worst": after_worst,
            }
        )
        s.rows.append(
            [
                d["workload"],
                d["mode"].upper(),
                f"{d['capacity.reserve']:.0%}",
                num(early),
                num(late),
                num(after_mean),
                num(after_worst),
            ]
        )
    early = [r["while_baseline_lives"] for r in s.data if math.isfinite(r["while_baseline_lives"])]
    if early:
        s.notes.append(
            "While the baseline lives (0-95) the zombie drive's latency is "
            f"{min(early):.3f}-{max(early):.3f} of the baseline's lifetime mean. The afterlife columns "
            "are empty where the zombie drive did not outlive the baseline."
        )
    plt = pyplot()
    if plt is not None:
        modes, reserves = runs["modes"], runs["reserves"]
        fig, axes = plt.subplots(
            len(modes), len(reserves), figsize=(3.6 * len(reserves), 2.8 * len(modes)), squeeze=False
        )
        # One colour per trace in every panel; one point per unit of life (the paper's 200-point
        # range), on a log scale so that the afterlife's last spikes leave the rest readable.
        colours = {t: f"C{k % 10}" for k, t in enumerate(dict.fromkeys(t for t, _, _ in series))}
        for (i, mode), (j, reserve) in itertools.product(enumerate(modes), enumerate(reserves)):
            ax = axes[i][j]
            for (trace, mo, r), (bts, zts) in series.items():
                if mo != mode or r != reserve:
                    continue
                ref = _weighted_mean(bts)
                b, z = _per_point(bts), _per_point(zts)
                ax.plot(b["life"], b["mean_latency_us"] / ref, color=colours[trace], ls=":", lw=0.9)
                ax.plot(z["life"], z["mean_latency_us"] / ref, color=colours[trace], lw=1.2, label=trace)
            ax.axvline(100, color="k", lw=0.8)
            ax.axhline(1.0, color="grey", lw=0.6)
            ax.set_xlim(0, 200)
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(plt.FixedLocator([0.25, 0.5, 1, 2, 5, 10, 20, 50, 100]))
            ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(plt.NullFormatter())
            ax.set_title(f"{mode.upper()}, {reserve:.0%} reserve", fontsize=9)
            ax.set_xlabel("life (0-100 baseline, 100-200 zombie afterlife)", fontsize=8)
            ax.set_ylabel("latency / baseline mean", fontsize=8)
            ax.legend(fontsize=7)
        save_figure(ctx, s, fig)
    return s


def _span(values: Sequence[float]) -> str:
    lo, hi = min(values), max(values)
    return num(lo) if f"{lo:.3f}" == f"{hi:.3f}" else f"{num(lo)}-{num(hi)}"


def zombie_pool(ctx: Context) -> Section:
    s = Section(
        "pool",
        "Ablation: the early-switch pool (Equation 1) on and off",
        paper=[
            'Equation 1 sizes a pool of blocks per element that switch early, "(R - W) x B / 2^(S-2)", '
            "preferred within a valid-page bucket (Algorithms 2-3); the paper credits it with holding "
            "the hot set in fast modes (Section III)",
            '"ZombieNAND *never* hurts the lifetime of the SSD when compared against an SSD without it" '
            "(Section I)",
        ],
    )
    modes = ctx.pick(["tlc"], ["tlc", "mlc"], ["tlc", "mlc"])
    reserves = ctx.pick([0.07, 0.3], [0.07, 0.15, 0.3], [0.07, 0.15, 0.3])
    wss = ctx.pick([1.0], [0.1, 1.0], [0.1, 1.0])
    seeds = ctx.pick([1], [1, 2, 3], [1, 2, 3])
    sets: dict[str, Any] = dict(ZOMBIE_SMALL) if ctx.quick else {}
    sets.update({"ftl.timing": False, "run.progress": "off", "workload.read_ratio": 0.5})
    s.setup = [
        "Synthetic random I/O, write share 50%, to death in fast-forward; three drives per point and "
        'seed: the baseline (`flash.end_of_life = "retire"`), ZombieNAND without the pool (the '
        "presets: `zombie.early_switch = false`) and with it (`zombie.early_switch = true`). "
        "Ratios are zombie / baseline host bytes written until death, the span over "
        f"{len(seeds)} seed(s).",
    ]
    if ctx.quick:
        s.setup.append("Scaled element as Figure 3's (32-page blocks, every endurance divided by 10).")
    frames = []
    for mode in modes:
        grid = {"capacity.reserve": reserves, "workload.working_set": wss}
        base = f"baseline-synthetic-{mode}"
        keys = ["capacity.reserve", "workload.working_set", "seed"]
        runs = ctx.sweeps(
            [
                (
                    f"pool_{mode}_baseline",
                    base,
                    {"grid": grid, "seeds": seeds, "until": "death", "overrides": sets},
                ),
                (
                    f"pool_{mode}_off",
                    base,
                    {
                        "grid": grid,
                        "seeds": seeds,
                        "until": "death",
                        "overrides": {**sets, "flash.end_of_life": "drop_bit", "zombie.early_switch": False},
                    },
                ),
                (
                    f"pool_{mode}_on",
                    base,
                    {
                        "grid": grid,
                        "seeds": seeds,
                        "until": "death",
                        "overrides": {**sets, "flash.end_of_life": "drop_bit", "zombie.early_switch": True},
                    },
                ),
            ]
        )
        b, off, on = (r[[*keys, "lifetime.host_bytes_written"]] for r in runs)
        m = b.merge(off, on=keys, suffixes=("", "_off")).merge(on, on=keys, suffixes=("", "_on"))
        m["off"] = m["lifetime.host_bytes_written_off"] / m["lifetime.host_bytes_written"]
        m["on"] = m["lifetime.host_bytes_written_on"] / m["lifetime.host_bytes_written"]
        m["mode"] = mode
        frames.append(m)
    m = pd.concat(frames, ignore_index=True)
    s.columns = ["mode", "reserve", "working set", "no pool (presets)", "pool", "pool / no pool"]
    for (mode, r, w), g in m.groupby(["mode", "capacity.reserve", "workload.working_set"], sort=False):
        rel = list(g["on"] / g["off"])
        s.data.append(
            {
                "mode": mode,
                "reserve": r,
                "working_set": w,
                "off_min": float(g["off"].min()),
                "on_min": float(g["on"].min()),
                "pool_vs_off_min": min(rel),
                "pool_vs_off_max": max(rel),
            }
        )
        s.rows.append(
            [mode.upper(), f"{r:.0%}", f"{w:.0%}", _span(list(g["off"])), _span(list(g["on"])), _span(rel)]
        )
    below = [d for d in s.data if d["on_min"] < 1.0]
    s.notes.append(
        "Where a ratio is below 1.000 the drive died before the baseline: "
        + (
            ", ".join(
                f"{d['mode'].upper()} {d['reserve']:.0%}/{d['working_set']:.0%} with the pool" for d in below
            )
            if below
            else "none with the pool"
        )
        + f"; without the pool the lowest ratio is {min(d['off_min'] for d in s.data):.3f}. "
        'docs/techniques/zombienand.md ("The early-switch pool") discusses what the pool costs and buys in '
        "our model, and why the presets leave it off."
    )
    plt = pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6.5, 3.2))
        labels = [f"{d['mode'].upper()} {d['reserve']:.0%}/{d['working_set']:.0%}" for d in s.data]
        xs = range(len(s.data))
        ax.bar([x - 0.2 for x in xs], [d["off_min"] for d in s.data], 0.4, label="no pool (min over seeds)")
        ax.bar([x + 0.2 for x in xs], [d["on_min"] for d in s.data], 0.4, label="pool (min over seeds)")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(list(xs), labels, rotation=45, ha="right", fontsize=7)
        ax.set_ylabel("zombie / baseline lifetime")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
        save_figure(ctx, s, fig)
    return s
