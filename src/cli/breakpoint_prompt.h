#pragma once
// What `spmd run` does when every device stopped at jax.debug.breakpoint():
// print the stopped devices' values, or hold a small pdb-like prompt.

#include <iosfwd>
#include <span>

#include "spmd/debug/breakpoint.h"

namespace spmd::cli {

/// Prints every stopped device's values, then returns (the devices resume).
void print_breakpoint(std::span<const BreakpointStop> stops, std::ostream& out);

/// Interactive: `p NAME [DEVICE]`, `l` (list names), `d` (devices), `c`
/// (continue), `q` (quit: the run ends with kind "BreakpointAbandoned"),
/// `h` (help). End of input continues.
void prompt_breakpoint(std::span<const BreakpointStop> stops, std::istream& in, std::ostream& out);

}  // namespace spmd::cli
