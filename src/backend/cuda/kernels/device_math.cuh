#pragma once
// Device-side element semantics, mirroring the host core exactly:
// half.cc (float16/bfloat16 conversions, NaN handling included),
// element_access.h (widen/narrow, saturating float->int), elementwise.cc
// (unary_fn/binary_fn), indexing.cc (combine). Any change there must be
// mirrored here: the GPU results are compared with the host bit for bit.

#include <cstdint>
#include <type_traits>

#include "spmd/core/dtype.h"

namespace spmd::cuda::dev {

// Storage types of the 16-bit floats (layout-compatible with spmd::float16/bfloat16).
struct h16 {
  std::uint16_t bits;
};
struct bf16 {
  std::uint16_t bits;
};

__device__ __forceinline__ float half_to_float(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      float f = ldexpf(static_cast<float>(mant), -24);
      bits = __float_as_uint(f) | sign;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return __uint_as_float(bits);
}

__device__ __forceinline__ std::uint16_t float_to_half(float f) {
  std::uint32_t x = __float_as_uint(f);
  std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  if (abs >= 0x477ff000u) return sign | 0x7c00u;
  if (abs < 0x38800000u) {
    float a = __uint_as_float(abs);
    float scaled = a * 16777216.0f;
    return sign | static_cast<std::uint16_t>(nearbyintf(scaled));
  }
  std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  std::uint32_t exp = (rounded >> 23) - 112;
  std::uint32_t mant = (rounded >> 13) & 0x3ffu;
  return sign | static_cast<std::uint16_t>((exp << 10) | mant);
}

__device__ __forceinline__ float bfloat16_to_float(std::uint16_t b) {
  return __uint_as_float(static_cast<std::uint32_t>(b) << 16);
}

__device__ __forceinline__ std::uint16_t float_to_bfloat16(float f) {
  std::uint32_t x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

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
SPMD_DEV_MATH1(m_exp, expf, ::exp)
SPMD_DEV_MATH1(m_log, logf, ::log)
SPMD_DEV_MATH1(m_log1p, log1pf, ::log1p)
SPMD_DEV_MATH1(m_expm1, expm1f, ::expm1)
SPMD_DEV_MATH1(m_sqrt, sqrtf, ::sqrt)
SPMD_DEV_MATH1(m_sin, sinf, ::sin)
SPMD_DEV_MATH1(m_cos, cosf, ::cos)
SPMD_DEV_MATH1(m_tan, tanf, ::tan)
SPMD_DEV_MATH1(m_tanh, tanhf, ::tanh)
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
__device__ __forceinline__ float m_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double m_fmod(double a, double b) { return ::fmod(a, b); }
__device__ __forceinline__ float m_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double m_pow(double a, double b) { return ::pow(a, b); }
__device__ __forceinline__ float m_atan2(float a, float b) { return atan2f(a, b); }
__device__ __forceinline__ double m_atan2(double a, double b) { return ::atan2(a, b); }
template <class C>
__device__ __forceinline__ bool m_isnan(C x) {
  return x != x;
}
template <class C>
__device__ __forceinline__ bool m_isinf(C x) {
  return ::isinf(x);
}
template <class C>
__device__ __forceinline__ bool m_isfinite(C x) {
  return ::isfinite(x);
}

template <class C>
inline constexpr bool kIsInt = std::is_integral_v<C> && !std::is_same_v<C, bool>;
template <class C>
inline constexpr bool kIsFloat = std::is_floating_point_v<C>;

template <class C>
__device__ __forceinline__ C wrap_add(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
}
template <class C>
__device__ __forceinline__ C wrap_sub(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
}
template <class C>
__device__ __forceinline__ C wrap_mul(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
}

// IEEE operations without contraction into FMA (the host computes a*b then +c).
__device__ __forceinline__ double madd(double c, double a, double b) { return __dadd_rn(c, __dmul_rn(a, b)); }

}  // namespace spmd::cuda::dev
