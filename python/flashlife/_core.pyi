"""Type stub of the compiled core (crates/flashlife-py/src/lib.rs): strings and numbers across.

The public API is the Python package (`flashlife.run`, `flashlife.resume`, ...), which turns
these raw strings into dicts and DataFrames.
"""

from collections.abc import Callable, Sequence
from typing import Protocol, TypedDict

class _Event(Protocol):
    """What `stop` needs (a `threading.Event`)."""

    def is_set(self) -> bool: ...

__version__: str
#: The commit the core was built from (`+dirty` when tracked files differed), or None.
__build_commit__: str | None

class FlashlifeError(Exception):
    """A configuration, trace or run error from the flashlife core."""

class RawRun(TypedDict):
    """What `run` and `resume` return: the run's outputs as the core wrote them."""

    #: The summary as pretty-printed JSON (`summary.json`; its schema is `flashlife.summary.Summary`).
    summary_json: str
    #: The human-readable summary the command line prints.
    summary_text: str
    #: `timeseries.csv`: one row per `stats.interval`.
    timeseries_csv: str
    #: (erase count, blocks) pairs.
    erase_histogram: list[tuple[int, int]]
    #: `latency_cdf.csv`: op, latency_us, fraction.
    latency_cdf_csv: str
    #: The fully resolved configuration (`config.toml`).
    config_toml: str

def run(
    preset: str | None = None,
    files: Sequence[str] = ...,
    toml_text: str | None = None,
    overrides: Sequence[str] = ...,
    out_dir: str | None = None,
    overwrite: bool = False,
    progress: Callable[[float, int, str], object] | None = None,
    stop: _Event | None = None,
) -> RawRun:
    """Run the configuration layered from `preset`, `files` (in order), `toml_text` and
    `key=value` `overrides`; with `out_dir`, write the run's files and checkpoint there."""

def resume(
    out_dir: str,
    progress: Callable[[float, int, str], object] | None = None,
    stop: _Event | None = None,
) -> RawRun:
    """Go on with the interrupted run whose checkpoint is in `out_dir`."""

def resolve_config(
    preset: str | None = None,
    files: Sequence[str] = ...,
    toml_text: str | None = None,
    overrides: Sequence[str] = ...,
) -> str:
    """The fully resolved configuration of these layers, as TOML text."""

def list_presets() -> list[tuple[str, str]]:
    """`(name, description)` of every preset."""

def trace_stats(path: str, format: str | None = None, overrides: Sequence[str] = ...) -> tuple[str, str]:
    """Statistics of a trace file as `(json, text)`; the trace options come from `overrides`
    (`workload.trace.*`), `format` overrides the format."""
