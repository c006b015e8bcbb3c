#pragma once
// Helpers shared by the core unit tests: terse array construction and error capture.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/error.h"

namespace spmd::test {


/// 1-D unless a shape is given (use Array::scalar for 0-d arrays).
inline Array arr(std::vector<double> v, DType dt = DType::kFloat32, Shape s = {}) {
  if (s.empty()) s = {static_cast<std::int64_t>(v.size())};
  return Array::from_doubles(v, s, dt);
}
inline Array iarr(std::vector<std::int64_t> v, DType dt = DType::kInt32, Shape s = {}) {
  if (s.empty()) s = {static_cast<std::int64_t>(v.size())};
  return Array::from_int64s(v, s, dt);
}
inline Array barr(std::vector<bool> v, Shape s = {}) {
  if (s.empty()) s = {static_cast<std::int64_t>(v.size())};
  std::vector<std::int64_t> ints(v.begin(), v.end());
  return Array::from_int64s(ints, s, DType::kBool);
}
/// A weakly typed Python scalar.
inline Array weak_float(double v) { return Array::scalar(v, DType::kFloat32, true); }
inline Array weak_int(std::int64_t v) { return Array::scalar_int(v, DType::kInt32, true); }

inline std::vector<double> vals(const Array& a) { return a.to_doubles(); }
inline std::vector<std::int64_t> ivals(const Array& a) { return a.to_int64s(); }

/// Runs f, which must throw an spmd::Error, and returns its report.
template <class F>
Report error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.report();
  }
  FAIL("expected an spmd::Error");
  return {};
}

}  // namespace spmd::test
