#!/usr/bin/env python3
"""Reusable SSD against a standard drive that writes GC's moves into the host's open block.

Our standard drive keeps GC's moves in a block of their own (two open blocks per plane); the
paper's standard SSD (DiskSim's SSD model) has one open block per plane for both, and the paper
expects the separation alone to save erasures. `gc.stream = "shared"` is DiskSim's layout. For
each workload of Figures 7-8 (Zipf on the preset's drive, every trace with writes on the drive
the reproduction sizes to its footprint, `ablate.base`), at each op, under DiskSim's foreground
cleaning (or `--gc-mode`), this runs the standard drive with each stream and Reusable SSD, and
prints the standard drives' erasure ratio (shared / separate) and Reusable SSD's erasures and
mean response relative to each.

    python3 experiments/reusable/shared_stream.py ../shared/traces [--preset reusable-small]
        [--op 0.07 0.28] [--dw 3] [--gc-mode foreground]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import flashlife
from flashlife.reproduce.reusable import REUSABLE_TRACES

sys.path.insert(0, str(Path(__file__).parent))
from ablate import base  # noqa: E402  (the reproduction's trace drive, shared with ablate.py)


def erasures_and_response(preset: str, sets: dict[str, object], dw: float) -> tuple[float, float]:
    s = flashlife.flatten_summary(flashlife.run(preset, overrides=sets, until=f"writes:{dw}dw").summary)
    return float(s["flash.block_erases"]), float(s["latency_us.all.mean"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="the shared traces folder (../shared/traces)")
    ap.add_argument("--preset", default="reusable-small")
    ap.add_argument("--op", type=float, nargs="+", default=[0.07, 0.28])
    ap.add_argument("--dw", type=float, default=3)
    ap.add_argument("--gc-mode", default="foreground", choices=("standard", "foreground"))
    a = ap.parse_args()
    print(f"# {a.preset}, {a.dw} drive writes, gc.mode {a.gc_mode}, reservation scheduler (the presets')")
    print(
        "workload,op,std erasures shared/separate,Reusable/separate erasures,Reusable/separate response,"
        "Reusable/shared erasures,Reusable/shared response"
    )
    work: list[tuple[str, Path | float]] = [("zipf(1)", 1.0), ("zipf(2)", 2.0)]
    work += [(n, a.traces / p) for n, p in sorted(REUSABLE_TRACES.items()) if (a.traces / p).is_file()]
    for op in a.op:
        for name, w in work:
            if isinstance(w, float):
                sets: dict[str, object] = {
                    "capacity.overprovisioning": op,
                    "run.progress": "off",
                    "workload.kind": "zipf",
                    "workload.zipf.alpha": w,
                }
            else:
                sets, _ = base(w, a.preset, op)
            sets["gc.mode"] = a.gc_mode
            std = {**sets, "reusable.enabled": False}
            sep = erasures_and_response(a.preset, std, a.dw)
            shr = erasures_and_response(a.preset, {**std, "gc.stream": "shared"}, a.dw)
            reu = erasures_and_response(a.preset, {**sets, "reusable.enabled": True}, a.dw)
            print(
                f"{name},{op:g},{shr[0] / sep[0]:.3f},{reu[0] / sep[0]:.3f},{reu[1] / sep[1]:.3f},"
                f"{reu[0] / shr[0]:.3f},{reu[1] / shr[1]:.3f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
