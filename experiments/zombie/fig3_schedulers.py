"""Figure 3 under two schedulers: the same sweep points of two `flashlife reproduce zombienand
--sections fig3` folders (say `--scheduler reservation` and `--scheduler queued`), side by side.

Reads the points each has saved (`OUT/data/zombienand/fig3_{tlc,mlc}/points/*.json`, a partial
run's too) and, for every (reserve, working set, write share) whose baseline and zombie runs
are saved in both, prints the lifetime ratio and the lifetime-mean latency ratio (zombie /
baseline, as the section computes them) under each, and a summary per mode: the lowest and
best lifetime ratio, how far the two schedulers' ratios differ, and the latency ratio's range.

    python3 experiments/zombie/fig3_schedulers.py OUT_A OUT_B [CSV]
"""

import sys
from pathlib import Path

import pandas as pd

from flashlife.reproduce.zombienand import _zombie_pairs
from flashlife.sweep import load_results

KEYS = ["capacity.reserve", "workload.working_set", "workload.read_ratio"]


def pairs(out: Path, mode: str) -> pd.DataFrame:
    """The sweep's complete (baseline, zombie) pairs; none if it has saved no point yet."""
    try:
        df = load_results(out / "data" / "zombienand" / f"fig3_{mode}")
    except FileNotFoundError:
        return pd.DataFrame()
    return _zombie_pairs(df, KEYS)[[*KEYS, "lifetime_ratio", "latency_ratio"]]


def main(a: Path, b: Path, csv: Path | None) -> int:
    frames = []
    for mode in ("tlc", "mlc"):
        pa, pb = pairs(a, mode), pairs(b, mode)
        m = pa.merge(pb, on=KEYS, suffixes=("_a", "_b")) if len(pa) and len(pb) else pa.iloc[0:0]
        if m.empty:
            print(f"{mode.upper()}: no point saved in both")
            continue
        m = m.sort_values(KEYS, ignore_index=True)
        m.insert(0, "mode", mode)
        frames.append(m)
        d = (m["lifetime_ratio_b"] / m["lifetime_ratio_a"] - 1).abs()
        worst = m.loc[d.idxmax()]
        print(f"{mode.upper()}: {len(m)} points in both ({a.name} = a, {b.name} = b)")
        for s in ("a", "b"):
            lt, la = m[f"lifetime_ratio_{s}"], m[f"latency_ratio_{s}"]
            best = m.loc[lt.idxmax()]
            print(
                f"  {s}: lifetime ratio {lt.min():.4f}-{lt.max():.3f} (best at reserve "
                f"{best['capacity.reserve']:.0%}, working set {best['workload.working_set']:.0%}, "
                f"reads {best['workload.read_ratio']:.0%}); latency ratio {la.min():.3f}-{la.max():.3f}"
            )
        print(
            f"  lifetime ratios differ by {d.median():.2%} (median), {d.max():.1%} at most (reserve "
            f"{worst['capacity.reserve']:.0%}, working set {worst['workload.working_set']:.0%}, reads "
            f"{worst['workload.read_ratio']:.0%}: {worst['lifetime_ratio_a']:.3f} / "
            f"{worst['lifetime_ratio_b']:.3f}); "
            f"{(d > 0.01).sum()} points by more than 1%"
        )
    if csv is not None and frames:
        pd.concat(frames).to_csv(csv, index=False, float_format="%.6g")
        print(f"wrote {csv}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]) if len(sys.argv) == 4 else None))
