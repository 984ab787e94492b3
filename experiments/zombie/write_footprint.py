"""How concentrated each trace's writes are: distinct 4 KiB pages written in one pass, and
the fewest pages that take half and 90% of the page writes.

A ZombieNAND drive gains at low reserve only if the blocks that drop first can take most of
the writes while the others rest (docs/techniques/zombienand.md, "Where 10% reserve gains");
that needs the writes' hot set to fit in them. Pages are cut as `trace_mix.py` reads the
requests (the core reader's rules), in the trace's own address space: the reproduction's
`remap_first` fold maps distinct addresses one to one while they fit in half the drive.

    python3 experiments/zombie/write_footprint.py ../shared/traces/msr/web_0-first100k.csv.gz ...
"""

import sys
from collections import Counter
from pathlib import Path

from trace_mix import PAGE, WRITE, requests

MIB = 1 << 20


def footprint(path: Path) -> dict[str, float]:
    writes: Counter[int] = Counter()
    for kind, offset, size in requests(path):
        if kind != WRITE:
            continue
        for page in range(offset // PAGE, (offset + max(size, 1) - 1) // PAGE + 1):
            writes[page] += 1
    total = sum(writes.values())
    out = {"distinct_mib": len(writes) * PAGE / MIB}
    counts = sorted(writes.values(), reverse=True)
    for share in (0.5, 0.9):
        run, k = 0, 0
        while k < len(counts) and run < share * total:
            run += counts[k]
            k += 1
        out[f"hot{int(share * 100)}_mib"] = k * PAGE / MIB
    return out


def main() -> int:
    print("trace\twritten MiB (distinct 4 KiB pages)\tMiB taking 50% of page writes\tMiB taking 90%")
    for p in map(Path, sys.argv[1:]):
        f = footprint(p)
        print(f"{p.name}\t{f['distinct_mib']:.1f}\t{f['hot50_mib']:.1f}\t{f['hot90_mib']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
