#!/usr/bin/env bash
# Fresh machine -> the main job: installs what is missing, builds, and runs a
# scenario whose devices deadlock, showing spmdsim's deadlock report.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh
scenario=${1:-scenarios/deadlock/skip_psum_under_cond.py}
echo "== spmd run $scenario"
set +e
build/bin/spmd run "$scenario"
code=$?
set -e
echo "== exit code $code (3 = deadlock detected)"
