#include <catch2/catch.hpp>

#include "spmd/spmd.h"

using namespace spmd;

TEST_CASE("runtime::pmap: psum over 4 devices", "[pmap]") {
  Runtime rt({.devices = 4});
  std::vector<double> host = {1, 2, 3, 4, 5, 6, 7, 8};
  Array x = Array::from_doubles(host, {4, 2}, DType::kFloat32);
  PmapOptions o;
  o.axis_name = "i";
  auto out = rt.pmap([](std::span<const Array> a) { return std::vector<Array>{psum(a[0], "i")}; },
                     std::vector<Array>{x}, o);
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].shape() == Shape{4, 2});
  REQUIRE(out[0].to_doubles() == std::vector<double>{16, 20, 16, 20, 16, 20, 16, 20});
}

TEST_CASE("runtime::deadlock: a device skips psum", "[deadlock]") {
  Runtime rt({.devices = 4});
  Array x = Array::from_doubles(std::vector<double>{1, 2, 3, 4}, {4}, DType::kFloat32);
  PmapOptions o;
  o.axis_name = "i";
  try {
    rt.pmap(
        [](std::span<const Array> a) {
          if (current_device().id == 2) return std::vector<Array>{a[0]};
          return std::vector<Array>{psum(a[0], "i")};
        },
        std::vector<Array>{x}, o);
    FAIL("expected a deadlock");
  } catch (const DeadlockError& e) {
    INFO(e.what());
    REQUIRE(e.report().kind == "Deadlock");
    REQUIRE(e.report().op == "psum");
    CHECK(std::string(e.what()).find("device 2 returned") != std::string::npos);
  }
}
