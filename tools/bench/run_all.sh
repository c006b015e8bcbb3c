#!/usr/bin/env bash
# Builds and runs the spmdsim collective benchmark and its Open MPI peer with
# the same sizes, then prints spmdsim psum vs MPI_Allreduce.
#
#   tools/bench/run_all.sh [BUILD_DIR]        # a configured build dir, default ./build
#
# Environment (all optional):
#   DEVICES=8,64,1024,8192   device counts of the spmdsim cases
#   SIZES=1K,1M,64M          bytes per device
#   MPI_NP="8 64"            MPI process counts (1024+ are skipped: see below)
#   BENCH_ARGS="..."         extra flags for spmd_bench_collectives (see --help)
#   OUT=DIR                  where the text/CSV/JSON results go (default BUILD_DIR/bench-results)
#   QUICK=1                  a smoke run (8/64 devices, 1K/64K, few repetitions, 8 MPI ranks), about a minute
#   JOBS=2                   build parallelism
# The full run takes about 10 minutes on a 2-core machine; most of it is the
# 64 MiB cases, which run with the minimum of 3 repetitions.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=${OUT:-$build/bench-results}
mkdir -p "$out"

if [[ "${QUICK:-0}" == 1 ]]; then
  DEVICES=${DEVICES:-8,64}
  SIZES=${SIZES:-1K,64K}
  MPI_NP=${MPI_NP:-8}
  BENCH_ARGS="${BENCH_ARGS:-} --reps 3 --target-ms 20 --create-devices 10000 --memcpy-size 64M"
  MPI_ARGS="--reps 3 --target-ms 20"
else
  DEVICES=${DEVICES:-8,64,1024,8192}
  SIZES=${SIZES:-1K,1M,64M}
  MPI_NP=${MPI_NP:-8 64}
  BENCH_ARGS=${BENCH_ARGS:-}
  MPI_ARGS=""
fi

echo "== build ($build)"
targets=(spmd_bench_collectives)
have_mpi=0
target_list=$(cmake --build "$build" --target help 2>/dev/null || true)
if [[ $target_list == *spmd_bench_mpi_allreduce* ]]; then
  targets+=(spmd_bench_mpi_allreduce)
  have_mpi=1
fi
cmake --build "$build" -j "${JOBS:-2}" --target "${targets[@]}"
bench=$build/bin/spmd_bench_collectives
mpi_bench=$build/bin/spmd_bench_mpi_allreduce

echo
echo "== machine"
echo "cpus: $(nproc)   memory: $(free -h | awk '/^Mem:/ {print $2 " total, " $7 " available"}')   load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

echo
echo "== spmdsim: $bench --devices $DEVICES --sizes $SIZES $BENCH_ARGS"
# shellcheck disable=SC2086
"$bench" --devices "$DEVICES" --sizes "$SIZES" $BENCH_ARGS --csv "$out/spmd.csv" --json "$out/spmd.json" |
  tee "$out/spmd.txt"

# --- the Open MPI peer ---------------------------------------------------------
: >"$out/mpi.csv"
if [[ $have_mpi == 0 ]]; then
  echo
  echo "== MPI: not found at configure time (no spmd_bench_mpi_allreduce); comparison skipped"
else
  mpirun_flags=(--oversubscribe)
  [[ $(id -u) == 0 ]] && mpirun_flags+=(--allow-run-as-root)
  avail=$(awk '/^MemAvailable:/ {print $2 * 1024}' /proc/meminfo)
  for np in $MPI_NP; do
    echo
    if ((np > 256)); then
      echo "== MPI np=$np: skipped: $np Open MPI processes on $(nproc) cores (each rank is a whole process with" \
        "its own MPI runtime, tens of MiB RSS, and shared-memory segments to every peer) do not fit this machine"
      continue
    fi
    # Keep only the sizes whose 2 buffers per rank fit in 60% of the available memory.
    fit=""
    for s in ${SIZES//,/ }; do
      bytes=$(awk -v s="$s" 'BEGIN { n = s + 0; u = toupper(s); sub(/^[0-9.]+/, "", u); sub(/I?B$/, "", u);
        m = (u == "K") ? 1024 : (u == "M") ? 1048576 : (u == "G") ? 1073741824 : 1; printf "%d", n * m }')
      if awk -v b="$bytes" -v np="$np" -v a="$avail" 'BEGIN { exit !(2 * b * np <= 0.6 * a) }'; then
        fit+="${fit:+,}$s"
      else
        echo "MPI np=$np size $s: skipped: needs $((2 * bytes * np / 1048576)) MiB of buffers"
      fi
    done
    [[ -z $fit ]] && continue
    echo "== MPI np=$np: mpirun ${mpirun_flags[*]} -np $np $mpi_bench --sizes $fit $MPI_ARGS"
    # shellcheck disable=SC2086
    if ! timeout 600 mpirun "${mpirun_flags[@]}" -np "$np" "$mpi_bench" --sizes "$fit" $MPI_ARGS \
      --csv "$out/mpi_$np.csv" | tee "$out/mpi_$np.txt"; then
      echo "MPI np=$np failed or timed out"
      continue
    fi
    if [[ -s $out/mpi.csv ]]; then tail -n +2 "$out/mpi_$np.csv" >>"$out/mpi.csv"; else cat "$out/mpi_$np.csv" >"$out/mpi.csv"; fi
  done
fi

# --- comparison ------------------------------------------------------------------
echo
echo "== psum (spmdsim, N virtual devices in one process) vs MPI_Allreduce (Open MPI, N processes)"
awk -F, '
  function size(b) { return b >= 1048576 ? sprintf("%g MiB", b / 1048576) : b >= 1024 ? sprintf("%g KiB", b / 1024) : b " B" }
  function t(s) { return s < 1e-3 ? sprintf("%.2f us", s * 1e6) : s < 1 ? sprintf("%.2f ms", s * 1e3) : sprintf("%.3f s", s) }
  FNR == 1 { file++; next }
  file == 1 && $1 == "psum" && $4 == 1 && $14 == "" { spmd[$2 "," $3] = $7 }
  file == 2 { mpi[$2 "," $3] = $6; keys[++n] = $2 "," $3 }
  END {
    printf "%8s %9s %14s %14s %16s\n", "N", "size", "spmdsim psum", "MPI_Allreduce", "MPI / spmdsim"
    if (n == 0) print "(no MPI results)"
    for (i = 1; i <= n; i++) {
      split(keys[i], k, ",")
      if (!(keys[i] in spmd)) { printf "%8d %9s %14s %14s %16s\n", k[1], size(k[2]), "-", t(mpi[keys[i]]), "(no spmdsim run)"; continue }
      r = mpi[keys[i]] / spmd[keys[i]]
      printf "%8d %9s %14s %14s %8.2fx %s\n", k[1], size(k[2]), t(spmd[keys[i]]), t(mpi[keys[i]]), r,
             (r >= 1 ? "spmdsim faster" : "MPI faster")
    }
  }' "$out/spmd.csv" "$out/mpi.csv" | tee "$out/compare.txt"
echo
echo "results: $out/{spmd.txt,spmd.csv,spmd.json,mpi_*.txt,mpi.csv,compare.txt}"
