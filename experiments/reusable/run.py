#!/usr/bin/env python3
"""Reusable SSD experiments (paper 001, section 6): Reusable SSD vs the standard drive.

    python3 experiments/reusable/run.py [--small] [--only FAMILY[,FAMILY]] [--out results.csv]

Each point runs the `reusable` Rust example (any configuration and workload, one JSON line)
for Reusable SSD and for the standard drive (`reusable.enabled=false`, same seed and
workload) and prints relative erasures and relative mean response time. Workloads are the
workload module's Zipf generator (`workload.kind = "zipf"`) and the real traces in
`../shared/traces` beside the checkout (looped endlessly, folded onto the drive with
`remap_first`; replayed open loop at their own timestamps, as DiskSim replays them in the
paper, and closed loop at queue depth 1). `--small` is the CI size (2 chips of 256 blocks
per plane, 2 drive writes): a few seconds a point. The full size is the presets' 4 GiB drives.
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
TRACES = ROOT.parent / "shared" / "traces"

# Traces with writes (read-only ones cannot invoke GC). Name -> path under TRACES.
TRACE_FILES = {
    "wdev_1": "msr/wdev_1.csv",
    "rsrch_1": "msr/rsrch_1.csv",
    "hm_0": "msr/hm_0-window.csv",
    "web_0": "msr/web_0-first100k.csv.gz",
    "fin1": "umass/Financial1-first10k.ascii",
    "tpcc": "mqsim/tpcc-small.trace",
    "hadoop": "blkparse/hadoop-blktrace.txt",
    "cloudphys": "cloudphysics/cloudPhysicsIO.csv",
}
# Mixed request sizes (the hot/cold threshold has something to classify).
MIXED = ("rsrch_1", "hm_0", "web_0", "hadoop", "cloudphys")


def zipf(alpha):
    return ['workload.kind="zipf"', f"workload.zipf.alpha={alpha}"]


def trace(name, timestamps="honour"):
    return [
        'workload.kind="trace"',
        f'workload.trace.path="{TRACES / TRACE_FILES[name]}"',
        "workload.trace.loops=0",
        'workload.trace.fold="remap_first"',
        f'workload.trace.timestamps="{timestamps}"',
    ]


def point(preset, sets, small, dw):
    base = ["--preset", preset, "--set", f'run.until="writes:{dw}dw"']
    if small:
        base += ["--set", "geometry.ways=2", "--set", "geometry.blocks_per_plane=256"]
    for s in sets:
        base += ["--set", s]

    def run(extra):
        out = subprocess.run([str(BIN), *base, *extra], capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(out.stderr.strip())
        return json.loads(out.stdout)

    std = run(["--set", "reusable.enabled=false"])
    reu = run([])
    return {
        "rel_erasures": reu["erases"] / max(std["erases"], 1),
        "rel_response": reu["mean_us"] / std["mean_us"] if std["mean_us"] else float("nan"),
        "rel_write_response": reu["write_mean_us"] / std["write_mean_us"]
        if std["write_mean_us"]
        else float("nan"),
        "second_writes": (reu["second_writes"] or {}).get("units", 0),
        "hot_first_writes": (reu["second_writes"] or {}).get("hot_first_writes", 0),
        "std_erasures": std["erases"],
        "reu_erasures": reu["erases"],
        "std_mean_us": std["mean_us"],
        "reu_mean_us": reu["mean_us"],
        "std_wa": std["wa"],
        "reu_wa": reu["wa"],
        "std_gc_moved": std["gc_moved"],
        "reu_gc_moved": reu["gc_moved"],
        "std_dead": std["dead"],
        "reu_dead": reu["dead"],
    }


def grid(small, have_traces):
    presets = ["reusable-small", "reusable-medium", "reusable-large"]
    for p in presets if not small else presets[:1]:
        for op in (0.07, 0.28):
            for a in (1, 2):
                yield "zipf", p, f"zipf({a})", [*zipf(a), f"capacity.overprovisioning={op}"], f"op={op}"
    if have_traces:
        for p in presets:
            for op in (0.07, 0.28):
                for t in TRACE_FILES:
                    yield "traces", p, t, [*trace(t), f"capacity.overprovisioning={op}"], f"op={op}"
        p = presets[0]
        for op in (0.07, 0.28):
            for t in TRACE_FILES:
                yield "traces_qd1", p, t, [*trace(t, "ignore"), f"capacity.overprovisioning={op}"], f"op={op}"
        for op in (0.07, 0.28):
            for t in MIXED:
                for kib in (16, 32, 64, 128, 256):
                    yield (
                        "hot_threshold",
                        p,
                        t,
                        [
                            *trace(t),
                            f"capacity.overprovisioning={op}",
                            f"reusable.hot_threshold={kib * 1024}",
                        ],
                        f"op={op},{kib}KiB",
                    )
    p = presets[0]
    for op in (0.05, 0.28, 0.5) if small else (0.05, 0.07, 0.1, 0.2, 0.28, 0.4, 0.5):
        yield "overprovisioning", p, "zipf(2)", [*zipf(2), f"capacity.overprovisioning={op}"], f"op={op}"
    for retry in ("none", "same_data", "extra_read"):
        for prob in (0.75, 0.85, 0.95, 1.0):
            yield (
                "wom_success",
                p,
                "zipf(2)",
                [
                    *zipf(2),
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
            yield (
                "ablation",
                p,
                "zipf(2)",
                [*zipf(2), f"capacity.overprovisioning={op}", *s],
                f"{name},op={op}",
            )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="CI-size drive and runs")
    ap.add_argument("--only", help="comma-separated experiment families to run")
    ap.add_argument("--out", default=None)
    ap.add_argument("--set", action="append", default=[], help="extra key=value for every run")
    a = ap.parse_args()
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "flashlife", "--example", "reusable"],
        cwd=ROOT,
        check=True,
    )
    have_traces = TRACES.is_dir()
    if not have_traces:
        print(f"no traces at {TRACES}: trace experiments skipped", file=sys.stderr)
    only = set(a.only.split(",")) if a.only else None
    dw = 2 if a.small else 3
    rows = []
    for fam, preset, workload, sets, label in grid(a.small, have_traces):
        if only and fam not in only:
            continue
        try:
            r = point(preset, [*sets, *a.set], a.small, dw)
        except RuntimeError as e:
            print(f"{fam:16} {preset:16} {workload:10} {label:18} failed: {e}", flush=True)
            continue
        rows.append({"experiment": fam, "preset": preset, "workload": workload, "point": label, **r})
        print(
            f"{fam:16} {preset:16} {workload:10} {label:18} erasures x{r['rel_erasures']:.3f}  "
            f"response x{r['rel_response']:.3f}  WA {r['std_wa']:.2f}->{r['reu_wa']:.2f}  "
            f"second writes {r['second_writes']}",
            flush=True,
        )
    if a.out and rows:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
