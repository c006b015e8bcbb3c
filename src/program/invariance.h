#pragma once
// Which values of a program are the same on every device of a pmap, and so
// which steps one device may compute for all (program/shared_results.h).
//
// A value is replicated when it is a replicated argument (in_axes=None), a
// literal, the result of a pure primitive (Replication::kPure) of
// replicated values, or the result of a collective whose result every
// member shares (Replication::kReplicating) over all of the pmap's axes or
// of replicated operands. Everything else (axis_index, ppermute, effects,
// control flow and calls, which run sub-programs) is per device. Replicated
// values give the same bits on every device because every kernel is
// deterministic for a given thread count (the simulator's guarantee), so
// computing them once changes no result.

#include <cstddef>
#include <string>
#include <vector>

#include "spmd/program/program.h"

namespace spmd::program {

/// One flag per step of `p`'s plan: the step's primitives are pure, every
/// value it reads is replicated, and its outputs are large enough that one
/// device computing them for all saves more than sharing them costs.
/// `replicated_inputs`: one flag per program input; `pmap_axes`: the names
/// the pmap binds (an anonymous axis has none).
std::vector<bool> shared_steps(const Program& p, const std::vector<bool>& replicated_inputs,
                               const std::vector<std::string>& pmap_axes);

/// Outputs below this many bytes in all are cheaper to recompute on each
/// device than to share (a shared step costs two atomic operations and an
/// array per output on every device).
inline constexpr std::size_t kMinSharedStepBytes = 4096;

}  // namespace spmd::program
