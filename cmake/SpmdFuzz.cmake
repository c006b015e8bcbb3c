# SPMD_FUZZ=ON: the libFuzzer targets under tests/fuzz (clang only; see tools/fuzz.sh).
# Every target of such a build is compiled with coverage instrumentation
# (-fsanitize=fuzzer-no-link) and, unless SPMD_SANITIZE says otherwise, with
# ASan + UBSan, so the fuzzer sees the library's branches and its memory bugs.
# A normal build (SPMD_FUZZ=OFF, the default) is not affected.
if(NOT SPMD_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "SPMD_FUZZ=ON needs clang (libFuzzer is part of clang): configure with "
                      "CC=clang CXX=clang++ cmake -DSPMD_FUZZ=ON ... (or use tools/fuzz.sh)")
endif()
if(NOT SPMD_SANITIZE)
  set(SPMD_SANITIZE "address,undefined")
endif()
add_compile_options(-fsanitize=fuzzer-no-link)
add_link_options(-fsanitize=fuzzer-no-link)
