// jax.numpy (also bound to `import numpy as np`) and array attributes/methods.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>

#include "scenario/builtins.h"
#include "scenario/interpreter.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/py_format.h"
#include "scenario/python_errors.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/format.h"
#include "spmd/core/layout.h"
#include "spmd/core/linalg.h"
#include "spmd/core/reduction.h"

namespace spmd::scenario {

namespace {

Array arr(NativeCall& c, const Value& v) { return to_array(c.st, v); }
bool is_python_float(const Value& v) {
  return v.is(Kind::kFloat) || (v.is(Kind::kArray) && is_floating(v.as_array().dtype()));
}

int norm_axis(const Array& x, std::int64_t axis, const char* op) {
  return normalize_axis(axis, x.ndim(), op);
}

// --- creation ---------------------------------------------------------------------

Value np_array(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"object", "dtype", "copy", "order", "ndmin"}, 1);
  Array x = to_array(c.st, args[0], to_optional_dtype(args[1]));
  if (args.has(4)) {
    std::int64_t ndmin = to_int(c.st, args[4], "ndmin");
    while (x.ndim() < ndmin) x = expand_dims(x, 0);
  }
  return Value::array(std::move(x));
}

Value np_asarray(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "dtype", "order", "copy"}, 1);
  return Value::array(to_array(c.st, args[0], to_optional_dtype(args[1])));
}

Value np_fill(NativeCall& c, CallArgs& a) {
  // zeros / ones / empty
  Args args(c, a, {"shape", "dtype", "device"}, 1);
  Shape s = to_shape(c.st, args[0], c.name);
  DType t = to_optional_dtype(args[1]).value_or(kDefaultFloat);
  return Value::array(c.data.as_int() == 1 ? ones(s, t) : zeros(s, t));
}

Value np_full(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"shape", "fill_value", "dtype", "device"}, 2);
  Shape s = to_shape(c.st, args[0], c.name);
  std::optional<DType> t = to_optional_dtype(args[2]);
  Array v = to_array(c.st, args[1], t);
  if (!t && v.weak_type()) v = v.with_weak_type(false);
  return Value::array(broadcast_to(v, s));
}

Value np_fill_like(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "dtype", "shape", "device"}, 1);
  Array x = arr(c, args[0]);
  DType t = to_optional_dtype(args[1]).value_or(x.dtype());
  Shape s = args.has(2) ? to_shape(c.st, args[2], c.name) : x.shape();
  return Value::array(c.data.as_int() == 1 ? ones(s, t) : zeros(s, t));
}

Value np_full_like(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "fill_value", "dtype", "shape"}, 2);
  Array x = arr(c, args[0]);
  DType t = to_optional_dtype(args[2]).value_or(x.dtype());
  Shape s = args.has(3) ? to_shape(c.st, args[3], c.name) : x.shape();
  return Value::array(broadcast_to(to_array(c.st, args[1], t), s));
}

double static_number(NativeCall& c, const Value& v, const char* what) {
  if (v.is(Kind::kArray) && is_traced(c.st, v.as_array())) {
    raise_concretization(c.st, v.as_array(),
                         std::string("The problem arose with the ") + what + " argument of " + c.name +
                             ", which must be static (it determines the shape of the result).");
  }
  return to_float(c.st, v, c.name);
}

Value np_arange(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"start", "stop", "step", "dtype"}, 1);
  std::optional<DType> t = to_optional_dtype(args[3]);
  bool any_float = is_python_float(args[0]) || (args.has(1) && is_python_float(args[1])) ||
                   (args.has(2) && is_python_float(args[2]));
  if (!t && any_float) t = kDefaultFloat;
  double start = 0, stop = 0, step = 1;
  if (!args.has(1)) {
    stop = static_number(c, args[0], "stop");
  } else {
    start = static_number(c, args[0], "start");
    stop = static_number(c, args[1], "stop");
  }
  if (args.has(2)) step = static_number(c, args[2], "step");
  return Value::array(arange(start, stop, step, t));
}

Value np_linspace(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"start", "stop", "num", "endpoint", "retstep", "dtype", "axis"}, 2);
  std::int64_t num = args.has(2) ? to_int(c.st, args[2], "linspace num") : 50;
  bool endpoint = !args.given(3) || c.interp.truthy(c.st, args[3]);
  DType t = to_optional_dtype(args[5]).value_or(kDefaultFloat);
  return Value::array(linspace(static_number(c, args[0], "start"), static_number(c, args[1], "stop"), num, endpoint, t));
}

Value np_eye(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"N", "M", "k", "dtype"}, 1);
  std::int64_t n = to_int(c.st, args[0], "eye N");
  std::int64_t m = args.has(1) ? to_int(c.st, args[1], "eye M") : -1;
  if (args.has(2) && to_int(c.st, args[2], "eye k") != 0) raise_not_implemented("jnp.eye(k != 0)", "use jnp.roll on jnp.eye");
  return Value::array(eye(n, m, to_optional_dtype(args[3]).value_or(kDefaultFloat)));
}

Value np_identity(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"n", "dtype"}, 1);
  return Value::array(eye(to_int(c.st, args[0], "identity n"), -1, to_optional_dtype(args[1]).value_or(kDefaultFloat)));
}

Value np_copy(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "order"}, 1);
  return Value::array(copy(arr(c, args[0])));
}

// --- elementwise ---------------------------------------------------------------------

Value np_unary(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  return Value::array(unary(static_cast<UnaryOp>(c.data.as_int()), arr(c, args[0])));
}

Value np_binary(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x1", "x2"}, 2);
  return Value::array(binary(static_cast<BinaryOp>(c.data.as_int()), arr(c, args[0]), arr(c, args[1])));
}

Value np_log_base(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  Array x = arr(c, args[0]);
  double base = c.data.as_float();
  return Value::array(binary(BinaryOp::kDivide, unary(UnaryOp::kLog, x), Array::scalar(std::log(base), kDefaultFloat, true)));
}

Value np_exp2(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  return Value::array(binary(BinaryOp::kPower, Array::scalar(2.0, kDefaultFloat, true), arr(c, args[0])));
}

Value np_round(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "decimals"}, 1);
  Array x = arr(c, args[0]);
  std::int64_t d = args.has(1) ? to_int(c.st, args[1], "decimals") : 0;
  if (d == 0) return Value::array(unary(UnaryOp::kRound, x));
  Array scale = Array::scalar(std::pow(10.0, static_cast<double>(d)), kDefaultFloat, true);
  return Value::array(binary(BinaryOp::kDivide, unary(UnaryOp::kRound, binary(BinaryOp::kMultiply, x, scale)), scale));
}

Value np_where(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"condition", "x", "y", "size", "fill_value"}, 1);
  if (!args.given(1) || !args.given(2)) {
    raise_not_implemented("jnp.where(condition) with one argument (its result shape depends on the data)",
                          "use the three-argument form jnp.where(condition, x, y)");
  }
  return Value::array(where(arr(c, args[0]), arr(c, args[1]), arr(c, args[2])));
}

Value np_clip(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "a_min", "a_max", "min", "max"}, 1, 3);
  Array x = arr(c, args[0]);
  const Value& lo = args.has(1) ? args[1] : args[3];
  const Value& hi = args.has(2) ? args[2] : args[4];
  Array l = lo.is_undefined() || lo.is_none() ? Array() : arr(c, lo);
  Array h = hi.is_undefined() || hi.is_none() ? Array() : arr(c, hi);
  return Value::array(clip(x, l, h));
}

Value np_astype(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "dtype", "copy"}, 2);
  return Value::array(astype(arr(c, args[0]), to_dtype(args[1])));
}

Value np_isclose_impl(NativeCall& c, CallArgs& a, bool all) {
  Args args(c, a, {"a", "b", "rtol", "atol", "equal_nan"}, 2);
  Array x = arr(c, args[0]);
  Array y = arr(c, args[1]);
  double rtol = args.has(2) ? to_float(c.st, args[2], "rtol") : 1e-5;
  double atol = args.has(3) ? to_float(c.st, args[3], "atol") : 1e-8;
  Array diff = unary(UnaryOp::kAbs, binary(BinaryOp::kSubtract, x, y));
  Array tol = binary(BinaryOp::kAdd, Array::scalar(atol, kDefaultFloat, true),
                     binary(BinaryOp::kMultiply, Array::scalar(rtol, kDefaultFloat, true), unary(UnaryOp::kAbs, y)));
  Array close = binary(BinaryOp::kLessEqual, diff, tol);
  if (all) return Value::array(reduce(ReduceOp::kAll, close));
  return Value::array(close);
}

Value np_isclose(NativeCall& c, CallArgs& a) { return np_isclose_impl(c, a, false); }
Value np_allclose(NativeCall& c, CallArgs& a) { return np_isclose_impl(c, a, true); }

Value np_array_equal(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a1", "a2", "equal_nan"}, 2);
  Array x = arr(c, args[0]);
  Array y = arr(c, args[1]);
  if (x.shape() != y.shape()) return Value::array(Array::scalar_int(0, DType::kBool));
  return Value::array(reduce(ReduceOp::kAll, binary(BinaryOp::kEqual, x, y)));
}

// --- reductions -------------------------------------------------------------------------

Value np_reduce(NativeCall& c, CallArgs& a) {
  auto op = static_cast<ReduceOp>(c.data.as_int());
  Args args(c, a, {"a", "axis", "dtype", "out", "keepdims", "ddof", "where", "initial"}, 1);
  Array x = arr(c, args[0]);
  if (args.has(3)) raise_not_implemented("the out= argument", "JAX arrays are immutable; use the returned value");
  if (args.has(6)) raise_not_implemented("the where= argument of reductions", "mask with jnp.where first");
  if (args.has(7)) raise_not_implemented("the initial= argument of reductions", "combine with the initial value after reducing");
  std::optional<DType> t = op == ReduceOp::kArgMax || op == ReduceOp::kArgMin ? std::nullopt : to_optional_dtype(args[2]);
  if (t) x = astype(x, *t);
  std::optional<std::vector<int>> axes = to_axes(c.st, args[1], c.name);
  bool keepdims = args.given(4) && c.interp.truthy(c.st, args[4]);
  Array r = reduce(op, x, axes, keepdims);
  if ((op == ReduceOp::kVar || op == ReduceOp::kStd) && args.has(5)) {
    std::int64_t ddof = to_int(c.st, args[5], "ddof");
    if (ddof != 0) {
      std::int64_t n = 1;
      if (!axes) {
        n = x.size();
      } else {
        for (int ax : *axes) n *= x.shape()[static_cast<std::size_t>(norm_axis(x, ax, c.name.c_str()))];
      }
      double scale = static_cast<double>(n) / static_cast<double>(n - ddof);
      Array var = op == ReduceOp::kVar ? r : binary(BinaryOp::kMultiply, r, r);
      var = binary(BinaryOp::kMultiply, var, Array::scalar(scale, kDefaultFloat, true));
      r = op == ReduceOp::kVar ? var : unary(UnaryOp::kSqrt, var);
    }
  }
  return Value::array(std::move(r));
}

Value np_cumulative(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "axis", "dtype"}, 1);
  Array x = arr(c, args[0]);
  if (auto t = to_optional_dtype(args[2])) x = astype(x, *t);
  std::optional<int> axis = to_optional_axis(c.st, args[1], c.name);
  return Value::array(c.data.as_int() == 0 ? cumsum(x, axis) : cumprod(x, axis));
}

Value np_count_nonzero(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "axis", "keepdims"}, 1);
  Array x = arr(c, args[0]);
  Array nz = binary(BinaryOp::kNotEqual, x, Array::scalar_int(0, kDefaultInt, true));
  return Value::array(reduce(ReduceOp::kSum, nz, to_axes(c.st, args[1], c.name), args.given(2) && c.interp.truthy(c.st, args[2])));
}

// --- shapes ------------------------------------------------------------------------------

Value np_reshape(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "newshape", "order", "shape"}, 1);
  const Value& s = args.given(1) ? args[1] : args[3];
  if (s.is_undefined()) raise_type_error("reshape() missing 1 required positional argument: 'shape'");
  return Value::array(reshape(arr(c, args[0]), to_shape(c.st, s, "reshape")));
}

Value np_transpose(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "axes"}, 1);
  std::vector<int> perm;
  if (args.has(1)) {
    std::vector<int> axes_list = *to_axes(c.st, args[1], "transpose");
    for (int ax : axes_list) perm.push_back(ax);
  }
  return Value::array(transpose(arr(c, args[0]), perm));
}

Value np_swapaxes(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "axis1", "axis2"}, 3);
  return Value::array(swapaxes(arr(c, args[0]), static_cast<int>(to_int(c.st, args[1], "axis1")),
                       static_cast<int>(to_int(c.st, args[2], "axis2"))));
}

Value np_moveaxis(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "source", "destination"}, 3);
  return Value::array(moveaxis(arr(c, args[0]), static_cast<int>(to_int(c.st, args[1], "source")),
                       static_cast<int>(to_int(c.st, args[2], "destination"))));
}

Value np_expand_dims(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "axis"}, 2);
  Array x = arr(c, args[0]);
  std::vector<int> axes = *to_axes(c.st, args[1], "expand_dims");
  int out_rank = x.ndim() + static_cast<int>(axes.size());
  for (auto& ax : axes) {
    if (ax < 0) ax += out_rank;
  }
  std::sort(axes.begin(), axes.end());
  for (int ax : axes) x = expand_dims(x, ax);
  return Value::array(std::move(x));
}

Value np_squeeze(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "axis"}, 1);
  std::vector<int> axes;
  if (args.has(1)) axes = *to_axes(c.st, args[1], "squeeze");
  return Value::array(squeeze(arr(c, args[0]), axes));
}

Value np_ravel(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "order"}, 1);
  return Value::array(ravel(arr(c, args[0])));
}

Value np_broadcast_to(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"array", "shape"}, 2);
  return Value::array(broadcast_to(arr(c, args[0]), to_shape(c.st, args[1], "broadcast_to")));
}

std::vector<Array> array_list(NativeCall& c, const Value& v) {
  if (v.is(Kind::kArray)) {
    std::vector<Array> out;
    for (auto& row : c.interp.iterate(c.st, v)) out.push_back(row.as_array());
    return out;
  }
  std::vector<Array> out;
  for (const auto& item : c.interp.iterate(c.st, v)) out.push_back(arr(c, item));
  // Promote to a common dtype (jnp.concatenate does).
  if (!out.empty()) {
    PromotedType pt{out[0].dtype(), out[0].weak_type()};
    for (const auto& x : out) pt = promote_weak(pt.dtype, pt.weak, x.dtype(), x.weak_type());
    for (auto& x : out) {
      if (x.dtype() != pt.dtype) x = astype(x, pt.dtype);
    }
  }
  return out;
}

Value np_concatenate(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"arrays", "axis", "dtype"}, 1);
  std::vector<Array> xs = array_list(c, args[0]);
  if (xs.empty()) raise_value_error("need at least one array to concatenate");
  if (args.given(1) && args[1].is_none()) {
    for (auto& x : xs) x = ravel(x);
    return Value::array(concatenate(xs, 0));
  }
  int axis = args.has(1) ? static_cast<int>(to_int(c.st, args[1], "axis")) : 0;
  return Value::array(concatenate(xs, axis));
}

Value np_stack(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"arrays", "axis", "out", "dtype"}, 1);
  std::vector<Array> xs = array_list(c, args[0]);
  if (xs.empty()) raise_value_error("need at least one array to stack");
  int axis = args.has(1) ? static_cast<int>(to_int(c.st, args[1], "axis")) : 0;
  return Value::array(stack(xs, axis));
}

Value np_hvstack(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"tup", "dtype"}, 1);
  std::vector<Array> xs = array_list(c, args[0]);
  if (xs.empty()) raise_value_error("need at least one array to concatenate");
  bool v = c.data.as_int() == 1;
  for (auto& x : xs) {
    if (x.ndim() == 0) x = reshape(x, {1});
    if (v && x.ndim() == 1) x = reshape(x, {1, x.shape()[0]});
  }
  return Value::array(concatenate(xs, v ? 0 : (xs[0].ndim() == 1 ? 0 : 1)));
}

Value np_split(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"ary", "indices_or_sections", "axis"}, 2);
  Array x = arr(c, args[0]);
  int axis = args.has(2) ? static_cast<int>(to_int(c.st, args[2], "axis")) : 0;
  std::vector<Value> out;
  if (args[1].is_int_like()) {
    for (auto& p : split(x, args[1].as_int(), axis)) out.push_back(Value::array(p));
    return Value::list(std::move(out), c.st.token);
  }
  int ax = norm_axis(x, axis, "split");
  std::int64_t dim = x.shape()[static_cast<std::size_t>(ax)];
  std::int64_t prev = 0;
  std::vector<std::int64_t> cuts;
  for (const auto& v : c.interp.iterate(c.st, args[1])) cuts.push_back(to_int(c.st, v, "split indices"));
  cuts.push_back(dim);
  for (std::int64_t cut : cuts) {
    std::vector<IndexItem> items(static_cast<std::size_t>(ax), IndexItem::slice());
    items.push_back(IndexItem::slice(prev, std::max(prev, std::min(cut, dim))));
    out.push_back(Value::array(index(x, items)));
    prev = std::max(prev, std::min(cut, dim));
  }
  return Value::list(std::move(out), c.st.token);
}

Value np_flip(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"m", "axis"}, 1);
  Array x = arr(c, args[0]);
  if (!c.data.is_undefined()) return Value::array(flip(x, static_cast<int>(c.data.as_int())));
  if (args.has(1) && (args[1].is(Kind::kTuple) || args[1].is(Kind::kList))) {
    std::vector<int> axes_list = *to_axes(c.st, args[1], "flip");
    for (int ax : axes_list) x = flip(x, ax);
    return Value::array(std::move(x));
  }
  return Value::array(flip(x, to_optional_axis(c.st, args[1], "flip")));
}

Value np_tile(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"A", "reps"}, 2);
  return Value::array(tile(arr(c, args[0]), to_shape(c.st, args[1], "tile")));
}

Value np_repeat(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "repeats", "axis", "total_repeat_length"}, 2);
  return Value::array(repeat(arr(c, args[0]), to_int(c.st, args[1], "repeats"), to_optional_axis(c.st, args[2], "repeat")));
}

Value np_roll(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "shift", "axis"}, 2);
  Array x = arr(c, args[0]);
  if (args[1].is(Kind::kTuple) || args[1].is(Kind::kList)) {
    auto shifts = c.interp.iterate(c.st, args[1]);
    auto axes = *to_axes(c.st, args[2], "roll");
    if (shifts.size() != axes.size()) raise_value_error("roll: shift and axis must have the same length");
    for (std::size_t i = 0; i < shifts.size(); ++i) x = roll(x, to_int(c.st, shifts[i], "roll shift"), axes[i]);
    return Value::array(std::move(x));
  }
  return Value::array(roll(x, to_int(c.st, args[1], "roll shift"), to_optional_axis(c.st, args[2], "roll")));
}

Value np_take(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "indices", "axis", "out", "mode", "fill_value"}, 2);
  return Value::array(take(arr(c, args[0]), arr(c, args[1]), to_optional_axis(c.st, args[2], "take")));
}

Value np_pad(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"array", "pad_width", "mode", "constant_values"}, 2);
  Array x = arr(c, args[0]);
  if (args.has(2) && to_str(args[2], "mode") != "constant") raise_not_implemented("jnp.pad modes other than 'constant'");
  double fill = args.has(3) ? to_float(c.st, args[3], "constant_values") : 0.0;
  // pad_width: int, (before, after), or ((b0, a0), (b1, a1), ...)
  std::vector<std::pair<std::int64_t, std::int64_t>> widths(static_cast<std::size_t>(x.ndim()));
  const Value& pw = args[1];
  if (pw.is_int_like()) {
    for (auto& w : widths) w = {pw.as_int(), pw.as_int()};
  } else {
    auto outer = c.interp.iterate(c.st, pw);
    bool nested = !outer.empty() && (outer[0].is(Kind::kTuple) || outer[0].is(Kind::kList));
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const Value& entry = nested ? outer[outer.size() == 1 ? 0 : i] : pw;
      auto ba = c.interp.iterate(c.st, entry);
      std::int64_t b = to_int(c.st, ba.at(0), "pad_width");
      widths[i] = {b, ba.size() > 1 ? to_int(c.st, ba[1], "pad_width") : b};
    }
  }
  for (int ax = 0; ax < x.ndim(); ++ax) {
    auto [b, e] = widths[static_cast<std::size_t>(ax)];
    if (b == 0 && e == 0) continue;
    Shape sb = x.shape(), se = x.shape();
    sb[static_cast<std::size_t>(ax)] = b;
    se[static_cast<std::size_t>(ax)] = e;
    x = concatenate({full(sb, fill, x.dtype()), x, full(se, fill, x.dtype())}, ax);
  }
  return Value::array(std::move(x));
}

// --- linear algebra -------------------------------------------------------------------------

Value np_dot(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "b", "precision", "preferred_element_type"}, 2);
  int which = static_cast<int>(c.data.as_int());
  Array x = arr(c, args[0]);
  Array y = arr(c, args[1]);
  if (which == 0) return Value::array(dot(x, y));
  if (which == 1) return Value::array(matmul(x, y));
  if (which == 2) return Value::array(outer(x, y));
  return Value::array(dot(ravel(x), ravel(y)));  // vdot
}

Value np_norm(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "ord", "axis", "keepdims"}, 1);
  if (args.has(1) && !(args[1].is_int_like() && args[1].as_int() == 2) &&
      !(args[1].is(Kind::kStr) && args[1].as_str() == "fro")) {
    raise_not_implemented("jnp.linalg.norm with ord other than 2 / 'fro'", "compute the norm with jnp operations");
  }
  Array x = arr(c, args[0]);
  if (!is_floating(x.dtype())) x = astype(x, kDefaultFloat);
  Array sq = binary(BinaryOp::kMultiply, x, x);
  return Value::array(unary(UnaryOp::kSqrt, reduce(ReduceOp::kSum, sq, to_axes(c.st, args[2], "norm"),
                                           args.given(3) && c.interp.truthy(c.st, args[3]))));
}

// einsum by direct summation over every label (the operands of scenarios are small).
Value np_einsum(NativeCall& c, CallArgs& a) {
  if (a.pos.empty() || !a.pos[0].is(Kind::kStr)) raise_type_error("einsum() expects the subscripts string first");
  for (auto& [k, v] : a.kw) {
    if (k != "optimize" && k != "precision" && k != "preferred_element_type") {
      raise_type_error("einsum() got an unexpected keyword argument '" + k + "'");
    }
  }
  std::string spec;
  for (char ch : a.pos[0].as_str()) {
    if (ch != ' ') spec += ch;
  }
  if (spec.find("...") != std::string::npos) raise_not_implemented("jnp.einsum with '...'", "name every axis");
  std::vector<Array> ops;
  for (std::size_t i = 1; i < a.pos.size(); ++i) {
    ops.push_back(arr(c, a.pos[i]));
    check_placement(ops.back(), "einsum");
  }
  std::size_t arrow = spec.find("->");
  std::string lhs = spec.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    std::size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ops.size()) {
    raise_value_error("einsum(): " + std::to_string(terms.size()) + " subscript terms for " +
                      std::to_string(ops.size()) + " operands");
  }
  std::map<char, std::int64_t> size;
  std::map<char, int> count;
  std::string labels;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    if (static_cast<int>(terms[k].size()) != ops[k].ndim()) {
      raise_value_error("einsum(): operand " + std::to_string(k) + " has " + std::to_string(ops[k].ndim()) +
                        " dimensions but subscripts '" + terms[k] + "'");
    }
    for (std::size_t d = 0; d < terms[k].size(); ++d) {
      char l = terms[k][d];
      if (!std::isalpha(static_cast<unsigned char>(l))) raise_value_error(std::string("einsum(): invalid subscript '") + l + "'");
      std::int64_t n = ops[k].shape()[d];
      auto it = size.find(l);
      if (it != size.end() && it->second != n) {
        raise_value_error(std::string("einsum(): size of label '") + l + "' differs between operands (" +
                          std::to_string(it->second) + " vs " + std::to_string(n) + ")");
      }
      if (it == size.end()) labels += l;
      size[l] = n;
      ++count[l];
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = spec.substr(arrow + 2);
    for (char l : out) {
      if (!size.count(l)) raise_value_error(std::string("einsum(): output label '") + l + "' is not in the inputs");
    }
  } else {
    for (const auto& [l, n] : count) {
      if (n == 1) out += l;
    }
  }
  std::string order = out;
  for (char l : labels) {
    if (out.find(l) == std::string::npos) order += l;
  }
  double work = 1;
  for (char l : order) work *= static_cast<double>(size[l]);
  if (work > 1e8) raise_not_implemented("jnp.einsum on operands this large", "use jnp.dot / jnp.matmul");
  // strides[k][j]: how far operand k moves when label order[j] advances.
  std::vector<std::vector<double>> data;
  std::vector<std::vector<std::int64_t>> strides;
  DType t = ops.empty() ? kDefaultFloat : ops[0].dtype();
  for (std::size_t k = 0; k < ops.size(); ++k) {
    data.push_back(ops[k].to_doubles());
    std::vector<std::int64_t> rm = row_major_strides(ops[k].shape());
    std::vector<std::int64_t> st(order.size(), 0);
    for (std::size_t d = 0; d < terms[k].size(); ++d) st[order.find(terms[k][d])] += rm[d];
    strides.push_back(std::move(st));
    if (k > 0) t = promote_types(t, ops[k].dtype());
  }
  Shape out_shape;
  for (char l : out) out_shape.push_back(size[l]);
  std::int64_t out_n = num_elements(out_shape);
  std::int64_t inner = 1;
  for (std::size_t j = out.size(); j < order.size(); ++j) inner *= size[order[j]];
  std::vector<double> result(static_cast<std::size_t>(out_n), 0.0);
  std::vector<std::int64_t> idx(order.size(), 0);
  std::vector<std::int64_t> off(ops.size(), 0);
  for (std::int64_t o = 0; o < out_n; ++o) {
    double acc = 0;
    for (std::int64_t s = 0; s < inner; ++s) {
      double prod = 1;
      for (std::size_t k = 0; k < ops.size(); ++k) prod *= data[k][static_cast<std::size_t>(off[k])];
      acc += prod;
      // odometer over all labels, innermost (last) first
      for (std::size_t j = order.size(); j-- > 0;) {
        std::int64_t n = size[order[j]];
        ++idx[j];
        for (std::size_t k = 0; k < ops.size(); ++k) off[k] += strides[k][j];
        if (idx[j] < n) break;
        for (std::size_t k = 0; k < ops.size(); ++k) off[k] -= strides[k][j] * n;
        idx[j] = 0;
      }
    }
    result[static_cast<std::size_t>(o)] = acc;
  }
  if (t == DType::kBool) t = kDefaultInt;
  return Value::array(Array::from_doubles(result, out_shape, t));
}

// --- sorting (by value, on the calling device) ------------------------------------------------

Value np_sort_impl(NativeCall& c, CallArgs& a, bool arg) {
  Args args(c, a, {"a", "axis", "kind", "order", "stable", "descending"}, 1);
  Array x = arr(c, args[0]);
  bool flatten = args.given(1) && args[1].is_none();
  if (flatten) x = ravel(x);
  int axis = flatten ? 0 : norm_axis(x, args.has(1) ? to_int(c.st, args[1], "axis") : -1, c.name.c_str());
  bool descending = args.given(5) && c.interp.truthy(c.st, args[5]);
  check_placement(x, c.name);
  Array moved = moveaxis(x, axis, -1);
  std::int64_t n = moved.ndim() == 0 ? 1 : moved.shape().back();
  std::int64_t rows = n == 0 ? 0 : moved.size() / n;
  std::vector<double> vals = moved.to_doubles();
  std::vector<std::int64_t> idx_out(vals.size());
  std::vector<double> val_out(vals.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    const double* row = vals.data() + r * n;
    std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t i, std::int64_t j) {
      double u = row[i], v = row[j];
      if (std::isnan(u)) return false;
      if (std::isnan(v)) return true;
      return descending ? u > v : u < v;
    });
    for (std::int64_t k = 0; k < n; ++k) {
      idx_out[static_cast<std::size_t>(r * n + k)] = idx[static_cast<std::size_t>(k)];
      val_out[static_cast<std::size_t>(r * n + k)] = row[idx[static_cast<std::size_t>(k)]];
    }
  }
  Array result = arg ? Array::from_int64s(idx_out, moved.shape(), kDefaultInt)
                     : Array::from_doubles(val_out, moved.shape(), moved.dtype());
  return Value::array(moveaxis(result, -1, axis));
}

Value np_sort(NativeCall& c, CallArgs& a) { return np_sort_impl(c, a, false); }
Value np_argsort(NativeCall& c, CallArgs& a) { return np_sort_impl(c, a, true); }

Value np_unique(NativeCall& c, CallArgs& a) {
  raise_not_implemented("jnp.unique (its result shape depends on the data)",
                        "JAX needs a static size=...: compute what you need with sorting and comparisons");
}

// --- shape queries and dtype helpers ---------------------------------------------------------

Value np_shape(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a"}, 1);
  Array x = arr(c, args[0]);
  int which = static_cast<int>(c.data.as_int());
  if (which == 0) return shape_value(x.shape());
  if (which == 1) return Value::integer(x.ndim());
  return Value::integer(x.size());
}

Value np_dtype(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"obj"}, 1);
  if (args[0].is(Kind::kArray)) return Value::dtype(args[0].as_array().dtype());
  return Value::dtype(to_dtype(args[0]));
}

Value np_promote_types(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "b"}, 2);
  return Value::dtype(promote_types(to_dtype(args[0]), to_dtype(args[1])));
}

Value np_result_type(NativeCall& c, CallArgs& a) {
  if (a.pos.empty()) raise_value_error("at least one array or dtype is required");
  PromotedType pt{DType::kBool, true};
  bool first = true;
  for (const auto& v : a.pos) {
    DType t;
    bool weak = false;
    if (v.is(Kind::kDType) || v.is(Kind::kType) || v.is(Kind::kStr)) {
      t = to_dtype(v);
    } else {
      Array x = arr(c, v);
      t = x.dtype();
      weak = x.weak_type();
    }
    pt = first ? PromotedType{t, weak} : promote_weak(pt.dtype, pt.weak, t, weak);
    first = false;
  }
  return Value::dtype(pt.dtype);
}

class FInfo : public CustomObject {
 public:
  explicit FInfo(DType t) : t_(t) {}
  std::string type_name() const override { return is_floating(t_) ? "finfo" : "iinfo"; }
  std::string repr(ExecState&) const override { return type_name() + "(dtype=" + std::string(dtype_name(t_)) + ")"; }
  bool get_attr(Interpreter&, ExecState&, const Value&, const std::string& name, Value& out) const override {
    if (name == "dtype") return out = Value::dtype(t_), true;
    if (name == "bits") return out = Value::integer(static_cast<std::int64_t>(dtype_size(t_) * 8)), true;
    if (is_integer(t_)) {
      bool i64 = t_ == DType::kInt64;
      if (name == "max") return out = Value::integer(i64 ? INT64_MAX : INT32_MAX), true;
      if (name == "min") return out = Value::integer(i64 ? INT64_MIN : INT32_MIN), true;
      return false;
    }
    double eps = 0, mx = 0, tiny = 0;
    switch (t_) {
      case DType::kFloat16: eps = 0.0009765625; mx = 65504.0; tiny = 6.103515625e-05; break;
      case DType::kBFloat16: eps = 0.0078125; mx = 3.3895313892515355e38; tiny = 1.1754943508222875e-38; break;
      case DType::kFloat64: eps = 2.220446049250313e-16; mx = 1.7976931348623157e308; tiny = 2.2250738585072014e-308; break;
      default: eps = 1.1920928955078125e-07; mx = 3.4028234663852886e38; tiny = 1.1754943508222875e-38; break;
    }
    if (name == "eps") return out = Value::array(Array::scalar(eps, t_)), true;
    if (name == "max") return out = Value::array(Array::scalar(mx, t_)), true;
    if (name == "min") return out = Value::array(Array::scalar(-mx, t_)), true;
    if (name == "tiny" || name == "smallest_normal") return out = Value::array(Array::scalar(tiny, t_)), true;
    return false;
  }

 private:
  DType t_;
};

Value np_finfo(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"dtype"}, 1);
  DType t = args[0].is(Kind::kArray) ? args[0].as_array().dtype() : to_dtype(args[0]);
  bool want_float = c.data.as_int() == 0;
  if (want_float != is_floating(t)) {
    raise_value_error(std::string("data type ") + std::string(dtype_name(t)) + " not " + (want_float ? "inexact" : "an integer"));
  }
  return Value::object(Kind::kOther, std::make_shared<FInfo>(t));
}

// --- the .at[] helper -------------------------------------------------------------------------

class AtIndexed : public CustomObject {
 public:
  AtIndexed(Array x, Value index) : x_(std::move(x)), index_(std::move(index)) {}
  std::string type_name() const override { return "_IndexUpdateRef"; }
  std::string repr(ExecState&) const override { return "_IndexUpdateRef(" + x_.abstract_type() + ")"; }
  bool get_attr(Interpreter&, ExecState&, const Value& self, const std::string& name, Value& out) const override {
    static const char* kModes[] = {"set", "add", "multiply", "mul", "min", "max", "get", "divide", "power", "apply"};
    for (const char* m : kModes) {
      if (name == m) return out = make_native(std::string("_IndexUpdateRef.") + m, update, self, Value::str(m)), true;
    }
    return false;
  }

 private:
  static Value update(NativeCall& c, CallArgs& a) {
    const auto& me = static_cast<const AtIndexed&>(c.self.as<CustomObject>());
    const std::string& mode = c.data.as_str();
    Array take_idx;
    int take_axis = -1;
    std::vector<IndexItem> items = to_index(c.st, me.x_, me.index_, &take_idx, &take_axis);
    if (mode == "get") {
      Args args(c, a, {"indices_are_sorted", "unique_indices", "mode", "fill_value"}, 0);
      Array r = index(me.x_, items);
      if (take_idx.valid()) r = take(r, take_idx, take_axis);
      return Value::array(std::move(r));
    }
    if (take_idx.valid()) {
      raise_not_implemented("x.at[...] updates with integer-array indices (scatter)",
                            "update one index at a time, or build the result with jnp.where");
    }
    Args args(c, a, {"values", "indices_are_sorted", "unique_indices", "mode"}, 1);
    if (mode == "apply") {
      Array region = index(me.x_, items);
      CallArgs call_args;
      call_args.pos.push_back(Value::array(region));
      Value r = c.interp.call(c.st, args[0], call_args, c.site);
      Array v = to_array(c.st, r);
      if (v.dtype() != me.x_.dtype()) v = astype(v, me.x_.dtype());
      return Value::array(index_update(me.x_, items, v, UpdateMode::kSet));
    }
    Array v = to_array(c.st, args[0]);
    if (mode == "divide" || mode == "power") {
      Array region = index(me.x_, items);
      Array combined = binary(mode == "divide" ? BinaryOp::kDivide : BinaryOp::kPower, region, v);
      if (combined.dtype() != me.x_.dtype()) combined = astype(combined, me.x_.dtype());
      return Value::array(index_update(me.x_, items, combined, UpdateMode::kSet));
    }
    if (v.dtype() != me.x_.dtype()) v = astype(v, me.x_.dtype());
    UpdateMode m = mode == "set" ? UpdateMode::kSet
                   : mode == "add" ? UpdateMode::kAdd
                   : (mode == "multiply" || mode == "mul") ? UpdateMode::kMultiply
                   : mode == "min" ? UpdateMode::kMin
                                   : UpdateMode::kMax;
    return Value::array(index_update(me.x_, items, v, m));
  }

  Array x_;
  Value index_;
};

class AtHelper : public CustomObject {
 public:
  explicit AtHelper(Array x) : x_(std::move(x)) {}
  std::string type_name() const override { return "_IndexUpdateHelper"; }
  std::string repr(ExecState&) const override { return "_IndexUpdateHelper(" + x_.abstract_type() + ")"; }
  bool get_item(Interpreter&, ExecState&, const Value& index, Value& out) const override {
    out = Value::object(Kind::kOther, std::make_shared<AtIndexed>(x_, index));
    return true;
  }

 private:
  Array x_;
};

// --- array methods ------------------------------------------------------------------------------

// Calls the jnp function stored in `data` with the receiver as first argument.
Value method_trampoline(NativeCall& c, CallArgs& a) {
  a.pos.insert(a.pos.begin(), c.self);
  return c.interp.call(c.st, c.data, a, c.site);
}

Value m_reshape(NativeCall& c, CallArgs& a) {
  Value shape;
  std::vector<Value> pos = a.pos;
  for (auto& [k, v] : a.kw) {
    if (k == "shape" || k == "newshape") shape = v;
    else if (k != "order") raise_type_error("reshape() got an unexpected keyword argument '" + k + "'");
  }
  if (shape.is_undefined()) {
    if (pos.size() == 1) shape = pos[0];
    else shape = Value::tuple(pos);
  }
  return Value::array(reshape(c.self.as_array(), to_shape(c.st, shape, "reshape")));
}

Value m_transpose(NativeCall& c, CallArgs& a) {
  std::vector<int> perm;
  if (a.pos.size() == 1 && !a.pos[0].is_none()) {
    std::vector<int> axes_list = *to_axes(c.st, a.pos[0], "transpose");
    for (int ax : axes_list) perm.push_back(ax);
  } else if (a.pos.size() > 1) {
    for (const auto& v : a.pos) perm.push_back(static_cast<int>(to_int(c.st, v, "transpose")));
  }
  return Value::array(transpose(c.self.as_array(), perm));
}

Value m_item(NativeCall& c, CallArgs& a) {
  const Array& x = c.self.as_array();
  if (is_traced(c.st, x)) raise_concretization(c.st, x, "The problem arose with the `item` method, which needs a concrete value.");
  if (!a.pos.empty()) {
    std::int64_t i = to_int(c.st, a.pos[0], "item()");
    if (i < 0) i += x.size();
    if (i < 0 || i >= x.size()) raise_error("IndexError", "index " + std::to_string(i) + " is out of bounds for size " + std::to_string(x.size()));
    return array_to_scalar(reshape(index(ravel(x), {IndexItem::at(i)}), {}));
  }
  if (x.size() != 1) raise_value_error("can only convert an array of size 1 to a Python scalar");
  return array_to_scalar(x);
}

Value to_list_rec(ExecState& st, const Array& x, std::int64_t& flat, std::size_t dim) {
  if (dim == x.shape().size()) {
    Value v;
    if (x.dtype() == DType::kBool) v = Value::boolean(x.element_as_bool(flat));
    else if (is_integer(x.dtype())) v = Value::integer(x.element_as_int64(flat));
    else v = Value::floating(x.element_as_double(flat));
    ++flat;
    return v;
  }
  std::vector<Value> items;
  for (std::int64_t i = 0; i < x.shape()[dim]; ++i) items.push_back(to_list_rec(st, x, flat, dim + 1));
  return Value::list(std::move(items), st.token);
}

Value m_tolist(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  const Array& x = c.self.as_array();
  if (is_traced(c.st, x)) raise_concretization(c.st, x, "The problem arose with the `tolist` method, which needs concrete values.");
  std::int64_t flat = 0;
  return to_list_rec(c.st, x, flat, 0);
}

Value m_identity(NativeCall& c, CallArgs& a) { return c.self; }

}  // namespace

// ============================================================================
// public hooks

Value dtype_call(Interpreter& interp, ExecState& st, DType dtype, CallArgs& args) {
  if (!args.kw.empty() || args.pos.size() > 1) raise_type_error(std::string(dtype_name(dtype)) + "() takes at most 1 argument");
  if (args.pos.empty()) return Value::array(zeros({}, dtype));
  const Value& v = args.pos[0];
  if (v.is(Kind::kStr)) {
    double d = std::strtod(v.as_str().c_str(), nullptr);
    return Value::array(astype(Array::scalar(d, DType::kFloat64), dtype));
  }
  Array x = to_array(st, v, dtype);
  return Value::array(x.weak_type() ? x.with_weak_type(false) : x);
}

bool array_attribute(Interpreter& interp, ExecState& st, const Value& self, const std::string& name, Value& out) {
  const Array& x = self.as_array();
  if (name == "shape") return out = shape_value(x.shape()), true;
  if (name == "ndim") return out = Value::integer(x.ndim()), true;
  if (name == "size") return out = Value::integer(x.size()), true;
  if (name == "dtype") return out = Value::dtype(x.dtype()), true;
  if (name == "T") return out = Value::array(transpose(x)), true;
  if (name == "mT") return out = Value::array(swapaxes(x, -1, -2)), true;
  if (name == "at") return out = Value::object(Kind::kOther, std::make_shared<AtHelper>(x)), true;
  if (name == "itemsize") return out = Value::integer(static_cast<std::int64_t>(dtype_size(x.dtype()))), true;
  if (name == "nbytes") return out = Value::integer(static_cast<std::int64_t>(x.nbytes())), true;
  if (name == "weak_type") return out = Value::boolean(x.weak_type()), true;
  if (name == "real") return out = self, true;
  auto method = [&](NativeFn fn) {
    out = make_native("ArrayImpl." + name, fn, self);
    return true;
  };
  if (name == "reshape") return method(m_reshape);
  if (name == "transpose") return method(m_transpose);
  if (name == "item") return method(m_item);
  if (name == "tolist") return method(m_tolist);
  if (name == "block_until_ready" || name == "copy" || name == "conj" || name == "conjugate") return method(m_identity);
  // Methods with the signature of their jnp counterpart.
  static const char* kForward[][2] = {
      {"sum", "sum"},         {"mean", "mean"},       {"max", "max"},           {"min", "min"},
      {"prod", "prod"},       {"argmax", "argmax"},   {"argmin", "argmin"},     {"any", "any"},
      {"all", "all"},         {"var", "var"},         {"std", "std"},           {"cumsum", "cumsum"},
      {"cumprod", "cumprod"}, {"astype", "astype"},   {"flatten", "ravel"},     {"ravel", "ravel"},
      {"squeeze", "squeeze"}, {"clip", "clip"},       {"dot", "dot"},           {"round", "round"},
      {"swapaxes", "swapaxes"}, {"repeat", "repeat"}, {"take", "take"},         {"sort", "sort"},
      {"argsort", "argsort"},
  };
  for (const auto& f : kForward) {
    if (name == f[0]) {
      Value np = interp.module("jax.numpy");
      const Value* fn = np.as<ModuleObject>().attrs.find(Value::str(f[1]));
      out = make_native(std::string("ArrayImpl.") + f[0], method_trampoline, self, *fn);
      return true;
    }
  }
  (void)st;
  return false;
}

Value build_numpy_module(Interpreter& interp, const std::string& name) {
  auto m = std::make_shared<ModuleObject>(name);
  auto fn = [&](const std::string& n, NativeFn f, Value data = {}) {
    m->set(n, make_native(name + "." + n, f, Value(), std::move(data)));
  };
  fn("array", np_array);
  fn("asarray", np_asarray);
  fn("zeros", np_fill, Value::integer(0));
  fn("empty", np_fill, Value::integer(0));
  fn("ones", np_fill, Value::integer(1));
  fn("full", np_full);
  fn("zeros_like", np_fill_like, Value::integer(0));
  fn("empty_like", np_fill_like, Value::integer(0));
  fn("ones_like", np_fill_like, Value::integer(1));
  fn("full_like", np_full_like);
  fn("arange", np_arange);
  fn("linspace", np_linspace);
  fn("eye", np_eye);
  fn("identity", np_identity);
  fn("copy", np_copy);
  static const std::pair<const char*, UnaryOp> kUnary[] = {
      {"negative", UnaryOp::kNegative}, {"positive", UnaryOp::kPositive}, {"abs", UnaryOp::kAbs},
      {"absolute", UnaryOp::kAbs},      {"fabs", UnaryOp::kAbs},          {"sign", UnaryOp::kSign},
      {"exp", UnaryOp::kExp},           {"log", UnaryOp::kLog},           {"log1p", UnaryOp::kLog1p},
      {"expm1", UnaryOp::kExpm1},       {"sqrt", UnaryOp::kSqrt},         {"square", UnaryOp::kSquare},
      {"sin", UnaryOp::kSin},           {"cos", UnaryOp::kCos},           {"tan", UnaryOp::kTan},
      {"tanh", UnaryOp::kTanh},         {"sinh", UnaryOp::kSinh},         {"cosh", UnaryOp::kCosh},
      {"arcsin", UnaryOp::kArcsin},     {"arccos", UnaryOp::kArccos},     {"arctan", UnaryOp::kArctan},
      {"floor", UnaryOp::kFloor},       {"ceil", UnaryOp::kCeil},         {"rint", UnaryOp::kRound},
      {"logical_not", UnaryOp::kLogicalNot}, {"bitwise_not", UnaryOp::kBitwiseNot}, {"invert", UnaryOp::kBitwiseNot},
      {"isnan", UnaryOp::kIsNan},       {"isinf", UnaryOp::kIsInf},       {"isfinite", UnaryOp::kIsFinite},
      {"reciprocal", UnaryOp::kReciprocal},
  };
  for (const auto& [n, op] : kUnary) fn(n, np_unary, Value::integer(static_cast<std::int64_t>(op)));
  static const std::pair<const char*, BinaryOp> kBinary[] = {
      {"add", BinaryOp::kAdd},           {"subtract", BinaryOp::kSubtract},     {"multiply", BinaryOp::kMultiply},
      {"divide", BinaryOp::kDivide},     {"true_divide", BinaryOp::kDivide},    {"floor_divide", BinaryOp::kFloorDivide},
      {"mod", BinaryOp::kRemainder},     {"remainder", BinaryOp::kRemainder},   {"power", BinaryOp::kPower},
      {"pow", BinaryOp::kPower},         {"maximum", BinaryOp::kMaximum},       {"minimum", BinaryOp::kMinimum},
      {"fmax", BinaryOp::kMaximum},      {"fmin", BinaryOp::kMinimum},          {"equal", BinaryOp::kEqual},
      {"not_equal", BinaryOp::kNotEqual}, {"less", BinaryOp::kLess},            {"less_equal", BinaryOp::kLessEqual},
      {"greater", BinaryOp::kGreater},   {"greater_equal", BinaryOp::kGreaterEqual},
      {"logical_and", BinaryOp::kLogicalAnd}, {"logical_or", BinaryOp::kLogicalOr}, {"logical_xor", BinaryOp::kLogicalXor},
      {"bitwise_and", BinaryOp::kBitwiseAnd}, {"bitwise_or", BinaryOp::kBitwiseOr}, {"bitwise_xor", BinaryOp::kBitwiseXor},
      {"arctan2", BinaryOp::kArctan2},
  };
  for (const auto& [n, op] : kBinary) fn(n, np_binary, Value::integer(static_cast<std::int64_t>(op)));
  fn("log2", np_log_base, Value::floating(2.0));
  fn("log10", np_log_base, Value::floating(10.0));
  fn("exp2", np_exp2);
  fn("round", np_round);
  fn("around", np_round);
  fn("where", np_where);
  fn("clip", np_clip);
  fn("astype", np_astype);
  fn("isclose", np_isclose);
  fn("allclose", np_allclose);
  fn("array_equal", np_array_equal);
  static const std::pair<const char*, ReduceOp> kReduce[] = {
      {"sum", ReduceOp::kSum},       {"prod", ReduceOp::kProd},     {"max", ReduceOp::kMax},
      {"amax", ReduceOp::kMax},      {"min", ReduceOp::kMin},       {"amin", ReduceOp::kMin},
      {"mean", ReduceOp::kMean},     {"any", ReduceOp::kAny},       {"all", ReduceOp::kAll},
      {"argmax", ReduceOp::kArgMax}, {"argmin", ReduceOp::kArgMin}, {"var", ReduceOp::kVar},
      {"std", ReduceOp::kStd},
  };
  for (const auto& [n, op] : kReduce) fn(n, np_reduce, Value::integer(static_cast<std::int64_t>(op)));
  fn("cumsum", np_cumulative, Value::integer(0));
  fn("cumprod", np_cumulative, Value::integer(1));
  fn("count_nonzero", np_count_nonzero);
  fn("reshape", np_reshape);
  fn("transpose", np_transpose);
  fn("swapaxes", np_swapaxes);
  fn("moveaxis", np_moveaxis);
  fn("expand_dims", np_expand_dims);
  fn("squeeze", np_squeeze);
  fn("ravel", np_ravel);
  fn("broadcast_to", np_broadcast_to);
  fn("concatenate", np_concatenate);
  fn("stack", np_stack);
  fn("hstack", np_hvstack, Value::integer(0));
  fn("vstack", np_hvstack, Value::integer(1));
  fn("split", np_split);
  fn("flip", np_flip);
  fn("fliplr", np_flip, Value::integer(1));
  fn("flipud", np_flip, Value::integer(0));
  fn("tile", np_tile);
  fn("repeat", np_repeat);
  fn("roll", np_roll);
  fn("take", np_take);
  fn("pad", np_pad);
  fn("dot", np_dot, Value::integer(0));
  fn("matmul", np_dot, Value::integer(1));
  fn("outer", np_dot, Value::integer(2));
  fn("vdot", np_dot, Value::integer(3));
  fn("inner", np_dot, Value::integer(0));
  fn("einsum", np_einsum);
  fn("sort", np_sort);
  fn("argsort", np_argsort);
  fn("unique", np_unique);
  fn("shape", np_shape, Value::integer(0));
  fn("ndim", np_shape, Value::integer(1));
  fn("size", np_shape, Value::integer(2));
  fn("dtype", np_dtype);
  fn("promote_types", np_promote_types);
  fn("result_type", np_result_type);
  fn("finfo", np_finfo, Value::integer(0));
  fn("iinfo", np_finfo, Value::integer(1));
  static const std::pair<const char*, DType> kTypes[] = {
      {"bool_", DType::kBool},       {"int32", DType::kInt32},     {"int64", DType::kInt64},
      {"float16", DType::kFloat16},  {"bfloat16", DType::kBFloat16}, {"float32", DType::kFloat32},
      {"float64", DType::kFloat64},  {"int_", DType::kInt32},      {"float_", DType::kFloat32},
  };
  for (const auto& [n, t] : kTypes) m->set(n, Value::dtype(t));
  m->set("pi", Value::floating(M_PI));
  m->set("e", Value::floating(M_E));
  m->set("inf", Value::floating(INFINITY));
  m->set("nan", Value::floating(NAN));
  m->set("newaxis", Value::none());
  m->set("ndarray", array_type());
  auto linalg = std::make_shared<ModuleObject>(name + ".linalg");
  linalg->set("norm", make_native(name + ".linalg.norm", np_norm));
  m->set("linalg", Value::object(Kind::kModule, linalg));
  return Value::object(Kind::kModule, m);
}

}  // namespace spmd::scenario
