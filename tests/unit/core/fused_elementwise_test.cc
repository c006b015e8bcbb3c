// Fused elementwise chains: one pass over memory must give exactly what the
// ops give one array at a time (same kernels, same type rules), make arrays
// only for the outputs, and step aside on a device whose memory the host
// cannot touch.

#include <catch2/catch.hpp>

#include <cmath>

#include <tbb/global_control.h>

#include "core/arena.h"
#include "core/fused_elementwise.h"
#include "core/placement.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/core/reduction.h"
#include "support/fake_device.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;
using detail::ElementwiseChain;

namespace {

// n values spread over negatives, zeros, fractions and large magnitudes.
Array ramp(std::int64_t n, DType dt, Shape shape = {}) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = std::sin(0.37 * static_cast<double>(i)) * 7.0 - 1.0;
  if (shape.empty()) shape = {n};
  if (!is_floating(dt)) {
    std::vector<std::int64_t> ints(v.begin(), v.end());
    return Array::from_int64s(ints, shape, dt);
  }
  return Array::from_doubles(v, shape, dt);
}

std::vector<Array> run(const ElementwiseChain& c, std::vector<Array> inputs) {
  std::optional<std::vector<Array>> out = c.run(inputs, {});
  REQUIRE(out.has_value());
  return *out;
}

}  // namespace

TEST_CASE("core::ElementwiseChain: a float chain equals its ops one at a time, bit for bit", "[core][fusion]") {
  // Sizes around the block and above the parallel threshold.
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{5}, ElementwiseChain::kBlock, 3 * ElementwiseChain::kBlock + 17,
                         std::int64_t{70001}}) {
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
      INFO(n << " " << dtype_name(dt));
      Array x = ramp(n, dt);
      Array h = weak_float(0.5);
      ElementwiseChain c(Shape{n});
      auto vx = c.input(Shape{n}, dt, false);
      auto vh = c.input(Shape{}, DType::kFloat32, true);
      auto a = c.binary(BinaryOp::kMultiply, vx, vh);
      auto b = c.unary(UnaryOp::kTanh, a);
      auto d = c.binary(BinaryOp::kMaximum, b, c.unary(UnaryOp::kAbs, vx));
      auto e = c.unary(UnaryOp::kLog, c.binary(BinaryOp::kAdd, d, vh));
      c.output(e);
      c.output(b);
      c.finish();
      std::vector<Array> got = run(c, {x, h});

      Array ra = binary(BinaryOp::kMultiply, x, h);
      Array rb = unary(UnaryOp::kTanh, ra);
      Array rd = binary(BinaryOp::kMaximum, rb, unary(UnaryOp::kAbs, x));
      Array re = unary(UnaryOp::kLog, binary(BinaryOp::kAdd, rd, h));
      REQUIRE(got.size() == 2);
      CHECK(got[0].identical(re));
      CHECK(got[0].weak_type() == re.weak_type());
      CHECK(got[1].identical(rb));
      CHECK(c.dtype(e) == dt);
    }
  }
}

TEST_CASE("core::ElementwiseChain: integer, boolean and mixed-type ops convert as the ops do", "[core][fusion]") {
  const std::int64_t n = 3 * ElementwiseChain::kBlock + 5;
  Array i = ramp(n, DType::kInt32);
  Array j = ramp(n, DType::kInt64);  // int32 op int64 promotes to int64
  Array zero = weak_int(0);
  ElementwiseChain c(Shape{n});
  auto vi = c.input(Shape{n}, DType::kInt32, false);
  auto vj = c.input(Shape{n}, DType::kInt64, false);
  auto vz = c.input(Shape{}, DType::kInt32, true);
  auto fd = c.binary(BinaryOp::kFloorDivide, vi, vz);                 // x // 0 == 0
  auto rm = c.binary(BinaryOp::kRemainder, vj, vi);                   // int64, mixed
  auto lt = c.binary(BinaryOp::kLess, vi, vz);                        // bool
  auto sel = c.select(lt, rm, c.convert(fd, DType::kInt64, false));   // where(i < 0, rm, fd)
  auto half = c.binary(BinaryOp::kDivide, sel, vz);                   // int / int -> float32 (x / 0 -> inf, nan)
  auto both = c.binary(BinaryOp::kLogicalAnd, lt, c.unary(UnaryOp::kIsFinite, half));
  c.output(sel);
  c.output(half);
  c.output(both);
  c.finish();
  std::vector<Array> got = run(c, {i, j, zero});

  Array r_fd = binary(BinaryOp::kFloorDivide, i, zero);
  Array r_rm = binary(BinaryOp::kRemainder, j, i);
  Array r_lt = binary(BinaryOp::kLess, i, zero);
  Array r_sel = where(r_lt, r_rm, astype(r_fd, DType::kInt64));
  Array r_half = binary(BinaryOp::kDivide, r_sel, zero);
  Array r_both = binary(BinaryOp::kLogicalAnd, r_lt, unary(UnaryOp::kIsFinite, r_half));
  CHECK(got[0].identical(r_sel));
  CHECK(got[1].identical(r_half));
  CHECK(got[1].dtype() == DType::kFloat32);
  CHECK(got[2].identical(r_both));
  CHECK(got[2].dtype() == DType::kBool);
}

TEST_CASE("core::ElementwiseChain: smaller inputs broadcast, one-value subexpressions are computed once",
          "[core][fusion]") {
  const Shape shape{37, 129};
  Array x = ramp(37 * 129, DType::kFloat32, shape);
  Array row = ramp(129, DType::kFloat32);                  // [129] -> every row
  Array col = ramp(37, DType::kFloat32, Shape{37});        // broadcast_in_dim to axis 0: view [37, 1]
  Array s = Array::scalar(3.0, DType::kFloat32, false);
  ElementwiseChain c(shape);
  auto vx = c.input(shape, DType::kFloat32, false);
  auto vr = c.input(Shape{129}, DType::kFloat32, false);
  auto vc = c.input(Shape{37, 1}, DType::kFloat32, false);
  auto vs = c.input(Shape{}, DType::kFloat32, false);
  auto k = c.unary(UnaryOp::kExp, c.binary(BinaryOp::kMultiply, vs, vs));  // uniform: exp(9)
  auto y = c.binary(BinaryOp::kAdd, c.binary(BinaryOp::kMultiply, vx, vr), vc);
  auto z = c.binary(BinaryOp::kSubtract, y, k);
  c.output(z);
  c.output(k);  // a uniform value made into a whole array
  c.finish();
  std::vector<Array> got = run(c, {x, row, col, s});

  Array rk = unary(UnaryOp::kExp, binary(BinaryOp::kMultiply, s, s));
  Array ry = binary(BinaryOp::kAdd, binary(BinaryOp::kMultiply, x, row), reshape(col, {37, 1}));
  CHECK(got[0].identical(binary(BinaryOp::kSubtract, ry, rk)));
  CHECK(got[1].identical(broadcast_to(rk, shape)));
}

TEST_CASE("core::ElementwiseChain: an input or a repeated value as output is an array of its own", "[core][fusion]") {
  Array x = ramp(10, DType::kFloat32);
  ElementwiseChain c(Shape{10});
  auto vx = c.input(Shape{10}, DType::kFloat32, false);
  auto n = c.unary(UnaryOp::kNegative, vx);
  c.output(vx);
  c.output(n);
  c.output(n);
  c.finish();
  std::vector<Array> got = run(c, {x});
  CHECK(got[0].identical(x));
  CHECK(got[0].raw_data() != x.raw_data());
  CHECK(got[1].identical(unary(UnaryOp::kNegative, x)));
  CHECK(got[2].identical(got[1]));
  CHECK(got[2].raw_data() != got[1].raw_data());
}

namespace {

// A finished chain run on `x` by device 0, with a fresh arena of its own.
struct OnDevice {
  detail::ArenaStats stats;
  std::vector<Array> outputs;
  std::vector<std::size_t> announced;  // before_allocating's calls
};
OnDevice run_on_device(const ElementwiseChain& c, const Array& x) {
  auto arena = std::make_shared<detail::Arena>(0, detail::Arena::kUnlimited, "device 0");
  detail::Placement device{nullptr, arena, 0};
  detail::PlacementScope scope(&device);
  OnDevice r;
  std::optional<std::vector<Array>> got =
      c.run(std::vector<Array>{x}, [&](std::size_t k) { r.announced.push_back(k); });
  REQUIRE(got.has_value());
  r.outputs = std::move(*got);
  r.stats = arena->stats();
  return r;
}

}  // namespace

TEST_CASE("core::ElementwiseChain: only the outputs are charged to the device's arena", "[core][fusion]") {
  const std::int64_t n = 100000;
  Array x = ramp(n, DType::kFloat32);
  ElementwiseChain c(Shape{n});
  auto v = c.input(Shape{n}, DType::kFloat32, false);
  for (int k = 0; k < 10; ++k) v = c.unary(UnaryOp::kSin, c.binary(BinaryOp::kAdd, v, v));
  c.output(v);
  c.finish();
  OnDevice r = run_on_device(c, x);
  CHECK(r.announced == std::vector<std::size_t>{0});
  CHECK(r.stats.allocations == 1);
  CHECK(r.stats.peak_bytes == static_cast<std::size_t>(n) * 4);
  CHECK(r.outputs[0].device() == 0);
}

TEST_CASE("core::ElementwiseChain: an input from another device is the op's ownership error", "[core][fusion]") {
  auto arena = std::make_shared<detail::Arena>(1, detail::Arena::kUnlimited, "device 1");
  detail::Placement one{nullptr, arena, 1};
  Array on_one;
  {
    detail::PlacementScope scope(&one);
    on_one = ramp(4, DType::kFloat32);
  }
  auto arena0 = std::make_shared<detail::Arena>(0, detail::Arena::kUnlimited, "device 0");
  detail::Placement zero{nullptr, arena0, 0};
  detail::PlacementScope scope(&zero);
  ElementwiseChain c(Shape{4});
  auto v = c.input(Shape{4}, DType::kFloat32, false);
  c.output(c.unary(UnaryOp::kExp, c.unary(UnaryOp::kSqrt, v)));
  c.finish();
  Report r = error_of([&] { (void)c.run(std::vector<Array>{on_one}, {}); });
  CHECK(r.kind == "DeviceOwnershipError");
  CHECK(r.op == "sqrt");
}

TEST_CASE("core::ElementwiseChain: on a device with its own memory the caller runs the ops", "[core][fusion]") {
  spmd::testing::ScopedFakeDeviceOps fake;
  spmd::testing::FakeDevicePlacement device(2);
  ElementwiseChain c(Shape{4});
  auto v = c.input(Shape{4}, DType::kFloat32, false);
  c.output(c.unary(UnaryOp::kExp, c.unary(UnaryOp::kSqrt, v)));
  c.finish();
  CHECK_FALSE(c.run(std::vector<Array>{ramp(4, DType::kFloat32)}, {}).has_value());
}

namespace {

// Values over 80 binary orders of magnitude (so a sum's bits depend on its
// order), with a NaN at `nan_at` when it is >= 0.
Array wide(const Shape& shape, DType dt, std::int64_t nan_at = -1) {
  std::vector<double> v(static_cast<std::size_t>(num_elements(shape)));
  std::uint64_t s = 0x9e3779b97f4a7c15ULL;
  for (auto& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const int e = is_floating(dt) && dt != DType::kFloat16 && dt != DType::kBFloat16 ? static_cast<int>((s >> 5) % 80) - 40
                                                                                     : static_cast<int>((s >> 5) % 8);
    x = std::ldexp(static_cast<double>(s >> 11) / 9007199254740992.0 * 2 - 1, e);
  }
  if (nan_at >= 0) v[static_cast<std::size_t>(nan_at)] = std::nan("");
  if (!is_floating(dt)) {
    std::vector<std::int64_t> ints;
    for (double x : v) ints.push_back(static_cast<std::int64_t>(x * 1000));
    return Array::from_int64s(ints, shape, dt);
  }
  return Array::from_doubles(v, shape, dt);
}

std::vector<int> trailing_axes(const Shape& shape, int first) {
  std::vector<int> axes;
  for (int a = first; a < static_cast<int>(shape.size()); ++a) axes.push_back(a);
  return axes;
}

}  // namespace

TEST_CASE("core::ElementwiseChain: a reduction ending the chain has reduce()'s bits, on 1 and 2 threads",
          "[core][fusion]") {
  struct Case {
    Shape shape;
    int first_axis;
  };
  // Short rows grouped into chain blocks (with a partial group), a row of
  // exactly one chain block, rows of two and more RowReduction blocks, whole
  // arrays, a scalar.
  const Case cases[] = {{{3, 5}, 1},    {{1000, 3}, 1},  {{4, 2048}, 1}, {{2, 5000}, 1},   {{3000}, 0},
                        {{64, 256}, 0}, {{5, 4, 9}, 1}, {{2, 3, 4}, 3},  {{}, 0},          {{70001}, 0}};
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    for (const Case& k : cases) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
        for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt32}) {
          INFO(threads << " threads, " << shape_to_string(k.shape) << " from axis " << k.first_axis << ", "
                       << op_name(op) << ", " << dtype_name(dt));
          const std::int64_t n = num_elements(k.shape);
          Array x = wide(k.shape, dt, op != ReduceOp::kSum && n > 7 && is_floating(dt) ? n / 3 : -1);
          Array y = wide(k.shape, dt);
          ElementwiseChain c(k.shape);
          auto vx = c.input(k.shape, dt, false);
          auto vy = c.input(k.shape, dt, false);
          auto prod = c.binary(BinaryOp::kMultiply, vx, vy);
          auto v = c.binary(BinaryOp::kSubtract, prod, vx);
          c.output(prod);
          c.reduce(op, v, ElementwiseChain::Reduced::kTrailing, k.first_axis);
          c.finish();
          std::vector<Array> got = run(c, {x, y});
          REQUIRE(got.size() == 2);
          Array p = binary(BinaryOp::kMultiply, x, y);
          CHECK(got[0].identical(p));
          Array want = reduce(op, binary(BinaryOp::kSubtract, p, x), trailing_axes(k.shape, k.first_axis));
          CHECK(got[1].shape() == want.shape());
          CHECK(got[1].dtype() == want.dtype());
          CHECK(got[1].identical(want));
        }
      }
    }
  }
}

TEST_CASE("core::ElementwiseChain: a reduced output, a one-value expression and an input are reduced as arrays",
          "[core][fusion]") {
  const Shape shape{6, 700};
  Array x = wide(shape, DType::kFloat32);
  // The reduced value is also an output: read in its array, short and long
  // rows, by rows and by columns.
  for (const Shape& out_shape : {Shape{6, 700}, Shape{3, 5000}, Shape{2, 9000}}) {
    for (auto which : {ElementwiseChain::Reduced::kTrailing, ElementwiseChain::Reduced::kLeading}) {
      INFO(shape_to_string(out_shape) << (which == ElementwiseChain::Reduced::kTrailing ? " rows" : " columns"));
      Array xs = wide(out_shape, DType::kFloat32);
      ElementwiseChain c(out_shape);
      auto v = c.unary(UnaryOp::kSin, c.input(out_shape, DType::kFloat32, false));
      c.output(v);
      c.reduce(ReduceOp::kSum, v, which, 1);
      c.finish();
      std::vector<Array> got = run(c, {xs});
      CHECK(got[0].identical(unary(UnaryOp::kSin, xs)));
      CHECK(got[1].identical(sum(got[0], std::vector<int>{which == ElementwiseChain::Reduced::kTrailing ? 1 : 0})));
    }
  }
  {  // one value everywhere: a scalar's exp, broadcast
    ElementwiseChain c(shape);
    auto v = c.unary(UnaryOp::kExp, c.input(Shape{}, DType::kFloat32, false));
    c.reduce(ReduceOp::kSum, v, ElementwiseChain::Reduced::kTrailing, 0);
    c.finish();
    Array s = Array::from_doubles(std::vector<double>{0.25}, {}, DType::kFloat32);
    std::vector<Array> got = run(c, {s});
    REQUIRE(got.size() == 1);
    CHECK(got[0].identical(sum(broadcast_to(unary(UnaryOp::kExp, s), shape))));
  }
  {  // an input passed straight through (a broadcast row)
    ElementwiseChain c(shape);
    auto row = c.input(Shape{1, 700}, DType::kFloat32, true);
    c.reduce(ReduceOp::kMax, row, ElementwiseChain::Reduced::kTrailing, 1);
    c.finish();
    Array r = wide({1, 700}, DType::kFloat32).with_weak_type(true);
    std::vector<Array> got = run(c, {r});
    Array want = reduce(ReduceOp::kMax, broadcast_to(r, shape), std::vector<int>{1});
    CHECK(got[0].identical(want));
    CHECK(got[0].weak_type());
  }
  {  // booleans sum to int32
    ElementwiseChain c(shape);
    auto values = c.input(shape, DType::kFloat32, false);
    auto zero = c.input(Shape{}, DType::kFloat32, true);
    auto positive = c.binary(BinaryOp::kGreater, values, zero);
    c.reduce(ReduceOp::kSum, positive, ElementwiseChain::Reduced::kTrailing, 1);
    c.finish();
    std::vector<Array> got = run(c, {x, weak_float(0.0)});
    CHECK(got[0].dtype() == DType::kInt32);
    CHECK(got[0].identical(sum(binary(BinaryOp::kGreater, x, weak_float(0.0)), std::vector<int>{1})));
  }
}

TEST_CASE("core::ElementwiseChain: a reduction charges the arena for its result only", "[core][fusion]") {
  const std::int64_t n = 100000;
  Array x = ramp(n, DType::kFloat32);
  ElementwiseChain c(Shape{n});
  auto v = c.input(Shape{n}, DType::kFloat32, false);
  auto sq = c.binary(BinaryOp::kMultiply, v, v);
  c.reduce(ReduceOp::kSum, sq, ElementwiseChain::Reduced::kTrailing, 0);
  c.finish();
  OnDevice r = run_on_device(c, x);
  CHECK(r.announced == std::vector<std::size_t>{0});
  CHECK(r.stats.allocations == 1);
  CHECK(r.stats.peak_bytes == 4);
  CHECK(r.outputs[0].device() == 0);
  CHECK(r.outputs[0].identical(sum(binary(BinaryOp::kMultiply, x, x))));
}

TEST_CASE("core::ElementwiseChain: a sum over leading axes ending the chain has reduce()'s bits, on 1 and 2 threads",
          "[core][fusion]") {
  struct Case {
    Shape shape;
    int leading;  // axes reduced
  };
  // Short rows (several per chain block), rows longer than a chain block
  // (segments), more rows than a ColumnSum block, fewer rows than lanes.
  const Case cases[] = {{{64, 256}, 1}, {{3, 5}, 1},      {{5000, 3}, 1}, {{9000, 7}, 1},
                        {{2, 5000}, 1}, {{4, 3, 700}, 2}, {{3, 4, 2}, 1}, {{1, 9}, 1}};
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    for (const Case& k : cases) {
      for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kFloat64, DType::kInt32, DType::kBool}) {
        INFO(threads << " threads, " << shape_to_string(k.shape) << ", " << k.leading << " leading axes, "
                     << dtype_name(dt));
        Array x = dt == DType::kBool ? binary(BinaryOp::kGreater, wide(k.shape, DType::kFloat32), weak_float(0.0))
                                     : wide(k.shape, dt);
        Array y = wide(k.shape, dt == DType::kBool ? DType::kInt32 : dt);
        ElementwiseChain c(k.shape);
        auto vx = c.input(k.shape, x.dtype(), false);
        auto vy = c.input(k.shape, y.dtype(), false);
        auto v = dt == DType::kBool ? c.binary(BinaryOp::kLogicalAnd, vx, vx) : c.binary(BinaryOp::kAdd, vx, vy);
        c.reduce(ReduceOp::kSum, v, ElementwiseChain::Reduced::kLeading, k.leading);
        c.finish();
        std::vector<Array> got = run(c, {x, y});
        REQUIRE(got.size() == 1);
        std::vector<int> axes;
        for (int a = 0; a < k.leading; ++a) axes.push_back(a);
        Array summed = dt == DType::kBool ? binary(BinaryOp::kLogicalAnd, x, x) : binary(BinaryOp::kAdd, x, y);
        Array want = sum(summed, axes);
        CHECK(got[0].shape() == want.shape());
        CHECK(got[0].dtype() == want.dtype());
        CHECK(got[0].identical(want));
        // and the transposed rows' sum
        std::vector<int> perm;
        for (int a = k.leading; a < static_cast<int>(k.shape.size()); ++a) perm.push_back(a);
        for (int a = 0; a < k.leading; ++a) perm.push_back(a);
        std::vector<int> last;
        for (int a = static_cast<int>(k.shape.size()) - k.leading; a < static_cast<int>(k.shape.size()); ++a) last.push_back(a);
        CHECK(got[0].identical(sum(transpose(summed, perm), last)));
      }
    }
  }
}
