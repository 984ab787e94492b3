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
