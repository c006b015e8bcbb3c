#pragma once
/// \file
/// jax.lax.ppermute: member `src` sends x to member `dst` for each pair of
/// `perm` (indices along the axes); members that receive nothing get zeros.
/// Sources must be distinct and destinations distinct (InvalidArgument).

#include <utility>
#include <vector>

#include "spmd/collectives/axis_set.h"
#include "spmd/core/array.h"
#include "spmd/source_loc.h"

namespace spmd {

using Permutation = std::vector<std::pair<int, int>>;

Array ppermute(const Array& x, const AxisSet& axes, const Permutation& perm,
               SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
