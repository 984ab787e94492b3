"""The `flashlife` command, on the public Python API.

Each command calls what a script would: `flashlife.resume`, `flashlife.presets`,
`flashlife.trace_stats`, `flashlife.compare`, `flashlife.sweep`. `run` and `config` take their
configuration as layers, through the internal `api._run_layers` and `api._config_toml` (the
bodies of `flashlife.run` and `flashlife.resolve_config`): the command line layers a
configuration file on a `--preset`, passes a `--trace` path as given, and prints the resolved
configuration as the core's TOML text, none of which `run`'s single `config` argument or
`resolve_config`'s dict can express. The layers are built by `api._layers`, the same checks
`flashlife.run` makes.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tomllib
from typing import Any

from . import FlashlifeError, __version__, presets, resume, trace_stats
from .api import _config_toml, _Layers, _layers, _run_layers, _toml_literal
from .progress import ProgressReport
from .sweep import BACKENDS, DEFAULT_BACKEND


def version_text() -> str:
    """`flashlife --version`: the installed package's version, and the compiled core's (the
    crate's) where it differs, e.g. a package rebuilt from a newer source than its metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        package = version("flashlife")
    except PackageNotFoundError:  # imported from a source tree, not installed
        package = None
    import flashlife

    commit = f", commit {flashlife.__build_commit__}" if flashlife.__build_commit__ else ""
    if package is None or package == __version__:
        return f"flashlife {__version__}{commit}"
    return f"flashlife {package} (core {__version__}{commit})"


def _add_assignments(p: argparse.ArgumentParser, flag: str, dest: str, help: str) -> None:
    """A repeatable `KEY=VALUE` option collecting configuration assignments."""
    p.add_argument(flag, dest=dest, action="append", default=[], metavar="KEY=VALUE", help=help)


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="TOML configuration file")
    p.add_argument("--preset", help="start from a named preset (see `flashlife presets`)")
    _add_assignments(
        p, "--set", "sets", "set any configuration key by its dotted path, e.g. --set gc.victim=fifo"
    )
    p.add_argument("--trace", help="replay this trace file")
    p.add_argument("--format", help="trace format (default: detected from content)")
    p.add_argument("--until", help="death | end | requests:N | time:T | writes:BYTES (e.g. writes:3dw)")
    p.add_argument("--seed", type=int, help="master random seed")


def _layer_args(args: argparse.Namespace) -> _Layers:
    sets = []
    if args.trace:
        sets += ['workload.kind="trace"', f"workload.trace.path={_toml_literal(args.trace)}"]
    if args.format:
        sets.append(f"workload.trace.format={_toml_literal(args.format)}")
    layers = _layers(args.config, None, args.until, args.seed, sets + list(args.sets))
    if args.preset:
        layers["preset"] = args.preset
    return layers


def _progress_mode(config_toml: str) -> str:
    """`run.progress` of a run folder's recorded configuration (`auto` where there is none)."""
    try:
        with open(config_toml, "rb") as f:
            return str(tomllib.load(f)["run"]["progress"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "auto"


def _cmd_run(args: argparse.Namespace) -> int:
    if args.resume:
        given = [args.config, args.preset, args.trace, args.format, args.until, args.seed]
        if any(x is not None for x in given) or args.sets:
            raise ValueError(
                "--resume takes the run's configuration from its checkpoint: "
                "give no configuration file, --preset, --set, --trace, --format, --until or --seed with it"
            )
        if args.out and os.path.abspath(args.out) != os.path.abspath(args.resume):
            raise ValueError("--resume DIR goes on writing into DIR: leave out --out or give the same folder")
        if args.overwrite:
            raise ValueError("--resume goes on with the run in DIR: --overwrite would discard it")
        args.out = args.resume
        report = ProgressReport(_progress_mode(os.path.join(args.resume, "partial", "config.toml")))
        try:
            result = resume(args.resume, progress=report)
        finally:
            report.close()
    else:
        if not args.out:
            raise ValueError("run needs --out DIR (or --resume DIR to go on with an interrupted run)")
        layers = _layer_args(args)
        report = ProgressReport(tomllib.loads(_config_toml(layers))["run"]["progress"])
        try:
            result = _run_layers(layers, out_dir=args.out, overwrite=args.overwrite, progress=report)
        finally:
            report.close()
    if args.json:
        print(result.summary_json)  # the core's text, not a re-encoding of the dict
    elif not args.quiet:
        print(result.summary_text, end="")
        summary = os.path.join(args.out, "summary.json")
        print(f"wrote {summary}, timeseries.csv, erase_histogram.csv, latency_cdf.csv, config.toml")
    return 0


def _cmd_presets(args: argparse.Namespace) -> int:
    for name, desc in presets().items():
        print(f"{name:<24} {desc}")
    return 0


def _cmd_config(args: argparse.Namespace) -> int:
    print(_config_toml(_layer_args(args)), end="")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    import warnings

    from .sweep import PointsFailedWarning, load_grid, sweep

    kwargs = load_grid(args.grid)
    if args.until:
        kwargs["until"] = args.until
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PointsFailedWarning)  # the failed points are printed below
        df = sweep(
            **kwargs,
            backend=args.backend,
            scheduler=args.scheduler,
            max_workers=args.max_workers,
            results_dir=args.out,
            progress=not args.no_progress,
        )
    ran, reused = len(df.attrs["ran"]), len(df.attrs["reused"])
    failed = df.attrs.get("failed", [])
    tail = f", {len(failed)} failed" if failed else ""
    print(f"{len(df)} points: {ran} ran, {reused} already in {args.out}{tail}")
    print(f"wrote {os.path.join(args.out, 'results.csv')}")
    for key in failed:
        msg = df.loc[df["point"] == key, "error"].iloc[0]
        where = os.path.join(args.out, "points", f"{key}.error.json")
        print(f"flashlife: error: sweep point {key}: {msg} (see {where})", file=sys.stderr)
    # Failed points run again on the next sweep into the same folder.
    return 1 if failed else 0


def _config_arg(text: str) -> str:
    if not os.path.exists(text) and (text.endswith(".toml") or os.path.sep in text):
        raise FileNotFoundError(f"no such configuration file: {text}")
    return text


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare

    sets = list(args.sets)
    if args.trace:
        sets += ['workload.kind="trace"', f"workload.trace.path={_toml_literal(args.trace)}"]

    def side(cfg: str | None, side_sets: list[str], name: str) -> str | dict[str, Any] | None:
        keys = {}
        for kv in side_sets:
            key, sep, value = kv.partition("=")
            if not sep:
                raise ValueError(f"--{name}-set wants KEY=VALUE, not {kv!r}")
            keys[key.strip()] = _literal(value.strip())
        if args.base is not None:
            if cfg is not None and not os.path.isfile(cfg):
                raise ValueError(f"with --base, --{name} is a TOML file of keys, not {cfg!r}")
            on_file = {}
            if cfg is not None:
                with open(cfg, "rb") as f:
                    on_file = tomllib.load(f)
            return {**on_file, **keys} if cfg is not None or keys else None
        if cfg is None:
            raise ValueError(f"--{name} is required without --base")
        cfg = _config_arg(cfg)
        if keys:
            from .api import resolve_config

            return resolve_config(cfg, overrides=keys)
        return cfg

    technique = side(args.technique, args.technique_sets, "technique")
    baseline = side(args.baseline, args.baseline_sets, "baseline")
    base = None if args.base is None else _config_arg(args.base)
    df = compare(
        technique,
        baseline,
        base=base,
        until=args.until,
        seed=args.seed,
        overrides=sets,
        metrics=args.metrics or None,
        out_dir=args.out,
        overwrite=args.overwrite,
    )
    if args.csv:
        print(df.to_csv(), end="")
    else:

        def describe(cfg: str | None, side_sets: list[str]) -> str:
            return " ".join([cfg or args.base or ""] + side_sets).strip()

        t = describe(args.technique, args.technique_sets)
        b = describe(args.baseline, args.baseline_sets)
        print(f"technique: {t}   baseline: {b}   ratio = technique / baseline")
        print(df.to_string(float_format=lambda v: f"{v:.6g}"))
    if args.out:
        print(f"wrote {os.path.join(args.out, 'comparison.csv')}, technique/, baseline/")
    return 0


def _literal(text: str) -> object:
    """A TOML literal (number, boolean, quoted string), else the text itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _run_dirs(paths: list[str], filename: str) -> dict[str, str]:
    """label -> file, for run folders (or the files themselves)."""
    out: dict[str, str] = {}
    for p in paths:
        f = os.path.join(p, filename) if os.path.isdir(p) else p
        if not os.path.isfile(f):
            raise FileNotFoundError(f"no {filename} in {p}")
        label = os.path.basename(os.path.normpath(p if os.path.isdir(p) else os.path.dirname(p) or p))
        out[label if label not in out else p] = f
    return out


def _cmd_plot(args: argparse.Namespace) -> int:
    import json

    import pandas as pd

    from . import plots
    from .sweep import load_results

    def results() -> pd.DataFrame:
        if len(args.results) != 1:
            raise ValueError(f"--kind {args.kind} takes one results folder or file")
        r = args.results[0]
        if os.path.isdir(r):
            return load_results(r)
        return pd.read_parquet(r) if r.endswith(".parquet") else pd.read_csv(r)

    def where() -> dict[str, object]:
        """`--where COL=VALUE` selections (the value read as a TOML literal where it is one)."""
        picked: dict[str, object] = {}
        for kv in args.where:
            key, sep, value = kv.partition("=")
            if not sep:
                raise ValueError(f"--where wants COLUMN=VALUE, not {kv!r}")
            picked[key.strip()] = _literal(value.strip())
        return picked

    def single(d: dict) -> object:
        return next(iter(d.values())) if len(d) == 1 else d

    kind = args.kind
    if kind == "heatmap":
        if not (args.x and args.y and args.metric):
            raise ValueError("--kind heatmap needs --x, --y and --metric")
        baseline = None
        if args.baseline:
            key, sep, value = args.baseline.partition("=")
            if not sep:
                raise ValueError("--baseline for a heat map is COLUMN=VALUE, e.g. gc.victim=fifo")
            baseline = {key: _literal(value)}
        fig = plots.heatmap(results(), args.x, args.y, args.metric, baseline, where=where(), title=args.title)
    elif kind == "bars":
        if not (args.metric and args.baseline):
            raise ValueError("--kind bars needs --metric and --baseline LABEL")
        df = results()
        label: object = args.baseline
        if args.by and args.by in df.columns and not (df[args.by] == label).any():
            label = _literal(args.baseline)
        fig = plots.bars_relative(
            df, args.group, args.metric, label, by=args.by, where=where(), title=args.title
        )
    elif kind == "lifetime":
        files = _run_dirs(args.results, "timeseries.csv")
        ts = {k: pd.read_csv(f) for k, f in files.items()}
        fig = plots.over_lifetime(single(ts), args.metric or "p99_latency_us", title=args.title)
    elif kind == "erase":
        files = _run_dirs(args.results, "erase_histogram.csv")
        hs = {k: pd.read_csv(f) for k, f in files.items()}
        fig = plots.erase_histogram(single(hs), title=args.title)
    else:  # cdf: the whole distribution where the folder has it, else the summary's percentiles
        files = _run_dirs(args.results, "summary.json")
        ss: dict[str, object] = {}
        for k, f in files.items():
            table = os.path.join(os.path.dirname(f), "latency_cdf.csv")
            if os.path.exists(table):
                ss[k] = pd.read_csv(table)
            else:
                with open(f) as fh:
                    ss[k] = json.load(fh)
        fig = plots.latency_cdf(single(ss), op=args.op, title=args.title)
    out = args.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=150)
    print(f"wrote {out}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import reproduce

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"flashlife reproduce: {msg}", file=sys.stderr, flush=True)

    rep = reproduce(
        args.paper,
        scale=args.scale,
        out_dir=args.out,
        traces=args.traces,
        overwrite=args.overwrite,
        jobs=args.jobs,
        log=log,
        scheduler=args.scheduler,
        sections=[k.strip() for k in args.sections.split(",") if k.strip()] if args.sections else None,
        read_sampling=args.read_sampling,
        resume=args.resume,
    )
    skipped = [f"{p.name}/{s.key}" for p in rep.papers for s in p.sections if s.skipped]
    print(
        f"wrote {rep.report} ({rep.seconds:.1f} s)"
        + (f"; skipped (no traces): {', '.join(skipped)}" if skipped else "")
    )
    return 0


def _cmd_trace_stats(args: argparse.Namespace) -> int:
    ts = trace_stats(args.path, format=args.format, overrides=list(args.sets))
    print(ts.stats_json if args.json else ts.text, end="" if ts.text.endswith("\n") else "\n")
    if args.plot:
        from .plots import reuse_cdf

        reuse_cdf(ts.stats, path=args.plot, title=os.path.basename(args.path))
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flashlife", description="Fast, physics-aware, trace-driven SSD simulator."
    )
    parser.add_argument("--version", action="version", version=version_text())
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run a simulation and write its results")
    _add_config_args(p)
    p.add_argument(
        "--out",
        help="folder for summary.json, timeseries.csv, config.toml "
        "(checkpoint.bin and partial/ while interrupted; refused if it holds another run's)",
    )
    p.add_argument(
        "--resume",
        metavar="DIR",
        help="go on with the interrupted run in DIR from its checkpoint (configuration and all)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the results or the checkpoint of an earlier run in --out (refused otherwise)",
    )
    p.add_argument("--json", action="store_true", help="print summary.json instead of the human summary")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("presets", help="list the presets")
    p.set_defaults(func=_cmd_presets)

    p = sub.add_parser("config", help="print the fully resolved configuration")
    _add_config_args(p)
    p.set_defaults(func=_cmd_config)

    p = sub.add_parser("trace", help="trace tools")
    tsub = p.add_subparsers(dest="trace_command", required=True)
    t = tsub.add_parser(
        "stats", help="requests, bytes, read/write and random/sequential shares, sizes, reuse"
    )
    t.add_argument("path", help="trace file (plain or gzip)")
    t.add_argument("--format", help="trace format (default: detected from content)")
    _add_assignments(t, "--set", "sets", "trace option, e.g. --set workload.trace.time_unit=ms")
    t.add_argument("--json", action="store_true", help="print the statistics as JSON")
    t.add_argument("--plot", metavar="FILE.png", help="also draw the address-reuse CDF to this file")
    t.set_defaults(func=_cmd_trace_stats)

    p = sub.add_parser("sweep", help="run a grid of configurations (GRID.toml) and collect the results")
    p.add_argument("grid", help="grid file: base, until, seeds, [grid], [workloads.NAME], [set]")
    p.add_argument("--out", required=True, help="results folder: points/*.json as runs end, results.csv")
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help="where the runs go: thread (threads of this process), process (a worker process per "
        "run: a run that crashes fails its point only; 'local' is its old name) or dask; "
        "default: %(default)s",
    )
    p.add_argument("--scheduler", help="Dask scheduler address (tcp://HOST:PORT) for --backend dask")
    p.add_argument("--max-workers", type=int, help="threads or processes at once (default: one per core)")
    p.add_argument("--until", help="override the grid file's stop condition")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("compare", help="run a technique beside its baseline on the same workload and seed")
    p.add_argument(
        "--technique", metavar="CFG", help="preset name or TOML file (with --base: TOML keys on it)"
    )
    p.add_argument(
        "--baseline", metavar="CFG", help="preset name or TOML file (with --base: TOML keys on it)"
    )
    p.add_argument("--base", metavar="CFG", help="preset name or TOML file both runs start from")
    _add_assignments(
        p,
        "--technique-set",
        "technique_sets",
        "set a key in the technique's run only (e.g. --technique-set gc.victim=greedy)",
    )
    _add_assignments(p, "--baseline-set", "baseline_sets", "set a key in the baseline's run only")
    _add_assignments(
        p,
        "--set",
        "sets",
        "set a configuration key in both runs (e.g. the workload: --set workload.read_ratio=0.3)",
    )
    p.add_argument("--trace", help="replay this trace file in both runs")
    p.add_argument("--until", help="death | end | requests:N | time:T | writes:BYTES")
    p.add_argument("--seed", type=int, default=1, help="master random seed of both runs (default 1)")
    p.add_argument("--metric", dest="metrics", action="append", help="report this metric (repeatable)")
    p.add_argument("--out", help="also write both runs (technique/, baseline/) and comparison.csv here")
    p.add_argument(
        "--overwrite", action="store_true", help="replace the results of an earlier comparison in --out"
    )
    p.add_argument("--csv", action="store_true", help="print the table as CSV")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser(
        "reproduce", help="run a paper's experiments and write a report beside the paper's numbers"
    )
    p.add_argument("paper", choices=["zombienand", "reusable", "salvage", "ftpassd", "readrelax", "all"])
    p.add_argument(
        "--scale",
        default="quick",
        choices=["quick", "paper", "smoke"],
        help="quick: CI size, under a minute a paper (default); paper: the papers' setups (long); "
        "smoke: smaller still, for tests",
    )
    p.add_argument(
        "--out",
        required=True,
        help="folder for report.md, figures/ and data/ (refused if not empty, but for --overwrite, --resume)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace the report, figures and data in --out")
    p.add_argument(
        "--resume",
        action="store_true",
        help="go on with an interrupted reproduction in --out: its sweeps' saved points are read back, "
        "the rest run, and the report is written anew",
    )
    p.add_argument(
        "--traces",
        help="folder of the traces (default: $FLASHLIFE_TRACES, else ../shared/traces); parts whose trace "
        "is absent are skipped",
    )
    p.add_argument("--jobs", type=int, help="runs at a time (default 2)")
    p.add_argument(
        "--scheduler",
        default="reservation",
        choices=["reservation", "queued"],
        help=(
            "timing.scheduler of every run (default reservation, which the technique pages' figures "
            "were made with; the simulator's own default is queued); the report names it"
        ),
    )
    p.add_argument(
        "--sections",
        help="comma-separated section keys to run (default all; e.g. readrelax's longterm, hints, "
        "budget_sweep, hints_trace, sampling_check)",
    )
    p.add_argument(
        "--read-sampling",
        type=float,
        help="read relaxation's hint sections: one simulated read stands for this many (>= 1; default 20 "
        "at smoke and quick, 1 = every read at paper)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("plot", help="draw a figure from sweep results or run folders")
    p.add_argument(
        "results",
        nargs="+",
        help="heatmap, bars: a sweep folder or results.csv/parquet; "
        "lifetime, erase, cdf: one or more run folders (one line each)",
    )
    p.add_argument("--kind", required=True, choices=["heatmap", "bars", "lifetime", "erase", "cdf"])
    p.add_argument("--metric", help="column to show (lifetime: a time-series column, default p99_latency_us)")
    p.add_argument("--x", help="heatmap: parameter on the x axis")
    p.add_argument("--y", help="heatmap: parameter on the y axis")
    p.add_argument("--group", default="workload", help="bars: column along the x axis (default workload)")
    p.add_argument("--by", help="bars: column naming the variants (default: the one holding --baseline)")
    p.add_argument("--baseline", help="bars: the baseline's label; heatmap: COLUMN=VALUE of baseline rows")
    _add_assignments(
        p, "--where", "where", "heatmap, bars: plot only the rows where COLUMN has VALUE (repeatable)"
    )
    p.add_argument("--op", default="write", choices=["read", "write", "all"], help="cdf: which requests")
    p.add_argument("--title", help="figure title")
    p.add_argument("--out", required=True, help="image file (.png, .pdf, .svg)")
    p.set_defaults(func=_cmd_plot)
    return parser


class _Terminated(Exception):
    """SIGTERM arrived: stop the run the way Ctrl-C does (checkpoint, then exit)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated


def _interrupted(args: argparse.Namespace, code: int, what: str) -> int:
    out = getattr(args, "out", None) or getattr(args, "resume", None)
    if args.command == "run" and out and os.path.exists(os.path.join(out, "checkpoint.bin")):
        partial = os.path.join(out, "partial")
        results = f"; results so far in {partial}" if os.path.isdir(partial) else ""
        print(
            f"flashlife: {what}; checkpoint written to {os.path.join(out, 'checkpoint.bin')}{results}; "
            f"go on with: flashlife run --resume {out}",
            file=sys.stderr,
        )
    else:
        print(f"flashlife: {what}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return args.func(args)
    except _Terminated:
        return _interrupted(args, 143, "terminated")
    except FlashlifeError as e:
        print(f"flashlife: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`flashlife config | head`): stop quietly, as Unix tools do, and
        # keep Python from failing again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (OSError, ValueError, KeyError, ImportError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"flashlife: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _interrupted(args, 130, "interrupted")
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
