#pragma once
// The reduction every host-side transport performs: element by element over
// the ranks in rank order (rank 0 first), accumulating as the host data plane
// does (float16/bfloat16 in float32, integers wrapping), so that a transport
// built on it gives the simulator's results bit for bit.

#include <cstdint>
#include <span>

#include "dataplane/transport.h"

namespace spmd::detail {

/// out[i] = in[0][offset + i] op in[1][offset + i] op ... for i < count.
/// Every pointer is host memory holding elements of `dtype`.
void reduce_in_rank_order(ReduceKind op, DType dtype, std::int64_t count, std::span<const void* const> in,
                          std::int64_t offset, void* out);

}  // namespace spmd::detail
