#!/usr/bin/env python3
"""One Reusable SSD trace cell of the reproduction, run under several settings side by side.

Builds the drive `flashlife reproduce reusable` sizes to the trace's footprint (`_footprint.py`,
the same overrides as `no_hot.py`) and runs it once per variant, each a label and the keys it
changes (`label:key=value,key=value`; values are JSON where they parse, text otherwise), e.g.
the standard drive, Reusable SSD, and Reusable SSD with one setting changed (an ablation).
Prints per variant the erasures (and relative to the first variant), write amplification, GC
victims' mean valid units, moves made in idle windows, the technique's counters (blocks
recycled and reused, second-written units, hot units written first, second-written units moved
by GC), the mean, p99 and max response time (and mean relative to the first variant), the mean
queue wait, and the p99.9 and max of a write's device (service) time.
`--ways 2` sizes the drive as the quick scale does (from 2 chips). `--set` adds keys to every
variant (e.g. another drive size: `geometry.ways=2`). `--zipf ALPHA`
runs the reproduction's Zipf workload (4 KiB writes) on the preset's own drive instead of a trace.
`--series 0.1dw` also prints each variant's time series (served IOPS, mean response, WA and
erasures per interval, from the run's `timeseries.csv`); `--tail` the share of the summed
response time in responses of at least 10 ms, 100 ms and 1 s (`latency_cdf.csv`).

    python3 experiments/reusable/ablate.py ../shared/traces --trace wdev_3 \\
        --preset reusable-large --op 0.07 --dw 3 \\
        --variant 'std:reusable.enabled=false' 'reusable:' 'no_idle:gc.background=false'
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from pathlib import Path

import flashlife
from flashlife.reproduce._footprint import footprint, size_drive
from flashlife.reproduce.reusable import REUSABLE_TRACES

COLUMNS = {
    "erases": "flash.block_erases",
    "wa": "write_amplification",
    "valid_per_victim": "gc.mean_valid_per_victim",
    "idle_moves": "gc.valid_units_moved_idle",
    "recycled": "techniques.reusable.blocks_recycled",
    "reused": "techniques.reusable.blocks_reused",
    "second_units": "techniques.reusable.units",
    "hot_first": "techniques.reusable.hot_first_writes",
    "second_moved": "techniques.reusable.moved_by_gc",
    "resp_mean_us": "latency_us.all.mean",
    "resp_p99_us": "latency_us.all.p99",
    "resp_max_us": "latency_us.all.max",
    "wait_mean_us": "host_queue_wait_us.mean",
    "write_service_p999_us": "device_time_us.write.p999",
    "write_service_max_us": "device_time_us.write.max",
}


TAIL_US = (1e4, 1e5, 1e6)


def tail_shares(cdf: Path, counts: dict[str, float]) -> list[float]:
    """Share of the summed response time (reads and writes) in responses of at least each of
    `TAIL_US`, from a run's `latency_cdf.csv` (per op: latency, cumulative fraction of that op's
    requests, weighted here by `counts`, the op's requests)."""
    with open(cdf) as f:
        rows = list(csv.DictReader(f))
    total = 0.0
    above = [0.0] * len(TAIL_US)
    prev: dict[str, float] = {}
    for r in rows:
        lat, frac = float(r["latency_us"]), float(r["fraction"])
        w = (frac - prev.get(r["op"], 0.0)) * lat * counts.get(r["op"], 0.0)
        prev[r["op"]] = frac
        total += w
        for i, t in enumerate(TAIL_US):
            if lat >= t:
                above[i] += w
    return [x / total if total else 0.0 for x in above]


def parse_sets(text: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, _, value = item.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def base(trace: Path, preset: str, op: float, ways: int | None = None) -> tuple[dict[str, object], str]:
    fp = footprint(trace)
    geo = flashlife.resolve_config(preset)["geometry"]
    d = size_drive(
        fp.pages,
        op,
        ways=ways or int(geo["ways"]),
        planes=int(geo["planes"]),
        pages_per_block=int(geo["pages_per_block"]),
    )
    sets = {
        **d.overrides(),
        "capacity.overprovisioning": op,
        "run.progress": "off",
        "workload.kind": "trace",
        "workload.trace.path": str(trace),
        "workload.trace.loops": 0,
        "workload.trace.fold": "remap_first",
        "workload.trace.timestamps": "honour",
    }
    return sets, f"{fp.pages} footprint pages, drive {d.overrides()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="the shared traces folder (../shared/traces)")
    ap.add_argument("--trace", choices=sorted(REUSABLE_TRACES))
    ap.add_argument("--zipf", type=float, help="Zipf alpha: the Zipf workload instead of a trace")
    ap.add_argument("--preset", default="reusable-large")
    ap.add_argument("--op", type=float, default=0.07, help="over-provisioning")
    ap.add_argument(
        "--ways", type=int, help="chips the sizing starts from (quick scale: 2; default the preset's)"
    )
    ap.add_argument("--dw", type=float, default=3, help="drive writes after the fill")
    ap.add_argument("--gc-mode", default="standard", choices=("standard", "foreground"))
    ap.add_argument("--set", default="", help="keys for every variant: key=value,key=value")
    ap.add_argument("--variant", nargs="+", default=["std:reusable.enabled=false", "reusable:"])
    ap.add_argument("--series", help="also print each variant's time series at this interval (e.g. 0.1dw)")
    ap.add_argument("--tail", action="store_true", help="also print the share of summed response by size")
    a = ap.parse_args()
    if a.zipf is not None:
        name = f"zipf({a.zipf:g})"
        sets: dict[str, object] = {
            "capacity.overprovisioning": a.op,
            "run.progress": "off",
            "workload.kind": "zipf",
            "workload.zipf.alpha": a.zipf,
        }
        drive = "the preset's drive"
    elif a.trace:
        name = a.trace
        trace = a.traces / REUSABLE_TRACES[a.trace]
        if not trace.is_file():
            print(f"no trace at {trace}: nothing to run", file=sys.stderr)
            return 0
        sets, drive = base(trace, a.preset, a.op, a.ways)
    else:
        ap.error("give --trace or --zipf")
    sets = {**sets, "gc.mode": a.gc_mode, **parse_sets(a.set)}
    print(f"# {name}, {a.preset}, op {a.op}, {a.dw} drive writes, gc.mode {a.gc_mode}; {drive}; set {a.set}")
    print(",".join(["variant", "rel_erases", "rel_resp", *COLUMNS]))
    first: dict[str, float] | None = None
    series: list[str] = []
    tails: list[str] = []
    for spec in a.variant:
        label, _, keys = spec.partition(":")
        over = {**sets, **parse_sets(keys)}
        with tempfile.TemporaryDirectory() as tmp:
            if a.series:
                over["stats.interval"] = a.series
            keep = a.series or a.tail
            r = flashlife.run(
                a.preset, overrides=over, until=f"writes:{a.dw}dw", out_dir=tmp if keep else None
            )
            if a.tail:
                flat = flashlife.flatten_summary(r.summary)
                counts = {op: float(flat.get(f"latency_us.{op}.count") or 0) for op in ("read", "write")}
                shares = tail_shares(Path(tmp) / "latency_cdf.csv", counts)
                tails.append(",".join([label, *(f"{x:.3f}" for x in shares)]))
            if a.series:
                with open(Path(tmp) / "timeseries.csv") as f:
                    for t in csv.DictReader(f):
                        cols = ("time_s", "iops", "mean_latency_us", "wa_interval", "erases")
                        series.append(",".join([label, *(t[c] for c in cols)]))
        s = flashlife.flatten_summary(r.summary)
        row = {k: float(s.get(v) or 0) for k, v in COLUMNS.items()}
        first = first or row
        rel_e = row["erases"] / first["erases"] if first["erases"] else 0.0
        rel_r = row["resp_mean_us"] / first["resp_mean_us"] if first["resp_mean_us"] else 0.0
        vals = [f"{v:.3f}" if k in ("wa", "valid_per_victim") else f"{v:.0f}" for k, v in row.items()]
        print(",".join([label, f"{rel_e:.3f}", f"{rel_r:.3f}", *vals]))
    if tails:
        print("variant," + ",".join(f"share_of_summed_response_at_least_{t:g}us" for t in TAIL_US))
        print("\n".join(tails))
    if series:
        print("variant,time_s,served_iops,mean_response_us,wa_interval,erases")
        print("\n".join(series))
    return 0


if __name__ == "__main__":
    sys.exit(main())
