#pragma once
/// \file
/// A rendezvous with no data: returns once every member of `axes` arrived.
/// Not a JAX op; useful for tests, benchmarks and explicit synchronisation.

#include "spmd/collectives/axis_set.h"
#include "spmd/source_loc.h"

namespace spmd {

void barrier(const AxisSet& axes, SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
