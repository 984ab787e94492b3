"""Runs from Python: configurations from presets, TOML files or dicts, results as pandas."""

from __future__ import annotations

import io
import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from . import _core

ConfigLike = str | os.PathLike | Mapping[str, Any] | None


def _flatten(prefix: str, value: Any, out: list[str]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out.append(f"{prefix}={_toml_literal(value)}")


def _toml_literal(value: Any) -> str:
    # JSON literals of strings, numbers, booleans and flat lists are valid TOML literals.
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise ValueError(f"not a finite number: {value}")
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value)


def overrides_from(mapping: Mapping[str, Any] | None, prefix: str = "") -> list[str]:
    """`key=value` overrides from a (nested or dotted-key) mapping."""
    out: list[str] = []
    if mapping:
        _flatten(prefix, mapping, out)
    return out


def _layers(
    config: ConfigLike,
    workload: str | os.PathLike | Mapping[str, Any] | None,
    until: str | None,
    seed: int | None,
    overrides: Mapping[str, Any] | Sequence[str] | None,
) -> dict[str, Any]:
    preset: str | None = None
    files: list[str] = []
    sets: list[str] = []
    if isinstance(config, Mapping):
        sets += overrides_from(config)
    elif config is not None:
        text = os.fspath(config)
        if text.endswith(".toml") or os.path.sep in text or os.path.exists(text):
            files.append(text)
        else:
            preset = text
    if isinstance(workload, Mapping):
        sets += overrides_from(workload, "workload")
    elif workload is not None:
        sets += ['workload.kind="trace"', f"workload.trace.path={_toml_literal(os.fspath(workload))}"]
    if until is not None:
        sets.append(f"run.until={_toml_literal(until)}")
    if seed is not None:
        sets.append(f"seed={int(seed)}")
    if isinstance(overrides, Mapping):
        sets += overrides_from(overrides)
    elif overrides:
        sets += list(overrides)
    return {"preset": preset, "files": files, "overrides": sets}


@dataclass
class Result:
    """What a run produced."""

    summary: dict[str, Any]
    timeseries: pd.DataFrame
    erase_histogram: pd.DataFrame
    config: dict[str, Any]
    summary_text: str = field(repr=False, default="")
    #: Latency CDFs: columns op ("read", "write", "all"), latency_us, fraction; one row per
    #: histogram bucket that holds requests.
    latency_cdf: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)

    def __str__(self) -> str:
        return self.summary_text


def run(
    config: ConfigLike = None,
    workload: str | os.PathLike | Mapping[str, Any] | None = None,
    *,
    until: str | None = None,
    seed: int | None = None,
    overrides: Mapping[str, Any] | Sequence[str] | None = None,
    out_dir: str | os.PathLike | None = None,
) -> Result:
    """Run one simulation.

    config: a preset name, a TOML file path, or a dict of keys (nested or dotted);
    workload: a dict of `workload.*` keys, or a trace file path;
    until: `death`, `end`, `requests:N`, `time:T`, `writes:BYTES` (e.g. `writes:3dw`);
    overrides: more keys, as a dict or `key=value` strings; out_dir: also write the run's files
    there, and checkpoint the run there when it is interrupted (Ctrl-C, or any signal whose
    handler raises) and every `run.checkpoint_every`, so that `resume(out_dir)` can go on.
    Raises FlashlifeError with the core's message on a bad configuration, trace or run.
    """
    layers = _layers(config, workload, until, seed, overrides)
    raw = _core.run(
        preset=layers["preset"],
        files=layers["files"],
        overrides=layers["overrides"],
        out_dir=None if out_dir is None else os.fspath(out_dir),
    )
    return _result(raw)


def resume(out_dir: str | os.PathLike) -> Result:
    """Go on with the interrupted run whose checkpoint (`checkpoint.bin`) is in `out_dir`.

    The result is the one the run would have had uninterrupted (apart from the process's wall
    time and memory). A missing, truncated, corrupt or foreign checkpoint raises
    FlashlifeError, and nothing in the folder changes.
    """
    return _result(_core.resume(os.fspath(out_dir)))


def _result(raw: Mapping[str, Any]) -> Result:
    hist = pd.DataFrame(raw["erase_histogram"], columns=["erase_count", "blocks"])
    return Result(
        summary=json.loads(raw["summary_json"]),
        timeseries=pd.read_csv(io.StringIO(raw["timeseries_csv"])),
        erase_histogram=hist,
        config=tomllib.loads(raw["config_toml"]),
        summary_text=raw["summary_text"],
        latency_cdf=pd.read_csv(io.StringIO(raw["latency_cdf_csv"])),
    )


def resolve_config(
    config: ConfigLike = None,
    workload: str | os.PathLike | Mapping[str, Any] | None = None,
    *,
    until: str | None = None,
    seed: int | None = None,
    overrides: Mapping[str, Any] | Sequence[str] | None = None,
) -> dict[str, Any]:
    """The full configuration a run with these arguments would use."""
    layers = _layers(config, workload, until, seed, overrides)
    text = _core.resolve_config(preset=layers["preset"], files=layers["files"], overrides=layers["overrides"])
    return tomllib.loads(text)


def presets() -> dict[str, str]:
    """Preset names and their descriptions."""
    return dict(_core.list_presets())
