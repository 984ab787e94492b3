#!/usr/bin/env bash
# Every check the project has: formatting, lints, the Rust tests and the Python tests.
# Installs what it needs (the package with its test and docs extras) first.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "install flashlife with its test and docs extras"
python3 -m pip install --quiet --disable-pip-version-check '.[test,docs]'

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "ruff"
py_dirs=()
for d in python tests examples experiments scripts docs/conf.py; do [ -e "$d" ] && py_dirs+=("$d"); done
python3 -m ruff check "${py_dirs[@]}"
python3 -m ruff format --check "${py_dirs[@]}"

step "cargo test (release: the simulations are heavy)"
cargo test --release --workspace

# Tests on the real traces live in modules named `shared_traces` and are `#[ignore]`d (cargo
# reports them as ignored, never as passed); they run here when the traces are beside the
# checkout. Other ignored tests, if any, stay ignored: the filter selects these modules only.
traces=../shared/traces
if [ -d "$traces" ]; then
    step "cargo test: the trace tests (${traces} found)"
    cargo test --release --workspace -- --ignored shared_traces::
else
    n=$(cargo test --release --workspace -q -- --ignored --list shared_traces:: 2>/dev/null | grep -c ': test$' || true)
    step "cargo test: ${n} trace tests skipped (${traces} not found beside the checkout)"
fi

step "pytest"
python3 -m pytest -q
