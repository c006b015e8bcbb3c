#pragma once
// Arrays of equal contents on several devices over one block of host memory.
//
// A collective whose result is the same on every member (psum, all_gather)
// need not write that result once per device: the members' arrays may share
// one block, since arrays are never written after they are filled. Each
// array still belongs to its own device (ownership checks, device()) and is
// charged to its own arena (capacity, live and peak bytes), exactly as a copy
// would be; only the host's memory traffic and footprint shrink.

#include <memory>
#include <string_view>
#include <vector>

#include "spmd/core/array.h"

namespace spmd::detail {

class Arena;

/// One uninitialised array per arena, all over one block: fill the first
/// (every array's mutable_raw_data() is the same pointer), then use them all.
/// Host-memory arenas only (std::logic_error otherwise): GPU memory is not
/// shared between devices.
std::vector<Array> uninitialized_replicas(const std::vector<std::shared_ptr<Arena>>& arenas, const Shape& shape,
                                          DType dtype, std::string_view what);

}  // namespace spmd::detail
