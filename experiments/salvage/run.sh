#!/bin/sh
# Runtime bad-block salvage, the paper's Figure 4: baseline vs salvage across the six RBER inputs.
#   experiments/salvage/run.sh            # CI size: scaled drive (salvage-small), synthetic mix, ~2 minutes
#   experiments/salvage/run.sh full       # the Table I drive (salvage-table1), much longer
#   experiments/salvage/run.sh traces     # real traces from ../shared/traces on salvage-small (SEEDS=3 by default)
#   experiments/salvage/run.sh traces-ci  # the traces mode cut down for CI: one trace, 3e-11 only, one seed
# Traces mode environment: SEEDS (3), WRITES (0.25dw), TRACES (paths under ../shared/traces),
# TAG (suffix of the CSV names, e.g. TAG=_closed with --set workload.trace.timestamps=\"ignore\").
# Extra arguments are passed on (e.g. --seeds 3, --set host.queue_depth=32).
set -e
cd "$(dirname "$0")/../.."
size=${1:-small}
[ $# -gt 0 ] && shift
out=experiments/salvage/results
mkdir -p "$out"
fig4() {
  cargo run --release -q -p flashlife --example salvage_fig4 -- "$@"
}
case "$size" in
  small) fig4 --preset salvage-small --writes 0.25dw --set ftl.precondition_drive_writes=0.5 \
           --set host.queue_depth=1 --csv "$out/fig4_small_qd1.csv" "$@" ;;
  full)  fig4 --preset salvage-table1 --writes 0.5dw --set ftl.precondition_drive_writes=0.5 \
           --set host.queue_depth=1 --csv "$out/fig4_full_qd1.csv" "$@" ;;
  traces|traces-ci)
    traces=../shared/traces
    [ -d "$traces" ] || { echo "no traces at $traces (expected beside the checkout)" >&2; exit 1; }
    csvs=
    if [ "$size" = traces ]; then
      list=${TRACES:-"msr/web_0-first100k.csv.gz msr/rsrch_1.csv msr/hm_0-window.csv umass/Financial1-first10k.ascii"}
      extra="--seeds ${SEEDS:-3}"
      writes=${WRITES:-0.25dw}
    else
      list="msr/hm_0-window.csv"
      extra="--seeds 1 --rbers 3e-11"
      writes=0.05dw
    fi
    # Steady state (fill + 0.5 drive writes of uniform random overwrite in fast-forward), then
    # the trace replayed endlessly (loops = 0) with its timestamps 10x faster, addresses folded
    # onto the drive, until the given drive writes.
    for t in $list; do
      name=$(basename "$t" | sed 's/[.-].*//')
      fig4 --preset salvage-small --writes "$writes" --label "$name${TAG:-}" --set ftl.precondition_drive_writes=0.5 \
        --set workload.kind=\"trace\" --set workload.trace.path=\""$traces/$t"\" --set workload.trace.loops=0 \
        --set workload.trace.time_scale=0.1 --csv "$out/fig4_${size}${TAG:-}_$name.csv" $extra "$@"
      csvs="$csvs $out/fig4_${size}${TAG:-}_$name.csv"
    done
    python3 experiments/salvage/summarise.py $csvs ;;
  *) echo "usage: $0 [small|full|traces|traces-ci] [options]" >&2; exit 2 ;;
esac
