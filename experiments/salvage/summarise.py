#!/usr/bin/env python3
"""Figure 4 table from the CSVs of `experiments/salvage/run.sh`: per workload and RBER, the bad-block
ratio (baseline / salvage), normalised mean latency and throughput (salvage / baseline, mean +- sample
standard deviation over the seeds), normalised write amplification, and the mean valid pages per GC
victim (baseline / salvage). With `--percentiles`, the normalised p50 and p99 latency too (CSVs
written since `salvage_fig4` records them).

    python3 experiments/salvage/summarise.py experiments/salvage/results/fig4_traces_*.csv
    python3 experiments/salvage/summarise.py --percentiles experiments/salvage/results/fig4_approx_*.csv
"""

import csv
import statistics
import sys
from collections import defaultdict


def ms(v):
    return (statistics.mean(v), statistics.stdev(v) if len(v) > 1 else 0.0)


def column(rows, key):
    return [float(r[key]) for r in rows]


def normalised(base, salv, key):
    return [
        float(y[key]) / float(x[key]) if float(x[key]) else float("nan")
        for x, y in zip(base, salv, strict=True)
    ]


def main(args):
    percentiles = "--percentiles" in args
    paths = [a for a in args if a != "--percentiles"]
    runs = defaultdict(dict)  # (workload, rber, seed) -> policy -> row
    order = []
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                key = (r.get("workload", "synthetic"), float(r["rber"]), int(r["seed"]))
                if key[:2] not in order:
                    order.append(key[:2])
                runs[key][r["policy"]] = r
    extra = " p50 latency | p99 latency |" if percentiles else ""
    print(
        "| workload | RBER | bad blocks base / salvage | latency |" + extra + " throughput | WA "
        "| valid pages per victim base / salvage | seeds |"
    )
    print("|---|---|---|---|" + ("---|---|" if percentiles else "") + "---|---|---|---|")
    for wl, rber in order:
        pairs = [v for (w, rb, _), v in sorted(runs.items()) if (w, rb) == (wl, rber) and len(v) == 2]
        b = [p["retire_block"] for p in pairs]
        s = [p["skip_page"] for p in pairs]
        lat, thr = ms(normalised(b, s, "mean_latency_us")), ms(normalised(b, s, "iops"))
        cols = ""
        if percentiles:
            for key in ("p50_latency_us", "p99_latency_us"):
                m, sd = ms(normalised(b, s, key))
                cols += f" {m:.3f} ± {sd:.3f} |"
        wa = ms(normalised(b, s, "write_amplification"))
        bb, bs = statistics.mean(column(b, "bad_block_ratio")), statistics.mean(column(s, "bad_block_ratio"))
        vb = statistics.mean(column(b, "mean_valid_per_victim"))
        vs = statistics.mean(column(s, "mean_valid_per_victim"))
        print(
            f"| {wl} | {rber:.0e} | {bb:.3%} / {bs:.3%} "
            f"| {lat[0]:.3f} ± {lat[1]:.3f} |{cols} {thr[0]:.3f} ± {thr[1]:.3f} "
            f"| {wa[0]:.3f} ± {wa[1]:.3f} | {vb:.1f} / {vs:.1f} | {len(pairs)} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
