"""What every paper's experiments share: the report's sections, the context a section runs in
(scale, traces, scheduler, sweeps), figure and number formatting."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..api import resolve_config, run
from ..sweep import sweep

SCALES = ("smoke", "quick", "paper")
#: The schedulers a reproduction can time its runs with (`timing.scheduler`).
SCHEDULERS = ("reservation", "queued")
#: The files `reproduce` writes in its folder (the rest of a folder is never touched).
OUTPUTS = ("report.md", "figures", "data")

GIB = 1 << 30
MIB = 1 << 20


@dataclass
class Section:
    """One figure or table of a paper, reproduced."""

    key: str
    title: str
    #: The paper's numbers: quotes from its text, each naming where it comes from.
    paper: list[str] = field(default_factory=list)
    #: How our setup differs from the paper's.
    setup: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    #: Formatted table cells, one list per row (same length as `columns`).
    rows: list[list[str]] = field(default_factory=list)
    #: The same rows as numbers (what the tests and the CSV read).
    data: list[dict[str, Any]] = field(default_factory=list)
    #: More tables: (caption, columns, rows).
    extra: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figure: str | None = None
    #: Why the section did not run (an absent trace), or None.
    skipped: str | None = None
    seconds: float = 0.0


@dataclass
class PaperReport:
    name: str
    title: str
    source: str
    sections: list[Section]
    seconds: float = 0.0


@dataclass
class Reproduction:
    """What `reproduce` did: the report's path and every paper's sections."""

    out_dir: Path
    report: Path
    scale: str
    papers: list[PaperReport]
    seconds: float
    #: `timing.scheduler` of every run.
    scheduler: str = "reservation"
    #: Sweep points read back from `data/` (a resumed reproduction) and run now.
    points_reused: int = 0
    points_ran: int = 0

    def section(self, paper: str, key: str) -> Section:
        for p in self.papers:
            if p.name == paper:
                for s in p.sections:
                    if s.key == key:
                        return s
        raise KeyError(f"{paper}/{key}")


def default_traces() -> Path:
    """`$FLASHLIFE_TRACES`, else `../shared/traces` from the working directory."""
    env = os.environ.get("FLASHLIFE_TRACES")
    return Path(env) if env else Path("..") / "shared" / "traces"


class Context:
    def __init__(
        self,
        paper: str,
        scale: str,
        out: Path,
        traces: Path,
        jobs: int,
        log: Callable[[str], None],
        scheduler: str = "reservation",
        read_sampling: float | None = None,
    ):
        self.paper = paper
        #: Reads one simulated read stands for where a section sub-samples reads (None: the
        #: section's own choice for the scale).
        self.read_sampling = read_sampling
        self.scheduler = scheduler
        self.scale = scale
        self.out = out
        self.traces = traces
        self.jobs = jobs
        self.log = log
        #: Results one section computes and a later one of the same paper reads (e.g. the trace
        #: sweeps behind ZombieNAND's Figures 5 and 6), by key.
        self.shared: dict[str, Any] = {}
        #: Sweep points read back from an earlier run's `data/` and run now.
        self.points_reused = 0
        self.points_ran = 0

    @property
    def quick(self) -> bool:
        return self.scale != "paper"

    def pick(self, smoke: Any, quick: Any, paper: Any) -> Any:
        return {"smoke": smoke, "quick": quick, "paper": paper}[self.scale]

    def trace(self, rel: str) -> Path | None:
        p = self.traces / rel
        return p.resolve() if p.is_file() else None

    def overrides(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`overrides` with the reproduction's `timing.scheduler`: every run, sweep, pilot and
        resolved configuration of a section goes through this."""
        return {**(overrides or {}), "timing.scheduler": self.scheduler}

    def run(self, config: Any, *args: Any, overrides: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """`flashlife.run` with the reproduction's scheduler."""
        return run(config, *args, overrides=self.overrides(overrides), **kw)

    def resolve(self, config: Any, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`flashlife.resolve_config` with the reproduction's scheduler."""
        return resolve_config(config, overrides=self.overrides(overrides))

    def data_dir(self, name: str) -> Path:
        return self.out / "data" / self.paper / name

    def sweep(
        self,
        name: str,
        base: Any,
        *,
        jobs: int | None = None,
        overrides: Mapping[str, Any] | None = None,
        **kw: Any,
    ) -> pd.DataFrame:
        """One sweep of the section, its results in data/PAPER/NAME (results.csv, points/).

        The reproduction's scheduler comes in with the overrides; `sweep` resolves each point
        as `run` does, so what the scheduler implies (`ftl.allocation`) follows it (until
        2026-11-28 a sweep pinned the default scheduler's allocation: CHANGELOG)."""
        self.log(f"{self.paper}: {name}")
        df = sweep(
            base,
            results_dir=self.data_dir(name),
            progress=False,
            on_error="raise",
            max_workers=jobs or self.jobs,
            overrides=self.overrides(overrides),
            **kw,
        )
        self.points_reused += len(df.attrs.get("reused", []))
        self.points_ran += len(df.attrs.get("ran", []))
        return df

    def sweeps(self, jobs: Sequence[tuple[str, Any, dict[str, Any]]]) -> list[pd.DataFrame]:
        """Several sweeps that are not one grid (variants that differ in several keys at once),
        `self.jobs` of them at a time, one run each at a time."""
        if len(jobs) == 1 or self.jobs <= 1:
            return [self.sweep(n, b, jobs=1, **kw) for n, b, kw in jobs]
        with ThreadPoolExecutor(self.jobs) as ex:
            futs = [ex.submit(self.sweep, n, b, jobs=1, **kw) for n, b, kw in jobs]
            return [f.result() for f in futs]

    def figure_path(self, key: str) -> tuple[Path, str]:
        rel = f"figures/{self.paper}_{key}.png"
        return self.out / rel, rel


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def save_figure(ctx: Context, section: Section, fig: Any) -> None:
    path, rel = ctx.figure_path(section.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    section.figure = rel


def pct(x: float) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{100 * x:+.1f}%"


def num(x: float, fmt: str = ".3f") -> str:
    return "n/a" if x is None or not math.isfinite(float(x)) else format(float(x), fmt)


def ratio(a: float, b: float) -> float:
    return float(a) / float(b) if b else float("nan")


def died_early(point: Mapping[str, Any]) -> str | None:
    """How far a sweep point's drive got when it died, or None if it did not: a run that died
    before its stop wrote less than its partner, and a ratio of the two compares runs of
    different lengths."""
    if not bool(point.get("lifetime.dead", False)):
        return None
    reached = float(point["lifetime.drive_writes"])
    return f"died at {reached:.2f} drive writes ({point['lifetime.death_reason']})"
