#!/usr/bin/env bash
# tools/fuzz.sh [SECONDS]: builds the libFuzzer targets (clang, ASan + UBSan,
# -DSPMD_FUZZ=ON) and runs each one for SECONDS (default 60) on a seed corpus:
# the scenarios under scenarios/ (headers), traces recorded from them with
# `spmd run --trace` and tests/fuzz/regressions/*.jsonl, and for the program
# runner the byte strings of the checked-in corpus tests/fuzz/program/. Fails when a target finds a
# crash, a sanitizer report, an uncaught exception, an input that runs past
# -timeout (a hang) or past -rss_limit_mb.
#
#   BUILD_DIR  build directory (default build-asan, shared with tools/sanitize.sh asan)
#   JOBS       parallel compile jobs (default: nproc)
#   TARGETS    which targets to run (default: "program trace header join options diagnose")
#   FUZZ_SEED  libFuzzer seed (default 1, so a CI run is repeatable; 0 = random)
#
# A finding is written to $BUILD_DIR/fuzz-artifacts/; reproduce it with
#   $BUILD_DIR/bin/spmd_fuzz_program FILE
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
build_dir=${BUILD_DIR:-build-asan}
jobs=${JOBS:-$(nproc)}
targets=${TARGETS:-program trace header join options diagnose}

start=$(date +%s)
# The configuration of `tools/sanitize.sh asan` (whose build carries the fuzz
# targets): after it, nothing needs rebuilding.
source tools/sanitizer_config.sh
sanitizer_configure asan "$build_dir"
build_targets=(spmd_bin)
for t in $targets; do build_targets+=("spmd_fuzz_$t"); done
cmake --build "$build_dir" -j "$jobs" --target "${build_targets[@]}"
built=$(date +%s)

export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=0:allocator_may_return_null=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# Seed corpora (rebuilt each time from the sources; new inputs accumulate in $work).
seeds=$build_dir/fuzz-seeds
work=$build_dir/fuzz-corpus
artifacts=$build_dir/fuzz-artifacts
rm -rf "$seeds"
mkdir -p "$seeds/scenario" "$seeds/trace" "$work" "$artifacts"
mapfile -t sources < <(find scenarios -name '*.py' | sort)
for f in "${sources[@]}"; do
  name=$(echo "$f" | tr '/' '_')
  cp "$f" "$seeds/scenario/$name"
  # A trace of every scenario, whatever its verdict (errors and deadlocks make the best seeds).
  "$build_dir/bin/spmd" run "$f" --deterministic --trace "$seeds/trace/${name%.py}.jsonl" \
    --max-steps 1000000 </dev/null >/dev/null 2>&1 || true
done
if compgen -G "tests/fuzz/regressions/*.jsonl" >/dev/null; then cp tests/fuzz/regressions/*.jsonl "$seeds/trace/"; fi
# spmd diagnose's fixtures, one seed per case: a mode byte (0 NCCL logs, 1
# flight-recorder dumps), then the case's files joined by "\n@@\n".
mkdir -p "$seeds/diagnose"
for case in tests/fixtures/diagnose/*; do
  [[ $case == *.py ]] && continue
  name=$(basename "$case")
  if [[ -d $case ]]; then mapfile -t files < <(find "$case" -type f | sort); else files=("$case"); fi
  if [[ $name == fr_* ]]; then mode='\001'; else mode='\000'; fi
  {
    printf "$mode"
    for k in "${!files[@]}"; do
      ((k > 0)) && printf '\n@@\n'
      cat "${files[$k]}"
    done
  } >"$seeds/diagnose/$name"
done

failed=()
for t in $targets; do
  case $t in
    program) corpus_seeds=tests/fuzz/program; dict=() ;;
    header) corpus_seeds=$seeds/scenario; dict=(-dict=tests/fuzz/header.dict) ;;
    trace) corpus_seeds=$seeds/trace; dict=(-dict=tests/fuzz/trace.dict) ;;
    join) corpus_seeds=tests/fuzz/join; dict=(-dict=tests/fuzz/join.dict) ;;
    options) corpus_seeds=tests/fuzz/options; dict=() ;;
    diagnose) corpus_seeds=$seeds/diagnose; dict=(-dict=tests/fuzz/diagnose.dict) ;;
    *) echo "fuzz.sh: unknown target '$t'" >&2; exit 2 ;;
  esac
  mkdir -p "$work/$t"
  echo "== spmd_fuzz_$t: ${seconds} s"
  if ! "$build_dir/bin/spmd_fuzz_$t" "$work/$t" "$corpus_seeds" "${dict[@]}" \
      -max_total_time="$seconds" -seed="${FUZZ_SEED:-1}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -artifact_prefix="$artifacts/$t-" -print_final_stats=1 2>"$build_dir/fuzz-$t.log"; then
    failed+=("$t")
    tail -n 60 "$build_dir/fuzz-$t.log"
  else
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ *DONE)" "$build_dir/fuzz-$t.log" || true
  fi
done
done_at=$(date +%s)
echo "fuzz.sh: build $((built - start)) s, fuzzing $((done_at - built)) s"
if ((${#failed[@]})); then
  echo "fuzz.sh: findings in: ${failed[*]} (inputs under $artifacts/, logs $build_dir/fuzz-*.log)" >&2
  exit 1
fi
echo "fuzz.sh: no findings"
