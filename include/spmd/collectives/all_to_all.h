#pragma once
/// \file
/// jax.lax.all_to_all: x is split into group-size blocks along split_axis;
/// block j goes to member j, and the received blocks are stacked along
/// concat_axis. Untiled: x.shape[split_axis] == group size; the result shape is
/// np.insert(np.delete(x.shape, split_axis), concat_axis, n). Tiled: split_axis
/// shrinks by n and concat_axis grows by n.

#include "spmd/collectives/axis_set.h"
#include "spmd/core/array.h"
#include "spmd/source_loc.h"

namespace spmd {

Array all_to_all(const Array& x, const AxisSet& axes, int split_axis, int concat_axis, bool tiled = false,
                 const AxisIndexGroups& groups = {},
                 SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
