#pragma once
// Helpers for front-end tests: run a program on the embedded CPython with
// spmdsim's jax package and capture its output, or capture the error it
// raises.

#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "python/embed/python_runner.h"
#include "spmd/debug/debug_print.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/runtime/runtime.h"

namespace spmd::python::testing {

struct RunResult {
  std::string out;  ///< print() and jax.debug.print output
  std::string err;  ///< warnings
};

using Tweak = std::function<void(RuntimeOptions&)>;

namespace detail {

// Runs `source` as "t.py" on `devices` virtual devices; the Runtime is made
// when the program first asks for devices, as the CLI does.
inline void run_into(std::string_view source, int devices, const Tweak& tweak, std::ostringstream& out,
                     std::ostringstream& err) {
  std::mutex mu;
  RuntimeOptions ro;
  ro.devices = devices;
  ro.deterministic = true;
  ro.print_sink = [&](const DebugPrint& p) {
    std::lock_guard<std::mutex> lock(mu);
    out << p.line();
  };
  if (tweak) tweak(ro);
  std::optional<Runtime> rt;
  struct Reset {
    ~Reset() { set_default_runtime(nullptr); }
  } reset;
  RunOptions po;
  po.out = &out;
  po.err = &err;
  po.runtime = [&](std::optional<int>) -> Runtime& {
    if (!rt) {
      rt.emplace(ro);
      set_default_runtime(&*rt);
    }
    return *rt;
  };
  run_program("t.py", std::string(source), po);
}

}  // namespace detail

/// Runs `source` (named "t.py") on `devices` virtual devices.
inline RunResult run(std::string_view source, int devices = 4, const Tweak& tweak = {}) {
  std::ostringstream out, err;
  detail::run_into(source, devices, tweak, out, err);
  return {out.str(), err.str()};
}

/// Runs `source` and returns the error it raises (fails the test if none).
template <class E = Error>
Report run_error(std::string_view source, int devices = 4, std::string* out_text = nullptr, const Tweak& tweak = {}) {
  std::ostringstream out, err;
  try {
    detail::run_into(source, devices, tweak, out, err);
  } catch (const E& e) {
    if (out_text) *out_text = out.str();
    return e.report();
  }
  FAIL("expected an error, got output:\n" << out.str());
  return {};
}

}  // namespace spmd::python::testing
