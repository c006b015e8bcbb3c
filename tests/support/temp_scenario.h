#pragma once
// Scenario files written by tests: each test process writes into its own
// folder under the system's temp directory (named after the test file and
// the process id), so tests running in parallel never read each other's
// half-written files.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/scenario_runner.h"

namespace spmd::testing {

/// Writes `text` to <tmp>/<folder>-<pid>/<name> and returns the path.
inline std::string write_temp_scenario(const std::string& folder, const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / (folder + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

/// Runs `text` as scenario file `name` through `spmd run` in-process, with
/// `input` as the breakpoint prompt's stdin; the outcome carries the stdout.
inline cli::RunOutcome run_temp_scenario(const std::string& folder, const std::string& name, const std::string& text,
                                         cli::RunSettings s = {}, const std::string& input = "") {
  s.path = write_temp_scenario(folder, name, text);
  std::ostringstream out, err;
  std::istringstream in(input);
  cli::RunOutcome o = cli::run_scenario(s, out, err, in);
  o.stdout_text = out.str();
  return o;
}

}  // namespace spmd::testing
