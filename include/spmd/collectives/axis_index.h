#pragma once
/// \file
/// jax.lax.axis_index and axis_size. No communication: they read the calling
/// device's position. For a tuple of axes the index is row-major over the
/// tuple in the order given. Unbound names throw AxisNameError.

#include "spmd/collectives/axis_set.h"
#include "spmd/core/array.h"
#include "spmd/source_loc.h"

namespace spmd {

/// int32 scalar on the calling device.
Array axis_index(const AxisSet& axes, SourceLoc loc = SourceLoc::from(std::source_location::current()));
/// Product of the sizes of `axes` (what psum(1, axes) returns).
int axis_size(const AxisSet& axes, SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
