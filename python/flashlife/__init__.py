"""flashlife: a fast, physics-aware, trace-driven SSD simulator.

>>> import flashlife
>>> r = flashlife.run("tiny", {"kind": "uniform", "read_ratio": 0.3}, until="writes:1dw")
>>> r.summary["write_amplification"]
"""

from . import plots
from ._core import FlashlifeError, __build_commit__, __version__
from .api import Result, TraceStats, presets, resolve_config, resume, run, trace_stats
from .compare import compare, compare_results
from .reproduce import reproduce
from .summary import flatten_summary
from .sweep import load_grid, load_results, load_timeseries, sweep, sweep_from_file

__all__ = [
    "FlashlifeError",
    "Result",
    "TraceStats",
    "__build_commit__",
    "__version__",
    "compare",
    "compare_results",
    "flatten_summary",
    "load_grid",
    "load_results",
    "load_timeseries",
    "plots",
    "presets",
    "reproduce",
    "resolve_config",
    "resume",
    "run",
    "sweep",
    "sweep_from_file",
    "trace_stats",
]
