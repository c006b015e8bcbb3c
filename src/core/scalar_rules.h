#pragma once
// The per-element rules that take care to get right, written once for the
// host kernels (core/) and the CUDA kernels (backend/cuda/kernels/): XLA's
// wrapping integer arithmetic, Python's floor division and modulo as JAX
// computes them, and the 16-bit float conversions (round to nearest even,
// NaN kept quiet). The host compiler builds them for the host, nvcc for the
// GPU as well; the GPU's results are compared with the host's bit for bit,
// which holds because both run this one text.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

// Always inlined: a kernel's loop vectorizes only when these are inlined
// into it, and GCC's size heuristics leave exp_f32 and friends out of line.
#if defined(__CUDACC__)
#define SPMD_HOST_DEVICE __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define SPMD_HOST_DEVICE inline __attribute__((always_inline))
#else
#define SPMD_HOST_DEVICE inline
#endif

namespace spmd::rules {

template <class C>
inline constexpr bool kIsInt = std::is_integral_v<C> && !std::is_same_v<C, bool>;
template <class C>
inline constexpr bool kIsFloat = std::is_floating_point_v<C>;

// --- the few library calls, from the C library on the host and CUDA's on the device ---

SPMD_HOST_DEVICE std::uint32_t bits_of(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

SPMD_HOST_DEVICE float float_from_bits(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

template <class C>
SPMD_HOST_DEVICE C fmod_of(C a, C b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>) {
    return fmodf(a, b);
  } else {
    return ::fmod(a, b);
  }
#else
  return std::fmod(a, b);
#endif
}

template <class C>
SPMD_HOST_DEVICE C round_half_away(C x) {  // std::round
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>) {
    return roundf(x);
  } else {
    return ::round(x);
  }
#else
  return std::round(x);
#endif
}

SPMD_HOST_DEVICE float round_half_even(float x) {  // in the default rounding mode
#if defined(__CUDA_ARCH__)
  return nearbyintf(x);
#else
  return std::nearbyint(x);
#endif
}

template <class C>
SPMD_HOST_DEVICE bool is_nan(C x) {
  return x != x;
}

// --- 16-bit floats ----------------------------------------------------------

SPMD_HOST_DEVICE float half_to_float(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: mant * 2^-24, exact in float
      bits = bits_of(static_cast<float>(mant) * 0x1p-24f) | sign;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return float_from_bits(bits);
}

SPMD_HOST_DEVICE std::uint16_t float_to_half(float f) {
  std::uint32_t x = bits_of(f);
  std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan (kept quiet)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    // Scale so the subnormal mantissa lands in the integer part, then round half to even.
    float scaled = float_from_bits(abs) * 16777216.0f;  // 2^24
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(round_half_even(scaled)));
  }
  // Normal: drop 13 mantissa bits, rounding to nearest even.
  std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  std::uint32_t exp = (rounded >> 23) - 112;
  std::uint32_t mant = (rounded >> 13) & 0x3ffu;
  return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>((exp << 10) | mant));
}

SPMD_HOST_DEVICE float bfloat16_to_float(std::uint16_t b) {
  return float_from_bits(static_cast<std::uint32_t>(b) << 16);
}

SPMD_HOST_DEVICE std::uint16_t float_to_bfloat16(float f) {
  std::uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

// --- integers: two's-complement wrap-around as XLA does (signed overflow is UB in C++) ---

template <class C>
SPMD_HOST_DEVICE C wrap_add(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
}
template <class C>
SPMD_HOST_DEVICE C wrap_sub(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
}
template <class C>
SPMD_HOST_DEVICE C wrap_mul(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
}

// jnp.floor_divide on integers: rounds toward negative infinity; x // 0 is 0
// (XLA's answer, where Python raises), and MIN // -1 wraps.
template <class C>
SPMD_HOST_DEVICE C int_floor_divide(C a, C b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(C{0}, a);
  C q = static_cast<C>(a / b);
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// jnp.remainder on integers: the sign of the divisor; x % 0 is 0.
template <class C>
SPMD_HOST_DEVICE C int_remainder(C a, C b) {
  if (b == 0 || b == -1) return 0;
  C r = static_cast<C>(a % b);
  if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
  return r;
}

// lax.integer_pow / jnp.power on integers: square and multiply, wrapping;
// a negative exponent gives 0 except for bases 1 and -1.
template <class C>
SPMD_HOST_DEVICE C int_power(C base, C exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp % 2 == 0) ? C{1} : C{-1};
    return 0;
  }
  C result = 1;
  while (exp > 0) {
    if (exp & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exp = static_cast<C>(exp >> 1);
  }
  return result;
}

// --- floats: jnp.floor_divide and jnp.remainder (JAX's _float_divmod) ---

template <class C>
SPMD_HOST_DEVICE C float_floor_divide(C a, C b) {
  C mod = fmod_of(a, b);
  C div = (a - mod) / b;
  bool adjust = mod != 0 && ((b > 0) - (b < 0)) != ((mod > 0) - (mod < 0));
  if (adjust) div -= C{1};
  return round_half_away(div);
}

template <class C>
SPMD_HOST_DEVICE C float_remainder(C a, C b) {
  C mod = fmod_of(a, b);
  if (mod != 0 && ((mod < 0) != (b < 0))) mod += b;
  return mod;
}

// --- argmax / argmin along a row ----------------------------------------------

/// The index of the first largest (is_max) or smallest of r > 0 values,
/// load(i) giving value i; a NaN counts as the extreme, so the first NaN wins.
template <class C, class Load>
SPMD_HOST_DEVICE std::int64_t arg_extreme(Load load, std::int64_t r, bool is_max) {
  std::int64_t best_i = 0;
  C best = load(0);
  if constexpr (kIsFloat<C>) {
    if (is_nan(best)) return 0;
  }
  for (std::int64_t i = 1; i < r; ++i) {
    C v = load(i);
    if constexpr (kIsFloat<C>) {
      if (is_nan(v)) return i;
    }
    if (is_max ? v > best : v < best) {
      best = v;
      best_i = i;
    }
  }
  return best_i;
}

}  // namespace spmd::rules
