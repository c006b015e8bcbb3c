#!/usr/bin/env bash
# spmd diagnose on large NCCL logs: a healthy job and one whose last rank
# skips the last all-reduce, 8 to 10,000 ranks. Medians of REPS runs; the
# figure to watch is microseconds per log line (it must not grow with size).
#
#   tools/bench/diagnose/run.sh [BUILD_DIR]     # default ./build; REPS=3
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
reps=${REPS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }
for shape in "8 25000" "8 100000" "64 12500" "1000 20" "10000 3"; do
  read -r ranks calls <<<"$shape"
  for hang in 0 1; do
    log=$work/r$ranks-c$calls-h$hang.log
    RANKS=$ranks CALLS=$calls HANG=$hang python3 "$here/make_log.py" "$log"
    lines=$(wc -l <"$log")
    times=""
    for ((r = 0; r < reps; r++)); do
      t0=$(date +%s.%N)
      "$build/bin/spmd" diagnose "$log" >/dev/null 2>&1 || true
      t1=$(date +%s.%N)
      times+="$(echo "$t1 - $t0" | bc -l)"$'\n'
    done
    m=$(printf '%s' "$times" | median)
    printf '%3d ranks x %6d calls%s: %8d lines, %4d MiB: median %s s, %.2f us per line\n' "$ranks" "$calls" \
      "$([[ $hang == 1 ]] && echo ' (hang)' || echo '       ')" "$lines" $(($(stat -c %s "$log") >> 20)) "$m" \
      "$(echo "$m / $lines * 1000000" | bc -l)"
  done
done
