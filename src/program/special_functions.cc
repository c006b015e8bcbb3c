// The error function and its inverse (lax.erf, lax.erf_inv; jax.random's
// normal draws through erf_inv as JAX's does).

#include <cmath>

#include "program/primitive_rules.h"

namespace spmd::program::rules {

// erf_inv(x): the inverse error function, with the single-precision
// polynomials of Giles ("Approximating the erfinv function", 2010) that
// XLA uses for float32 (float64 is computed the same way in double).
namespace {
template <class T>
T erf_inv_of(T x) {
  if (std::isnan(x)) return x;
  if (std::fabs(x) >= T(1)) return std::fabs(x) == T(1) ? std::copysign(T(INFINITY), x) : T(NAN);
  T w = -std::log1p(-x * x);
  T p;
  if (w < T(5)) {
    w = w - T(2.5);
    p = T(2.81022636e-08);
    p = T(3.43273939e-07) + p * w;
    p = T(-3.5233877e-06) + p * w;
    p = T(-4.39150654e-06) + p * w;
    p = T(0.00021858087) + p * w;
    p = T(-0.00125372503) + p * w;
    p = T(-0.00417768164) + p * w;
    p = T(0.246640727) + p * w;
    p = T(1.50140941) + p * w;
  } else {
    w = std::sqrt(w) - T(3);
    p = T(-0.000200214257);
    p = T(0.000100950558) + p * w;
    p = T(0.00134934322) + p * w;
    p = T(-0.00367342844) + p * w;
    p = T(0.00573950773) + p * w;
    p = T(-0.0076224613) + p * w;
    p = T(0.00943887047) + p * w;
    p = T(1.00167406) + p * w;
    p = T(2.83297682) + p * w;
  }
  return p * x;
}

// One floating-point operand, computed per element in its own precision
// (float32 for float16/bfloat16/float32, double for float64).
std::vector<Aval> unary_float_abstract(const Primitive& p, std::span<const Aval> in) {
  if (in.size() != 1 || !is_floating(in[0].dtype)) type_error(p, "takes one floating-point operand");
  return {in[0]};
}
template <class F>
std::vector<Array> map_floats(const Array& x, F f) {
  const std::int64_t n = x.size();
  std::vector<double> out(static_cast<std::size_t>(n));
  const bool f64 = x.dtype() == DType::kFloat64;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x.element_as_double(i);
    out[static_cast<std::size_t>(i)] = f64 ? f(v) : static_cast<double>(f(static_cast<float>(v)));
  }
  return {Array::from_doubles(out, x.shape(), x.dtype()).with_weak_type(x.weak_type())};
}
}  // namespace

std::vector<Aval> erf_inv_abstract(const Primitive& p, std::span<const Aval> in, const Params&, const AxisEnv&) {
  return unary_float_abstract(p, in);
}
std::vector<Array> erf_inv_impl(const Primitive&, std::span<const Array> in, const Params&, SourceLoc) {
  return map_floats(in[0], [](auto v) { return erf_inv_of(v); });
}

// erf(x): the error function (the C library's, in the operand's precision).
std::vector<Aval> erf_abstract(const Primitive& p, std::span<const Aval> in, const Params&, const AxisEnv&) {
  return unary_float_abstract(p, in);
}
std::vector<Array> erf_impl(const Primitive&, std::span<const Array> in, const Params&, SourceLoc) {
  return map_floats(in[0], [](auto v) { return std::erf(v); });
}

}  // namespace spmd::program::rules
