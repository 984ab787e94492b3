"""Figures 5 and 6 from the points a trace reproduction has saved so far.

`flashlife reproduce zombienand --sections fig5,fig6` writes its report only once every point of
both modes has run; at the paper scale (the full-size trace drive, 96 runs to death) that is
hours on two cores, and `--resume` goes on from the saved points. This reads those points
(`OUT/data/zombienand/fig5_{tlc,mlc}/points/*.json` and their time series) and prints, for every
(trace, mode, reserve) whose baseline and zombie runs are both saved, what the two sections
would report: the lifetime ratio, the baseline's share of rated erases used at death, and
Figure 6's latency columns (the reproduction's own functions). Runs whose partner is
still missing are listed with their bytes written and share of rated erases at death.

    python3 experiments/zombie/fig56_points.py OUT [CSV]   # OUT: the reproduction's --out

With CSV, the complete pairs' rows are also written there (one per mode, trace and reserve).
"""

import sys
from pathlib import Path

import pandas as pd

from flashlife.reproduce.zombienand import _zombie_pairs, fig6_point
from flashlife.sweep import load_results


def main(out: Path, csv: Path | None = None) -> int:
    base = out / "data" / "zombienand"
    if not base.is_dir():
        print(f"{base}: no such folder (give the reproduction's --out)", file=sys.stderr)
        return 2
    table = []
    for mode in ("tlc", "mlc"):
        mode_dir = base / f"fig5_{mode}"
        if not (mode_dir / "points").is_dir():
            print(f"{mode.upper()}: no points saved")
            continue
        df = load_results(mode_dir)  # the saved point files while the sweep is unfinished
        m = _zombie_pairs(df, ["workload", "capacity.reserve"])
        used = df[df["flash.end_of_life"] == "retire"].set_index(["workload", "capacity.reserve"])
        print(f"{mode.upper()}: {len(df)} runs saved, {len(m)} pairs complete")
        print(
            "trace          reserve  base GiB  zombie GiB  lifetime  base life_used"
            "  lat 0-95  lat 95-100  after mean  after worst"
        )
        for d in m.sort_values(["workload", "capacity.reserve"]).to_dict("records"):
            _, _, (e, late, am, aw) = fig6_point(mode_dir, d)
            lu = float(used.loc[(d["workload"], d["capacity.reserve"]), "lifetime.life_used"])
            table.append(
                {
                    "mode": mode,
                    "trace": d["workload"],
                    "reserve": d["capacity.reserve"],
                    "baseline_gib": d["lifetime.host_bytes_written_base"] / 2**30,
                    "zombie_gib": d["lifetime.host_bytes_written_zombie"] / 2**30,
                    "lifetime_ratio": d["lifetime_ratio"],
                    "baseline_life_used": lu,
                    "latency_0_95": e,
                    "latency_95_100": late,
                    "afterlife_mean": am,
                    "afterlife_worst": aw,
                }
            )
            print(
                f"{d['workload']:<14} {d['capacity.reserve']:>6.0%}  "
                f"{d['lifetime.host_bytes_written_base'] / 2**30:>8.2f}  "
                f"{d['lifetime.host_bytes_written_zombie'] / 2**30:>10.2f}  {d['lifetime_ratio']:>8.3f}  "
                f"{lu:>13.1%}  {e:>8.3f}  {late:>10.3f}  {am:>10.3f}  {aw:>11.3f}"
            )
        done = set(zip(m["workload"], m["capacity.reserve"], strict=True))
        alone = df[[(w, r) not in done for w, r in zip(df["workload"], df["capacity.reserve"], strict=True)]]
        for d in alone.to_dict("records"):
            which = f"{d['workload']} {d['capacity.reserve']:.0%}"
            print(
                f"  only the {d['flash.end_of_life']} run saved: {which}, "
                f"{d['lifetime.host_bytes_written'] / 2**30:.2f} GiB at death, "
                f"{d['lifetime.life_used']:.1%} of rated erases used"
            )
    if csv is not None:
        pd.DataFrame(table).to_csv(csv, index=False, float_format="%.6g")
        print(f"wrote {csv} ({len(table)} rows)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) == 3 else None))
