#pragma once
/// \file
/// jax.lax.all_gather: every member receives all members' x stacked along a
/// new axis `axis` (size = group size), or concatenated along `axis` when tiled.
/// Blocks until all members arrive; mismatches and deadlocks as in reduce.h.

#include "spmd/collectives/axis_set.h"
#include "spmd/core/array.h"
#include "spmd/source_loc.h"

namespace spmd {

Array all_gather(const Array& x, const AxisSet& axes, int axis = 0, bool tiled = false,
                 const AxisIndexGroups& groups = {},
                 SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
