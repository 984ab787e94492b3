#!/usr/bin/env python3
"""Bad blocks against the programs each page really got: the lognormal model fails a page of
level L on each program with 1 - (1 - L)^(1/E), E = `failures.exposure` (the pilot's erase count
+ 1), so a run whose pages get k programs expects the closed form's bad-block ratio with E[L]
scaled by k / E. This prints, per RBER and policy of a reproduction's results.csv, the run's
programs per page (k = mean erase count + 1, preconditioning included), k / E, the bad-block
ratio the closed form predicts at E and at k, and the measured ratio (mean and range over seeds).

    python3 experiments/salvage/exposure_vs_programs.py RESULTS_CSV --exposure 28.77
    python3 experiments/salvage/exposure_vs_programs.py RESULTS_CSV --pilot PILOT_RUN_DIR

RESULTS_CSV: data/salvage/fig4_qd32*/results.csv of `flashlife reproduce salvage`; the exposure
is the report's "Exposure from the pilot", or a pilot run folder's erase count mean + 1.
Geometry from the preset (default `salvage-table1`).
"""

import argparse
import json
import math
from pathlib import Path

import pandas as pd

from flashlife import resolve_config
from flashlife.reproduce.salvage import expected_bad_block_ratio


def ratio_at(rber: float, page_bits: int, sigma: float, pages: int, scale: float) -> float:
    """The closed form with each page's failure probability scaled by `scale` (k / E; small L)."""
    mode = -math.expm1(page_bits * math.log1p(-rber))
    mean = min(1.0, mode * math.exp(1.5 * sigma * sigma) * scale)
    return -math.expm1(pages * math.log1p(-mean))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--exposure", type=float)
    ap.add_argument("--pilot", type=Path, help="run folder of the pilot (summary.json)")
    ap.add_argument("--preset", default="salvage-table1")
    a = ap.parse_args()
    if a.pilot is not None:
        summary = json.loads((a.pilot / "summary.json").read_text())
        exposure = summary["lifetime"]["erase_count"]["mean"] + 1.0
        print(f"pilot: WA {summary['write_amplification']:.2f}, exposure {exposure:.2f}")
    elif a.exposure is not None:
        exposure = a.exposure
    else:
        ap.error("--exposure or --pilot")
    cfg = resolve_config(a.preset)
    bits = cfg["flash"]["page_size"] * 8
    sigma = cfg["failures"]["sigma"]
    pages = cfg["geometry"]["pages_per_block"]
    df = pd.read_csv(a.results)
    print("rber     policy        k      k/E    pred@E   pred@k   measured (min-max)        WA")
    for (rber, policy), g in df.groupby(["failures.rber", "failures.on_program_failure"]):
        k = g["lifetime.erase_count.mean"].mean() + 1.0
        bb = g["failures.bad_block_ratio"]
        print(
            f"{rber:.0e}  {policy:12s} {k:6.2f}  {k / exposure:.3f}  "
            f"{expected_bad_block_ratio(rber, bits, sigma, pages):.3%}   "
            f"{ratio_at(rber, bits, sigma, pages, k / exposure):.3%}   "
            f"{bb.mean():.3%} ({bb.min():.3%}-{bb.max():.3%})   {g['write_amplification'].mean():.2f}"
        )


if __name__ == "__main__":
    main()
