#pragma once
// Several processes from one command. `spmd run FILE --num-processes N`
// (or a `processes=N` header) without --process-id runs N copies of this
// spmd, one per rank, on this host, sharing a fresh store directory, and
// prints their output with each line marked "[process r] "; `spmd test`
// runs such a scenario the same way and judges the processes' combined
// outcome. On N hosts, each host starts its own rank instead (--process-id).

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/scenario_runner.h"

namespace spmd::cli {

struct LaunchResult {
  int exit_code = 0;                // the highest of the processes' codes
  std::vector<int> process_codes;   // by rank
  std::string store;                // the directory they shared, when the caller named it (a temporary one is removed)
};

/// Receives each line a process writes (without its newline), as it comes.
using LineSink = std::function<void(int rank, bool is_stderr, const std::string& line)>;

/// Runs `argv` (an spmd command line; argv[0] is ignored, this executable
/// runs) N times, adding "--process-id r --store DIR" (DIR: `store`, or a
/// fresh temporary directory when empty). `gpus`, when not empty, is each
/// rank's CUDA_VISIBLE_DEVICES.
LaunchResult launch_processes(const std::vector<std::string>& argv, int n, std::string store, const LineSink& sink,
                              const std::vector<std::string>& gpus = {});

/// Each rank's CUDA_VISIBLE_DEVICES when one host runs every process of a
/// cuda job with local devices: rank r gets GPUs r*L .. r*L+L-1 of
/// `visible` (this process's CUDA_VISIBLE_DEVICES; null or empty: 0, 1,
/// ...), so that no two ranks share a GPU (NCCL refuses that). Empty when
/// `visible` lists fewer than processes * L (each rank then reports it).
std::vector<std::string> gpus_per_process(int processes, int local_devices, const char* visible);

/// The `gpus` to launch `layout` with on the `backend`: split GPUs for a
/// cuda job with local devices, else none.
std::vector<std::string> gpus_for_launch(const ProcessLayout& layout, const std::string& backend);

/// A sink writing "[process r] line" to `out` or `err`.
LineSink marked_lines(std::ostream& out, std::ostream& err);

/// `spmd test` of one scenario, in processes of its own: nothing a scenario
/// leaves behind (interpreter state, numpy's print options, os.environ, the
/// working directory, threads still running) reaches the next, so each is
/// judged as if it ran alone. Runs its `layout.processes` processes with
/// --format json and returns the outcome of the process with the highest
/// exit code (the lowest rank among equals); with several, its stdout_text is
/// every process's stdout, each line marked with its process.
RunOutcome run_scenario_apart(const RunSettings& settings, const ProcessLayout& layout);

/// The spmd binary that launched processes run: this process's own
/// executable, unless set (a test binary names the real spmd).
void set_spmd_executable(std::string path);

}  // namespace spmd::cli
