#include "spmd/scenario/scenario.h"

#include <fstream>
#include <sstream>

#include "scenario/interpreter.h"
#include "scenario/parser.h"
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
  interp.run();
}

}  // namespace spmd::scenario
