#include <catch2/catch.hpp>

#include "spmd/core/creation.h"
#include "spmd/core/layout.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;
using V = std::vector<double>;
using I = std::vector<std::int64_t>;

TEST_CASE("core::layout: reshape infers one -1 dimension", "[layout]") {
  Array x = arange(12);
  Array r = reshape(x, {3, -1});
  REQUIRE(r.shape() == Shape{3, 4});
  REQUIRE(ivals(r) == ivals(x));
  REQUIRE(reshape(x, {-1}).shape() == Shape{12});
  REQUIRE(reshape(Array::scalar(1.0, DType::kFloat32), {1, 1}).shape() == Shape{1, 1});
  REQUIRE(reshape(zeros({0, 3}), {-1, 6}).shape() == Shape{0, 6});
  REQUIRE(reshape(Array::scalar(1.0, DType::kFloat32, true), {1}).weak_type());

  Report r1 = error_of([&] { reshape(x, {5, -1}); });
  REQUIRE(r1.kind == "ShapeError");
  REQUIRE_THAT(r1.message, Catch::Contains("reshape: cannot reshape array of shape (12,) (size 12) into shape (5, -1)"));
  Report r2 = error_of([&] { reshape(x, {2, 5}); });
  REQUIRE_THAT(r2.message, Catch::Contains("(12,)") && Catch::Contains("(2, 5)"));
  REQUIRE_FALSE(r2.hint.empty());
  REQUIRE(error_of([&] { reshape(x, {-1, -1}); }).kind == "ShapeError");
  REQUIRE(error_of([&] { reshape(x, {-2, -6}); }).kind == "ShapeError");
}

TEST_CASE("core::layout: transpose, swapaxes and moveaxis", "[layout]") {
  Array x = reshape(arange(6), {2, 3});
  Array t = transpose(x);
  REQUIRE(t.shape() == Shape{3, 2});
  REQUIRE(ivals(t) == I{0, 3, 1, 4, 2, 5});
  Array c = reshape(arange(24), {2, 3, 4});
  Array p = transpose(c, {1, 2, 0});
  REQUIRE(p.shape() == Shape{3, 4, 2});
  REQUIRE(p.element_as_int64(0 * 8 + 1 * 2 + 1) == 13);  // p[0,1,1] = c[1,0,1]
  REQUIRE(ivals(transpose(c, {-1, 0, 1})) == ivals(transpose(c, {2, 0, 1})));
  Report r = error_of([&] { transpose(c, {0, 0, 1}); });
  REQUIRE(r.kind == "AxisError");
  REQUIRE_THAT(r.message, Catch::Contains("(0, 0, 1)") && Catch::Contains("(2, 3, 4)"));
  REQUIRE(error_of([&] { transpose(c, {0, 1}); }).kind == "AxisError");
  REQUIRE(transpose(zeros({0, 3})).shape() == Shape{3, 0});
  REQUIRE(transpose(Array::scalar(1.0, DType::kFloat32)).shape().empty());

  Array s = swapaxes(c, 0, -1);
  REQUIRE(s.shape() == Shape{4, 3, 2});
  REQUIRE(s.element_as_int64(1 * 6 + 2 * 2 + 1) == 21);  // s[1,2,1] = c[1,2,1]
  Array m = moveaxis(c, 0, -1);
  REQUIRE(m.shape() == Shape{3, 4, 2});
  REQUIRE(ivals(m) == ivals(p));
  Array m2 = moveaxis(c, -1, 0);
  REQUIRE(m2.shape() == Shape{4, 2, 3});
  REQUIRE(m2.element_as_int64(1 * 6 + 1 * 3 + 2) == 21);  // m2[1,1,2] = c[1,2,1]
}

TEST_CASE("core::layout: expand_dims, squeeze and ravel", "[layout]") {
  Array x = zeros({2, 3});
  REQUIRE(expand_dims(x, 0).shape() == Shape{1, 2, 3});
  REQUIRE(expand_dims(x, 2).shape() == Shape{2, 3, 1});
  REQUIRE(expand_dims(x, -1).shape() == Shape{2, 3, 1});
  REQUIRE(expand_dims(x, -3).shape() == Shape{1, 2, 3});
  REQUIRE(error_of([&] { expand_dims(x, 3); }).kind == "AxisError");
  REQUIRE(error_of([&] { expand_dims(x, -4); }).kind == "AxisError");

  Array y = zeros({1, 2, 1, 3});
  REQUIRE(squeeze(y).shape() == Shape{2, 3});
  REQUIRE(squeeze(y, {-2}).shape() == Shape{1, 2, 3});
  REQUIRE(squeeze(zeros({1, 1})).shape().empty());
  Report r = error_of([&] { squeeze(y, {1}); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("(1, 2, 1, 3)") && Catch::Contains("size 2"));

  Array rv = ravel(reshape(arange(6), {3, 2}));
  REQUIRE(rv.shape() == Shape{6});
  REQUIRE(ivals(rv) == I{0, 1, 2, 3, 4, 5});
}

TEST_CASE("core::layout: broadcast_to follows numpy rules", "[layout]") {
  Array b = broadcast_to(iarr({1, 2, 3}), {2, 3});
  REQUIRE(b.shape() == Shape{2, 3});
  REQUIRE(ivals(b) == I{1, 2, 3, 1, 2, 3});
  REQUIRE(ivals(broadcast_to(iarr({7, 8}, DType::kInt32, {2, 1}), {2, 2})) == I{7, 7, 8, 8});
  REQUIRE(broadcast_to(Array::scalar(1.0, DType::kFloat32), {0}).size() == 0);
  Report r = error_of([] { broadcast_to(iarr({1, 2, 3}), {3, 2}); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("broadcast_to: cannot broadcast array of shape (3,) to shape (3, 2)"));
  REQUIRE(error_of([] { broadcast_to(zeros({2, 3}), {3}); }).kind == "ShapeError");
}

TEST_CASE("core::layout: concatenate promotes dtypes and checks shapes", "[layout]") {
  Array a = iarr({1, 2, 3, 4}, DType::kInt32, {2, 2});
  Array b = arr({0.5, 1.5}, DType::kFloat32, {2, 1});
  Array c = concatenate({a, b}, 1);
  REQUIRE(c.dtype() == DType::kFloat32);
  REQUIRE(c.shape() == Shape{2, 3});
  REQUIRE(vals(c) == V{1, 2, 0.5, 3, 4, 1.5});
  Array d = concatenate({a, a, zeros({0, 2}, DType::kInt32)}, -2);
  REQUIRE(d.shape() == Shape{4, 2});
  REQUIRE(ivals(d) == I{1, 2, 3, 4, 1, 2, 3, 4});
  REQUIRE(concatenate({iarr({1}), weak_float(2.0).reshaped_view({1})}).dtype() == DType::kFloat32);
  REQUIRE(concatenate({weak_float(1.0).reshaped_view({1}), weak_float(2.0).reshaped_view({1})}).weak_type());

  Report r = error_of([&] { concatenate({a, a, zeros({3, 3})}, 0); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("input 2 has shape (3, 3) but input 0 has shape (2, 2)"));
  REQUIRE(error_of([] { concatenate({}); }).kind == "ValueError");
  REQUIRE(error_of([] { concatenate({Array::scalar(1.0, DType::kFloat32)}); }).kind == "ValueError");
  REQUIRE(error_of([&] { concatenate({a, iarr({1, 2})}); }).kind == "ShapeError");
}

TEST_CASE("core::layout: stack adds an axis", "[layout]") {
  Array a = iarr({1, 2});
  Array b = iarr({3, 4});
  Array s0 = stack({a, b});
  REQUIRE(s0.shape() == Shape{2, 2});
  REQUIRE(ivals(s0) == I{1, 2, 3, 4});
  Array s1 = stack({a, b}, -1);
  REQUIRE(s1.shape() == Shape{2, 2});
  REQUIRE(ivals(s1) == I{1, 3, 2, 4});
  Array sc = stack({Array::scalar_int(1), Array::scalar_int(2)});
  REQUIRE(sc.shape() == Shape{2});
  Report r = error_of([&] { stack({a, iarr({1, 2, 3})}); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("input 1 has shape (3,)"));
}

TEST_CASE("core::layout: split and chunk need equal parts", "[layout]") {
  Array x = reshape(arange(12), {2, 6});
  auto parts = split(x, 3, 1);
  REQUIRE(parts.size() == 3);
  REQUIRE(parts[1].shape() == Shape{2, 2});
  REQUIRE(ivals(parts[1]) == I{2, 3, 8, 9});
  REQUIRE(ivals(chunk(x, 2, 1, 0)) == I{6, 7, 8, 9, 10, 11});
  REQUIRE(ivals(chunk(x, 2, 1, -1)) == I{3, 4, 5, 9, 10, 11});
  Report r = error_of([&] { split(x, 4, 1); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("equal division") && Catch::Contains("(2, 6)"));
  REQUIRE(error_of([&] { chunk(x, 2, 2, 0); }).kind == "IndexError");
}

TEST_CASE("core::layout: flip, tile, repeat and roll", "[layout]") {
  Array x = reshape(arange(6), {2, 3});
  REQUIRE(ivals(flip(x)) == I{5, 4, 3, 2, 1, 0});
  REQUIRE(ivals(flip(x, 0)) == I{3, 4, 5, 0, 1, 2});
  REQUIRE(ivals(flip(x, -1)) == I{2, 1, 0, 5, 4, 3});

  Array t = tile(iarr({1, 2}), {2, 2});
  REQUIRE(t.shape() == Shape{2, 4});
  REQUIRE(ivals(t) == I{1, 2, 1, 2, 1, 2, 1, 2});
  Array t2 = tile(iarr({1, 2, 3, 4}, DType::kInt32, {2, 2}), {2});
  REQUIRE(t2.shape() == Shape{2, 4});
  REQUIRE(ivals(t2) == I{1, 2, 1, 2, 3, 4, 3, 4});
  REQUIRE(tile(iarr({1}), {0}).size() == 0);

  Array m = iarr({1, 2, 3, 4}, DType::kInt32, {2, 2});
  REQUIRE(ivals(repeat(m, 2)) == I{1, 1, 2, 2, 3, 3, 4, 4});
  Array r0 = repeat(m, 2, 0);
  REQUIRE(r0.shape() == Shape{4, 2});
  REQUIRE(ivals(r0) == I{1, 2, 1, 2, 3, 4, 3, 4});
  REQUIRE(ivals(repeat(m, 2, -1)) == I{1, 1, 2, 2, 3, 3, 4, 4});
  REQUIRE(repeat(m, 0, 1).shape() == Shape{2, 0});
  REQUIRE(error_of([&] { repeat(m, -1); }).kind == "ValueError");

  Array v = arange(5);
  REQUIRE(ivals(roll(v, 2)) == I{3, 4, 0, 1, 2});
  REQUIRE(ivals(roll(v, -1)) == I{1, 2, 3, 4, 0});
  REQUIRE(ivals(roll(v, 12)) == I{3, 4, 0, 1, 2});
  Array g = iarr({0, 1, 2, 3}, DType::kInt32, {2, 2});
  Array gr = roll(g, 1);
  REQUIRE(gr.shape() == Shape{2, 2});
  REQUIRE(ivals(gr) == I{3, 0, 1, 2});
  REQUIRE(ivals(roll(g, 1, 1)) == I{1, 0, 3, 2});
  REQUIRE(ivals(roll(g, 1, 0)) == I{2, 3, 0, 1});
  REQUIRE(roll(zeros({0}), 3).size() == 0);
}
