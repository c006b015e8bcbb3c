#!/usr/bin/env bash
# spmdsim's jax against real JAX with the ecosystem (issue 31), side by side
# in one run, in the test venv (tools/test_venv.sh): medians of REPS
# alternating runs of
#   - `import optax, flax.linen` (goal: spmdsim within 1.2x of real JAX);
#   - a flax + optax data-parallel MLP step on 8 devices (flax_mlp_step.py):
#     spmdsim under `spmd run` against real JAX on XLA:CPU with 8 host devices.
#   tools/bench/ecosystem/run.sh [BUILD_DIR] [VENV]   # defaults ./build, BUILD_DIR/venv; REPS=5
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
venv=${2:-$build/venv}
src=$(cd "$here/../../../src/python" && pwd)
reps=${REPS:-5}
py=$venv/bin/python

seconds() {
  local t0 t1
  t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

spmd_import=(); jax_import=(); spmd_step=(); jax_step=()
for ((i = 0; i < reps; i++)); do
  spmd_import+=("$(seconds env PYTHONPATH="$src:$build/python" "$py" -c 'import optax, flax.linen')")
  jax_import+=("$(seconds env -u PYTHONPATH "$py" -c 'import optax, flax.linen')")
  spmd_step+=("$(VIRTUAL_ENV=$venv "$build/bin/spmd" run "$here/flax_mlp_step.py" 2>/dev/null | cut -d' ' -f1)")
  # XLA:CPU's 8 host devices share the machine's cores; on 2 cores its all-reduce rendezvous can starve
  # and abort the process after 40 s: such a run counts as "aborted", not as a time.
  out=$(env -u PYTHONPATH XLA_FLAGS=--xla_force_host_platform_device_count=8 timeout 120 "$py" \
        "$here/flax_mlp_step.py" 2>/dev/null | cut -d' ' -f1) || true
  if [[ "$out" =~ ^[0-9.]+$ ]]; then jax_step+=("$out"); else jax_aborted=$((${jax_aborted:-0} + 1)); fi
done
si=$(printf '%s\n' "${spmd_import[@]}" | median); ji=$(printf '%s\n' "${jax_import[@]}" | median)
ss=$(printf '%s\n' "${spmd_step[@]}" | median)
printf 'import optax, flax.linen   spmdsim %.3f s   real JAX %.3f s   ratio %.2f (goal <= 1.2)\n' "$si" "$ji" \
  "$(echo "$si / $ji" | bc -l)"
if ((${#jax_step[@]} > 0)); then
  js=$(printf '%s\n' "${jax_step[@]}" | median)
  printf 'flax MLP step, 8 devices  spmdsim %.3f ms  real JAX (XLA:CPU) %.3f ms  ratio %.2f' "$ss" "$js" \
    "$(echo "$ss / $js" | bc -l)"
else
  printf 'flax MLP step, 8 devices  spmdsim %.3f ms  real JAX (XLA:CPU): no run finished' "$ss"
fi
echo "  (real JAX aborted by XLA's rendezvous timeout in ${jax_aborted:-0} of $reps runs)"
