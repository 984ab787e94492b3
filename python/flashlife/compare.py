"""A technique beside its baseline: the same workload and seed, metric by metric."""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd

from ._util import write_atomic
from .api import ConfigLike, Result, resolve_config, run
from .summary import flatten_summary

__all__ = ["DEFAULT_METRICS", "compare", "compare_results"]

#: The metrics `compare` reports by default, as dotted summary names.
DEFAULT_METRICS: tuple[str, ...] = (
    "write_amplification",
    "flash.page_reads",
    "flash.page_programs",
    "flash.block_erases",
    "gc.valid_units_moved",
    "latency_us.read.mean",
    "latency_us.read.p99",
    "latency_us.write.mean",
    "latency_us.write.p99",
    "latency_us.all.mean",
    "latency_us.all.p99",
    "latency_us.all.p999",
    "throughput.iops",
    "throughput.mb_per_s",
    "lifetime.host_bytes_written",
    "lifetime.drive_writes",
    "lifetime.dead_blocks",
    "lifetime.life_used",
    "failures.program",
    "failures.erase",
    "failures.uncorrectable_reads",
    "failures.bad_pages",
    "run.simulated_ns",
)


def _ratio(technique: float, baseline: float) -> float:
    if baseline == 0 or not math.isfinite(baseline) or not math.isfinite(technique):
        return math.nan
    return technique / baseline


def _on_base(base: ConfigLike, side: ConfigLike) -> dict[str, Any]:
    """The full configuration of `base` with a side's keys (dict or TOML file) on top."""
    if side is None:
        return resolve_config(base)
    if isinstance(side, Mapping):
        return resolve_config(base, overrides=side)
    path = os.fspath(side)
    if not os.path.isfile(path):
        raise ValueError(f"compare: with base=, a side is a dict of keys or a TOML file, not {path!r}")
    with open(path, "rb") as f:
        return resolve_config(base, overrides=tomllib.load(f))


def compare_results(
    technique: Result | Mapping[str, Any],
    baseline: Result | Mapping[str, Any],
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Compare two results (or summaries): one row per metric, columns baseline, technique, ratio.

    The ratio is technique / baseline, NaN where the baseline is zero. Metrics missing from both
    summaries are skipped; numeric fields only.
    """
    t = flatten_summary(technique.summary if isinstance(technique, Result) else technique)
    b = flatten_summary(baseline.summary if isinstance(baseline, Result) else baseline)
    rows = []
    for m in metrics or DEFAULT_METRICS:
        if m not in t and m not in b:
            if metrics is not None:
                raise KeyError(f"compare: no metric {m!r} in the summaries")
            continue
        bv, tv = b.get(m, math.nan), t.get(m, math.nan)
        if isinstance(bv, bool) or isinstance(tv, bool):
            bv, tv = float(bv), float(tv)
        if not isinstance(bv, int | float) or not isinstance(tv, int | float):
            continue
        rows.append({"metric": m, "baseline": float(bv), "technique": float(tv), "ratio": _ratio(tv, bv)})
    return pd.DataFrame(rows, columns=["metric", "baseline", "technique", "ratio"]).set_index("metric")


def compare(
    technique: ConfigLike,
    baseline: ConfigLike,
    workload: str | os.PathLike | Mapping[str, Any] | None = None,
    until: str | None = None,
    seed: int = 1,
    overrides: Mapping[str, Any] | Sequence[str] | None = None,
    *,
    base: ConfigLike = None,
    metrics: Sequence[str] | None = None,
    out_dir: str | os.PathLike | None = None,
    overwrite: bool = False,
) -> pd.DataFrame:
    """Run a technique and its baseline on the same workload and seed, and compare them.

    technique, baseline: configurations (preset name, TOML path or dict of keys); with `base`,
    what each changes in it: a dict of keys (e.g. `{"gc.victim": "fifo"}`), a TOML file of
    keys, or None (the base itself);
    base: a configuration both start from (preset name, TOML path or dict), e.g. "tiny";
    workload: a dict of `workload.*` keys or a trace path, for both (default: each config's own);
    until, seed, overrides: as for `flashlife.run`, applied to both;
    metrics: dotted summary names to report (default: `DEFAULT_METRICS`);
    out_dir: also write each run's files to `out_dir/technique` and `out_dir/baseline`, and
    the table to `out_dir/comparison.csv`; folders holding an earlier run's results are refused
    unless `overwrite` (as for `flashlife.run`).

    Returns a DataFrame indexed by metric with columns `baseline`, `technique` and `ratio`
    (technique / baseline). The two runs go in parallel threads (the core releases the GIL).
    `df.attrs["technique"]` and `df.attrs["baseline"]` hold the two summaries.
    """
    if base is not None:
        technique = _on_base(base, technique)
        baseline = _on_base(base, baseline)
    dirs: dict[str, Path | None] = {"technique": None, "baseline": None}
    if out_dir is not None:
        dirs = {k: Path(out_dir) / k for k in dirs}

    def one(name: str, config: ConfigLike) -> Result:
        where = {"out_dir": dirs[name], "overwrite": overwrite}
        return run(config, workload, until=until, seed=seed, overrides=overrides, **where)

    with ThreadPoolExecutor(max_workers=2) as pool:
        ft = pool.submit(one, "technique", technique)
        fb = pool.submit(one, "baseline", baseline)
        rt, rb = ft.result(), fb.result()
    df = compare_results(rt, rb, metrics)
    df.attrs["technique"] = rt.summary
    df.attrs["baseline"] = rb.summary
    if out_dir is not None:
        write_atomic(Path(out_dir) / "comparison.csv", df.to_csv())
    return df
