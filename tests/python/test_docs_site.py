"""The documentation site: docs/ built by Sphinx with MyST, warnings as errors.

Skipped, saying so, where the docs builder is not installed (`pip install '.[docs]'`;
scripts/test.sh installs it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
WHY = "the docs builder is not installed: pip install '.[docs]' (sphinx, myst-parser)"


def _build(src: Path, out: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("sphinx", reason=WHY)
    pytest.importorskip("myst_parser", reason=WHY)
    cmd = [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-n", "-q", "-b", "html"]
    cmd += ["-d", str(out / "doctrees"), "-c", str(DOCS), str(src), str(out / "html")]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_the_site_builds_without_warnings(tmp_path: Path) -> None:
    p = _build(DOCS, tmp_path)
    assert p.returncode == 0, p.stderr
    # Every page of docs/ is in the site (a page left out of the toctree is a warning too).
    for page in DOCS.rglob("*.md"):
        assert (tmp_path / "html" / page.relative_to(DOCS).with_suffix(".html")).is_file(), page


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.md").write_text("# Index\n\nSee [the missing page](missing.md).\n")
    p = _build(src, tmp_path)
    assert p.returncode != 0 and "missing.md" in p.stderr, p.stderr
