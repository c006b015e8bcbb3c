#pragma once
// Device-side element semantics. The conversions, integer rules and float
// division come from core/scalar_rules.h, the host's own text; what is left
// here mirrors the host core: element_access.h (widen/narrow, saturating
// float->int), elementwise.cc (unary_fn/binary_fn), indexing.cc (combine).
// Any change there must be mirrored here: the GPU results are compared with
// the host bit for bit.

#include <cstdint>
#include <type_traits>

#include "core/float_math.h"
#include "core/scalar_rules.h"
#include "spmd/core/dtype.h"

namespace spmd::cuda::dev {

// Storage types of the 16-bit floats (layout-compatible with spmd::float16/bfloat16).
struct h16 {
  std::uint16_t bits;
};
struct bf16 {
  std::uint16_t bits;
};

// The conversions and integer and division rules are the host's own text
// (core/scalar_rules.h), compiled for the device.
using rules::bfloat16_to_float;
using rules::float_floor_divide;
using rules::float_remainder;
using rules::float_to_bfloat16;
using rules::float_to_half;
using rules::half_to_float;
using rules::int_floor_divide;
using rules::int_power;
using rules::int_remainder;
using rules::kIsFloat;
using rules::kIsInt;
using rules::wrap_add;
using rules::wrap_mul;
using rules::wrap_sub;

// --- widen / narrow (element_access.h) ------------------------------------

__device__ __forceinline__ float widen(h16 h) { return half_to_float(h.bits); }
__device__ __forceinline__ float widen(bf16 h) { return bfloat16_to_float(h.bits); }
template <class T>
__device__ __forceinline__ T widen(T v) {
  return v;
}

template <class T>
using Compute = decltype(widen(T{}));

template <class T>
struct Limits;
template <>
struct Limits<std::int32_t> {
  static constexpr std::int32_t min = -2147483647 - 1;
  static constexpr std::int32_t max = 2147483647;
};
template <>
struct Limits<std::int64_t> {
  static constexpr std::int64_t min = -9223372036854775807LL - 1;
  static constexpr std::int64_t max = 9223372036854775807LL;
};

template <class T, class V>
__device__ __forceinline__ T narrow(V v) {
  if constexpr (std::is_same_v<T, h16>) {
    return h16{float_to_half(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, bf16>) {
    return bf16{float_to_bfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V{};
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
    if (v != v) return T{0};
    if (v <= static_cast<V>(Limits<T>::min)) return Limits<T>::min;
    if (v >= static_cast<V>(Limits<T>::max)) return Limits<T>::max;
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// --- math overloads (float / double) ---------------------------------------

#define SPMD_DEV_MATH1(name, f32, f64)                                         \
  __device__ __forceinline__ float name(float x) { return f32(x); }           \
  __device__ __forceinline__ double name(double x) { return f64(x); }
// exp, log, tanh and logistic of float32 are the host's text (float_math.h),
// so a GPU device computes the host's bits.
SPMD_DEV_MATH1(m_exp, rules::exp_f32, ::exp)
SPMD_DEV_MATH1(m_log, rules::log_f32, ::log)
SPMD_DEV_MATH1(m_log1p, log1pf, ::log1p)
SPMD_DEV_MATH1(m_expm1, expm1f, ::expm1)
SPMD_DEV_MATH1(m_sqrt, sqrtf, ::sqrt)
SPMD_DEV_MATH1(m_sin, sinf, ::sin)
SPMD_DEV_MATH1(m_cos, cosf, ::cos)
SPMD_DEV_MATH1(m_tan, tanf, ::tan)
SPMD_DEV_MATH1(m_tanh, rules::tanh_f32, ::tanh)
SPMD_DEV_MATH1(m_sinh, sinhf, ::sinh)
SPMD_DEV_MATH1(m_cosh, coshf, ::cosh)
SPMD_DEV_MATH1(m_asin, asinf, ::asin)
SPMD_DEV_MATH1(m_acos, acosf, ::acos)
SPMD_DEV_MATH1(m_atan, atanf, ::atan)
SPMD_DEV_MATH1(m_fabs, fabsf, ::fabs)
SPMD_DEV_MATH1(m_floor, floorf, ::floor)
SPMD_DEV_MATH1(m_ceil, ceilf, ::ceil)
SPMD_DEV_MATH1(m_rint, rintf, ::rint)
SPMD_DEV_MATH1(m_round, roundf, ::round)
#undef SPMD_DEV_MATH1
__device__ __forceinline__ float m_logistic(float x) { return rules::logistic_f32(x); }
__device__ __forceinline__ double m_logistic(double x) { return 1.0 / (1.0 + ::exp(-x)); }
__device__ __forceinline__ float m_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double m_pow(double a, double b) { return ::pow(a, b); }
__device__ __forceinline__ float m_atan2(float a, float b) { return atan2f(a, b); }
__device__ __forceinline__ double m_atan2(double a, double b) { return ::atan2(a, b); }
template <class C>
__device__ __forceinline__ bool m_isnan(C x) {
  return rules::is_nan(x);
}
template <class C>
__device__ __forceinline__ bool m_isinf(C x) {
  return ::isinf(x);
}
template <class C>
__device__ __forceinline__ bool m_isfinite(C x) {
  return ::isfinite(x);
}

}  // namespace spmd::cuda::dev
