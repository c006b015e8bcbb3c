# SPMD_SANITIZE=address,undefined or thread: applied to every target.
if(SPMD_SANITIZE)
  set(_san "-fsanitize=${SPMD_SANITIZE}")
  add_compile_options(${_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(${_san})
  if(SPMD_SANITIZE MATCHES "address")
    # Fibers switch stacks: tell ASan about it (Boost.Context's ucontext/fcontext hooks).
    add_compile_definitions(BOOST_USE_ASAN)
  endif()
  if(SPMD_SANITIZE MATCHES "thread")
    add_compile_definitions(BOOST_USE_TSAN)
  endif()
endif()
