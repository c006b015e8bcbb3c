#pragma once
// Helpers for scenario tests: run a program and capture its output, or
// capture the error it raises.

#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "spmd/debug/debug_print.h"
#include "spmd/error.h"
#include "spmd/runtime/runtime.h"
#include "spmd/scenario/scenario.h"

namespace spmd::scenario::testing {

struct RunResult {
  std::string out;  ///< print() and jax.debug.print output
  std::string err;  ///< warnings
};

using Tweak = std::function<void(RuntimeOptions&)>;

/// Runs `source` (named "t.py") on `devices` virtual devices.
inline RunResult run(std::string_view source, int devices = 4, const Tweak& tweak = {}) {
  std::ostringstream out, err;
  std::mutex mu;
  RuntimeOptions ro;
  ro.devices = devices;
  ro.deterministic = true;
  ro.print_sink = [&](const DebugPrint& p) {
    std::lock_guard<std::mutex> lock(mu);
    out << p.line();
  };
  if (tweak) tweak(ro);
  Runtime rt(ro);
  auto m = parse_source(source, "t.py");
  InterpreterOptions io;
  io.out = &out;
  io.err = &err;
  io.runtime = &rt;
  run_module(*m, io);
  return {out.str(), err.str()};
}

/// Runs `source` and returns the error it raises (fails the test if none).
template <class E = Error>
Report run_error(std::string_view source, int devices = 4, std::string* out_text = nullptr, const Tweak& tweak = {}) {
  std::ostringstream out, err;
  RuntimeOptions ro;
  ro.devices = devices;
  ro.deterministic = true;
  ro.print_sink = [&](const DebugPrint& p) { out << p.line(); };
  if (tweak) tweak(ro);
  Runtime rt(ro);
  try {
    auto m = parse_source(source, "t.py");
    InterpreterOptions io;
    io.out = &out;
    io.err = &err;
    io.runtime = &rt;
    run_module(*m, io);
  } catch (const E& e) {
    if (out_text) *out_text = out.str();
    return e.report();
  }
  FAIL("expected an error, got output:\n" << out.str());
  return {};
}

/// The parse error of `source`.
inline Report parse_error(std::string_view source) {
  try {
    parse_source(source, "t.py");
  } catch (const Error& e) {
    return e.report();
  }
  FAIL("expected a parse error");
  return {};
}

}  // namespace spmd::scenario::testing
