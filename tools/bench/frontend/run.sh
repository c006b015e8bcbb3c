#!/usr/bin/env bash
# `spmd run` against its peers, side by side in one run (issue 14, real
# Python): medians of REPS runs each, alternating, of
#   - `spmd run small.py` against `python3 -c 'import numpy'` (goal: at most
#     100 ms more);
#   - a 100-step 8-device training loop (training_loop.py) through `spmd run`
#     and through a plain python3 with the _spmd extension (the same package,
#     not embedded). The deleted Python-subset interpreter's figures for the
#     same two programs are in the README (0.03-0.07 s and 0.13-0.15 s).
#   - the cost of one step in steady state: the same loop with 600 steps,
#     minus the 100-step run, over 500.
#   - with OLD_SPMD=path/to/spmd, a build of commit 8268bf0 (the last with the
#     deleted Python-subset interpreter, `--frontend scenario`), the same
#     programs on that interpreter in the same rounds:
#       git worktree add /tmp/old 8268bf0 && cmake -S /tmp/old -B /tmp/old/build \
#         -DSPMD_CUDA=OFF && cmake --build /tmp/old/build --target spmd_bin
#       OLD_SPMD=/tmp/old/build/bin/spmd tools/bench/frontend/run.sh
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
src=$(cd "$here/../../../src/python" && pwd)
cases=(numpy small_spmd_run loop_spmd_run loop_python3 loop600_spmd_run)
old=${OLD_SPMD:-}
if [[ -n $old ]]; then
  cases+=(small_old loop_old loop600_old)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # The subset had no os module: the step count is written into the file.
  for steps in 100 600; do
    sed -e '/^import os$/d' -e "s/int(os.environ.get('STEPS', '100'))/$steps/" "$here/training_loop.py" \
      >"$work/loop$steps.py"
  done
fi
for ((r = 0; r < reps; r++)); do
  runs[numpy]+="$(seconds /usr/bin/python3 -c 'import numpy')"$'\n'
  runs[small_spmd_run]+="$(seconds "$spmd" run --devices 8 "$here/small.py")"$'\n'
  runs[loop_spmd_run]+="$(seconds "$spmd" run --devices 8 "$here/training_loop.py")"$'\n'
  runs[loop_python3]+="$(seconds env PYTHONPATH="$src:$build/python" XLA_FLAGS=--xla_force_host_platform_device_count=8 \
    /usr/bin/python3 "$here/training_loop.py")"$'\n'
  runs[loop600_spmd_run]+="$(seconds env STEPS=600 "$spmd" run --devices 8 "$here/training_loop.py")"$'\n'
  if [[ -n $old ]]; then
    runs[small_old]+="$(seconds "$old" run --frontend scenario --devices 8 "$here/small.py")"$'\n'
    runs[loop_old]+="$(seconds "$old" run --frontend scenario --devices 8 "$work/loop100.py")"$'\n'
    runs[loop600_old]+="$(seconds "$old" run --frontend scenario --devices 8 "$work/loop600.py")"$'\n'
  fi
done
for c in "${cases[@]}"; do
  printf '%-16s median %s s over %d runs\n' "$c" "$(printf '%s' "${runs[$c]}" | median)" "$reps"
done
per_step=$(echo "($(printf '%s' "${runs[loop600_spmd_run]}" | median) - $(printf '%s' "${runs[loop_spmd_run]}" | median)) / 500 * 1000" | bc -l)
printf 'one step (steady state, spmd run): %.3f ms\n' "$per_step"
if [[ -n $old ]]; then
  per_step=$(echo "($(printf '%s' "${runs[loop600_old]}" | median) - $(printf '%s' "${runs[loop_old]}" | median)) / 500 * 1000" | bc -l)
  printf 'one step (steady state, the deleted interpreter): %.3f ms\n' "$per_step"
fi
