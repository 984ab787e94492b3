"""Small helpers the sweep modules share: canonical JSON and atomic file writes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def canonical(obj: Any) -> str:
    """Canonical JSON: the same definition always gives the same text (and key)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and rename: readers see the old file or the whole new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
