// The one definition of where collective data goes: the shapes the program's
// shape rules, the host data plane and the device transports all use.

#include <catch2/catch.hpp>

#include "rendezvous/collective_layout.h"

using spmd::Shape;
using spmd::detail::all_gather_shape;
using spmd::detail::all_to_all_layout;
using spmd::detail::psum_scatter_shape;

TEST_CASE("rendezvous::collective_layout: all_gather stacks on a new axis, or concatenates when tiled",
          "[rendezvous][layout]") {
  REQUIRE(all_gather_shape({3, 5}, 0, false, 4) == Shape{4, 3, 5});
  REQUIRE(all_gather_shape({3, 5}, 2, false, 4) == Shape{3, 5, 4});  // untiled: an axis of the result
  REQUIRE(all_gather_shape({3, 5}, 1, true, 4) == Shape{3, 20});
  REQUIRE(all_gather_shape({}, 0, false, 8) == Shape{8});
}

TEST_CASE("rendezvous::collective_layout: psum_scatter keeps block k of the axis, dropping it when untiled",
          "[rendezvous][layout]") {
  REQUIRE(psum_scatter_shape({4, 6}, 0, false, 4) == Shape{6});
  REQUIRE(psum_scatter_shape({4, 12}, 1, true, 4) == Shape{4, 3});
  REQUIRE(psum_scatter_shape({8}, 0, true, 8) == Shape{1});
}

TEST_CASE("rendezvous::collective_layout: all_to_all cuts along split_axis and places blocks along concat_axis",
          "[rendezvous][layout]") {
  auto tiled = all_to_all_layout({8, 6}, 0, 1, true, 4);
  REQUIRE(tiled.block == Shape{2, 6});
  REQUIRE(tiled.received == Shape{2, 6});
  REQUIRE(tiled.out == Shape{2, 24});

  // Untiled: the split axis has the group's size; each received block drops
  // it, and the result gains a new axis of g at concat_axis.
  auto untiled = all_to_all_layout({4, 3, 5}, 0, 2, false, 4);
  REQUIRE(untiled.block == Shape{1, 3, 5});
  REQUIRE(untiled.received == Shape{3, 5});
  REQUIRE(untiled.out == Shape{3, 5, 4});
  REQUIRE(all_to_all_layout({3, 4}, 1, 0, false, 4).out == Shape{4, 3});
}
