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

namespace {

Array int32s(const std::vector<std::int64_t>& words, Shape shape) {
  return Array::from_int64s(words, std::move(shape), DType::kInt32);
}

std::vector<std::int64_t> elements(const Array& a) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < a.size(); ++i) out.push_back(a.element_as_int64(i));
  return out;
}

}  // namespace

// vmap over keys runs one equation on the stack: it must draw what each key draws alone.
TEST_CASE("program::threefry: a stack of keys draws what each of its keys draws alone", "[program][random]") {
  const std::vector<std::vector<std::int64_t>> keys = {{0, 42}, {-7, 3}, {123456, -1}};
  Array stack = int32s({0, 42, -7, 3, 123456, -1}, Shape{3, 2});
  for (bool partitionable : {true, false}) {
    Params split;
    split.set("shape", std::vector<std::int64_t>{2, 2});
    split.set("partitionable", partitionable);
    Params bits = split;
    bits.set("shape", std::vector<std::int64_t>{5});
    for (std::int64_t width : {8, 32, 64}) {
      bits.set("width", width);
      Array all = apply(find_primitive("threefry_bits"), std::vector<Array>{stack}, bits, {})[0];
      REQUIRE(all.shape() == Shape{3, 5});
      std::vector<std::int64_t> one_by_one;
      for (const auto& k : keys) {
        Array one = apply(find_primitive("threefry_bits"), std::vector<Array>{int32s(k, Shape{2})}, bits, {})[0];
        for (std::int64_t v : elements(one)) one_by_one.push_back(v);
      }
      CHECK(elements(all) == one_by_one);
    }
    Array all = apply(find_primitive("threefry_split"), std::vector<Array>{stack}, split, {})[0];
    REQUIRE(all.shape() == Shape{3, 2, 2, 2});
    std::vector<std::int64_t> one_by_one;
    for (const auto& k : keys) {
      for (std::int64_t v : elements(apply(find_primitive("threefry_split"), std::vector<Array>{int32s(k, Shape{2})}, split, {})[0])) {
        one_by_one.push_back(v);
      }
    }
    CHECK(elements(all) == one_by_one);
  }
  // fold_in: one datum for every key, or one per key.
  const Primitive& fold_in = find_primitive("threefry_fold_in");
  Array data = int32s({5, 6, 7}, Shape{3});
  Array per_key = apply(fold_in, std::vector<Array>{stack, data}, Params{}, {})[0];
  Array shared = apply(fold_in, std::vector<Array>{stack, Array::scalar_int(6, DType::kInt32)}, Params{}, {})[0];
  REQUIRE(per_key.shape() == Shape{3, 2});
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto one = [&](std::int64_t d) {
      return elements(apply(fold_in, std::vector<Array>{int32s(keys[i], Shape{2}), Array::scalar_int(d, DType::kInt32)}, Params{}, {})[0]);
    };
    const auto row = [&](const Array& a) {
      return std::vector<std::int64_t>{a.element_as_int64(static_cast<std::int64_t>(2 * i)), a.element_as_int64(static_cast<std::int64_t>(2 * i + 1))};
    };
    CHECK(row(per_key) == one(5 + static_cast<std::int64_t>(i)));
    CHECK(row(shared) == one(6));
  }
  // Data that is neither a scalar nor one per key is the front end's error, said so.
  Array wrong = int32s({1, 2}, Shape{2});
  const std::vector<Aval> in = {Aval::of(stack), Aval::of(wrong)};
  CHECK_THROWS_WITH(fold_in.abstract_eval(fold_in, in, Params{}, AxisEnv{}),
                    Catch::Contains("fold_in data must be an integer scalar, got i32[2]"));
}
