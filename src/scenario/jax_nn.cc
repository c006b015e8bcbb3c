// jax.nn: activations and helpers composed from core ops.

#include <cmath>

#include "scenario/interpreter.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/core/reduction.h"

namespace spmd::scenario {

namespace {

Array float_array(NativeCall& c, const Value& v) {
  Array x = to_array(c.st, v);
  return is_floating(x.dtype()) ? x : astype(x, kDefaultFloat);
}

Array weak(double d) { return Array::scalar(d, kDefaultFloat, true); }

Value nn_relu(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  Array x = to_array(c.st, args[0]);
  return Value::array(binary(BinaryOp::kMaximum, x, astype(Array::scalar_int(0, kDefaultInt), x.dtype()).with_weak_type(true)));
}

Value nn_relu6(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  Array x = float_array(c, args[0]);
  return Value::array(clip(x, weak(0.0), weak(6.0)));
}

Value nn_sigmoid(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  return Value::array(unary(UnaryOp::kLogistic, float_array(c, args[0])));
}

Value nn_silu(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  Array x = float_array(c, args[0]);
  return Value::array(binary(BinaryOp::kMultiply, x, unary(UnaryOp::kLogistic, x)));
}

Value nn_softplus(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  Array x = float_array(c, args[0]);
  // log1p(exp(-|x|)) + max(x, 0)
  Array t = unary(UnaryOp::kLog1p, unary(UnaryOp::kExp, unary(UnaryOp::kNegative, unary(UnaryOp::kAbs, x))));
  return Value::array(binary(BinaryOp::kAdd, t, binary(BinaryOp::kMaximum, x, weak(0.0))));
}

Value nn_gelu(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "approximate"}, 1);
  Array x = float_array(c, args[0]);
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  Array x3 = binary(BinaryOp::kMultiply, x, binary(BinaryOp::kMultiply, x, x));
  Array inner = binary(BinaryOp::kMultiply, weak(std::sqrt(2.0 / M_PI)),
                       binary(BinaryOp::kAdd, x, binary(BinaryOp::kMultiply, weak(0.044715), x3)));
  Array t = binary(BinaryOp::kAdd, weak(1.0), unary(UnaryOp::kTanh, inner));
  return Value::array(binary(BinaryOp::kMultiply, binary(BinaryOp::kMultiply, weak(0.5), x), t));
}

Value nn_leaky_relu(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "negative_slope"}, 1);
  Array x = float_array(c, args[0]);
  double slope = args.has(1) ? to_float(c.st, args[1], "negative_slope") : 0.01;
  return Value::array(where(binary(BinaryOp::kGreaterEqual, x, weak(0.0)), x, binary(BinaryOp::kMultiply, x, weak(slope))));
}

Value nn_elu(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "alpha"}, 1);
  Array x = float_array(c, args[0]);
  double alpha = args.has(1) ? to_float(c.st, args[1], "alpha") : 1.0;
  return Value::array(where(binary(BinaryOp::kGreater, x, weak(0.0)), x,
                    binary(BinaryOp::kMultiply, weak(alpha), unary(UnaryOp::kExpm1, x))));
}

std::vector<int> axes_arg(NativeCall& c, const Value& v) {
  if (v.is_undefined()) return {-1};
  auto axes = to_axes(c.st, v, c.name);
  return axes ? *axes : std::vector<int>{};
}

Array logsumexp_impl(const Array& x, std::optional<std::vector<int>> axes, bool keepdims) {
  Array m = reduce(ReduceOp::kMax, x, axes, true);
  Array shifted = binary(BinaryOp::kSubtract, x, m);
  Array s = unary(UnaryOp::kLog, reduce(ReduceOp::kSum, unary(UnaryOp::kExp, shifted), axes, true));
  Array r = binary(BinaryOp::kAdd, s, m);
  if (!keepdims) {
    if (!axes) return reshape(r, {});
    std::vector<int> sq = *axes;
    for (auto& ax : sq) ax = normalize_axis(ax, x.ndim(), "logsumexp");
    r = squeeze(r, sq);
  }
  return r;
}

Value nn_softmax(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "axis", "where", "initial"}, 1);
  Array x = float_array(c, args[0]);
  auto axes = args.given(1) && args[1].is_none() ? std::nullopt : std::optional<std::vector<int>>(axes_arg(c, args[1]));
  Array m = reduce(ReduceOp::kMax, x, axes, true);
  Array e = unary(UnaryOp::kExp, binary(BinaryOp::kSubtract, x, m));
  return Value::array(binary(BinaryOp::kDivide, e, reduce(ReduceOp::kSum, e, axes, true)));
}

Value nn_log_softmax(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "axis", "where", "initial"}, 1);
  Array x = float_array(c, args[0]);
  auto axes = args.given(1) && args[1].is_none() ? std::nullopt : std::optional<std::vector<int>>(axes_arg(c, args[1]));
  return Value::array(binary(BinaryOp::kSubtract, x, logsumexp_impl(x, axes, true)));
}

Value nn_logsumexp(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"a", "axis", "b", "keepdims", "return_sign"}, 1);
  Array x = float_array(c, args[0]);
  auto axes = to_axes(c.st, args[1], c.name);
  bool keepdims = args.given(3) && c.interp.truthy(c.st, args[3]);
  return Value::array(logsumexp_impl(x, axes, keepdims));
}

Value nn_one_hot(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "num_classes", "dtype", "axis"}, 2);
  Array x = to_array(c.st, args[0]);
  std::int64_t n = to_int(c.st, args[1], "num_classes");
  DType t = to_optional_dtype(args[2]).value_or(kDefaultFloat);
  int axis = args.has(3) ? static_cast<int>(to_int(c.st, args[3], "axis")) : -1;
  Array classes = arange(0, static_cast<double>(n), 1, kDefaultInt);
  Array xe = expand_dims(x, x.ndim());
  Array eq = binary(BinaryOp::kEqual, xe, classes);
  Array r = astype(eq, t);
  int rank = r.ndim();
  if (axis < 0) axis += rank;
  if (axis != rank - 1) r = moveaxis(r, rank - 1, axis);
  return Value::array(r);
}

Value nn_tanh(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  return Value::array(unary(UnaryOp::kTanh, float_array(c, args[0])));
}

}  // namespace

Value build_nn_module(Interpreter& interp) {
  auto m = std::make_shared<ModuleObject>("jax.nn");
  auto fn = [&](const std::string& n, NativeFn f) { m->set(n, make_native("jax.nn." + n, f)); };
  fn("relu", nn_relu);
  fn("relu6", nn_relu6);
  fn("sigmoid", nn_sigmoid);
  fn("silu", nn_silu);
  fn("swish", nn_silu);
  fn("softplus", nn_softplus);
  fn("gelu", nn_gelu);
  fn("leaky_relu", nn_leaky_relu);
  fn("elu", nn_elu);
  fn("softmax", nn_softmax);
  fn("log_softmax", nn_log_softmax);
  fn("logsumexp", nn_logsumexp);
  fn("one_hot", nn_one_hot);
  fn("tanh", nn_tanh);
  return Value::object(Kind::kModule, m);
}

}  // namespace spmd::scenario
