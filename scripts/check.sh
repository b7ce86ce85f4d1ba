#!/usr/bin/env bash
# The habits, as a script CI runs (via `npm test`): formatting, and clippy with warnings as
# errors on every target the project builds (native workspace with tests; the worker and the
# page for wasm32).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rdbench-target}"

rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== clippy (native, all targets)"
cargo clippy --release --workspace --all-targets -- -D warnings
echo "== clippy (wasm32: the worker with the engine on WebGPU, the page)"
cargo clippy --profile wasm-release --target wasm32-unknown-unknown --lib -p rdbench-worker -p rdbench-page -- -D warnings
