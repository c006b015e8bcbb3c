#pragma once
// Python's text conversions: repr of floats and strings, format specs
// (format(x, ".3f")), str.format and %-formatting.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/interpreter.h"
#include "scenario/value.h"
#include "util/python_format.h"

namespace spmd::scenario {

using spmd::float_repr;
/// repr(str): quotes and escapes as Python chooses them.
std::string string_repr(std::string_view s);
/// format(v, spec) (f-string format specs).
std::string format_value(Interpreter& interp, ExecState& st, const Value& v, std::string_view spec);
/// fmt.format(*pos, **kw).
std::string format_string(Interpreter& interp, ExecState& st, std::string_view fmt, const std::vector<Value>& pos,
                          const std::vector<std::pair<std::string, Value>>& kw);
/// fmt % args.
std::string percent_format(Interpreter& interp, ExecState& st, std::string_view fmt, const Value& args);

}  // namespace spmd::scenario
