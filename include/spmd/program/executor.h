#pragma once
/// \file
/// Runs a traced program on the calling fiber: inside a pmap that is one
/// device (with its own arena, collectives meeting at the rendezvous), on the
/// host it is `jax.jit` without devices. No Python runs here.
///
/// Before each equation the device's current location becomes the equation's
/// source position, so events, errors and deadlock reports name the user's
/// Python expression; each equation counts one step against the step budget.
///
/// The program's plan (made when it was built) says how: consecutive
/// elementwise equations of one shape run as one fused pass over memory, as
/// XLA fuses loops, with bit-identical results and arrays only for the values
/// read afterwards; every value is dropped after its last reader, so its
/// arena memory serves what follows.
///
/// Under pmap_program, a step whose values are the same on every device
/// (computed from replicated arguments and full-axis reductions only; see
/// program/invariance.h) is computed by the first device to reach it and
/// taken by the others, each charged for it as for its own result.

#include <span>
#include <vector>

#include "spmd/pmap/pmap_options.h"
#include "spmd/program/program.h"

namespace spmd::program {

/// Runs `p` on `args` (one per input, of the input's shape and dtype; a
/// mismatch is an InvalidArgument naming the input) and returns its outputs.
std::vector<Array> execute(const Program& p, std::span<const Array> args);

/// pmap of a program: every device executes `p` on its shard of `args` (see
/// pmap.h for the splitting and stacking rules, and the errors).
std::vector<Array> pmap_program(const ProgramRef& p, std::span<const Array> args, const PmapOptions& options);

}  // namespace spmd::program
