#!/usr/bin/env python3
"""The ZombieNAND paper's Table III for our traces: by bytes moved, the read and write shares,
and within each the random and sequential shares (issue 17, item 5).

`flashlife trace stats` gives the read share by bytes and the sequential share by *requests*,
reads and writes together. Table III splits sequentiality by kind and counts bytes, so this
script reads the traces again with the same rules as the core's reader and the same definition
of sequential as `trace stats` (`crates/flashlife/src/workload/tracestats.rs`): a request is
sequential when it starts at the byte where the previous request of the same kind (read or
write) ended, whatever its device or volume. Its bytes then count as sequential, else as random.

The paper does not define its measure. A second one is given beside it (columns `*_4k`): each
request is cut into 4 KiB pages and a page is sequential when it starts where the previous page
of the same kind ended, so only the first 4 KiB (or less) of a request that does not continue
the previous one count as random.

Formats as the core reads them (docs/workloads.md; ../shared/traces/README.md):
- MSR CSV `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, bytes;
- DiskSim / MQSim ASCII `time device block size flags`, 512-byte blocks, flags bit 0 = read;
- blkparse text, the issue (`D`) events; rwbs with `D` (discard) ignored, `R` read, `W` write,
  zero-count events ignored; the summary trailer ignored;
- CloudPhysics CSV `version,time,op,size,lbn`, op a SCSI opcode in hex (08/28/88/a8 read,
  0a/2a/8a/aa write, others ignored), size in bytes, lbn in 512-byte blocks.

The `requests`, `read_bytes`, `write_bytes` and `sequential` columns are the same counts
`flashlife trace stats --json` reports, to check that both read the same requests.

    python3 experiments/zombie/trace_mix.py ../shared/traces            # every trace there
    python3 experiments/zombie/trace_mix.py FILE [FILE ...] [--csv OUT]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import sys
from pathlib import Path

READ, WRITE = 0, 1
PAGE = 4096
CP_READ = {0x08, 0x28, 0x88, 0xA8}
CP_WRITE = {0x0A, 0x2A, 0x8A, 0xAA}


def open_text(path: Path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", errors="replace") if gz else open(path, errors="replace")


def detect(line: str) -> str:
    t = line.strip().lstrip("\ufeff")
    if t.lower().startswith("version,time,op,size,lbn"):
        return "cloudphysics"
    f = t.split()
    if len(f) >= 7 and "," in f[0] and all(p.isdigit() for p in f[0].split(",", 1)):
        return "blkparse"
    if "," in t:
        return "msr"
    return "disksim"


def requests(path: Path):
    """(kind, offset, size) of every data request, in trace order."""
    fmt = None
    with open_text(path) as lines:
        for line in lines:
            t = line.strip().lstrip("\ufeff")
            if not t or t.startswith("#"):
                continue
            if fmt is None:
                fmt = detect(t)
                if fmt == "cloudphysics" and t.lower().startswith("version,"):
                    continue
            if fmt == "msr":
                f = t.split(",")
                kind = READ if f[3].strip().lower() == "read" else WRITE
                yield kind, int(f[4]), int(f[5])
            elif fmt == "disksim":
                f = t.split()
                kind = READ if int(f[4]) & 1 else WRITE
                yield kind, int(f[2]) * 512, int(f[3]) * 512
            elif fmt == "blkparse":
                f = t.split()
                if len(f) < 6 or "," not in f[0] or f[5] != "D":
                    continue  # other events, or the per-CPU summary at the end
                rwbs = f[6]
                if "D" in rwbs:
                    continue
                kind = READ if "R" in rwbs else WRITE if "W" in rwbs else None
                if kind is None or len(f) < 10 or f[8] != "+" or int(f[9]) == 0:
                    continue
                yield kind, int(f[7]) * 512, int(f[9]) * 512
            else:
                f = t.split(",")
                op = int(f[2], 16)
                kind = READ if op in CP_READ else WRITE if op in CP_WRITE else None
                if kind is None:
                    continue
                yield kind, int(f[4]) * 512, int(f[3])


def mix(path: Path) -> dict[str, object]:
    last_end: list[int | None] = [None, None]
    total = [0, 0]
    seq = [0, 0]
    rnd4k = [0, 0]
    n = seq_n = 0
    for kind, offset, size in requests(path):
        size = max(size, 1)
        n += 1
        total[kind] += size
        if last_end[kind] == offset:
            seq[kind] += size
            seq_n += 1
        else:
            rnd4k[kind] += min(size, PAGE)
        last_end[kind] = offset + size
    moved = total[READ] + total[WRITE]

    def pct(a: int, b: int) -> float:
        return round(100.0 * a / b, 1) if b else float("nan")

    return {
        "trace": str(path),
        "requests": n,
        "read_bytes": total[READ],
        "write_bytes": total[WRITE],
        "sequential": seq_n,
        "write_pct": pct(total[WRITE], moved),
        "write_random_pct": pct(total[WRITE] - seq[WRITE], total[WRITE]),
        "write_seq_pct": pct(seq[WRITE], total[WRITE]),
        "read_pct": pct(total[READ], moved),
        "read_random_pct": pct(total[READ] - seq[READ], total[READ]),
        "read_seq_pct": pct(seq[READ], total[READ]),
        "random_pct": pct(moved - seq[READ] - seq[WRITE], moved),
        "write_random_4k_pct": pct(rnd4k[WRITE], total[WRITE]),
        "read_random_4k_pct": pct(rnd4k[READ], total[READ]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="trace files, or a folder (every file but README.md)")
    ap.add_argument("--csv", help="also write the table to this CSV file")
    a = ap.parse_args()
    files: list[Path] = []
    for p in map(Path, a.paths):
        files += (
            sorted(q for q in p.rglob("*") if q.is_file() and q.name != "README.md") if p.is_dir() else [p]
        )
    rows = [mix(p) for p in files]
    cols = list(rows[0])
    w = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([r[c] for c in cols])
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            c = csv.DictWriter(f, cols)
            c.writeheader()
            c.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
