"""Parameter sweeps: a grid of runs in threads, worker processes or on a Dask cluster, as one DataFrame.

A sweep is the cartesian product of a grid of dotted configuration keys, a set of named
workloads and a list of seeds, each point run from the same base configuration. With a
`results_dir`, each point's result is written as soon as the run ends, under a name that is a
stable hash of everything that defines the point (its resolved settings, the contents of the
trace files it reads and the flashlife version); running the same sweep again with the same
folder runs only the points whose files are missing.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import sys
import tomllib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import _core
from ._runners import run_dask, run_local, run_threads
from ._traces import TraceHashes, changed_traces, trace_path
from ._util import canonical, write_atomic
from .api import MAX_DEPTH, ConfigLike, _plain, _seed, resolve_config
from .summary import flatten_summary  # re-exported: flashlife.sweep.flatten_summary is public

__all__ = [
    "PointsFailedWarning",
    "flatten_summary",
    "load_grid",
    "load_results",
    "load_timeseries",
    "point_key",
    "sweep",
    "sweep_from_file",
]


class PointsFailedWarning(RuntimeWarning):
    """Some points of a sweep failed (on_error="record"): their rows hold an `error`."""


#: Summary fields that depend on the machine and the moment, not on the simulation.
WALL_FIELDS = ("run.wall_seconds", "run.page_ops_per_second", "run.peak_rss_bytes")

_RESERVED = ("workload", "seed")

#: Where `sweep` runs its points; "local" is the process backend's earlier name.
BACKENDS = ("thread", "process", "local", "dask")
#: The backend `sweep` uses when none is named: the faster of threads and processes on a
#: small sweep (docs/performance.md, "Sweeps: threads or processes", scripts/bench_sweep.py).
DEFAULT_BACKEND = "thread"


def _flatten_keys(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables of a grid (`capacity.overprovisioning = [..]` unquoted in TOML) as dotted keys.

    Iterative, and refuses more than MAX_DEPTH levels with a ValueError: a hostile grid file
    must not end in a RecursionError.
    """
    out: dict[str, Any] = {}
    stack: list[tuple[str, Any, int]] = [(prefix, mapping, 0)]
    while stack:
        key, v, depth = stack.pop()
        if isinstance(v, Mapping):
            if depth > MAX_DEPTH:
                raise ValueError(f"grid: {key[:60]}... is nested more than {MAX_DEPTH} tables deep")
            # Reversed so that the keys pop off the stack in the mapping's order.
            stack.extend((f"{key}.{k}" if key else str(k), sub, depth + 1) for k, sub in reversed(v.items()))
        else:
            out[key] = v
    return out


def _nesting(value: Any) -> int:
    """The depth of nested tables and arrays in a parsed TOML document (iteratively)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        if isinstance(v, Mapping):
            stack.extend((sub, depth + 1) for sub in v.values())
        elif isinstance(v, list):
            stack.extend((sub, depth + 1) for sub in v)
    return deepest


def point_key(point: Mapping[str, Any]) -> str:
    """A stable 16-hex-digit name for a point, from the canonical JSON of its definition."""
    return hashlib.sha256(canonical(point).encode()).hexdigest()[:16]


def _version() -> str:
    """The simulator's version, part of every point's key: a new version reruns the points."""
    return str(_core.__version__)


@dataclass
class _Point:
    index: int
    key: str
    params: dict[str, Any]  # grid values, workload name, seed: the row's parameter columns
    spec: dict[str, Any]  # everything a worker needs to run the point
    #: The trace files the point reads: absolute path -> the stat signature that was hashed.
    traces: dict[str, tuple[int, ...]] = field(default_factory=dict)


def _points(
    base: ConfigLike,
    grid: Mapping[str, Sequence[Any]],
    workloads: Mapping[str, Any] | None,
    seeds: Sequence[int],
    until: str | None,
    overrides: Mapping[str, Any],
) -> list[_Point]:
    keys = list(grid)
    values = [[_plain(v) for v in grid[k]] for k in keys]
    for k, v in zip(keys, values, strict=True):
        if not v:
            raise ValueError(f"sweep: grid key {k!r} has no values")
    wl_items: list[tuple[str, Any]] = list(workloads.items()) if workloads else [("base", None)]
    points: list[_Point] = []
    for combo in itertools.product(*values):
        for wl_name, wl in wl_items:
            for seed in seeds:
                params = dict(zip(keys, combo, strict=True))
                params["workload"] = wl_name
                params["seed"] = int(seed)
                point_overrides = {**overrides, **dict(zip(keys, combo, strict=True))}
                # Absolute, so that the worker (a Dask worker has another cwd) reads the file
                # that was fingerprinted here.
                wl_def = os.path.abspath(os.fspath(wl)) if isinstance(wl, str | os.PathLike) else wl
                spec = {
                    "config": base,
                    "workload": wl_def,
                    "until": until,
                    "seed": int(seed),
                    "overrides": point_overrides,
                }
                # The key comes later (sweep()), once the trace files are fingerprinted.
                points.append(_Point(len(points), "", params, spec))
    return points


def _row(point: _Point, outcome: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"point": point.key, **point.params}
    for k, v in flatten_summary(outcome["summary"]).items():
        # A summary field named like a grid key (capacity.overprovisioning: the achieved value)
        # must not hide the parameter: it becomes summary.KEY.
        row[f"summary.{k}" if k in row else k] = v
    # Warnings, present only when there are some, become one text column in every row ("" for
    # none), so the results table (CSV, parquet) has one type per column.
    row["run.warnings"] = "; ".join(outcome["summary"]["run"].get("warnings", []))
    # A JSON round trip makes fresh rows and rows read back from disk identical.
    return json.loads(json.dumps(row))


class _Store:
    """The results folder: `points/KEY.json` (and `KEY.timeseries.csv`) per point that ran,
    `points/KEY.error.json` per point that failed."""

    def __init__(self, root: str | os.PathLike | None):
        self.root = None if root is None else Path(root)
        if self.root is not None:
            (self.root / "points").mkdir(parents=True, exist_ok=True)

    def load(self, point: _Point) -> dict[str, Any] | None:
        if self.root is None:
            return None
        f = self.root / "points" / f"{point.key}.json"
        try:
            data = json.loads(f.read_text())
            return data["row"]
        except (OSError, ValueError, KeyError):
            return None

    def save(self, point: _Point, row: Mapping[str, Any], timeseries_csv: str) -> None:
        if self.root is None:
            return
        pts = self.root / "points"
        write_atomic(pts / f"{point.key}.timeseries.csv", timeseries_csv)
        write_atomic(pts / f"{point.key}.json", json.dumps({"params": point.params, "row": row}, indent=1))
        # An earlier failure of this point is over.
        (pts / f"{point.key}.error.json").unlink(missing_ok=True)

    def save_error(self, point: _Point, row: Mapping[str, Any], message: str) -> None:
        """`points/KEY.error.json`: never reused (`load` reads `KEY.json` only), so a failed
        point runs again on the next sweep."""
        if self.root is None:
            return
        text = json.dumps({"params": point.params, "error": message, "row": row}, indent=1)
        write_atomic(self.root / "points" / f"{point.key}.error.json", text)

    def finish(self, df: pd.DataFrame, description: Mapping[str, Any]) -> None:
        if self.root is None:
            return
        write_atomic(self.root / "sweep.json", json.dumps(description, indent=1, default=str))
        buf = io.StringIO()
        df.to_csv(buf, index=False)
        write_atomic(self.root / "results.csv", buf.getvalue())
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            return
        tmp = self.root / f".results.parquet.{os.getpid()}.tmp"
        try:
            df.to_parquet(tmp, index=False)
        except Exception as e:  # e.g. a grid column mixing strings and numbers
            tmp.unlink(missing_ok=True)
            warnings.warn(f"sweep: results.parquet not written ({e}); results.csv is", stacklevel=3)
            return
        os.replace(tmp, self.root / "results.parquet")


def _progress(total: int, enabled: bool | str) -> Any:
    show = (enabled is True and sys.stderr.isatty()) or enabled == "always"
    if not show:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="run", desc="sweep", file=sys.stderr)


def _base_spec(base: ConfigLike) -> ConfigLike:
    """`base` as each point resolves it: a file by its absolute path, anything else as given."""
    if isinstance(base, str | os.PathLike) and os.path.isfile(os.fspath(base)):
        return os.path.abspath(os.fspath(base))
    return base


def _resolve_base(base: ConfigLike) -> dict[str, Any]:
    return resolve_config(_base_spec(base))


def sweep(
    base: ConfigLike,
    grid: Mapping[str, Sequence[Any]] | None = None,
    workloads: Mapping[str, Mapping[str, Any] | str | os.PathLike] | None = None,
    seeds: Iterable[int] = (1,),
    until: str | None = None,
    *,
    backend: str = DEFAULT_BACKEND,
    client: Any = None,
    scheduler: str | None = None,
    max_workers: int | None = None,
    results_dir: str | os.PathLike | None = None,
    progress: bool | str = True,
    overrides: Mapping[str, Any] | None = None,
    on_error: str = "record",
) -> pd.DataFrame:
    """Run every point of a grid and return one row per run.

    base: a preset name, a TOML file path or a dict of keys (the configuration of every point);
    grid: dotted key -> list of values, run as a cartesian product (e.g.
    `{"capacity.overprovisioning": [0.07, 0.28], "gc.victim": ["greedy", "fifo"]}`);
    workloads: optional name -> workload (a dict of `workload.*` keys or a trace path);
    seeds: master seeds, each point runs once per seed; until: the stop condition of every run;
    backend: "thread" (the default: `max_workers` threads of this process, default one per
    core; the core runs without the GIL), "process" (a worker process per point, at most
    `max_workers` at once; "local" is its earlier name) or "dask" (`client=` a
    `dask.distributed.Client`, or `scheduler=` the address of one);
    results_dir: stream each point's result to `DIR/points/KEY.json` as it ends, reuse the
    points already there, and write `DIR/results.csv` (and `results.parquet` with pyarrow);
    progress: a tqdm bar on a terminal (True), never (False) or always ("always");
    overrides: more keys set at every point (not columns of the result);
    on_error: what a point that fails does to the sweep: "record" (default) keeps it as a row
    and warns (PointsFailedWarning, a RuntimeWarning) how many failed once every point is
    done; "raise" raises FlashlifeError naming the first failed point (in grid order) once
    the other points are done.

    A run error fails its point only, on every backend. With backend="process" every point
    runs in a worker process of its own (also with `max_workers=1`), so that a worker that dies
    (an abort, a segfault, the out-of-memory killer) fails that point only too, with the
    message (`worker died with signal SIGABRT (exit -6)`); in a thread it would end the
    interpreter. The backends give the same rows, apart from the WALL_FIELDS. Ctrl-C stops the
    running runs (threads within about 100 ms, worker processes at once) and raises
    KeyboardInterrupt; the points already done stay saved.

    Returns a DataFrame with a `point` column (the point's key), one column per grid key, then
    `workload` ("base" when no workloads were given) and `seed`, then the run's summary
    flattened with dotted names (`write_amplification`, `latency_us.write.p99`, ...; a summary
    field named like a grid key, e.g. `capacity.overprovisioning`, the value the drive got,
    becomes `summary.capacity.overprovisioning`), in grid order. `df.attrs["ran"]` and
    `df.attrs["reused"]` list the keys of the points that ran now and of those read back from
    `results_dir`. A failed point's row holds its parameters and an `error` column (after
    `seed`, present only when a point failed) with the message, and no summary values (NaN);
    `df.attrs["failed"]` lists the failed keys (neither in "ran" nor in "reused"). A failed
    point is written to `DIR/points/KEY.error.json`, is never reused, and runs again on the
    next sweep with the same folder (a success then removes the error file).
    A point's key covers its resolved settings, the contents of the trace file it reads (size
    and SHA-256; digests are cached in `DIR/trace_hashes.json` by size, times and inode) and the
    flashlife version: a changed trace or a new version runs the point again.
    Raises FlashlifeError (before anything runs) if a point's configuration is invalid or its
    trace cannot be read, and with on_error="raise" after the other points finished if a run
    fails.
    """
    grid = _flatten_keys(grid or {})
    for k in _RESERVED:
        if k in grid:
            raise ValueError(f"sweep: {k!r} cannot be a grid key; use the {k}s= argument")
    seeds = [_seed(s) for s in seeds]
    if not seeds:
        raise ValueError("sweep: seeds is empty")
    if backend not in BACKENDS:
        raise ValueError(f"sweep: backend must be one of {', '.join(map(repr, BACKENDS))}, not {backend!r}")
    if on_error not in ("record", "raise"):
        raise ValueError(f"sweep: on_error must be 'record' or 'raise', not {on_error!r}")
    base_config = _resolve_base(base)
    points = _points(_base_spec(base), grid, workloads, seeds, until, _flatten_keys(overrides or {}))

    # Catch every configuration error before anything runs, naming the point. Each point's
    # configuration is resolved from the base as given, with its own workload and overrides,
    # and pinned in its spec: resolving the base alone first would pin the defaults that
    # follow from other keys (`ftl.allocation` from `timing.scheduler`) at the base's values,
    # so that a point setting the scheduler kept the other scheduler's allocation, unlike
    # `run` with the same arguments (until 2026-11-28). Pinned, a base file read here is the
    # one every point runs.
    resolved: dict[str, dict[str, Any]] = {}
    for p in points:
        sig = canonical({k: v for k, v in p.spec.items() if k != "seed"})
        if sig not in resolved:
            try:
                resolved[sig] = resolve_config(
                    p.spec["config"], p.spec["workload"], until=until, overrides=p.spec["overrides"]
                )
            except _core.FlashlifeError as e:
                raise _core.FlashlifeError(f"sweep point {p.params}: {e}") from None
        p.spec["config"] = resolved[sig]

    # Each point's key: its definition, the contents of the trace it reads, the version.
    hashes = TraceHashes(None if results_dir is None else Path(results_dir))
    version = _version()
    for p in points:
        config = p.spec["config"]
        fingerprints: dict[str, Any] = {}
        path = trace_path(config)
        if path is not None:
            full = os.path.abspath(path)
            if full != path:
                # Pin the file hashed here; a relative path would be read from the worker's cwd.
                p.spec["overrides"] = {**p.spec["overrides"], "workload.trace.path": full}
            try:
                fingerprints[full], p.traces[full] = hashes.fingerprint(full)
            except OSError as e:
                raise _core.FlashlifeError(
                    f"sweep point {p.params}: workload.trace.path = {path}: cannot read the trace: "
                    f"{e.strerror or e}"
                ) from None
        definition = {**p.spec, "workload_name": p.params["workload"], "traces": fingerprints}
        p.key = point_key({**definition, "flashlife_version": version})
    if results_dir is not None:
        Path(results_dir).mkdir(parents=True, exist_ok=True)
        hashes.save()

    store = _Store(results_dir)
    rows: dict[int, dict[str, Any]] = {}
    reused: list[str] = []
    for p in points:
        row = store.load(p)
        if row is not None:
            rows[p.index] = row
            reused.append(p.key)
    pending = [p for p in points if p.index not in rows]
    ran: list[str] = []
    errors: dict[int, str] = {}  # point index -> message
    bar = _progress(len(points), progress)
    if bar is not None:
        bar.update(len(points) - len(pending))

    def on_done(p: _Point, outcome: dict[str, Any]) -> None:
        if "error" not in outcome:
            changed = changed_traces(p.traces)
            if changed:
                # The run may have read other contents than the key says: keeping the result
                # would make a later sweep reuse it for the wrong trace.
                outcome = {"error": f"trace {changed[0]} changed (size, times or inode) while the point ran"}
        if "error" in outcome:
            message = str(outcome["error"])
            row = json.loads(json.dumps({"point": p.key, **p.params, "error": message}))
            store.save_error(p, row, message)
            rows[p.index] = row
            errors[p.index] = message
        else:
            row = _row(p, outcome)
            store.save(p, row, outcome["timeseries_csv"])
            rows[p.index] = row
            ran.append(p.key)
        if bar is not None:
            bar.update(1)

    try:
        if pending:
            if backend == "thread":
                run_threads(pending, max_workers, on_done)
            elif backend in ("process", "local"):
                run_local(pending, max_workers, on_done)
            else:
                run_dask(pending, client, scheduler, on_done)
    finally:
        if bar is not None:
            bar.close()
    failed = [points[i] for i in sorted(errors)]
    if failed and on_error == "raise":
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise _core.FlashlifeError(f"sweep point {failed[0].params}: {errors[failed[0].index]}{more}")

    df = pd.DataFrame([rows[p.index] for p in points])
    if "error" in df.columns:
        # Beside the parameters, where it is seen, whichever row came first.
        cols = [c for c in df.columns if c != "error"]
        cols.insert(len(grid) + 3, "error")  # after point, the grid keys, workload and seed
        df = df[cols]
    description = {
        "base": base_config,
        "grid": grid,
        "workloads": workloads,
        "seeds": seeds,
        "until": until,
        "overrides": overrides,
        "points": {p.key: p.params for p in points},
        "flashlife_version": version,
        "traces": sorted({path for p in points for path in p.traces}),
    }
    store.finish(df, description)
    df.attrs["ran"] = ran
    df.attrs["reused"] = reused
    df.attrs["failed"] = [p.key for p in failed]
    if failed:
        warnings.warn(
            f"sweep: {len(failed)} of {len(points)} points failed (first: sweep point "
            f"{failed[0].params}: {errors[failed[0].index]}); their rows hold the message in the "
            "'error' column and df.attrs['failed'] lists their keys",
            PointsFailedWarning,
            stacklevel=2,
        )
    return df


def load_results(results_dir: str | os.PathLike) -> pd.DataFrame:
    """The results of a sweep's folder: `results.parquet` or `results.csv`, else the point files."""
    root = Path(results_dir)
    if (root / "results.parquet").exists():
        try:
            return pd.read_parquet(root / "results.parquet")
        except ImportError:
            pass
    if (root / "results.csv").exists():
        return pd.read_csv(root / "results.csv")
    rows = [json.loads(f.read_text())["row"] for f in sorted((root / "points").glob("*.json"))]
    if not rows:
        raise FileNotFoundError(f"no sweep results in {root}")
    return pd.DataFrame(rows)


def load_timeseries(results_dir: str | os.PathLike, point: str) -> pd.DataFrame:
    """The time series of one point of a sweep (by its `point` key)."""
    return pd.read_csv(Path(results_dir) / "points" / f"{point}.timeseries.csv")


def load_grid(path: str | os.PathLike) -> dict[str, Any]:
    """Read a GRID.toml into `sweep()` keyword arguments.

    Keys: `base` (preset name, TOML path relative to the grid file, or a table of keys),
    `until`, `seeds` (list), `[grid]` (dotted key -> list of values), `[workloads.NAME]`
    (workload keys, or a string: a trace path), `[set]` (keys set at every point).
    """
    path = Path(path)
    with open(path, "rb") as f:
        try:
            doc = tomllib.load(f)
        except RecursionError:
            # tomllib parses nested arrays and inline tables recursively.
            raise ValueError(f"{path}: nested too deeply to parse (arrays or inline tables)") from None
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{path}: {e}") from None
    if _nesting(doc) > MAX_DEPTH:
        # Everything downstream (overrides, JSON of the point definition) walks these values.
        raise ValueError(f"{path}: nested too deeply: more than {MAX_DEPTH} levels of tables or arrays")
    known = {"base", "until", "seeds", "grid", "workloads", "set"}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {unknown}; expected some of {sorted(known)}")
    if "base" not in doc:
        raise ValueError(f"{path}: `base` is required (a preset name, a TOML path or a table)")
    base = doc["base"]
    if isinstance(base, str):
        candidate = path.parent / base
        if base.endswith(".toml") or candidate.is_file():
            base = str(candidate.resolve())
    workloads = doc.get("workloads")
    if workloads:
        workloads = {
            name: (str((path.parent / w).resolve()) if isinstance(w, str) else w)
            for name, w in workloads.items()
        }
    grid = doc.get("grid", {})
    for k, v in _flatten_keys(grid).items():
        if not isinstance(v, list):
            raise ValueError(f"{path}: grid key {k!r} must be a list of values, not {v!r}")
    seeds = doc.get("seeds", [1])
    if isinstance(seeds, int):
        seeds = [seeds]
    return {
        "base": base,
        "grid": grid,
        "workloads": workloads,
        "seeds": seeds,
        "until": doc.get("until"),
        "overrides": doc.get("set"),
    }


def sweep_from_file(path: str | os.PathLike, **kwargs: Any) -> pd.DataFrame:
    """`sweep()` of a GRID.toml file; keyword arguments (backend, results_dir, ...) are passed on."""
    return sweep(**load_grid(path), **kwargs)
