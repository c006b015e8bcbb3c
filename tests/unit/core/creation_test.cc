#include <catch2/catch.hpp>

#include <cmath>

#include "spmd/core/creation.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;
using V = std::vector<double>;
using I = std::vector<std::int64_t>;

TEST_CASE("core::creation: zeros, ones and full fill every element", "[creation]") {
  Array z = zeros({2, 3});
  REQUIRE(z.dtype() == DType::kFloat32);
  REQUIRE(z.shape() == Shape{2, 3});
  REQUIRE(vals(z) == V(6, 0.0));
  REQUIRE_FALSE(z.weak_type());
  REQUIRE(ivals(ones({3}, DType::kInt64)) == I{1, 1, 1});
  REQUIRE(ones({3}, DType::kInt64).dtype() == DType::kInt64);
  REQUIRE(ivals(full({2}, 2.7, DType::kInt32)) == I{2, 2});   // truncates like astype
  REQUIRE(ivals(full({2}, -2.7, DType::kInt32)) == I{-2, -2});
  REQUIRE(ivals(full({1}, 0.5, DType::kBool)) == I{1});
  REQUIRE(vals(full({2}, 0.1, DType::kFloat16)) == V{0.0999755859375, 0.0999755859375});
  REQUIRE(zeros({}).shape().empty());
  REQUIRE(zeros({}).size() == 1);
  REQUIRE(zeros({0, 4}).size() == 0);
}

TEST_CASE("core::creation: *_like keep dtype, shape and weak type", "[creation]") {
  Array w = Array::scalar(3.0, DType::kFloat32, true);
  REQUIRE(zeros_like(w).weak_type());
  Array x = iarr({1, 2, 3}, DType::kInt64, {3});
  Array o = ones_like(x);
  REQUIRE(o.dtype() == DType::kInt64);
  REQUIRE(ivals(o) == I{1, 1, 1});
  REQUIRE(ivals(full_like(x, 7)) == I{7, 7, 7});
  REQUIRE(vals(zeros_like(arr({1, 2}, DType::kBFloat16))) == V{0, 0});
}

TEST_CASE("core::creation: arange picks int32 for integral bounds, float32 otherwise", "[creation]") {
  Array a = arange(5);
  REQUIRE(a.dtype() == DType::kInt32);
  REQUIRE(ivals(a) == I{0, 1, 2, 3, 4});
  REQUIRE(ivals(arange(5, 0, -2)) == I{5, 3, 1});
  REQUIRE(ivals(arange(-3, 3, 2)) == I{-3, -1, 1});
  Array f = arange(0, 1, 0.25);
  REQUIRE(f.dtype() == DType::kFloat32);
  REQUIRE(vals(f) == V{0, 0.25, 0.5, 0.75});
  REQUIRE(arange(0.5, 3).dtype() == DType::kFloat32);
  REQUIRE(vals(arange(0.5, 3)) == V{0.5, 1.5, 2.5});
  REQUIRE(arange(0, 3, 1, DType::kFloat64).dtype() == DType::kFloat64);
  REQUIRE(arange(3, 3).size() == 0);
  REQUIRE(arange(3, 0).size() == 0);  // counting up from above: empty, as numpy
}

TEST_CASE("core::creation: arange with a zero step is a ValueError", "[creation]") {
  Report r = error_of([] { arange(0, 5, 0); });
  REQUIRE(r.kind == "ValueError");
  REQUIRE_THAT(r.message, Catch::Contains("arange: step must not be zero"));
  REQUIRE_FALSE(r.hint.empty());
}

TEST_CASE("core::creation: linspace follows jnp.linspace", "[creation]") {
  REQUIRE(vals(linspace(0, 1, 5)) == V{0, 0.25, 0.5, 0.75, 1});
  REQUIRE(vals(linspace(0, 1, 4, false)) == V{0, 0.25, 0.5, 0.75});
  REQUIRE(vals(linspace(2, 3, 1)) == V{2});
  REQUIRE(linspace(0, 1, 0).size() == 0);
  // Values are start*(1-t) + stop*t with t = i/9 in float32: 1/9 rounds to float32.
  Array l = linspace(0, 1, 10);
  REQUIRE(l.element_as_double(1) == static_cast<double>(1.0f / 9.0f));
  REQUIRE(l.element_as_double(9) == 1.0);
  // Integer dtypes floor (0, 3.33, 6.67, 10).
  REQUIRE(ivals(linspace(0, 10, 4, true, DType::kInt32)) == I{0, 3, 6, 10});
  REQUIRE(linspace(0, 1, 3, true, DType::kFloat64).dtype() == DType::kFloat64);
  REQUIRE(error_of([] { linspace(0, 1, -1); }).kind == "ValueError");
}

TEST_CASE("core::creation: iota counts along one dimension of any shape", "[creation]") {
  REQUIRE(ivals(iota({4}, 0)) == I{0, 1, 2, 3});
  REQUIRE(iota({4}, 0).dtype() == DType::kInt32);
  REQUIRE(ivals(iota({2, 3}, 0)) == I{0, 0, 0, 1, 1, 1});
  REQUIRE(ivals(iota({2, 3}, 1)) == I{0, 1, 2, 0, 1, 2});
  REQUIRE(ivals(iota({2, 3, 2}, 1)) == I{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
  REQUIRE(vals(iota({3}, 0, DType::kFloat16)) == V{0, 1, 2});
  REQUIRE(vals(iota({2}, 0, DType::kBFloat16)) == V{0, 1});
  REQUIRE(iota({0, 5}, 1).size() == 0);
  REQUIRE(error_of([] { iota({2, 3}, 2); }).kind == "ValueError");
  REQUIRE(error_of([] { iota({}, 0); }).kind == "ValueError");
  REQUIRE(error_of([] { iota({3}, 0, DType::kBool); }).kind == "TypeError");
}

TEST_CASE("core::creation: eye places ones on the diagonal", "[creation]") {
  REQUIRE(vals(eye(2, 3)) == V{1, 0, 0, 0, 1, 0});
  REQUIRE(eye(2, 3).shape() == Shape{2, 3});
  Array e = eye(3, -1, DType::kInt32);
  REQUIRE(ivals(e) == I{1, 0, 0, 0, 1, 0, 0, 0, 1});
  REQUIRE(eye(0).size() == 0);
  REQUIRE(error_of([] { eye(-1); }).kind == "ValueError");
}

TEST_CASE("core::creation: copy duplicates the data and the weak flag", "[creation]") {
  Array w = Array::scalar(2.5, DType::kFloat64, true);
  Array c = copy(w);
  REQUIRE(c.identical(w));
  REQUIRE(c.weak_type());
  REQUIRE(c.raw_data() != w.raw_data());
  REQUIRE(copy(zeros({0})).size() == 0);
}
