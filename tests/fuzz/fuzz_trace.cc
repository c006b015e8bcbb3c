// libFuzzer target: the JSONL trace reader and `spmd replay`. Every input
// ends with a summary or an spmd::Error; malformed traces are SyntaxErrors
// naming source:line:column (exit code 2 in the CLI).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "cli/scenario_runner.h"
#include "fuzz_limits.h"
#include "spmd/error.h"
#include "spmd/trace/replay.h"
#include "spmd/util/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > spmd::fuzz::kMaxInputBytes) return 0;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  spmd::RuntimeOptions o = spmd::fuzz::runtime_options();
  o.devices = 1;  // replay raises it to what the trace needs
  try {
    (void)spmd::replay_trace(in, "fuzz.jsonl", o);
  } catch (const spmd::Error& e) {
    const spmd::Report& r = e.report();
    if (e.kind() == "SyntaxError") {
      if (!r.where.valid() || r.where.column == 0 || spmd::exit_code_for_kind(e.kind()) != 2) {
        std::fprintf(stderr, "fuzz_trace: a SyntaxError without source:line:column\n%s\n", e.what());
        std::abort();
      }
    }
    (void)r.to_text();
    (void)r.to_json().dump();
  }
  return 0;
}
