#!/usr/bin/env bash
# Compute speed against numpy (issue 17), side by side in one run: medians of
# REPS runs each, alternating spmd and numpy, of
#   - mlp.py: 100 data-parallel MLP training steps on 8 devices (batch 64,
#     two 256x256 layers, jax.grad, pmean) against the same per-device work
#     in numpy (mlp_numpy.py), with --threads 1 and 2;
#   - chain.py: 20 elementwise ops over 8 x 1M float32, 10 times, against
#     numpy doing one op at a time (chain_numpy.py), with --threads 1 and 2;
#   - matmul.py: a 1024^3 float32 matmul on one device, GFLOP/s, with
#     --threads 1 and 2 against numpy on OpenBLAS with 1 and 2 threads.
# --threads T is T cores (fibers and kernels), so the 1-thread figures are
# one core against one core.
# Each program times its own loop (after a warm-up), so start-up is not counted.
#
#   tools/bench/compute/run.sh [BUILD_DIR]     # default ./build; REPS=5
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
spmd=$build/bin/spmd
reps=${REPS:-5}
py=/usr/bin/python3

field() { awk -v k="$1" '{for (i = 1; i < NF; ++i) if ($i == k) print $(i + 1)}'; }
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.4g", m}'; }

declare -A runs
cases=(mlp_spmd_t1 mlp_spmd_t2 mlp_numpy chain_spmd_t1 chain_spmd_t2 chain_numpy matmul_spmd_t1 matmul_spmd_t2
       matmul_numpy_t1 matmul_numpy_t2)
for ((r = 0; r < reps; r++)); do
  runs[mlp_spmd_t1]+="$("$spmd" run --devices 8 --threads 1 "$here/mlp.py" 2>/dev/null | field seconds)"$'\n'
  runs[mlp_spmd_t2]+="$("$spmd" run --devices 8 --threads 2 "$here/mlp.py" 2>/dev/null | field seconds)"$'\n'
  runs[mlp_numpy]+="$(OPENBLAS_NUM_THREADS=1 $py "$here/mlp_numpy.py" | field seconds)"$'\n'
  runs[chain_spmd_t1]+="$("$spmd" run --devices 8 --threads 1 "$here/chain.py" 2>/dev/null | field seconds)"$'\n'
  runs[chain_spmd_t2]+="$("$spmd" run --devices 8 --threads 2 "$here/chain.py" 2>/dev/null | field seconds)"$'\n'
  runs[chain_numpy]+="$(OPENBLAS_NUM_THREADS=1 $py "$here/chain_numpy.py" | field seconds)"$'\n'
  runs[matmul_spmd_t1]+="$("$spmd" run --devices 1 --threads 1 "$here/matmul.py" 2>/dev/null | field gflops)"$'\n'
  runs[matmul_spmd_t2]+="$("$spmd" run --devices 1 --threads 2 "$here/matmul.py" 2>/dev/null | field gflops)"$'\n'
  runs[matmul_numpy_t1]+="$(OPENBLAS_NUM_THREADS=1 $py "$here/matmul_numpy.py" | field gflops)"$'\n'
  runs[matmul_numpy_t2]+="$(OPENBLAS_NUM_THREADS=2 $py "$here/matmul_numpy.py" | field gflops)"$'\n'
done
declare -A med
for c in "${cases[@]}"; do med[$c]=$(printf '%s' "${runs[$c]}" | median); done
ratio() { echo "$1 / $2" | bc -l | xargs printf '%.2f'; }
printf 'MLP, 100 steps, 8 devices:   spmd --threads 1 %s s, --threads 2 %s s; numpy %s s  (%sx, %sx numpy)\n' \
  "${med[mlp_spmd_t1]}" "${med[mlp_spmd_t2]}" "${med[mlp_numpy]}" \
  "$(ratio "${med[mlp_spmd_t1]}" "${med[mlp_numpy]}")" "$(ratio "${med[mlp_spmd_t2]}" "${med[mlp_numpy]}")"
printf 'elementwise chain, 10 x 20 ops over 8 x 1M f32: spmd --threads 1 %s s, --threads 2 %s s; numpy %s s  (%sx, %sx numpy)\n' \
  "${med[chain_spmd_t1]}" "${med[chain_spmd_t2]}" "${med[chain_numpy]}" \
  "$(ratio "${med[chain_spmd_t1]}" "${med[chain_numpy]}")" "$(ratio "${med[chain_spmd_t2]}" "${med[chain_numpy]}")"
printf 'matmul 1024^3 f32: spmd --threads 1 %s, --threads 2 %s GFLOP/s; numpy 1 thread %s, 2 threads %s GFLOP/s  (%s, %s of numpy)\n' \
  "${med[matmul_spmd_t1]}" "${med[matmul_spmd_t2]}" "${med[matmul_numpy_t1]}" "${med[matmul_numpy_t2]}" \
  "$(ratio "${med[matmul_spmd_t1]}" "${med[matmul_numpy_t1]}")" "$(ratio "${med[matmul_spmd_t2]}" "${med[matmul_numpy_t2]}")"
printf '(medians of %d runs each, alternated)\n' "$reps"
