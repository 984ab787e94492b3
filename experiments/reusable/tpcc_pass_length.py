#!/usr/bin/env python3
"""Does tpcc's standard-drive write amplification under rotation depend on its pass length?

At paper scale tpcc op 28% runs on 3 chips of 69 blocks per plane, where the standard drive
moves almost nothing (WA 1.05) while 1, 2, 4 and 6 chips of the same capacity give 1.47-1.86,
and `ftl.allocation = "static"` or `"least_loaded"` give 1.41-1.42 on the 3-chip drive too. The
trace is looped, and rotation places the host units of one pass over the planes in turn, so a
unit's plane in the next pass moves on by the pass's units modulo the planes. This writes copies
of the trace without its last k write requests (k = 0..5, a temporary folder), runs the standard
drive (`reusable.enabled = false`, op 28%, foreground GC, 3 drive writes, the reproduction's
trace settings) on the 3-chip and the 2-chip drive under rotation and under `static`, and
prints the host units per pass (one pass run alone) with each drive's WA; first, how many 4 KiB
units one pass writes and how many of them are distinct.

    python3 experiments/reusable/tpcc_pass_length.py ../shared/traces [--drop 0 1 2 3 4 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import flashlife
from flashlife.reproduce.reusable import REUSABLE_TRACES

DRIVES = {"3x69": (3, 69), "2x103": (2, 103)}


def settings(trace: Path, ways: int, bpp: int, allocation: str) -> dict[str, object]:
    return {
        "geometry.ways": ways,
        "geometry.blocks_per_plane": bpp,
        "capacity.overprovisioning": 0.28,
        "gc.mode": "foreground",
        "reusable.enabled": False,
        "ftl.allocation": allocation,
        "run.progress": "off",
        "workload.kind": "trace",
        "workload.trace.path": str(trace),
        "workload.trace.format": "mqsim",
        "workload.trace.loops": 0,
        "workload.trace.fold": "remap_first",
        "workload.trace.timestamps": "honour",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", type=Path, help="the shared traces folder (../shared/traces)")
    ap.add_argument("--drop", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    a = ap.parse_args()
    src = a.traces / REUSABLE_TRACES["tpcc"]
    if not src.is_file():
        print(f"no trace at {src}: nothing to run", file=sys.stderr)
        return 0
    lines = src.read_text().splitlines()
    writes = [i for i, line in enumerate(lines) if line.split()[4] == "0"]  # MQSim: 0 = write
    units = []  # the 4 KiB units each write touches (MQSim: start sector, sectors)
    for i in writes:
        lba, n = int(lines[i].split()[2]), int(lines[i].split()[3])
        units += range(lba * 512 // 4096, (lba * 512 + n * 512 - 1) // 4096 + 1)
    print(
        f"# one pass: {len(writes)} write requests, {len(units)} 4 KiB units written, "
        f"{len(set(units))} distinct"
    )
    print(
        "dropped_writes,requests,units_per_pass,units_mod_6,"
        + ",".join(f"wa_{d}_rotation,wa_{d}_static" for d in DRIVES)
    )
    with tempfile.TemporaryDirectory() as tmp:
        for k in a.drop:
            drop = set(writes[len(writes) - k :]) if k else set()
            trace = Path(tmp) / f"tpcc-drop{k}.trace"
            trace.write_text("\n".join(line for i, line in enumerate(lines) if i not in drop) + "\n")
            n = len(lines) - len(drop)
            one = flashlife.run(
                "reusable-small", overrides=settings(trace, 3, 69, "rotation"), until=f"requests:{n}"
            )
            units = int(flashlife.flatten_summary(one.summary)["flash.unit_programs_by_cause.host"])
            row = [str(k), str(n), str(units), str(units % 6)]
            for ways, bpp in DRIVES.values():
                for allocation in ("rotation", "static"):
                    r = flashlife.run(
                        "reusable-small", overrides=settings(trace, ways, bpp, allocation), until="writes:3dw"
                    )
                    row.append(f"{flashlife.flatten_summary(r.summary)['write_amplification']:.3f}")
            print(",".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
