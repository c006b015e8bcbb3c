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
  if(SPMD_SANITIZE MATCHES "thread")
    # The fiber scheduler switches TSan fibers inside pick_next(); instrumented,
    # its own function entry/exit would be counted on the wrong fiber's shadow
    # stack (two frames per switch), which overflows one stack and underflows
    # the other. Its locks are pthread calls, which TSan still sees.
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/backend/sim/fiber_scheduler.cc PROPERTIES
      COMPILE_OPTIONS "-fno-sanitize=thread" SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
endif()
