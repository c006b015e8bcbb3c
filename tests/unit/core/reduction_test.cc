#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include <tbb/global_control.h>

#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/core/reduction.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;
using V = std::vector<double>;
using I = std::vector<std::int64_t>;

namespace {
const double kReduceNan = std::numeric_limits<double>::quiet_NaN();

Array cube() { return reshape(arange(24), {2, 3, 4}); }

// Deterministic pseudo-random float32 values in [-1, 1) of varied magnitude.
Array noise(const Shape& shape) {
  std::vector<double> v(static_cast<std::size_t>(num_elements(shape)));
  std::uint64_t s = 0x9e3779b97f4a7c15ULL;
  for (auto& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = (static_cast<double>(s >> 11) / 9007199254740992.0 * 2 - 1) * ((s >> 7) % 3 == 0 ? 1000.0 : 1.0);
  }
  return Array::from_doubles(v, shape, DType::kFloat32);
}
}  // namespace

TEST_CASE("core::reduction: sum over all, one, several and negative axes", "[reduction]") {
  Array x = cube();
  Array all = sum(x);
  REQUIRE(all.shape().empty());
  REQUIRE(all.dtype() == DType::kInt32);
  REQUIRE(all.element_as_int64(0) == 276);
  Array a0 = sum(x, std::vector<int>{0});
  REQUIRE(a0.shape() == Shape{3, 4});
  REQUIRE(ivals(a0) == I{12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
  Array a02 = sum(x, std::vector<int>{0, -1});
  REQUIRE(ivals(a02) == I{60, 92, 124});
  Array k = sum(x, std::vector<int>{-1}, true);
  REQUIRE(k.shape() == Shape{2, 3, 1});
  REQUIRE(ivals(k) == I{6, 22, 38, 54, 70, 86});
  REQUIRE(ivals(sum(x, std::vector<int>{1})) == I{12, 15, 18, 21, 48, 51, 54, 57});
  Array none = sum(x, std::vector<int>{});
  REQUIRE(none.shape() == Shape{2, 3, 4});
  REQUIRE(ivals(none) == ivals(x));
  REQUIRE(sum(x, std::nullopt, true).shape() == Shape{1, 1, 1});
}

TEST_CASE("core::reduction: result dtypes follow jnp", "[reduction]") {
  Array b = barr({true, true, false});
  REQUIRE(sum(b).dtype() == DType::kInt32);
  REQUIRE(sum(b).element_as_int64(0) == 2);
  REQUIRE(reduce(ReduceOp::kProd, b).dtype() == DType::kInt32);
  REQUIRE(sum(iarr({1, 2}, DType::kInt64)).dtype() == DType::kInt64);
  REQUIRE(mean(iarr({1, 2})).dtype() == DType::kFloat32);
  REQUIRE(mean(iarr({1, 2})).element_as_double(0) == 1.5);
  REQUIRE(mean(b).dtype() == DType::kFloat32);
  REQUIRE(sum(arr({1, 2}, DType::kFloat16)).dtype() == DType::kFloat16);
  REQUIRE(mean(arr({1, 2}, DType::kBFloat16)).dtype() == DType::kBFloat16);
  REQUIRE(max(b).dtype() == DType::kBool);
  REQUIRE(reduce(ReduceOp::kAny, iarr({0, 2})).dtype() == DType::kBool);
  REQUIRE(reduce(ReduceOp::kArgMax, arr({1, 2})).dtype() == DType::kInt32);
  REQUIRE(reduce(ReduceOp::kVar, iarr({1, 2})).dtype() == DType::kFloat32);
  REQUIRE(sum(Array::scalar(2.0, DType::kFloat32, true)).weak_type());
  REQUIRE_FALSE(reduce(ReduceOp::kAll, Array::scalar(2.0, DType::kFloat32, true)).weak_type());
}

TEST_CASE("core::reduction: float16 sums accumulate wide and round once", "[reduction]") {
  // 2048 + 1 + 1 is 2050 exactly; a float16 running sum would stick at 2048.
  Array h = arr({2048, 1, 1}, DType::kFloat16);
  REQUIRE(sum(h).element_as_double(0) == 2050.0);
  // int32 sums wrap like XLA
  REQUIRE(sum(iarr({2147483647, 1})).element_as_int64(0) == -2147483648LL);
}

TEST_CASE("core::reduction: prod, any, all and empty identities", "[reduction]") {
  REQUIRE(reduce(ReduceOp::kProd, iarr({1, 2, 3, 4})).element_as_int64(0) == 24);
  REQUIRE(vals(reduce(ReduceOp::kProd, arr({1, 2, 3, 4}, DType::kFloat32, {2, 2}), std::vector<int>{0})) ==
          V{3, 8});
  REQUIRE(reduce(ReduceOp::kProd, zeros({0})).element_as_double(0) == 1.0);
  REQUIRE(sum(zeros({0})).element_as_double(0) == 0.0);
  REQUIRE(std::isnan(mean(zeros({0})).element_as_double(0)));
  Array e = sum(zeros({0, 3}), std::vector<int>{0});
  REQUIRE(e.shape() == Shape{3});
  REQUIRE(vals(e) == V{0, 0, 0});
  REQUIRE(sum(zeros({3, 0}), std::vector<int>{0}).shape() == Shape{0});
  REQUIRE(ivals(reduce(ReduceOp::kAny, iarr({0, 0, 2, 0}, DType::kInt32, {2, 2}), std::vector<int>{1})) == I{0, 1});
  REQUIRE(ivals(reduce(ReduceOp::kAll, arr({1, kReduceNan, 0, 1}, DType::kFloat32, {2, 2}), std::vector<int>{1})) ==
          I{1, 0});
  REQUIRE(reduce(ReduceOp::kAny, zeros({0})).element_as_bool(0) == false);
  REQUIRE(reduce(ReduceOp::kAll, zeros({0})).element_as_bool(0) == true);
}

TEST_CASE("core::reduction: max and min propagate NaN and reject empty axes", "[reduction]") {
  REQUIRE(std::isnan(max(arr({1, kReduceNan, 3})).element_as_double(0)));
  REQUIRE(std::isnan(min(arr({1, kReduceNan, 3})).element_as_double(0)));
  REQUIRE(vals(max(arr({1, 5, 3, -2}, DType::kFloat32, {2, 2}), std::vector<int>{1})) == V{5, 3});
  REQUIRE(ivals(min(iarr({4, -9, 7}, DType::kInt64))) == I{-9});
  REQUIRE(ivals(max(barr({false, true}))) == I{1});
  Report r = error_of([] { max(zeros({0, 3}), std::vector<int>{0}); });
  REQUIRE(r.kind == "ValueError");
  REQUIRE_THAT(r.message, Catch::Contains("max: zero-size array") && Catch::Contains("(0, 3)"));
  REQUIRE_FALSE(r.hint.empty());
  REQUIRE(error_of([] { reduce(ReduceOp::kArgMin, zeros({0})); }).kind == "ValueError");
}

TEST_CASE("core::reduction: argmax and argmin return the first occurrence", "[reduction]") {
  REQUIRE(reduce(ReduceOp::kArgMax, iarr({1, 3, 3, 2})).element_as_int64(0) == 1);
  REQUIRE(reduce(ReduceOp::kArgMin, iarr({2, 0, 5, 0})).element_as_int64(0) == 1);
  REQUIRE(reduce(ReduceOp::kArgMax, arr({1, kReduceNan, 5, kReduceNan})).element_as_int64(0) == 1);
  REQUIRE(reduce(ReduceOp::kArgMin, arr({2, 1, kReduceNan})).element_as_int64(0) == 2);
  Array m = arr({1, 5, 2, 7, 0, 7}, DType::kFloat32, {2, 3});
  REQUIRE(ivals(reduce(ReduceOp::kArgMax, m, std::vector<int>{1})) == I{1, 0});
  REQUIRE(ivals(reduce(ReduceOp::kArgMax, m, std::vector<int>{0})) == I{1, 0, 1});
  REQUIRE(reduce(ReduceOp::kArgMax, m).element_as_int64(0) == 3);  // flattened
  REQUIRE(reduce(ReduceOp::kArgMax, m, std::vector<int>{-1}, true).shape() == Shape{2, 1});
  REQUIRE(reduce(ReduceOp::kArgMax, Array::scalar(3.0, DType::kFloat32)).element_as_int64(0) == 0);
  Report r = error_of([&] { reduce(ReduceOp::kArgMax, m, std::vector<int>{0, 1}); });
  REQUIRE(r.kind == "InvalidArgument");
  REQUIRE_THAT(r.message, Catch::Contains("argmax") && Catch::Contains("(0, 1)"));
}

TEST_CASE("core::reduction: mean, var and std (ddof=0)", "[reduction]") {
  Array x = arr({1, 2, 3, 4});
  REQUIRE(vals(mean(x)) == V{2.5});
  REQUIRE(vals(reduce(ReduceOp::kVar, x)) == V{1.25});
  REQUIRE(vals(reduce(ReduceOp::kStd, x)) == V{static_cast<double>(static_cast<float>(std::sqrt(1.25)))});
  Array m = arr({1, 2, 3, 4, 6, 8}, DType::kFloat64, {2, 3});
  REQUIRE(vals(mean(m, std::vector<int>{1})) == V{2, 6});
  REQUIRE(vals(reduce(ReduceOp::kVar, m, std::vector<int>{1})) == V{2.0 / 3.0, 8.0 / 3.0});
  REQUIRE(vals(mean(m, std::vector<int>{0})) == V{2.5, 4, 5.5});
}

TEST_CASE("core::reduction: bad axes are reported", "[reduction]") {
  Report r = error_of([] { sum(zeros({2, 3}), std::vector<int>{1, -1}); });
  REQUIRE(r.kind == "ValueError");
  REQUIRE_THAT(r.message, Catch::Contains("duplicate") && Catch::Contains("(1, -1)"));
  REQUIRE(error_of([] { sum(zeros({2, 3}), std::vector<int>{2}); }).kind == "AxisError");
  REQUIRE(error_of([] { sum(Array::scalar(1.0, DType::kFloat32), std::vector<int>{0}); }).kind == "AxisError");
}

TEST_CASE("core::reduction: results do not depend on the thread count", "[reduction]") {
  Array x = noise({8, 1 << 17});  // 1M elements
  auto run = [&] {
    return std::vector<Array>{sum(x), sum(x, std::vector<int>{1}), sum(x, std::vector<int>{0}), mean(x),
                              reduce(ReduceOp::kVar, x, std::vector<int>{1}), sum(ravel(x))};
  };
  std::vector<Array> parallel = run();
  std::vector<Array> serial;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    serial = run();
  }
  REQUIRE(parallel.size() == serial.size());
  for (std::size_t i = 0; i < parallel.size(); ++i) {
    INFO("result " << i);
    REQUIRE(parallel[i].identical(serial[i]));
  }
  // and the wide accumulator keeps the float32 total within rounding of the exact one
  double exact = 0;
  for (double v : vals(x)) exact += v;
  REQUIRE(parallel[0].element_as_double(0) == static_cast<double>(static_cast<float>(exact)));
}

TEST_CASE("core::reduction: cumsum and cumprod scan one axis", "[reduction]") {
  REQUIRE(ivals(cumsum(iarr({1, 2, 3, 4}))) == I{1, 3, 6, 10});
  Array m = iarr({1, 2, 3, 4, 5, 6}, DType::kInt32, {2, 3});
  REQUIRE(ivals(cumsum(m, 0)) == I{1, 2, 3, 5, 7, 9});
  REQUIRE(ivals(cumsum(m, -1)) == I{1, 3, 6, 4, 9, 15});
  Array flat = cumsum(m);
  REQUIRE(flat.shape() == Shape{6});
  REQUIRE(ivals(flat) == I{1, 3, 6, 10, 15, 21});
  REQUIRE(ivals(cumprod(m, 1)) == I{1, 2, 6, 4, 20, 120});
  Array b = cumsum(barr({true, false, true}));
  REQUIRE(b.dtype() == DType::kInt32);
  REQUIRE(ivals(b) == I{1, 1, 2});
  REQUIRE(vals(cumsum(arr({0.5, 0.25}, DType::kFloat16))) == V{0.5, 0.75});
  REQUIRE(cumsum(zeros({0, 2}), 0).shape() == Shape{0, 2});
  REQUIRE(error_of([&] { cumsum(m, 2); }).kind == "AxisError");
}

TEST_CASE("core::slices_equal: numpy's array_equal(equal_nan=True) along an axis", "[core]") {
  const double nan = std::nan("");
  CHECK(slices_equal(arr({1, 2, 1, 2, 1, 2}, DType::kFloat32, {3, 2}), 0));
  CHECK_FALSE(slices_equal(arr({1, 2, 1, 2, 1, 3}, DType::kFloat32, {3, 2}), 0));
  CHECK_FALSE(slices_equal(arr({1, 2, 1, 2, 1, 2}, DType::kFloat32, {3, 2}), 1));
  CHECK(slices_equal(arr({1, 1, 2, 2, 3, 3}, DType::kFloat32, {3, 2}), 1));
  CHECK(slices_equal(arr({0.0, nan, -0.0, nan}, DType::kFloat32, {2, 2}), 0));  // -0 == 0, nan == nan
  CHECK(slices_equal(iarr({7, 7, 7}, DType::kInt64), 0));
  CHECK(slices_equal(arr({5}, DType::kFloat32, {1}), 0));
  CHECK(slices_equal(arr({}, DType::kFloat32, {0, 3}), 0));
}

TEST_CASE("core::reduce: a sum over leading axes, read down the columns, has the transposed sum's bits", "[core]") {
  // 5000 rows: two blocks of the pairwise summation.
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kBool}) {
    INFO(dtype_name(dt));
    Array x = astype(unary(UnaryOp::kSin, reshape(arange(0, 5000 * 6, 1, DType::kFloat32), {5000, 2, 3})), dt);
    if (dt == DType::kInt32) x = astype(binary(BinaryOp::kMultiply, x, weak_float(1000.0)), DType::kInt32);
    Array down = reduce(ReduceOp::kSum, x, std::vector<int>{0});
    Array across = reduce(ReduceOp::kSum, transpose(x, {1, 2, 0}), std::vector<int>{2});
    CHECK(down.shape() == Shape{2, 3});
    CHECK(down.identical(across));
    Array two = reduce(ReduceOp::kSum, x, std::vector<int>{0, 1});
    CHECK(two.identical(reduce(ReduceOp::kSum, transpose(x, {2, 0, 1}), std::vector<int>{1, 2})));
  }
}


namespace {
// The documented order of a float sum (reduction.cc): blocks of 4096, each
// in 8 lanes (element i in lane i % 8 of its block) added pairwise, block
// partials added pairwise; in double, rounded once to the output type.
double documented_sum(const std::vector<double>& v) {
  std::vector<double> blocks;
  for (std::size_t b = 0; b < v.size(); b += 4096) {
    double lane[8] = {};
    for (std::size_t i = b; i < std::min(v.size(), b + 4096); ++i) lane[(i - b) % 8] += v[i];
    blocks.push_back(((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])));
  }
  if (blocks.empty()) return 0.0;
  std::size_t n = blocks.size();
  while (n > 1) {
    std::size_t half = n / 2;
    for (std::size_t i = 0; i < half; ++i) blocks[i] = blocks[2 * i] + blocks[2 * i + 1];
    if (n % 2 != 0) {
      blocks[half] = blocks[n - 1];
      n = half + 1;
    } else {
      n = half;
    }
  }
  return blocks[0];
}

// Values over 80 binary orders of magnitude, so that double sums round and
// their bits depend on the order of the additions.
std::vector<double> wide_values(std::int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t s = 0x2545f4914f6cdd1dULL;
  for (auto& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = std::ldexp(static_cast<double>(s >> 11) / 9007199254740992.0 * 2 - 1, static_cast<int>((s >> 5) % 80) - 40);
  }
  return v;
}

template <class T>
bool same_bits(const Array& a, std::size_t index, T want) {
  return std::memcmp(static_cast<const T*>(a.raw_data()) + index, &want, sizeof want) == 0;
}
}  // namespace

TEST_CASE("core::reduce: float sums add in the documented order, along rows and down columns", "[core]") {
  // Lengths with tails, a single element, fewer elements than lanes, and
  // several blocks (odd and even counts).
  for (std::int64_t n : {1, 3, 7, 8, 13, 4096, 4103, 3 * 4096 + 5, 4 * 4096}) {
    INFO("n = " << n);
    const std::vector<double> v = wide_values(n);
    Array x = Array::from_doubles(v, {n}, DType::kFloat64);
    const double want = documented_sum(v);
    CHECK(same_bits(sum(x), 0, want));
    // Down the columns of an (n, 2) matrix whose column 1 is x.
    Array cols = reduce(ReduceOp::kSum, stack({x, x}, 1), std::vector<int>{0});
    CHECK(same_bits(cols, 1, want));
    CHECK(same_bits(reduce(ReduceOp::kMean, x, std::nullopt), 0, want / static_cast<double>(n)));
    // float32 adds in double in the same order and rounds once.
    Array x32 = astype(x, DType::kFloat32);
    std::vector<double> v32(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) v32[i] = static_cast<float>(v[i]);
    CHECK(same_bits(sum(x32), 0, static_cast<float>(documented_sum(v32))));
  }
}
