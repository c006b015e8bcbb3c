# SPMD_SANITIZE=address,undefined or thread: applied to every target.
if(SPMD_SANITIZE)
  set(_san "-fsanitize=${SPMD_SANITIZE}")
  add_compile_options(${_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(${_san})
  if(SPMD_SANITIZE MATCHES "address")
    # Device fibers run on stacks ASan does not know (Debian's Boost.Context
    # uses fcontext, which has no ASan fiber-switch hooks). An exception thrown
    # on such a stack leaves the skipped frames' redzones poisoned (ASan's
    # __asan_handle_no_return cannot find the stack's bounds), and later calls
    # on that stack then report false stack-buffer-underflows. So no stack
    # redzones: heap, global and use-after-free checks, LeakSanitizer and
    # UBSan all stay on.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
      add_compile_options("SHELL:-mllvm -asan-stack=0")
    else()
      add_compile_options("SHELL:--param asan-stack=0")
    endif()
  endif()
endif()
