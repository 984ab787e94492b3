"""Why 400 us hints reclaim so much more with every read simulated than with one read for 20.

The reproduction's check (`flashlife reproduce readrelax`, "Validation: the file server with
and without read sub-sampling") found 71 reclaim erases sub-sampled against 503 with every
read at the quick scale. The request-level hint (`reliability.hint_latency = "request"`) adds
the dies' queue at issue to the predicted latency, and twenty times the reads queue more; the
page-level hint (`"page"`) has no queue term. This runs both comparisons at both samplings,
with the drive's die queue and read counts reported, so the queue term's share is measured.
Usage:

    python experiments/readrelax/sampling_cause.py --days 5 [--scheduler reservation|queued]
"""

from __future__ import annotations

import argparse
import time

import flashlife
from flashlife.reproduce.readrelax import READ_SAMPLING, _hint_workloads, readrelax_drive


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=float, default=5)
    ap.add_argument("--rate", type=float, default=100.0, help="host reads per second (the file server's)")
    ap.add_argument("--scheduler", default="reservation", choices=["reservation", "queued"])
    ap.add_argument("--paper", action="store_true", help="128-block planes instead of the CI drive's 64")
    a = ap.parse_args()
    print(f"file server, {a.rate:g} reads/s, {a.days:g} days, {a.scheduler} scheduler, seed 1\n")
    cols = ["hint compares", "reads simulated", "reclaim erases", "read mean us", "read p99 us", "long reads"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    t0 = time.time()
    for latency in ("request", "page"):
        for sampling in (READ_SAMPLING, 1.0):
            drive = readrelax_drive(not a.paper, sampling)
            drive["timing.scheduler"] = a.scheduler
            probe = flashlife.run(drive, until="requests:1", overrides={"ftl.timing": False})
            logical = int(probe.summary["capacity"]["logical_bytes"])
            wl = _hint_workloads(logical, a.rate, sampling)["file server"]
            over = {
                "reliability.read_reclaim": "hinted",
                "reliability.hints": [{"budget_us": 400}],
                "reliability.hint_latency": latency,
            }
            s = flashlife.run(drive, wl, until=f"time:{a.days:g}d", overrides=over).summary
            r, read = s["reliability"], s["latency_us"]["read"]
            print(
                f"| {latency} | 1 for {sampling:g} ({s['host']['read_requests']}) | {r['reclaim_erases']} "
                f"| {read['mean']:.1f} | {read['p99']:.1f} | {100 * r['long_read_share']:.4f}% |",
                flush=True,
            )
    print(f"\n4 runs in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
