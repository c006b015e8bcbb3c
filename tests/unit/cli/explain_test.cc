// spmd run --explain (issue 18): each pmap's arguments, outputs and the
// collectives its devices ran, as tables on stderr and in the JSON report.
// Runs the real binary.

#include <catch2/catch.hpp>

#include <string>

#include "spmd/util/json.h"
#include "support/subprocess.h"
#include "support/temp_scenario.h"

using spmd::Json;
using spmd::testing::Subprocess;
using spmd::testing::write_temp_scenario;

namespace {

const char* kStep = R"(import jax, jax.numpy as jnp
from jax import lax
def step(w, x):
    g = lax.pmean(x * w, 'i')
    return w - 0.1 * g, lax.psum(jnp.sum(x), 'i')
w, s = jax.pmap(step, axis_name='i', in_axes=(None, 0), out_axes=(None, 0))(jnp.ones(3), jnp.arange(12.).reshape(4, 3))
)";

}  // namespace

TEST_CASE("cli::explain: the layout of every argument and output, and the collectives each device ran", "[cli]") {
  const std::string path = write_temp_scenario("cli-explain", "step.py", kStep);
  Subprocess p({SPMD_BIN_PATH, "run", path, "--devices", "4", "--explain"});
  REQUIRE(p.wait() == 0);
  REQUIRE(p.err() ==
          "explain: pmap at " + path + ":6:8 on 4 devices (i=4)\n"
          "  argument        global    in_axes  per device  how\n"
          "  argument 0 'w'  f32[3]    None     f32[3]      replicated: every device gets all of it\n"
          "  argument 1 'x'  f32[4,3]  0        f32[3]      split\n"
          "  output     per device  out_axes  returned  how\n"
          "  output[0]  f32[3]      None      f32[3]    one copy (equal on every device)\n"
          "  output[1]  f32[]       0         f32[4]    stacked\n"
          "  collective" + std::string(path.size() + 21, ' ') + "devices         times each\n"
          "  pmean over 'i' f32[3] at " + path + ":4:9  devices {0..3}  1\n"
          "  psum over 'i' f32[] at " + path + ":5:25   devices {0..3}  1\n"
          "spmd: ok: 1 pmap run on 4 virtual devices\n");

  Subprocess j({SPMD_BIN_PATH, "run", path, "--devices", "4", "--explain", "--format", "json"});
  REQUIRE(j.wait() == 0);
  Json report = Json::parse(j.out());
  const Json& run = report.find("explain")->as_array().at(0);
  REQUIRE(run.int_at("devices") == 4);
  REQUIRE(run.string_at("axes") == "i=4");
  const Json& x = run.find("arguments")->as_array().at(1);
  REQUIRE(x.string_at("name") == "argument 1 'x'");
  REQUIRE(x.string_at("shape") == "f32[4,3]");
  REQUIRE(x.int_at("in_axes", -1) == 0);
  REQUIRE(x.string_at("per_device") == "f32[3]");
  REQUIRE(run.find("arguments")->as_array().at(0).find("in_axes")->is_null());
  REQUIRE(run.find("outputs")->as_array().at(1).string_at("shape") == "f32[4]");
  const Json& c = run.find("collectives")->as_array().at(0);
  REQUIRE(c.string_at("collective") == "pmean over 'i' f32[3] at " + path + ":4:9");
  REQUIRE(c.find("devices")->as_array().size() == 4);
  REQUIRE(c.int_at("times") == 1);
}

TEST_CASE("cli::explain: a deadlocked run shows who entered which collective, and no outputs", "[cli]") {
  const std::string path = std::string(SPMD_SOURCE_DIR) + "/scenarios/deadlock/skip_psum_under_cond.py";
  Subprocess p({SPMD_BIN_PATH, "run", path, "--explain"});
  REQUIRE(p.wait() == 3);
  const std::string& err = p.err();
  // (Under ASan a fiber's unwinding may print a sanitizer notice first.)
  REQUIRE(err.find("explain: pmap at " + path + ":24:7 on 4 devices (i=4), ended with Deadlock\n") != std::string::npos);
  REQUIRE(err.find("  argument 0 'x'  f32[4]  0        f32[]       split\n") != std::string::npos);
  REQUIRE(err.find("  output") == std::string::npos);
  REQUIRE(err.find("psum over 'i' f32[] at " + path + ":16:16  devices {0, 1, 3}  1\n") != std::string::npos);
}
