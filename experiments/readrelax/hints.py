#!/usr/bin/env python3
"""Read latency relaxation by host hints: aggressive reclaim vs no reclaim vs hints
(docs/techniques/read-relaxation.md), from Python with `flashlife.run`.

    python3 experiments/readrelax/hints.py [--quick] [--scenario fileserver|trace|all]
                                           [--days N] [--trace PATH] [--csv OUT]

Scenarios:
- `fileserver`: synthetic, open-loop Poisson arrivals, 80% of requests on a hot fifth of the
  drive, 200 reads/s and 0.1 drive writes per day (real rates); hints are hint commands
  (`reliability.hints`).
- `trace`: a real read-heavy trace (default `../shared/traces/mqsim/wsrch-small.trace`, web
  search, 99.98% reads, ~413 requests/s), replayed endlessly (`workload.trace.loops = 0`) at
  its own rate for months. The trace is converted once to the flashlife CSV format in a
  temporary folder (never into the repository) with a per-request `budget_us` column: the
  hints travel with each read (`HostRequest.budget_us`), none in the configuration.

Scaling (as in the Rust example): one simulated read stands for SAMPLING reads and the
read-disturb coefficient is multiplied by SAMPLING (exact: the disturb term is linear in
reads). For the synthetic load the arrival rate is divided by SAMPLING; for the trace,
`workload.trace.time_scale = SAMPLING` stretches it (its rare writes are thinned alike).
`--quick` is the CI size (a 64-block-per-plane drive, a few simulated days): seconds a run.
Needs the package installed (`pip install .`).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import flashlife
from flashlife.reproduce.readrelax import TLC_3D

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TRACE = ROOT.parent / "shared" / "traces" / "mqsim" / "wsrch-small.trace"

# `tlc-3d` RBER set (crates/flashlife/src/flash/rber.rs, PowerLawParams::tlc_3d); gamma is
# scaled by the read sampling.


def drive(quick: bool, sampling: float) -> dict:
    """The 3D TLC drive of the Rust example: full, aged to half its rating, small."""
    law = dict(TLC_3D, gamma=TLC_3D["gamma"] * sampling)
    return {
        "geometry.channels": 1,
        "geometry.ways": 1,
        "geometry.dies": 1,
        "geometry.planes": 2,
        "geometry.blocks_per_plane": 64 if quick else 128,
        "geometry.pages_per_block": 32,
        "flash.page_size": 16384,
        "flash.tlc.read_us": 70,
        "flash.tlc.program_us": 700,
        "flash.tlc.erase_us": 3500,
        "flash.tlc.pe_limit": 3000,
        "capacity.overprovisioning": 0.25,
        "reliability.model": "power_law",
        "reliability.rber_set": "custom",
        "reliability.power_law": law,
        "reliability.base_cycles": 1500,
        "stats.interval": "30d",
        "run.progress": "off",
    }


# (label, policy, hint commands, trace budget rule)
POLICIES = [
    ("aggressive (error_based)", "error_based", None, "none"),
    ("no reclaim", "none", None, "none"),
    ("hints 400 us", "hinted", 400, "all400"),
    ("hints 250 us", "hinted", 250, "all250"),
]
# Trace only: per-request hints on half of the reads, 400 us, the others without a budget:
# every other read request (tolerant and strict reads share blocks), or the reads of the first
# half of the drive's logical space (after the modulo fold: they share no block).
MIXED = [
    ("hints 400 us, every other read", "hinted", None, "half400"),
    ("hints 400 us, reads of one half of the space", "hinted", None, "space400"),
]


def row(label: str, s: dict) -> dict:
    r = s["reliability"]
    return {
        "policy": label,
        "reclaim_erases": r["reclaim_erases"],
        "pe_budget_spent_by_reads": r["reclaim_share_of_pe_budget"],
        "share_of_erases": r["reclaim_share_of_erases"],
        "read_mean_us": s["latency_us"]["read"]["mean"],
        "read_p99_us": s["latency_us"]["read"]["p99"],
        "long_read_share": r["long_read_share"],
        "uncorrectable": r["uncorrectable_reads"],
        "hinted_reads": r["hinted_reads"],
        "host_reads": s["host"]["read_requests"],
    }


def fileserver(quick: bool, days: float, sampling: float = 20.0) -> list[dict]:
    base = drive(quick, sampling)
    logical = resolve_logical_bytes(base)
    reads = (100.0 if quick else 200.0) / sampling
    writes = 0.1 * logical / 16384 / 86400
    workload = {
        "kind": "hotcold",
        "hotcold": {"hot_requests": 0.8, "hot_space": 0.2},
        "read_ratio": reads / (reads + writes),
        "request_size": 16384,
        "arrival": {"process": "poisson", "rate_iops": reads + writes},
    }
    jobs = []
    for label, policy, hint, _ in POLICIES:
        o = dict(base, **{"reliability.read_reclaim": policy})
        # A hint command covering the whole drive (an array of tables: a TOML override).
        hints = [] if hint is None else [f"reliability.hints=[{{budget_us={hint}}}]"]
        jobs.append(
            (label, dict(config=o, workload=workload, until=f"time:{days}d", seed=1, overrides=hints))
        )
    return run_all(jobs)


def resolve_logical_bytes(cfg: dict) -> int:
    """The drive's logical capacity (what the modulo fold wraps addresses onto)."""
    return int(flashlife.run(cfg, until="requests:1").summary["capacity"]["logical_bytes"])


def convert(trace: Path, rule: str, out: Path, logical: int) -> Path:
    """The trace as flashlife CSV with a budget_us column filled by `rule`."""
    opener = gzip.open if trace.suffix == ".gz" else open
    reads = 0
    with opener(trace, "rt") as f, open(out, "w") as g:
        g.write("time_ns,op,offset,size,stream,budget_us\n")
        for line in f:
            p = line.split()
            if len(p) < 5:
                continue
            t, dev, lba, sectors, read = int(p[0]), int(p[1]), int(p[2]), int(p[3]), int(p[4]) & 1 == 1
            budget = ""
            if read:
                reads += 1
                budget = {
                    "none": "",
                    "all400": "400",
                    "all250": "250",
                    "half400": "400" if reads % 2 else "",
                    "space400": "400" if (lba * 512) % logical < logical // 2 else "",
                }[rule]
            g.write(f"{t},{'R' if read else 'W'},{lba * 512},{max(sectors, 1) * 512},{dev},{budget}\n")
    return out


def trace_runs(quick: bool, days: float, trace: Path, sampling: float = 100.0) -> list[dict]:
    if not trace.exists():
        print(f"trace {trace} not found: skipping the trace scenario", file=sys.stderr)
        return []
    base = drive(quick, sampling)
    tmp = Path(tempfile.mkdtemp(prefix="flashlife-readrelax-"))
    jobs = []
    logical = resolve_logical_bytes(base)
    for label, policy, _, rule in [*POLICIES, *MIXED]:
        path = convert(trace, rule, tmp / f"{rule}.csv", logical)
        o = dict(base, **{"reliability.read_reclaim": policy})
        o.update(
            {
                "workload.kind": "trace",
                "workload.trace.path": str(path),
                "workload.trace.format": "flashlife",
                "workload.trace.loops": 0,
                "workload.trace.time_scale": sampling,
                "workload.trace.fold": "modulo",
                # A sequential fill: a block holds neighbouring addresses, so reads of one half of
                # the space land on their own blocks (random overwrites would mix the halves).
                "ftl.precondition": "full",
            }
        )
        jobs.append((label, dict(config=o, until=f"time:{days}d", seed=1)))
    return run_all(jobs)


def run_all(jobs: list[tuple[str, dict]]) -> list[dict]:
    # flashlife.run releases the GIL: two runs at a time on two threads.
    with ThreadPoolExecutor(max_workers=2) as ex:
        futs = [(label, ex.submit(flashlife.run, **kw)) for label, kw in jobs]
        return [row(label, f.result().summary) for label, f in futs]


def table(rows: list[dict]) -> str:
    out = [
        "| policy | reclaim erases | P/E budget spent by reads | read mean us | read p99 us | long reads "
        "| uncorrectable | hinted reads |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base = rows[0]
    for r in rows:
        d_e = (
            f" ({100 * (r['reclaim_erases'] / base['reclaim_erases'] - 1):+.1f}%)"
            if base["reclaim_erases"]
            else ""
        )
        d_m = f" ({100 * (r['read_mean_us'] / base['read_mean_us'] - 1):+.1f}%)"
        out.append(
            f"| {r['policy']} | {r['reclaim_erases']}{d_e} | {100 * r['pe_budget_spent_by_reads']:.4f}% | "
            f"{r['read_mean_us']:.1f}{d_m} | {r['read_p99_us']:.1f} | {100 * r['long_read_share']:.3f}% | "
            f"{r['uncorrectable']} | {r['hinted_reads']} / {r['host_reads']} |"
        )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI size: small drive, a few simulated days")
    ap.add_argument("--scenario", choices=["fileserver", "trace", "all"], default="all")
    ap.add_argument("--days", type=float, default=None, help="simulated days (default: 120, quick: 10)")
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE, help="an MQSim-format trace")
    ap.add_argument("--csv", type=Path, default=None, help="also write the rows as CSV")
    a = ap.parse_args()
    days = a.days if a.days is not None else (10.0 if a.quick else 120.0)
    rows = []
    if a.scenario in ("fileserver", "all"):
        r = fileserver(a.quick, days)
        print(f"## file server, {days:g} days\n\n{table(r)}\n", flush=True)
        rows += [dict(x, scenario="fileserver") for x in r]
    if a.scenario in ("trace", "all"):
        r = trace_runs(a.quick, days, a.trace)
        if r:
            print(
                f"## trace {a.trace.name}, looped at its own rate, {days:g} days\n\n{table(r)}\n", flush=True
            )
            rows += [dict(x, scenario="trace") for x in r]
    if a.csv and rows:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
