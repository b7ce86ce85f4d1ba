# Phase timing for scripts/test.sh and .ci/run (sourced): `phase NAME CMD...` runs CMD, notes
# its wall time, and `print_phases` prints every phase noted so far. The times go to the file
# $RDBENCH_PHASES, so .ci/run's summary includes the phases of the `npm test` it runs.
export RDBENCH_PHASES="${RDBENCH_PHASES:-$(mktemp -t rdbench-phases.XXXXXX)}"

phase() {
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "== $name"
  "$@" || rc=$?
  printf '%-34s %6d s%s\n' "$name" $((SECONDS - t0)) "$([ $rc -eq 0 ] || echo "  (failed, exit $rc)")" >>"$RDBENCH_PHASES"
  return $rc
}

print_phases() {
  echo "== phase times (wall)"
  cat "$RDBENCH_PHASES"
}
