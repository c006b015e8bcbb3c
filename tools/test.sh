#!/usr/bin/env bash
# Fresh machine -> all tests: installs what is missing, builds, runs ctest
# (unit tests and every scenario under scenarios/).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600
