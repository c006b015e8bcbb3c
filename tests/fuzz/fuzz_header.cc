// libFuzzer target: the `# spmd: key=value` header of scenario files. Every
// input gives a header within the CLI's own limits or a UsageError naming
// file:line (exit code 2).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/scenario_header.h"
#include "cli/scenario_runner.h"
#include "fuzz_limits.h"
#include "spmd/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > spmd::fuzz::kMaxInputBytes) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    spmd::cli::ScenarioHeader h = spmd::cli::parse_scenario_header(text, "fuzz.py");
    bool ok = (!h.devices || (*h.devices >= 1 && *h.devices <= spmd::cli::kMaxDevices)) &&
              (!h.threads || (*h.threads >= 1 && *h.threads <= spmd::cli::kMaxThreads)) &&
              (!h.processes || (*h.processes >= 1 && *h.processes <= spmd::cli::kMaxProcesses)) &&
              (!h.max_steps || *h.max_steps >= 1) && (!h.expect_line || *h.expect_line >= 1) &&
              (!h.expect_decision_line || *h.expect_decision_line >= 1);
    if (!ok) {
      std::fprintf(stderr, "fuzz_header: a header value outside the CLI's limits was accepted\n");
      std::abort();
    }
  } catch (const spmd::Error& e) {
    const spmd::Report& r = e.report();
    if (e.kind() != "UsageError" || !r.where.valid() || spmd::exit_code_for_kind(e.kind()) != 2) {
      std::fprintf(stderr, "fuzz_header: an error that is not a located UsageError\n%s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
