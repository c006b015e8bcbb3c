# SPMD_SANITIZE=address,undefined or thread: applied to every target.
if(SPMD_SANITIZE)
  set(_san "-fsanitize=${SPMD_SANITIZE}")
  add_compile_options(${_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(${_san})
  # Tests that repeat a run many times repeat it fewer times where each run
  # costs several times more (the leak tests).
  add_compile_definitions(SPMD_SANITIZED=1)
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
    # Uninstrumented, for fibers (tests/sanitizers/README.md has the details):
    # the scheduler switches TSan fibers inside pick_next(), so its own entry
    # and exit would land on two fibers' shadow stacks; the sim backend
    # instantiates Boost's fiber entry/teardown code, which Boost runs on a
    # fiber's stack without a switch (at creation and at the final release).
    # Their locks are pthread calls, which TSan still sees.
    # -fno-sanitize=thread also drops __SANITIZE_THREAD__, so say it here.
    add_compile_definitions(SPMD_TSAN=1)
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/backend/sim/fiber_scheduler.cc
      ${CMAKE_CURRENT_SOURCE_DIR}/src/backend/sim/sim_backend.cc PROPERTIES
      COMPILE_OPTIONS "-fno-sanitize=thread" SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
endif()
