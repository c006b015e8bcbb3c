#pragma once
// `spmd test`: runs scenarios and compares each outcome with the expectation
// declared in its header; the CI deadlock test runner.

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/scenario_runner.h"

namespace spmd::cli {

/// `spmd test`'s wall-clock budget per pmap run and for a scenario's host
/// code, unless --max-seconds says otherwise: a CI job fails instead of
/// hanging on a scenario that loops forever (`spmd run` keeps no default).
inline constexpr double kDefaultTestSeconds = 60;

struct TestResult {
  std::string file;
  bool passed = false;
  std::string skipped;            // why it did not run (requires= a module not importable here); "" ran
  std::string expected;           // "deadlock", "error:NameError", ...
  std::string got;                // same spelling
  std::vector<std::string> problems;  // why it failed
  double seconds = 0;
  RunOutcome outcome;
};

/// Files: *.py files, directories searched recursively (sorted). Throws
/// InvalidArgument (kind "UsageError") for a path that does not exist or a
/// set with no scenario.
std::vector<std::string> collect_scenarios(const std::vector<std::string>& paths);

/// Runs one scenario and checks its header's expectations. A scenario
/// without `expect=` fails with a problem saying so.
TestResult test_scenario(const std::string& path, const RunSettings& base);

/// JUnit XML for CI dashboards.
std::string junit_xml(const std::vector<TestResult>& results);

/// The whole command: prints PASS/FAIL/SKIP lines and a summary to `out`;
/// returns the exit code (0 when none failed, 1 otherwise).
int run_tests(const std::vector<std::string>& paths, const RunSettings& base, const std::string& junit_path,
              std::ostream& out);

}  // namespace spmd::cli
