#!/usr/bin/env bash
# Build the browser app into www/pkg/: the worker (the engine) and the page (charts) as wasm,
# bound with the wasm-bindgen CLI pinned to Cargo.lock's version, then precompressed.
# Installs what is missing (wasm32 target, wasm-bindgen-cli); skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/target-dirs.sh
export CARGO_TARGET_DIR="$RDBENCH_WASM_TARGET_DIR"
PROFILE=wasm-release
TARGET=wasm32-unknown-unknown
OUT=www/pkg

bash scripts/toolchain.sh

WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WB_VERSION" ]; then
  echo "== installing wasm-bindgen-cli $WB_VERSION (a few minutes, once)"
  cargo install --force wasm-bindgen-cli --version "$WB_VERSION"
fi

echo "== building the worker (engine) wasm"
cargo build --profile "$PROFILE" --target "$TARGET" --lib -p rdbench-worker
echo "== building the page (charts) wasm"
cargo build --profile "$PROFILE" --target "$TARGET" --lib -p rdbench-page

mkdir -p "$OUT"
# The name section (3.8 MB) is dropped from the served engine (cargo's output keeps it, for
# profiling).
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$OUT" "$CARGO_TARGET_DIR/$TARGET/$PROFILE/rdbench_worker.wasm"
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$OUT" "$CARGO_TARGET_DIR/$TARGET/$PROFILE/rdbench_page.wasm"

echo "== precompressing"
node scripts/compress.mjs "$OUT"
ls -l "$OUT"
