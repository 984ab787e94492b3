#!/usr/bin/env python3
"""Where Reusable SSD's erasure saving comes from on traces with (almost) no hot data.

blkparse and hadoop write nearly only requests of 64 KiB or more, so under 1% of their data
goes to second writes; yet Figure 7's reproduction gives them x0.65-0.92 erasures at op 7%.
This runs each such cell three ways on the drive the reproduction sizes to the trace's
footprint (`_footprint.py`, the same overrides as `flashlife reproduce reusable`): the standard
drive, Reusable SSD as configured, and Reusable SSD with no request hot
(`reusable.hot_threshold = 1`: no second write at all, only its garbage collection's rules,
recycling included), and that again with no block recycled (`reusable.max_recycled_factor =
0`: every victim erased, as on the standard drive, under Reusable SSD's thresholds). If the
second and third agree, the saving is the collector's, not WOM coding's; the fourth says how
much of it is recycling.
A second length (`--dw`) tells a steady-state difference from one of the run's start.
The same split works on any trace of the reproduction (`--trace`), e.g. where Reusable SSD
loses at op 28%.

    python3 experiments/reusable/no_hot.py ../shared/traces [--dw 3 9] [--op 0.07]
        [--trace blkparse hadoop] [--preset reusable-small ...] [--gc-mode standard]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import flashlife
from flashlife.reproduce.reusable import REUSABLE_TRACES

sys.path.insert(0, str(Path(__file__).parent))
from ablate import base  # noqa: E402  (the reproduction's trace drive)

PRESETS = ("reusable-small", "reusable-medium", "reusable-large")
VARIANTS = {
    "standard": {"reusable.enabled": False},
    "reusable": {"reusable.enabled": True},
    "no_hot": {"reusable.enabled": True, "reusable.hot_threshold": 1},
    "no_recycling": {
        "reusable.enabled": True,
        "reusable.hot_threshold": 1,
        "reusable.max_recycled_factor": 0.0,
    },
}


def cell(
    trace: Path, preset: str, op: float, dw: int, gc_mode: str = "standard"
) -> dict[str, dict[str, float]]:
    sets, _ = base(trace, preset, op)
    cell_sets = {**sets, "gc.mode": gc_mode}
    out = {}
    for name, variant in VARIANTS.items():
        r = flashlife.run(preset, overrides={**cell_sets, **variant}, until=f"writes:{dw}dw")
        s = flashlife.flatten_summary(r.summary)
        moved = s["gc.valid_units_moved"]
        erases = s["flash.block_erases"]
        out[name] = {
            "erases": erases,
            "wa": s["write_amplification"],
            "moved_per_erase": moved / erases if erases else 0.0,
            "second_units": s.get("techniques.reusable.units") or 0,
            # Second-written units still valid when their pair was erased (moved by GC).
            "second_moved": s.get("techniques.reusable.moved_by_gc") or 0,
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="the shared traces folder (../shared/traces)")
    ap.add_argument("--dw", type=int, nargs="+", default=[3, 9], help="drive writes after the fill")
    ap.add_argument("--op", type=float, default=0.07, help="over-provisioning")
    ap.add_argument("--trace", nargs="+", default=["blkparse", "hadoop"], choices=sorted(REUSABLE_TRACES))
    ap.add_argument("--preset", nargs="+", default=list(PRESETS), choices=PRESETS)
    ap.add_argument("--gc-mode", default="standard", choices=("standard", "foreground"))
    a = ap.parse_args()
    if not a.traces.is_dir():
        print(f"no traces folder at {a.traces}: nothing to run", file=sys.stderr)
        return 0
    print(
        "trace,preset,dw,erases_std,wa_std,moved_per_erase_std,rel_reusable,wa_reusable,second_units,"
        "rel_no_hot,wa_no_hot,moved_per_erase_no_hot,rel_no_recycling,wa_no_recycling,"
        "moved_per_erase_reusable,second_moved_by_gc"
    )
    for name in a.trace:
        trace = a.traces / REUSABLE_TRACES[name]
        if not trace.is_file():
            print(f"skipped {name}: {trace} not found", file=sys.stderr)
            continue
        for preset in a.preset:
            for dw in a.dw:
                c = cell(trace, preset, a.op, dw, a.gc_mode)
                std, reu, nh, nr = c["standard"], c["reusable"], c["no_hot"], c["no_recycling"]
                print(
                    f"{name},{preset},{dw},{std['erases']},{std['wa']:.3f},{std['moved_per_erase']:.1f},"
                    f"{reu['erases'] / std['erases']:.3f},{reu['wa']:.3f},{reu['second_units']},"
                    f"{nh['erases'] / std['erases']:.3f},{nh['wa']:.3f},{nh['moved_per_erase']:.1f},"
                    f"{nr['erases'] / std['erases']:.3f},{nr['wa']:.3f},"
                    f"{reu['moved_per_erase']:.1f},{reu['second_moved']}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
