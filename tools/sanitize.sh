#!/usr/bin/env bash
# tools/sanitize.sh asan|tsan: builds everything ctest runs under
# AddressSanitizer + UndefinedBehaviorSanitizer (asan) or ThreadSanitizer
# (tsan), then runs ctest. Any sanitizer report fails the test that made it.
#
#   BUILD_DIR  build directory (default build-asan / build-tsan)
#   JOBS       parallel compile and test jobs (default: nproc)
#   CTEST_ARGS extra ctest arguments, e.g. "-R test_runtime"
#
# Sanitizer options are set here, and the suppression files live in
# tests/sanitizers/ (see the README there for why each entry exists).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mode=${1:-}
jobs=${JOBS:-$(nproc)}
case "$mode" in
  asan)
    sanitize=address,undefined
    build_dir=${BUILD_DIR:-build-asan}
    # detect_stack_use_after_return stays off: fibers switch stacks without
    # ASan's fake-stack annotations (Debian's Boost.Context uses fcontext).
    export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=0:strict_init_order=1:abort_on_error=0:halt_on_error=1:print_summary=1:allow_user_segv_handler=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    ;;
  tsan)
    sanitize=thread
    build_dir=${BUILD_DIR:-build-tsan}
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:suppressions=$root/tests/sanitizers/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    ;;
  *)
    echo "usage: tools/sanitize.sh asan|tsan" >&2
    exit 2
    ;;
esac

start=$(date +%s)
# clang for asan: its build also carries the libFuzzer targets
# (SPMD_FUZZ=ON), so tools/fuzz.sh reuses it instead of building a third
# copy. gcc for tsan (below). -O1: the sanitizers' own guidance. Unity builds of the libraries
# halve the compile time on 2 cores. The CUDA backend stays out: nvcc's code
# is not instrumented and the CUDA runtime does not run under ASan/TSan.
fuzz=OFF
cc=gcc cxx=g++
if [[ $mode == asan ]]; then fuzz=ON cc=clang cxx=clang++; fi
# TSan uses GCC's runtime: clang 14's crashes on TSan fibers created from
# other fibers (which every device fiber is), GCC 12's libtsan does not.
CC=${CC:-$cc} CXX=${CXX:-$cxx} cmake -S . -B "$build_dir" -DSPMD_SANITIZE="$sanitize" -DSPMD_FUZZ=$fuzz \
  -DSPMD_CUDA=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" >/dev/null
targets=(spmd_tests)
[[ $fuzz == ON ]] && targets+=(spmd_fuzz_scenario spmd_fuzz_trace spmd_fuzz_header)
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
built=$(date +%s)
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 900 ${CTEST_ARGS:-}
done_at=$(date +%s)
echo "sanitize.sh $mode: build $((built - start)) s, tests $((done_at - built)) s"
