// What spmd writes reaches its file or the run fails (issue 19, findings 14
// and 15): a trace, timeline, JUnit report or stdout on a full disk exits
// non-zero naming the file; --format json stays valid JSON whatever bytes
// the program printed. Runs the real binary.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

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

TEST_CASE("cli::outputs: an output that is an input or another output is a usage error", "[cli][outputs]") {
  // Issue 36, finding 16: --trace X --timeline X kept only the timeline, and
  // --trace prog.py overwrote the program.
  const std::string prog = program_path();
  const std::string dir = std::filesystem::path(prog).parent_path().string();
  const std::string out = dir + "/same.out";
  std::filesystem::remove(out);
  Subprocess same({SPMD_BIN_PATH, "run", prog, "--trace", out, "--timeline", out});
  CHECK(same.wait() == 2);
  CHECK(has(same.err(), "spmd: --timeline: '" + out + "' is also the file of --trace: one would overwrite the other "
                        "(hint: give each its own file)"));
  CHECK_FALSE(std::filesystem::exists(out));
  // Through another spelling of the program's path, too.
  const std::string respelled = dir + "/../" + std::filesystem::path(dir).filename().string() + "/prog.py";
  Subprocess program({SPMD_BIN_PATH, "run", prog, "--trace", respelled});
  CHECK(program.wait() == 2);
  CHECK(has(program.err(), "spmd: --trace: '" + respelled + "' is the program: writing it would overwrite it"));
  std::ifstream still(prog);
  CHECK(std::string(std::istreambuf_iterator<char>(still), {}) == kProgram);
  Subprocess junit({SPMD_BIN_PATH, "test", prog, "--junit", prog});
  CHECK(junit.wait() == 2);
  CHECK(has(junit.err(), "spmd: --junit: '" + prog + "' is a scenario given to spmd test"));
  const std::string log = spmd::testing::write_temp_scenario("spmd_cli_outputs_test", "nccl.log", "host:1:1 [0] NCCL INFO x\n");
  Subprocess diagnose({SPMD_BIN_PATH, "diagnose", log, "--timeline", log});
  CHECK(diagnose.wait() == 2);
  CHECK(has(diagnose.err(), "spmd: --timeline: '" + log + "' is an input of spmd diagnose"));
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

TEST_CASE("cli::outputs: --format json is alone on stdout when the program writes to descriptor 1", "[cli][outputs]") {
  // Issue 36, finding 14: these lines came before the document, which then did not parse.
  const std::string prog = spmd::testing::write_temp_scenario("spmd_cli_outputs_test", "fd1.py", R"(import os, subprocess, sys
print('via print')
os.write(1, b'via os.write\n')
sys.__stdout__.write('via __stdout__\n')
subprocess.run(['/bin/echo', 'via subprocess'])
)");
  Subprocess p({SPMD_BIN_PATH, "run", prog, "--format", "json"});
  CHECK(p.wait() == 0);
  spmd::Json doc = spmd::Json::parse(p.out(), "stdout", 0);
  CHECK(doc.find("stdout")->as_string() == "via print\n");
  CHECK(p.err() == "via os.write\nvia __stdout__\nvia subprocess\n");
}

TEST_CASE("cli::outputs: the JUnit file stays well-formed XML whatever the program printed", "[cli][outputs]") {
  // Issue 36, finding 15: U+FFFE in a failure's stdout diff was written raw.
  // XML 1.0 cannot hold it, nor U+FFFF, controls other than tab, newline and
  // return, or bytes that are not UTF-8: each becomes U+FFFD; é stays é.
  const std::string prog = spmd::testing::write_temp_scenario(
      "spmd_cli_outputs_test", "odd_text.py",
      "# spmd: expect=ok\n# spmd: expect-stdout: x\nimport sys\n"
      "sys.stdout.write('a\\ufffe b\\uffff c\\x01 d\\u00e9 e<&>\\n')\n");
  const std::string xml_path = prog + ".xml";
  Subprocess p({SPMD_BIN_PATH, "test", prog, "--junit", xml_path});
  CHECK(p.wait() == 1);
  std::ifstream in(xml_path, std::ios::binary);
  const std::string xml(std::istreambuf_iterator<char>(in), {});
  INFO(xml);
  const std::string replacement = "\xEF\xBF\xBD";
  CHECK(has(xml, "a" + replacement + " b" + replacement + " c" + replacement + " d\xC3\xA9 e&lt;&amp;&gt;"));
  CHECK_FALSE(has(xml, "\xEF\xBF\xBE"));
  CHECK_FALSE(has(xml, "\xEF\xBF\xBF"));
  CHECK_FALSE(has(xml, "\x01"));
}

TEST_CASE("cli::outputs: the program's sys.stdout and sys.stderr are full io streams", "[cli][cpython]") {
  // Issue 36, finding 19: reconfigure, fileno (faulthandler.enable), writelines, closed, seekable, newlines,
  // readable and tell were missing; CPython's stderr replaces a lone surrogate, stdout follows the locale.
  const std::string path = spmd::testing::write_temp_scenario("cli-outputs", "streams.py", R"(import io, sys, faulthandler
print(isinstance(sys.stdout, io.TextIOBase), sys.stdout.encoding, sys.stdout.errors, sys.stderr.errors, sys.stdout.name)
sys.stdout.writelines(['a', 'b\n'])
print(sys.stdout.closed, sys.stdout.seekable(), sys.stdout.readable(), sys.stdout.newlines, sys.stdout.writable())
sys.stdout.reconfigure(line_buffering=True)
print(sys.stdout.line_buffering, sys.stdout.fileno(), sys.stderr.fileno())
faulthandler.enable()
print(faulthandler.is_enabled())
sys.stdout.buffer.write(b'bytes\n')
sys.stderr.write('surrogate \udcff\n')
try:
    sys.stdout.tell()
except io.UnsupportedOperation as e:
    print('UnsupportedOperation')
try:
    print('lone \udcff')
except UnicodeEncodeError as e:
    print('UnicodeEncodeError', e.reason)
)");
  // stdout's error handler is the one CPython picks from the environment:
  // strict where PYTHONIOENCODING says so, surrogateescape under the C.UTF-8
  // locale (a lone surrogate prints as its byte), as python3 does.
  Subprocess p({"/usr/bin/env", "PYTHONIOENCODING=utf-8:strict", SPMD_BIN_PATH, "run", path});
  const int code = p.wait();
  INFO("stderr:\n" << p.err());
  REQUIRE(code == 0);
  REQUIRE(p.out() ==
          "True utf-8 strict backslashreplace <stdout>\nab\nFalse False False None True\nTrue 1 2\nTrue\nbytes\n"
          "UnsupportedOperation\nUnicodeEncodeError surrogates not allowed\n");
  REQUIRE(p.err().find("surrogate \\udcff\n") != std::string::npos);
  Subprocess c({"/usr/bin/env", "-u", "PYTHONIOENCODING", "LC_ALL=C.UTF-8", SPMD_BIN_PATH, "run", path});
  REQUIRE(c.wait() == 0);
  CHECK(c.out() ==
        "True utf-8 surrogateescape backslashreplace <stdout>\nab\nFalse False False None True\nTrue 1 2\nTrue\n"
        "bytes\nUnsupportedOperation\nlone \xff\n");
}

TEST_CASE("cli::outputs: a long per-leaf table is cut in the terminal and whole under --explain", "[cli][outputs]") {
  // Issue 33: the report of inconsistent mapped sizes over a pytree stays short; --explain has every leaf.
  const std::string prog = spmd::testing::write_temp_scenario(
      "spmd_cli_outputs_test", "sizes.py",
      "import jax\nimport jax.numpy as jnp\nparams = {f'w{i:02}': jnp.ones((8, 3)) for i in range(20)}\n"
      "jax.pmap(lambda p, b: b)(params, jnp.ones((7,)))\n");
  Subprocess cut({SPMD_BIN_PATH, "run", prog});
  CHECK(cut.wait() == 1);
  CHECK(has(cut.err(), "error[InputSplitError]: pmap: got inconsistent sizes for array axes to be mapped: argument b "
                       "has size 7 along axis 0, where 20 others have size 8\n"));
  CHECK(has(cut.err(), "  * most axes (20 of them) had size 8, e.g. axis 0 of argument p['w00'] of type float32[8,3];\n"
                       "    also p['w01'], p['w02'], p['w03'] and 16 more\n"
                       "  * one axis had size 7: axis 0 of argument b of type float32[7]\n"));
  CHECK(has(cut.err(), "    ... and 13 more rows (all of them with --explain, or in --format json)\n"));
  CHECK_FALSE(has(cut.err(), "'p['w08']'"));
  Subprocess whole({SPMD_BIN_PATH, "run", prog, "--explain"});
  CHECK(whole.wait() == 1);
  CHECK(has(whole.err(), "'p['w19']'"));
  CHECK_FALSE(has(whole.err(), "more rows"));
}
