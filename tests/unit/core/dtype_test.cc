#include <catch2/catch.hpp>

#include "spmd/core/dtype.h"
#include "spmd/core/half.h"

using namespace spmd;

TEST_CASE("core::dtype: names round-trip", "[dtype]") {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    REQUIRE(parse_dtype(dtype_name(t)) == t);
    REQUIRE(parse_dtype(dtype_short_name(t)) == t);
  }
  REQUIRE(dtype_short_name(DType::kFloat32) == "f32");
  REQUIRE(!parse_dtype("float128").has_value());
}

TEST_CASE("core::dtype: promotion follows JAX", "[dtype]") {
  REQUIRE(promote_types(DType::kInt32, DType::kFloat32) == DType::kFloat32);
  REQUIRE(promote_types(DType::kInt64, DType::kFloat16) == DType::kFloat16);
  REQUIRE(promote_types(DType::kFloat16, DType::kBFloat16) == DType::kFloat32);
  REQUIRE(promote_types(DType::kBool, DType::kInt32) == DType::kInt32);
  auto w = promote_weak(DType::kInt32, true, DType::kFloat16, false);
  REQUIRE(w.dtype == DType::kFloat16);
  REQUIRE_FALSE(w.weak);
  w = promote_weak(DType::kFloat32, true, DType::kInt32, false);
  REQUIRE(w.dtype == DType::kFloat32);
  w = promote_weak(DType::kFloat32, true, DType::kInt32, true);
  REQUIRE(w.dtype == DType::kFloat32);
  REQUIRE(w.weak);
}

TEST_CASE("core::half: float16 and bfloat16 round to nearest even", "[dtype]") {
  REQUIRE(float_to_half(1.0f) == 0x3c00);
  REQUIRE(half_to_float(0x3c00) == 1.0f);
  REQUIRE(float_to_half(65504.0f) == 0x7bff);
  REQUIRE(float_to_half(65520.0f) == 0x7c00);          // overflow to inf
  REQUIRE(half_to_float(0x0001) == 5.9604644775390625e-08f);  // smallest subnormal
  REQUIRE(float_to_half(1.0f + 1.0f / 2048) == 0x3c00);      // tie rounds to even
  REQUIRE(float_to_half(1.0f + 3.0f / 2048) == 0x3c02);
  REQUIRE(float_to_bfloat16(1.0f) == 0x3f80);
  REQUIRE(bfloat16_to_float(0x4049) == 3.140625f);
  for (std::uint32_t b = 0; b < 0x7c00; b += 7) {  // finite halves round-trip exactly
    REQUIRE(float_to_half(half_to_float(static_cast<std::uint16_t>(b))) == b);
  }
}
