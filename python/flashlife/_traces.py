"""Content fingerprints of the trace files a sweep's points read, so that a point whose trace
changed under the same path runs again instead of reusing a stale result."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import _core
from ._util import write_atomic

#: Trace digests already computed in this process, by (absolute path, *stat signature).
_DIGESTS: dict[tuple[Any, ...], str] = {}
_CHUNK = 1 << 20


def _stat_signature(path: str) -> tuple[int, int, int, int]:
    """What must not change for a cached digest to stand: size, mtime, ctime, inode.

    ctime and the inode are there because mtime can be set back (`cp -p`, `rsync -t`, `tar x`
    of another file of the same size); ctime cannot.
    """
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class TraceHashes:
    """Content fingerprints of trace files: a streamed SHA-256, cached in this process and in
    `DIR/trace_hashes.json`, so that rerunning a sweep over multi-GB traces does not read them
    again while their size and times are unchanged."""

    def __init__(self, root: Path | None):
        self.file = None if root is None else root / "trace_hashes.json"
        self.disk: dict[str, dict[str, Any]] = {}
        self.dirty = False
        if self.file is not None:
            try:
                data = json.loads(self.file.read_text())
                if isinstance(data, dict):
                    self.disk = {k: v for k, v in data.items() if isinstance(v, dict)}
            except (OSError, ValueError):
                pass  # no cache (or a spoiled one): hash again

    def fingerprint(self, path: str) -> tuple[dict[str, Any], tuple[int, ...]]:
        """(`{"size", "sha256"}`, the stat signature hashed) of the file at absolute `path`."""
        for _ in range(3):
            sig = _stat_signature(path)
            digest = _DIGESTS.get((path, *sig))
            entry = self.disk.get(path)
            if digest is None and entry is not None and entry.get("stat") == list(sig):
                digest = entry.get("sha256")
            if digest is None:
                h = hashlib.sha256()
                with open(path, "rb") as f:
                    # In chunks: traces may be far larger than memory.
                    while chunk := f.read(_CHUNK):
                        h.update(chunk)
                if _stat_signature(path) != sig:
                    continue  # written to while being read: the digest may be of neither version
                digest = h.hexdigest()
            if entry is None or entry.get("stat") != list(sig) or entry.get("sha256") != digest:
                self.disk[path] = {"stat": list(sig), "sha256": digest}
                self.dirty = True
            _DIGESTS[(path, *sig)] = digest
            # The key holds the contents' identity only (not the times): touching a trace, or
            # copying the results with the traces to another machine, does not rerun anything.
            return {"size": sig[0], "sha256": digest}, sig
        raise _core.FlashlifeError(f"{path}: the file kept changing while it was being hashed")

    def save(self) -> None:
        if self.file is not None and self.dirty:
            write_atomic(self.file, json.dumps(self.disk, indent=1, sort_keys=True))
            self.dirty = False


def trace_path(config: Mapping[str, Any]) -> str | None:
    """The trace file a resolved configuration reads, if any (as written in it)."""
    wl = config.get("workload", {})
    if wl.get("kind") != "trace":
        return None
    path = wl.get("trace", {}).get("path")
    return path or None


def changed_traces(traces: Mapping[str, tuple[int, ...]]) -> list[str]:
    """The trace files (path -> stat signature hashed) that are not the files fingerprinted."""
    changed = []
    for path, sig in traces.items():
        try:
            if _stat_signature(path) != sig:
                changed.append(path)
        except OSError:
            changed.append(path)
    return changed
