#!/usr/bin/env bash
# Installs the Debian packages spmdsim needs, if any is missing.
#   tools/install_deps.sh            build + test dependencies
#   tools/install_deps.sh --sanitizers  also clang and its runtimes (sanitizers, libFuzzer)
#   tools/install_deps.sh --extra    also Open MPI (benchmark peer) and clang
set -euo pipefail

packages=(build-essential cmake libtbb-dev libboost-fiber-dev libboost-context-dev libcli11-dev libspdlog-dev catch2
          libpython3-dev pybind11-dev python3-numpy python3-pytest python3-venv libopenblas-openmp-dev)
case "${1:-}" in
  --sanitizers) packages+=(clang libclang-rt-dev) ;;
  --extra) packages+=(openmpi-bin libopenmpi-dev clang libclang-rt-dev) ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "spmdsim: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
