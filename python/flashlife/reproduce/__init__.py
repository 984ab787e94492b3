"""`flashlife reproduce`: the five papers' experiments from the installed package.

Each paper's experiments are sweeps (`flashlife.sweep`) over presets and workloads that the
configuration expresses (synthetic generators, periodic commands, mixes, traces); the report
puts our numbers beside the paper's (quoted from its text, with the figure or table they come
from), names the setup differences and draws the figures. Every number under "ours" comes
from the runs of this call: nothing is tuned to a paper's number.

    flashlife reproduce salvage --scale quick --out out/salvage
    flashlife.reproduce("all", scale="quick", out_dir="out/all")
    flashlife reproduce all --scale quick --out out/queued --scheduler queued

Scales: `quick` (CI: scaled drives, a few points; each paper well under a minute on two
cores), `paper` (the papers' drives and grids: minutes to hours), `smoke` (smaller still, for
the test suite only). Traces come from `traces=` / `--traces`, else `$FLASHLIFE_TRACES`, else
`../shared/traces`; the parts that need an absent trace are skipped with a message in the
report. `scheduler` (`--scheduler`) sets `timing.scheduler` in every run of the reproduction
(`reservation`, the default of reproductions, or `queued`, the simulator's default); the report names it.
`sections` (`--sections`) runs only the named sections (their keys, `SECTION_KEYS`); `read_sampling`
(`--read-sampling`) sets how many reads one simulated read stands for in the read-relaxation
hint sections (default: 20 at the smoke and quick scales, every read at the paper scale).

    flashlife reproduce readrelax --scale quick --read-sampling 1 --sections hints,budget_sweep --out out/rr
"""

from __future__ import annotations

import datetime
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import _core
from .._util import write_atomic
from ._common import (
    OUTPUTS,
    SCALES,
    SCHEDULERS,
    Context,
    PaperReport,
    Reproduction,
    Section,
    default_traces,
    pyplot,
)
from .ftpassd import ftpassd_fig13, ftpassd_fig14, ftpassd_fig14_pblk, ftpassd_fig14_unit, ftpassd_memory
from .ftpassd_traces import ftpassd_fig15, ftpassd_fig16, ftpassd_load
from .readrelax import (
    readrelax_budget_sweep,
    readrelax_hints,
    readrelax_longterm,
    readrelax_sampling_check,
    readrelax_trace_hints,
)
from .reusable import reusable_ablations, reusable_fig7
from .salvage import salvage_fig4, salvage_fig4_saturated, salvage_fig4_soft_window
from .salvage_approx import salvage_fig4_approx
from .zombienand import zombie_fig3, zombie_fig5, zombie_fig6, zombie_pool


@dataclass(frozen=True)
class _Paper:
    title: str
    source: str
    #: (key, section): the key is the one the section's `Section` carries (`--sections`).
    sections: tuple[tuple[str, Callable[[Context], Section]], ...]


PAPERS: dict[str, _Paper] = {
    "zombienand": _Paper(
        "ZombieNAND: Resurrecting Dead NAND Flash for Improved SSD Longevity "
        "(Wilson, Jung, Kandemir, MASCOTS 2014)",
        "papers/000; docs/techniques/zombienand.md",
        (("fig3", zombie_fig3), ("fig5", zombie_fig5), ("fig6", zombie_fig6), ("pool", zombie_pool)),
    ),
    "reusable": _Paper(
        "Write Once, Get 50% Free: Saving SSD Erase Costs Using WOM Codes "
        "(Yadgar, Yaakobi, Schuster, FAST '15)",
        "papers/001; docs/techniques/reusable-ssd.md",
        (("fig7_8", reusable_fig7), ("ablations", reusable_ablations)),
    ),
    "salvage": _Paper(
        "Salvaging Runtime Bad Blocks by Skipping Bad Pages for Improving SSD Performance "
        "(Moon, Kang, Lee, Kim)",
        "papers/002; docs/techniques/salvage.md",
        (
            ("fig4", salvage_fig4),
            ("fig4_qd32", salvage_fig4_saturated),
            ("fig4_qd32_soft", salvage_fig4_soft_window),
            ("fig4_approx", salvage_fig4_approx),
        ),
    ),
    "ftpassd": _Paper(
        "Improving Write Performance Through Reliable Asynchronous Operation in Physically-Addressable SSD "
        "(Lee et al., IEEE Access 2020)",
        "papers/003; docs/techniques/ft-passd.md",
        (
            ("memory", ftpassd_memory),
            ("fig14", ftpassd_fig14),
            ("fig14_pblk", ftpassd_fig14_pblk),
            ("fig14_unit", ftpassd_fig14_unit),
            ("fig13", ftpassd_fig13),
            ("fig15", ftpassd_fig15),
            ("fig16", ftpassd_fig16),
            ("load", ftpassd_load),
        ),
    ),
    "readrelax": _Paper(
        "Prolonging 3D NAND SSD Lifetime via Read Latency Relaxation "
        "(Liu, Lee, Jung, Kandemir, Choi; extended abstract)",
        "papers/004; docs/techniques/read-relaxation.md",
        (
            ("longterm", readrelax_longterm),
            ("hints", readrelax_hints),
            ("budget_sweep", readrelax_budget_sweep),
            ("hints_trace", readrelax_trace_hints),
            ("sampling_check", readrelax_sampling_check),
        ),
    ),
}


#: Each paper's section keys, in the report's order (`sections=` / `--sections`).
SECTION_KEYS: dict[str, tuple[str, ...]] = {n: tuple(k for k, _ in p.sections) for n, p in PAPERS.items()}


def _table(columns: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


def _markdown(rep: Reproduction, traces: Path, have_plt: bool) -> str:
    names = ", ".join(p.name for p in rep.papers)
    lines = [
        f"# flashlife reproduce: {names}",
        "",
        f"flashlife {_core.__version__}, scale `{rep.scale}`, scheduler `{rep.scheduler}` "
        f"(`timing.scheduler` of every run), "
        f"{datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M UTC')}, "
        f"{rep.seconds:.1f} s wall; traces from `{traces}`"
        + ("" if traces.is_dir() else " (not found: the parts that need traces are skipped)")
        + ".",
        "",
        "Every number under *ours* comes from the runs of this command (their results are in `data/`, one "
        "sweep folder each with `results.csv`); the paper's numbers are quoted from its text, with the "
        "figure or section they come from. Nothing is tuned to match them.",
    ]
    if rep.points_reused:
        lines += [
            "",
            f"Resumed: {rep.points_reused} sweep points were read back from `data/` (saved by an earlier, "
            f"interrupted run of flashlife {_core.__version__} with the same parameters) and "
            f"{rep.points_ran} run now; the wall time counts only this run.",
        ]
    if not have_plt:
        lines += ["", "No figures: matplotlib is not installed (`pip install 'flashlife[plot]'`)."]
    for p in rep.papers:
        lines += ["", f"## {p.name}: {p.title}", "", f"Source: {p.source}. {p.seconds:.1f} s.", ""]
        for s in p.sections:
            lines += [f"### {s.title}", ""]
            if s.paper:
                lines += ["Paper:", ""] + [f"- {q}" for q in s.paper] + [""]
            if s.setup:
                lines += ["Setup differences:", ""] + [f"- {q}" for q in s.setup] + [""]
            if s.skipped:
                lines += [f"**Skipped:** {s.skipped}.", ""]
                continue
            lines += ["Ours:", ""] + _table(s.columns, s.rows) + [""]
            for caption, cols, rows in s.extra:
                lines += [f"{caption}:", ""] + _table(cols, rows) + [""]
            lines += [n + "\n" for n in s.notes]
            if s.figure:
                lines += [f"![{s.title}]({s.figure})", ""]
            lines += [f"({s.seconds:.1f} s; data in `data/{p.name}/`.)", ""]
    return "\n".join(lines).rstrip() + "\n"


def _remove(out: Path, names) -> None:
    """Remove the named files or folders of `out` that exist (only ever our own outputs)."""
    for name in names:
        p = out / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def _prepare(out: Path, overwrite: bool, resume: bool = False) -> None:
    """Refuse a folder that holds anything unless `overwrite`; then remove only our outputs.
    With `resume`, the folder must hold an earlier reproduction's `data/`, which is kept (its
    sweeps' points are read back); the old report and figures go, so that nothing in the folder
    looks final until the resumed run writes its report."""
    if out.exists() and not out.is_dir():
        raise _core.FlashlifeError(f"reproduce: {out} exists and is not a folder")
    if resume:
        if overwrite:
            raise ValueError("reproduce: resume goes on with the runs in --out; overwrite would discard them")
        if not (out / "data").is_dir():
            raise _core.FlashlifeError(
                f"reproduce: nothing to resume in {out}: it holds no data/ folder of an earlier reproduction"
            )
        _remove(out, ("report.md", "figures"))
        return
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise _core.FlashlifeError(
                f"reproduce: {out} is not empty (it holds an earlier report or other files); give another "
                "--out, --resume (resume=True) to go on with an interrupted run there, or --overwrite "
                "(overwrite=True) to replace its report, figures and data"
            )
        _remove(out, OUTPUTS)
    out.mkdir(parents=True, exist_ok=True)


def reproduce(
    paper: str = "all",
    scale: str = "quick",
    out_dir: str | os.PathLike = "reproduce",
    *,
    traces: str | os.PathLike | None = None,
    overwrite: bool = False,
    jobs: int | None = None,
    log: Callable[[str], None] | None = None,
    scheduler: str = "reservation",
    sections: Sequence[str] | None = None,
    read_sampling: float | None = None,
    resume: bool = False,
) -> Reproduction:
    """Run a paper's experiments (or `"all"`) and write `out_dir/report.md`, `figures/*.png`
    and `data/` (each sweep's folder with its `results.csv`).

    paper: `zombienand`, `reusable`, `salvage`, `ftpassd`, `readrelax` or `all`; scale:
    `quick` (CI), `paper` (the papers' setups) or `smoke` (tests); traces: the traces folder
    (default `$FLASHLIFE_TRACES`, else `../shared/traces`); a folder that is not empty is
    refused unless `overwrite` (then only `report.md`, `figures/` and `data/` are replaced);
    jobs: runs at a time (default: 2, or 1 on a one-core machine); scheduler:
    `timing.scheduler` of every run (`reservation`, the default of reproductions, or `queued`,
    the simulator's default); sections: run only these sections of the chosen papers (keys, as
    in `SECTION_KEYS`; default all; a section that reads an earlier one's results computes them
    itself); read_sampling: reads one simulated read stands for in the read-relaxation hint
    sections (>= 1; default 20 at smoke and quick, 1 at paper); resume: go on with an
    interrupted reproduction in `out_dir` (its `data/` is kept and every sweep reads back the
    points already saved there for the same simulator version and parameters; single runs
    such as pilots run again; the report counts the points read back).
    Returns a `Reproduction` (the report's path, every section's table as numbers).
    """
    if paper != "all" and paper not in PAPERS:
        raise ValueError(f"reproduce: paper must be one of {', '.join([*PAPERS, 'all'])}, not {paper!r}")
    if scale not in SCALES:
        raise ValueError(f"reproduce: scale must be one of {', '.join(SCALES)}, not {scale!r}")
    if scheduler not in SCHEDULERS:
        raise ValueError(f"reproduce: scheduler must be one of {', '.join(SCHEDULERS)}, not {scheduler!r}")
    names = list(PAPERS) if paper == "all" else [paper]
    chosen = set(sections) if sections is not None else None
    if chosen is not None:
        known = {k for n in names for k, _ in PAPERS[n].sections}
        unknown = sorted(chosen - known)
        if unknown or not chosen:
            raise ValueError(
                f"reproduce: sections must be among {', '.join(sorted(known))} for {paper}, not "
                f"{', '.join(map(repr, unknown)) or 'none'}"
            )
    if read_sampling is not None and not read_sampling >= 1:
        raise ValueError(f"reproduce: read_sampling must be a number >= 1, not {read_sampling!r}")
    out = Path(out_dir)
    _prepare(out, overwrite, resume)
    tr = Path(traces) if traces is not None else default_traces()
    jobs = jobs if jobs is not None else min(2, os.cpu_count() or 1)
    say = log or (lambda _msg: None)
    started = time.perf_counter()
    reports = []
    contexts = []
    for name in names:
        spec = PAPERS[name]
        ctx = Context(name, scale, out, tr, max(1, jobs), say, scheduler, read_sampling)
        contexts.append(ctx)
        t0 = time.perf_counter()
        done = []
        for key, fn in spec.sections:
            if chosen is not None and key not in chosen:
                continue
            t = time.perf_counter()
            sec = fn(ctx)
            sec.seconds = time.perf_counter() - t
            assert sec.key == key, f"{name}: section {key!r} made {sec.key!r}"
            done.append(sec)
            say(f"{name}: {sec.key} done in {sec.seconds:.1f} s")
        if done:
            reports.append(PaperReport(name, spec.title, spec.source, done, time.perf_counter() - t0))
    rep = Reproduction(
        out,
        out / "report.md",
        scale,
        reports,
        time.perf_counter() - started,
        scheduler,
        points_reused=sum(c.points_reused for c in contexts),
        points_ran=sum(c.points_ran for c in contexts),
    )
    write_atomic(rep.report, _markdown(rep, tr, pyplot() is not None))
    return rep
