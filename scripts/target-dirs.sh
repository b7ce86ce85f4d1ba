# Where builds go (sourced by the build and test scripts): native builds in $CARGO_TARGET_DIR
# (default ~/.cache/rdbench-target, outside the clone, so later runs are incremental), the
# wasm builds in $RDBENCH_WASM_TARGET_DIR (default: that path with -wasm), a directory of
# their own so that a native and a wasm build can run at once without waiting on each
# other's lock (scripts/test.sh does).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/rdbench-target}"
export RDBENCH_WASM_TARGET_DIR="${RDBENCH_WASM_TARGET_DIR:-${CARGO_TARGET_DIR%/}-wasm}"
