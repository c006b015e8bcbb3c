// Python's built-in functions and types.

#include "scenario/builtins.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>

#include "scenario/interpreter.h"
#include "scenario/lexer.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/operators.h"
#include "scenario/py_format.h"
#include "scenario/python_errors.h"
#include "spmd/core/elementwise.h"
#include "spmd/debug/debug_print.h"

namespace spmd::scenario {

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return "undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kEllipsis: return "ellipsis";
    case Kind::kDType: return "dtype";
    case Kind::kStr: return "str";
    case Kind::kTuple: return "tuple";
    case Kind::kList: return "list";
    case Kind::kDict: return "dict";
    case Kind::kSet: return v.as<SetObject>().frozen ? "frozenset" : "set";
    case Kind::kArray: return "ArrayImpl";
    case Kind::kRange: return "range";
    case Kind::kSlice: return "slice";
    case Kind::kFunction: return "function";
    case Kind::kNative: return "builtin_function_or_method";
    case Kind::kModule: return "module";
    case Kind::kType: return "type";
    case Kind::kException: return v.as<ExceptionObject>().kind;
    case Kind::kIterator: return v.as<IteratorObject>().type_name;
    case Kind::kCell: return "cell";
    case Kind::kOther: return v.as<CustomObject>().type_name();
  }
  return "object";
}

namespace {

// --- constructors -------------------------------------------------------------

Value iterator_value(ExecState& st, std::string type, std::vector<Value> items) {
  return Value::object(Kind::kIterator, std::make_shared<IteratorObject>(std::move(type), std::move(items), st.token));
}

Value ctor_int(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "base"}, 0);
  if (!args.given(0)) return Value::integer(0);
  const Value& x = args[0];
  if (x.is(Kind::kStr)) {
    int base = args.given(1) ? static_cast<int>(to_int(c.st, args[1], "int()")) : 10;
    std::string s = x.as_str();
    s.erase(0, s.find_first_not_of(" \t\n"));
    s.erase(s.find_last_not_of(" \t\n") + 1);
    std::string digits;
    for (char ch : s) {
      if (ch != '_') digits += ch;
    }
    try {
      std::size_t used = 0;
      long long v = std::stoll(digits, &used, base);
      if (used != digits.size() || digits.empty()) throw std::invalid_argument("");
      return Value::integer(v);
    } catch (const std::invalid_argument&) {
      raise_value_error("invalid literal for int() with base " + std::to_string(base) + ": " + string_repr(x.as_str()));
    } catch (const std::out_of_range&) {
      raise_error("OverflowError", "int too large: spmdsim ints are 64-bit");
    }
  }
  if (x.is_int_like()) return Value::integer(x.as_int());
  if (x.is(Kind::kFloat)) {
    double d = x.as_float();
    if (std::isnan(d)) raise_value_error("cannot convert float NaN to integer");
    if (std::isinf(d)) raise_error("OverflowError", "cannot convert float infinity to integer");
    if (std::fabs(d) >= 9.2233720368547758e18) raise_error("OverflowError", "int too large: spmdsim ints are 64-bit");
    return Value::integer(static_cast<std::int64_t>(d));
  }
  if (x.is(Kind::kArray)) {
    const Array& arr = x.as_array();
    if (is_traced(c.st, arr)) {
      raise_concretization(c.st, arr,
                           "The problem arose with the `int` function. If trying to convert the data type of a "
                           "value, try using `x.astype(int)` or `jnp.array(x, int)` instead.");
    }
    if (arr.size() != 1) raise_type_error("Only scalar arrays can be converted to Python scalars.");
    if (is_floating(arr.dtype())) return Value::integer(static_cast<std::int64_t>(arr.element_as_double(0)));
    return Value::integer(arr.element_as_int64(0));
  }
  raise_type_error("int() argument must be a string, a bytes-like object or a real number, not '" + type_name(x) + "'");
}

Value ctor_float(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 0);
  if (!args.given(0)) return Value::floating(0.0);
  const Value& x = args[0];
  if (x.is_number()) return Value::floating(x.as_float());
  if (x.is(Kind::kStr)) {
    std::string s = x.as_str();
    s.erase(0, s.find_first_not_of(" \t\n"));
    s.erase(s.find_last_not_of(" \t\n") + 1);
    std::string lower;
    for (char ch : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "inf" || lower == "+inf" || lower == "infinity") return Value::floating(INFINITY);
    if (lower == "-inf" || lower == "-infinity") return Value::floating(-INFINITY);
    if (lower == "nan" || lower == "+nan" || lower == "-nan") return Value::floating(NAN);
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) {
      raise_value_error("could not convert string to float: " + string_repr(x.as_str()));
    }
    return Value::floating(d);
  }
  if (x.is(Kind::kArray)) {
    const Array& arr = x.as_array();
    if (is_traced(c.st, arr)) {
      raise_concretization(c.st, arr,
                           "The problem arose with the `float` function. If trying to convert the data type of a "
                           "value, try using `x.astype(float)` or `jnp.array(x, float)` instead.");
    }
    if (arr.size() != 1) raise_type_error("Only scalar arrays can be converted to Python scalars.");
    return Value::floating(arr.element_as_double(0));
  }
  raise_type_error("float() argument must be a string or a real number, not '" + type_name(x) + "'");
}

Value ctor_str(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"object"}, 0);
  if (!args.given(0)) return Value::str("");
  return Value::str(c.interp.str(c.st, args[0]));
}

Value ctor_bool(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 0);
  if (!args.given(0)) return Value::boolean(false);
  return Value::boolean(c.interp.truthy(c.st, args[0]));
}

Value ctor_list(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable"}, 0);
  if (!args.given(0)) return Value::list({}, c.st.token);
  return Value::list(c.interp.iterate(c.st, args[0]), c.st.token);
}

Value ctor_tuple(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable"}, 0);
  if (!args.given(0)) return Value::tuple({});
  if (args[0].is(Kind::kTuple)) return args[0];
  return Value::tuple(c.interp.iterate(c.st, args[0]));
}

void update_dict_from(NativeCall& c, PyDict& map, const Value& src) {
  if (src.is(Kind::kDict)) {
    Interpreter::HeapGuard g(c.interp, c.st, src.object());
    src.as<DictObject>().map.for_each([&](const Value& k, const Value& v) { map.set(k, v); });
    return;
  }
  for (const auto& item : c.interp.iterate(c.st, src)) {
    std::vector<Value> kv = c.interp.iterate(c.st, item);
    if (kv.size() != 2) {
      raise_value_error("dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
    }
    map.set(kv[0], kv[1]);
  }
}

Value ctor_dict(NativeCall& c, CallArgs& a) {
  if (a.pos.size() > 1) raise_type_error("dict expected at most 1 argument, got " + std::to_string(a.pos.size()));
  Value d = make_dict(c.st.token);
  auto& map = d.as<DictObject>().map;
  if (!a.pos.empty()) update_dict_from(c, map, a.pos[0]);
  for (auto& [k, v] : a.kw) map.set(Value::str(k), v);
  return d;
}

Value make_set_from(NativeCall& c, CallArgs& a, bool frozen) {
  Args args(c, a, {"iterable"}, 0);
  auto s = std::make_shared<SetObject>(c.st.token, frozen);
  if (args.given(0)) {
    for (const auto& v : c.interp.iterate(c.st, args[0])) s->map.set(v, Value::none());
  }
  return Value::object(Kind::kSet, std::move(s));
}

Value ctor_set(NativeCall& c, CallArgs& a) { return make_set_from(c, a, false); }
Value ctor_frozenset(NativeCall& c, CallArgs& a) { return make_set_from(c, a, true); }

Value ctor_range(NativeCall& c, CallArgs& a) {
  if (!a.kw.empty()) raise_type_error("range() takes no keyword arguments");
  if (a.pos.empty() || a.pos.size() > 3) {
    raise_type_error("range expected at least 1 argument, got " + std::to_string(a.pos.size()));
  }
  std::vector<std::int64_t> v;
  for (const auto& x : a.pos) {
    if (x.is(Kind::kFloat)) raise_type_error("'float' object cannot be interpreted as an integer");
    if (x.is(Kind::kArray) && is_traced(c.st, x.as_array())) {
      raise_concretization(c.st, x.as_array(),
                           "The problem arose with range(), which needs a concrete Python int (a loop whose trip "
                           "count depends on device data needs lax.fori_loop or lax.while_loop).");
    }
    v.push_back(to_int(c.st, x, "range()"));
  }
  std::int64_t start = 0, stop = 0, step = 1;
  if (v.size() == 1) {
    stop = v[0];
  } else {
    start = v[0];
    stop = v[1];
    if (v.size() == 3) step = v[2];
  }
  if (step == 0) raise_value_error("range() arg 3 must not be zero");
  return Value::object(Kind::kRange, std::make_shared<RangeObject>(start, stop, step));
}

Value ctor_slice(NativeCall& c, CallArgs& a) {
  if (a.pos.empty() || a.pos.size() > 3) raise_type_error("slice expected at least 1 argument");
  Value start = Value::none(), stop = Value::none(), step = Value::none();
  if (a.pos.size() == 1) {
    stop = a.pos[0];
  } else {
    start = a.pos[0];
    stop = a.pos[1];
    if (a.pos.size() == 3) step = a.pos[2];
  }
  return Value::object(Kind::kSlice, std::make_shared<SliceObject>(start, stop, step));
}

Value ctor_type(NativeCall& c, CallArgs& a) {
  if (a.pos.size() != 1 || !a.kw.empty()) raise_not_implemented("type() with 3 arguments (creating classes)", "use functions and dicts");
  const Value& v = a.pos[0];
  if (v.is(Kind::kException)) return exception_class(v.as<ExceptionObject>().kind);
  return builtin_type(v.kind());
}

Value ctor_exception(NativeCall& c, CallArgs& a) {
  std::string message;
  if (a.pos.size() == 1) {
    message = c.interp.str(c.st, a.pos[0]);
  } else if (a.pos.size() > 1) {
    message = c.interp.repr(c.st, Value::tuple(a.pos));
  }
  return Value::object(Kind::kException, std::make_shared<ExceptionObject>(c.data.as_str(), message));
}

// --- functions -------------------------------------------------------------------

Value fn_print(NativeCall& c, CallArgs& a) {
  std::string sep = " ";
  std::string end = "\n";
  for (auto& [k, v] : a.kw) {
    if (k == "sep") {
      if (!v.is_none()) sep = to_str(v, "sep");
    } else if (k == "end") {
      if (!v.is_none()) end = to_str(v, "end");
    } else if (k == "file") {
      if (!v.is_none()) raise_not_implemented("print(file=...)", "print to standard output");
    } else if (k != "flush") {
      raise_type_error("'" + k + "' is an invalid keyword argument for print()");
    }
  }
  std::string text;
  for (std::size_t i = 0; i < a.pos.size(); ++i) {
    if (i) text += sep;
    text += c.interp.str(c.st, a.pos[i]);
  }
  text += end;
  if (c.st.tracing()) {
    c.interp.warn_once("print", c.site.pos,
                       "print() inside a pmap-ed function runs once while tracing and shows abstract values, not "
                       "per-device data; use jax.debug.print(\"{x}\", x=x) instead");
    if (!c.st.trace_device) return Value::none();
  }
  if (c.st.in_device) {
    // Per-device Python under disable_jit: ordered with jax.debug.print (by
    // collectives done, then device), so the output does not depend on threads.
    program_print(std::move(text), c.loc());
    return Value::none();
  }
  c.interp.write_out(text);
  return Value::none();
}

Value fn_len(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj"}, 1);
  return Value::integer(c.interp.length(c.st, args[0]));
}

Value fn_repr(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj"}, 1);
  return Value::str(c.interp.repr(c.st, args[0]));
}

Value fn_abs(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  const Value& x = args[0];
  if (x.is_int_like()) {
    if (x.as_int() == INT64_MIN) raise_error("OverflowError", "integer overflow: spmdsim Python ints are 64-bit");
    return Value::integer(std::llabs(x.as_int()));
  }
  if (x.is(Kind::kFloat)) return Value::floating(std::fabs(x.as_float()));
  if (x.is(Kind::kArray)) return Value::array(unary(UnaryOp::kAbs, x.as_array()));
  raise_type_error("bad operand type for abs(): '" + type_name(x) + "'");
}

Value call1(NativeCall& c, const Value& fn, const Value& arg) {
  CallArgs args;
  args.pos.push_back(arg);
  return c.interp.call(c.st, fn, args, c.site);
}

Value min_max(NativeCall& c, CallArgs& a, bool is_max) {
  Value key, def;
  bool has_default = false;
  for (auto& [k, v] : a.kw) {
    if (k == "key") key = v;
    else if (k == "default") {
      def = v;
      has_default = true;
    } else {
      raise_type_error("'" + k + "' is an invalid keyword argument for " + (is_max ? "max()" : "min()"));
    }
  }
  const char* name = is_max ? "max" : "min";
  std::vector<Value> items;
  if (a.pos.size() == 1) {
    items = c.interp.iterate(c.st, a.pos[0]);
  } else if (a.pos.size() > 1) {
    items = a.pos;
  } else {
    raise_type_error(std::string(name) + " expected at least 1 argument, got 0");
  }
  if (items.empty()) {
    if (has_default) return def;
    raise_value_error(std::string(name) + "() iterable argument is empty");
  }
  std::size_t best = 0;
  Value best_key = key.is_undefined() || key.is_none() ? items[0] : call1(c, key, items[0]);
  for (std::size_t i = 1; i < items.size(); ++i) {
    Value k = key.is_undefined() || key.is_none() ? items[i] : call1(c, key, items[i]);
    bool better = is_max ? py_less(c.interp, c.st, best_key, k) : py_less(c.interp, c.st, k, best_key);
    if (better) {
      best = i;
      best_key = k;
    }
  }
  return items[best];
}

Value fn_max(NativeCall& c, CallArgs& a) { return min_max(c, a, true); }
Value fn_min(NativeCall& c, CallArgs& a) { return min_max(c, a, false); }

Value fn_sum(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable", "start"}, 1);
  Value total = args.given(1) ? args[1] : Value::integer(0);
  for (const auto& v : c.interp.iterate(c.st, args[0])) total = binary_op(c.interp, c.st, BinOp::kAdd, total, v);
  return total;
}

bool instance_of_one(const Value& v, const Value& cls) {
  if (!cls.is(Kind::kType)) raise_type_error("isinstance() arg 2 must be a type, a tuple of types, or a union");
  const auto& t = cls.as<TypeObject>();
  if (t.instance_kind == Kind::kException) {
    if (!v.is(Kind::kException)) return false;
    return exception_matches(v.as<ExceptionObject>().kind, t.name);
  }
  if (t.instance_kind == Kind::kUndefined) return true;  // object
  if (t.instance_kind == Kind::kInt) return v.is_int_like();
  if (t.instance_kind == Kind::kFloat && t.name == "number") return v.is_number();
  if (t.instance_kind == Kind::kSet && t.name == "frozenset") return v.is(Kind::kSet) && v.as<SetObject>().frozen;
  return v.kind() == t.instance_kind;
}

Value fn_isinstance(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj", "class_or_tuple"}, 2);
  const Value& cls = args[1];
  if (cls.is(Kind::kTuple)) {
    for (const auto& t : cls.tuple_items()) {
      if (instance_of_one(args[0], t)) return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  return Value::boolean(instance_of_one(args[0], cls));
}

Value fn_round(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"number", "ndigits"}, 1);
  const Value& x = args[0];
  if (x.is(Kind::kArray)) {
    if (args.has(1)) raise_not_implemented("round(array, ndigits)", "use jnp.round(x * 10**n) / 10**n");
    return Value::array(unary(UnaryOp::kRound, x.as_array()));
  }
  if (!x.is_number()) raise_type_error("type " + type_name(x) + " doesn't define __round__ method");
  if (!args.has(1)) {
    if (x.is_int_like()) return Value::integer(x.as_int());
    double d = x.as_float();
    if (std::isnan(d)) raise_value_error("cannot convert float NaN to integer");
    if (std::isinf(d)) raise_error("OverflowError", "cannot convert float infinity to integer");
    return Value::integer(static_cast<std::int64_t>(std::nearbyint(d)));
  }
  std::int64_t n = to_int(c.st, args[1], "round()");
  if (x.is_int_like()) {
    if (n >= 0) return Value::integer(x.as_int());
    std::int64_t p = 1;
    for (std::int64_t k = 0; k < -n && p < INT64_MAX / 10; ++k) p *= 10;
    double q = std::nearbyint(static_cast<double>(x.as_int()) / static_cast<double>(p));
    return Value::integer(static_cast<std::int64_t>(q) * p);
  }
  double d = x.as_float();
  if (!std::isfinite(d)) return x;
  if (n < 0 || n > 300) {
    double p = std::pow(10.0, static_cast<double>(n));
    return Value::floating(std::nearbyint(d * p) / p);
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(n), d);
  return Value::floating(std::strtod(buf, nullptr));
}

Value fn_sorted(NativeCall& c, CallArgs& a) {
  Value key;
  bool reverse = false;
  if (a.pos.size() != 1) raise_type_error("sorted expected 1 argument, got " + std::to_string(a.pos.size()));
  for (auto& [k, v] : a.kw) {
    if (k == "key") key = v;
    else if (k == "reverse") reverse = c.interp.truthy(c.st, v);
    else raise_type_error("sort() got an unexpected keyword argument '" + k + "'");
  }
  std::vector<Value> items = c.interp.iterate(c.st, a.pos[0]);
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& v : items) keyed.emplace_back(key.is_undefined() || key.is_none() ? v : call1(c, key, v), v);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? py_less(c.interp, c.st, y.first, x.first) : py_less(c.interp, c.st, x.first, y.first);
  });
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(kv.second);
  return Value::list(std::move(out), c.st.token);
}

Value fn_reversed(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"sequence"}, 1);
  if (args[0].is(Kind::kDict) || args[0].is(Kind::kSet)) {
    raise_type_error("'" + type_name(args[0]) + "' object is not reversible");
  }
  std::vector<Value> items = c.interp.iterate(c.st, args[0]);
  std::reverse(items.begin(), items.end());
  return iterator_value(c.st, "list_reverseiterator", std::move(items));
}

Value fn_any(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable"}, 1);
  for (const auto& v : c.interp.iterate(c.st, args[0])) {
    if (c.interp.truthy(c.st, v)) return Value::boolean(true);
  }
  return Value::boolean(false);
}

Value fn_all(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable"}, 1);
  for (const auto& v : c.interp.iterate(c.st, args[0])) {
    if (!c.interp.truthy(c.st, v)) return Value::boolean(false);
  }
  return Value::boolean(true);
}

Value fn_enumerate(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable", "start"}, 1);
  std::int64_t start = args.given(1) ? to_int(c.st, args[1], "enumerate()") : 0;
  std::vector<Value> out;
  for (auto& v : c.interp.iterate(c.st, args[0])) out.push_back(Value::tuple({Value::integer(start++), v}));
  return iterator_value(c.st, "enumerate", std::move(out));
}

Value fn_zip(NativeCall& c, CallArgs& a) {
  bool strict = false;
  for (auto& [k, v] : a.kw) {
    if (k == "strict") strict = c.interp.truthy(c.st, v);
    else raise_type_error("zip() got an unexpected keyword argument '" + k + "'");
  }
  std::vector<std::vector<Value>> lists;
  for (const auto& x : a.pos) lists.push_back(c.interp.iterate(c.st, x));
  std::size_t n = lists.empty() ? 0 : lists[0].size();
  for (const auto& l : lists) {
    if (strict && l.size() != n) raise_value_error("zip() arguments have different lengths");
    n = std::min(n, l.size());
  }
  std::vector<Value> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<Value> t;
    for (const auto& l : lists) t.push_back(l[i]);
    out.push_back(Value::tuple(std::move(t)));
  }
  return iterator_value(c.st, "zip", std::move(out));
}

Value fn_map(NativeCall& c, CallArgs& a) {
  if (a.pos.size() < 2) raise_type_error("map() must have at least two arguments.");
  std::vector<std::vector<Value>> lists;
  for (std::size_t i = 1; i < a.pos.size(); ++i) lists.push_back(c.interp.iterate(c.st, a.pos[i]));
  std::size_t n = lists[0].size();
  for (const auto& l : lists) n = std::min(n, l.size());
  std::vector<Value> out;
  for (std::size_t i = 0; i < n; ++i) {
    CallArgs args;
    for (const auto& l : lists) args.pos.push_back(l[i]);
    out.push_back(c.interp.call(c.st, a.pos[0], args, c.site));
  }
  return iterator_value(c.st, "map", std::move(out));
}

Value fn_filter(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"function", "iterable"}, 2);
  std::vector<Value> out;
  for (auto& v : c.interp.iterate(c.st, args[1])) {
    bool keep = args[0].is_none() ? c.interp.truthy(c.st, v) : c.interp.truthy(c.st, call1(c, args[0], v));
    if (keep) out.push_back(v);
  }
  return iterator_value(c.st, "filter", std::move(out));
}

Value fn_hasattr(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj", "name"}, 2);
  return Value::boolean(c.interp.has_attr(c.st, args[0], to_str(args[1], "hasattr(): attribute name")));
}

Value fn_getattr(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"object", "name", "default"}, 2);
  std::string name = to_str(args[1], "getattr(): attribute name");
  if (args.given(2)) {
    if (!c.interp.has_attr(c.st, args[0], name)) return args[2];
  }
  return c.interp.get_attr(c.st, args[0], name);
}

Value fn_setattr(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj", "name", "value"}, 3);
  c.interp.set_attr(c.st, args[0], to_str(args[1], "setattr(): attribute name"), args[2], nullptr);
  return Value::none();
}

Value fn_callable(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj"}, 1);
  const Value& v = args[0];
  bool ok = v.is(Kind::kFunction) || v.is(Kind::kNative) || v.is(Kind::kType) || v.is(Kind::kDType) ||
            (v.is(Kind::kOther) && v.as<CustomObject>().callable());
  return Value::boolean(ok);
}

Value fn_divmod(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "b"}, 2);
  return Value::tuple({binary_op(c.interp, c.st, BinOp::kFloorDiv, args[0], args[1]),
                       binary_op(c.interp, c.st, BinOp::kMod, args[0], args[1])});
}

Value fn_pow(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"base", "exp", "mod"}, 2);
  Value r = binary_op(c.interp, c.st, BinOp::kPow, args[0], args[1]);
  if (args.has(2)) r = binary_op(c.interp, c.st, BinOp::kMod, r, args[2]);
  return r;
}

Value fn_chr(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"i"}, 1);
  std::int64_t i = to_int(c.st, args[0], "chr()");
  if (i < 0 || i > 0x10FFFF) raise_value_error("chr() arg not in range(0x110000)");
  std::string s;
  append_utf8(s, static_cast<std::uint32_t>(i));
  return Value::str(s);
}

Value fn_ord(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"c"}, 1);
  std::string s = to_str(args[0], "ord() argument");
  if (utf8_length(s) != 1) {
    raise_type_error("ord() expected a character, but string of length " + std::to_string(utf8_length(s)) + " found");
  }
  auto u = static_cast<unsigned char>(s[0]);
  if (u < 0x80) return Value::integer(u);
  int n = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : 2;
  std::uint32_t cp = u & (0x7F >> n);
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[static_cast<std::size_t>(k)]) & 0x3F);
  return Value::integer(cp);
}

Value fn_base(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"number"}, 1);
  std::int64_t i = to_int(c.st, args[0], c.name);
  std::string spec = c.data.as_str();
  return Value::str(format_value(c.interp, c.st, Value::integer(i), "#" + spec));
}

Value fn_hash(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj"}, 1);
  return Value::integer(static_cast<std::int64_t>(hash_value(args[0]) & 0x7FFFFFFFFFFFFFFFULL));
}

Value fn_id(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj"}, 1);
  const Value& v = args[0];
  if (v.object()) return Value::integer(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(v.object())));
  return Value::integer(static_cast<std::int64_t>(hash_value(v)));
}

Value fn_iter(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"object"}, 1);
  if (args[0].is(Kind::kIterator)) return args[0];
  std::string t = args[0].is(Kind::kList) ? "list_iterator" : args[0].is(Kind::kTuple) ? "tuple_iterator" : "iterator";
  return iterator_value(c.st, t, c.interp.iterate(c.st, args[0]));
}

Value fn_next(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterator", "default"}, 1);
  if (!args[0].is(Kind::kIterator)) raise_type_error("'" + type_name(args[0]) + "' object is not an iterator");
  auto& it = args[0].as<IteratorObject>();
  if (it.next < it.items.size()) return it.items[it.next++];
  if (args.given(1)) return args[1];
  raise_error("StopIteration", "");
}

Value fn_format(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"value", "format_spec"}, 1);
  std::string spec = args.given(1) ? to_str(args[1], "format_spec") : "";
  return Value::str(format_value(c.interp, c.st, args[0], spec));
}

Value fn_unsupported(NativeCall& c, CallArgs& a) {
  raise_not_implemented(c.name + "()", "scenarios run a fixed program: no file, console or dynamic code access");
}

Value fn_issubclass(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"cls", "class_or_tuple"}, 2);
  if (!args[0].is(Kind::kType)) raise_type_error("issubclass() arg 1 must be a class");
  const auto& t = args[0].as<TypeObject>();
  std::vector<Value> classes = args[1].is(Kind::kTuple) ? args[1].tuple_items() : std::vector<Value>{args[1]};
  for (const auto& cls : classes) {
    if (!cls.is(Kind::kType)) raise_type_error("issubclass() arg 2 must be a class, a tuple of classes, or a union");
    const auto& u = cls.as<TypeObject>();
    if (t.instance_kind == Kind::kException && u.instance_kind == Kind::kException) {
      if (exception_matches(t.name, u.name)) return Value::boolean(true);
    } else if (args[0].is_same(cls) || u.instance_kind == Kind::kUndefined || (t.name == "bool" && u.name == "int")) {
      return Value::boolean(true);
    }
  }
  return Value::boolean(false);
}

// --- type table ---------------------------------------------------------------------

struct TypeTable {
  std::map<Kind, Value> by_kind;
  std::map<std::string, Value> exceptions;
  Value array;
  Value object;
  Value frozenset;
};

Value new_type(const std::string& name, Kind k, Value ctor) {
  return Value::object(Kind::kType, std::make_shared<TypeObject>(name, k, std::move(ctor)));
}

const TypeTable& types() {
  static const TypeTable* table = [] {
    auto* t = new TypeTable();
    auto add = [&](Kind k, const std::string& name, NativeFn fn) {
      t->by_kind[k] = new_type(name, k, fn ? make_native(name, fn) : Value());
    };
    add(Kind::kNone, "NoneType", nullptr);
    add(Kind::kBool, "bool", ctor_bool);
    add(Kind::kInt, "int", ctor_int);
    add(Kind::kFloat, "float", ctor_float);
    add(Kind::kStr, "str", ctor_str);
    add(Kind::kTuple, "tuple", ctor_tuple);
    add(Kind::kList, "list", ctor_list);
    add(Kind::kDict, "dict", ctor_dict);
    add(Kind::kSet, "set", ctor_set);
    add(Kind::kRange, "range", ctor_range);
    add(Kind::kSlice, "slice", ctor_slice);
    add(Kind::kFunction, "function", nullptr);
    add(Kind::kNative, "builtin_function_or_method", nullptr);
    add(Kind::kModule, "module", nullptr);
    add(Kind::kType, "type", ctor_type);
    add(Kind::kDType, "dtype", nullptr);
    add(Kind::kEllipsis, "ellipsis", nullptr);
    add(Kind::kIterator, "iterator", nullptr);
    add(Kind::kCell, "cell", nullptr);
    add(Kind::kOther, "object", nullptr);
    t->array = new_type("ArrayImpl", Kind::kArray, Value());
    t->by_kind[Kind::kArray] = t->array;
    t->object = new_type("object", Kind::kUndefined, Value());
    t->frozenset = new_type("frozenset", Kind::kSet, make_native("frozenset", ctor_frozenset));
    static const char* kExceptions[] = {
        "BaseException", "Exception", "ArithmeticError", "ZeroDivisionError", "OverflowError", "LookupError",
        "IndexError", "KeyError", "NameError", "UnboundLocalError", "RuntimeError", "RecursionError",
        "NotImplementedError", "TypeError", "ValueError", "AssertionError", "AttributeError", "ImportError",
        "ModuleNotFoundError", "StopIteration", "KeyboardInterrupt", "SystemExit", "FloatingPointError", "MemoryError",
        "ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
        "UnexpectedTracerError"};
    for (const char* n : kExceptions) {
      t->exceptions[n] = new_type(n, Kind::kException, make_native(n, ctor_exception, Value(), Value::str(n)));
    }
    return t;
  }();
  return *table;
}

}  // namespace

Value builtin_type(Kind k) {
  auto it = types().by_kind.find(k);
  return it == types().by_kind.end() ? types().object : it->second;
}

Value exception_class(const std::string& name) {
  auto it = types().exceptions.find(name);
  if (it != types().exceptions.end()) return it->second;
  // Kinds of spmd errors (ShapeError, AxisNameError, ...) get a class on demand.
  static std::mutex mu;
  static auto* extra = new std::map<std::string, Value>();
  std::lock_guard<std::mutex> lock(mu);
  auto e = extra->find(name);
  if (e != extra->end()) return e->second;
  return extra->emplace(name, new_type(name, Kind::kException, make_native(name, ctor_exception, Value(), Value::str(name))))
      .first->second;
}

Value array_type() { return types().array; }

bool is_instance(const Value& v, const Value& cls) { return instance_of_one(v, cls); }

void register_builtins(PyDict& b) {
  auto fn = [&](const char* name, NativeFn f) { b.set(Value::str(name), make_native(name, f)); };
  fn("print", fn_print);
  fn("len", fn_len);
  fn("repr", fn_repr);
  fn("abs", fn_abs);
  fn("min", fn_min);
  fn("max", fn_max);
  fn("sum", fn_sum);
  fn("isinstance", fn_isinstance);
  fn("issubclass", fn_issubclass);
  fn("round", fn_round);
  fn("sorted", fn_sorted);
  fn("reversed", fn_reversed);
  fn("any", fn_any);
  fn("all", fn_all);
  fn("enumerate", fn_enumerate);
  fn("zip", fn_zip);
  fn("map", fn_map);
  fn("filter", fn_filter);
  fn("hasattr", fn_hasattr);
  fn("getattr", fn_getattr);
  fn("setattr", fn_setattr);
  fn("callable", fn_callable);
  fn("divmod", fn_divmod);
  fn("pow", fn_pow);
  fn("chr", fn_chr);
  fn("ord", fn_ord);
  fn("hash", fn_hash);
  fn("id", fn_id);
  fn("iter", fn_iter);
  fn("next", fn_next);
  fn("format", fn_format);
  b.set(Value::str("hex"), make_native("hex", fn_base, Value(), Value::str("x")));
  b.set(Value::str("bin"), make_native("bin", fn_base, Value(), Value::str("b")));
  b.set(Value::str("oct"), make_native("oct", fn_base, Value(), Value::str("o")));
  for (const char* name : {"open", "input", "exec", "eval", "compile", "__import__", "globals", "locals", "vars"}) {
    fn(name, fn_unsupported);
  }
  for (Kind k : {Kind::kBool, Kind::kInt, Kind::kFloat, Kind::kStr, Kind::kTuple, Kind::kList, Kind::kDict,
                 Kind::kSet, Kind::kRange, Kind::kSlice, Kind::kType}) {
    const Value& t = builtin_type(k);
    b.set(Value::str(t.as<TypeObject>().name), t);
  }
  b.set(Value::str("frozenset"), types().frozenset);
  b.set(Value::str("object"), types().object);
  b.set(Value::str("Ellipsis"), Value::ellipsis());
  b.set(Value::str("NotImplemented"), Value::none());
  for (const auto& [name, cls] : types().exceptions) {
    // JAX's own error classes live in jax.errors, not among Python's builtins.
    if (name.find("Tracer") == std::string::npos && name != "ConcretizationTypeError") b.set(Value::str(name), cls);
  }
}

}  // namespace spmd::scenario
