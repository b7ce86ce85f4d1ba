#!/bin/bash
# The estimate each `rdbench run` prints before it trains, against its wall time: each config
# with two binaries (BEFORE and AFTER, paths to `rdbench`), one invocation each, under
# nice, with the load average at the start and the end. Output: perf_output.txt's
# "estimate vs wall" part.
#   BEFORE=/path/old/rdbench AFTER=target/release/rdbench bash docs/perf/estimate_vs_wall.sh
set -u
out=$(mktemp -d)
run() { # name binary-variable flags...
  local name=$1 which=$2; shift 2
  local bin=${!which}
  echo "== $name ${which,,}: rdbench run $* | $(uptime | sed 's/.*load/load/')"
  /usr/bin/time -f "wall %e s" nice -n 10 "$bin" run --out "$out/$name-$which.json" "$@" 2>&1 | tr '\r' '\n' |
    grep -a -E "estimated time|^wall"
  echo "   after: $(uptime | sed 's/.*load/load/')"
}
for which in BEFORE AFTER; do
  run quick $which --seeds 4 --sweep-seeds 1 --lrs 0.003,0.01 --epochs 3 --hidden 16
  run adding100 $which --track adding --seq-len 100 --seeds 4 --sweep-seeds 1 --lrs 0.01 --epochs 3
  run adding1000 $which --track adding --seq-len 1000 --seeds 4 --sweep-seeds 1 --lrs 0.01 --epochs 3
done
for which in BEFORE AFTER; do
  run seed $which
done
