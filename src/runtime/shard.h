#pragma once
// Moving pmap arguments onto devices and per-device outputs back.

#include <cstdint>
#include <vector>

#include "spmd/core/array.h"

namespace spmd::detail {

/// Index `i` of axis `axis` of x, that axis removed, placed on the calling
/// placement (use a PlacementScope to choose the device).
Array take_slice(const Array& x, int axis, std::int64_t i);

/// Stacks equal-shape arrays along a new axis `axis`, on the calling placement.
Array stack_along(const std::vector<const Array*>& parts, int axis);

/// x with dims [axis, axis + count) merged into one (a view; no copy).
Array merge_dims(const Array& x, int axis, int count);

/// x with dim `axis` split into `sizes` (a view; no copy).
Array split_dim(const Array& x, int axis, const std::vector<std::int64_t>& sizes);

}  // namespace spmd::detail
