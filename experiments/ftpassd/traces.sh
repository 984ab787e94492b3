#!/bin/sh
# FT-PASSD on block I/O traces (Figures 15 and 16 of Lee et al. 2020): MSR and other real
# traces at their timestamps (and accelerated), one program failure at a random program of
# each run, OCSSD vs FT-PASSD without and with shift; host queue depth 1 (the preset) and 32.
# `--quick` for the CI size. Extra arguments go to the example (e.g. --seed 2, --traces DIR).
# Usage: experiments/ftpassd/traces.sh [--quick] > experiments/ftpassd/results_traces.md
set -e
cd "$(dirname "$0")/../.."
cargo build --release -q -p flashlife --example ftpassd_traces
echo "# FT-PASSD trace experiment, host queue depth 1"
echo
cargo run --release -q -p flashlife --example ftpassd_traces -- "$@"
echo
echo "# FT-PASSD trace experiment, host queue depth 32"
echo
cargo run --release -q -p flashlife --example ftpassd_traces -- --set host.queue_depth=32 "$@"
