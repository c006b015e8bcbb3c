# Sourced by tools/sanitize.sh and tools/fuzz.sh: the one configure line of a
# sanitizer build, so the ASan build tools/fuzz.sh reuses is exactly the one
# tools/sanitize.sh made.
#
#   sanitizer_configure asan|tsan BUILD_DIR
#
# clang for asan: its build also carries the libFuzzer targets (SPMD_FUZZ=ON).
# GCC for tsan: clang 14's runtime crashes on TSan fibers created from other
# fibers (which every device fiber is); GCC 12's libtsan does not. -O1: the
# sanitizers' own guidance; -g1: line tables, all a sanitizer's stack needs,
# at a fraction of full debug info's compile and link time (CI's budget).
# Unity builds of the libraries halve the compile time on 2 cores. The CUDA backend stays out: nvcc's code is not instrumented
# and the CUDA runtime does not run under ASan/TSan.
sanitizer_configure() {
  local mode=$1 build_dir=$2 sanitize fuzz cc cxx
  case $mode in
    asan) sanitize=address,undefined fuzz=ON cc=clang cxx=clang++ ;;
    tsan) sanitize=thread fuzz=OFF cc=gcc cxx=g++ ;;
    *) echo "sanitizer_configure: unknown mode '$mode'" >&2; return 2 ;;
  esac
  CC=${CC:-$cc} CXX=${CXX:-$cxx} cmake -S . -B "$build_dir" -DSPMD_SANITIZE="$sanitize" -DSPMD_FUZZ=$fuzz \
    -DSPMD_CUDA=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" >/dev/null
}
