// libFuzzer target: the scenario language, parser and interpreter, on a small
// runtime (4 devices, 1 MiB arenas, step and time budgets) so that every
// input ends: with a result or with an spmd::Error that names file:line:column.
//
// Anything else is a finding: a crash, a sanitizer report, an exception that
// is not an spmd::Error, an error without a location, a syntax error whose
// CLI exit code is not 2, or an input that runs past libFuzzer's -timeout.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "cli/scenario_runner.h"
#include "fuzz_limits.h"
#include "spmd/debug/debug_print.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/runtime/runtime.h"
#include "spmd/scenario/scenario.h"
#include "spmd/util/json.h"

namespace {

[[noreturn]] void finding(const std::string& what, const spmd::Error& e) {
  std::fprintf(stderr, "fuzz_scenario: %s\n%s\n", what.c_str(), e.what());
  std::abort();
}

bool is_parse_kind(const std::string& kind) {
  return kind == "SyntaxError" || kind == "IndentationError" || kind == "TabError" || kind == "NotImplementedError";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > spmd::fuzz::kMaxInputBytes) return 0;
  std::string_view source(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const spmd::scenario::Module> module;
  try {
    module = spmd::scenario::parse_source(source, "fuzz.py");
  } catch (const spmd::Error& e) {
    if (!is_parse_kind(e.kind())) finding("parse_source threw an error of kind " + e.kind(), e);
    const spmd::Report& r = e.report();
    if (!r.where.valid() || r.where.column == 0) finding("a parse error without file:line:column", e);
    if (e.kind() != "NotImplementedError" && spmd::cli::exit_code_for_kind(e.kind()) != 2) {
      finding("a syntax error whose exit code is not 2", e);
    }
    (void)r.to_text();
    (void)r.to_json().dump();
    return 0;
  }

  std::ostringstream out, err;
  spmd::RuntimeOptions ro = spmd::fuzz::runtime_options();
  ro.print_sink = [&out](const spmd::DebugPrint& p) { out << p.line(); };
  ro.breakpoint_handler = [](std::span<const spmd::BreakpointStop>) {};
  spmd::Runtime rt(ro);
  spmd::set_default_runtime(&rt);
  spmd::scenario::InterpreterOptions io;
  io.out = &out;
  io.err = &err;
  io.runtime = &rt;
  io.max_host_steps = spmd::fuzz::kMaxHostSteps;
  try {
    spmd::scenario::run_module(*module, io);
  } catch (const spmd::Error& e) {
    const spmd::Report& r = e.report();
    if (!r.where.valid()) finding("a program error without file:line", e);
    (void)r.to_text();
    (void)r.to_json().dump();
  }
  spmd::set_default_runtime(nullptr);
  return 0;
}
