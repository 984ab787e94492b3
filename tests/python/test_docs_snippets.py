"""Every code block of README.md and docs/ runs as it stands.

Each ```python block runs as a script of its own (as if pasted into a file: a sweep on worker
processes needs its `__main__` guard), each ```sh block in bash with `flashlife` and `python`
being this interpreter's, each ```toml block is read as what it is (a grid file when it has a
`base`, a configuration otherwise); all in a fresh folder, where the ```toml blocks above it in
the same file that open with `# NAME.toml` are written first (so `flashlife sweep grid.toml`
finds the grid file shown before it).

A block that cannot run here says so on the line before its fence,
`<!-- no-test: REASON -->`; NO_TEST below counts them per file, so that a block marked by
mistake, or a parser that finds nothing, fails this test rather than passing it silently. A
block without a language that holds a flashlife command or Python call fails too: it must
name its language to be run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN = {"python", "sh", "bash", "toml"}
MARK = re.compile(r"<!--\s*no-test:\s*(?P<reason>.*?)\s*-->")

#: Blocks marked `<!-- no-test: ... -->`, per file. Change with the docs, on purpose.
NO_TEST = {
    "README.md": 2,
    "docs/python.md": 1,
    "docs/performance.md": 10,
    "docs/reproduce.md": 1,
    "docs/models/mapping-cache.md": 1,
    "docs/techniques/read-relaxation.md": 1,
}
#: Blocks that run, at least (13 when this test was written).
RUN_AT_LEAST = 13


@dataclass
class Block:
    file: str  # relative to the repository root
    line: int  # of the opening fence
    lang: str
    text: str
    no_test: str | None  # the reason, when marked

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}:{self.lang or 'text'}"

    @property
    def filename(self) -> str | None:
        """NAME.toml for a toml block whose first line is `# NAME.toml`."""
        m = re.match(r"#\s*([\w.-]+\.toml)\s*$", self.text.split("\n", 1)[0])
        return m.group(1) if self.lang == "toml" and m else None


def _blocks(path: Path) -> list[Block]:
    rel = str(path.relative_to(ROOT))
    lines = path.read_text().split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})(\S*)", lines[i])
        if not m:
            if MARK.search(lines[i]) and not (i + 1 < len(lines) and lines[i + 1].startswith("```")):
                raise AssertionError(f"{rel}:{i + 1}: a no-test mark not right above a code fence")
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        end = i + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        assert end < len(lines), f"{rel}:{i + 1}: unclosed code fence"
        mark = MARK.search(lines[i - 1]) if i > 0 else None
        out.append(Block(rel, i + 1, lang, "\n".join(lines[i + 1 : end]) + "\n", mark and mark["reason"]))
        i = end + 1
    return out


BLOCKS = [b for f in FILES for b in _blocks(f)]
RUNNABLE = [b for b in BLOCKS if b.lang in RUN and not b.no_test]


def test_the_blocks_are_found_and_the_skipped_ones_counted():
    assert any(b.file == "README.md" for b in RUNNABLE) and any(b.file == "docs/python.md" for b in RUNNABLE)
    langs = {b.lang for b in RUNNABLE}
    assert {"python", "sh", "toml"} <= langs, langs
    marked: dict[str, int] = {}
    for b in BLOCKS:
        if b.no_test is not None:
            assert b.no_test, f"{b.id}: a no-test mark needs its reason"
            marked[b.file] = marked.get(b.file, 0) + 1
    assert marked == NO_TEST
    assert len(RUNNABLE) >= RUN_AT_LEAST, [b.id for b in RUNNABLE]


def test_blocks_that_run_things_name_their_language():
    for b in BLOCKS:
        if b.lang:
            continue
        for line in b.text.splitlines():
            code = line.strip()
            assert not (
                code.startswith("flashlife ") or "import flashlife" in code or "flashlife." in code
            ), f"{b.id}: a block with flashlife code must say ```sh or ```python to be tested: {code}"


@pytest.fixture
def bin_dir(tmp_path_factory) -> Path:
    """`flashlife`, `python` and `python3` as this interpreter's."""
    d = tmp_path_factory.mktemp("bin")
    shims = {
        "flashlife": f'exec "{sys.executable}" -m flashlife.cli "$@"\n',
        "python": f'exec "{sys.executable}" "$@"\n',
        "python3": f'exec "{sys.executable}" "$@"\n',
    }
    for name, body in shims.items():
        (d / name).write_text("#!/bin/sh\n" + body)
        (d / name).chmod(0o755)
    return d


def _run(cmd: list[str], cwd: Path, bin_dir: Path) -> None:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg"}
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (
        f"exit {p.returncode}\n--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"
    )
    # A sweep whose points failed still returns: its warning says so.
    assert "PointsFailedWarning" not in p.stderr, p.stderr[-3000:]


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.id)
def test_block_runs(block: Block, tmp_path: Path, bin_dir: Path) -> None:
    import flashlife
    from flashlife.sweep import load_grid

    if block.lang == "python" and re.search(r"^\s*(from|import) dask", block.text, re.M):
        pytest.importorskip("dask.distributed", reason=f"{block.id} needs dask.distributed")
    for earlier in BLOCKS:
        if earlier.file == block.file and earlier.line < block.line and earlier.filename:
            (tmp_path / earlier.filename).write_text(earlier.text)
    if block.lang == "python":
        (tmp_path / "snippet.py").write_text(block.text)
        _run([sys.executable, "snippet.py"], tmp_path, bin_dir)
    elif block.lang in ("sh", "bash"):
        _run(["bash", "-euo", "pipefail", "-c", block.text], tmp_path, bin_dir)
    else:
        path = tmp_path / (block.filename or "block.toml")
        path.write_text(block.text)
        if "base" in tomllib.loads(block.text):
            load_grid(path)  # a grid file; a ```sh block after it runs it
        else:
            flashlife.resolve_config(str(path))


def test_the_sweep_benchmark_runs(tmp_path: Path, bin_dir: Path) -> None:
    """docs/performance.md's sweep benchmark, at its smallest."""
    script = ROOT / "scripts" / "bench_sweep.py"
    _run([sys.executable, str(script), "--reps", "1", "--until", "requests:500"], tmp_path, bin_dir)
