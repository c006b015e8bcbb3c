#include "spmd/core/half.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace spmd {

float half_to_float(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = std::ldexp(static_cast<float>(mant), -24);
      bits = std::bit_cast<std::uint32_t>(f) | sign;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t float_to_half(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
  if (abs < 0x38800000u) {                         // below the smallest normal half: subnormal or zero
    float a = std::bit_cast<float>(abs);
    // Scale so the subnormal mantissa lands in the integer part; rint rounds half to even.
    float scaled = a * 16777216.0f;  // 2^24
    return sign | static_cast<std::uint16_t>(std::nearbyint(scaled));
  }
  // Normal: drop 13 mantissa bits with round-to-nearest-even.
  std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  std::uint32_t exp = (rounded >> 23) - 112;
  std::uint32_t mant = (rounded >> 13) & 0x3ffu;
  return sign | static_cast<std::uint16_t>((exp << 10) | mant);
}

float bfloat16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t float_to_bfloat16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

float16::float16(float f) : bits(float_to_half(f)) {}
float16::operator float() const { return half_to_float(bits); }
bfloat16::bfloat16(float f) : bits(float_to_bfloat16(f)) {}
bfloat16::operator float() const { return bfloat16_to_float(bits); }

}  // namespace spmd
