#pragma once
// `spmd run FILE --num-processes N` without --process-id: runs N copies of
// this spmd, one per rank, on this host, sharing a fresh store directory,
// and prints their output with each line marked "[process r] ". This is the
// one-host way to see how a program behaves as N processes (N hosts run the
// same command with --process-id and a shared --store instead).

#include <ostream>
#include <string>
#include <vector>

namespace spmd::cli {

struct LaunchResult {
  int exit_code = 0;                // the highest of the processes' codes
  std::vector<int> process_codes;   // by rank
  std::string store;                // the directory they shared
};

/// Runs `argv` (this spmd's own command line) N times, adding
/// "--process-id r --store DIR" (DIR: `store`, or a fresh temporary directory
/// when empty). Output lines go to `out` / `err` as they come.
LaunchResult launch_processes(const std::vector<std::string>& argv, int n, std::string store, std::ostream& out,
                              std::ostream& err);

}  // namespace spmd::cli
