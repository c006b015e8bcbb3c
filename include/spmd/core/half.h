#pragma once
/// \file
/// float16 (IEEE binary16) and bfloat16 storage types. Arithmetic on them is
/// done in float32 and rounded back (round to nearest even), as XLA does on CPU.

#include <cstdint>

namespace spmd {

struct float16 {
  std::uint16_t bits = 0;
  float16() = default;
  explicit float16(float f);
  explicit operator float() const;
  static float16 from_bits(std::uint16_t b) { float16 h; h.bits = b; return h; }
};

struct bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f);
  explicit operator float() const;
  static bfloat16 from_bits(std::uint16_t b) { bfloat16 h; h.bits = b; return h; }
};

float half_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float f);
float bfloat16_to_float(std::uint16_t bits);
std::uint16_t float_to_bfloat16(float f);

}  // namespace spmd
