#!/usr/bin/env python3
"""Reusable SSD experiments (paper 001, section 6): Reusable SSD vs the standard drive.

    python3 experiments/reusable/run.py [--small] [--only NAME] [--out results.csv]

Each point runs the `reusable` Rust example (Zipf workload, one JSON line) for Reusable SSD and
for the standard drive (`reusable.enabled=false`, same seed and workload) and prints relative
erasures and relative mean response time. `--small` is the CI size (2 chips of 256 blocks per
plane, 2 drive writes): a few seconds a point. The full size is the presets' 4 GiB drives.
Needs cargo; builds the example in release mode first.
"""

import argparse
import csv
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "examples" / "reusable"


def point(preset, alpha, sets, small, dw):
    base = ["--preset", preset, "--alpha", str(alpha), "--set", f'run.until="writes:{dw}dw"']
    if small:
        base += ["--set", "geometry.ways=2", "--set", "geometry.blocks_per_plane=256"]
    for s in sets:
        base += ["--set", s]

    def run(extra):
        out = subprocess.run([str(BIN), *base, *extra], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    std = run(["--set", "reusable.enabled=false"])
    reu = run([])
    return {
        "rel_erasures": reu["erases"] / max(std["erases"], 1),
        "rel_response": reu["mean_us"] / std["mean_us"] if std["mean_us"] else float("nan"),
        "second_writes": (reu["second_writes"] or {}).get("units", 0),
        "std_erasures": std["erases"],
        "reu_erasures": reu["erases"],
        "std_mean_us": std["mean_us"],
        "reu_mean_us": reu["mean_us"],
    }


def grid(small):
    presets = ["reusable-small"] if small else ["reusable-small", "reusable-medium", "reusable-large"]
    for p in presets:
        for op in (0.07, 0.28):
            for a in (1, 2):
                yield "erasures_and_response", p, a, [f"capacity.overprovisioning={op}"], f"op={op}"
    p = presets[0]
    for t in (16, 32, 64, 128, 256):
        yield (
            "hot_threshold",
            p,
            1,
            ["capacity.overprovisioning=0.28", f"reusable.hot_threshold={t * 1024}"],
            f"{t}KiB",
        )
    for op in (0.05, 0.28, 0.5) if small else (0.05, 0.07, 0.1, 0.2, 0.28, 0.4, 0.5):
        yield "overprovisioning", p, 2, [f"capacity.overprovisioning={op}"], f"op={op}"
    for retry in ("none", "same_data", "extra_read"):
        for prob in (0.75, 0.85, 0.95, 1.0):
            yield (
                "wom_success",
                p,
                2,
                [
                    "capacity.overprovisioning=0.28",
                    f"reusable.success_probability={prob}",
                    f'reusable.retry="{retry}"',
                ],
                f"{retry},P={prob}",
            )
    for name, s in (
        ("parallel+prefetch", []),
        ("no_prefetch", ["reusable.prefetch=false"]),
        ("sequential", ['reusable.layout="sequential"']),
    ):
        for op in (0.07, 0.28):
            yield "ablation", p, 2, [f"capacity.overprovisioning={op}", *s], f"{name},op={op}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="CI-size drive and runs")
    ap.add_argument("--only", help="run one experiment family")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "flashlife", "--example", "reusable"],
        cwd=ROOT,
        check=True,
    )
    dw = 2 if a.small else 3
    rows = []
    for fam, preset, alpha, sets, label in grid(a.small):
        if a.only and fam != a.only:
            continue
        r = point(preset, alpha, sets, a.small, dw)
        row = {"experiment": fam, "preset": preset, "zipf_alpha": alpha, "point": label, **r}
        rows.append(row)
        print(
            f"{fam:22} {preset:16} zipf({alpha}) {label:24} erasures x{r['rel_erasures']:.3f}  "
            f"response x{r['rel_response']:.3f}  second writes {r['second_writes']}",
            flush=True,
        )
    if a.out:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
