#!/usr/bin/env bash
# ZombieNAND synthetic grid (paper Figure 3): baseline and zombie drives run to death at each
# (start mode, write share, reserve, working set); lifetime and latency ratios as CSV, heat
# maps if matplotlib is installed.
#
#   experiments/zombie/run.sh            # CI grid: scaled endurance, 32-page blocks, ~20 s
#   experiments/zombie/run.sh lifetime   # the paper's drive, 360 points, fast-forward (~40 min, 2 jobs)
#   experiments/zombie/run.sh full       # the same with the timing model on: latency ratios too (many hours)
#   JOBS=4 experiments/zombie/run.sh full
#
# Trace-driven runs (paper Figures 5-6): python3 experiments/zombie/traces.py [full].
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mode="${1:-small}"
jobs="${JOBS:-2}"
out="$here/results"
mkdir -p "$out"
cd "$root"
cargo build --release -p flashlife --example zombie_grid
bin="$root/target/release/examples/zombie_grid"
if [ "$mode" = "full" ]; then
    "$bin" --timing --jobs "$jobs" --out "$out/grid_full.csv"
    csv="$out/grid_full.csv"
elif [ "$mode" = "lifetime" ]; then
    "$bin" --jobs "$jobs" --out "$out/grid_lifetime.csv"
    csv="$out/grid_lifetime.csv"
else
    "$bin" --small --reads 0.9,0.5,0.1 --reserves 0.07,0.15,0.2,0.3 --working-sets 0.1,0.3,0.5,1.0 \
        --jobs "$jobs" --out "$out/grid_small.csv"
    csv="$out/grid_small.csv"
fi
echo "wrote $csv"
python3 "$here/plot.py" "$csv" || echo "(no plot: $?)"
