#include <catch2/catch.hpp>

#include "spmd/core/creation.h"
#include "spmd/core/layout.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;
using V = std::vector<double>;
using I = std::vector<std::int64_t>;

namespace {
using It = IndexItem;
Array grid() { return reshape(arange(12), {3, 4}); }  // [[0..3], [4..7], [8..11]]
}  // namespace

TEST_CASE("core::indexing: integers, slices, None and Ellipsis", "[indexing]") {
  Array x = grid();
  Array row = index(x, {It::at(1)});
  REQUIRE(row.shape() == Shape{4});
  REQUIRE(ivals(row) == I{4, 5, 6, 7});
  REQUIRE(ivals(index(x, {It::at(-1), It::slice({}, {}, -1)})) == I{11, 10, 9, 8});
  Array cols = index(x, {It::slice(), It::slice(1, 3)});
  REQUIRE(cols.shape() == Shape{3, 2});
  REQUIRE(ivals(cols) == I{1, 2, 5, 6, 9, 10});
  Array na = index(x, {It::new_axis(), It::ellipsis(), It::at(0)});
  REQUIRE(na.shape() == Shape{1, 3});
  REQUIRE(ivals(na) == I{0, 4, 8});
  REQUIRE(ivals(index(x, {It::slice({}, {}, 2), It::slice({}, {}, -2)})) == I{3, 1, 11, 9});
  Array s = index(x, {It::at(2), It::at(-3)});
  REQUIRE(s.shape().empty());
  REQUIRE(s.element_as_int64(0) == 9);
  REQUIRE(index(x, {}).shape() == Shape{3, 4});
  REQUIRE(index(x, {It::ellipsis()}).shape() == Shape{3, 4});
  REQUIRE(index(x, {It::at(0), It::new_axis()}).shape() == Shape{1, 4});
}

TEST_CASE("core::indexing: slices clamp like Python", "[indexing]") {
  Array x = grid();
  REQUIRE(index(x, {It::slice(5, 10)}).shape() == Shape{0, 4});
  REQUIRE(ivals(index(x, {It::slice(-100, 2), It::at(0)})) == I{0, 4});
  REQUIRE(ivals(index(x, {It::slice(1, -1), It::at(0)})) == I{4});
  REQUIRE(ivals(index(x, {It::slice(2, 0, -1), It::at(0)})) == I{8, 4});
  REQUIRE(ivals(index(x, {It::slice(100, {}, -1), It::at(1)})) == I{9, 5, 1});
  REQUIRE(ivals(index(x, {It::at(0), It::slice(-2, {})})) == I{2, 3});
  REQUIRE(ivals(index(x, {It::at(0), It::slice({}, -5, -1)})) == I{3, 2, 1, 0});
  REQUIRE(index(x, {It::at(0), It::slice(3, 1)}).size() == 0);
  REQUIRE(ivals(index(x, {It::at(1), It::slice(0, {}, 3)})) == I{4, 7});
}

TEST_CASE("core::indexing: bad indices are IndexErrors", "[indexing]") {
  Array x = grid();
  Report r = error_of([&] { index(x, {It::at(5)}); });
  REQUIRE(r.kind == "IndexError");
  REQUIRE_THAT(r.message, Catch::Contains("index 5 is out of bounds for axis 0 with size 3"));
  REQUIRE_FALSE(r.hint.empty());
  REQUIRE_THAT(error_of([&] { index(x, {It::at(0), It::at(-5)}); }).message,
               Catch::Contains("index -5 is out of bounds for axis 1 with size 4"));
  Report many = error_of([&] { index(x, {It::at(0), It::at(0), It::at(0)}); });
  REQUIRE(many.kind == "IndexError");
  REQUIRE_THAT(many.message, Catch::Contains("too many indices"));
  REQUIRE(error_of([&] { index(x, {It::ellipsis(), It::ellipsis()}); }).kind == "IndexError");
  REQUIRE(error_of([&] { index(x, {It::slice(0, 2, 0)}); }).kind == "ValueError");
  REQUIRE(error_of([] { index(Array::scalar(1.0, DType::kFloat32), {It::at(0)}); }).kind == "IndexError");
}

TEST_CASE("core::indexing: at[].set/add/multiply/min/max return new arrays", "[indexing]") {
  Array x = grid();
  Array s = index_update(x, {It::at(1)}, weak_int(0), UpdateMode::kSet);
  REQUIRE(ivals(s) == I{0, 1, 2, 3, 0, 0, 0, 0, 8, 9, 10, 11});
  REQUIRE(ivals(x) == I{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});  // x is unchanged
  Array a = index_update(x, {It::slice(), It::slice(0, 2)}, iarr({100, 200}), UpdateMode::kAdd);
  REQUIRE(ivals(a) == I{100, 201, 2, 3, 104, 205, 6, 7, 108, 209, 10, 11});
  Array m = index_update(x, {It::slice({}, {}, 2), It::at(1)}, weak_int(10), UpdateMode::kMultiply);
  REQUIRE(ivals(m) == I{0, 10, 2, 3, 4, 5, 6, 7, 8, 90, 10, 11});
  Array mn = index_update(x, {It::at(0)}, iarr({2, 2, 2, 2}), UpdateMode::kMin);
  REQUIRE(ivals(mn) == I{0, 1, 2, 2, 4, 5, 6, 7, 8, 9, 10, 11});
  Array mx = index_update(x, {It::at(-1), It::slice({}, {}, -1)}, iarr({0, 0, 20, 0}), UpdateMode::kMax);
  REQUIRE(ivals(mx) == I{0, 1, 2, 3, 4, 5, 6, 7, 8, 20, 10, 11});
  // the value is cast to x's dtype (truncating floats into ints)
  Array t = index_update(x, {It::at(0), It::at(0)}, weak_float(2.7), UpdateMode::kSet);
  REQUIRE(t.dtype() == DType::kInt32);
  REQUIRE(t.element_as_int64(0) == 2);
  // extra leading size-1 axes of the value are dropped, as numpy assignment does
  Array lead = index_update(x, {It::at(2)}, iarr({1, 1, 1, 1}, DType::kInt32, {1, 4}), UpdateMode::kSet);
  REQUIRE(ivals(index(lead, {It::at(2)})) == I{1, 1, 1, 1});
  Array f = index_update(arr({1, 2}, DType::kFloat16), {It::at(1)}, weak_float(0.1), UpdateMode::kAdd);
  REQUIRE(vals(f) == V{1, 2.099609375});
  REQUIRE(index_update(weak_float(1.0), {}, weak_float(3.0), UpdateMode::kSet).weak_type());
  REQUIRE(ivals(index_update(x, {It::slice(5, 9)}, weak_int(1), UpdateMode::kSet)) == ivals(x));

  Report r = error_of([&] { index_update(x, {It::at(0)}, iarr({1, 2, 3}), UpdateMode::kSet); });
  REQUIRE(r.kind == "ShapeError");
  REQUIRE_THAT(r.message, Catch::Contains("(3,)") && Catch::Contains("(4,)"));
}

TEST_CASE("core::indexing: take gathers along an axis and clamps", "[indexing]") {
  Array v = arange(5);
  REQUIRE(ivals(take(v, iarr({0, -1, 7, -9, 2}))) == I{0, 4, 4, 0, 2});
  Array x = grid();
  Array t = take(x, iarr({3, 0, 1, 1}, DType::kInt64, {2, 2}), 1);
  REQUIRE(t.shape() == Shape{3, 2, 2});
  REQUIRE(ivals(t) == I{3, 0, 1, 1, 7, 4, 5, 5, 11, 8, 9, 9});
  REQUIRE(ivals(take(x, iarr({11, 0}))) == I{11, 0});  // flattened
  Array r0 = take(x, iarr({2}), 0);
  REQUIRE(r0.shape() == Shape{1, 4});
  REQUIRE(ivals(r0) == I{8, 9, 10, 11});
  REQUIRE(take(x, iarr({}), 0).shape() == Shape{0, 4});
  Report r = error_of([&] { take(x, arr({1.0}), 0); });
  REQUIRE(r.kind == "TypeError");
  REQUIRE_THAT(r.message, Catch::Contains("float32"));
  REQUIRE(error_of([] { take(zeros({0}), iarr({0})); }).kind == "IndexError");
}
