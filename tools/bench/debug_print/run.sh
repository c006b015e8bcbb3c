#!/usr/bin/env bash
# jax.debug.print inside pmap without collectives between the prints: the
# time per line must not grow with the number of lines (it grew linearly,
# i.e. quadratic in total, before the print queue kept one bucket per epoch).
# Medians of REPS runs per size, 4 devices, output to /dev/null.
#
#   tools/bench/debug_print/run.sh [BUILD_DIR]     # default ./build; REPS=3
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
reps=${REPS:-3}
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }
for prints in 10000 40000 160000; do
  times=""
  for ((r = 0; r < reps; r++)); do
    t0=$(date +%s.%N)
    PRINTS=$prints "$build/bin/spmd" run --devices 4 "$here/prints.py" >/dev/null 2>&1
    t1=$(date +%s.%N)
    times+="$(echo "$t1 - $t0" | bc -l)"$'\n'
  done
  m=$(printf '%s' "$times" | median)
  printf '%7d prints per device (%7d lines): median %s s, %.2f us per line\n' "$prints" $((prints * 4)) "$m" \
    "$(echo "$m / ($prints * 4) * 1000000" | bc -l)"
done
