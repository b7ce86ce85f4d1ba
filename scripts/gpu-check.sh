#!/usr/bin/env bash
# The GPU checks for a machine with a real GPU (Vulkan), time-boxed: the fused kernels' native
# tests (tests/cube_kernels.rs), the per-step table at populations 1 / 8 / 17 (kernel
# launches and ms, fused and unfused), and the default protocol through the same kernels.
# Prints everything to stdout and to $OUT (default: ./gpu-check-out).
#
# Build the two binaries on any x86_64 Linux first (about 20 min on 2 cores, from an empty
# cache) and copy them where the GPU machine can read them, e.g. ./gpu-bin/ (git-ignored):
#   cargo build --release --features wgpu --bin rdbench
#   cargo test --release --features wgpu --test cube_kernels --no-run   # prints the test binary
# then: RDBENCH_BIN=gpu-bin/rdbench CUBE_TESTS=gpu-bin/cube_kernels bash scripts/gpu-check.sh
# Without them the script builds (needs cargo and the time for it).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-gpu-check-out}"
mkdir -p "$OUT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rdbench-target}"

RDBENCH_BIN="${RDBENCH_BIN:-}"
CUBE_TESTS="${CUBE_TESTS:-}"
if [ -z "$RDBENCH_BIN" ]; then
  cargo build --release --features wgpu --bin rdbench
  RDBENCH_BIN="$CARGO_TARGET_DIR/release/rdbench"
fi
if [ -z "$CUBE_TESTS" ]; then
  CUBE_TESTS=$(cargo test --release --features wgpu --test cube_kernels --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*cube_kernels[^"]*"' | tail -1 | cut -d'"' -f4)
fi

{
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv
  echo "== fused kernels, native tests (Vulkan)"
  timeout 300 "$CUBE_TESTS" --test-threads 1
  echo "== per-step table and the default protocol (Vulkan)"
  timeout 420 "$RDBENCH_BIN" perf --backend vulkan --steps 5 --protocol
} 2>&1 | tee "$OUT/gpu-check.txt"
