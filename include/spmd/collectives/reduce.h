#pragma once
/// \file
/// psum, pmean, pmax, pmin (jax.lax) over one or more named axes.
///
/// Every device bound to `axes` must call the same collective with the same
/// operand shapes and dtypes, in the same order: the rendezvous checks this and
/// throws CollectiveMismatch with a per-device table otherwise. A device that
/// never arrives (it returned, raised or waits at another collective) makes the
/// run end with DeadlockError as soon as no device can make progress.
/// Blocks the calling device until all members arrive.
///
/// Results: the elementwise sum / mean / max / min over the group, identical
/// on every member, summed in device order (deterministic). Integer and bool
/// operands of pmean give float32; psum of bool gives int32.
/// Unbound axis names throw AxisNameError listing the bound names.

#include <span>
#include <vector>

#include "spmd/collectives/axis_set.h"
#include "spmd/core/array.h"
#include "spmd/source_loc.h"

namespace spmd {

#define SPMD_DECLARE_REDUCTION(name)                                                                 \
  Array name(const Array& x, const AxisSet& axes, const AxisIndexGroups& groups = {},                \
             SourceLoc loc = SourceLoc::from(std::source_location::current()));                     \
  std::vector<Array> name(std::span<const Array> xs, const AxisSet& axes, const AxisIndexGroups& groups, \
                          SourceLoc loc)

SPMD_DECLARE_REDUCTION(psum);
SPMD_DECLARE_REDUCTION(pmean);
SPMD_DECLARE_REDUCTION(pmax);
SPMD_DECLARE_REDUCTION(pmin);

#undef SPMD_DECLARE_REDUCTION

}  // namespace spmd
