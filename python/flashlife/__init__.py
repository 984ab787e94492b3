"""flashlife: a fast, physics-aware, trace-driven SSD simulator.

>>> import flashlife
>>> r = flashlife.run("tiny", {"kind": "uniform", "read_ratio": 0.3}, until="writes:1dw")
>>> r.summary["write_amplification"]
"""

from ._core import FlashlifeError, __version__
from .api import Result, presets, resolve_config, run

__all__ = ["FlashlifeError", "Result", "__version__", "presets", "resolve_config", "run"]
