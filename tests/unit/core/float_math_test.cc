// The vectorizable float32 exp / log / tanh / logistic (core/float_math.h):
// their error against the double-precision result over a fixed sample of
// every float32 bit pattern, and their special values exactly.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/float_math.h"

using namespace spmd::rules;

namespace {

// Distance in representable floats (the sign-magnitude order made linear).
std::int64_t ordered(float f) {
  std::int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? std::int64_t{INT32_MIN} - i : i;
}

template <class F, class R>
std::int64_t worst_ulp(F f, R reference) {
  std::int64_t worst = 0;
  // Every 997th bit pattern: all exponents, both signs, about 4.3 million values.
  for (std::uint64_t u = 0; u <= 0xffffffffull; u += 997) {
    const auto bits = static_cast<std::uint32_t>(u);
    float x;
    std::memcpy(&x, &bits, sizeof x);
    const auto want = static_cast<float>(reference(static_cast<double>(x)));
    const float got = f(x);
    if (std::isnan(want) || std::isnan(got)) {
      if (std::isnan(want) != std::isnan(got)) return std::numeric_limits<std::int64_t>::max();
      continue;
    }
    if (std::isinf(want) || std::isinf(got)) {
      if (want != got) return std::numeric_limits<std::int64_t>::max();
      continue;
    }
    worst = std::max(worst, std::abs(ordered(got) - ordered(want)));
  }
  return worst;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kDenormMin = std::numeric_limits<float>::denorm_min();

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("core::float_math: within 1 ulp (logistic 3) of the correctly rounded result over the float32 range",
          "[core][float_math]") {
  CHECK(worst_ulp([](float x) { return exp_f32(x); }, [](double x) { return std::exp(x); }) <= 1);
  CHECK(worst_ulp([](float x) { return log_f32(x); }, [](double x) { return std::log(x); }) <= 1);
  CHECK(worst_ulp([](float x) { return tanh_f32(x); }, [](double x) { return std::tanh(x); }) <= 1);
  CHECK(worst_ulp([](float x) { return logistic_f32(x); }, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }) <= 3);
}

TEST_CASE("core::float_math: special values", "[core][float_math]") {
  CHECK(exp_f32(0.0f) == 1.0f);
  CHECK(exp_f32(-0.0f) == 1.0f);
  CHECK(exp_f32(kInf) == kInf);
  CHECK(exp_f32(-kInf) == 0.0f);
  CHECK(exp_f32(89.0f) == kInf);        // overflow
  CHECK(exp_f32(-104.0f) == 0.0f);      // underflow
  CHECK(exp_f32(-100.0f) == static_cast<float>(std::exp(-100.0)));  // a subnormal result
  CHECK(std::isnan(exp_f32(kNan)));

  CHECK(log_f32(1.0f) == 0.0f);
  CHECK(log_f32(0.0f) == -kInf);
  CHECK(log_f32(-0.0f) == -kInf);
  CHECK(std::isnan(log_f32(-1.0f)));
  CHECK(std::isnan(log_f32(-kInf)));
  CHECK(log_f32(kInf) == kInf);
  CHECK(std::isnan(log_f32(kNan)));
  CHECK(log_f32(kDenormMin) == static_cast<float>(std::log(static_cast<double>(kDenormMin))));

  CHECK(same_bits(tanh_f32(0.0f), 0.0f));
  CHECK(same_bits(tanh_f32(-0.0f), -0.0f));
  CHECK(tanh_f32(kInf) == 1.0f);
  CHECK(tanh_f32(-kInf) == -1.0f);
  CHECK(tanh_f32(20.0f) == 1.0f);
  CHECK(tanh_f32(kDenormMin) == kDenormMin);
  CHECK(std::isnan(tanh_f32(kNan)));

  CHECK(logistic_f32(0.0f) == 0.5f);
  CHECK(logistic_f32(kInf) == 1.0f);
  CHECK(logistic_f32(-kInf) == 0.0f);
  CHECK(logistic_f32(-90.0f) == static_cast<float>(1.0 / (1.0 + std::exp(90.0))));  // no overflow to 0
  CHECK(std::isnan(logistic_f32(kNan)));
}
