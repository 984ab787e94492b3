#!/bin/sh
# FT-PASSD micro-benchmarks (Figures 13 and 14 of Lee et al. 2020). `--quick` for the CI size.
# Usage: experiments/ftpassd/run.sh [--quick] > results.md
set -e
cd "$(dirname "$0")/../.."
exec cargo run --release -q -p flashlife --example ftpassd_micro -- "$@"
