#pragma once
// float32 exp, log, tanh and logistic, written so that a loop over them
// vectorizes: no branches (both sides of each case are computed and one is
// selected), no library calls, integer work in 32 bits. glibc's expf / logf /
// tanhf are scalar calls; over an array these are several times faster (see
// tools/bench/HISTORY.md), as XLA's own vectorized approximations are.
//
// Accuracy, measured over all 2^32 float32 inputs against the correctly
// rounded result (tests/unit/core/float_math_test.cc sweeps a fixed subset):
// exp, log and tanh within 1 ulp, logistic within 3 ulp; the special values
// (nan, +-inf, +-0, subnormals, overflow and underflow) are right. The polynomials are least-squares fits of our own (near minimax) on
// the reduced ranges below.
//
// The text is shared with the CUDA kernels (built there with --fmad=false),
// so a GPU device computes the same bits as the host.

#include <cstdint>

#include "core/scalar_rules.h"

namespace spmd::rules {

namespace float_math_detail {

// exp(r) = 1 + r + r^2 * P(r) on |r| <= ln(2)/2
constexpr float kExpP0 = 0.49999993450796615f;
constexpr float kExpP1 = 0.1666652068088763f;
constexpr float kExpP2 = 0.04166838754456548f;
constexpr float kExpP3 = 0.00836871065621504f;
constexpr float kExpP4 = 0.00138146044858713f;
// ln(2) in two parts: n * kLn2Hi is exact for |n| < 2^9.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440054690583e-4f;
constexpr float kLog2e = 1.44269504088896341f;
// Adding and subtracting 1.5 * 2^23 rounds a float of magnitude < 2^22 to
// the nearest integer (ties to even) without a library call.
constexpr float kRoundMagic = 12582912.0f;

// log(1 + f) = f - f^2 / 2 + f^3 * P(f) on sqrt(1/2) - 1 <= f < sqrt(2) - 1
// (scalars, not an array: device code cannot read a host constexpr array)
constexpr float kLogP0 = 0.33333331715859144f;
constexpr float kLogP1 = -0.25000821122793226f;
constexpr float kLogP2 = 0.20001226023478963f;
constexpr float kLogP3 = -0.16623353842809613f;
constexpr float kLogP4 = 0.14201776235514146f;
constexpr float kLogP5 = -0.1316023379629923f;
constexpr float kLogP6 = 0.12761468105495088f;
constexpr float kLogP7 = -0.07634225323437709f;

// tanh(x) = x + x^3 * Q(x^2) on |x| < kTanhSmall
constexpr float kTanhSmall = 0.625f;
constexpr float kTanhQ0 = -0.3333328193479495f;
constexpr float kTanhQ1 = 0.13331442037638846f;
constexpr float kTanhQ2 = -0.05373970349449135f;
constexpr float kTanhQ3 = 0.02063905353033223f;
constexpr float kTanhQ4 = -0.00570495275751291f;

SPMD_HOST_DEVICE float select(bool c, float a, float b) { return c ? a : b; }

// 2^n for integer n in [-126, 127], by its bits.
SPMD_HOST_DEVICE float pow2i(std::int32_t n) {
  return float_from_bits(static_cast<std::uint32_t>(n + 127) << 23);
}

}  // namespace float_math_detail

SPMD_HOST_DEVICE float exp_f32(float x) {
  using namespace float_math_detail;
  // Beyond these the result is inf / 0; inside, 2^n splits into two normal
  // factors, so results down to the subnormals come out right.
  const bool is_nan = x != x;
  float xc = select(x > 89.0f, 89.0f, x);
  xc = select(xc < -104.0f, -104.0f, xc);
  xc = select(is_nan, 0.0f, xc);
  const float n = (xc * kLog2e + kRoundMagic) - kRoundMagic;
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  const float p = ((((kExpP4 * r + kExpP3) * r + kExpP2) * r + kExpP1) * r + kExpP0);
  const float e = 1.0f + (r + r * r * p);
  const auto ni = static_cast<std::int32_t>(n);
  const std::int32_t half = ni / 2;
  const float result = e * pow2i(half) * pow2i(ni - half);
  return select(is_nan, x, result);
}

SPMD_HOST_DEVICE float log_f32(float x) {
  using namespace float_math_detail;
  // Subnormals are scaled into the normals first.
  const bool tiny = x < 1.17549435e-38f;
  const float xs = select(tiny, x * 8388608.0f, x);  // * 2^23
  const std::uint32_t bits = bits_of(xs);
  std::int32_t e = static_cast<std::int32_t>((bits >> 23) & 0xffu) - 127 - (tiny ? 23 : 0);
  // The mantissa as m in [sqrt(1/2), sqrt(2)): bring [sqrt(2), 2) down by one octave.
  float m = float_from_bits((bits & 0x007fffffu) | 0x3f800000u);
  const bool high = m > 1.41421356f;
  m = select(high, m * 0.5f, m);
  e += high ? 1 : 0;
  const float f = m - 1.0f;
  const float z = f * f;
  float p = kLogP7;
  p = p * f + kLogP6;
  p = p * f + kLogP5;
  p = p * f + kLogP4;
  p = p * f + kLogP3;
  p = p * f + kLogP2;
  p = p * f + kLogP1;
  p = p * f + kLogP0;
  const float fe = static_cast<float>(e);
  const float tail = f * z * p + fe * kLn2Lo - 0.5f * z;
  const float result = (f + tail) + fe * kLn2Hi;
  // log(0) = -inf, log(x < 0) = nan, log(inf) = inf, log(nan) = nan
  float special = select(x == 0.0f, -float_from_bits(0x7f800000u), float_from_bits(0x7fc00000u));
  special = select(x == float_from_bits(0x7f800000u), x, special);
  special = select(x != x, x, special);
  const bool ordinary = x > 0.0f && x < float_from_bits(0x7f800000u);
  return select(ordinary, result, special);
}

SPMD_HOST_DEVICE float tanh_f32(float x) {
  using namespace float_math_detail;
  const float ax = select(x < 0.0f, -x, x);
  // Small |x|: the odd polynomial; the smallest values come out exact, and
  // a zero keeps its sign.
  const float s = x * x;
  const float q = (((kTanhQ4 * s + kTanhQ3) * s + kTanhQ2) * s + kTanhQ1) * s + kTanhQ0;
  const float small = select(x == 0.0f, x, x + x * s * q);
  // Otherwise 1 - 2 / (exp(2|x|) + 1), with the sign put back; exp's
  // overflow gives exactly 1 and a nan stays nan.
  const float big = 1.0f - 2.0f / (exp_f32(2.0f * ax) + 1.0f);
  const float signed_big = select(x < 0.0f, -big, big);
  return select(ax < kTanhSmall, small, signed_big);
}

// 1 / (1 + exp(-x)), computed from e = exp(-|x|), which never overflows: for
// x < 0 it is e / (1 + e), so results down to the subnormals stay right.
SPMD_HOST_DEVICE float logistic_f32(float x) {
  const float e = exp_f32(x < 0.0f ? x : -x);
  const float r = 1.0f / (1.0f + e);
  return float_math_detail::select(x < 0.0f, e * r, r);
}

}  // namespace spmd::rules
