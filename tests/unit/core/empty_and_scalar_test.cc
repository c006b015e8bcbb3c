#include <catch2/catch.hpp>

#include <functional>

#include "core/arena.h"
#include "core/placement.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/format.h"
#include "spmd/core/layout.h"
#include "spmd/core/linalg.h"
#include "spmd/core/reduction.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;

namespace {
// Every op on `x`: each must return or throw spmd::Error, never crash.
std::vector<std::pair<std::string, std::function<Array(const Array&)>>> ops() {
  using F = std::function<Array(const Array&)>;
  std::vector<std::pair<std::string, F>> v = {
      {"exp", [](const Array& x) { return unary(UnaryOp::kExp, x); }},
      {"add", [](const Array& x) { return x + x; }},
      {"floor_divide", [](const Array& x) { return binary(BinaryOp::kFloorDivide, x, weak_int(0)); }},
      {"where", [](const Array& x) { return where(x, x, weak_float(1)); }},
      {"clip", [](const Array& x) { return clip(x, weak_int(0), Array()); }},
      {"astype", [](const Array& x) { return astype(x, DType::kFloat16); }},
      {"sum", [](const Array& x) { return sum(x); }},
      {"mean", [](const Array& x) { return mean(x); }},
      {"var", [](const Array& x) { return reduce(ReduceOp::kVar, x); }},
      {"max", [](const Array& x) { return max(x); }},
      {"argmax", [](const Array& x) { return reduce(ReduceOp::kArgMax, x); }},
      {"sum(axis=-1)", [](const Array& x) { return sum(x, std::vector<int>{-1}); }},
      {"argmin(axis=0)", [](const Array& x) { return reduce(ReduceOp::kArgMin, x, std::vector<int>{0}); }},
      {"cumsum", [](const Array& x) { return cumsum(x); }},
      {"cumprod(axis=0)", [](const Array& x) { return cumprod(x, 0); }},
      {"reshape", [](const Array& x) { return reshape(x, {-1}); }},
      {"transpose", [](const Array& x) { return transpose(x); }},
      {"expand_dims", [](const Array& x) { return expand_dims(x, 0); }},
      {"squeeze", [](const Array& x) { return squeeze(x); }},
      {"ravel", [](const Array& x) { return ravel(x); }},
      {"broadcast_to", [](const Array& x) { return broadcast_to(x, Shape{2}); }},
      {"concatenate", [](const Array& x) { return concatenate({x, x}); }},
      {"stack", [](const Array& x) { return stack({x, x}); }},
      {"split", [](const Array& x) { return split(x, 1)[0]; }},
      {"flip", [](const Array& x) { return flip(x); }},
      {"tile", [](const Array& x) { return tile(x, {2}); }},
      {"repeat", [](const Array& x) { return repeat(x, 2); }},
      {"roll", [](const Array& x) { return roll(x, 1); }},
      {"index", [](const Array& x) { return index(x, {IndexItem::ellipsis(), IndexItem::new_axis()}); }},
      {"index_update", [](const Array& x) { return index_update(x, {}, weak_int(1), UpdateMode::kAdd); }},
      {"take", [](const Array& x) { return take(x, iarr({0})); }},
      {"matmul", [](const Array& x) { return matmul(x, x); }},
      {"dot", [](const Array& x) { return dot(x, x); }},
      {"outer", [](const Array& x) { return outer(x, x); }},
  };
  return v;
}
}  // namespace

TEST_CASE("core::ops: empty and scalar inputs never crash", "[core]") {
  const std::vector<Shape> shapes = {{}, {0}, {0, 3}, {3, 0}, {1}, {2, 1, 0}};
  for (DType dt : {DType::kBool, DType::kInt32, DType::kFloat16, DType::kFloat32}) {
    for (const Shape& s : shapes) {
      Array x = zeros(s, dt);
      for (auto& [name, op] : ops()) {
        INFO(name << " on " << abstract_type(dt, s));
        try {
          Array y = op(x);
          REQUIRE(y.valid());
          (void)to_string(y);
          (void)repr(y);
        } catch (const Error& e) {
          REQUIRE_FALSE(e.report().message.empty());
          REQUIRE_FALSE(e.report().kind.empty());
        }
      }
    }
  }
}

TEST_CASE("core::ops: results live on the calling device", "[core]") {
  auto arena = std::make_shared<detail::Arena>(3, detail::Arena::kUnlimited, "device 3");
  detail::Placement dev{nullptr, arena, 3};
  Array host = reshape(arange(6), {2, 3});
  detail::PlacementScope scope(&dev);
  REQUIRE(reshape(host, {3, 2}).device() == 3);  // a host input is copied, not viewed
  REQUIRE(ravel(host).device() == 3);
  REQUIRE(transpose(host).device() == 3);
  REQUIRE(sum(host).device() == 3);
  REQUIRE(matmul(host, transpose(host)).device() == 3);
  REQUIRE(index(host, {IndexItem::at(0)}).device() == 3);
  REQUIRE(zeros({2}).device() == 3);
  Array local = ones({4});
  Array view = reshape(local, {2, 2});
  REQUIRE(view.raw_data() == local.raw_data());  // same device: storage is shared
}
