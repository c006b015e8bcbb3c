// What spmd writes reaches its file or the run fails (issue 19, findings 14
// and 15): a trace, timeline, JUnit report or stdout on a full disk exits
// non-zero naming the file; --format json stays valid JSON whatever bytes
// the program printed. Runs the real binary.

#include <catch2/catch.hpp>

#include "support/subprocess.h"
#include "support/temp_scenario.h"
#include "spmd/util/json.h"

#ifndef SPMD_BIN_PATH
#error "SPMD_BIN_PATH (the spmd binary) must be defined by the build"
#endif

using spmd::testing::Subprocess;

namespace {

const char* kProgram = "# spmd: devices=2 expect=ok\nimport jax\nimport jax.numpy as jnp\nprint(jax.pmap(lambda x: x * 2)(jnp.arange(2)))\n";

std::string program_path() { return spmd::testing::write_temp_scenario("spmd_cli_outputs_test", "prog.py", kProgram); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cli::outputs: a trace, timeline or JUnit file that cannot be written fails the run", "[cli][outputs]") {
  const std::string prog = program_path();
  Subprocess trace({SPMD_BIN_PATH, "run", prog, "--trace", "/dev/full"});
  CHECK(trace.wait() == 1);
  CHECK(has(trace.err(), "error[OutputError]: cannot write the trace file '/dev/full': No space left on device"));
  Subprocess timeline({SPMD_BIN_PATH, "run", prog, "--timeline", "/dev/full"});
  CHECK(timeline.wait() == 1);
  CHECK(has(timeline.err(), "error[OutputError]: cannot write the timeline file '/dev/full': No space left on device"));
  Subprocess junit({SPMD_BIN_PATH, "test", prog, "--junit", "/dev/full"});
  CHECK(junit.wait() == 1);
  CHECK(has(junit.err(), "cannot write the JUnit file '/dev/full': No space left on device"));
  Subprocess missing_dir({SPMD_BIN_PATH, "test", prog, "--junit", "/nonexistent/dir/j.xml"});
  CHECK(missing_dir.wait() == 2);
  CHECK(has(missing_dir.err(), "cannot open the JUnit file '/nonexistent/dir/j.xml': No such file or directory"));
}

TEST_CASE("cli::outputs: a failed run keeps its verdict and says the trace was lost", "[cli][outputs]") {
  const std::string prog = spmd::testing::write_temp_scenario(
      "spmd_cli_outputs_test", "hang.py",
      "import jax, jax.numpy as jnp\nfrom jax import lax\n"
      "f = lambda x: lax.cond(lax.axis_index('i') == 0, lambda v: v, lambda v: lax.psum(v, 'i'), x)\n"
      "jax.pmap(f, axis_name='i')(jnp.arange(2.0))\n");
  Subprocess p({SPMD_BIN_PATH, "run", prog, "--devices", "2", "--trace", "/dev/full"});
  CHECK(p.wait() == 3);
  CHECK(has(p.err(), "spmd: cannot write the trace file '/dev/full': No space left on device"));
  CHECK(has(p.err(), "error[Deadlock]"));
}

TEST_CASE("cli::outputs: stdout on a full disk is a failed run", "[cli][outputs]") {
  for (const char* format : {"text", "json"}) {
    INFO(format);
    Subprocess p({"/bin/sh", "-c", std::string(SPMD_BIN_PATH) + " run " + program_path() + " --format " + format + " > /dev/full"});
    CHECK(p.wait() == 1);
    CHECK(has(p.err(), "spmd: could not write everything to stdout (a full disk, or a closed pipe?)"));
  }
}

TEST_CASE("cli::outputs: --format json is valid JSON whatever bytes the program wrote", "[cli][outputs]") {
  const std::string prog = spmd::testing::write_temp_scenario(
      "spmd_cli_outputs_test", "bytes.py",
      "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe raw\\n')\nprint('text \\u20ac')\n");
  Subprocess p({SPMD_BIN_PATH, "run", prog, "--format", "json"});
  CHECK(p.wait() == 0);
  spmd::Json doc = spmd::Json::parse(p.out(), "stdout", 0);
  CHECK(doc.find("stdout")->as_string() == "\xEF\xBF\xBD\xEF\xBF\xBD raw\ntext \xE2\x82\xAC\n");
}
