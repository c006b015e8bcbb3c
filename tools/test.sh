#!/usr/bin/env bash
# Fresh machine -> all tests: installs what is missing (Debian packages, and
# the test venv from PyPI: flax, optax, ..., real JAX as the oracle), builds,
# runs ctest (unit tests, every scenario, the ecosystem scenarios and the
# conformance checks against real JAX in that venv).
#   SPMD_TEST_VENV=DIR  the venv (default build/venv); SPMD_TEST_VENV=none skips it and its tests
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
build_dir=${BUILD_DIR:-build}
venv=${SPMD_TEST_VENV:-$build_dir/venv}
if [[ "$venv" != none ]]; then
  tools/test_venv.sh "$venv"
  tools/build.sh -DSPMD_TEST_VENV="$(realpath "$venv")"
else
  tools/build.sh -DSPMD_TEST_VENV=
fi
cd "$build_dir"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600
