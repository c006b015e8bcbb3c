#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <thread>

#include <tbb/global_control.h>

#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/core/linalg.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;
using V = std::vector<double>;
using I = std::vector<std::int64_t>;

TEST_CASE("core::linalg: matmul of matrices and vectors", "[linalg]") {
  Array a = iarr({1, 2, 3, 4, 5, 6}, DType::kInt32, {2, 3});
  Array b = iarr({7, 8, 9, 10, 11, 12}, DType::kInt32, {3, 2});
  Array c = matmul(a, b);
  REQUIRE(c.shape() == Shape{2, 2});
  REQUIRE(c.dtype() == DType::kInt32);
  REQUIRE(ivals(c) == I{58, 64, 139, 154});
  Array v = iarr({1, 2, 3});
  Array inner = matmul(v, iarr({4, 5, 6}));
  REQUIRE(inner.shape().empty());
  REQUIRE(inner.element_as_int64(0) == 32);
  REQUIRE(ivals(matmul(a, iarr({1, 1, 1}))) == I{6, 15});
  Array vm = matmul(v, b);
  REQUIRE(vm.shape() == Shape{2});
  REQUIRE(ivals(vm) == I{58, 64});
  Array f = matmul(a, arr({0.5, 0, 0, 0.5, 1, 1}, DType::kFloat32, {3, 2}));
  REQUIRE(f.dtype() == DType::kFloat32);
  REQUIRE(vals(f) == V{3.5, 4, 8, 8.5});
  Array bm = matmul(barr({true, false, false, false}, {2, 2}), barr({false, true, true, false}, {2, 2}));
  REQUIRE(bm.dtype() == DType::kBool);
  REQUIRE(ivals(bm) == I{0, 1, 0, 0});
  Array h = matmul(arr({1, 2}, DType::kFloat16), arr({3, 4}, DType::kFloat16));
  REQUIRE(h.dtype() == DType::kFloat16);
  REQUIRE(vals(h) == V{11});
}

TEST_CASE("core::linalg: matmul broadcasts batch dimensions", "[linalg]") {
  // a: (2,1,2,2) = [I, 2I]; b: (3,2,2) = [M, 10M, 100M] with M = [[1,2],[3,4]]
  Array a = arr({1, 0, 0, 1, 2, 0, 0, 2}, DType::kFloat32, {2, 1, 2, 2});
  Array b = arr({1, 2, 3, 4, 10, 20, 30, 40, 100, 200, 300, 400}, DType::kFloat32, {3, 2, 2});
  Array c = matmul(a, b);
  REQUIRE(c.shape() == Shape{2, 3, 2, 2});
  REQUIRE(vals(c) == V{1,   2,   3,   4,   10,  20,  30,  40,  100, 200, 300, 400,
                       2,   4,   6,   8,   20,  40,  60,  80,  200, 400, 600, 800});
  Array bv = matmul(b, arr({1, 1}));
  REQUIRE(bv.shape() == Shape{3, 2});
  REQUIRE(vals(bv) == V{3, 7, 30, 70, 300, 700});
  Report r = error_of([] { matmul(zeros({2, 2, 3}), zeros({3, 3, 2})); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("batch") && Catch::Contains("(2, 2, 3) @ (3, 3, 2)"));
}

TEST_CASE("core::linalg: matmul shape errors name both shapes", "[linalg]") {
  Report r = error_of([] { matmul(zeros({4, 3}), zeros({4, 3})); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE(r.message == "matmul: contracting dimensions differ: (4, 3) @ (4, 3): 3 != 4");
  REQUIRE_THAT(r.hint, Catch::Contains("second-to-last"));
  REQUIRE(error_of([] { matmul(zeros({3}), zeros({4})); }).message ==
          "matmul: contracting dimensions differ: (3,) @ (4,): 3 != 4");
  REQUIRE(error_of([] { matmul(Array::scalar(1.0, DType::kFloat32), zeros({2})); }).kind == "ShapeError");
}

TEST_CASE("core::linalg: dot follows numpy for every rank", "[linalg]") {
  REQUIRE(dot(iarr({1, 2, 3}), iarr({4, 5, 6})).element_as_int64(0) == 32);
  Array s = dot(Array::scalar(2.0, DType::kFloat32), arr({1, 2}));
  REQUIRE(vals(s) == V{2, 4});
  Array a = iarr({1, 2, 3, 4, 5, 6}, DType::kInt32, {2, 3});
  REQUIRE(ivals(dot(a, iarr({1, 0, -1}))) == I{-2, -2});
  // N-D x M-D: out[i, j, k] = sum_l a[i, l] * b[j, l, k]
  Array b = reshape(arange(12), {2, 3, 2});  // b[j] = [[0,1],[2,3],[4,5]] + 6j
  Array d = dot(a, b);
  REQUIRE(d.shape() == Shape{2, 2, 2});
  REQUIRE(ivals(d) == I{16, 22, 52, 58, 34, 49, 124, 139});
  Array v3 = dot(iarr({1, 1, 1}), b);  // 1-D x 3-D: sums over b's second-to-last axis
  REQUIRE(v3.shape() == Shape{2, 2});
  REQUIRE(ivals(v3) == I{6, 9, 24, 27});
  Report r = error_of([&] { dot(a, iarr({1, 2})); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("dot: shapes (2, 3) and (2,) not aligned: 3 (dim 1) != 2 (dim 0)"));
}

TEST_CASE("core::linalg: outer and empty products", "[linalg]") {
  Array o = outer(iarr({1, 2, 3}), iarr({4, 5}));
  REQUIRE(o.shape() == Shape{3, 2});
  REQUIRE(ivals(o) == I{4, 5, 8, 10, 12, 15});
  REQUIRE(outer(iarr({1, 2, 3, 4}, DType::kInt32, {2, 2}), arr({0.5})).dtype() == DType::kFloat32);
  Array z = matmul(zeros({2, 0}), zeros({0, 3}));
  REQUIRE(z.shape() == Shape{2, 3});
  REQUIRE(vals(z) == V(6, 0.0));
  REQUIRE(matmul(zeros({0, 2}), zeros({2, 3})).shape() == Shape{0, 3});
  REQUIRE(dot(zeros({2, 0}), zeros({3, 0, 4})).shape() == Shape{2, 3, 4});
}

TEST_CASE("core::linalg: large products are thread-count independent", "[linalg]") {
  // 600 rows: three row blocks of one BLAS call each (core/gemm.h).
  Array a = reshape(unary(UnaryOp::kSin, arange(0, 600 * 160, 1, DType::kFloat32)), {600, 160});
  Array b = reshape(unary(UnaryOp::kCos, arange(0, 160 * 150, 1, DType::kFloat32)), {160, 150});
  Array parallel = matmul(a, b);
  Array serial;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    serial = matmul(a, b);
  }
  REQUIRE(parallel.dtype() == DType::kFloat32);
  REQUIRE(parallel.identical(serial));
  // float32 computed in float32: every element within float32 rounding of a
  // double-precision dot product (k terms, each rounding at most eps relative
  // to the sum of magnitudes).
  for (int i : {0, 7, 255, 256, 599}) {
    for (int j : {0, 11, 149}) {
      double ref = 0, magnitude = 0;
      for (int k = 0; k < 160; ++k) {
        double t = a.element_as_double(i * 160 + k) * b.element_as_double(k * 150 + j);
        ref += t;
        magnitude += std::abs(t);
      }
      INFO("element (" << i << ", " << j << ")");
      REQUIRE(std::abs(parallel.element_as_double(i * 150 + j) - ref) <= 161 * 0x1p-24 * magnitude);
    }
  }
}

TEST_CASE("core::linalg: products on two threads at once give the one-thread bits", "[linalg]") {
  // Two devices' products run at once with --threads 2. Debian's serial
  // OpenBLAS shares its packing buffers between threads without a lock: about
  // one product in a thousand came out wrong here (a data race TSan cannot
  // see inside the uninstrumented library). The OpenMP build locks them.
  Array a = reshape(unary(UnaryOp::kSin, arange(0, 64 * 256, 1, DType::kFloat32)), {64, 256});
  Array b = reshape(unary(UnaryOp::kCos, arange(0, 256 * 256, 1, DType::kFloat32)), {256, 256});
  const Array expected = matmul(a, b);
  std::atomic<int> wrong{0};
  auto work = [&] {
    for (int r = 0; r < 8000; ++r) {
      if (!matmul(a, b).identical(expected)) wrong.fetch_add(1);
    }
  };
  std::thread one(work), two(work);
  one.join();
  two.join();
  REQUIRE(wrong.load() == 0);
}

TEST_CASE("core::linalg: float64 products in float64, and integers exact with wrap-around", "[linalg]") {
  Array a = reshape(arange(0, 6, 1, DType::kFloat64), {2, 3});
  Array b = reshape(arange(0, 6, 1, DType::kFloat64), {3, 2});
  Array c = matmul(a, b);
  REQUIRE(c.dtype() == DType::kFloat64);
  REQUIRE(vals(c) == V{10, 13, 28, 40});
  // 1 + 2^-40 survives in float64 only.
  Array x = Array::from_doubles(std::vector<double>{1.0, 0x1p-40}, {1, 2}, DType::kFloat64);
  Array ones = Array::from_doubles(std::vector<double>{1.0, 1.0}, {2, 1}, DType::kFloat64);
  REQUIRE(matmul(x, ones).element_as_double(0) == 1.0 + 0x1p-40);
  // int32: wraps as XLA does (2^31 - 1 + 1).
  Array big = iarr({2147483647, 1}, DType::kInt32, {1, 2});
  Array one = iarr({1, 1}, DType::kInt32, {2, 1});
  REQUIRE(matmul(big, one).element_as_int64(0) == -2147483648LL);
}

TEST_CASE("core::linalg: transposed operands are read in place and give the product of the swapped arrays",
          "[linalg]") {
  // 300 x 70 stored as its transpose (70 x 300): crosses a 256-row block.
  Array at = reshape(unary(UnaryOp::kSin, arange(0, 70 * 300, 1, DType::kFloat32)), {70, 300});
  Array bt = reshape(unary(UnaryOp::kCos, arange(0, 40 * 70, 1, DType::kFloat32)), {40, 70});
  Array a = transpose(at), b = transpose(bt);  // (300, 70) and (70, 40), materialized
  Array ref = matmul(a, b);
  for (auto [ta, tb] : {std::pair{true, false}, {false, true}, {true, true}}) {
    Array got = matmul(ta ? at : a, tb ? bt : b, ta, tb);
    INFO("transpose_a " << ta << " transpose_b " << tb);
    REQUIRE(got.shape() == Shape{300, 40});
    for (std::int64_t i : {0, 255, 256, 299}) {
      for (std::int64_t j : {0, 39}) {
        double magnitude = 0;
        for (std::int64_t k = 0; k < 70; ++k) {
          magnitude += std::abs(a.element_as_double(i * 70 + k) * b.element_as_double(k * 40 + j));
        }
        REQUIRE(std::abs(got.element_as_double(i * 40 + j) - ref.element_as_double(i * 40 + j)) <=
                2 * 71 * 0x1p-24 * magnitude);
      }
    }
  }
  // Integers and batches: exact.
  Array ia = reshape(arange(0, 2 * 3 * 4, 1, DType::kInt32), {2, 3, 4});  // used as (2, 4, 3)^T
  Array ib = reshape(arange(0, 2 * 3 * 5, 1, DType::kInt32), {2, 3, 5});
  REQUIRE(ivals(matmul(ia, ib, true, false)) == ivals(matmul(swapaxes(ia, -1, -2), ib)));
  Array fb = reshape(arange(0, 5 * 3, 1, DType::kFloat64), {5, 3});  // (3, 5) stored transposed, broadcast over the batch
  REQUIRE(vals(matmul(astype(swapaxes(ia, -1, -2), DType::kFloat64), fb, false, true)) ==
          vals(matmul(astype(swapaxes(ia, -1, -2), DType::kFloat64), transpose(fb))));
  Report r = error_of([] { matmul(zeros({3}), zeros({3, 2}), true, false); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("an operand to transpose needs two dimensions"));
}

TEST_CASE("core::linalg: dot_general with its result permuted equals the transposed product", "[linalg]") {
  auto ramp = [](Shape s, double scale) {
    return binary(BinaryOp::kMultiply,
                  arange(0, static_cast<double>(num_elements(s)), 1, DType::kFloat32).reshaped_view(s),
                  weak_float(scale));
  };
  struct Case {
    const char* what;
    Shape lhs, rhs;
    DotDimensions dims;
    std::vector<int> perm;
  };
  const std::vector<Case> cases = {
      // the free blocks swapped: made as dot_general(rhs, lhs)
      {"swapped", {2, 5, 4}, {2, 5, 3}, {{1}, {1}, {0}, {0}}, {0, 2, 1}},
      // w (O, K) times a stack x (B, K, P), as jnp.matmul records it: B is an outer batch
      {"rhs leading", {8, 6}, {3, 6, 5}, {{1}, {1}, {}, {}}, {1, 0, 2}},
      // vmap of a convolution's product: the examples lead rhs, batch axes follow
      {"rhs leading, batched", {1, 4, 6}, {3, 1, 6, 5}, {{2}, {2}, {0}, {1}}, {2, 0, 1, 3}},
      // rhs leading, read transposed (its contracted axis last)
      {"rhs leading, transposed", {4, 6}, {3, 5, 6}, {{1}, {2}, {}, {}}, {1, 0, 2}},
      // no order the product makes: the result is permuted after
      {"other", {2, 5, 4}, {2, 5, 3}, {{1}, {1}, {0}, {0}}, {1, 0, 2}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const Array a = ramp(c.lhs, 0.25);
    const Array b = ramp(c.rhs, 0.5);
    Array want = transpose(dot_general(a, b, c.dims), c.perm);
    Array got = dot_general(a, b, c.dims, c.perm);
    CHECK(got.shape() == want.shape());
    CHECK(vals(got) == vals(want));
  }
}
