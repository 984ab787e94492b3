"""Reusable SSD (Yadgar, Yaakobi, Schuster, FAST '15): Figures 7-8."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ._common import Context, Section, num, pyplot, ratio, save_figure

REUSABLE_TRACES = {
    "wdev_1": "msr/wdev_1.csv",
    "rsrch_1": "msr/rsrch_1.csv",
    "hm_0": "msr/hm_0-window.csv",
    "web_0": "msr/web_0-first100k.csv.gz",
    "fin1": "umass/Financial1-first10k.ascii",
    "tpcc": "mqsim/tpcc-small.trace",
    "hadoop": "blkparse/hadoop-blktrace.txt",
    "cloudphys": "cloudphysics/cloudPhysicsIO.csv",
}


def reusable_fig7(ctx: Context) -> Section:
    s = Section(
        "fig7_8",
        "Figures 7 and 8: relative erasures and relative I/O response time",
        paper=[
            '"We reduce the number of erasures by 33% in most cases, resulting in a 15% lifetime extension '
            'and an overall reduction of up to 35% in I/O response time" (Abstract)',
            '"In most traces, the reduction is even slightly better, around 40%." (Section 6, Figure 7)',
            '"I/O response time decreased by as much as 15% and 35%, with OP=28% and OP=7%, respectively." '
            "(Section 6, Figure 8)",
        ],
    )
    presets = ctx.pick(
        ["reusable-small"], ["reusable-small"], ["reusable-small", "reusable-medium", "reusable-large"]
    )
    ops = ctx.pick([0.28], [0.07, 0.28], [0.07, 0.28])
    dw = ctx.pick(1, 2, 3)
    trace_names = ctx.pick([], ["wdev_1", "hm_0", "fin1", "tpcc"], list(REUSABLE_TRACES))
    sets: dict[str, Any] = {"run.progress": "off"}
    if ctx.quick:
        sets.update({"geometry.ways": 2, "geometry.blocks_per_plane": 256})
    s.setup = [
        "Standard SSD = the same preset with `reusable.enabled = false`, same workload and seed; "
        f"{dw} drive writes; host queue depth 1; Zipf workloads from the workload module "
        '(`workload.kind = "zipf"`, 4 KiB writes); traces looped endlessly, folded with `remap_first`, '
        "replayed at their timestamps (open loop, as DiskSim replays them). The paper's MSR/Toshiba/Hynix "
        "setups are replaced by presets whose timings come from public datasheets "
        "(docs/techniques/reusable-ssd.md); the paper's traces are replaced by the ones beside the checkout.",
    ]
    if ctx.quick:
        s.setup.append("CI drive (quick/smoke): `reusable-small` cut to 2 chips of 256 blocks per plane.")
    workloads: dict[str, Any] = {
        f"zipf({a})": {"kind": "zipf", "zipf": {"alpha": a}} for a in ctx.pick([2], [1, 2], [1, 2])
    }
    missing = []
    for name in trace_names:
        p = ctx.trace(REUSABLE_TRACES[name])
        if p is None:
            missing.append(REUSABLE_TRACES[name])
            continue
        workloads[name] = {
            "kind": "trace",
            "trace": {"path": str(p), "loops": 0, "fold": "remap_first", "timestamps": "honour"},
        }
    if missing:
        s.notes.append(f"Skipped (not found under {ctx.traces}): {', '.join(missing)}.")
    s.columns = [
        "workload",
        "preset",
        "op",
        "erasures std / reusable",
        "relative erasures",
        "relative response",
        "WA std -> reusable",
    ]
    for preset in presets:
        df = ctx.sweep(
            f"fig7_{preset}",
            preset,
            grid={"reusable.enabled": [False, True], "capacity.overprovisioning": ops},
            workloads=workloads,
            until=f"writes:{dw}dw",
            overrides=sets,
        )
        for wl in workloads:
            for op in ops:
                sel = df[(df["workload"] == wl) & (df["capacity.overprovisioning"] == op)]
                std = sel[sel["reusable.enabled"] == False].iloc[0]  # noqa: E712
                reu = sel[sel["reusable.enabled"] == True].iloc[0]  # noqa: E712
                rel_e = ratio(reu["flash.block_erases"], std["flash.block_erases"])
                rel_r = ratio(reu["latency_us.all.mean"], std["latency_us.all.mean"])
                s.data.append(
                    {"workload": wl, "preset": preset, "op": op, "rel_erasures": rel_e, "rel_response": rel_r}
                )
                s.rows.append(
                    [
                        wl,
                        preset,
                        f"{op:.0%}",
                        f"{int(std['flash.block_erases'])} / {int(reu['flash.block_erases'])}",
                        num(rel_e),
                        num(rel_r),
                        f"{num(std['write_amplification'], '.2f')} -> "
                        f"{num(reu['write_amplification'], '.2f')}",
                    ]
                )
    d = pd.DataFrame(s.data)
    s.notes.append(
        f"Relative erasures {num(d.rel_erasures.min())}-{num(d.rel_erasures.max())} (paper: about 0.67, "
        f"0.60 in many traces); relative response {num(d.rel_response.min())}-{num(d.rel_response.max())} "
        "(paper: down to 0.65 at OP 7%, 0.85 at OP 28%)."
    )
    plt = pyplot()
    if plt is not None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
        labels = [
            f"{r['workload']}\n{r['preset'].removeprefix('reusable-')} op {r['op']:.0%}" for r in s.data
        ]
        for ax, col, title, ref in (
            (axes[0], "rel_erasures", "relative erasures (Figure 7)", 2 / 3),
            (axes[1], "rel_response", "relative I/O response time (Figure 8)", None),
        ):
            ax.bar(range(len(labels)), d[col])
            ax.axhline(1.0, color="k", lw=0.8)
            if ref:
                ax.axhline(ref, color="r", ls="--", lw=0.8, label="paper: -33%")
                ax.legend(fontsize=8)
            ax.set_xticks(range(len(labels)), labels, fontsize=7, rotation=45, ha="right")
            ax.set_title(title)
        save_figure(ctx, s, fig)
    return s


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
