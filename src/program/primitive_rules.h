#pragma once
// Abstract-evaluation and implementation rules of the primitives that live
// outside primitives.cc (one concept per file); primitives.cc registers them.

#include <span>
#include <string>
#include <vector>

#include "spmd/program/primitive.h"

namespace spmd::program::rules {

/// TypeError "<primitive>: <message>": a primitive's operands or parameters
/// do not fit it (abstract evaluation's error, as JAX raises at trace time).
[[noreturn]] void type_error(const Primitive& p, const std::string& message);

// sort(*operands; dimension, num_keys): every operand reordered along
// `dimension` by the first operand's values, stably (lax.sort).
std::vector<Aval> sort_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&);
std::vector<Array> sort_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc);

// random_bits(key[, data]; shape, stream): int32 values in [0, 2^31) from a
// counter-based hash of the key (int32[2]), the stream and the element index.
std::vector<Aval> random_bits_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                       const AxisEnv&);
std::vector<Array> random_bits_impl(const Primitive& p, std::span<const Array> in, const Params& params,
                                    SourceLoc loc);

}  // namespace spmd::program::rules
