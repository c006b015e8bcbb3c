#pragma once
// Python-like errors of scenario programs.
//
// Natives and operators throw spmd::ProgramError with only kind, message and
// hint; the interpreter adds where, source_line, the traceback and the device
// at the innermost expression that knows its position (see Interpreter).

#include <string>
#include <string_view>
#include <vector>

#include "spmd/error.h"
#include "scenario/source_text.h"
#include "scenario/token.h"

namespace spmd::scenario {

/// spmd::SyntaxError with kind "SyntaxError", "IndentationError" or "TabError".
[[noreturn]] void throw_syntax_error(const SourceText& src, Pos pos, std::string message, std::string hint = {},
                                     std::string kind = "SyntaxError");
/// Valid Python outside the supported subset, found while parsing:
/// ProgramError kind "NotImplementedError" with the position.
[[noreturn]] void throw_unsupported_syntax(const SourceText& src, Pos pos, std::string what, std::string hint);

/// A Python exception without location (added by the interpreter).
[[noreturn]] void raise_error(std::string kind, std::string message, std::string hint = {});
[[noreturn]] inline void raise_type_error(std::string message, std::string hint = {}) {
  raise_error("TypeError", std::move(message), std::move(hint));
}
[[noreturn]] inline void raise_value_error(std::string message, std::string hint = {}) {
  raise_error("ValueError", std::move(message), std::move(hint));
}
[[noreturn]] void raise_not_implemented(std::string what, std::string hint = {});

/// Largest container or string the interpreter builds (elements or bytes).
inline constexpr double kMaxElements = 1e8;
/// MemoryError when building `count` elements of `what` would exceed kMaxElements.
inline void check_size(double count, const char* what) {
  if (count > kMaxElements) {
    raise_error("MemoryError", std::string("cannot build a ") + what + " of " + std::to_string(static_cast<long long>(count)) +
                                   " elements", "spmdsim limits Python containers to 1e8 elements");
  }
}

/// Whether an error of kind `kind` is caught by `except cls:` (Python's class
/// hierarchy, with JAX's tracer errors under TypeError and the core's
/// InvalidArgument kinds mapped onto Python classes).
bool exception_matches(std::string_view kind, std::string_view cls);
/// Whether `name` names an exception class that scenarios may raise and catch.
bool is_exception_class(std::string_view name);

/// The candidate closest to `name` by edit distance, or "" when none is close.
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace spmd::scenario
