// jax.random's source of bits: a counter-based generator, so a key gives the
// same numbers on every run, every device and every schedule.
//
// A key is an int32[2] array (PRNGKey(s) holds s >> 32 and s & 0xffffffff, as
// in JAX). Element i of a draw is a splitmix64 hash of (key, stream, i): the
// streams keep split, fold_in, uniform, normal, ... apart. The values differ
// from JAX's threefry; their distribution does not.

#include "program/primitive_rules.h"
#include "spmd/error.h"

namespace spmd::program::rules {

namespace {

std::uint64_t splitmix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<Aval> random_bits_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                       const AxisEnv&) {
  if (in.empty() || in.size() > 2) type_error(p, "takes a key and optionally the data folded into it");
  if (in[0].shape != Shape{2} || in[0].dtype != DType::kInt32) {
    type_error(p, "a key is an int32[2] array (jax.random.PRNGKey), got " + in[0].str());
  }
  if (in.size() == 2 && (!in[1].shape.empty() || !is_integer(in[1].dtype))) {
    type_error(p, "fold_in data must be an integer scalar, got " + in[1].str());
  }
  const auto& shape = params.get<std::vector<std::int64_t>>("shape", p.name);
  return {Aval{Shape(shape.begin(), shape.end()), DType::kInt32, false}};
}

std::vector<Array> random_bits_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  const auto& shape = params.get<std::vector<std::int64_t>>("shape", p.name);
  const auto stream = static_cast<std::uint64_t>(params.get<std::int64_t>("stream", p.name));
  std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(in[0].element_as_int64(0))) << 32) |
                      static_cast<std::uint32_t>(in[0].element_as_int64(1));
  if (in.size() == 2) key = splitmix(key ^ splitmix(static_cast<std::uint64_t>(in[1].element_as_int64(0))));
  const std::uint64_t base = splitmix(key ^ splitmix(stream));
  std::int64_t count = 1;
  for (std::int64_t d : shape) count *= d;
  std::vector<std::int64_t> bits(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    bits[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(splitmix(base + static_cast<std::uint64_t>(i)) >> 33);
  }
  return {Array::from_int64s(bits, Shape(shape.begin(), shape.end()), DType::kInt32)};
}

}  // namespace spmd::program::rules
