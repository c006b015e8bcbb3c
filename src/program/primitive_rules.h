#pragma once
// Abstract-evaluation and implementation rules of the primitives that live
// outside primitives.cc (one concept per file); primitives.cc registers them.

#include <span>
#include <vector>

#include "spmd/program/primitive.h"

namespace spmd::program::rules {

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
