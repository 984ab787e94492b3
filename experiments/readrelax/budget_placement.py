"""Placement by budget class (`reliability.budget_placement`) on the half-hinted web search.

The reproduction's trace section (`flashlife reproduce readrelax`, "Web search trace with
per-request hints") with its "400 us on the reads of one half of the space" variant, placement
off and on, beside the aggressive reclaim and 400 us on every read, for both hint comparisons
(`hint_latency = "request"`, the default, and `"page"`). Usage:

    python experiments/readrelax/budget_placement.py --days 10 [--scheduler queued] \
        [--traces ../shared/traces] [--out out/budget_placement]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import flashlife
from flashlife.reproduce.readrelax import TRACE_SAMPLING, hinted_trace, hinted_trace_config, readrelax_drive


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=10)
    ap.add_argument("--scheduler", default="reservation", choices=["reservation", "queued"])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--out", default="out/budget_placement")
    ap.add_argument("--paper", action="store_true", help="128-block planes instead of the CI drive's 64")
    a = ap.parse_args()
    src = Path(a.traces) / "mqsim" / "wsrch-small.trace"
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    drive = readrelax_drive(not a.paper, TRACE_SAMPLING)
    drive["timing.scheduler"] = a.scheduler
    probe = flashlife.run(drive, until="requests:1", overrides={"ftl.timing": False})
    logical = int(probe.summary["capacity"]["logical_bytes"])
    rows = [
        ("aggressive (error_based)", "error_based", "none", "request", False),
        ("400 us on every read", "hinted", "all400", "request", False),
        ("400 us on one half, placement off", "hinted", "space400", "request", False),
        ("400 us on one half, placement on", "hinted", "space400", "request", True),
        ("page time: 400 us on every read", "hinted", "all400", "page", False),
        ("page time: 400 us on one half, placement off", "hinted", "space400", "page", False),
        ("page time: 400 us on one half, placement on", "hinted", "space400", "page", True),
    ]
    print(f"wsrch, {a.days} days, {a.scheduler} scheduler, {'128' if a.paper else '64'}-block planes\n")
    cols = ["variant", "reclaim erases", "vs aggressive", "read mean us", "read p99 us", "long reads"]
    cols.append("uncorrectable")
    print("| " + " | ".join(cols) + " |")
    print("|---|---|---|---|---|---|---|")
    base = None
    t0 = time.time()
    for label, policy, rule, latency, placed in rows:
        path = hinted_trace(src, rule, out / f"wsrch-{rule}.csv", logical)
        cfg = hinted_trace_config(drive, policy, path)
        if policy == "hinted":
            cfg["reliability.hint_latency"] = latency
            cfg["reliability.budget_placement"] = placed
        s = flashlife.run(cfg, until=f"time:{a.days}d").summary
        r = s["reliability"]
        erases = r["reclaim_erases"]
        base = base or erases
        read = s["latency_us"]["read"]
        print(
            f"| {label} | {erases} | {100 * (erases / base - 1):+.1f}% | {read['mean']:.1f} "
            f"| {read['p99']:.1f} | {100 * r['long_read_share']:.3f}% | {r['uncorrectable_reads']} |",
            flush=True,
        )
    print(f"\n{len(rows)} runs in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
