#pragma once
// Abstract-evaluation and implementation rules of the primitives that live
// outside primitives.cc (one concept per file); primitives.cc registers them.

#include <cstdint>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "spmd/core/elementwise.h"
#include "spmd/program/primitive.h"

namespace spmd::program::rules {

/// TypeError "<primitive>: <message>": a primitive's operands or parameters
/// do not fit it (abstract evaluation's error, as JAX raises at trace time).
[[noreturn]] void type_error(const Primitive& p, const std::string& message);

/// The kernel op of a binary primitive on operands of dtype `a`: and/or/xor
/// are logical on booleans and bitwise on integers, as in lax.
BinaryOp binary_op_for(const Primitive& p, DType a);

/// x ** y for y != 0 as JAX computes integer_pow (lax._integer_pow): binary
/// exponentiation unrolled into the same multiplications in the same order,
/// so the bits are XLA's; a negative y takes the reciprocal at the end. `V`
/// is an Array or a fused chain's value.
template <class V, class Mul, class Reciprocal>
V unrolled_power(V x, std::int64_t y, Mul mul, Reciprocal reciprocal) {
  std::uint64_t n = y < 0 ? 0 - static_cast<std::uint64_t>(y) : static_cast<std::uint64_t>(y);
  std::optional<V> acc;
  while (n > 0) {
    if (n & 1) acc = acc ? mul(*acc, x) : x;
    n >>= 1;
    if (n > 0) x = mul(x, x);
  }
  return y < 0 ? reciprocal(*acc) : *acc;
}

/// The kernel op of a unary primitive with `params`: round's
/// rounding_method (lax.RoundingMethod: 0 halves away from zero, lax.round's
/// default; 1 to even, jnp.round's) picks its kernel.
UnaryOp unary_op_for(const Primitive& p, const Params& params);

// sort(*operands; dimension, num_keys): every operand reordered along
// `dimension` by the first operand's values, stably (lax.sort).
std::vector<Aval> sort_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&);
std::vector<Array> sort_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);

// jax.random's primitives (threefry.cc): keys and bits are uint32 bit
// patterns in int32 arrays, computed as JAX computes them.
std::pair<std::uint32_t, std::uint32_t> threefry2x32(std::uint32_t k0, std::uint32_t k1, std::uint32_t x0,
                                                     std::uint32_t x1);
// threefry_split(key; shape, partitionable) -> int32[*shape, 2]: JAX's split
std::vector<Aval> threefry_split_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                         const AxisEnv&);
std::vector<Array> threefry_split_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);
// threefry_fold_in(key, data) -> int32[2]: JAX's fold_in
std::vector<Aval> threefry_fold_in_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                           const AxisEnv&);
std::vector<Array> threefry_fold_in_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);
// threefry_bits(key; shape, width, partitionable) -> JAX's random bits (int64 for width 64)
std::vector<Aval> threefry_bits_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                        const AxisEnv&);
std::vector<Array> threefry_bits_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);
// random_unit(bits) -> floats in [0, 1), the mantissa from the bits, as JAX's uniform
std::vector<Aval> random_unit_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                      const AxisEnv&);
std::vector<Array> random_unit_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);
// randint_bits(high, low, minval, maxval) -> JAX's randint from two draws of bits
std::vector<Aval> randint_bits_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                       const AxisEnv&);
std::vector<Array> randint_bits_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);
// erf(x), erf_inv(x) (special_functions.cc)
std::vector<Aval> erf_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&);
std::vector<Array> erf_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);
std::vector<Aval> erf_inv_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                  const AxisEnv&);
std::vector<Array> erf_inv_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);

}  // namespace spmd::program::rules
