#!/usr/bin/env bash
# The rustup parts every build here needs, each added only where missing: rustfmt, clippy and
# the wasm32 target. (The wasm-bindgen CLI, pinned to Cargo.lock, is scripts/build-web.sh's.)
set -euo pipefail
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
