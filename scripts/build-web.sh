#!/usr/bin/env bash
# Build the browser app into www/pkg/: the engine (worker) and the charts (page) as wasm,
# bound with the wasm-bindgen CLI pinned to Cargo.lock's version, then precompressed.
# Installs what is missing (wasm32 target, wasm-bindgen-cli); skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rdbench-target}"
PROFILE=wasm-release
TARGET=wasm32-unknown-unknown
OUT=www/pkg

if ! rustup target list --installed | grep -qx "$TARGET"; then
  echo "== adding the $TARGET target"
  rustup target add "$TARGET"
fi

WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WB_VERSION" ]; then
  echo "== installing wasm-bindgen-cli $WB_VERSION (a few minutes, once)"
  cargo install --force wasm-bindgen-cli --version "$WB_VERSION"
fi

echo "== building the engine (worker) wasm"
cargo build --profile "$PROFILE" --target "$TARGET" --lib --features webgpu
echo "== building the charts (page) wasm"
cargo build --profile "$PROFILE" --target "$TARGET" --lib -p rdbench-charts

mkdir -p "$OUT"
# The name section (3.8 MB) is dropped from the served engine (cargo's output keeps it, for
# profiling).
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$OUT" "$CARGO_TARGET_DIR/$TARGET/$PROFILE/rdbench.wasm"
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$OUT" "$CARGO_TARGET_DIR/$TARGET/$PROFILE/rdbench_charts.wasm"

echo "== precompressing"
node scripts/compress.mjs "$OUT"
ls -l "$OUT"
