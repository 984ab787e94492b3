"""Reusable SSD (Yadgar, Yaakobi, Schuster, FAST '15): Figures 7-8."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ._common import Context, Section, died_early, num, pyplot, ratio, save_figure
from ._footprint import footprint, size_drive

REUSABLE_TRACES = {
    "wdev_1": "msr/wdev_1.csv",
    "wdev_3": "msr/wdev_3.csv",
    "rsrch_1": "msr/rsrch_1.csv",
    "hm_0": "msr/hm_0-window.csv",
    "web_0": "msr/web_0-first100k.csv.gz",
    "fin1": "umass/Financial1-first10k.ascii",
    "wsrch": "mqsim/wsrch-small.trace",
    "tpcc": "mqsim/tpcc-small.trace",
    "blkparse": "blkparse/blkparse-output.txt",
    "hadoop": "blkparse/hadoop-blktrace.txt",
    "cloudphys": "cloudphysics/cloudPhysicsIO.csv",
}

#: `gc.mode` of both drives: our controller's cleaning (idle windows, stepped under the queued
#: scheduler) and DiskSim's foreground cleaning, which the paper's Figure 8 measured.
GC_MODES = ("standard", "foreground")


def _trace_jobs(
    ctx: Context,
    preset: str,
    names: list[str],
    ops: list[float],
    modes: list[str],
    sets: dict[str, Any],
    s: Section,
) -> tuple[list[tuple[str, Any, dict[str, Any]]], list[list[str]]]:
    """One sweep per trace and over-provisioning, each on a drive sized to the trace's
    footprint (`_footprint.py`); traces absent or without writes are named in the notes."""
    geo = ctx.resolve(preset)["geometry"]
    ways = int(sets.get("geometry.ways", geo["ways"]))
    jobs, sizes, missing, readonly = [], [], [], []
    for name in names:
        p = ctx.trace(REUSABLE_TRACES[name])
        if p is None:
            missing.append(REUSABLE_TRACES[name])
            continue
        fp = footprint(p)
        ctx.shared.setdefault("reusable_trace_rates", {})[name] = fp.rate
        if fp.writes < 0.01 * fp.requests:
            # Looped until the drive writes of the run, a trace of (nearly) only reads would
            # replay millions of reads per drive write; and it leaves nothing to clean.
            readonly.append(f"{name} ({fp.writes:,} writes of {fp.requests:,} requests)")
            continue
        wl = {
            "kind": "trace",
            "trace": {"path": str(p), "loops": 0, "fold": "remap_first", "timestamps": "honour"},
        }
        for op in ops:
            d = size_drive(
                fp.pages,
                op,
                ways=ways,
                planes=int(geo["planes"]),
                pages_per_block=int(geo["pages_per_block"]),
            )
            sizes.append(
                [
                    name,
                    f"{op:.0%}",
                    f"{fp.pages:,}",
                    str(d.ways),
                    str(d.blocks_per_plane),
                    num(d.over_footprint),
                ]
            )
            over = {**sets, **d.overrides(), "capacity.overprovisioning": op}
            grid = {"reusable.enabled": [False, True], "gc.mode": modes}
            jobs.append(
                (
                    f"fig7_{preset}_{name}_op{round(op * 100)}",
                    preset,
                    {"grid": grid, "workloads": {name: wl}, "overrides": over},
                )
            )
    if missing:
        _note_once(s, f"Skipped (not found under {ctx.traces}): {', '.join(missing)}.")
    if readonly:
        _note_once(s, f"Skipped (under 1% writes, so nothing to clean): {', '.join(readonly)}.")
    return jobs, sizes


def reusable_fig7(ctx: Context) -> Section:
    s = Section(
        "fig7_8",
        "Figures 7 and 8: relative erasures and I/O response time, and the share of second writes",
        paper=[
            '"We reduce the number of erasures by 33% in most cases, resulting in a 15% lifetime extension '
            'and an overall reduction of up to 35% in I/O response time" (Abstract)',
            '"In most traces, the reduction is even slightly better, around 40%." (Section 6, Figure 7)',
            '"I/O response time decreased by as much as 15% and 35%, with OP=28% and OP=7%, respectively." '
            "(Section 6, Figure 8)",
            '"roughly 33% of the data in each trace is written as second writes." (Section 6.4)',
        ],
    )
    presets = ctx.pick(
        ["reusable-small"], ["reusable-small"], ["reusable-small", "reusable-medium", "reusable-large"]
    )
    ops = ctx.pick([0.28], [0.07, 0.28], [0.07, 0.28])
    dw = ctx.pick(1, 2, 3)
    modes = ctx.pick(["foreground"], list(GC_MODES), list(GC_MODES))
    # Smoke: one small trace, so that the footprint sizing runs in the test suite.
    trace_names = ctx.pick(["tpcc"], list(REUSABLE_TRACES), list(REUSABLE_TRACES))
    sets: dict[str, Any] = {"run.progress": "off"}
    zipf_sets = dict(sets)
    if ctx.quick:
        zipf_sets.update({"geometry.ways": 2, "geometry.blocks_per_plane": 256})
        sets["geometry.ways"] = 2
    s.setup = [
        "Standard SSD = the same preset with `reusable.enabled = false`, same workload, seed and `gc.mode`; "
        f"{dw} drive writes; host queue depth 1; wear leveling on (the presets' DiskSim-like threshold); "
        f"`gc.mode` {' and '.join(f'`{m}`' for m in modes)} for both drives (`foreground`: DiskSim's "
        "cleaning, the write that triggers it waits for all of it, nothing cleaned in idle time). "
        'Zipf workloads from the workload module (`workload.kind = "zipf"`, 4 KiB writes) on the preset\'s '
        "drive; each trace on a drive sized to its footprint (its distinct 4 KiB pages, plus the "
        "over-provisioning: chips and blocks per plane in the table below), looped endlessly, folded with "
        "`remap_first`, replayed at its timestamps (open loop, as DiskSim replays them). Timings from "
        "public MLC datasheets (docs/techniques/reusable-ssd.md), not the paper's Table 4; our traces, not "
        "the paper's.",
    ]
    if ctx.quick:
        s.setup.append(
            "CI drive (quick/smoke): Zipf on `reusable-small` cut to 2 chips of 256 blocks per plane; trace "
            "drives start from 2 chips."
        )
    workloads: dict[str, Any] = {
        f"zipf({a})": {"kind": "zipf", "zipf": {"alpha": a}} for a in ctx.pick([2], [1, 2], [1, 2])
    }
    s.columns = [
        "workload",
        "preset",
        "op",
        "gc.mode",
        "erasures std / reusable",
        "relative erasures",
        "relative response",
        "second-write share",
        "WA std -> reusable",
        "queue wait share (std)",
    ]
    sizes: list[list[str]] = []
    for preset in presets:
        jobs = [
            (
                f"fig7_{preset}",
                preset,
                {
                    "grid": {
                        "reusable.enabled": [False, True],
                        "capacity.overprovisioning": ops,
                        "gc.mode": modes,
                    },
                    "workloads": workloads,
                    "overrides": zipf_sets,
                },
            )
        ]
        tjobs, tsizes = _trace_jobs(ctx, preset, trace_names, ops, modes, sets, s)
        sizes += [[preset, *r] for r in tsizes]
        jobs += tjobs
        jobs = [(n, b, {**kw, "until": f"writes:{dw}dw"}) for n, b, kw in jobs]
        for (_, _, kw), df in zip(jobs, ctx.sweeps(jobs), strict=True):
            # The Zipf sweep has the over-provisioning as a grid column, a trace's as an override.
            op = kw["overrides"].get("capacity.overprovisioning")
            keys = ["workload", "gc.mode"] + ([] if op is not None else ["capacity.overprovisioning"])
            for key, sel in df.groupby(keys, sort=False):
                _add_row(s, preset, key[0], float(op if op is not None else key[2]), key[1], sel)
    if sizes:
        s.extra.append(
            (
                "Trace drives sized to their footprints",
                [
                    "preset",
                    "trace",
                    "op",
                    "footprint (4 KiB pages)",
                    "chips",
                    "blocks per plane",
                    "logical / footprint",
                ],
                sizes,
            )
        )
    d = pd.DataFrame(s.data)
    d = _leave_out_the_dead(s, d, dw)
    for mode in modes:
        m = d[d["gc_mode"] == mode]
        s.notes.append(
            f"`{mode}`: relative erasures {num(m.rel_erasures.min())}-{num(m.rel_erasures.max())} "
            f"(paper: about 0.67, 0.60 in many traces); relative response {num(m.rel_response.min())}-"
            f"{num(m.rel_response.max())} (paper: down to 0.65 at OP 7%, 0.85 at OP 28%); second-write share "
            f"{num(m.second_write_share.min())}-{num(m.second_write_share.max())} (paper: about 0.33)."
        )
    rates = ctx.shared.get("reusable_trace_rates", {})
    saturated = sorted(
        {r["workload"] for r in s.data if r.get("iops_std", 0) < 0.9 * rates.get(r["workload"], 0)}
    )
    if saturated:
        s.notes.append(
            "Overloaded replays (the standard drive served under 90% of the trace's own request rate at some "
            f"point, so its backlog grew for the whole run): {', '.join(saturated)}. Their relative response "
            "compares backlogs, not service times. The queue-wait share shows queueing behind bursts as well."
        )
    _plot(ctx, s, d, modes)
    return s


def _leave_out_the_dead(s: Section, d: pd.DataFrame, dw: float) -> pd.DataFrame:
    """Name the rows in which a drive died before the run's stop (marked † in the table) and
    return the others: only those compare runs of the same length."""
    died = [r for r in s.data if r["died"]]
    if died:
        s.notes.append(
            "**Rows marked † are not comparisons**: a drive died before the run's "
            f"{dw} drive writes, so its counts cover a shorter run than its partner's, and they are left "
            "out of the ranges below: " + "; ".join(_where(r) + f": {r['died']}" for r in died) + "."
        )
    return d[d["died"] == ""]


def _note_once(s: Section, note: str) -> None:
    """A note the trace jobs of every preset would make alike (the same traces are skipped
    for each), said once."""
    if note not in s.notes:
        s.notes.append(note)


def _where(r: dict[str, Any]) -> str:
    return f"{r['workload']} {r['preset']} op {r['op']:.0%} `{r['gc_mode']}`"


def _add_row(s: Section, preset: str, wl: str, op: float, mode: str, sel: pd.DataFrame) -> None:
    std = sel[sel["reusable.enabled"] == False].iloc[0]  # noqa: E712
    reu = sel[sel["reusable.enabled"] == True].iloc[0]  # noqa: E712
    rel_e = ratio(reu["flash.block_erases"], std["flash.block_erases"])
    rel_r = ratio(reu["latency_us.all.mean"], std["latency_us.all.mean"])
    # Host data in second writes: units (4 KiB pages, the presets' mapping unit) over host units.
    share = ratio(reu["techniques.reusable.units"] * 4096, reu["host.write_bytes"])
    # Time requests spent waiting for the drive in the host queue, over their response time:
    # near 1, an open-loop replay the drive cannot keep up with (response = queueing).
    queued = ratio(std["host_queue_wait_us.mean"], std["latency_us.all.mean"])
    pair = (("standard", std), ("Reusable SSD", reu))
    died = "; ".join(f"{who} {why}" for who, p in pair if (why := died_early(p)))
    s.data.append(
        {
            "workload": wl,
            "preset": preset,
            "op": op,
            "gc_mode": mode,
            "rel_erasures": rel_e,
            "rel_response": rel_r,
            "second_write_share": share,
            "wa_std": float(std["write_amplification"]),
            "wa_reusable": float(reu["write_amplification"]),
            "queue_share_std": queued,
            "iops_std": float(std["throughput.iops"]),
            "died": died,
        }
    )
    s.rows.append(
        [
            f"{wl} †" if died else wl,
            preset,
            f"{op:.0%}",
            mode,
            f"{int(std['flash.block_erases'])} / {int(reu['flash.block_erases'])}",
            num(rel_e),
            num(rel_r),
            num(share),
            f"{num(std['write_amplification'], '.2f')} -> {num(reu['write_amplification'], '.2f')}",
            num(queued, ".2f"),
        ]
    )


def _plot(ctx: Context, s: Section, d: pd.DataFrame, modes: list[str]) -> None:
    plt = pyplot()
    if plt is None or d.empty:
        return
    fig, axes = plt.subplots(3, 1, figsize=(12, 10))
    base = d[d["gc_mode"] == modes[0]]
    labels = [
        f"{r['workload']} {r['preset'].removeprefix('reusable-')} op {r['op']:.0%}"
        for _, r in base.iterrows()
    ]
    width = 0.8 / len(modes)
    for ax, col, title, ref in (
        (axes[0], "rel_erasures", "relative erasures (Figure 7)", 2 / 3),
        (axes[1], "rel_response", "relative mean I/O response time (Figure 8)", None),
        (axes[2], "second_write_share", "share of host data in second writes", 1 / 3),
    ):
        for j, mode in enumerate(modes):
            g = d[d["gc_mode"] == mode]
            ax.bar([x + j * width for x in range(len(g))], g[col], width, label=f"gc.mode {mode}")
        if col != "second_write_share":
            ax.set_yscale("log")  # ratios: a loss of x4 and a gain of x0.25 look alike
            ax.axhline(1.0, color="k", lw=0.8)
        if ref:
            ax.axhline(ref, color="r", ls="--", lw=0.8, label="paper")
        ax.legend(fontsize=7)
        ax.set_xticks(
            [x + width * (len(modes) - 1) / 2 for x in range(len(labels))],
            labels,
            fontsize=6,
            rotation=45,
            ha="right",
        )
        ax.set_title(title, fontsize=9)
    save_figure(ctx, s, fig)


#: The design's ablations (paper Sections 6.4-6.6): label -> the keys that make the variant.
#: Each runs beside the standard SSD of the same preset, workload and seed.
REUSABLE_ABLATIONS = [
    ("the paper's design (P 95%, one retry, prefetch, parallel)", {}),
    ("P 75%, one retry on the same data", {"reusable.success_probability": 0.75}),
    ("P 100%", {"reusable.success_probability": 1.0}),
    ("P 75%, no retry", {"reusable.success_probability": 0.75, "reusable.retry": "none"}),
    ("P 95%, no retry", {"reusable.retry": "none"}),
    (
        "P 75%, retry on the next pair (extra read)",
        {"reusable.success_probability": 0.75, "reusable.retry": "extra_read"},
    ),
    ("no prefetch", {"reusable.prefetch": False}),
    ("sequential layout", {"reusable.layout": "sequential"}),
]


def reusable_ablations(ctx: Context) -> Section:
    s = Section(
        "ablations",
        "Sections 6.4-6.6: parallel second writes, prefetching and WOM encoding failures",
        paper=[
            '"In the majority of traces and setups, second writes [sequential version] increased the I/O '
            'response time, by an average of 15% and as much as 31%." (Section 6.4)',
            '"Prefetching reduced I/O response time by an additional 68% at most." (Section 6.4, Figure 9)',
            '"varying the success rate resulted in a difference in relative I/O response time of less '
            "than 1% for all traces with OP=7%, and for most traces with OP=28%. The reduction in erase "
            'operations was not affected at all." (Section 6.6, Figure 12(a), no retries)',
            '"the performance of Reusable SSD with P = 75% is almost equal to that of Reusable SSD without '
            'retries and P = 95%." (Section 6.6, Figure 12(b))',
        ],
    )
    variants = REUSABLE_ABLATIONS if ctx.scale != "smoke" else [REUSABLE_ABLATIONS[i] for i in (0, 6, 7)]
    ops = ctx.pick([0.28], [0.07, 0.28], [0.07, 0.28])
    dw = ctx.pick(1, 2, 3)
    sets: dict[str, Any] = {"run.progress": "off", "workload.kind": "zipf", "workload.zipf.alpha": 2}
    if ctx.quick:
        sets.update({"geometry.ways": 2, "geometry.blocks_per_plane": 256})
    s.setup = [
        f"zipf(2) 4 KiB writes on `reusable-small`, {dw} drive writes, queue depth 1, over-provisioning "
        f"{', '.join(f'{o:.0%}' for o in ops)}; each variant against the standard SSD "
        "(`reusable.enabled = false`) of the same setup and seed. The paper ran its traces on three "
        "setups; the encoder's overhead is half a read time per attempt, as in the paper's worst case.",
    ]
    if ctx.quick:
        s.setup.append("CI drive (quick/smoke): `reusable-small` cut to 2 chips of 256 blocks per plane.")
    jobs = [
        (
            f"ablation_{k}",
            "reusable-small",
            {
                "grid": {"capacity.overprovisioning": ops},
                "until": f"writes:{dw}dw",
                "overrides": {**sets, "reusable.enabled": True, **keys},
            },
        )
        for k, (_label, keys) in enumerate(variants)
    ]
    jobs.append(
        (
            "ablation_standard",
            "reusable-small",
            {
                "grid": {"capacity.overprovisioning": ops},
                "until": f"writes:{dw}dw",
                "overrides": {**sets, "reusable.enabled": False},
            },
        )
    )
    frames = ctx.sweeps(jobs)
    std = frames[-1].set_index("capacity.overprovisioning")
    s.columns = [
        "variant",
        "op",
        "relative erasures",
        "relative response",
        "second-write units",
        "encoding failures",
        "demand / prefetch reads",
    ]
    for (label, _), df in zip(variants, frames, strict=False):
        for d in df.to_dict("records"):
            op = d["capacity.overprovisioning"]
            reads = (int(d["techniques.reusable.demand_reads"]), int(d["techniques.reusable.prefetch_reads"]))
            rel_e = ratio(d["flash.block_erases"], std.loc[op, "flash.block_erases"])
            rel_r = ratio(d["latency_us.all.mean"], std.loc[op, "latency_us.all.mean"])
            s.data.append(
                {
                    "variant": label,
                    "op": op,
                    "rel_erasures": rel_e,
                    "rel_response": rel_r,
                    "second_write_units": int(d["techniques.reusable.units"]),
                }
            )
            s.rows.append(
                [
                    label,
                    f"{op:.0%}",
                    num(rel_e),
                    num(rel_r),
                    str(int(d["techniques.reusable.units"])),
                    str(int(d["techniques.reusable.encode_failures"])),
                    f"{reads[0]} / {reads[1]}",
                ]
            )
    s.notes.append(
        "Relative = the variant / the standard SSD at the same over-provisioning. Rows to read together: "
        "the paper's design against the sequential layout (the cost of not parallelising the pair) and "
        "against no prefetch; P 75% and P 95% without retry against each other (the encoding failure's "
        "cost) and P 75% with one retry against P 95% without (the paper's Figure 12(b))."
    )
    plt = pyplot()
    if plt is not None:
        d = pd.DataFrame(s.data)
        fig, ax = plt.subplots(figsize=(8, 3.4))
        width = 0.8 / len(ops)
        for j, op in enumerate(ops):
            g = d[d["op"] == op]
            ax.bar([x + j * width for x in range(len(g))], g["rel_response"], width, label=f"op {op:.0%}")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(
            [x + width * (len(ops) - 1) / 2 for x in range(len(variants))],
            [label for label, _ in variants],
            rotation=30,
            ha="right",
            fontsize=7,
        )
        ax.set_ylabel("response time / standard SSD")
        ax.legend(fontsize=8)
        save_figure(ctx, s, fig)
    return s
