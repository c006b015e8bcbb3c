#pragma once
// What `spmd run` does when every device stopped at jax.debug.breakpoint():
// print the stopped devices' values, or hold a small pdb-like prompt.

#include <functional>
#include <iosfwd>
#include <span>

#include "spmd/debug/breakpoint.h"

namespace spmd::cli {

/// Prints every stopped device's values, then returns (the devices resume).
void print_breakpoint(std::span<const BreakpointStop> stops, std::ostream& out);

/// Interactive: `p NAME [DEVICE]`, `l` (list names), `d` (devices), `c`
/// (continue), `q` (quit: the run ends with kind "BreakpointAbandoned"),
/// `h` (help). End of input continues. When `in` reads file descriptor
/// `in_fd` (std::cin: 0), the prompt waits for input in steps and continues
/// once `interrupted()` says so (SIGINT/SIGTERM): the devices resume and the
/// runtime stops them with the report, instead of the process waiting for
/// a line that never comes.
void prompt_breakpoint(std::span<const BreakpointStop> stops, std::istream& in, std::ostream& out, int in_fd = -1,
                       const std::function<bool()>& interrupted = {});

}  // namespace spmd::cli
