// jax.random's generator (src/program/threefry.cc): the Threefry-2x32 hash
// against the known-answer vectors of Random123 (the ones JAX's own
// random_impl_test checks), and erf_inv's special values. The numbers JAX
// draws from it (split, fold_in, bits, randint, uniform, normal) are checked
// against JAX's published values in tests/python/test_random.py.

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "program/primitive_rules.h"
#include "spmd/program/primitive.h"

using namespace spmd;
using namespace spmd::program;

TEST_CASE("program::threefry: Threefry-2x32 (20 rounds) gives Random123's known answers", "[program][random]") {
  using P = std::pair<std::uint32_t, std::uint32_t>;
  REQUIRE(rules::threefry2x32(0, 0, 0, 0) == P{0x6B200159u, 0x99BA4EFEu});
  REQUIRE(rules::threefry2x32(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu) == P{0x1CB996FCu, 0xBB002BE7u});
  REQUIRE(rules::threefry2x32(0x13198A2Eu, 0x03707344u, 0x243F6A88u, 0x85A308D3u) == P{0xC4923A9Cu, 0x483DF7A0u});
}

TEST_CASE("program::threefry: erf_inv inverts erf and has its limits", "[program][random]") {
  const Primitive& p = find_primitive("erf_inv");
  const Primitive& erf = find_primitive("erf");
  Array x = Array::from_doubles(std::vector<double>{-0.999, -0.5, 0.0, 0.3, 0.9, 1.0, -1.0}, Shape{7}, DType::kFloat32);
  Array y = apply(p, std::vector<Array>{x}, Params{}, {})[0];
  Array back = apply(erf, std::vector<Array>{y}, Params{}, {})[0];
  for (std::int64_t i = 0; i < 5; ++i) {
    CHECK(back.element_as_double(i) == Approx(x.element_as_double(i)).margin(2e-6));
  }
  CHECK(y.element_as_double(2) == 0.0);
  CHECK(y.element_as_double(5) == std::numeric_limits<double>::infinity());
  CHECK(y.element_as_double(6) == -std::numeric_limits<double>::infinity());
  // The central branch's polynomial at 0.5: erfinv(0.5) = 0.4769362762...
  CHECK(y.element_as_double(1) == Approx(-0.476936276).epsilon(1e-6));
}
