"""The `flashlife` command."""

from __future__ import annotations

import argparse
import os
import sys

from . import _core
from .api import _layers, _toml_literal


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="TOML configuration file")
    p.add_argument("--preset", help="start from a named preset (see `flashlife presets`)")
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set any configuration key by its dotted path, e.g. --set gc.victim=fifo",
    )
    p.add_argument("--trace", help="replay this trace file")
    p.add_argument("--format", help="trace format (default: detected from content)")
    p.add_argument("--until", help="death | end | requests:N | time:T | writes:BYTES (e.g. writes:3dw)")
    p.add_argument("--seed", type=int, help="master random seed")


def _layer_args(args: argparse.Namespace) -> dict:
    sets = []
    if args.trace:
        sets += ['workload.kind="trace"', f"workload.trace.path={_toml_literal(args.trace)}"]
    if args.format:
        sets.append(f"workload.trace.format={_toml_literal(args.format)}")
    layers = _layers(args.config, None, args.until, args.seed, sets + list(args.sets))
    if args.preset:
        layers["preset"] = args.preset
    return layers


def _cmd_run(args: argparse.Namespace) -> int:
    layers = _layer_args(args)
    raw = _core.run(
        preset=layers["preset"], files=layers["files"], overrides=layers["overrides"], out_dir=args.out
    )
    if args.json:
        print(raw["summary_json"])
    elif not args.quiet:
        print(raw["summary_text"], end="")
        summary = os.path.join(args.out, "summary.json")
        print(f"wrote {summary}, timeseries.csv, erase_histogram.csv, config.toml")
    return 0


def _cmd_presets(args: argparse.Namespace) -> int:
    for name, desc in _core.list_presets():
        print(f"{name:<24} {desc}")
    return 0


def _cmd_config(args: argparse.Namespace) -> int:
    layers = _layer_args(args)
    print(
        _core.resolve_config(preset=layers["preset"], files=layers["files"], overrides=layers["overrides"]),
        end="",
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flashlife", description="Fast, physics-aware, trace-driven SSD simulator."
    )
    parser.add_argument("--version", action="version", version=f"flashlife {_core.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run a simulation and write its results")
    _add_config_args(p)
    p.add_argument("--out", required=True, help="folder for summary.json, timeseries.csv, config.toml")
    p.add_argument("--json", action="store_true", help="print summary.json instead of the human summary")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("presets", help="list the presets")
    p.set_defaults(func=_cmd_presets)

    p = sub.add_parser("config", help="print the fully resolved configuration")
    _add_config_args(p)
    p.set_defaults(func=_cmd_config)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except _core.FlashlifeError as e:
        print(f"flashlife: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"flashlife: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("flashlife: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
