#!/bin/bash
# Plan a bench or a study and submit it to Slurm (docs/DISTRIBUTED.md):
#   scripts/dist/slurm-submit.sh DIR N [rdbench plan flags...]
# writes DIR/plan.json and submits four jobs, each after the last succeeded
# (--dependency=afterok): the sweep as an array of N tasks, its merge (which plans the
# full runs in DIR/plan_full.json), the full runs as an array of N tasks, and the final merge
# (DIR/bench_report.json, or with --study DIR/study_report.json and its two charts).
# Every record lands in DIR/records, so DIR must be on a filesystem every node sees.
# RDBENCH: the rdbench binary (default: rdbench on the PATH); SBATCH_FLAGS: more sbatch flags
# (partition, account, time). Prints the four job ids.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DIR N [rdbench plan flags...]" >&2; exit 2; }
dir=$(realpath -m "$1"); n=$2; shift 2
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "N must be a positive integer, not '$n'" >&2; exit 2; }
here=$(dirname "$(realpath "$0")")
: "${RDBENCH:=$(command -v rdbench || true)}"
[ -x "$RDBENCH" ] || { echo "no rdbench binary: set RDBENCH" >&2; exit 2; }
RDBENCH=$(realpath "$RDBENCH"); export RDBENCH
mkdir -p "$dir/records" "$dir/logs"
study=no; for a in "$@"; do [ "$a" = --study ] && study=yes; done
"$RDBENCH" plan --out "$dir/plan.json" "$@" >&2
# shellcheck disable=SC2086
sb() { sbatch --parsable --chdir="$dir/logs" --export=ALL ${SBATCH_FLAGS:-} "$@"; }
if [ $study = yes ]; then
  final="--out $dir/study_report.json --chart $dir/study_chart.svg --frontier-chart $dir/study_frontier.svg"
else
  final="--out $dir/bench_report.json"
fi
sweep=$(sb --array=0-$((n - 1)) "$here/work.sbatch" "$dir/plan.json" "$dir/records")
merge1=$(sb --dependency=afterok:"$sweep" --job-name=rdbench-merge-sweep \
  --wrap "\"$RDBENCH\" merge --plan \"$dir/plan.json\" --out \"$dir/plan_full.json\" \"$dir/records\"")
full=$(sb --dependency=afterok:"$merge1" --array=0-$((n - 1)) "$here/work.sbatch" "$dir/plan_full.json" "$dir/records")
merge2=$(sb --dependency=afterok:"$full" --job-name=rdbench-merge \
  --wrap "\"$RDBENCH\" merge --plan \"$dir/plan_full.json\" $final \"$dir/records\"")
echo "$sweep $merge1 $full $merge2"
