#pragma once
// The executor as each device of a pmap runs it: steps whose values are the
// same on every device (program/invariance.h) computed by one device for
// all (program/shared_results.h). pmap_program builds the SharedResults of
// a run and calls this on every device.

#include <span>
#include <vector>

#include "program/shared_results.h"
#include "spmd/program/program.h"

namespace spmd::program {

/// execute() of executor.h; with `shared` (null: none), the steps it marks
/// are taken from, or published to, the run's other devices.
std::vector<Array> execute(const Program& p, std::span<const Array> args, SharedResults* shared);

}  // namespace spmd::program
