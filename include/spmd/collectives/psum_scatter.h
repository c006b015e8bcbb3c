#pragma once
/// \file
/// jax.lax.psum_scatter: sums over the group, then member k keeps block k of
/// dimension `scatter_dimension`. Untiled, that dimension must equal the group
/// size and is removed; tiled, it must be divisible by it and shrinks.

#include "spmd/collectives/axis_set.h"
#include "spmd/core/array.h"
#include "spmd/source_loc.h"

namespace spmd {

Array psum_scatter(const Array& x, const AxisSet& axes, int scatter_dimension = 0, bool tiled = false,
                   const AxisIndexGroups& groups = {},
                   SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
