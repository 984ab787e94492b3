#!/usr/bin/env python3
"""Why Reusable SSD's lifetime gain falls short of the paper's closed form 0.3/e + 0.7.

The closed form assumes every block spends the first 30% of its P/E budget taking second
writes at the erasure ratio e measured early in life, and none after. This runs the setup of
the test `lifetime_gain_zipf2_with_wear_leveling_regression_pin` (the small preset at CI
size, zipf, op 28%, threshold wear leveling, a P/E limit of 100) to several lengths and prints,
phase by phase, both drives' erasures, their ratio, Reusable SSD's second-written units and
the share of each drive's blocks already past the 30% of their budget after which a block is
no longer paired. Then the closed form again, with the erasure ratio and the share of the
budget actually spent while second writes ran.

    python3 experiments/reusable/lifetime_phases.py [--alpha 2] [--threshold 16]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import pandas as pd

PE_LIMIT = 100


def run(out: Path, enabled: bool, until: str, alpha: float, threshold: int) -> tuple[dict, pd.DataFrame]:
    sets = {
        "geometry.ways": "2",
        "geometry.blocks_per_plane": "256",
        "workload.kind": '"zipf"',
        "workload.zipf.alpha": str(alpha),
        "workload.read_ratio": "0",
        "capacity.overprovisioning": "0.28",
        "wear_leveling.enabled": "true",
        "wear_leveling.threshold": str(threshold),
        "flash.mlc.pe_limit": str(PE_LIMIT),
        "reusable.enabled": str(enabled).lower(),
        "ftl.timing": "false",
        "run.progress": "off",
    }
    args = ["flashlife", "run", "--preset", "reusable-small", "--until", until, "--out", str(out)]
    for k, v in sets.items():
        args += ["--set", f"{k}={v}"]
    subprocess.run(args, check=True, capture_output=True)
    return json.loads((out / "summary.json").read_text()), pd.read_csv(out / "erase_histogram.csv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alpha", type=float, default=2.0)
    ap.add_argument("--threshold", type=int, default=16)
    ap.add_argument("--dw", type=int, nargs="+", default=[4, 10, 20, 30, 40, 60, 80])
    a = ap.parse_args()
    reuse_limit = 0.3 * PE_LIMIT
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for dw in [*a.dw, None]:
            row: dict[str, float] = {"dw": float(dw) if dw else float("nan")}
            for name, enabled in (("reu", True), ("std", False)):
                out = Path(tmp) / f"{name}_{dw}"
                s, h = run(out, enabled, f"writes:{dw}dw" if dw else "death", a.alpha, a.threshold)
                if dw is None:
                    row["dw"] = float("nan")
                    row[f"{name}_death_dw"] = s["lifetime"]["drive_writes"]
                row[f"{name}_erases"] = s["flash"]["block_erases"]
                row[f"{name}_past"] = h[h.erase_count >= reuse_limit].blocks.sum() / h.blocks.sum()
                row[f"{name}_mean_wear"] = (h.erase_count * h.blocks).sum() / h.blocks.sum()
                if enabled:
                    row["second_units"] = (s.get("techniques") or {}).get("reusable", {}).get("units", 0)
            rows.append(row)
    df = pd.DataFrame(rows)
    death = df.iloc[-1]
    phases = df.iloc[:-1].copy()
    print(f"zipf({a.alpha}), op 28%, wear_leveling.threshold = {a.threshold}, P/E limit {PE_LIMIT}")
    print(
        "drive writes | erasures Reusable / standard (this phase) | ratio | second-written units (phase) "
        "| blocks past 30 cycles Reusable / standard | mean cycles Reusable / standard"
    )
    prev = {"reu_erases": 0, "std_erases": 0, "second_units": 0, "dw": 0}
    for _, r in phases.iterrows():
        de_r, de_s = r.reu_erases - prev["reu_erases"], r.std_erases - prev["std_erases"]
        su = r.second_units - prev["second_units"]
        print(
            f"{prev['dw']:>3.0f}-{r.dw:<3.0f} | {de_r:>7,.0f} / {de_s:>7,.0f} | {de_r / de_s:.3f} | "
            f"{su:>8,.0f} | {r.reu_past:.1%} / {r.std_past:.1%} | "
            f"{r.reu_mean_wear:.1f} / {r.std_mean_wear:.1f}"
        )
        prev = {k: r[k] for k in ("reu_erases", "std_erases", "second_units", "dw")}
    e_early = phases.iloc[0].reu_erases / phases.iloc[0].std_erases
    measured = death.reu_death_dw / death.std_death_dw
    print(
        f"to death: {death.reu_death_dw:.2f} / {death.std_death_dw:.2f} drive writes = x{measured:.3f}, "
        f"erasures {death.reu_erases:,.0f} / {death.std_erases:,.0f}"
    )
    print(
        f"closed form, the early e ({a.dw[0]} drive writes) {e_early:.3f}: "
        f"0.3/e + 0.7 = {0.3 / e_early + 0.7:.3f}"
    )
    # The phase in which second writes ran: up to the first length after which none were added.
    last = phases[phases.second_units < phases.second_units.max()]
    end = phases.iloc[len(last)] if len(last) < len(phases) else phases.iloc[-1]
    share = end.reu_erases / death.reu_erases
    e_phase = end.reu_erases / end.std_erases
    print(
        f"second writes ran until {end.dw:.0f} drive writes: {share:.1%} of Reusable SSD's erasures at "
        f"a ratio of {e_phase:.3f}; the closed form with these, share/e + (1 - share) = "
        f"{share / e_phase + (1 - share):.3f}"
    )


if __name__ == "__main__":
    main()
