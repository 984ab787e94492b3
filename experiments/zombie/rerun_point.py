"""Run one point of a ZombieNAND trace sweep again, alone, with today's build, to read what its
saved outputs do not hold (the time series' mode columns, for one).

The point's configuration is the sweep's own: the `base` of `OUT/data/zombienand/fig5_MODE/
sweep.json` (written as TOML), the sweep's overrides, the point's grid keys and its workload's
keys. The run goes through the Rust probe (`cargo run --release -p flashlife --example
perf_probe`), which writes `summary.json` and `timeseries.csv` to DEST; it should give the
saved point's `lifetime.host_bytes_written` exactly, which this checks.

    python3 experiments/zombie/rerun_point.py OUT tlc web_0 0.1 drop_bit DEST   # from the checkout
"""

import json
import subprocess
import sys
from pathlib import Path

import tomli_w


def toml_value(v: object) -> str:
    return json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


def flat(prefix: str, d: dict) -> list[str]:
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += flat(f"{prefix}{k}.", v)
        else:
            out.append(f"{prefix}{k}={toml_value(v)}")
    return out


def main(out: Path, mode: str, workload: str, reserve: float, end_of_life: str, dest: Path) -> int:
    sweep_dir = out / "data" / "zombienand" / f"fig5_{mode}"
    sweep = json.loads((sweep_dir / "sweep.json").read_text())
    want = {"flash.end_of_life": end_of_life, "capacity.reserve": reserve, "workload": workload}
    key = next((k for k, p in sweep["points"].items() if all(p.get(a) == b for a, b in want.items())), None)
    if key is None:
        print(f"no point {want} in {sweep_dir / 'sweep.json'}", file=sys.stderr)
        return 2
    dest.mkdir(parents=True, exist_ok=True)
    base = dest / "base.toml"
    base.write_text(tomli_w.dumps(sweep["base"]))
    sets = [f"{k}={toml_value(v)}" for k, v in sweep["overrides"].items()]
    sets += [f"flash.end_of_life={toml_value(end_of_life)}", f"capacity.reserve={reserve}"]
    sets += flat("workload.", sweep["workloads"][workload])
    sets.append(f"run.until={toml_value(sweep['until'])}")
    cmd = ["cargo", "run", "--release", "-q", "-p", "flashlife", "--example", "perf_probe", "--"]
    cmd += [str(dest), str(base)]
    print(" ".join(cmd + sets), flush=True)
    subprocess.run(cmd + sets, check=True)
    got = json.loads((dest / "summary.json").read_text())["lifetime"]["host_bytes_written"]
    saved_file = sweep_dir / "points" / f"{key}.json"
    if saved_file.exists():
        saved = json.loads(saved_file.read_text())["row"]["lifetime.host_bytes_written"]
        print(f"host bytes until death: {got} now, {saved} saved ({'same' if got == saved else 'DIFFERENT'})")
        return 0 if got == saved else 1
    print(f"host bytes until death: {got} (the point is not saved yet)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    a = sys.argv
    sys.exit(main(Path(a[1]), a[2], a[3], float(a[4]), a[5], Path(a[6])))
