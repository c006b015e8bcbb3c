// Inputs found by the fuzzers (tests/fuzz, tools/fuzz.sh), each pinned to the
// clean, located error it must end with: headers and traces.

#include <catch2/catch.hpp>

#include <sstream>

#include "cli/scenario_header.h"
#include "cli/scenario_runner.h"
#include "spmd/error.h"
#include "spmd/trace/replay.h"

using namespace spmd;
using namespace spmd::cli;

namespace {

Report header_error(const std::string& text) {
  try {
    parse_scenario_header(text, "h.py");
  } catch (const InvalidArgument& e) {
    return e.report();
  }
  FAIL("no error for: " << text);
  return {};
}

}  // namespace

TEST_CASE("fuzz regressions: header numbers beyond the CLI's limits are usage errors", "[cli][fuzz]") {
  // devices=4294967297 used to wrap to 1 device through static_cast<int>.
  Report r = header_error("# spmd: devices=4294967297\n");
  REQUIRE(r.kind == "UsageError");
  REQUIRE(r.message == "h.py:1: bad spmd header: devices=4294967297 is larger than 1048576");
  REQUIRE(r.where.line == 1);
  REQUIRE(exit_code_for_kind(r.kind) == 2);
  // threads=100000 used to start 100000 OS threads.
  REQUIRE(header_error("#\n# spmd: threads=100000\n").message ==
          "h.py:2: bad spmd header: threads=100000 is larger than 256");
  REQUIRE(header_error("# spmd: expect-line=99999999999\n").kind == "UsageError");
  ScenarioHeader h = parse_scenario_header("# spmd: devices=1048576 threads=256\n", "h.py");
  REQUIRE(h.devices == kMaxDevices);
  REQUIRE(h.threads == kMaxThreads);
}

TEST_CASE("fuzz regressions: an empty trace is a located syntax error", "[cli][fuzz]") {
  // The empty input was reported at line 0 (not a location) by the trace reader.
  std::istringstream empty("");
  RuntimeOptions o;
  o.devices = 1;
  try {
    (void)replay_trace(empty, "empty.jsonl", o);
    FAIL("no error for an empty trace");
  } catch (const Error& e) {
    REQUIRE(e.kind() == "SyntaxError");
    REQUIRE(e.report().where.line == 1);
    REQUIRE(e.report().where.column == 1);
    REQUIRE(e.report().message == "empty.jsonl:1:1: invalid trace: the trace has no devices");
    REQUIRE(exit_code_for_kind(e.kind()) == 2);
  }
}

TEST_CASE("fuzz regressions: top-level devices on different meshes point at the device_start line", "[cli][fuzz]") {
  // Found by spmd_fuzz_trace: this error came from the replay without a location.
  std::istringstream trace(
      R"({"ev":"run_start","version":1,"backend":"sim","devices":2,"axes":"i=2"})"
      "\n"
      R"({"ev":"device_start","uid":0,"parent":-1,"device":0,"label":"device 0","env":[{"name":"i","index":0,"size":2}]})"
      "\n"
      R"({"ev":"device_start","uid":1,"parent":-1,"device":1,"label":"device 1","env":[{"name":"j","index":1,"size":2}]})"
      "\n");
  RuntimeOptions o;
  o.devices = 1;
  try {
    (void)replay_trace(trace, "mesh.jsonl", o);
    FAIL("no error for devices on different meshes");
  } catch (const Error& e) {
    REQUIRE(e.kind() == "SyntaxError");
    REQUIRE(e.report().message == "mesh.jsonl:3:1: invalid trace: top-level devices disagree on their axes (device 1)");
    REQUIRE(e.report().where.line == 3);
  }
}
