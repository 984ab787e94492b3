"""FT-PASSD (Lee et al., IEEE Access 2020): the metadata memory and Figures 13-14 (the micro-benchmarks).
The traces (Figures 15-16) are in `ftpassd_traces`."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ._common import MIB, Context, Section, num, pct, pyplot, ratio, save_figure

FTPASSD_POLICIES = [
    ("ocssd", "OCSSD"),
    ("ft_passd_no_shift", "FT-PASSD (w/o shift)"),
    ("ft_passd", "FT-PASSD (with shift)"),
]
FTPASSD_LABEL = dict(FTPASSD_POLICIES)


def _periodic(size: int) -> dict[str, Any]:
    """FT-PASSD's micro-benchmark: write commands of `size` bytes, one a second, sequential."""
    return {
        "kind": "periodic",
        "request_size": size,
        "periodic": {"interval_ns": 1_000_000_000},
        "arrival": {"process": "closed"},
    }


FTPASSD_MICRO = {
    "geometry.blocks_per_plane": 16,
    "capacity.overprovisioning": 1.0,
    "ftl.integrity_oracle": True,
    "run.progress": "off",
}


FIG14_PAPER = [
    '"For OCSSD, the average response time is constant, whereas for FT-PASSD, the response time '
    'decreases as the size of the buffer increases." (Figure 14(a), partial writes)',
    '"Both OCSSD and FT-PASSD provide similar response times." (Figure 14(b), sequential writes)',
    '"(d) shows that the maximum response time of FT-PASSD (w/o shift) is significantly higher than '
    'that of other environments" (Figure 14(d))',
]

#: The pblk-like host path for Figure 14: a command on one parallel unit (chip), and as many
#: commands in flight as there are chips (pblk sends one write at a time to each).
PBLK_PATH = {"open_channel.placement": "chunk", "host.queue_depth": 8}


def ftpassd_fig14(ctx: Context) -> Section:
    s = Section("fig14", "Figure 14: partial and sequential writes, one program failure", paper=FIG14_PAPER)
    return _fig14(ctx, s, "fig14", {}, ctx.pick([256, 2048], [256, 2048], [256, 512, 1024, 2048]))


def ftpassd_fig14_pblk(ctx: Context) -> Section:
    s = Section(
        "fig14_pblk",
        "Figure 14 on the pblk-like host path: a command on one chip, one write in flight per chip",
        paper=FIG14_PAPER,
    )
    s.setup = [
        "As Figure 14, but the host FTL writes each command to one parallel unit (a chip; "
        '`open_channel.placement = "chunk"`, the next command on the next chip) and keeps up to 8 commands '
        "in flight (`host.queue_depth = 8`: pblk sends one write at a time to each parallel unit, and the "
        "drive has 8). The paper's Table 3 makes a parallel unit a chip (24 GB) and a chunk a block (24 MB); "
        "it does not say how the host spreads a command.",
    ]
    return _fig14(
        ctx, s, "fig14_pblk", PBLK_PATH, ctx.pick([256, 2048], [256, 512, 1024, 2048], [256, 512, 1024, 2048])
    )


def ftpassd_fig14_unit(ctx: Context) -> Section:
    s = Section(
        "fig14_unit",
        "Figure 14 by the host's minimum write unit (pblk's min_write_pgs)",
        paper=FIG14_PAPER[:2],
    )
    units = ctx.pick([16, 128], [16, 128, 1024], [16, 32, 64, 128, 256, 1024])
    buffers = ctx.pick([256, 2048], [256, 2048], [256, 512, 1024, 2048])
    commands = ctx.pick(6, 8, 40)
    s.setup = [
        "As Figure 14 (striped path, no host buffer), with the host's minimum write unit per parallel "
        "unit `open_channel.min_write_kib` at each value: the host writes a whole unit of consecutive data "
        "to a chip before the stripe moves on, and completes a command's last unit with empty pages. "
        "pblk's value is the device's optimal write size (`min_write_pgs = geo->ws_opt`, Linux "
        "`pblk-init.c`); the kernel gives an OCSSD 1.2 device one flash page (16 KiB here, the default "
        "path), an OCSSD 2.0 device reports its own. The paper gives neither. "
        f"{commands} commands; OCSSD and FT-PASSD (with shift).",
    ]
    df = ctx.sweep(
        "fig14_unit",
        "ftpassd-paper",
        grid={
            "open_channel.min_write_kib": units,
            "open_channel.write_buffer_kib": buffers,
            "open_channel.device_policy": ["ocssd", "ft_passd"],
        },
        workloads={"partial 1 MiB": _periodic(MIB), "sequential 16 MiB": _periodic(16 * MIB)},
        until=f"requests:{commands}",
        overrides={**FTPASSD_MICRO, "failures.program_fail_at": [[0, 40]]},
    )
    s.columns = ["workload", "write unit", "buffer/way", "OCSSD mean (ms)", "FT-PASSD mean (ms)", "vs OCSSD"]
    for wl in ("partial 1 MiB", "sequential 16 MiB"):
        for unit in units:
            for buf in buffers:
                pick = df[
                    (df["workload"] == wl)
                    & (df["open_channel.min_write_kib"] == unit)
                    & (df["open_channel.write_buffer_kib"] == buf)
                ]
                mean = {
                    p: pick[pick["open_channel.device_policy"] == p].iloc[0]["latency_us.write.mean"] / 1000
                    for p in ("ocssd", "ft_passd")
                }
                s.data.append(
                    {
                        "workload": wl,
                        "unit_kib": unit,
                        "buffer_kib": buf,
                        "ocssd_ms": mean["ocssd"],
                        "ft_passd_ms": mean["ft_passd"],
                    }
                )
                s.rows.append(
                    [
                        wl,
                        f"{unit} KiB",
                        f"{buf} KiB",
                        num(mean["ocssd"], ".1f"),
                        num(mean["ft_passd"], ".1f"),
                        pct(ratio(mean["ft_passd"], mean["ocssd"]) - 1),
                    ]
                )
    plt = pyplot()
    if plt is not None:
        d = pd.DataFrame(s.data)
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
        for ax, wl in zip(axes, ("partial 1 MiB", "sequential 16 MiB"), strict=True):
            for buf in buffers:
                g = d[(d.workload == wl) & (d.buffer_kib == buf)]
                ax.plot(g.unit_kib, g.ft_passd_ms, marker="o", label=f"FT-PASSD, {buf} KiB/way")
            g = d[(d.workload == wl) & (d.buffer_kib == buffers[0])]
            ax.plot(g.unit_kib, g.ocssd_ms, color="k", marker="s", label="OCSSD")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("minimum write unit (KiB)")
            ax.set_ylabel("mean write latency (ms)")
            ax.set_title(wl)
            ax.legend(fontsize=7)
        save_figure(ctx, s, fig)
    return s


def _fig14(ctx: Context, s: Section, name: str, path: dict[str, Any], buffers: list[int]) -> Section:
    commands = ctx.pick(6, 8, 40)
    s.setup = [
        'Workload `workload.kind = "periodic"`: one write command a second at consecutive addresses, 1 MiB '
        "(partial) or 16 MiB (sequential), as Figure 14; "
        f"{commands} commands. Drive `ftpassd-paper` cut to 16 blocks per chip (the benchmarks touch only "
        "the first chunks), over-provisioning 100%, integrity oracle on; one program failure at page 40 of "
        "chunk 0 of chip 0 (`failures.program_fail_at = [[0, 40]]`; the paper: failures at an arbitrary low "
        "probability).",
        *s.setup,
    ]
    df = ctx.sweep(
        name,
        "ftpassd-paper",
        grid={
            "open_channel.write_buffer_kib": buffers,
            "open_channel.device_policy": [p for p, _ in FTPASSD_POLICIES],
        },
        workloads={"partial 1 MiB": _periodic(MIB), "sequential 16 MiB": _periodic(16 * MIB)},
        until=f"requests:{commands}",
        overrides={**FTPASSD_MICRO, **path, "failures.program_fail_at": [[0, 40]]},
    )
    s.columns = [
        "workload",
        "buffer/way",
        "policy",
        "mean write (ms)",
        "vs OCSSD",
        "max write (ms)",
        "max unprogrammed (KiB)",
    ]
    for wl in ("partial 1 MiB", "sequential 16 MiB"):
        for buf in buffers:
            pick = df[(df["workload"] == wl) & (df["open_channel.write_buffer_kib"] == buf)]
            oc_mean = (
                pick[pick["open_channel.device_policy"] == "ocssd"].iloc[0]["latency_us.write.mean"] / 1000
            )
            for p, label in FTPASSD_POLICIES:
                r = pick[pick["open_channel.device_policy"] == p].iloc[0]
                mean, mx = r["latency_us.write.mean"] / 1000, r["latency_us.write.max"] / 1000
                unp = r["open_channel.device.max_unprogrammed_bytes"] / 1024
                s.data.append({"workload": wl, "buffer_kib": buf, "policy": p, "mean_ms": mean, "max_ms": mx})
                s.rows.append(
                    [
                        wl,
                        f"{buf} KiB",
                        label,
                        num(mean, ".1f"),
                        pct(ratio(mean, oc_mean) - 1),
                        num(mx, ".1f"),
                        num(unp, ".0f"),
                    ]
                )
    plt = pyplot()
    if plt is not None:
        d = pd.DataFrame(s.data)
        fig, axes = plt.subplots(2, 2, figsize=(10, 6))
        for j, wl in enumerate(("partial 1 MiB", "sequential 16 MiB")):
            for i, (col, what) in enumerate((("mean_ms", "average"), ("max_ms", "maximum"))):
                ax = axes[i][j]
                width = 0.8 / 3
                for k, (p, label) in enumerate(FTPASSD_POLICIES):
                    g = d[(d.workload == wl) & (d.policy == p)]
                    ax.bar([x + k * width for x in range(len(g))], g[col], width, label=label)
                ax.set_xticks([x + width for x in range(len(buffers))], [f"{b} KiB" for b in buffers])
                ax.set_ylabel(f"{what} latency (ms)")
                ax.set_title(f"({'abcd'[2 * i + j]}) {wl}")
                ax.legend(fontsize=7)
        save_figure(ctx, s, fig)
    return s


def ftpassd_fig13(ctx: Context) -> Section:
    s = Section(
        "fig13",
        "Figure 13: maximum latency against the failed page offset",
        paper=[
            '"the page copy time displayed as a solid line is proportional to the failed page offset" '
            "(Figure 13)",
            '"(a) shows the effect of the write buffer size, and the larger the buffer, the smaller is the '
            "maximum response time; (b) shows the effect of the write command size, and the larger the "
            'command size, the larger is the maximum response time." (Figure 13)',
        ],
    )
    offsets = ctx.pick([0, 256], [0, 256, 512], [0, 128, 256, 384, 512])
    buffers = ctx.pick([512, 2048], [512, 1024, 2048], [512, 1024, 2048])
    s.setup = [
        "As Figure 14's setup; (a) 8 MiB commands a second, the failure on the first page a command writes "
        "to chip 0 at each offset, run until two commands past the failure; FT-PASSD without and with "
        "shift. Block copy + retry time = the w/o-shift device's longest retry (`max_retry_us`)."
    ]
    jobs = []
    for o in offsets:
        jobs.append(
            (
                f"fig13a_offset{o}",
                "ftpassd-paper",
                dict(
                    grid={
                        "open_channel.write_buffer_kib": buffers,
                        "open_channel.device_policy": ["ft_passd_no_shift", "ft_passd"],
                    },
                    workloads={"8 MiB": _periodic(8 * MIB)},
                    until=f"requests:{o // 64 + 3}",
                    overrides={**FTPASSD_MICRO, "failures.program_fail_at": [[0, o]]},
                ),
            )
        )
    frames = ctx.sweeps(jobs)
    s.columns = ["policy", "buffer/way", *[f"offset {o}" for o in offsets]]
    copy_row = []
    for p in ("ft_passd_no_shift", "ft_passd"):
        for buf in buffers:
            cells = []
            for o, df in zip(offsets, frames, strict=True):
                r = df[
                    (df["open_channel.write_buffer_kib"] == buf) & (df["open_channel.device_policy"] == p)
                ].iloc[0]
                mx = r["latency_us.write.max"] / 1000
                cells.append(num(mx, ".1f"))
                s.data.append({"policy": p, "buffer_kib": buf, "offset": o, "max_ms": mx})
                if p == "ft_passd_no_shift" and buf == buffers[0]:
                    copy_row.append(r["open_channel.device.max_retry_us"] / 1000)
            s.rows.append([FTPASSD_LABEL[p], f"{buf} KiB", *cells])
    s.rows.append(["block copy + retry time (w/o shift)", "", *[num(c, ".1f") for c in copy_row]])
    s.notes.append("Maximum write latency in ms (8 MiB a second).")
    plt = pyplot()
    if plt is not None:
        d = pd.DataFrame(s.data)
        fig, ax = plt.subplots(figsize=(6.5, 3.6))
        for (p, buf), g in d.groupby(["policy", "buffer_kib"]):
            ax.plot(
                g["offset"],
                g["max_ms"],
                marker="o",
                ls="-" if p == "ft_passd_no_shift" else ":",
                label=f"{FTPASSD_LABEL[p]}, {buf} KiB",
            )
        ax.plot(offsets, copy_row, color="k", lw=2, label="block copy + retry (w/o shift)")
        ax.set_xlabel("failed page offset (copied pages)")
        ax.set_ylabel("maximum latency (ms)")
        ax.legend(fontsize=7)
        save_figure(ctx, s, fig)
    return s


def ftpassd_memory(ctx: Context) -> Section:
    s = Section(
        "memory",
        "Section V: metadata memory of the program-failure manager",
        paper=[
            '"The memory requirement was calculated based on the experimental environment (8192 blocks, '
            "1536 pages in a block). Block mapping for address encoding requires 13 bits per block, and the "
            "shift table requires 11 bits per block, i.e., the block-mapping table and the shift table "
            "require 13 kB and 11 kB of memory, respectively. In addition, assuming that page mapping is "
            "built into the environment, the number of pages is 12 M; thus, approximately 40 MB of memory "
            'is required." (Section V)',
        ],
    )
    sets = {"run.progress": "off", "ftl.timing": False}
    summary = ctx.run("ftpassd-paper", until="requests:1", overrides=sets).summary
    cfg = ctx.resolve("ftpassd-paper", overrides=sets)
    g = cfg["geometry"]
    blocks = g["channels"] * g["ways"] * g["dies"] * g["planes"] * g["blocks_per_plane"]
    mem = summary["open_channel"]["memory"]
    s.setup = [
        f"`ftpassd-paper` as it is: {blocks} blocks of {g['pages_per_block']} pages of "
        f"{cfg['flash']['page_size'] // 1024} KiB, {cfg['open_channel']['reserved_blocks']} reserved blocks "
        "per parallel unit (not mapped: the tables cover the others). The figures are "
        "`summary.open_channel.memory` of a one-request run: entry bits = ceil(log2(what an entry must "
        "tell apart)), bytes = entries x bits / 8. The open block lists hold nothing until a program "
        "fails (Figures 13-14 exercise them).",
    ]
    pages = blocks * g["pages_per_block"]  # a page map would cover every block
    rows = [
        (
            "block map",
            mem["block_map_bits_per_entry"],
            mem["entries"],
            mem["block_map_bytes"],
            "13 bits, 13 kB",
        ),
        (
            "shift table",
            mem["shift_bits_per_entry"],
            mem["entries"],
            mem["shift_table_bytes"],
            "11 bits, 11 kB",
        ),
        (
            "block map + shift table",
            mem["block_map_bits_per_entry"] + mem["shift_bits_per_entry"],
            mem["entries"],
            mem["block_map_bytes"] + mem["shift_table_bytes"],
            "24 kB",
        ),
        (
            "page map of the same drive",
            mem["page_map_bits_per_entry"],
            pages,
            mem["page_map_bytes"],
            "12 M pages, ~40 MB",
        ),
    ]
    s.columns = ["table", "bits per entry", "entries", "bytes", "paper"]
    for name, bits, entries, size, paper in rows:
        s.data.append({"table": name, "bits": int(bits), "entries": int(entries), "bytes": int(size)})
        s.rows.append(
            [
                name,
                str(bits),
                f"{entries:,}",
                f"{size:,} ({size / 1e3:.1f} kB)" if size < 1e6 else f"{size:,} ({size / 1e6:.1f} MB)",
                paper,
            ]
        )
    s.notes.append(
        f"The host FTL's own page map as flashlife stores it (32-bit entries over the logical pages): "
        f"{summary['open_channel']['host_page_map_bytes'] / 1e6:.1f} MB. (kB and MB here are 1,000 and "
        "1,000,000 bytes, as the paper's figures read.)"
    )
    plt = pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(5.5, 2.8))
        ax.barh([r[0] for r in rows], [r[3] for r in rows])
        ax.set_xscale("log")
        ax.set_xlabel("bytes")
        save_figure(ctx, s, fig)
    return s
