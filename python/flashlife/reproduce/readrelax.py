"""Read latency relaxation (Liu et al., extended abstract): long-period reads and hints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..sweep import load_timeseries
from ._common import Context, Section, num, pct, pyplot, ratio, save_figure

#: `tlc-3d` RBER set (PowerLawParams::tlc_3d); gamma is scaled by the read sampling.
TLC_3D = dict(epsilon=1.0e-5, alpha=3.33e-11, k=2.0, beta=5.23e-9, m=1.0, n=0.5, gamma=9.0e-13, p=1.0, q=1.0)
READ_SAMPLING = 20.0


def _readrelax_drive(small: bool) -> dict[str, Any]:
    """The 3D TLC drive of the read-relaxation experiments: full, aged to half its rating."""
    return {
        "geometry.channels": 1,
        "geometry.ways": 1,
        "geometry.dies": 1,
        "geometry.planes": 2,
        "geometry.blocks_per_plane": 64 if small else 128,
        "geometry.pages_per_block": 32,
        "flash.page_size": 16384,
        "flash.tlc.read_us": 70,
        "flash.tlc.program_us": 700,
        "flash.tlc.erase_us": 3500,
        "flash.tlc.pe_limit": 3000,
        "capacity.overprovisioning": 0.25,
        "reliability.model": "power_law",
        "reliability.rber_set": "custom",
        "reliability.power_law": dict(TLC_3D, gamma=TLC_3D["gamma"] * READ_SAMPLING),
        "reliability.base_cycles": 1500,
        "reliability.read_count_threshold": int(100_000 / READ_SAMPLING),
        "stats.interval": "30d",
        "run.progress": "off",
    }


def _readrelax_setup(small: bool) -> list[str]:
    return [
        "Drive (ours; the extended abstract gives no drive model): 3D TLC, 2 planes x "
        f"{64 if small else 128} blocks x 32 pages of 16 KiB, tR 70 us, tPROG 700 us, over-provisioning 25%, "
        "full, `tlc-3d` RBER set at `base_cycles = 1500` (half of a 3,000-cycle rating); open-loop Poisson "
        "arrivals of 16 KiB requests.",
        f"Sub-sampling: one simulated read stands for {READ_SAMPLING:g} reads and the read-disturb "
        "coefficient "
        f"is multiplied by {READ_SAMPLING:g} (exact for the linear disturb term); writes are all simulated. "
        "Rates quoted are the real ones.",
    ]


def readrelax_longterm(ctx: Context) -> Section:
    s = Section(
        "longterm",
        "Long-period random reads: long reads and data rewrites over months",
        paper=[
            '"it is observed that the ratio of long reads (over 400μs) can increase from 0.02% to 7.7%" '
            "(Key Results and Contributions)",
            '"some SSDs rewrite the data being read 40 times to eliminate all read-induced performance '
            'problem" '
            "(Key Results and Contributions)",
        ],
    )
    days = ctx.pick(45, 90, 180)
    rate = ctx.pick(20.0, 20.0, 30.0)
    small = ctx.scale != "paper"
    s.setup = _readrelax_setup(small) + [
        f"{rate:g} reads/s uniform over the drive for {days} days, no writes; reclaim `none`, `read_count` "
        f"(100,000 reads), `error_based` (the aggressive firmware). The paper measured real drives with fio "
        "for at least half a year.",
    ]
    drive = _readrelax_drive(small)
    workload = {
        "kind": "uniform",
        "read_ratio": 1.0,
        "request_size": 16384,
        "arrival": {"process": "poisson", "rate_iops": rate / READ_SAMPLING},
    }
    df = ctx.sweep(
        "longterm",
        drive,
        grid={"reliability.read_reclaim": ["none", "read_count", "error_based"]},
        workloads={"random reads": workload},
        until=f"time:{days}d",
    )
    s.columns = [
        "reclaim",
        "long reads (> 400 us) per 30 days",
        "overall",
        "data rewritten (x)",
        "reclaim erases",
        "P/E budget spent",
        "uncorrectable",
        "read mean us",
    ]
    months: dict[str, list[float]] = {}
    for d in df.to_dict("records"):
        policy = d["reliability.read_reclaim"]
        ts = load_timeseries(ctx.data_dir("longterm"), d["point"])
        prev = ts["time_s"].shift(1).fillna(0.0)
        full = ts[(ts["time_s"] - prev) > 20 * 86400]
        monthly = [float(x) for x in full["long_read_share"]]
        months[policy] = monthly
        logical_units = d["capacity.logical_bytes"] / d["capacity.mapping_unit_bytes"]
        rewrites = d["flash.unit_programs_by_cause.reclaim"] / logical_units
        s.data.append(
            {
                "policy": policy,
                "monthly_long_read_share": monthly,
                "long_read_share": d["reliability.long_read_share"],
                "rewrites": rewrites,
                "reclaim_erases": d["reliability.reclaim_erases"],
            }
        )
        s.rows.append(
            [
                policy,
                " / ".join(f"{100 * x:.2f}%" for x in monthly) or "(under a month)",
                f"{100 * d['reliability.long_read_share']:.3f}%",
                num(rewrites, ".1f"),
                str(int(d["reliability.reclaim_erases"])),
                f"{100 * d['reliability.reclaim_share_of_pe_budget']:.3f}%",
                str(int(d["reliability.uncorrectable_reads"])),
                num(d["latency_us.read.mean"], ".1f"),
            ]
        )
    none = months.get("none", [])
    rewrites = {d["policy"]: d["rewrites"] for d in s.data}
    s.extra.append(
        (
            "Beside the paper",
            ["claim (paper)", "paper", "ours (this run)"],
            [
                [
                    "long reads grow over months (no reclaim)",
                    "0.02% to 7.7%",
                    f"{100 * none[0]:.2f}% to {100 * none[-1]:.2f}% over {len(none)} months"
                    if none
                    else "n/a",
                ],
                [
                    "reclaim rewrites the data being read",
                    "40 times",
                    f"read_count {num(rewrites.get('read_count', float('nan')), '.1f')} times, error_based "
                    f"{num(rewrites.get('error_based', float('nan')), '.1f')} times in {days} days",
                ],
            ],
        )
    )
    plt = pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 3.4))
        for policy, vals in months.items():
            ax.plot(range(1, len(vals) + 1), [100 * v for v in vals], marker="o", label=policy)
        ax.set_xlabel("month")
        ax.set_ylabel("long reads (> 400 us), %")
        ax.set_title("Long reads per 30 days")
        ax.legend(fontsize=8)
        save_figure(ctx, s, fig)
    return s


POLICIES_HINTS = [
    ("aggressive (error_based)", {"reliability.read_reclaim": "error_based"}),
    ("no reclaim", {"reliability.read_reclaim": "none"}),
    ("hints 400 us", {"reliability.read_reclaim": "hinted", "reliability.hints": [{"budget_us": 400}]}),
    ("hints 250 us", {"reliability.read_reclaim": "hinted", "reliability.hints": [{"budget_us": 250}]}),
]


def _logical_bytes(ctx: Context, cfg: Mapping[str, Any]) -> int:
    return int(
        ctx.run(cfg, until="requests:1", overrides={"ftl.timing": False}).summary["capacity"]["logical_bytes"]
    )


def readrelax_hints(ctx: Context) -> Section:
    s = Section(
        "hints",
        "File server and read/write mix: aggressive reclaim, no reclaim and hints",
        paper=[
            '"the tested file-server application can reduce about 56% spent-lifetime caused by read-induced '
            'rewrites with only 2% performance overhead" (Key Results and Contributions)',
        ],
    )
    days = ctx.pick(10, 45, 120)
    rate = ctx.pick(100.0, 100.0, 200.0)
    small = ctx.scale != "paper"
    drive = _readrelax_drive(small)
    logical = _logical_bytes(ctx, drive)
    reads = rate / READ_SAMPLING
    scenarios = {
        # 80% of the reads on the first fifth of the drive, 0.1 drive writes a day anywhere.
        "file server": (
            {"kind": "hotcold", "read_ratio": 1.0, "hotcold": {"hot_requests": 0.8, "hot_space": 0.2}},
            {"kind": "uniform", "read_ratio": 0.0},
            0.1 * logical / 16384 / 86400,
        ),
        # Uniform reads, 1 drive write a day on a quarter of the drive (its first quarter).
        "read/write mix": (
            {"kind": "uniform", "read_ratio": 1.0},
            {"kind": "uniform", "read_ratio": 0.0, "working_set": 0.25},
            1.0 * logical / 16384 / 86400,
        ),
    }
    if ctx.scale == "smoke":
        scenarios.pop("read/write mix")
    s.setup = _readrelax_setup(small) + [
        f"{rate:g} reads/s for {days} days. File server: 80% of the reads on the first fifth of the drive, "
        "0.1 drive writes a day anywhere; read/write mix: uniform reads, 1 drive write a day on the first "
        'quarter. Both are `workload.kind = "mix"` of a read part and a write part weighted by their rates, '
        "Poisson arrivals at the sum.",
        "Hints: a hint command over the whole drive (`reliability.hints = [{budget_us = 400}]`) with "
        '`reliability.read_reclaim = "hinted"`; the paper\'s budget and drive are not given.',
        "Spent lifetime by reads = reclaim erases / (blocks x rated cycles).",
    ]
    jobs = []
    for name, (rd, wr, writes) in scenarios.items():
        wl = {
            "kind": "mix",
            "mix": [dict(rd, weight=reads, request_size=16384), dict(wr, weight=writes, request_size=16384)],
            "arrival": {"process": "poisson", "rate_iops": reads + writes},
        }
        for i, (_label, o) in enumerate(POLICIES_HINTS):
            jobs.append(
                (
                    f"hints_{name.split()[0].replace('/', '')}_{i}",
                    drive,
                    dict(workloads={name: wl}, until=f"time:{days}d", overrides=o),
                )
            )
    frames = ctx.sweeps(jobs)
    s.columns = [
        "scenario",
        "policy",
        "reclaim erases",
        "spent lifetime by reads",
        "read mean us",
        "read p99 us",
        "long reads",
        "uncorrectable",
    ]
    k = 0
    for name in scenarios:
        base = None
        for label, _ in POLICIES_HINTS:
            d = frames[k].iloc[0]
            k += 1
            erases = float(d["reliability.reclaim_erases"])
            mean = float(d["latency_us.read.mean"])
            if base is None:
                base = (erases, mean)
            e_rel = ratio(erases, base[0]) - 1
            m_rel = ratio(mean, base[1]) - 1
            s.data.append(
                {
                    "scenario": name,
                    "policy": label,
                    "reclaim_erases": erases,
                    "erases_vs_aggressive": e_rel,
                    "read_mean_vs_aggressive": m_rel,
                    "spent_lifetime": d["reliability.reclaim_share_of_pe_budget"],
                }
            )
            s.rows.append(
                [
                    name,
                    label,
                    f"{int(erases)} ({pct(e_rel)})",
                    f"{100 * d['reliability.reclaim_share_of_pe_budget']:.3f}%",
                    f"{mean:.1f} ({pct(m_rel)})",
                    num(d["latency_us.read.p99"], ".1f"),
                    f"{100 * d['reliability.long_read_share']:.3f}%",
                    str(int(d["reliability.uncorrectable_reads"])),
                ]
            )
    s.notes.append("Percentages in brackets: against the aggressive reclaim (the paper's baseline).")
    beside = []
    for d in s.data:
        if d["policy"].startswith("hints"):
            beside.append(
                [
                    f"{d['scenario']}, {d['policy']}",
                    "-56% at 2% cost (file server)",
                    f"{pct(d['erases_vs_aggressive'])} at "
                    f"{pct(d['read_mean_vs_aggressive'])} mean read latency",
                ]
            )
    s.extra.append(
        ("Beside the paper", ["spent lifetime by reads, against aggressive", "paper", "ours"], beside)
    )
    plt = pyplot()
    if plt is not None:
        d = pd.DataFrame(s.data)
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
        for ax, col, title in (
            (axes[0], "erases_vs_aggressive", "spent lifetime by reads vs aggressive"),
            (axes[1], "read_mean_vs_aggressive", "mean read latency vs aggressive"),
        ):
            width = 0.8 / len(scenarios)
            for j, name in enumerate(scenarios):
                g = d[d.scenario == name]
                ax.bar([x + j * width for x in range(len(g))], 100 * g[col], width, label=name)
            ax.set_xticks(
                [x + width / 2 for x in range(len(POLICIES_HINTS))],
                [p for p, _ in POLICIES_HINTS],
                fontsize=7,
            )
            ax.axhline(0, color="k", lw=0.8)
            ax.set_ylabel("%")
            ax.set_title(title)
            ax.legend(fontsize=7)
        save_figure(ctx, s, fig)
    return s
