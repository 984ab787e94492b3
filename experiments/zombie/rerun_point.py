"""Run one point of a ZombieNAND trace sweep again, alone, with today's build, to read what its
saved outputs do not hold (the time series' mode columns, for one).

The point's configuration is the sweep's own: the `base` of `OUT/data/zombienand/fig5_MODE/
sweep.json` (written as TOML), the sweep's overrides, the point's grid keys and its workload's
keys. The run goes through the Rust probe (`cargo run --release -p flashlife --example
perf_probe`), which writes `summary.json` and `timeseries.csv` to DEST; it should give the
saved point's `lifetime.host_bytes_written` exactly, which this checks. For a drop-bit point
it then prints when the blocks dropped, on Figure 6's axis (100 = the baseline's death at the
same trace, mode and reserve): the drops in waves (runs of intervals with drops, split where
the drive wrote 1% of the baseline's life without one), and the blocks by mode after each.

    python3 experiments/zombie/rerun_point.py OUT tlc web_0 0.1 drop_bit DEST   # from the checkout
"""

import csv
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


#: A pause of this much of the baseline's life without a drop ends a wave.
PAUSE = 1.0


def drop_waves(timeseries: Path, baseline_bytes: float) -> list[str]:
    """The drops of a drop-bit run's time series in waves, one line each, and its death."""
    rows = list(csv.DictReader(timeseries.open()))
    if not rows or "mode_switches" not in rows[0]:
        return ["no mode columns in the time series (not a drop-bit drive)"]
    modes = [m for m in ("slc", "mlc", "tlc", "qlc") if any(int(r.get(f"blocks_{m}") or 0) for r in rows)]
    lines, wave, last_drop, prev = [], None, None, 0
    for r in rows:
        life = 100.0 * float(r["host_bytes_written"]) / baseline_bytes
        sw = int(r["mode_switches"])
        if sw > prev:
            if wave is None or life - last_drop > PAUSE:
                if wave is not None:
                    lines.append(wave)
                wave = {"from": life, "first": prev}
            wave.update(to=life, last=sw, row=r)
            last_drop = life
        prev = sw
    if wave is not None:
        lines.append(wave)
    out = []
    for w in lines:
        by_mode = ", ".join(f"{m.upper()} {int(w['row'][f'blocks_{m}'])}" for m in modes)
        out.append(
            f"life {w['from']:.2f}-{w['to']:.2f}: drops {w['first'] + 1}-{w['last']} "
            f"({w['last'] - w['first']}); then {by_mode}, dead {int(w['row']['dead_blocks'])}"
        )
    end = 100.0 * float(rows[-1]["host_bytes_written"]) / baseline_bytes
    out.append(f"death at life {end:.2f} ({prev} drops in all)")
    return out


def find_point(sweep: dict, want: dict) -> str | None:
    """The key of the sweep's point with the keys and values of `want`."""
    return next((k for k, p in sweep["points"].items() if all(p.get(a) == b for a, b in want.items())), None)


def main(out: Path, mode: str, workload: str, reserve: float, end_of_life: str, dest: Path) -> int:
    sweep_dir = out / "data" / "zombienand" / f"fig5_{mode}"
    sweep = json.loads((sweep_dir / "sweep.json").read_text())
    want = {"flash.end_of_life": end_of_life, "capacity.reserve": reserve, "workload": workload}
    key = find_point(sweep, want)
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
    rc = 0
    if saved_file.exists():
        saved = json.loads(saved_file.read_text())["row"]["lifetime.host_bytes_written"]
        print(f"host bytes until death: {got} now, {saved} saved ({'same' if got == saved else 'DIFFERENT'})")
        rc = 0 if got == saved else 1
    else:
        print(f"host bytes until death: {got} (the point is not saved yet)")
    if end_of_life == "drop_bit":
        base_key = find_point(sweep, {**want, "flash.end_of_life": "retire"})
        base_file = sweep_dir / "points" / f"{base_key}.json"
        if base_key is None or not base_file.exists():
            print("the baseline point is not saved: no drop timeline")
        else:
            base_bytes = json.loads(base_file.read_text())["row"]["lifetime.host_bytes_written"]
            for line in drop_waves(dest / "timeseries.csv", float(base_bytes)):
                print(line)
    return rc


if __name__ == "__main__":
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    a = sys.argv
    sys.exit(main(Path(a[1]), a[2], a[3], float(a[4]), a[5], Path(a[6])))
