// spmd/log.h: the level spec of --log-level and SPMD_LOG_LEVEL.

#include <catch2/catch.hpp>

#include "spmd/error.h"
#include "spmd/log.h"

namespace {

// Leaves logging off for the tests that follow.
struct LogsOff {
  ~LogsOff() { spmd::set_log_level("off"); }
};

std::string refusal(const std::string& spec) {
  try {
    spmd::set_log_level(spec);
  } catch (const spmd::Error& e) {
    CHECK(e.kind() == "UsageError");
    return e.report().message + " / " + e.report().hint;
  }
  return "accepted";
}

}  // namespace

TEST_CASE("log: a level for all, per subsystem, or both", "[log]") {
  LogsOff off;
  spmd::set_log_level("off");
  CHECK(spmd::log_levels() == "runtime=off,rendezvous=off,sim=off,cuda=off,dist=off,python=off,diagnose=off");
  spmd::set_log_level("rendezvous=debug,sim=trace");
  CHECK(spmd::log_levels() == "runtime=off,rendezvous=debug,sim=trace,cuda=off,dist=off,python=off,diagnose=off");
  spmd::set_log_level("info,dist=warn");
  CHECK(spmd::log_levels() == "runtime=info,rendezvous=info,sim=info,cuda=info,dist=warning,python=info,diagnose=info");
}

TEST_CASE("log: an unknown level or subsystem is a usage error naming the known ones", "[log]") {
  LogsOff off;
  CHECK(refusal("loud") == "unknown log level 'loud' in 'loud' / the levels are off, error, warn, info, debug, trace");
  CHECK(refusal("rendezvous=debug,fibers=trace") ==
        "unknown log subsystem 'fibers' in 'rendezvous=debug,fibers=trace' / the subsystems are runtime, rendezvous, "
        "sim, cuda, dist, python, diagnose");
  CHECK(refusal("sim=") == "unknown log level '' in 'sim=' / the levels are off, error, warn, info, debug, trace");
}
