#pragma once
// Array-op cases shared by the memory-kind tests: the fake device on the CPU
// (tests/unit/core/device_dispatch_test.cc) and the real GPU
// (tests/cuda/gpu). Each case computes one op from host inputs; the tests run
// it on device memory and compare with the host result.

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "spmd/spmd.h"

namespace spmd::testing {

struct OpCase {
  std::string name;
  std::vector<Array> inputs;  // host arrays
  std::function<Array(const std::vector<Array>&)> fn;
  /// False where a GPU may differ from the host in the last bits (device
  /// math library: exp, log, pow, trig, ...; float products, which cuBLAS
  /// sums in its own order); copies and IEEE +-*/ are exact.
  bool exact = true;
};

namespace op_case_detail {
inline const double kNan = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();
inline Array arr(std::vector<double> v, DType dt, Shape s) { return Array::from_doubles(v, s, dt); }
inline Array iarr(std::vector<std::int64_t> v, DType dt, Shape s) { return Array::from_int64s(v, s, dt); }
inline Array barr(std::vector<bool> v, Shape s) { return Array::from_bools(v, s); }
}  // namespace op_case_detail

/// Built when called, on the host (call it outside any device).
inline std::vector<OpCase> op_cases() {
  using namespace op_case_detail;
  Array f = arr({1.5, -2.25, 0.0, kNan, 3.0, -0.0, kInf, 7.125}, DType::kFloat32, {2, 4});
  Array g = arr({0.5, 2.0, -1.0, 4.0}, DType::kFloat32, {4});
  Array i = iarr({5, -3, 0, 7, -8, 2147483647, -2147483647 - 1, 9}, DType::kInt32, {2, 4});
  Array j = iarr({2, -3, 0, 4}, DType::kInt32, {4});
  Array l = iarr({1, 2, 3, 4, 5, 6}, DType::kInt64, {3, 2});
  Array b = barr({true, false, false, true, true, true, false, false}, {2, 4});
  Array h = arr({1.0, 0.1, -65504.0, 1e-7, 3.14159, 2.0, kNan, 0.5}, DType::kFloat16, {2, 4});
  Array bf = arr({1.0, 0.1, -3e38, 1e-7, 3.14159, 2.0, kNan, 0.5}, DType::kBFloat16, {2, 4});
  Array d = arr({1e300, -1e-300, 0.1, 0.2, 0.3, 1.0 / 3, 2.5, -7.0}, DType::kFloat64, {2, 4});
  Array big = arange(0, 10000, 1, DType::kFloat32);
  Array m3 = arange(0, 24, 1, DType::kFloat32);
  using A = const std::vector<Array>&;
  std::vector<OpCase> c;
  for (auto op : {UnaryOp::kNegative, UnaryOp::kAbs, UnaryOp::kSign, UnaryOp::kSqrt, UnaryOp::kSquare,
                  UnaryOp::kFloor, UnaryOp::kCeil, UnaryOp::kRound, UnaryOp::kRoundAwayFromZero, UnaryOp::kIsNan, UnaryOp::kIsInf,
                  UnaryOp::kIsFinite, UnaryOp::kLogicalNot, UnaryOp::kReciprocal, UnaryOp::kExp}) {
    for (const Array& x : {f, h, bf, d, i}) {
      bool exact = op != UnaryOp::kExp || !is_floating(x.dtype());
      c.push_back({std::string(op_name(op)) + " " + x.abstract_type(), {x}, [op](A a) { return unary(op, a[0]); }, exact});
    }
  }
  c.push_back({"bitwise_not i32", {i}, [](A a) { return unary(UnaryOp::kBitwiseNot, a[0]); }});
  c.push_back({"bitwise_not bool", {b}, [](A a) { return unary(UnaryOp::kBitwiseNot, a[0]); }});
  c.push_back({"square bool", {b}, [](A a) { return unary(UnaryOp::kSquare, a[0]); }});
  for (auto op : {BinaryOp::kAdd, BinaryOp::kSubtract, BinaryOp::kMultiply, BinaryOp::kDivide, BinaryOp::kFloorDivide,
                  BinaryOp::kRemainder, BinaryOp::kMaximum, BinaryOp::kMinimum, BinaryOp::kLess,
                  BinaryOp::kEqual, BinaryOp::kPower}) {
    const bool exact = op != BinaryOp::kPower;
    c.push_back({std::string(op_name(op)) + " f32 bcast", {f, g}, [op](A a) { return binary(op, a[0], a[1]); }, exact});
    c.push_back({std::string(op_name(op)) + " i32 bcast", {i, j}, [op](A a) { return binary(op, a[0], a[1]); }});
    c.push_back({std::string(op_name(op)) + " f16 x weak", {h}, [op](A a) {
                   return binary(op, a[0], Array::scalar(3.0, DType::kFloat32, true));
                 }, exact});
  }
  c.push_back({"add bool", {b, b}, [](A a) { return a[0] + a[1]; }});
  c.push_back({"xor bool", {b, b}, [](A a) { return binary(BinaryOp::kLogicalXor, a[0], reshape(a[1], {4, 2}).reshaped_view({2, 4})); }});
  c.push_back({"bitwise_and i32", {i, j}, [](A a) { return binary(BinaryOp::kBitwiseAnd, a[0], a[1]); }});
  c.push_back({"add i32 + f32 promote", {i, g}, [](A a) { return a[0] + a[1]; }});
  c.push_back({"outer broadcast", {g, j}, [](A a) { return binary(BinaryOp::kMultiply, reshape(a[0], {4, 1}), a[1]); }});
  c.push_back({"where", {b, f, g}, [](A a) { return where(a[0], a[1], a[2]); }});
  c.push_back({"clip", {f}, [](A a) { return clip(a[0], Array::scalar(-1.0, DType::kFloat32, true), Array::scalar(2.0, DType::kFloat32, true)); }});
  for (DType to : {DType::kBool, DType::kInt32, DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    c.push_back({"astype f32->" + std::string(dtype_name(to)), {f}, [to](A a) { return astype(a[0], to); }});
    c.push_back({"astype f64->" + std::string(dtype_name(to)), {d}, [to](A a) { return astype(a[0], to); }});
  }
  c.push_back({"reshape", {m3}, [](A a) { return reshape(a[0], {2, -1, 4}); }});
  c.push_back({"transpose", {m3}, [](A a) { return transpose(reshape(a[0], {2, 3, 4}), {2, 0, 1}); }});
  c.push_back({"swapaxes", {l}, [](A a) { return swapaxes(a[0], 0, 1); }});
  c.push_back({"moveaxis", {m3}, [](A a) { return moveaxis(reshape(a[0], {2, 3, 4}), 0, -1); }});
  c.push_back({"expand_dims/squeeze", {f}, [](A a) { return squeeze(expand_dims(a[0], 1), {}); }});
  c.push_back({"ravel", {f}, [](A a) { return ravel(a[0]); }});
  c.push_back({"broadcast_to", {g}, [](A a) { return broadcast_to(a[0], {3, 4}); }});
  c.push_back({"concatenate mixed", {f, i}, [](A a) { return concatenate({a[0], a[1]}, 1); }});
  c.push_back({"concatenate axis0", {i, j}, [](A a) { return concatenate({a[0], reshape(a[1], {1, 4})}, 0); }});
  c.push_back({"stack", {g, g}, [](A a) { return stack({a[0], a[1]}, 1); }});
  c.push_back({"chunk", {m3}, [](A a) { return chunk(reshape(a[0], {4, 6}), 3, 1, 1); }});
  c.push_back({"flip", {m3}, [](A a) { return flip(reshape(a[0], {4, 6}), std::nullopt); }});
  c.push_back({"tile", {j}, [](A a) { return tile(a[0], {2, 3}); }});
  c.push_back({"repeat", {l}, [](A a) { return repeat(a[0], 3, 0); }});
  c.push_back({"roll", {m3}, [](A a) { return roll(reshape(a[0], {4, 6}), -2, 1); }});
  c.push_back({"roll flat", {m3}, [](A a) { return roll(a[0], 5, std::nullopt); }});
  c.push_back({"getitem", {m3}, [](A a) {
                 std::vector<IndexItem> items{IndexItem::slice(std::nullopt, std::nullopt, -1), IndexItem::new_axis(),
                                              IndexItem::at(1)};
                 return index(reshape(a[0], {4, 6}), items);
               }});
  for (auto mode : {UpdateMode::kSet, UpdateMode::kAdd, UpdateMode::kMultiply, UpdateMode::kMin, UpdateMode::kMax}) {
    c.push_back({"index_update " + std::to_string(static_cast<int>(mode)), {f, g}, [mode](A a) {
                   std::vector<IndexItem> items{IndexItem::slice(std::nullopt, std::nullopt, std::nullopt)};
                   return index_update(a[0], items, a[1], mode);
                 }});
  }
  c.push_back({"take", {m3, j}, [](A a) { return take(reshape(a[0], {4, 6}), a[1], 1); }});
  c.push_back({"take flat i64", {m3, l}, [](A a) { return take(a[0], a[1], std::nullopt); }});
  for (auto op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kMean, ReduceOp::kAny,
                  ReduceOp::kAll, ReduceOp::kArgMax, ReduceOp::kArgMin, ReduceOp::kVar, ReduceOp::kStd}) {
    std::string n(op_name(op));
    c.push_back({n + " all f32", {f}, [op](A a) { return reduce(op, a[0], std::nullopt, false); }});
    c.push_back({n + " axis0 i32", {i}, [op](A a) { return reduce(op, a[0], std::vector<int>{0}, false); }});
    c.push_back({n + " axis1 keep f16", {h}, [op](A a) { return reduce(op, a[0], std::vector<int>{1}, true); }});
    c.push_back({n + " bool", {b}, [op](A a) { return reduce(op, a[0], std::vector<int>{1}, false); }});
    c.push_back({n + " big", {big}, [op](A a) { return reduce(op, a[0] * Array::scalar(0.37, DType::kFloat32, true), std::nullopt, false); }});
  }
  c.push_back({"sum middle axis", {m3}, [](A a) { return reduce(ReduceOp::kSum, reshape(a[0], {2, 3, 4}), std::vector<int>{0, 2}, false); }});
  c.push_back({"cumsum", {m3}, [](A a) { return cumsum(reshape(a[0], {2, 3, 4}), 1); }});
  c.push_back({"cumprod bool", {b}, [](A a) { return cumprod(a[0], std::nullopt); }});
  c.push_back({"cumsum i32", {i}, [](A a) { return cumsum(a[0], 0); }});
  c.push_back({"matmul", {m3, m3}, [](A a) { return matmul(reshape(a[0], {2, 3, 4}), reshape(a[1], {4, 6})); },
               false});
  c.push_back({"matmul vec", {g, m3}, [](A a) { return matmul(a[0], reshape(a[1], {4, 6})); }, false});
  c.push_back({"matmul i32", {i, j}, [](A a) { return matmul(a[0], a[1]); }});
  c.push_back({"dot nd", {m3, m3}, [](A a) { return dot(reshape(a[0], {2, 3, 4}), reshape(a[1], {3, 4, 2})); },
               false});
  c.push_back({"outer", {g, j}, [](A a) { return outer(a[0], a[1]); }});
  c.push_back({"zeros", {}, [](A) { return zeros({3, 5}, DType::kInt64); }});
  c.push_back({"full f16", {}, [](A) { return full({7}, 0.1, DType::kFloat16); }});
  c.push_back({"ones_like", {f}, [](A a) { return ones_like(a[0]); }});
  c.push_back({"arange", {}, [](A) { return arange(0.5, 10, 0.75, std::nullopt); }});
  c.push_back({"linspace", {}, [](A) { return linspace(0, 1, 7, true, DType::kFloat32); }});
  c.push_back({"eye", {}, [](A) { return eye(3, 4, DType::kFloat32); }});
  c.push_back({"copy", {l}, [](A a) { return copy(a[0]); }});
  c.push_back({"scalar", {}, [](A) { return Array::scalar(2.5, DType::kBFloat16); }});
  c.push_back({"from_doubles", {}, [](A) { return Array::from_doubles(std::vector<double>{1, 2, 3}, {3}, DType::kInt64); }});
  c.push_back({"empty", {}, [](A) { return reduce(ReduceOp::kSum, zeros({0, 3}, DType::kFloat32), std::vector<int>{0}, false); }});
  return c;
}


}  // namespace spmd::testing
