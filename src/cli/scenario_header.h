#pragma once
// The `# spmd: key=value` header comments of a scenario file: run settings
// and, for `spmd test`, the expected outcome.
//
//   # spmd: devices=4 threads=1 seed=0 max-steps=100000 processes=2 process-devices=local strict=1
//   # spmd: expect=deadlock            (ok | deadlock | mismatch | error:KIND)
//   # spmd: expect-line=14             (the report points at this line)
//   # spmd: expect-decision-line=9     (the first differing cond/loop is here)
//   # spmd: expect-message=psum over   (the report's message contains this)
//   # spmd: expect-stdout: [device 0] x = 1     (one line of the expected stdout)
//   # spmd: requires=optax,flax       (spmd test skips it where they cannot be imported)
//
// Header lines may appear anywhere among the leading comment block and
// blank lines; parsing stops at the first line of code.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spmd::cli {

/// The largest devices= / threads= a header (or --devices / --threads) may ask for.
inline constexpr int kMaxDevices = 1 << 20;
inline constexpr int kMaxThreads = 256;
/// The largest processes= / --num-processes.
inline constexpr int kMaxProcesses = 4096;

struct ScenarioHeader {
  std::optional<int> devices;
  std::optional<int> threads;
  std::optional<std::uint64_t> seed;
  std::optional<std::uint64_t> max_steps;
  std::optional<int> processes;             // run as this many processes (spmd run / spmd test launch them)
  std::optional<bool> process_local_devices;  // process-devices=local: each process runs its share
  std::optional<bool> strict;               // strict=1: warnings about the program are errors (as --strict)
  std::string expect;                       // "" when not declared
  std::optional<int> expect_line;
  std::optional<int> expect_decision_line;
  std::vector<std::string> expect_message;  // substrings
  std::optional<std::vector<std::string>> expect_stdout;
  std::vector<std::string> requires_modules;  // requires=optax,flax: importable, or spmd test skips it
};

/// Throws InvalidArgument (kind "UsageError") naming file:line for a bad key or value.
ScenarioHeader parse_scenario_header(const std::string& text, const std::string& path);

}  // namespace spmd::cli
