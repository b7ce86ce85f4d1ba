#!/usr/bin/env bash
# The habits, as a script CI runs (via `npm test`): formatting, and clippy with warnings as
# errors on every target the project builds (native workspace with tests; the worker and the
# page for wasm32). `check.sh native` or `check.sh wasm` runs one side alone (fmt with the
# native side); scripts/test.sh runs the two beside each other.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/target-dirs.sh
what="${1:-all}"
case "$what" in all | native | wasm) ;; *) echo "usage: check.sh [native | wasm]" >&2; exit 2 ;; esac

bash scripts/toolchain.sh
if [ "$what" != wasm ]; then
  echo "== cargo fmt --check"
  cargo fmt --all --check
  # Comments say why, not which issue asked: history is in git.
  echo "== no issue numbers in the code's comments"
  if grep -rnE '\bissue #?[0-9]+' --include='*.rs' --include='*.js' --include='*.mjs' --include='*.sh' \
      crates src www tests scripts | grep -v '^www/pkg/'; then
    echo "comments cite issue numbers (above): say why instead" >&2
    exit 1
  fi
  echo "== clippy (native, all targets)"
  cargo clippy --release --workspace --all-targets -- -D warnings
fi
if [ "$what" != native ]; then
  echo "== clippy (wasm32: the worker with the engine on WebGPU, the page)"
  CARGO_TARGET_DIR="$RDBENCH_WASM_TARGET_DIR" \
    cargo clippy --profile wasm-release --target wasm32-unknown-unknown --lib -p rdbench-worker -p rdbench-page -- -D warnings
fi
