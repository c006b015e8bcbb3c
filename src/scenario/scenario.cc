#include "spmd/scenario/scenario.h"

#include <fstream>
#include <sstream>

#include "scenario/interpreter.h"
#include "scenario/parser.h"
#include "runtime/host_program.h"
#include "spmd/error.h"

namespace spmd::scenario {

std::shared_ptr<const Module> parse_source(std::string_view source, const std::string& path) {
  return parse_module(std::make_shared<const SourceText>(path, source));
}

std::shared_ptr<const Module> parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Report r = make_report("FileNotFoundError", "cannot open scenario file '" + path + "'",
                           "check the path; scenarios are Python files such as scenarios/psum.py");
    throw InvalidArgument(std::move(r));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_source(ss.str(), path);
}

void run_module(const Module& m, const InterpreterOptions& options) {
  Interpreter interp(m, options);
  // The interpreter counts steps and sets locations on the host as it does
  // on devices; this scope turns them into the host budget and interrupt checks.
  detail::HostProgramScope host(options.runtime, options.max_host_steps, options.max_host_seconds);
  interp.run();
}

}  // namespace spmd::scenario
