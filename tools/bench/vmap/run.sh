#!/usr/bin/env bash
# vmap against batched code (issue 34), side by side in one run:
#   - vmap_vs_batched.py under `spmd run`: an MLP per-example gradient and a
#     convolution written with vmap, each against the same function written
#     batched by hand, at batch sizes 16, 256 and 4096 (median ms per call
#     under jax.jit, the ratio, the jaxpr's equation count and trace time);
#   - per_example_numpy.py: numpy computing the same per-example gradients
#     with batched einsum (Debian's python3 and numpy on OpenBLAS), for the
#     ratio against the vmap row.
#
#   tools/bench/vmap/run.sh [BUILD_DIR]      # default ./build; BATCHES=16,256,4096 REPS=...
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
export BATCHES=${BATCHES:-16,256,4096}
"$build/bin/spmd" run "$here/vmap_vs_batched.py" 2>/dev/null
echo
echo '| peer | batch | median per call |'
echo '| --- | --- | --- |'
OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2} /usr/bin/python3 "$here/per_example_numpy.py"
