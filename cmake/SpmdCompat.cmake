# Compiler gaps worked around for every target (clang 14 with libstdc++ 12
# is what Debian 12 has for the sanitizer and fuzz builds).
# libstdc++ 12 declares std::source_location only for compilers with
# __builtin_source_location (clang >= 15); give older clang an equivalent.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-std=c++20")
check_cxx_source_compiles("#include <source_location>
int main() { return static_cast<int>(std::source_location::current().line()) - __LINE__; }" SPMD_HAVE_STD_SOURCE_LOCATION)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT SPMD_HAVE_STD_SOURCE_LOCATION)
  add_compile_options(-include ${CMAKE_CURRENT_SOURCE_DIR}/cmake/compat/source_location.h)
endif()
