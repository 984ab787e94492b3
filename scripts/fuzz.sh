#!/usr/bin/env bash
# Fuzz every trace reader with cargo-fuzz (libFuzzer) for SECONDS each (default 60).
#
#   scripts/fuzz.sh [SECONDS]            all targets
#   FUZZ_TARGETS="trace_msr trace_auto" scripts/fuzz.sh 30
#   FUZZ_TOOLCHAIN=stable scripts/fuzz.sh 10   force a stable toolchain (RUSTC_BOOTSTRAP=1)
#
# The checked-in seeds (crates/flashlife/fuzz/corpus/<target>) are read only; new inputs go
# to crates/flashlife/fuzz/corpus-run/<target> and crashes to crates/flashlife/fuzz/artifacts
# (both git-ignored). Exits non-zero if any target crashed.
set -euo pipefail

secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
crate=$root/crates/flashlife

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "cargo-fuzz not found: installing it (cargo install cargo-fuzz)"
    cargo install cargo-fuzz
fi

# cargo fuzz passes nightly-only flags (-Zsanitizer=address, -Cpasses=sancov...). Use a nightly
# toolchain when rustup has one; otherwise RUSTC_BOOTSTRAP=1 lets a stable rustc accept them.
toolchain=()
case "${FUZZ_TOOLCHAIN:-auto}" in
    nightly) toolchain=(+nightly) ;;
    stable) export RUSTC_BOOTSTRAP=1 ;;
    auto)
        if command -v rustup >/dev/null 2>&1 && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
            toolchain=(+nightly)
        else
            export RUSTC_BOOTSTRAP=1
        fi
        ;;
    *) echo "FUZZ_TOOLCHAIN must be auto, nightly or stable" >&2; exit 2 ;;
esac
echo "toolchain: ${toolchain[*]:-stable with RUSTC_BOOTSTRAP=1} ($(cargo "${toolchain[@]}" --version))"

cd "$crate"
targets=${FUZZ_TARGETS:-$(cargo "${toolchain[@]}" fuzz list)}
mkdir -p fuzz/logs
cargo "${toolchain[@]}" fuzz build $targets >/dev/null 2>&1 || cargo "${toolchain[@]}" fuzz build

status=0
summary=()
for t in $targets; do
    mkdir -p "fuzz/corpus-run/$t" "fuzz/corpus/$t"
    log="fuzz/logs/$t.log"
    echo "== $t: ${secs}s"
    if cargo "${toolchain[@]}" fuzz run "$t" "fuzz/corpus-run/$t" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=1024 -timeout=10 >"$log" 2>&1; then
        result=ok
    else
        result=CRASH
        status=1
    fi
    runs=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 | awk '{print $2 " runs in " $5 " s"}')
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)
    rss=$(grep -Eo 'rss: [0-9]+Mb' "$log" | tail -1)
    line=$(printf '%-20s %-6s %-26s %-32s %s' "$t" "$result" "${runs:-?}" "${cov:-?}" "${rss:-?}")
    echo "$line"
    summary+=("$line")
    if [ "$result" = CRASH ]; then tail -40 "$log"; fi
done

echo
echo "fuzz summary (${secs}s per target):"
printf '%s\n' "${summary[@]}"
exit $status
