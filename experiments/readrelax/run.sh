#!/bin/sh
# Read latency relaxation experiments (docs/techniques/read-relaxation.md).
#   experiments/readrelax/run.sh            full version (a few minutes)
#   experiments/readrelax/run.sh --small    CI version (about a minute)
# Extra arguments pass through: a scenario (longterm, fileserver, mix) and --set key=value.
set -e
cd "$(dirname "$0")/../.."
exec cargo run --release -q -p flashlife --example readrelax -- "$@"
