#pragma once
// Test helpers: run a per-device function and collect results as host values.

#include <functional>
#include <string>
#include <vector>

#include "spmd/spmd.h"

namespace spmd::testing {

/// Host float32 array from values and a shape.
inline Array f32(std::vector<double> v, Shape s) { return Array::from_doubles(v, s, DType::kFloat32); }
inline Array i32(std::vector<double> v, Shape s) { return Array::from_doubles(v, s, DType::kInt32); }

/// Runs `fn` on `n` devices over axis "i" with arg x split along axis 0,
/// returning the stacked outputs.
inline std::vector<Array> run_on(Runtime& rt, int n, const std::vector<Array>& args,
                                 std::function<std::vector<Array>(std::span<const Array>)> fn,
                                 std::string axis = "i") {
  PmapOptions o;
  o.axis_name = axis;
  if (args.empty()) o.axis_size = n;
  return rt.pmap(fn, args, o);
}

/// Runs and returns the error it must raise (fails the test otherwise).
template <class E, class F>
E expect_error(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  throw std::runtime_error("expected an error that was not raised");
}

/// Row i of a stacked [n, ...] output as doubles.
inline std::vector<double> row(const Array& a, std::int64_t i) {
  std::vector<double> all = a.to_doubles();
  std::int64_t per = a.shape()[0] == 0 ? 0 : a.size() / a.shape()[0];
  return std::vector<double>(all.begin() + i * per, all.begin() + (i + 1) * per);
}

}  // namespace spmd::testing
