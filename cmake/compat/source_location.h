// Force-included (-include) into every translation unit (cmake/SpmdCompat.cmake)
// when the compiler is clang < 15 on libstdc++: libstdc++ 12 defines
// std::source_location only when the compiler has __builtin_source_location,
// which clang gained in version 15. clang's __builtin_FILE/LINE/COLUMN give the
// same information, evaluated at the call site when used as default arguments.
#pragma once

#include <source_location>

#if !defined(__cpp_lib_source_location) && defined(__clang__)
namespace std {
struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           unsigned line = __builtin_LINE(),
                                           unsigned column = __builtin_COLUMN()) noexcept {
    source_location s;
    s.file_ = file;
    s.function_ = function;
    s.line_ = line;
    s.column_ = column;
    return s;
  }
  constexpr source_location() noexcept = default;
  constexpr unsigned line() const noexcept { return line_; }
  constexpr unsigned column() const noexcept { return column_; }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  unsigned line_ = 0;
  unsigned column_ = 0;
};
}  // namespace std
#endif
