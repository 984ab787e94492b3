"""FT-PASSD (Lee et al., IEEE Access 2020) on block I/O traces: Figure 15 (write response time
with one program failure), Figure 16 (what the device saw at the failure) and the same traces
under load (host queue depth 32, timestamps accelerated)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ._common import Context, Section, num, pct, pyplot, ratio, save_figure
from .ftpassd import FTPASSD_LABEL, FTPASSD_POLICIES

FTPASSD_TRACES = [
    ("hm_0 (window)", "msr/hm_0-window.csv"),
    ("rsrch_1", "msr/rsrch_1.csv"),
    ("wdev_1", "msr/wdev_1.csv"),
    ("wdev_3", "msr/wdev_3.csv"),
    ("web_0 (first 100k)", "msr/web_0-first100k.csv.gz"),
    ("Financial1 (first 10k)", "umass/Financial1-first10k.ascii"),
    ("tpcc (MQSim)", "mqsim/tpcc-small.trace"),
]

#: The drive every trace runs on (not the micro-benchmarks' cut: the traces spread over it).
TRACE_DRIVE = {
    "geometry.blocks_per_plane": 64,
    "capacity.overprovisioning": 0.25,
    "ftl.integrity_oracle": True,
    "run.progress": "off",
}

TRACE_SETUP = (
    "`ftpassd-paper` cut to 64 blocks per chip (12 GiB), 25% over-provisioning (not in the paper), "
    "integrity oracle on, traces at their recorded timestamps folded modulo onto the drive. Migration "
    "(with shift) starts after `ftpassd.idle_timeout_us` (2 ms) without a command and stops after the copy "
    "in progress when one arrives. A failure-free OCSSD run counts the trace's page programs P; each policy "
    "then runs with `failures.program_fail_nth_random_within = P` and seed 1, so the same program fails "
    "under all three. The paper's eight MSR volumes are not all available: we use the traces beside the "
    "checkout."
)


def _found(ctx: Context, s: Section, names: list[str]) -> list[tuple[str, Path]]:
    """The traces among `names` under the traces folder; the section is skipped if there are none."""
    found, missing = [], []
    for n, rel in FTPASSD_TRACES:
        if n not in names:
            continue
        p = ctx.trace(rel)
        (found.append((n, p)) if p is not None else missing.append(rel))
    if not found:
        s.skipped = f"no trace found under {ctx.traces} (looked for {', '.join(missing)})"
    elif missing:
        s.notes.append(f"Skipped (not found under {ctx.traces}): {', '.join(missing)}.")
    return found


def _workload(name: str, path: Path, time_scale: float) -> dict[str, dict[str, Any]]:
    # The presets' Poisson arrivals (for their default synthetic workload) would re-time the
    # trace: closed here, so that the trace's own timestamps (times `time_scale`) are honoured.
    return {
        name: {
            "kind": "trace",
            "trace": {"path": str(path), "time_scale": time_scale},
            "arrival": {"process": "closed"},
        }
    }


def _policy_rows(df: pd.DataFrame) -> dict[str, pd.Series]:
    return {p: df[df["open_channel.device_policy"] == p].iloc[0] for p, _ in FTPASSD_POLICIES}


def ftpassd_fig15(ctx: Context) -> Section:
    s = Section(
        "fig15",
        "Figure 15: write response time on block I/O traces, one program failure",
        paper=[
            '"The experimental results indicated an average reduction of 45.6% in write response time in '
            'certain workloads." (Section VI; Figure 15(a))',
            '"reduces the average write response time by up to 88%" (Abstract)',
        ],
    )
    # Quick: hm_0, the one of the paper's eight MSR volumes beside the checkout, and two others.
    names = ctx.pick(["wdev_1"], ["hm_0 (window)", "wdev_1", "wdev_3"], [n for n, _ in FTPASSD_TRACES])
    buffers = ctx.pick([256], [256], [256, 512, 1024])
    s.setup = [
        TRACE_SETUP + " Host queue depth 1 (the preset). The last column counts the migration copies a "
        "command arrived during and the longest a host operation waited for one.",
    ]
    # Figure 16 reads these runs: (trace, buffer, P, the three policies' rows).
    runs: list[tuple[str, int, int, dict[str, pd.Series]]] = []
    ctx.shared["fig15"] = runs
    found = _found(ctx, s, names)
    if not found:
        return s
    s.columns = [
        "trace",
        "buffer/way",
        "policy",
        "writes",
        "mean write (ms)",
        "vs OCSSD",
        "max write (ms)",
        "vs OCSSD",
        "copies preempted, longest wait for one (ms)",
    ]
    for i, (name, path) in enumerate(found):
        wl = _workload(name, path, 1.0)
        dry = ctx.sweep(
            f"fig15_{i}_dry",
            "ftpassd-paper",
            grid={"open_channel.write_buffer_kib": buffers},
            workloads=wl,
            until="end",
            overrides={**TRACE_DRIVE, "open_channel.device_policy": "ocssd", "failures.program_fail_nth": 0},
        )
        for buf in buffers:
            programs = int(
                dry[dry["open_channel.write_buffer_kib"] == buf]["integrity.physical_page_programs"].iloc[0]
            )
            if programs == 0:
                s.notes.append(f"{name}: no page programs, skipped.")
                continue
            df = ctx.sweep(
                f"fig15_{i}_{buf}",
                "ftpassd-paper",
                grid={"open_channel.device_policy": [p for p, _ in FTPASSD_POLICIES]},
                workloads=wl,
                until="end",
                overrides={
                    **TRACE_DRIVE,
                    "open_channel.write_buffer_kib": buf,
                    "failures.program_fail_nth_random_within": programs,
                },
            )
            rows = _policy_rows(df)
            runs.append((name, buf, programs, rows))
            oc = rows["ocssd"]
            for p, label in FTPASSD_POLICIES:
                r = rows[p]
                mean_rel = ratio(r["latency_us.write.mean"], oc["latency_us.write.mean"]) - 1
                max_rel = ratio(r["latency_us.write.max"], oc["latency_us.write.max"]) - 1
                s.data.append(
                    {
                        "trace": name,
                        "buffer_kib": buf,
                        "policy": p,
                        "mean_vs_ocssd": mean_rel,
                        "max_vs_ocssd": max_rel,
                    }
                )
                s.rows.append(
                    [
                        name,
                        f"{buf} KiB",
                        label,
                        str(int(r["host.write_requests"])),
                        num(r["latency_us.write.mean"] / 1000, ".3f"),
                        pct(mean_rel),
                        num(r["latency_us.write.max"] / 1000, ".2f"),
                        pct(max_rel),
                        f"{int(r['open_channel.device.migration_preemptions'])}, "
                        + num(r["open_channel.device.max_migration_wait_us"] / 1000, ".2f"),
                    ]
                )
    d = pd.DataFrame(s.data)
    if len(d):
        cut = d[d.policy == "ft_passd"]["mean_vs_ocssd"]
        s.notes.append(
            f"FT-PASSD (with shift) against OCSSD, mean write response: {pct(cut.mean())} on average over "
            f"{len(cut)} runs ({pct(cut.max())} .. {pct(cut.min())}); paper: -45.6% on average, up to -88%."
        )
        plt = pyplot()
        if plt is not None:
            fig, ax = plt.subplots(figsize=(7, 3.4))
            g = d[d.buffer_kib == buffers[0]]
            traces = list(dict.fromkeys(g.trace))
            width = 0.8 / 3
            for k, (p, label) in enumerate(FTPASSD_POLICIES):
                vals = [
                    1 + float(g[(g.trace == t) & (g.policy == p)]["mean_vs_ocssd"].iloc[0]) for t in traces
                ]
                ax.bar([x + k * width for x in range(len(traces))], vals, width, label=label)
            ax.set_xticks([x + width for x in range(len(traces))], traces, fontsize=8)
            ax.set_ylabel("mean write response / OCSSD")
            ax.set_title(f"Figure 15(a), {buffers[0]} KiB per way")
            ax.legend(fontsize=7)
            save_figure(ctx, s, fig)
    return s


def _use(r: pd.Series) -> float:
    """The failed way's buffer use at the failure (NaN when no program failed)."""
    return float(r["open_channel.device.buffer_utilisation_at_failure"])


def ftpassd_fig16(ctx: Context) -> Section:
    s = Section(
        "fig16",
        "Figure 16: at the program failure: pages copied, retry time, buffer utilisation",
        paper=[
            '"In FT-PASSD (w/o shift), considerable time was wasted until the program was retried because '
            "the page was copied before retrying the program. Even in prn_0 where the fewest page copies "
            'occurred, it took approximately 250 ms or more to finally complete the program." (Figure 16(a))',
            '"as FT-PASSD (with shift) immediately retries the program, all operations were completed within '
            '10 ms regardless of the number of pages to be copied." (Figure 16(a))',
            '"In workloads with a particularly long response delay (hm_0, prn_1, proj_2), buffer utilization '
            'is high at the time of program failure." (Figure 16(b))',
        ],
    )
    s.setup = [
        "Figure 15's runs (same traces, buffers and failure point). Failed page offset: the page of its "
        "block the failed program wrote (w/o shift copies the pages before it). Retry time: from the "
        "failure's status to the end of the successful retry (`max_retry_us`). Buffer use: the failed way's "
        "buffer when the failure's status is read, the failed page included "
        "(`buffer_utilisation_at_failure`); the paper does not define it further.",
    ]
    runs = ctx.shared.get("fig15", [])
    if not runs:
        s.skipped = "no Figure 15 run to read (no trace found)"
        return s
    s.columns = [
        "trace",
        "buffer/way",
        "page programs P",
        "failed page offset",
        "w/o shift: copied pages",
        "w/o shift: retry (ms)",
        "with shift: retry (ms)",
        "with shift: migrated pages",
        "buffer use: OCSSD / w/o shift / with shift",
    ]
    for name, buf, programs, rows in runs:
        ns, ws, oc = rows["ft_passd_no_shift"], rows["ft_passd"], rows["ocssd"]
        d = {
            "trace": name,
            "buffer_kib": buf,
            "programs": programs,
            "failed_page": {p: float(rows[p]["open_channel.device.first_failure_page"]) for p in rows},
            "copied_pages": int(ns["open_channel.device.foreground_copied_pages"]),
            "retry_no_shift_ms": ns["open_channel.device.max_retry_us"] / 1000,
            "retry_shift_ms": ws["open_channel.device.max_retry_us"] / 1000,
            "migrated_pages": int(ws["open_channel.device.migrated_pages"]),
            "use": {p: _use(rows[p]) for p in rows},
        }
        s.data.append(d)
        s.rows.append(
            [
                name,
                f"{buf} KiB",
                f"{programs:,}",
                num(ns["open_channel.device.first_failure_page"], ".0f"),
                str(d["copied_pages"]),
                num(d["retry_no_shift_ms"], ".2f"),
                num(d["retry_shift_ms"], ".2f"),
                str(d["migrated_pages"]),
                " / ".join(pct(_use(r)).lstrip("+") for r in (oc, ns, ws)),
            ]
        )
    worst = max(s.data, key=lambda d: d["retry_no_shift_ms"])
    least = min(d["retry_no_shift_ms"] for d in s.data)
    shift = max(d["retry_shift_ms"] for d in s.data)
    s.notes.append(
        f"Retry time w/o shift {num(least, '.1f')} .. {num(worst['retry_no_shift_ms'], '.1f')} ms "
        f"({worst['trace']}, {worst['copied_pages']} pages copied); with shift at most "
        f"{num(shift, '.2f')} ms. Paper: w/o shift about 250 ms or more on every trace, with shift "
        "within 10 ms."
    )
    plt = pyplot()
    if plt is not None:
        g = [d for d in s.data if d["buffer_kib"] == runs[0][1]]
        labels = [d["trace"] for d in g]
        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.4))
        xs = range(len(g))
        a.bar([x - 0.2 for x in xs], [d["retry_no_shift_ms"] for d in g], 0.4, label="w/o shift")
        a.bar([x + 0.2 for x in xs], [d["retry_shift_ms"] for d in g], 0.4, label="with shift")
        a.set_yscale("log")
        a.set_ylabel("retry time (ms)")
        a.set_title(f"(a) retry time, {runs[0][1]} KiB per way")
        a.set_xticks(list(xs), labels, fontsize=7, rotation=20)
        a.legend(fontsize=7)
        width = 0.8 / 3
        for k, (p, label) in enumerate(FTPASSD_POLICIES):
            b.bar([x + k * width for x in xs], [100 * d["use"][p] for d in g], width, label=label)
        b.set_ylabel("buffer utilisation at the failure (%)")
        b.set_title("(b) buffer utilisation")
        b.set_xticks([x + width for x in xs], labels, fontsize=7, rotation=20)
        b.legend(fontsize=7)
        save_figure(ctx, s, fig)
    return s


#: The two FT-PASSD policies, compared with OCSSD.
POLICIES = ("ft_passd_no_shift", "ft_passd")


def ftpassd_load(ctx: Context) -> Section:
    s = Section(
        "load",
        "Figure 15 under load: host queue depth 32 and timestamps accelerated",
        paper=[
            '"As the secondary storage I/O access in a real computing system involves considerable partial '
            "writes and idle time, the response time of FT-PASSD is significantly reduced (45.6% on average) "
            'compared to that of OCSSD for all workloads." (Section V.B.2)',
            '"workloads with a high proportion of sequential writes showed relatively little improvement '
            '(49% of proj_2)." (Section V.B.2); the paper states neither its host queue depth nor its replay '
            "speed",
        ],
    )
    names = ctx.pick(["hm_0 (window)"], ["hm_0 (window)", "rsrch_1"], [n for n, _ in FTPASSD_TRACES])
    depths = ctx.pick([32], [1, 32], [1, 32])
    scales = ctx.pick([1.0, 0.01], [1.0, 0.01], [1.0, 0.1, 0.01, 0.001, 0.0001])
    # (queue depth, time scale, buffer/way): every load at 256 KiB, and at paper scale Figure 15's
    # other buffers at recorded speed (queue depth 1 repeats Figure 15's runs, for the averages).
    points = [(q, t, 256) for q in depths for t in scales]
    points += ctx.pick([], [], [(q, 1.0, b) for q in depths for b in (512, 1024)])
    s.setup = [
        TRACE_SETUP + " Time scale: the trace's timestamps multiplied by it (0.01 = 100x faster). "
        "Host queue depth (`host.queue_depth`): commands in flight at once; a command that finds none "
        "free waits at the host, and that wait is part of its response time.",
    ]
    found = _found(ctx, s, names)
    if not found:
        return s
    s.columns = [
        "trace",
        "queue depth",
        "time scale",
        "buffer/way",
        "OCSSD mean, max (ms)",
        "w/o shift: mean, max vs OCSSD",
        "with shift: mean, max vs OCSSD",
        "buffer use at failure (w/o shift)",
        "with shift: copies preempted, host ops waiting, longest wait (ms)",
        "with shift: host time behind all background work, summed (ms, queued)",
    ]
    for i, (name, path) in enumerate(found):
        for q, t, buf in points:
            wl = _workload(name, path, t)
            sets = {**TRACE_DRIVE, "host.queue_depth": q, "open_channel.write_buffer_kib": buf}
            key = f"load_{i}_qd{q}_x{t:g}_{buf}"
            dry = ctx.sweep(
                f"{key}_dry",
                "ftpassd-paper",
                workloads=wl,
                until="end",
                overrides={**sets, "open_channel.device_policy": "ocssd", "failures.program_fail_nth": 0},
            )
            programs = int(dry["integrity.physical_page_programs"].iloc[0])
            if programs == 0:
                s.notes.append(f"{name}, queue depth {q}, time scale {t:g}: no page programs, skipped.")
                continue
            rows = _policy_rows(
                ctx.sweep(
                    key,
                    "ftpassd-paper",
                    grid={"open_channel.device_policy": [p for p, _ in FTPASSD_POLICIES]},
                    workloads=wl,
                    until="end",
                    overrides={**sets, "failures.program_fail_nth_random_within": programs},
                )
            )
            oc, ns, ws = rows["ocssd"], rows["ft_passd_no_shift"], rows["ft_passd"]

            def rel(r: pd.Series, what: str, oc: pd.Series = oc) -> float:
                return ratio(r[f"latency_us.write.{what}"], oc[f"latency_us.write.{what}"]) - 1

            data = {
                "trace": name,
                "queue_depth": q,
                "time_scale": t,
                "buffer_kib": buf,
                "ocssd_mean_ms": oc["latency_us.write.mean"] / 1000,
                "ocssd_max_ms": oc["latency_us.write.max"] / 1000,
                **{f"{p}_{w}_vs_ocssd": rel(rows[p], w) for p in POLICIES for w in ("mean", "max")},
                "use_no_shift": _use(ns),
                "migration_preemptions": int(ws["open_channel.device.migration_preemptions"]),
                "migration_waits": int(ws["open_channel.device.migration_waits"]),
                "max_migration_wait_ms": ws["open_channel.device.max_migration_wait_us"] / 1000,
                # The queued scheduler's sum over host transactions of the time each waited,
                # ready, while its die ran any background work (migration copies, the failure's
                # retry, host GC); the reservation scheduler has no such count. The waits for
                # migration copies alone are the two counts above, under both schedulers.
                "behind_background_ms": float(ws.get("scheduler.host_behind_background_ns", float("nan")))
                / 1e6,
            }
            s.data.append(data)
            s.rows.append(
                [
                    name,
                    str(q),
                    f"{t:g}",
                    f"{buf} KiB",
                    f"{num(data['ocssd_mean_ms'], '.2f')}, {num(data['ocssd_max_ms'], '.2f')}",
                    f"{pct(rel(ns, 'mean'))}, {pct(rel(ns, 'max'))}",
                    f"{pct(rel(ws, 'mean'))}, {pct(rel(ws, 'max'))}",
                    pct(_use(ns)).lstrip("+"),
                    f"{int(ws['open_channel.device.migration_preemptions'])}, "
                    f"{int(ws['open_channel.device.migration_waits'])}, "
                    + num(ws["open_channel.device.max_migration_wait_us"] / 1000, ".2f"),
                    num(data["behind_background_ms"], ".2f"),
                ]
            )
    if ctx.scheduler == "queued":
        s.notes.append(
            "Host operations waiting for a migration copy are counted one by one under both schedulers "
            "(`open_channel.device.migration_waits`, `max_migration_wait_us`): under the queued one, each "
            "host transaction that waited, ready, while its die ran a migration copy, and the longest "
            "time its die spent on copies while it waited; under the reservation one, each host "
            "operation ready on the die of a copy a command preempted, until that copy's end. The last "
            "column is the queued scheduler's sum over host transactions of the time each waited, ready, "
            "while its die ran any background work (`scheduler.host_behind_background_ns`): migration "
            "copies, the failure's retry on a reserved block (bad-block work), and host GC if any ran."
        )
    else:
        s.notes.append(
            "The last column is the queued scheduler's (`--scheduler queued`): the time host work waited "
            "behind all background work, summed; the waits for migration copies alone are counted one by "
            "one under both schedulers (the column before)."
        )
    d = pd.DataFrame(s.data)
    if not len(d):
        return s
    order = ["queue_depth", "buffer_kib", "time_scale"]
    avg = d.groupby(order)["ft_passd_mean_vs_ocssd"].agg(["mean", "min", "max", "count"]).reset_index()
    s.extra.append(
        (
            "Mean write response, FT-PASSD (with shift) against OCSSD, averaged over the traces",
            ["queue depth", "buffer/way", "time scale", "average", "range", "traces"],
            [
                [
                    str(int(r.queue_depth)),
                    f"{int(r.buffer_kib)} KiB",
                    f"{r.time_scale:g}",
                    pct(r["mean"]),
                    f"{pct(r['max'])} .. {pct(r['min'])}",
                    str(int(r["count"])),
                ]
                for _, r in avg.sort_values(order, ascending=[True, True, False]).iterrows()
            ],
        )
    )
    plt = pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6.5, 3.4))
        g = avg[avg.buffer_kib == 256]
        for q, h in g.groupby("queue_depth"):
            h = h.sort_values("time_scale", ascending=False)
            ax.plot([1 / x for x in h.time_scale], [100 * v for v in h["mean"]], marker="o", label=f"QD {q}")
        ax.axhline(-45.6, color="k", ls=":", label="paper, Fig. 15(a) average")
        ax.set_xscale("log")
        ax.set_xlabel("replay speed (x recorded)")
        ax.set_ylabel("mean write vs OCSSD (%), with shift")
        ax.set_title("256 KiB per way, averaged over the traces")
        ax.legend(fontsize=7)
        save_figure(ctx, s, fig)
    return s


__all__ = ["FTPASSD_LABEL", "FTPASSD_TRACES", "ftpassd_fig15", "ftpassd_fig16", "ftpassd_load"]
