// The small standard-library modules scenarios use: functools, math, time, typing.

#include <chrono>
#include <cmath>
#include <numeric>

#include "scenario/interpreter.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/operators.h"
#include "scenario/python_errors.h"

namespace spmd::scenario {

namespace {

// ============================================================================
// functools

class Partial : public CustomObject {
 public:
  Value func;
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;

  std::string type_name() const override { return "partial"; }
  std::string repr(ExecState& st) const override {
    std::string s = "functools.partial(";
    if (func.is(Kind::kFunction)) s += "<function " + func.as<FunctionObject>().code->name + ">";
    else if (func.is(Kind::kNative)) s += "<built-in function " + func.as<NativeObject>().name + ">";
    else s += type_name_of_func();
    for (std::size_t i = 0; i < args.size(); ++i) s += ", ...";
    for (const auto& kv : kwargs) s += ", " + kv.first + "=...";
    return s + ")";
  }
  std::string type_name_of_func() const { return "<callable>"; }
  bool callable() const override { return true; }
  Value call(Interpreter& interp, ExecState& st, const Value&, CallArgs& a, const CallSite& site) override {
    CallArgs merged;
    merged.pos = args;
    merged.pos.insert(merged.pos.end(), a.pos.begin(), a.pos.end());
    merged.kw = kwargs;
    for (auto& [k, v] : a.kw) {
      bool replaced = false;
      for (auto& [mk, mv] : merged.kw) {
        if (mk == k) {
          mv = v;
          replaced = true;
        }
      }
      if (!replaced) merged.kw.emplace_back(k, v);
    }
    return interp.call(st, func, merged, site);
  }
  bool get_attr(Interpreter&, ExecState& st, const Value&, const std::string& name, Value& out) const override {
    if (name == "func") return out = func, true;
    if (name == "args") return out = Value::tuple(args), true;
    if (name == "keywords") {
      Value d = make_dict(st.token);
      for (auto& [k, v] : kwargs) d.as<DictObject>().map.set(Value::str(k), v);
      return out = d, true;
    }
    return false;
  }
};

Value fn_partial(NativeCall& c, CallArgs& a) {
  if (a.pos.empty()) raise_type_error("partial() missing 1 required positional argument: 'func'");
  auto p = std::make_shared<Partial>();
  p->func = a.pos[0];
  p->args.assign(a.pos.begin() + 1, a.pos.end());
  p->kwargs = a.kw;
  return Value::object(Kind::kOther, std::move(p));
}

Value fn_reduce(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"function", "iterable", "initial"}, 2);
  std::vector<Value> items = c.interp.iterate(c.st, args[1]);
  std::size_t start = 0;
  Value acc;
  if (args.given(2)) {
    acc = args[2];
  } else {
    if (items.empty()) raise_type_error("reduce() of empty iterable with no initial value");
    acc = items[0];
    start = 1;
  }
  for (std::size_t i = start; i < items.size(); ++i) {
    CallArgs call_args;
    call_args.pos = {acc, items[i]};
    acc = c.interp.call(c.st, args[0], call_args, c.site);
  }
  return acc;
}

Value fn_identity_decorator_factory(NativeCall& c, CallArgs& a) {
  // functools.wraps(f) / lru_cache(...) -> a decorator returning its argument;
  // lru_cache used bare (@functools.cache) receives the function itself.
  if (a.pos.size() == 1 && (a.pos[0].is(Kind::kFunction)) && c.data.is(Kind::kBool)) return a.pos[0];
  return make_native(c.name, [](NativeCall&, CallArgs& inner) -> Value {
    if (inner.pos.empty()) raise_type_error("decorator expects a function");
    return inner.pos[0];
  });
}

// ============================================================================
// math

double arg_float(NativeCall& c, const Value& v) { return to_float(c.st, v, "math." + c.name.substr(5) + "()"); }

Value fn_math_unary(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  double x = arg_float(c, args[0]);
  const std::string& f = c.data.as_str();
  double r = 0;
  if (f == "sqrt") {
    if (x < 0) raise_value_error("math domain error");
    r = std::sqrt(x);
  } else if (f == "exp") r = std::exp(x);
  else if (f == "log2" || f == "log10" || f == "log1p") {
    if ((f == "log1p" && x <= -1) || (f != "log1p" && x <= 0)) raise_value_error("math domain error");
    r = f == "log2" ? std::log2(x) : f == "log10" ? std::log10(x) : std::log1p(x);
  } else if (f == "expm1") r = std::expm1(x);
  else if (f == "sin") r = std::sin(x);
  else if (f == "cos") r = std::cos(x);
  else if (f == "tan") r = std::tan(x);
  else if (f == "asin") r = std::asin(x);
  else if (f == "acos") r = std::acos(x);
  else if (f == "atan") r = std::atan(x);
  else if (f == "sinh") r = std::sinh(x);
  else if (f == "cosh") r = std::cosh(x);
  else if (f == "tanh") r = std::tanh(x);
  else if (f == "fabs") r = std::fabs(x);
  else if (f == "erf") r = std::erf(x);
  else if (f == "degrees") r = x * 180.0 / M_PI;
  else if (f == "radians") r = x * M_PI / 180.0;
  else if (f == "isnan") return Value::boolean(std::isnan(x));
  else if (f == "isinf") return Value::boolean(std::isinf(x));
  else if (f == "isfinite") return Value::boolean(std::isfinite(x));
  else if (f == "floor" || f == "ceil" || f == "trunc") {
    if (args[0].is_int_like()) return Value::integer(args[0].as_int());
    if (!std::isfinite(x)) raise_error("OverflowError", "cannot convert float infinity to integer");
    double v = f == "floor" ? std::floor(x) : f == "ceil" ? std::ceil(x) : std::trunc(x);
    return Value::integer(static_cast<std::int64_t>(v));
  }
  return Value::floating(r);
}

Value fn_math_log(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "base"}, 1);
  double x = arg_float(c, args[0]);
  if (x <= 0) raise_value_error("math domain error");
  double r = std::log(x);
  if (args.given(1)) r /= std::log(arg_float(c, args[1]));
  return Value::floating(r);
}

Value fn_math_binary(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "y"}, 2);
  const std::string& f = c.data.as_str();
  if (f == "gcd" || f == "lcm") {
    std::int64_t x = to_int(c.st, args[0], "math.gcd()"), y = to_int(c.st, args[1], "math.gcd()");
    return Value::integer(f == "gcd" ? std::gcd(x, y) : std::lcm(x, y));
  }
  double x = arg_float(c, args[0]), y = arg_float(c, args[1]);
  if (f == "pow") return Value::floating(std::pow(x, y));
  if (f == "atan2") return Value::floating(std::atan2(x, y));
  if (f == "hypot") return Value::floating(std::hypot(x, y));
  if (f == "copysign") return Value::floating(std::copysign(x, y));
  if (f == "fmod") return Value::floating(std::fmod(x, y));
  return Value::floating(0);
}

Value fn_math_isclose(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "b", "rel_tol", "abs_tol"}, 2, 2);
  double x = arg_float(c, args[0]), y = arg_float(c, args[1]);
  double rel = args.given(2) ? arg_float(c, args[2]) : 1e-9;
  double abs_tol = args.given(3) ? arg_float(c, args[3]) : 0.0;
  if (x == y) return Value::boolean(true);
  if (std::isinf(x) || std::isinf(y)) return Value::boolean(false);
  double d = std::fabs(x - y);
  return Value::boolean(d <= std::max(rel * std::max(std::fabs(x), std::fabs(y)), abs_tol));
}

Value fn_math_prod(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable", "start"}, 1, 1);
  Value acc = args.given(1) ? args[1] : Value::integer(1);
  for (const auto& v : c.interp.iterate(c.st, args[0])) acc = binary_op(c.interp, c.st, BinOp::kMul, acc, v);
  return acc;
}

Value fn_math_fsum(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable"}, 1);
  long double s = 0;
  for (const auto& v : c.interp.iterate(c.st, args[0])) s += arg_float(c, v);
  return Value::floating(static_cast<double>(s));
}

Value fn_math_factorial(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"n"}, 1);
  std::int64_t n = to_int(c.st, args[0], "math.factorial()");
  if (n < 0) raise_value_error("factorial() not defined for negative values");
  std::int64_t r = 1;
  for (std::int64_t k = 2; k <= n; ++k) {
    if (__builtin_mul_overflow(r, k, &r)) raise_error("OverflowError", "integer overflow: spmdsim Python ints are 64-bit");
  }
  return Value::integer(r);
}

// ============================================================================
// typing

class TypingObject : public CustomObject {
 public:
  explicit TypingObject(std::string n) : name_(std::move(n)) {}
  std::string type_name() const override { return "_SpecialForm"; }
  std::string repr(ExecState&) const override { return "typing." + name_; }
  bool callable() const override { return true; }
  Value call(Interpreter&, ExecState&, const Value& self, CallArgs& args, const CallSite&) override {
    if (name_ == "cast" && args.pos.size() == 2) return args.pos[1];
    if (name_ == "NamedTuple") raise_not_implemented("typing.NamedTuple", "use a tuple or a dict");
    return self;
  }
  bool get_item(Interpreter&, ExecState& st, const Value&, Value& out) const override {
    out = Value::object(Kind::kOther, std::make_shared<TypingObject>(name_));
    return true;
  }

 private:
  std::string name_;
};

}  // namespace

Value build_functools_module(Interpreter& interp) {
  auto m = new_module("functools");
  add_fn(*m, "partial", fn_partial);
  add_fn(*m, "reduce", fn_reduce);
  add_fn(*m, "wraps", fn_identity_decorator_factory);
  add_fn(*m, "lru_cache", fn_identity_decorator_factory, Value::boolean(true));
  add_fn(*m, "cache", fn_identity_decorator_factory, Value::boolean(true));
  return Value::object(Kind::kModule, m);
}

Value build_math_module(Interpreter& interp) {
  auto m = new_module("math");
  m->set("pi", Value::floating(M_PI));
  m->set("e", Value::floating(M_E));
  m->set("tau", Value::floating(2 * M_PI));
  m->set("inf", Value::floating(INFINITY));
  m->set("nan", Value::floating(NAN));
  for (const char* f : {"sqrt", "exp", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos", "atan",
                        "sinh", "cosh", "tanh", "fabs", "erf", "degrees", "radians", "isnan", "isinf", "isfinite",
                        "floor", "ceil", "trunc"}) {
    add_fn(*m, f, fn_math_unary, Value::str(f));
  }
  for (const char* f : {"pow", "atan2", "hypot", "copysign", "fmod", "gcd", "lcm"}) add_fn(*m, f, fn_math_binary, Value::str(f));
  add_fn(*m, "log", fn_math_log);
  add_fn(*m, "isclose", fn_math_isclose);
  add_fn(*m, "prod", fn_math_prod);
  add_fn(*m, "fsum", fn_math_fsum);
  add_fn(*m, "factorial", fn_math_factorial);
  return Value::object(Kind::kModule, m);
}

namespace {

Value fn_time(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  auto now = c.data.as_int() == 0 ? std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                                  : std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch());
  return Value::floating(now.count());
}

Value fn_sleep(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"secs"}, 1);
  // Simulated devices do not wait for wall-clock time.
  to_float(c.st, args[0], "time.sleep()");
  return Value::none();
}

}  // namespace

Value build_time_module(Interpreter& interp) {
  auto m = new_module("time");
  add_fn(*m, "time", fn_time, Value::integer(0));
  add_fn(*m, "perf_counter", fn_time, Value::integer(1));
  add_fn(*m, "monotonic", fn_time, Value::integer(1));
  add_fn(*m, "sleep", fn_sleep);
  return Value::object(Kind::kModule, m);
}

Value build_typing_module(Interpreter& interp) {
  auto m = new_module("typing");
  for (const char* n : {"Any", "Optional", "Union", "List", "Dict", "Tuple", "Callable", "Sequence", "Mapping",
                        "Iterable", "Iterator", "TypeVar", "Generic", "Set", "FrozenSet", "NamedTuple", "cast",
                        "Literal", "Protocol", "Type"}) {
    m->set(n, Value::object(Kind::kOther, std::make_shared<TypingObject>(n)));
  }
  return Value::object(Kind::kModule, m);
}

}  // namespace spmd::scenario
