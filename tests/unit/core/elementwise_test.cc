#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/arena.h"
#include "core/placement.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;
using V = std::vector<double>;
using I = std::vector<std::int64_t>;

namespace {
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return false;
    if (!std::isnan(a[i]) && (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i]))) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("core::elementwise: add broadcasts (4,1) with (3,)", "[elementwise]") {
  Array a = iarr({0, 1, 2, 3}, DType::kInt32, {4, 1});
  Array b = iarr({10, 20, 30});
  Array c = a + b;
  REQUIRE(c.shape() == Shape{4, 3});
  REQUIRE(c.dtype() == DType::kInt32);
  REQUIRE(ivals(c) == I{10, 20, 30, 11, 21, 31, 12, 22, 32, 13, 23, 33});
  // and the other way round, plus a middle broadcast axis
  REQUIRE(ivals(b - a) == I{10, 20, 30, 9, 19, 29, 8, 18, 28, 7, 17, 27});
  Array x = iarr({1, 2, 3, 4}, DType::kInt32, {2, 1, 2});
  Array y = iarr({10, 20, 30}, DType::kInt32, {1, 3, 1});
  REQUIRE(ivals(x * y) == I{10, 20, 20, 40, 30, 60, 30, 40, 60, 80, 90, 120});
}

TEST_CASE("core::elementwise: large same-shape and scalar operands", "[elementwise]") {
  const std::int64_t n = (1 << 17) + 3;
  Array a = arange(0, static_cast<double>(n), 1, DType::kFloat32);
  Array b = a * Array::scalar(2.0, DType::kFloat32);
  Array c = a + b;
  REQUIRE(c.size() == n);
  for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, n / 2, n - 1}) {
    REQUIRE(c.element_as_double(i) == static_cast<double>(static_cast<float>(3 * i)));
  }
  Array rows = reshape(arange(0, static_cast<double>(n - 3), 1, DType::kInt32), {-1, 256});
  Array col = reshape(arange(0, static_cast<double>(rows.shape()[0]), 1, DType::kInt32), {-1, 1});
  Array s = rows - col * Array::scalar_int(256);
  REQUIRE(s.element_as_int64(0) == 0);
  REQUIRE(s.element_as_int64(257) == 1);
  REQUIRE(s.element_as_int64(s.size() - 1) == 255);
}

TEST_CASE("core::elementwise: dtype promotion follows JAX", "[elementwise]") {
  Array i32 = iarr({1, 2});
  Array f32 = arr({0.5, 0.5});
  REQUIRE((i32 + f32).dtype() == DType::kFloat32);
  REQUIRE(vals(i32 + f32) == V{1.5, 2.5});
  REQUIRE((i32 + iarr({1, 1}, DType::kInt64)).dtype() == DType::kInt64);
  REQUIRE((arr({1}, DType::kFloat16) + arr({1}, DType::kBFloat16)).dtype() == DType::kFloat32);
  // weak python scalars adopt the array's dtype when their kind fits
  Array h = arr({1.5}, DType::kFloat16);
  Array hw = h + weak_int(2);
  REQUIRE(hw.dtype() == DType::kFloat16);
  REQUIRE_FALSE(hw.weak_type());
  REQUIRE((i32 * weak_float(0.5)).dtype() == DType::kFloat32);  // int array * 0.5 -> float32
  REQUIRE((iarr({1}, DType::kInt64) + weak_int(1)).dtype() == DType::kInt64);
  Array ww = weak_float(1.0) + weak_int(2);
  REQUIRE(ww.dtype() == DType::kFloat32);
  REQUIRE(ww.weak_type());
  REQUIRE(ww.element_as_double(0) == 3.0);
  // bool + bool is logical or; bool * bool is and
  Array t = barr({true, true, false});
  Array u = barr({true, false, false});
  REQUIRE((t + u).dtype() == DType::kBool);
  REQUIRE(ivals(t + u) == I{1, 1, 0});
  REQUIRE(ivals(t * u) == I{1, 0, 0});
  REQUIRE((t + weak_int(1)).dtype() == DType::kInt32);
}

TEST_CASE("core::elementwise: divide gives float32 for ints and bools", "[elementwise]") {
  Array q = iarr({1, 2, 3}) / iarr({2, 2, 2});
  REQUIRE(q.dtype() == DType::kFloat32);
  REQUIRE(vals(q) == V{0.5, 1.0, 1.5});
  REQUIRE((iarr({1}, DType::kInt64) / iarr({4}, DType::kInt64)).dtype() == DType::kFloat32);
  REQUIRE((barr({true}) / barr({true})).dtype() == DType::kFloat32);
  REQUIRE(same(vals(arr({1, -1, 0}) / arr({0, 0, 0})), V{kInf, -kInf, kNan}));
  Array w = weak_int(1) / weak_int(4);
  REQUIRE(w.weak_type());
  REQUIRE(w.element_as_double(0) == 0.25);
  REQUIRE(vals(arr({1}, DType::kFloat64) / arr({3}, DType::kFloat64)) == V{1.0 / 3.0});
}

TEST_CASE("core::elementwise: floor_divide and remainder use Python signs", "[elementwise]") {
  Array a = iarr({7, -7, 7, -7});
  Array b = iarr({2, 2, -2, -2});
  REQUIRE(ivals(binary(BinaryOp::kFloorDivide, a, b)) == I{3, -4, -4, 3});
  REQUIRE(ivals(binary(BinaryOp::kRemainder, a, b)) == I{1, 1, -1, -1});
  // integer division by zero does not trap: both give 0
  REQUIRE(ivals(binary(BinaryOp::kFloorDivide, iarr({5, -5, 0}), iarr({0, 0, 0}))) == I{0, 0, 0});
  REQUIRE(ivals(binary(BinaryOp::kRemainder, iarr({5, -5, 0}), iarr({0, 0, 0}))) == I{0, 0, 0});
  const std::int64_t min32 = std::numeric_limits<std::int32_t>::min();
  REQUIRE(ivals(binary(BinaryOp::kFloorDivide, iarr({min32}), iarr({-1}))) == I{min32});  // wraps
  REQUIRE(ivals(binary(BinaryOp::kRemainder, iarr({min32}), iarr({-1}))) == I{0});
  Array fa = arr({7, -7, 7.5, -7.5});
  Array fb = arr({2, 2, -2, 2});
  REQUIRE(vals(binary(BinaryOp::kFloorDivide, fa, fb)) == V{3, -4, -4, -4});
  REQUIRE(vals(binary(BinaryOp::kRemainder, fa, fb)) == V{1, 1, -0.5, 0.5});
  REQUIRE(std::isnan(binary(BinaryOp::kRemainder, arr({1}), arr({0})).element_as_double(0)));
  Array bb = binary(BinaryOp::kFloorDivide, barr({true}), barr({true}));
  REQUIRE(bb.dtype() == DType::kInt32);
  REQUIRE(ivals(bb) == I{1});
}

TEST_CASE("core::elementwise: power keeps integers integral", "[elementwise]") {
  Array p = binary(BinaryOp::kPower, iarr({2, 3, -1, 1, 2, -2, 0}), iarr({10, 2, -3, -5, -1, 3, 0}));
  REQUIRE(p.dtype() == DType::kInt32);
  REQUIRE(ivals(p) == I{1024, 9, -1, 1, 0, -8, 1});
  REQUIRE(ivals(binary(BinaryOp::kPower, iarr({2}, DType::kInt64), iarr({40}, DType::kInt64))) ==
          I{std::int64_t{1} << 40});
  Array f = binary(BinaryOp::kPower, arr({2, 4}), weak_float(0.5));
  REQUIRE(f.dtype() == DType::kFloat32);
  REQUIRE(vals(f) == V{static_cast<double>(std::sqrt(2.0f)), 2.0});
}

TEST_CASE("core::elementwise: maximum and minimum propagate NaN", "[elementwise]") {
  Array a = arr({1, kNan, 3, -1});
  Array b = arr({2, 2, kNan, -2});
  REQUIRE(same(vals(binary(BinaryOp::kMaximum, a, b)), V{2, kNan, kNan, -1}));
  REQUIRE(same(vals(binary(BinaryOp::kMinimum, a, b)), V{1, kNan, kNan, -2}));
  Array m = binary(BinaryOp::kMaximum, iarr({1, 5}, DType::kInt64), weak_int(3));
  REQUIRE(m.dtype() == DType::kInt64);
  REQUIRE(ivals(m) == I{3, 5});
}

TEST_CASE("core::elementwise: comparisons and logical ops give bool", "[elementwise]") {
  Array a = iarr({1, 2, 3});
  Array lt = binary(BinaryOp::kLess, a, weak_float(2.5));
  REQUIRE(lt.dtype() == DType::kBool);
  REQUIRE_FALSE(lt.weak_type());
  REQUIRE(ivals(lt) == I{1, 1, 0});
  REQUIRE(ivals(binary(BinaryOp::kEqual, a, arr({1, 2.5, 3}))) == I{1, 0, 1});
  REQUIRE(ivals(binary(BinaryOp::kNotEqual, arr({kNan}), arr({kNan}))) == I{1});
  REQUIRE(ivals(binary(BinaryOp::kGreaterEqual, a, iarr({2}))) == I{0, 1, 1});
  REQUIRE(ivals(binary(BinaryOp::kLessEqual, a, iarr({2}))) == I{1, 1, 0});
  REQUIRE(ivals(binary(BinaryOp::kGreater, a, iarr({2}))) == I{0, 0, 1});
  // logical ops treat nonzero as true
  Array x = iarr({0, 1, 2, 0});
  Array y = arr({3, 0, 0.5, 0});
  REQUIRE(ivals(binary(BinaryOp::kLogicalAnd, x, y)) == I{0, 0, 1, 0});
  REQUIRE(ivals(binary(BinaryOp::kLogicalOr, x, y)) == I{1, 1, 1, 0});
  REQUIRE(ivals(binary(BinaryOp::kLogicalXor, x, y)) == I{1, 1, 0, 0});
  REQUIRE(binary(BinaryOp::kLogicalXor, x, y).dtype() == DType::kBool);
  REQUIRE(ivals(unary(UnaryOp::kLogicalNot, arr({0, -0.5, kNan}))) == I{1, 0, 0});
}

TEST_CASE("core::elementwise: bitwise ops need integers or bools", "[elementwise]") {
  REQUIRE(ivals(binary(BinaryOp::kBitwiseXor, iarr({5, 3}), iarr({1, 1}))) == I{4, 2});
  REQUIRE(ivals(binary(BinaryOp::kBitwiseAnd, iarr({6, 3}), weak_int(2))) == I{2, 2});
  REQUIRE(ivals(binary(BinaryOp::kBitwiseOr, iarr({4}, DType::kInt64), iarr({1}))) == I{5});
  Array bb = binary(BinaryOp::kBitwiseAnd, barr({true, true}), barr({true, false}));
  REQUIRE(bb.dtype() == DType::kBool);
  REQUIRE(ivals(bb) == I{1, 0});
  REQUIRE(ivals(unary(UnaryOp::kBitwiseNot, iarr({0, 5}))) == I{-1, -6});
  REQUIRE(ivals(unary(UnaryOp::kBitwiseNot, barr({true, false}))) == I{0, 1});

  Report r = error_of([] { binary(BinaryOp::kBitwiseAnd, arr({1.0}), iarr({1})); });
  REQUIRE(r.kind == "TypeError");
  REQUIRE_THAT(r.message, Catch::Contains("bitwise_and") && Catch::Contains("float32 and int32"));
  REQUIRE_THAT(r.hint, Catch::Contains("logical"));
  REQUIRE(error_of([] { unary(UnaryOp::kBitwiseNot, arr({1.0})); }).kind == "TypeError");
}

TEST_CASE("core::elementwise: bool subtract and negative are TypeErrors", "[elementwise]") {
  Report r = error_of([] { barr({true}) - barr({false}); });
  REQUIRE(r.kind == "TypeError");
  REQUIRE_THAT(r.message, Catch::Contains("subtract"));
  REQUIRE_THAT(r.hint, Catch::Contains("logical_xor"));
  REQUIRE(error_of([] { -barr({true}); }).kind == "TypeError");
}

TEST_CASE("core::elementwise: unary ops keep or widen dtypes like jnp", "[elementwise]") {
  Array e = unary(UnaryOp::kExp, iarr({0, 1}));
  REQUIRE(e.dtype() == DType::kFloat32);
  REQUIRE(vals(e) == V{1.0, static_cast<double>(std::exp(1.0f))});
  Array ws = unary(UnaryOp::kSin, weak_int(0));
  REQUIRE(ws.dtype() == DType::kFloat32);
  REQUIRE(ws.weak_type());
  REQUIRE(unary(UnaryOp::kSqrt, arr({4}, DType::kFloat64)).dtype() == DType::kFloat64);
  REQUIRE(vals(unary(UnaryOp::kSqrt, arr({4, 2.25}, DType::kFloat16))) == V{2, 1.5});
  Array ab = unary(UnaryOp::kAbs, iarr({-3, 4}, DType::kInt64));
  REQUIRE(ab.dtype() == DType::kInt64);
  REQUIRE(ivals(ab) == I{3, 4});
  const std::int64_t min32 = std::numeric_limits<std::int32_t>::min();
  REQUIRE(ivals(-iarr({min32, 5})) == I{min32, -5});  // wraps, no UB
  REQUIRE(same(vals(unary(UnaryOp::kSign, arr({-2, 0, 3, kNan, -0.0}))), V{-1, 0, 1, kNan, -0.0}));
  REQUIRE(ivals(unary(UnaryOp::kSign, iarr({-7, 0, 9}))) == I{-1, 0, 1});
  Array sq = unary(UnaryOp::kSquare, barr({true, false}));
  REQUIRE(sq.dtype() == DType::kInt32);
  REQUIRE(ivals(sq) == I{1, 0});
  REQUIRE(ivals(unary(UnaryOp::kSquare, iarr({-3}))) == I{9});
  REQUIRE(same(vals(unary(UnaryOp::kRound, arr({0.5, 1.5, 2.5, -0.5, -1.7}))), V{0, 2, 2, -0.0, -2}));
  REQUIRE(same(vals(unary(UnaryOp::kRoundAwayFromZero, arr({0.5, 1.5, 2.5, -0.5, -1.7}))), V{1, 2, 3, -1, -2}));
  REQUIRE(vals(unary(UnaryOp::kFloor, arr({-1.5, 1.5}))) == V{-2, 1});
  REQUIRE(vals(unary(UnaryOp::kCeil, arr({-1.5, 1.5}))) == V{-1, 2});
  Array fi = unary(UnaryOp::kFloor, iarr({3, -3}));
  REQUIRE(fi.dtype() == DType::kInt32);
  REQUIRE(ivals(fi) == I{3, -3});
  REQUIRE(ivals(unary(UnaryOp::kIsNan, arr({kNan, 1, kInf}))) == I{1, 0, 0});
  REQUIRE(ivals(unary(UnaryOp::kIsInf, arr({kNan, 1, -kInf}))) == I{0, 0, 1});
  REQUIRE(ivals(unary(UnaryOp::kIsFinite, arr({kNan, 1, kInf}))) == I{0, 1, 0});
  REQUIRE(ivals(unary(UnaryOp::kIsFinite, iarr({1}))) == I{1});
  Array rec = unary(UnaryOp::kReciprocal, iarr({2, 4}));
  REQUIRE(rec.dtype() == DType::kFloat32);
  REQUIRE(vals(rec) == V{0.5, 0.25});
  REQUIRE(vals(unary(UnaryOp::kLogistic, arr({0}))) == V{0.5});
  REQUIRE(vals(unary(UnaryOp::kRsqrt, arr({4}))) == V{0.5});
  REQUIRE(vals(unary(UnaryOp::kLog, arr({1}))) == V{0});
  REQUIRE(vals(unary(UnaryOp::kPositive, iarr({-2}))) == V{-2});
  REQUIRE(vals(arr({1}) - arr({3})) == V{-2});
  REQUIRE(op_name(UnaryOp::kLogistic) == "logistic");
  REQUIRE(op_name(BinaryOp::kFloorDivide) == "floor_divide");
}

TEST_CASE("core::elementwise: half types compute in float32 and round once", "[elementwise]") {
  // float16(0.1) + float16(0.2) = 0.2999267578125 exactly in float32, a tie
  // between two float16 values: rounds to even, 0.2998046875 (numpy agrees).
  Array h = arr({0.1}, DType::kFloat16) + arr({0.2}, DType::kFloat16);
  REQUIRE(h.dtype() == DType::kFloat16);
  REQUIRE(vals(h) == V{0.2998046875});
  // bfloat16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to 1.
  Array b = arr({1.0}, DType::kBFloat16) + arr({0.00390625}, DType::kBFloat16);
  REQUIRE(vals(b) == V{1.0});
  REQUIRE(vals(arr({1.0}, DType::kFloat32) + arr({0.00390625}, DType::kFloat32)) == V{1.00390625});
  Array m = arr({3.0}, DType::kFloat16) * weak_float(0.1);
  REQUIRE(m.dtype() == DType::kFloat16);
}

TEST_CASE("core::elementwise: where broadcasts three ways and promotes x with y", "[elementwise]") {
  Array c = barr({true, false, true}, {3, 1});
  Array x = iarr({1, 2}, DType::kInt32, {1, 2});
  Array w = where(c, x, weak_float(-0.5));
  REQUIRE(w.shape() == Shape{3, 2});
  REQUIRE(w.dtype() == DType::kFloat32);
  REQUIRE(vals(w) == V{1, 2, -0.5, -0.5, 1, 2});
  REQUIRE(ivals(where(iarr({0, 3}), iarr({1, 1}), iarr({2, 2}))) == I{2, 1});
  Report r = error_of([] { where(barr({true, false}), iarr({1, 2, 3}), iarr({1})); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("where") && Catch::Contains("(2,), (3,), (1,)"));
}

TEST_CASE("core::elementwise: clip bounds are optional", "[elementwise]") {
  Array x = iarr({1, 5, 10});
  Array c = clip(x, weak_int(2), weak_int(8));
  REQUIRE(c.dtype() == DType::kInt32);
  REQUIRE(ivals(c) == I{2, 5, 8});
  REQUIRE(ivals(clip(x, Array(), weak_int(4))) == I{1, 4, 4});
  REQUIRE(ivals(clip(x, weak_int(6), Array())) == I{6, 6, 10});
  REQUIRE(ivals(clip(x, Array(), Array())) == I{1, 5, 10});
  REQUIRE(vals(clip(x, weak_float(1.5), Array())) == V{1.5, 5, 10});
}

TEST_CASE("core::elementwise: astype truncates, saturates and rounds", "[elementwise]") {
  Array f = arr({1.7, -1.7, kNan, 1e10, -1e10});
  Array i = astype(f, DType::kInt32);
  REQUIRE(i.dtype() == DType::kInt32);
  REQUIRE(ivals(i) == I{1, -1, 0, 2147483647, -2147483648LL});
  REQUIRE(ivals(astype(arr({0, 0.1, kNan}), DType::kBool)) == I{0, 1, 1});
  REQUIRE(vals(astype(arr({0.1}, DType::kFloat64), DType::kFloat16)) == V{0.0999755859375});
  REQUIRE(vals(astype(iarr({3}), DType::kBFloat16)) == V{3});
  REQUIRE(ivals(astype(iarr({(1LL << 32) + 5}, DType::kInt64), DType::kInt32)) == I{5});
  Array w = astype(weak_float(2.0), DType::kFloat32);
  REQUIRE_FALSE(w.weak_type());
}

TEST_CASE("core::elementwise: empty and scalar operands", "[elementwise]") {
  Array e = zeros({0, 3}) + arr({1, 2, 3});
  REQUIRE(e.shape() == Shape{0, 3});
  REQUIRE(unary(UnaryOp::kExp, zeros({0})).size() == 0);
  REQUIRE(where(zeros({0}, DType::kBool), zeros({0}), zeros({1})).size() == 0);
  Array s = Array::scalar(2.0, DType::kFloat32) * Array::scalar(3.0, DType::kFloat32);
  REQUIRE(s.shape().empty());
  REQUIRE(s.element_as_double(0) == 6.0);
}

TEST_CASE("core::elementwise: shape mismatch names the op and both shapes", "[elementwise]") {
  Report r = error_of([] { zeros({2, 3}) + zeros({4}); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::StartsWith("add:") && Catch::Contains("(2, 3)") && Catch::Contains("(4,)"));
  REQUIRE_FALSE(r.hint.empty());
}

TEST_CASE("core::elementwise: arrays of another device are rejected", "[elementwise]") {
  auto arena = std::make_shared<detail::Arena>(0, detail::Arena::kUnlimited, "device 0");
  detail::Placement dev0{nullptr, arena, 0};
  Array on_dev;
  Array host = ones({2});
  {
    detail::PlacementScope scope(&dev0);
    on_dev = ones({2});
    Array sum = on_dev + host;  // host constants may be read on a device
    REQUIRE(sum.device() == 0);
  }
  Report r = error_of([&] { on_dev + host; });
  REQUIRE(r.kind == "DeviceOwnershipError");
  REQUIRE_THAT(r.message, Catch::Contains("add"));
}
