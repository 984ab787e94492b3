"""Heat maps of a ZombieNAND grid CSV (paper Figure 3): lifetime ratio (and latency ratio when
the grid ran with timing) over reserve x working set, one panel per start mode and write share.

    python3 experiments/zombie/plot.py experiments/zombie/results/grid_small.csv
"""

import csv
import math
import sys
from collections import defaultdict


def main(path):
    rows = list(csv.DictReader(open(path)))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: CSV only")
        return
    metrics = ["lifetime_ratio"]
    if any(not math.isnan(float(r["latency_ratio"])) for r in rows):
        metrics.append("latency_ratio")
    panels = sorted({(r["mode"], float(r["read_ratio"])) for r in rows}, key=lambda p: (p[0] != "tlc", p[1]))
    reserves = sorted({float(r["reserve"]) for r in rows})
    wss = sorted({float(r["working_set"]) for r in rows})
    fig, axes = plt.subplots(
        len(metrics), len(panels), figsize=(3.2 * len(panels), 3 * len(metrics)), squeeze=False
    )
    for mi, metric in enumerate(metrics):
        for pi, (mode, rr) in enumerate(panels):
            grid = defaultdict(lambda: float("nan"))
            for r in rows:
                if r["mode"] == mode and float(r["read_ratio"]) == rr:
                    grid[(float(r["reserve"]), float(r["working_set"]))] = float(r[metric])
            z = [[grid[(res, ws)] for ws in wss] for res in reserves]
            ax = axes[mi][pi]
            im = ax.imshow(z, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(wss)), [f"{w:g}" for w in wss], fontsize=7)
            ax.set_yticks(range(len(reserves)), [f"{r:g}" for r in reserves], fontsize=7)
            ax.set_xlabel("working set")
            ax.set_ylabel("reserve")
            ax.set_title(f"{mode.upper()} writes {1 - rr:.0%}: {metric.split('_')[0]}", fontsize=8)
            for i, row in enumerate(z):
                for j, v in enumerate(row):
                    if not math.isnan(v):
                        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6, color="w")
            fig.colorbar(im, ax=ax)
    fig.tight_layout()
    out = path.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=120)
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1])
