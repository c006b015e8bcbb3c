#!/usr/bin/env bash
# The cuda backend's checks on a GPU machine, in one go (< 8 minutes on one H200):
#   1. build with -DSPMD_CUDA=ON (-j16), or use binaries prepared elsewhere (below);
#   2. the CPU-side backend tests and the GPU tests (tests/cuda: every array op
#      and collective against the host/simulator, memory limits, detection,
#      traces; the watchdog and a faulting kernel in their own process);
#   3. every scenario under scenarios/ with `spmd run --backend cuda` and
#      `--backend sim`, comparing stdout, exit code and report exactly;
#   4. psum / all_gather bandwidth against a device-to-device memcpy probe;
#   5. a summary of what was and was not verified.
# Results go to $OUT when it is set (else ./gpu-check-out): summary.txt,
# bench.json and logs.txt (every step's log, each cut to its last 2 MiB):
# three files, as the device tool brings back at most eight.
#
# One GPU: NCCL refuses two ranks on one GPU, so NCCL runs with 1 rank there
# (--devices 1) and the multi-device runs (8 devices on the one GPU) move
# collective data with the copy transport; the summary says so.
#
# Machines without the build dependencies (Boost.Fiber, oneTBB, spdlog,
# CLI11, Catch2), e.g. a bare GPU image with no package access: prepare the
# binaries on a machine that has them (nvcc and NCCL too, no GPU needed):
#   tools/gpu-check.sh prepare          # -> build-gpu-bundle/bundle (git-ignored)
# and carry build-gpu-bundle/bundle to the GPU machine (the device tool's
# `carry`); this script then uses it instead of building.
#
# Environment: BUILD_DIR (default build-gpu-check), JOBS (default 16),
# GPU_CHECK_SKIP_BUILD=1 (use the existing BUILD_DIR).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
START=$SECONDS

# ---------------------------------------------------------------------------
if [[ "${1:-}" == "prepare" ]]; then
  set -e
  BDIR=${BUILD_DIR:-build-gpu-bundle}
  cmake -S . -B "$BDIR" -DCMAKE_BUILD_TYPE=Release -DSPMD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build "$BDIR" -j "${JOBS:-$(nproc)}" --target spmd_bin test_cuda_cpu test_cuda_gpu spmd_cuda_bench
  B="$BDIR/bundle"
  rm -rf "$B"
  mkdir -p "$B/bin" "$B/lib"
  cp "$BDIR/bin/spmd" "$BDIR/tests/cuda/test_cuda_cpu" "$BDIR/tests/cuda/test_cuda_gpu" \
     "$BDIR/tests/cuda/spmd_cuda_bench" "$B/bin/"
  strip "$B/bin/"* || true
  # The shared libraries the binaries need beyond the C/C++ runtime and the
  # GPU driver (Boost, TBB, spdlog, fmt, NCCL).
  for f in "$B/bin/"*; do
    ldd "$f" | awk '/=> \// {print $3}'
  done | sort -u | grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*|libcuda)\.so' |
    while read -r lib; do cp -L "$lib" "$B/lib/"; done
  du -sh "$B"
  echo "prepared $B: carry it to the GPU machine and run tools/gpu-check.sh there"
  exit 0
fi

# ---------------------------------------------------------------------------
OUTDIR=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUTDIR"
LOGS=$(mktemp -d)
SUMMARY="$OUTDIR/summary.txt"
: >"$SUMMARY"
FAILED=0
note() { echo "$*" | tee -a "$SUMMARY"; }
elapsed() { echo $((SECONDS - START)); }
: >"$OUTDIR/logs.txt"
keep_log() { { echo "===== $2"; tail -c 2000000 "$1"; echo; } >>"$OUTDIR/logs.txt"; }

note "gpu-check $(date -u +%FT%TZ) on $(hostname)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L 2>&1 | tee -a "$SUMMARY"
fi

BUNDLE=$ROOT/build-gpu-bundle/bundle
if [[ -x "$BUNDLE/bin/spmd" ]]; then
  BIN=$BUNDLE/bin
  export LD_LIBRARY_PATH="$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  SPMD=$BIN/spmd
  TEST_CPU=$BIN/test_cuda_cpu
  TEST_GPU=$BIN/test_cuda_gpu
  BENCH=$BIN/spmd_cuda_bench
  note "binaries: prepared bundle ($BUNDLE)"
else
  BDIR=${BUILD_DIR:-build-gpu-check}
  if [[ "${GPU_CHECK_SKIP_BUILD:-0}" != 1 ]]; then
    GEN=()
    command -v ninja >/dev/null && GEN=(-G Ninja)
    if ! cmake -S . -B "$BDIR" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DSPMD_CUDA=ON >"$LOGS/configure.log" 2>&1; then
      keep_log "$LOGS/configure.log" configure.log
      note "FAILED: configure (see logs.txt). Without Boost.Fiber/TBB/spdlog/CLI11/Catch2 here, run"
      note "        'tools/gpu-check.sh prepare' on a machine that has them and carry build-gpu-bundle/bundle."
      exit 1
    fi
    if ! cmake --build "$BDIR" -j "${JOBS:-16}" --target spmd_bin test_cuda_cpu test_cuda_gpu spmd_cuda_bench \
        >"$LOGS/build.log" 2>&1; then
      keep_log "$LOGS/build.log" build.log
      note "FAILED: build (see logs.txt)"
      exit 1
    fi
    note "built in $(elapsed) s ($BDIR)"
  fi
  SPMD=$BDIR/bin/spmd
  TEST_CPU=$BDIR/tests/cuda/test_cuda_cpu
  TEST_GPU=$BDIR/tests/cuda/test_cuda_gpu
  BENCH=$BDIR/tests/cuda/spmd_cuda_bench
fi

GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [[ "${GPUS:-0}" == 0 ]]; then
  # No nvidia-smi: ask the test binary (it prints one line per GPU).
  GPUS=$("$TEST_GPU" --list-tests 2>/dev/null | grep -c '^GPU [0-9]*:' || true)
fi
note "GPUs: ${GPUS:-0}"

# --- tests ---------------------------------------------------------------------
run_step() {  # name timeout command...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  grep -E '^(verified|not verified):' "$LOGS/$name.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  if [[ $rc == 0 ]]; then
    note "ok: $name ($((SECONDS - t0)) s)"
  elif [[ $rc == 77 ]]; then
    note "SKIPPED: $name (no CUDA device)"
  else
    note "FAILED: $name (exit $rc, $((SECONDS - t0)) s; its log is in logs.txt)"
    FAILED=1
  fi
  keep_log "$LOGS/$name.log" "$name.log"
  return $rc
}

run_step cuda-cpu-tests 120 "$TEST_CPU"
run_step cuda-gpu-tests 300 "$TEST_GPU" "~[fault]"
GPU_RC=$?
if [[ $GPU_RC == 77 ]]; then
  note "not verified: anything on a GPU (none usable here)"
  exit 1
fi
run_step cuda-fault-tests 120 "$TEST_GPU" "[fault]"

# --- scenarios: cuda against sim ------------------------------------------------
compare_scenarios() {  # label devices-args env-assignments...
  local label=$1 devices=$2
  shift 2
  local same=0 differ=0 list=""
  local report="$LOGS/scenarios-$label.log"
  : >"$report"
  while IFS= read -r f; do
    local a b
    a=$(mktemp -d)
    b=$(mktemp -d)
    # shellcheck disable=SC2086
    timeout 120 "$SPMD" run "$f" --backend sim $devices </dev/null >"$a/out" 2>"$a/err"
    echo $? >"$a/rc"
    # shellcheck disable=SC2086
    env "$@" timeout 120 "$SPMD" run "$f" --backend cuda $devices --watchdog-seconds 60 </dev/null >"$b/out" 2>"$b/err"
    echo $? >"$b/rc"
    for d in "$a" "$b"; do grep -v -e 'spmd run ' -e '--backend' "$d/err" >"$d/err.norm"; done
    if cmp -s "$a/out" "$b/out" && cmp -s "$a/rc" "$b/rc" && cmp -s "$a/err.norm" "$b/err.norm"; then
      same=$((same + 1))
    else
      differ=$((differ + 1))
      list="$list $f"
      {
        echo "=== $f: exit sim $(cat "$a/rc") cuda $(cat "$b/rc")"
        diff "$a/out" "$b/out" | head -40
        diff "$a/err.norm" "$b/err.norm" | head -40
      } >>"$report"
    fi
    rm -rf "$a" "$b"
  done < <(find scenarios -name '*.py' | sort)
  note "  scenarios ($label): $same identical on cuda and sim, $differ differ${list:+:$list}"
  [[ $differ == 0 ]] && note "verified: scenarios ($label) give the simulator's output and verdict on the cuda backend"
  keep_log "$report" "scenarios-$label.log"
  [[ $differ == 0 ]] || FAILED=1
}

t0=$SECONDS
compare_scenarios "header-devices" "" SPMD_CUDA_TRANSPORT=auto
compare_scenarios "nccl-1-rank" "--devices 1" SPMD_CUDA_TRANSPORT=nccl
if [[ "${GPUS:-0}" -ge 2 ]]; then
  n=$((GPUS < 8 ? GPUS : 8))
  compare_scenarios "nccl-$n-ranks" "--devices $n" SPMD_CUDA_TRANSPORT=nccl
else
  note "not verified: scenarios with NCCL across GPUs (one GPU: NCCL ran with 1 rank; 8-device runs used the copy transport)"
fi
note "ok: scenarios ($((SECONDS - t0)) s)"

# --- NCCL across processes (--process-devices local) ---------------------------
# Two processes started by spmd's launcher, which gives each its own GPU
# (CUDA_VISIBLE_DEVICES), against the simulator's one-process output of the
# same scenario. NCCL refuses two ranks on one GPU, so this needs two GPUs.
if [[ "${GPUS:-0}" -ge 2 ]]; then
  f=scenarios/multiprocess/local_devices_collectives.py
  timeout 180 "$SPMD" run "$f" --backend cuda --devices 2 --num-processes 2 --process-devices local \
    --watchdog-seconds 60 </dev/null >"$LOGS/xproc.out" 2>"$LOGS/xproc.err"
  for r in 0 1; do sed -n "s/^\[process $r\] //p" "$LOGS/xproc.out"; done >"$LOGS/xproc.ranks"
  timeout 120 "$SPMD" run "$f" --backend sim --devices 2 --num-processes 1 </dev/null >"$LOGS/xproc.sim" 2>/dev/null
  if [[ -s "$LOGS/xproc.sim" ]] && cmp -s "$LOGS/xproc.ranks" "$LOGS/xproc.sim"; then
    note "verified: NCCL across 2 processes (ncclCommInitRank, id through the store) gives the simulator's values"
  else
    note "FAILED: NCCL across 2 processes differs from the simulator (logs: xproc.*)"
    for x in "$LOGS"/xproc.*; do keep_log "$x" "$(basename "$x")"; done
    FAILED=1
  fi
else
  note "not verified: NCCL across processes (needs 2 GPUs: NCCL refuses two ranks on one GPU)"
fi

# --- bandwidth ------------------------------------------------------------------
if [[ "${GPUS:-0}" -ge 2 ]]; then
  n=$((GPUS < 8 ? GPUS : 8))
  run_step bench-nccl 120 "$BENCH" --devices "$n" --transport nccl --json "$LOGS/bench-nccl.json"
else
  run_step bench-nccl-1-rank 120 "$BENCH" --devices 1 --transport nccl --json "$LOGS/bench-nccl-1.json"
  run_step bench-copy-4-devices 120 "$BENCH" --devices 4 --transport copy --max-mib 64 \
    --json "$LOGS/bench-copy-4.json"
fi
{
  echo "["
  first=1
  for j in "$LOGS"/bench-*.json; do
    [[ -f "$j" ]] || continue
    [[ $first == 1 ]] || echo ","
    first=0
    cat "$j"
  done
  echo "]"
} >"$OUTDIR/bench.json"
grep -h -E 'memcpy probe|GB/s' "$LOGS"/bench-*.log 2>/dev/null | sed 's/^/  /' | tee -a "$SUMMARY"

note ""
note "not verified anywhere by this script: NCCL between hosts (only between processes of this host)"
note "total $(elapsed) s; $([[ $FAILED == 0 ]] && echo 'all checks passed' || echo 'SOME CHECKS FAILED')"
rm -rf "$LOGS"
exit $FAILED
