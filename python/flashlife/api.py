"""Runs from Python: configurations from presets, TOML files or dicts, results as pandas."""

from __future__ import annotations

import html
import io
import json
import math
import operator
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import pandas as pd
import tomli_w

from . import _core
from .summary import Summary

if TYPE_CHECKING:  # the stub's TypedDict; _core has no such name at run time
    import threading

    from ._core import RawRun

ConfigLike = str | os.PathLike | Mapping[str, Any] | None

#: Deeper nesting than this in a configuration mapping or value is refused: real configurations
#: are a few levels deep, and recursion on hostile input would end in a RecursionError.
MAX_DEPTH = 64


def _plain(v: Any) -> Any:
    """Python scalars for numpy ones (np.linspace grids), so values serialise as TOML and JSON."""
    if hasattr(v, "item") and getattr(v, "ndim", None) == 0:
        return v.item()
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


def _short(key: str) -> str:
    """A key for an error message: a hostile one may be thousands of characters long."""
    return key if len(key) <= 80 else f"{key[:60]}...({len(key)} characters)"


def _check_key(what: str, key: str) -> None:
    # The core splits `key=value` at the first `=` and reads one line: a key holding either
    # would silently set another key.
    if not key or "=" in key or any(c in key for c in "\r\n\0"):
        raise ValueError(
            f"{what}: key {_short(key)!r} is not a configuration key (empty, or holds '=' or a line break)"
        )


def _toml_value(value: Any, key: str = "value", what: str = "overrides", depth: int = 0) -> Any:
    """`value` as a plain value TOML can hold: numpy scalars and arrays become Python ones,
    paths strings, tuples lists; mappings (tables, e.g. an element of `workload.mix`) keep
    their keys.

    Raises ValueError naming `what` and `key` for None (TOML has no null), a non-finite
    number, an integer outside TOML's 64 bits or hostile nesting, and TypeError for a value of
    another type.
    """
    if depth > MAX_DEPTH:
        raise ValueError(f"{what}: {_short(key)} is nested more than {MAX_DEPTH} arrays deep")
    value = _plain(value)
    if value is None:
        raise ValueError(f"{what}: {key} is None; TOML has no null: leave the key out")
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise ValueError(f"{what}: {key} = {value}: out of range for a TOML integer (64 bits)")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{what}: {key} = {value}: not a finite number")
        return value
    if isinstance(value, str | os.PathLike):
        return os.fspath(value)
    if isinstance(value, list | tuple):
        return [_toml_value(v, key, what, depth + 1) for v in value]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            _check_key(what, f"{key}.{k}")
            out[str(k)] = _toml_value(v, f"{key}.{k}", what, depth + 1)
        return out
    raise TypeError(
        f"{what}: {key} = {value!r} ({type(value).__name__}): expected a string, number, boolean, "
        "list or mapping"
    )


def _leaves(what: str, prefix: str, value: Any) -> list[tuple[str, Any]]:
    """`(dotted key, TOML value)` for each leaf of a (nested or dotted-key) mapping, in order.

    Iterative (an explicit stack), so that a hostile nesting depth is a ValueError rather than
    a RecursionError; the stack is reversed on push to keep the mapping's key order. Lists
    (of values or of tables) are leaves: they replace, never merge.
    """
    out: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any, int]] = [(prefix, value, 0)]
    while stack:
        key, v, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"{what}: {_short(key)} is nested more than {MAX_DEPTH} tables deep")
        if isinstance(v, Mapping):
            items = [(f"{key}.{k}" if key else str(k), sub) for k, sub in v.items()]
            for k, _ in items:
                _check_key(what, k)
            stack.extend((k, sub, depth + 1) for k, sub in reversed(items))
        else:
            out.append((key, _toml_value(v, key, what)))
    return out


#: Keys of which a configuration states one: setting either drops the other (as the core does
#: when a layer states one of them).
_EXCLUSIVE = {
    "capacity.overprovisioning": "capacity.reserve",
    "capacity.reserve": "capacity.overprovisioning",
}


def _assign(doc: dict[str, Any], key: str, value: Any) -> None:
    """Set dotted `key` in the nested `doc` as the core's `key=value` assignment would: tables
    on the way are made (a value in the way is replaced), the value replaces what was there."""
    *path, last = key.split(".")
    table = doc
    for part in path:
        sub = table.get(part)
        if not isinstance(sub, dict):
            sub = table[part] = {}
        table = sub
    table[last] = value
    other = _EXCLUSIVE.get(key)
    if other is not None:
        cap = doc.get("capacity")
        if isinstance(cap, dict):
            cap.pop(other.split(".")[1], None)


def _toml_document(doc: Mapping[str, Any]) -> str:
    """A nested mapping of TOML values as a TOML document, written by tomli-w (a real TOML
    writer: tables, arrays of tables and strings of any content come out as TOML reads them)."""
    return tomli_w.dumps(doc)


def _inline(value: Any) -> str:
    """A TOML value on one line: scalars as tomli-w writes them, arrays and tables inline."""
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = (k if _BARE_KEY.fullmatch(k) else _inline(k) for k in value)
        return "{" + ", ".join(f"{k} = {_inline(v)}" for k, v in zip(keys, value.values(), strict=True)) + "}"
    text = _toml_document({"v": value})
    return text[len("v = ") :].rstrip("\n")


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_literal(value: Any, key: str = "value", what: str = "overrides") -> str:
    """`value` as a TOML literal on one line, for a `key=value` assignment (the command line's
    `--set`, `trace_stats` overrides): scalars written by tomli-w, arrays and tables inline;
    read back to check that it stands for `value` exactly.

    Raises as `_toml_value` does.
    """
    value = _toml_value(value, key, what)
    literal = _inline(value)
    if tomllib.loads(f"v = {literal}")["v"] != value:  # a bug, never an input error
        raise RuntimeError(f"{what}: {key}: the TOML written for {value!r} does not read back")
    return literal


def overrides_from(mapping: Mapping[str, Any] | None, prefix: str = "", what: str = "overrides") -> list[str]:
    """`key=value` overrides from a (nested or dotted-key) mapping; `what` names it in errors."""
    if not mapping:
        return []
    return [f"{key}={_toml_literal(v, key, what)}" for key, v in _leaves(what, prefix, mapping)]


def _seed(seed: Any) -> int:
    """A master seed as an int: an int (or numpy integer), or an integral float; never a bool."""
    if isinstance(seed, bool) or type(seed).__name__ in ("bool", "bool_"):  # numpy 2 / numpy 1
        raise TypeError(f"seed: {seed!r} is a boolean; expected an integer in 0..2**63-1")
    if isinstance(seed, float) or (hasattr(seed, "is_integer") and not hasattr(seed, "__index__")):
        # A float (or numpy float) that holds an integer, e.g. a seed column read back as
        # float64; anything with a fraction would be silently truncated by int().
        if not math.isfinite(seed) or not float(seed).is_integer():
            raise ValueError(f"seed: {seed!r} is not an integer; expected an integer in 0..2**63-1")
        value = int(seed)
    else:
        try:
            value = operator.index(seed)
        except TypeError:
            raise TypeError(
                f"seed: {seed!r} ({type(seed).__name__}) is not an integer; expected an integer in 0..2**63-1"
            ) from None
    if not 0 <= value < 2**63:  # the core reads seeds as TOML integers: i64
        raise ValueError(f"seed: {value} is out of range; expected an integer in 0..2**63-1")
    return value


def _override_strings(overrides: Sequence[str]) -> list[str]:
    out: list[str] = []
    for s in overrides:
        if not isinstance(s, str):
            raise TypeError(f"overrides: {s!r} ({type(s).__name__}) is not a 'key=value' string")
        # The core reads one line per assignment: the rest after a line break would be cut
        # off (or become part of the value) silently.
        if any(c in s for c in "\r\n\0"):
            raise ValueError(f"overrides: {s!r} holds a line break; give one 'key=value' per string")
        out.append(s)
    return out


class _Layers(TypedDict):
    """A configuration as the core builds it: a preset, TOML files in order, a TOML document
    (the arguments given as dicts, until and seed), then `key=value` overrides."""

    preset: str | None
    files: list[str]
    toml_text: str | None
    overrides: list[str]


def _layers(
    config: ConfigLike,
    workload: str | os.PathLike | Mapping[str, Any] | None,
    until: str | None,
    seed: int | None,
    overrides: Mapping[str, Any] | Sequence[str] | None,
) -> _Layers:
    """The layers `run` and `resolve_config` give the core for their arguments (checked here).

    Everything given as values (a config dict, a workload dict or trace path, until, seed, an
    overrides dict) becomes one TOML document, written by tomli-w, in which each key is set in
    the order given as the core's `key=value` would set it (a later key wins; a list, e.g. of
    tables, replaces the list before it). `key=value` strings stay strings, read after it.
    """
    preset: str | None = None
    files: list[str] = []
    leaves: list[tuple[str, Any]] = []
    sets: list[str] = []
    if isinstance(config, Mapping):
        leaves += _leaves("config", "", config)
    elif config is not None:
        text = os.fspath(config)
        if text.endswith(".toml") or os.path.sep in text or os.path.exists(text):
            files.append(text)
        else:
            preset = text
    if isinstance(workload, Mapping):
        leaves += _leaves("workload", "workload", workload)
    elif workload is not None:
        # Absolute: the resolved configuration (and a checkpoint of the run) must name the same
        # file when used from another directory.
        path = os.path.abspath(os.fspath(workload))
        leaves += [("workload.kind", "trace"), ("workload.trace.path", path)]
    if until is not None:
        leaves.append(("run.until", _toml_value(until, "until", "until")))
    if seed is not None:
        leaves.append(("seed", _seed(seed)))
    if isinstance(overrides, str | bytes):
        raise TypeError(
            f"overrides takes a mapping or a list of 'key=value' strings, not a {type(overrides).__name__}"
        )
    if isinstance(overrides, Mapping):
        leaves += _leaves("overrides", "", overrides)
    elif overrides:
        sets += _override_strings(overrides)
    doc: dict[str, Any] = {}
    for key, value in leaves:
        _assign(doc, key, value)
    toml_text = _toml_document(doc) if doc else None
    return {"preset": preset, "files": files, "toml_text": toml_text, "overrides": sets}


@dataclass
class Result:
    """What a run produced."""

    #: The summary.json contract; `flashlife.summary.Summary` documents every field.
    summary: Summary
    timeseries: pd.DataFrame
    erase_histogram: pd.DataFrame
    config: dict[str, Any]
    summary_text: str = field(repr=False, default="")
    #: Latency CDFs: columns op ("read", "write", "all"), latency_us, fraction; one row per
    #: histogram bucket that holds requests.
    latency_cdf: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    #: The summary as the core wrote it (summary.json's text), for printing it unchanged.
    summary_json: str = field(repr=False, default="")

    def __str__(self) -> str:
        return self.summary_text

    def _repr_html_(self) -> str:
        """The headline figures as a table (Jupyter shows it for a Result at the end of a cell)."""
        s = self.summary
        lat = s["latency_us"]

        def num(v: Any, fmt: str) -> str:
            return "n/a" if v is None else format(v, fmt)

        life = s["lifetime"]
        rows = [
            ("write amplification", num(s["write_amplification"], ".3f")),
            (
                "read latency mean / p99 / max (us)",
                " / ".join(num(lat["read"][k], ".1f") for k in ("mean", "p99", "max")),
            ),
            (
                "write latency mean / p99 / max (us)",
                " / ".join(num(lat["write"][k], ".1f") for k in ("mean", "p99", "max")),
            ),
            (
                "throughput (IOPS, MB/s)",
                f"{num(s['throughput']['iops'], '.0f')}, {num(s['throughput']['mb_per_s'], '.1f')}",
            ),
            ("host writes (drive writes)", f"{life['drive_writes']:.3f}"),
            ("drive", "dead: " + str(life["death_reason"]) if life["dead"] else "alive"),
            ("requests, simulated time", f"{s['run']['requests']}, {s['run']['simulated_ns'] / 1e9:.3f} s"),
            ("stop", str(s["run"]["stop"])),
        ]
        rows += [("warning", w) for w in s["run"].get("warnings", [])]
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        return f"<table><caption>flashlife run</caption>{body}</table>"


def run(
    config: ConfigLike = None,
    workload: str | os.PathLike | Mapping[str, Any] | None = None,
    *,
    until: str | None = None,
    seed: int | None = None,
    overrides: Mapping[str, Any] | Sequence[str] | None = None,
    out_dir: str | os.PathLike | None = None,
    overwrite: bool = False,
    progress: Callable[[float, int, str], None] | None = None,
    stop: threading.Event | None = None,
) -> Result:
    """Run one simulation.

    config: a preset name, a TOML file path, or a dict of keys (nested or dotted);
    workload: a dict of `workload.*` keys, or a trace file path (made absolute, so that the
    resolved configuration and a checkpoint name the same file from another directory);
    until: `death`, `end`, `requests:N`, `time:T`, `writes:BYTES` (e.g. `writes:3dw`);
    overrides: more keys, as a dict or `key=value` strings; out_dir: also write the run's files
    there, and checkpoint the run there when it is interrupted (Ctrl-C, or any signal whose
    handler raises) and every `run.checkpoint_every`, so that `resume(out_dir)` can go on;
    a folder holding another run's results or checkpoint is refused unless `overwrite`
    (docs/results.md says what a run folder guarantees).
    seed: an integer in 0..2**63-1 (a numpy integer, or a float holding an integer, will do).
    Values in the dicts may be numpy scalars or arrays; None (TOML has no null), NaN or
    infinity raises ValueError naming the key, and so do a non-integral seed and an override
    string holding a line break; a bool seed, a str `overrides` or a value of another type
    raises TypeError.
    progress: called about every 100 ms while the run moves on, with `(fraction, requests,
    label)` (the share of the stop condition reached, the requests served, what the share
    measures: "done" or "life used"); `flashlife.progress.ProgressReport` draws a bar. An
    exception it raises stops the run as Ctrl-C does.
    stop: a `threading.Event`; setting it stops the run as Ctrl-C does (checkpointing it when
    it has an `out_dir`) within about 100 ms, preconditioning included, and the call raises
    KeyboardInterrupt. Ctrl-C reaches only the main thread: this is how to stop a run in
    another one.
    Raises FlashlifeError with the core's message on a bad configuration, trace or run.
    """
    return _run_layers(_layers(config, workload, until, seed, overrides), out_dir, overwrite, progress, stop)


def _run_layers(
    layers: _Layers,
    out_dir: str | os.PathLike | None = None,
    overwrite: bool = False,
    progress: Callable[[float, int, str], None] | None = None,
    stop: threading.Event | None = None,
) -> Result:
    """`run` once its arguments are layers. The command line comes in here: its `--preset`
    with a configuration file on top, and its trace path as given, are layers that `run`'s
    single `config` argument cannot express."""
    raw = _core.run(
        preset=layers["preset"],
        files=layers["files"],
        toml_text=layers["toml_text"],
        overrides=layers["overrides"],
        out_dir=None if out_dir is None else os.fspath(out_dir),
        overwrite=bool(overwrite),
        progress=progress,
        stop=stop,
    )
    return _result(raw)


def resume(
    out_dir: str | os.PathLike,
    progress: Callable[[float, int, str], None] | None = None,
    stop: threading.Event | None = None,
) -> Result:
    """Go on with the interrupted run whose checkpoint (`checkpoint.bin`) is in `out_dir`.

    The result is the one the run would have had uninterrupted (apart from the process's wall
    time and memory). A missing, truncated, corrupt or foreign checkpoint raises
    FlashlifeError, and nothing in the folder changes. `progress` and `stop` are as for `run`.
    """
    return _result(_core.resume(os.fspath(out_dir), progress=progress, stop=stop))


def _result(raw: RawRun) -> Result:
    hist = pd.DataFrame(raw["erase_histogram"], columns=["erase_count", "blocks"])
    return Result(
        summary=json.loads(raw["summary_json"]),
        timeseries=pd.read_csv(io.StringIO(raw["timeseries_csv"])),
        erase_histogram=hist,
        config=tomllib.loads(raw["config_toml"]),
        summary_text=raw["summary_text"],
        latency_cdf=pd.read_csv(io.StringIO(raw["latency_cdf_csv"])),
        summary_json=raw["summary_json"],
    )


def resolve_config(
    config: ConfigLike = None,
    workload: str | os.PathLike | Mapping[str, Any] | None = None,
    *,
    until: str | None = None,
    seed: int | None = None,
    overrides: Mapping[str, Any] | Sequence[str] | None = None,
) -> dict[str, Any]:
    """The full configuration a run with these arguments would use (arguments as for `run`)."""
    return tomllib.loads(_config_toml(_layers(config, workload, until, seed, overrides)))


def _config_toml(layers: _Layers) -> str:
    """The resolved configuration of `layers` as the core writes it (`flashlife config` prints it)."""
    return _core.resolve_config(
        preset=layers["preset"],
        files=layers["files"],
        toml_text=layers["toml_text"],
        overrides=layers["overrides"],
    )


def presets() -> dict[str, str]:
    """Preset names and their descriptions."""
    return dict(_core.list_presets())


@dataclass
class TraceStats:
    """Statistics of a trace file (`flashlife trace stats`)."""

    #: Requests, bytes, read/write and random/sequential shares, sizes, address reuse.
    stats: dict[str, Any]
    #: The statistics as the command line prints them.
    text: str = field(repr=False, default="")
    #: The statistics as the core wrote them (JSON), for printing them unchanged.
    stats_json: str = field(repr=False, default="")

    def __str__(self) -> str:
        return self.text


def trace_stats(
    path: str | os.PathLike,
    *,
    format: str | None = None,
    overrides: Mapping[str, Any] | Sequence[str] | None = None,
) -> TraceStats:
    """Statistics of a trace file (plain or gzip).

    format: the trace format (default: detected from content); overrides: trace options as
    for `run`, e.g. `{"workload.trace.time_unit": "ms"}`, a dict or `key=value` strings.
    Raises FlashlifeError with the core's message on a bad trace or option.
    """
    if isinstance(overrides, str | bytes):
        raise TypeError(
            f"overrides takes a mapping or a list of 'key=value' strings, not a {type(overrides).__name__}"
        )
    if isinstance(overrides, Mapping):
        sets = overrides_from(overrides)
    else:
        # Strings go to the core as given (it refuses a line break itself), so that
        # `flashlife trace stats --set` reports what it always did.
        sets = list(overrides or [])
        for s in sets:
            if not isinstance(s, str):
                raise TypeError(f"overrides: {s!r} ({type(s).__name__}) is not a 'key=value' string")
    as_json, text = _core.trace_stats(os.fspath(path), format=format, overrides=sets)
    return TraceStats(stats=json.loads(as_json), text=text, stats_json=as_json)
