#pragma once
// Host-memory implementation of every collective: what the simulator does once
// all members have arrived. Also the reference the CUDA backend is compared with.
//
// Results are deterministic: reductions combine members in group order
// (rank 0 first), whatever the arrival order or thread count.

#include "rendezvous/communicator.h"

namespace spmd::detail {

/// Fills every member's outputs (allocated in that member's arena).
void execute_on_host(CollectiveCall& call);

/// Result dtype of a reduction collective for an operand dtype
/// (psum of bool -> int32; pmean of bool/int -> float32).
DType reduction_result_dtype(CollectiveKind kind, DType operand);

/// The groups a collective runs in: `groups` or one group of 0..n-1.
std::vector<std::vector<int>> effective_groups(const std::vector<std::vector<int>>& groups, int n);

}  // namespace spmd::detail
