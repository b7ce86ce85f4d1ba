#!/usr/bin/env bash
# `npm test`: every test. Two streams run side by side, each in its own cargo target dir so
# that neither waits on the other's lock, and so that the wasm build's long single-threaded
# link fills the core the cargo tests leave idle: the native stream (fmt, clippy, the cargo
# tests, the node tests) and the browser stream (clippy for wasm32, the wasm build). Then the
# browser tests, which need both. Each phase's wall time is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh
source scripts/target-dirs.sh

# What both streams need, installed once before they start (rustup is not safe to run twice
# at once): rustfmt, clippy, the wasm32 target. (The browser stream installs the pinned
# wasm-bindgen CLI itself, the first time.)
phase "toolchain" bash scripts/toolchain.sh
phase "fmt" cargo fmt --all --check

wasm_log=$(mktemp -t rdbench-wasm-stream.XXXXXX)
(phase "clippy (wasm32) [beside]" bash scripts/check.sh wasm && phase "wasm build [beside]" bash scripts/build-web.sh) \
  >"$wasm_log" 2>&1 &
wasm_pid=$!
trap 'kill $wasm_pid 2>/dev/null || true; print_phases' EXIT

phase "clippy (native)" bash scripts/check.sh native
phase "cargo build (tests)" cargo test --release --workspace --no-run
phase "cargo tests" cargo test --release --workspace
phase "node tests" node --test tests/js/
wasm_ok=0
phase "waiting for the wasm build" wait $wasm_pid || wasm_ok=$?
echo "== the browser stream's output (clippy for wasm32, the wasm build)"
cat "$wasm_log"
[ "$wasm_ok" -eq 0 ] || exit "$wasm_ok"
phase "browser tests" node tests/browser/run.mjs
