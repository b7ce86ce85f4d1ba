#!/bin/bash
# A bench or study split into N tasks and run P at a time on this machine (xargs -P), the
# way a scheduler would run them (docs/DISTRIBUTED.md):
#   scripts/dist/local.sh DIR N P [rdbench plan flags...]
# writes DIR/plan.json, DIR/records/, DIR/plan_full.json and DIR/bench_report.json (with
# --study: DIR/study_report.json and its two charts). Run again, it redoes only the runs not
# yet recorded. RDBENCH: the rdbench binary (default: rdbench on the PATH); THREADS: threads
# per task (default 1).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 DIR N P [rdbench plan flags...]" >&2; exit 2; }
dir=$1; n=$2; p=$3; shift 3
for v in "$n" "$p"; do [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "N and P are positive integers, not '$v'" >&2; exit 2; }; done
: "${RDBENCH:=rdbench}"
mkdir -p "$dir"
study=no; for a in "$@"; do [ "$a" = --study ] && study=yes; done
"$RDBENCH" plan --out "$dir/plan.json" "$@"
stage() { # every task of the plan $1
  seq 0 $((n - 1)) | xargs -P "$p" -I{} "$RDBENCH" work --quiet --plan "$1" --records "$dir/records" \
    --index {} --of "$n" --threads "${THREADS:-1}"
}
stage "$dir/plan.json"
"$RDBENCH" merge --plan "$dir/plan.json" --out "$dir/plan_full.json" "$dir/records"
stage "$dir/plan_full.json"
if [ $study = yes ]; then
  "$RDBENCH" merge --plan "$dir/plan_full.json" --out "$dir/study_report.json" \
    --chart "$dir/study_chart.svg" --frontier-chart "$dir/study_frontier.svg" "$dir/records"
else
  "$RDBENCH" merge --plan "$dir/plan_full.json" --out "$dir/bench_report.json" "$dir/records"
fi
