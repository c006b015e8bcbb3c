#include "scenario/python_errors.h"

#include "util/edit_distance.h"

#include <algorithm>
#include <array>
#include <utility>

namespace spmd::scenario {

void throw_syntax_error(const SourceText& src, Pos pos, std::string message, std::string hint, std::string kind) {
  Report r = make_report(std::move(kind), std::move(message), std::move(hint));
  r.where = src.loc(pos);
  r.source_line = src.line(pos.line);
  throw SyntaxError(std::move(r));
}

void throw_unsupported_syntax(const SourceText& src, Pos pos, std::string what, std::string hint) {
  Report r = make_report("NotImplementedError", std::move(what) + " is not supported by spmdsim", std::move(hint));
  r.where = src.loc(pos);
  r.source_line = src.line(pos.line);
  throw ProgramError(std::move(r));
}

void raise_error(std::string kind, std::string message, std::string hint) {
  throw ProgramError(make_report(std::move(kind), std::move(message), std::move(hint)));
}

void raise_not_implemented(std::string what, std::string hint) {
  raise_error("NotImplementedError", std::move(what) + " is not supported by spmdsim", std::move(hint));
}

namespace {

// child -> parent in Python's exception hierarchy (plus JAX's and spmd's kinds).
constexpr std::array<std::pair<std::string_view, std::string_view>, 35> kParents = {{
    {"MemoryError", "Exception"},
    {"ArithmeticError", "Exception"},
    {"ZeroDivisionError", "ArithmeticError"},
    {"OverflowError", "ArithmeticError"},
    {"FloatingPointError", "ArithmeticError"},
    {"LookupError", "Exception"},
    {"IndexError", "LookupError"},
    {"KeyError", "LookupError"},
    {"NameError", "Exception"},
    {"UnboundLocalError", "NameError"},
    {"RuntimeError", "Exception"},
    {"RecursionError", "RuntimeError"},
    {"NotImplementedError", "RuntimeError"},
    {"TypeError", "Exception"},
    {"ValueError", "Exception"},
    {"AssertionError", "Exception"},
    {"AttributeError", "Exception"},
    {"ImportError", "Exception"},
    {"ModuleNotFoundError", "ImportError"},
    {"StopIteration", "Exception"},
    {"UnicodeError", "ValueError"},
    {"ConcretizationTypeError", "TypeError"},
    {"TracerBoolConversionError", "ConcretizationTypeError"},
    {"TracerIntegerConversionError", "TypeError"},
    {"UnexpectedTracerError", "Exception"},
    // kinds of spmd::InvalidArgument raised by the core and the runtime
    {"ShapeError", "TypeError"},
    {"InputSplitError", "ValueError"},
    {"OutputStackError", "ValueError"},
    {"DeviceOwnershipError", "ValueError"},
    {"AxisNameError", "NameError"},
    {"InvalidArgument", "ValueError"},
    {"DTypeError", "TypeError"},
    {"Exception", "BaseException"},
    {"KeyboardInterrupt", "BaseException"},
    {"SystemExit", "BaseException"},
}};

std::string_view parent_of(std::string_view kind) {
  for (const auto& [child, parent] : kParents) {
    if (child == kind) return parent;
  }
  return {};
}

}  // namespace

bool exception_matches(std::string_view kind, std::string_view cls) {
  if (cls == "BaseException") return true;
  std::string_view k = kind;
  for (int guard = 0; guard < 16 && !k.empty(); ++guard) {
    if (k == cls) return true;
    std::string_view p = parent_of(k);
    if (p.empty()) {
      // Unknown kinds (e.g. a core error kind not listed) are still Exceptions.
      return cls == "Exception";
    }
    k = p;
  }
  return false;
}

bool is_exception_class(std::string_view name) {
  if (name == "BaseException") return true;
  for (const auto& [child, parent] : kParents) {
    if (child == name) return true;
  }
  return false;
}

namespace {

}  // namespace

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = static_cast<std::size_t>(-1);
  for (const auto& c : candidates) {
    if (c == name || c.empty()) continue;
    std::size_t d = edit_distance(name, c);
    if (d < best_d || (d == best_d && c < best)) {
      best_d = d;
      best = c;
    }
  }
  // Python's suggestion threshold: at most about a third of the length.
  std::size_t limit = std::max<std::size_t>(1, (name.size() + 2) / 3);
  if (best_d <= limit) return best;
  return {};
}

}  // namespace spmd::scenario
