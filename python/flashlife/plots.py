"""The papers' figure types, drawn with matplotlib (an optional dependency: `pip install 'flashlife[plot]'`).

Every function returns the matplotlib `Figure` it drew on, draws into `ax=` when given (a
matplotlib Axes) instead of a new figure, and saves the figure to `path=` when given. Figures
are made without pyplot, so nothing is shown or kept by matplotlib's global state.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .api import Result
from .summary import flatten_summary, is_flow_field, summary_fields

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["bars_relative", "erase_histogram", "heatmap", "latency_cdf", "over_lifetime", "reuse_cdf"]

PathLike = str | os.PathLike


def _figure(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError("flashlife.plots needs matplotlib: pip install 'flashlife[plot]'") from e
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _finish(fig: Figure, path: PathLike | None) -> Figure:
    if path is not None:
        os.makedirs(os.path.dirname(os.path.abspath(os.fspath(path))), exist_ok=True)
        fig.savefig(os.fspath(path), dpi=150)
    return fig


def _need(df: pd.DataFrame, *cols: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        some = ", ".join(map(str, list(df.columns)[:12]))
        raise KeyError(f"no column(s) {missing} in the results; columns include: {some}, ...")


def _select(df: pd.DataFrame, where: Mapping[str, Any]) -> pd.Series:
    mask = pd.Series(True, index=df.index)
    for k, v in where.items():
        _need(df, k)
        mask &= df[k] == v
    return mask


#: Parameter columns a plot may average over: repeated runs of one configuration.
_REPLICATES = ("seed",)


def _parameters(df: pd.DataFrame) -> list[str]:
    """The columns of sweep results that define a run (grid keys, `workload`, `seed`), as
    opposed to its results (summary fields, `summary.*`) and bookkeeping (`point`, `error`)."""
    fields = summary_fields()
    columns = set(map(str, df.columns))

    def is_parameter(c: str) -> bool:
        if c.startswith("summary.") or c in ("point", "error") or is_flow_field(c):
            return False
        # A grid key named like a summary field keeps its name; the field became summary.KEY.
        return c not in fields or f"summary.{c}" in columns

    return [c for c in df.columns if is_parameter(str(c))]


def _where(df: pd.DataFrame, where: Mapping[str, Any] | None, what: str) -> pd.DataFrame:
    """The rows `where` selects (column -> value); an empty selection is an error."""
    if not where:
        return df
    picked = df[_select(df, where)]
    if picked.empty:
        raise ValueError(f"{what}: no rows match {dict(where)}")
    return picked


def _fixed_settings(df: pd.DataFrame, shown: Sequence[str], what: str) -> dict[str, Any]:
    """The parameters the plot does not show: each must hold one value in the rows plotted
    (else the plot would average runs of different configurations); returns them, for the
    title. Replicates (seeds) are averaged, and the title says so."""
    fixed: dict[str, Any] = {}
    varying: dict[str, list[Any]] = {}
    for c in _parameters(df):
        if c in shown or c in _REPLICATES:
            continue
        values = df[c].drop_duplicates().tolist()
        if len(values) > 1:
            varying[c] = values
        elif values:
            fixed[c] = values[0]
    if varying:
        listed = "; ".join(f"{c}: {', '.join(map(str, v[:6]))}" for c, v in varying.items())
        first = next(iter(varying))
        raise ValueError(
            f"{what}: the rows also vary in {listed}; the plot would average different "
            f"configurations. Select one (where={{{first!r}: ...}}, --where {first}=VALUE) or "
            "show it on an axis"
        )
    return fixed


def _settings_text(fixed: Mapping[str, Any], df: pd.DataFrame) -> str:
    parts = [f"{k}={v}" for k, v in fixed.items()]
    seeds = df["seed"].nunique() if "seed" in df.columns else 1
    if seeds > 1:
        parts.append(f"mean of {seeds} seeds")
    return ", ".join(parts)


def heatmap(
    df: pd.DataFrame,
    x: str,
    y: str,
    metric: str,
    baseline: pd.DataFrame | Mapping[str, Any] | float | None = None,
    *,
    where: Mapping[str, Any] | None = None,
    ax: Axes | None = None,
    path: PathLike | None = None,
    title: str | None = None,
    cmap: str = "viridis",
    annotate: bool = True,
    fmt: str = "{:.2f}",
) -> Figure:
    """A metric over two parameters as a heat map, optionally relative to a baseline.

    df: sweep results (one row per run; several rows per cell are averaged, e.g. seeds);
    x, y: the parameter columns of the two axes; metric: the column shown;
    baseline: None (the metric itself), a number (metric / number), a DataFrame of baseline
    runs with the same x and y columns (metric / the baseline's metric, cell by cell), or a
    mapping column -> value selecting the baseline rows of `df` (e.g. `{"gc.victim": "fifo"}`),
    the other rows being the technique.
    where: column -> value, the rows to plot. Every other parameter column (a grid key,
    `workload`) must hold one value in them, else the call is refused (a heat map would average
    runs of different configurations); seeds are averaged. The fixed settings go in the title.
    This is the form of ZombieNAND's Figure 3 (lifetime gain over reserve x working set).
    """
    _need(df, x, y, metric)
    df = _where(df, where, "heatmap")
    shown = [x, y, metric, *(baseline.keys() if isinstance(baseline, Mapping) else [])]
    settings = _settings_text(_fixed_settings(df, shown, "heatmap"), df)
    label = metric
    if isinstance(baseline, Mapping):
        mask = _select(df, baseline)
        if not mask.any():
            raise ValueError(f"heatmap: no baseline rows match {dict(baseline)}")
        base_df, df = df[mask], df[~mask]
        if df.empty:
            raise ValueError(f"heatmap: every row matches the baseline {dict(baseline)}")
        baseline = base_df
    cells = df.pivot_table(index=y, columns=x, values=metric, aggfunc="mean")
    if isinstance(baseline, pd.DataFrame):
        _need(baseline, x, y, metric)
        base = baseline.pivot_table(index=y, columns=x, values=metric, aggfunc="mean")
        cells = cells / base.reindex_like(cells)
        label = f"{metric} / baseline"
    elif baseline is not None:
        cells = cells / float(baseline)
        label = f"{metric} / {baseline:g}"
    cells = cells.sort_index().sort_index(axis=1)
    fig, ax = _figure(ax, (6.0, 4.5))
    values = cells.to_numpy(dtype=float)
    im = ax.imshow(values, origin="lower", aspect="auto", cmap=cmap)
    ax.set_xticks(
        range(len(cells.columns)), [f"{c:g}" if isinstance(c, float) else str(c) for c in cells.columns]
    )
    ax.set_yticks(
        range(len(cells.index)), [f"{c:g}" if isinstance(c, float) else str(c) for c in cells.index]
    )
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    default = f"{metric} relative to baseline" if label != metric else metric
    ax.set_title(title if title is not None else (f"{default}\n({settings})" if settings else default))
    fig.colorbar(im, ax=ax, label=label)
    if annotate and values.size <= 400:
        finite = values[np.isfinite(values)]
        mid = (finite.min() + finite.max()) / 2 if finite.size else 0.0
        for (i, j), v in np.ndenumerate(values):
            if math.isfinite(v):
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=8,
                        color="black" if v > mid else "white")  # fmt: skip
    return _finish(fig, path)


def _holds(column: pd.Series, label: Any) -> bool:
    """Does any scalar cell of `column` equal `label`? Cells holding lists or arrays (e.g. a
    flattened histogram) never match, and must not make the comparison ambiguous."""
    return any(isinstance(v, (str, int, float, bool, np.generic)) and v == label for v in column.to_numpy())


def bars_relative(
    df: pd.DataFrame,
    group: str,
    metric: str,
    baseline_label: Any,
    *,
    by: str | None = None,
    include_baseline: bool = False,
    where: Mapping[str, Any] | None = None,
    ax: Axes | None = None,
    path: PathLike | None = None,
    title: str | None = None,
) -> Figure:
    """Bars of a metric relative to a baseline, grouped (e.g. per workload).

    df: results; group: the column along the x axis (e.g. "workload"); metric: the column shown;
    baseline_label: the value, in column `by`, of the baseline rows; by: the column naming the
    variants (default: the first column other than `group` holding `baseline_label`).
    Each bar is mean(metric of a variant in a group) / mean(metric of the baseline in that
    group); a line marks 1. The form of ZombieNAND's Figure 5 and Reusable SSD's Figures 7-8.
    where: column -> value, the rows to plot; every other parameter column must hold one value
    in them (as for `heatmap`); seeds are averaged.
    """
    _need(df, group, metric)
    df = _where(df, where, "bars_relative")
    if by is None:
        for c in df.columns:
            if c not in (group, metric) and _holds(df[c], baseline_label):
                by = c
                break
        else:
            raise ValueError(
                f"bars_relative: no column holds the baseline label {baseline_label!r}; pass by="
            )
    _need(df, by)
    settings = _settings_text(_fixed_settings(df, [group, by, metric], "bars_relative"), df)
    means = df.groupby([group, by], sort=False)[metric].mean().unstack(by)
    if baseline_label not in means.columns:
        raise ValueError(f"bars_relative: no rows with {by} == {baseline_label!r}")
    rel = means.div(means[baseline_label], axis=0)
    variants = [c for c in rel.columns if include_baseline or c != baseline_label]
    if not variants:
        raise ValueError(f"bars_relative: only baseline rows ({by} == {baseline_label!r})")
    fig, ax = _figure(ax, (max(5.0, 1.2 * len(rel.index) * max(1, len(variants)) ** 0.5), 4.0))
    n = len(variants)
    width = 0.8 / n
    xs = np.arange(len(rel.index))
    for i, v in enumerate(variants):
        ax.bar(xs + (i - (n - 1) / 2) * width, rel[v].to_numpy(dtype=float), width, label=f"{by}={v}")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(xs, [str(g) for g in rel.index])
    ax.set_xlabel(group)
    ax.set_ylabel(f"{metric} relative to {baseline_label}")
    default = f"{metric} relative to {by}={baseline_label}"
    ax.set_title(title if title is not None else (f"{default}\n({settings})" if settings else default))
    ax.legend()
    return _finish(fig, path)


def _labelled(obj: Any, kinds: tuple[type, ...]) -> list[tuple[str | None, Any]]:
    """[(label, item)] of a mapping label -> item, or [(None, obj)] of a single item."""
    if isinstance(obj, Mapping) and not isinstance(obj, kinds):
        if not obj:
            raise ValueError("nothing to plot: the mapping is empty")
        return [(str(k), v) for k, v in obj.items()]
    return [(None, obj)]


#: Time-series columns measured over each interval (not cumulative).
_PER_INTERVAL = frozenset({"host_mb_per_s", "iops", "mean_latency_us", "p99_latency_us", "wa_interval"})


def over_lifetime(
    timeseries: pd.DataFrame | Result | Mapping[str, pd.DataFrame | Result],
    metric: str,
    *,
    ax: Axes | None = None,
    path: PathLike | None = None,
    title: str | None = None,
) -> Figure:
    """A time-series metric over normalised lifetime (host bytes written / the final value).

    timeseries: a run's time series (DataFrame or Result), or a mapping label -> time series
    for one line each (e.g. baseline and technique); metric: a time-series column such as
    `p99_latency_us`, `mean_latency_us`, `wa_cumulative`, `free_blocks`, `life_used`.
    For per-interval columns (latency, iops, MB/s, interval WA), intervals in which no request
    completed are left out.
    The form of ZombieNAND's Figure 6 (latency over the drive's lifetime).
    """
    series = _labelled(timeseries, (pd.DataFrame, Result))
    fig, ax = _figure(ax, (6.0, 4.0))
    for label, ts in series:
        if isinstance(ts, Result):
            ts = ts.timeseries
        if not isinstance(ts, pd.DataFrame):
            raise TypeError(
                f"over_lifetime: expected a time-series DataFrame or Result, not {type(ts).__name__}"
            )
        _need(ts, "host_bytes_written", metric)
        if ts.empty:
            raise ValueError("over_lifetime: the time series is empty")
        final = float(ts["host_bytes_written"].iloc[-1])
        if metric in _PER_INTERVAL and "iops" in ts.columns:
            # An interval in which no request completed (e.g. the drain after the last one)
            # has no latency or rate: leave it out rather than draw a drop to 0.
            ts = ts[ts["iops"] > 0]
        if "measured_requests" in ts.columns and metric in ("mean_latency_us", "p99_latency_us"):
            # Sampled timing: latency exists only in the rows that measured requests (one
            # point per window); the rows between have none (NaN).
            ts = ts[ts["measured_requests"] > 0]
        x = ts["host_bytes_written"].to_numpy(dtype=float) / (final if final > 0 else 1.0)
        ax.plot(x, ts[metric].to_numpy(dtype=float), marker=".", label=label)
    ax.set_xlabel("normalised lifetime (host bytes written / final)")
    ax.set_ylabel(metric)
    ax.set_xlim(0, 1.02)
    ax.set_title(title if title is not None else f"{metric} over lifetime")
    if any(label is not None for label, _ in series):
        ax.legend()
    return _finish(fig, path)


def erase_histogram(
    result_or_df: pd.DataFrame | Result | Mapping[str, pd.DataFrame | Result],
    *,
    ax: Axes | None = None,
    path: PathLike | None = None,
    title: str | None = None,
) -> Figure:
    """Blocks per erase count (wear distribution) of a run.

    result_or_df: a Result, a DataFrame with columns `erase_count` and `blocks` (as in
    `erase_histogram.csv`), or a mapping label -> either, drawn as overlaid steps.
    """
    series = _labelled(result_or_df, (pd.DataFrame, Result))
    fig, ax = _figure(ax, (6.0, 4.0))
    for label, h in series:
        if isinstance(h, Result):
            h = h.erase_histogram
        if not isinstance(h, pd.DataFrame):
            raise TypeError(f"erase_histogram: expected a DataFrame or Result, not {type(h).__name__}")
        _need(h, "erase_count", "blocks")
        x = h["erase_count"].to_numpy()
        y = h["blocks"].to_numpy()
        if len(series) == 1:
            ax.bar(x, y, width=1.0, align="center")
        else:
            ax.step(x, y, where="mid", label=label)
    ax.set_xlabel("erase count")
    ax.set_ylabel("blocks")
    ax.set_title(title if title is not None else "erase count histogram")
    if len(series) > 1:
        ax.legend()
    return _finish(fig, path)


def _cdf_frame_points(df: pd.DataFrame, op: str, tail: bool) -> list[tuple[float, float]]:
    """Points of a run's latency CDF table (columns op, latency_us, fraction)."""
    rows = df[df["op"] == op].sort_values("latency_us")
    xs = [float(x) for x in rows["latency_us"]]
    fs = [float(f) for f in rows["fraction"]]
    if not tail:
        return list(zip(xs, fs, strict=True))
    # The share of requests at least as slow as each bucket: 1 - CDF of the bucket before.
    return [(x, 1.0 - prev) for x, prev in zip(xs, [0.0, *fs[:-1]], strict=True)]


def _latency_points(obj: Any, op: str, tail: bool) -> tuple[list[tuple[float, float]], bool]:
    """(latency us, fraction) points of one result, the CDF or 1 - CDF (fraction at least that
    slow) for tail, and whether they are the whole histogram (else the summary's percentiles)."""
    if isinstance(obj, Result) and not obj.latency_cdf.empty:
        obj = obj.latency_cdf
    if isinstance(obj, pd.DataFrame):
        if not {"op", "latency_us", "fraction"} <= set(obj.columns):
            raise TypeError("latency_cdf: a table needs the columns op, latency_us and fraction")
        return _cdf_frame_points(obj, op, tail), True
    if isinstance(obj, Result):
        obj = obj.summary
    if isinstance(obj, pd.Series):
        obj = obj.to_dict()
    if not isinstance(obj, Mapping):
        raise TypeError(
            f"latency_cdf: expected a Result, a summary dict or a results row, not {type(obj).__name__}"
        )
    # A summary, flattened, names the percentiles as a sweep row does: one lookup for both.
    flat = flatten_summary(obj) if "latency_us" in obj else obj
    names = ("count", "p50", "p99", "p999", "max")
    lat: dict[str, Any] = {k: flat.get(f"latency_us.{op}.{k}") for k in names}
    count = lat.get("count") or 0
    if not count or (isinstance(count, float) and math.isnan(count)):
        return [], False
    count = int(count)
    pts = [("p50", 0.5, 2), ("p99", 0.99, 100), ("p999", 0.999, 1000)]
    out = [(float(lat[k]), (1.0 - q) if tail else q) for k, q, n in pts if count >= n]
    out.append((float(lat["max"]), 1.0 / count if tail else 1.0))
    return out, False


def _is_single(obj: Any) -> bool:
    if isinstance(obj, Result | pd.Series | pd.DataFrame):
        return True
    return isinstance(obj, Mapping) and (
        "latency_us" in obj or any(str(k).startswith("latency_us.") for k in obj)
    )


def latency_cdf(
    results: Result | Mapping[str, Any] | pd.Series | Mapping[str, Result | Mapping[str, Any] | pd.Series],
    op: str = "write",
    *,
    tail: bool = True,
    ax: Axes | None = None,
    path: PathLike | None = None,
    title: str | None = None,
) -> Figure:
    """Latency distribution of reads, writes or all requests.

    results: a Result, a run's latency CDF table (`latency_cdf.csv` of a run folder: columns
    op, latency_us, fraction), a summary dict, a row of sweep results, or a mapping label ->
    any of these (one line each); op: "read", "write" or "all"; tail: plot the fraction of
    requests at least that slow (1 - CDF) on log-log axes, which shows the tail (else the CDF
    itself). A Result or CDF table gives the whole distribution (one point per histogram
    bucket); a summary or sweep row only has percentiles, so that curve goes through p50,
    p99 (from 100 requests on), p99.9 (from 1000) and the max (the slowest 1 / count), marked.
    """
    if op not in ("read", "write", "all"):
        raise ValueError(f"latency_cdf: op must be 'read', 'write' or 'all', not {op!r}")
    if _is_single(results):
        series: list[tuple[str | None, Any]] = [(None, results)]
    elif isinstance(results, Mapping):
        series = [(str(k), v) for k, v in results.items()]
    else:
        raise TypeError(f"latency_cdf: unexpected {type(results).__name__}")
    fig, ax = _figure(ax, (6.0, 4.0))
    drawn = 0
    for label, obj in series:
        pts, whole = _latency_points(obj, op, tail)
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=None if whole else "o", label=label)
        drawn += 1
    if not drawn:
        raise ValueError(f"latency_cdf: no {op} requests in the results")
    ax.set_xscale("log")
    ax.set_xlabel(f"{op} latency (us)")
    if tail:
        ax.set_yscale("log")
        ax.set_ylabel("fraction of requests at least this slow (1 - CDF)")
    else:
        ax.set_ylabel("fraction of requests (CDF)")
        ax.set_ylim(0, 1.02)
    ax.set_title(title if title is not None else f"{op} latency distribution")
    if any(label is not None for label, _ in series):
        ax.legend()
    return _finish(fig, path)


def reuse_cdf(
    stats: Mapping[str, Any],
    *,
    ax: Axes | None = None,
    path: PathLike | None = None,
    title: str | None = None,
) -> Figure:
    """Address-reuse CDF of a trace (from `flashlife trace stats --json`): the share of distinct
    pages, and of the accesses they get, against how many times a page is accessed."""
    points = stats.get("access_cdf") or []
    if not points:
        raise ValueError("reuse_cdf: these statistics hold no access_cdf points")
    x = [p["accesses_at_most"] for p in points]
    fig, ax = _figure(ax, (6.0, 4.0))
    ax.step(x, [p["page_fraction"] for p in points], where="post", label="distinct pages")
    ax.step(x, [p["access_fraction"] for p in points], where="post", label="accesses")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("accesses per 4 KiB page (at most)")
    ax.set_ylabel("cumulative fraction")
    ax.set_title(title if title is not None else "address reuse")
    ax.legend()
    return _finish(fig, path)
