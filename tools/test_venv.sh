#!/usr/bin/env bash
# Makes the test venv: Debian's python3 (the Python `spmd` embeds) with the
# packages pinned in tests/requirements.txt from PyPI (flax, optax, chex,
# equinox, einops, numpy 2 and real JAX as the reference). Does nothing when
# the venv already holds exactly those pins.
#   tools/test_venv.sh [DIR]     default: $SPMD_TEST_VENV, else build/venv
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-${SPMD_TEST_VENV:-${BUILD_DIR:-build}/venv}}"
requirements=tests/requirements.txt
stamp="$venv/.spmd-requirements"
if [[ -x "$venv/bin/python" ]] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
echo "spmdsim: making the test venv $venv (pip install -r $requirements)" >&2
/usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
