#!/bin/sh
# Runtime bad-block salvage, the paper's Figure 4: baseline vs salvage across the six RBER inputs.
#   experiments/salvage/run.sh            # CI size: scaled drive (salvage-small), ~2 minutes
#   experiments/salvage/run.sh full       # the Table I drive (salvage-table1), much longer
# Extra arguments are passed on (e.g. --seeds 3, --set host.queue_depth=32).
set -e
cd "$(dirname "$0")/../.."
size=${1:-small}
[ $# -gt 0 ] && shift
out=experiments/salvage/results
mkdir -p "$out"
case "$size" in
  small) preset=salvage-small; writes=0.25dw ;;
  full)  preset=salvage-table1; writes=0.5dw ;;
  *) echo "usage: $0 [small|full] [options]" >&2; exit 2 ;;
esac
cargo run --release -q -p flashlife --example salvage_fig4 -- --preset "$preset" --writes "$writes" \
  --set ftl.precondition_drive_writes=0.5 --set host.queue_depth=1 --csv "$out/fig4_${size}_qd1.csv" "$@"
