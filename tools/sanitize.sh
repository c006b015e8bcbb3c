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
exclude=()
case "$mode" in
  asan)
    build_dir=${BUILD_DIR:-build-asan}
    # detect_stack_use_after_return stays off: fibers switch stacks without
    # ASan's fake-stack annotations (Debian's Boost.Context uses fcontext).
    # allocator_may_return_null: a program asking for terabytes must get
    # Python's MemoryError, as it does unsanitized, not ASan's abort.
    export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=0:strict_init_order=1:abort_on_error=0:halt_on_error=1:print_summary=1:allow_user_segv_handler=1:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    # The embedded CPython allocates its objects with malloc, not in its own
    # mmap'ed arenas, so LeakSanitizer sees the pointers they hold.
    export PYTHONMALLOC=malloc
    ;;
  tsan)
    build_dir=${BUILD_DIR:-build-tsan}
    # The two leak soaks (thousands of runs, one after another) check that
    # every byte, stack and thread is given back: the normal build and ASan
    # (LeakSanitizer) run them; under TSan they take 160 s of CI's budget to
    # repeat what the rest of the suite already races.
    exclude=(-E '::leaks:')
    # allocator_may_return_null: as for ASan, a terabyte request is Python's MemoryError.
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:allocator_may_return_null=1:suppressions=$root/tests/sanitizers/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    ;;
  *)
    echo "usage: tools/sanitize.sh asan|tsan" >&2
    exit 2
    ;;
esac

start=$(date +%s)
source tools/sanitizer_config.sh
sanitizer_configure "$mode" "$build_dir"
fuzz=OFF
[[ $mode == asan ]] && fuzz=ON
targets=(spmd_tests)
[[ $fuzz == ON ]] && targets+=(spmd_fuzz_program spmd_fuzz_trace spmd_fuzz_header)
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
built=$(date +%s)
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 900 "${exclude[@]}" ${CTEST_ARGS:-}
done_at=$(date +%s)
echo "sanitize.sh $mode: build $((built - start)) s, tests $((done_at - built)) s"
