#include "spmd/core/half.h"

#include "core/scalar_rules.h"

namespace spmd {

float half_to_float(std::uint16_t h) { return rules::half_to_float(h); }
std::uint16_t float_to_half(float f) { return rules::float_to_half(f); }
float bfloat16_to_float(std::uint16_t b) { return rules::bfloat16_to_float(b); }
std::uint16_t float_to_bfloat16(float f) { return rules::float_to_bfloat16(f); }

float16::float16(float f) : bits(float_to_half(f)) {}
float16::operator float() const { return half_to_float(bits); }
bfloat16::bfloat16(float f) : bits(float_to_bfloat16(f)) {}
bfloat16::operator float() const { return bfloat16_to_float(bits); }

}  // namespace spmd
