// all_gather, psum_scatter, all_to_all, ppermute, axis_index: exact layouts.

#include <catch2/catch.hpp>

#include "support/spawn.h"

using namespace spmd;
using namespace spmd::testing;

namespace {
// Device d holds [[10d, 10d+1, 10d+2], [10d+3, 10d+4, 10d+5]] (shape (2, 3)).
Array per_device_2x3(int n) {
  std::vector<double> v;
  for (int d = 0; d < n; ++d) {
    for (int k = 0; k < 6; ++k) v.push_back(10 * d + k);
  }
  return f32(v, {n, 2, 3});
}
}  // namespace

TEST_CASE("collectives::all_gather: untiled stacks along a new axis", "[collectives]") {
  Runtime rt({.devices = 4});
  Array x = per_device_2x3(3);
  SECTION("axis 0") {
    auto out = run_on(rt, 3, {x}, [](std::span<const Array> a) { return std::vector<Array>{all_gather(a[0], "i")}; });
    REQUIRE(out[0].shape() == Shape{3, 3, 2, 3});
    std::vector<double> expected;
    for (int d = 0; d < 3; ++d) for (int k = 0; k < 6; ++k) expected.push_back(10 * d + k);
    for (int dev = 0; dev < 3; ++dev) REQUIRE(row(out[0], dev) == expected);
  }
  SECTION("axis -1 (new last axis)") {
    auto out = run_on(rt, 3, {x}, [](std::span<const Array> a) { return std::vector<Array>{all_gather(a[0], "i", -1)}; });
    REQUIRE(out[0].shape() == Shape{3, 2, 3, 3});
    // element [r][c][j] = 10 j + 3 r + c
    std::vector<double> expected;
    for (int r = 0; r < 2; ++r) for (int c = 0; c < 3; ++c) for (int j = 0; j < 3; ++j) expected.push_back(10 * j + 3 * r + c);
    REQUIRE(row(out[0], 1) == expected);
  }
  SECTION("tiled along axis 1 concatenates") {
    auto out = run_on(rt, 3, {x}, [](std::span<const Array> a) {
      return std::vector<Array>{all_gather(a[0], "i", 1, /*tiled=*/true)};
    });
    REQUIRE(out[0].shape() == Shape{3, 2, 9});
    std::vector<double> expected;
    for (int r = 0; r < 2; ++r) for (int j = 0; j < 3; ++j) for (int c = 0; c < 3; ++c) expected.push_back(10 * j + 3 * r + c);
    REQUIRE(row(out[0], 2) == expected);
  }
  SECTION("groups gather within each group in group order") {
    Array s = f32({0, 1, 2, 3}, {4});
    auto out = run_on(rt, 4, {s}, [](std::span<const Array> a) {
      return std::vector<Array>{all_gather(a[0], "i", 0, false, {{3, 1}, {0, 2}})};
    });
    REQUIRE(out[0].to_doubles() == std::vector<double>{0, 2, 3, 1, 0, 2, 3, 1});
  }
}

TEST_CASE("collectives::psum_scatter: member k keeps block k of the sum", "[collectives]") {
  Runtime rt({.devices = 4});
  SECTION("untiled removes the scattered dimension") {
    // device d holds [d, d+1, d+2] * (d+1)
    std::vector<double> v;
    for (int d = 0; d < 3; ++d) for (int k = 0; k < 3; ++k) v.push_back((d + k) * (d + 1));
    auto out = run_on(rt, 3, {f32(v, {3, 3})}, [](std::span<const Array> a) {
      return std::vector<Array>{psum_scatter(a[0], "i")};
    });
    // sum over devices: k=0: 0+2+6=8, k=1: 1+4+9=14, k=2: 2+6+12=20
    REQUIRE(out[0].shape() == Shape{3});
    REQUIRE(out[0].to_doubles() == std::vector<double>{8, 14, 20});
  }
  SECTION("tiled keeps a shrunk dimension") {
    std::vector<double> v;
    for (int d = 0; d < 2; ++d) for (int k = 0; k < 4; ++k) v.push_back(d * 100 + k);
    auto out = run_on(rt, 2, {f32(v, {2, 4})}, [](std::span<const Array> a) {
      return std::vector<Array>{psum_scatter(a[0], "i", 0, /*tiled=*/true)};
    });
    REQUIRE(out[0].shape() == Shape{2, 2});
    REQUIRE(out[0].to_doubles() == std::vector<double>{100, 102, 104, 106});
  }
}

TEST_CASE("collectives::all_to_all: block j goes to member j", "[collectives]") {
  Runtime rt({.devices = 4});
  SECTION("untiled, split 0 concat 0") {
    // device d holds [[d0, d1], [d2, d3], [d4, d5]] with value 10d + k
    std::vector<double> v;
    for (int d = 0; d < 3; ++d) for (int k = 0; k < 6; ++k) v.push_back(10 * d + k);
    auto out = run_on(rt, 3, {f32(v, {3, 3, 2})}, [](std::span<const Array> a) {
      return std::vector<Array>{all_to_all(a[0], "i", 0, 0)};
    });
    REQUIRE(out[0].shape() == Shape{3, 3, 2});
    // device k receives row k of every device j, stacked by j
    REQUIRE(row(out[0], 1) == std::vector<double>{2, 3, 12, 13, 22, 23});
  }
  SECTION("untiled, split 1 concat 0 moves the axis") {
    std::vector<double> v;
    for (int d = 0; d < 2; ++d) for (int k = 0; k < 6; ++k) v.push_back(10 * d + k);
    // per device shape (3, 2): split axis 1 (size 2), concat axis 0 -> (2, 3)
    auto out = run_on(rt, 2, {f32(v, {2, 3, 2})}, [](std::span<const Array> a) {
      return std::vector<Array>{all_to_all(a[0], "i", 1, 0)};
    });
    REQUIRE(out[0].shape() == Shape{2, 2, 3});
    // device 0 gets column 0 of each device: [[0,2,4],[10,12,14]]
    REQUIRE(row(out[0], 0) == std::vector<double>{0, 2, 4, 10, 12, 14});
    REQUIRE(row(out[0], 1) == std::vector<double>{1, 3, 5, 11, 13, 15});
  }
  SECTION("tiled, split 0 concat 1") {
    std::vector<double> v;
    for (int d = 0; d < 2; ++d) for (int k = 0; k < 8; ++k) v.push_back(10 * d + k);
    // per device (4, 2): blocks of 2 rows; output (2, 4)
    auto out = run_on(rt, 2, {f32(v, {2, 4, 2})}, [](std::span<const Array> a) {
      return std::vector<Array>{all_to_all(a[0], "i", 0, 1, /*tiled=*/true)};
    });
    REQUIRE(out[0].shape() == Shape{2, 2, 4});
    REQUIRE(row(out[0], 0) == std::vector<double>{0, 1, 10, 11, 2, 3, 12, 13});
    REQUIRE(row(out[0], 1) == std::vector<double>{4, 5, 14, 15, 6, 7, 16, 17});
  }
}

TEST_CASE("collectives::ppermute: sends along pairs, zeros elsewhere", "[collectives]") {
  Runtime rt({.devices = 4});
  Array x = i32({1, 2, 3, 4}, {4});
  SECTION("ring") {
    auto out = run_on(rt, 4, {x}, [](std::span<const Array> a) {
      return std::vector<Array>{ppermute(a[0], "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}})};
    });
    REQUIRE(out[0].to_doubles() == std::vector<double>{4, 1, 2, 3});
  }
  SECTION("partial permutation") {
    auto out = run_on(rt, 4, {x}, [](std::span<const Array> a) {
      return std::vector<Array>{ppermute(a[0], "i", {{0, 3}})};
    });
    REQUIRE(out[0].to_doubles() == std::vector<double>{0, 0, 0, 1});
  }
  SECTION("duplicate destination is rejected on the device") {
    auto e = expect_error<InvalidArgument>([&] {
      run_on(rt, 4, {x}, [](std::span<const Array> a) {
        return std::vector<Array>{ppermute(a[0], "i", {{0, 1}, {2, 1}})};
      });
    });
    REQUIRE(e.report().kind == "InvalidArgument");
    REQUIRE(e.report().op == "ppermute");
    REQUIRE(e.report().message == "ppermute: perm sources and destinations must each be unique (perm=[(0, 1), (2, 1)])");
  }
}

TEST_CASE("collectives::ppermute: a permutation checked once is checked again for another axis size or content",
          "[collectives]") {
  // Devices that bring the permutation the previous ppermute checked share it
  // and skip the check; it must run again when the axis size or the pairs
  // change. One run over a 2 x 4 mesh: both axes, one thread.
  Runtime rt({.devices = 8});
  PmapOptions o;
  o.mesh = {{"data", 2}, {"model", 4}};
  o.axis_size = 8;
  const Permutation ring4 = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  SECTION("the same pairs over a smaller axis") {
    auto e = expect_error<InvalidArgument>([&] {
      rt.pmap(
          [&](std::span<const Array>) {
            Array y = ppermute(axis_index("model"), "model", ring4);
            return std::vector<Array>{ppermute(y, "data", ring4)};
          },
          {}, o);
    });
    REQUIRE(e.report().message ==
            "ppermute: perm pair (1, 2) is outside 0..1 (perm=[(0, 1), (1, 2), (2, 3), (3, 0)])");
  }
  SECTION("other pairs over the same axis") {
    auto e = expect_error<InvalidArgument>([&] {
      rt.pmap(
          [&](std::span<const Array>) {
            Array y = ppermute(axis_index("model"), "model", ring4);
            return std::vector<Array>{ppermute(y, "model", {{0, 1}, {1, 1}})};
          },
          {}, o);
    });
    REQUIRE(e.report().message == "ppermute: perm sources and destinations must each be unique (perm=[(0, 1), (1, 1)])");
  }
  SECTION("the checked pairs again, then a partial permutation") {
    auto out = rt.pmap(
        [&](std::span<const Array>) {
          Array y = ppermute(ppermute(axis_index("model"), "model", ring4), "model", ring4);
          return std::vector<Array>{ppermute(y, "model", {{0, 3}})};
        },
        {}, o);
    // model index m holds m - 2 (mod 4) after two ring steps; only index 3 receives, from index 0.
    REQUIRE(out[0].to_doubles() == std::vector<double>{0, 0, 0, 2, 0, 0, 0, 2});
  }
}

TEST_CASE("collectives::axis_index: position and size on each axis", "[collectives]") {
  Runtime rt({.devices = 8});
  PmapOptions o;
  o.mesh = {{"data", 2}, {"model", 4}};
  o.axis_size = 8;
  auto out = rt.pmap(
      [](std::span<const Array>) {
        return std::vector<Array>{axis_index("data"), axis_index("model"), axis_index({"data", "model"}),
                                  axis_index({"model", "data"}),
                                  Array::scalar_int(axis_size({"data", "model"}))};
      },
      {}, o);
  REQUIRE(out[0].shape() == Shape{2, 4});
  REQUIRE(out[0].to_doubles() == std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1});
  REQUIRE(out[1].to_doubles() == std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3});
  REQUIRE(out[2].to_doubles() == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
  REQUIRE(out[3].to_doubles() == std::vector<double>{0, 2, 4, 6, 1, 3, 5, 7});
  REQUIRE(out[4].to_doubles() == std::vector<double>(8, 8));
}

TEST_CASE("collectives::mesh: psum over one axis or a tuple of axes", "[collectives]") {
  Runtime rt({.devices = 8});
  std::vector<double> v;
  for (int k = 0; k < 8; ++k) v.push_back(k);
  PmapOptions o;
  o.mesh = {{"data", 2}, {"model", 4}};
  auto out = rt.pmap(
      [](std::span<const Array> a) {
        return std::vector<Array>{psum(a[0], "model"), psum(a[0], "data"), psum(a[0], {"data", "model"})};
      },
      std::vector<Array>{f32(v, {2, 4})}, o);
  REQUIRE(out[0].to_doubles() == std::vector<double>{6, 6, 6, 6, 22, 22, 22, 22});
  REQUIRE(out[1].to_doubles() == std::vector<double>{4, 6, 8, 10, 4, 6, 8, 10});
  REQUIRE(out[2].to_doubles() == std::vector<double>(8, 28));
}

TEST_CASE("collectives::nested pmap: inner and outer axes", "[collectives]") {
  Runtime rt({.devices = 8});
  std::vector<double> v;
  for (int k = 0; k < 8; ++k) v.push_back(k);
  PmapOptions outer;
  outer.axis_name = "i";
  auto out = rt.pmap(
      [](std::span<const Array> a) {
        PmapOptions inner;
        inner.axis_name = "j";
        return pmap(
            [](std::span<const Array> b) {
              return std::vector<Array>{psum(b[0], "j"), psum(b[0], "i"), axis_index("i"), axis_index("j")};
            },
            a, inner);
      },
      std::vector<Array>{f32(v, {2, 4})}, outer);
  REQUIRE(out[0].shape() == Shape{2, 4});
  REQUIRE(out[0].to_doubles() == std::vector<double>{6, 6, 6, 6, 22, 22, 22, 22});
  REQUIRE(out[1].to_doubles() == std::vector<double>{4, 6, 8, 10, 4, 6, 8, 10});
  REQUIRE(out[2].to_doubles() == std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1});
  REQUIRE(out[3].to_doubles() == std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3});
}

TEST_CASE("collectives::barrier: devices meet with no data", "[collectives]") {
  auto threads = GENERATE(1, 2, 3);
  Runtime rt({.devices = 64, .threads = threads});
  auto out = run_on(rt, 64, {}, [](std::span<const Array>) {
    for (int k = 0; k < 10; ++k) barrier("i");
    return std::vector<Array>{axis_index("i")};
  });
  REQUIRE(out[0].shape() == Shape{64});
  REQUIRE(out[0].element_as_int64(63) == 63);
}

TEST_CASE("collectives::all_gather: a scalar per device gathers into a vector", "[collectives]") {
  Runtime rt({.devices = 4});
  auto out = run_on(rt, 3, {f32({1, 2, 3}, {3})}, [](std::span<const Array> a) {
    return std::vector<Array>{all_gather(a[0], "i")};
  });
  REQUIRE(out[0].shape() == Shape{3, 3});
  REQUIRE(row(out[0], 2) == std::vector<double>{1, 2, 3});
}
