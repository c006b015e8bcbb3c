#!/usr/bin/env bash
# The CPython front end against its peers, side by side in one run (issue:
# real Python): medians of REPS runs each, alternating, of
#   - `spmd run --frontend cpython small.py` against `python3 -c 'import numpy'`
#     (goal: at most 100 ms more), and against the scenario front end;
#   - a 100-step 8-device training loop (training_loop.py) on both front ends
#     (goal: the CPython front end no slower).
#
#   tools/bench/frontend/run.sh [BUILD_DIR]     # default ./build; REPS=7
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
spmd=$build/bin/spmd
reps=${REPS:-7}

seconds() {  # wall seconds of one run of "$@", output discarded
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }

declare -A runs
cases=(numpy small_cpython small_scenario loop_cpython loop_scenario)
for ((r = 0; r < reps; r++)); do
  runs[numpy]+="$(seconds /usr/bin/python3 -c 'import numpy')"$'\n'
  runs[small_cpython]+="$(seconds "$spmd" run --frontend cpython --devices 8 "$here/small.py")"$'\n'
  runs[small_scenario]+="$(seconds "$spmd" run --frontend scenario --devices 8 "$here/small.py")"$'\n'
  runs[loop_cpython]+="$(seconds "$spmd" run --frontend cpython --devices 8 "$here/training_loop.py")"$'\n'
  runs[loop_scenario]+="$(seconds "$spmd" run --frontend scenario --devices 8 "$here/training_loop.py")"$'\n'
done
for c in "${cases[@]}"; do
  printf '%-16s median %s s over %d runs\n' "$c" "$(printf '%s' "${runs[$c]}" | median)" "$reps"
done
