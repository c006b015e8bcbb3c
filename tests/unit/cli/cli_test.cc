// The spmd command as a library: headers, verdicts, exit codes, JSON reports,
// the test runner and trace replay.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/scenario_header.h"
#include "cli/process_launcher.h"
#include "cli/scenario_runner.h"
#include "cli/test_command.h"
#include "spmd/error.h"
#include "spmd/trace/replay.h"
#include "support/temp_scenario.h"

using namespace spmd;
using namespace spmd::cli;

namespace {

// spmd test runs each scenario in a process of the real binary (this test
// binary is no spmd).
const bool kScenariosRunInSpmd = (set_spmd_executable(SPMD_BIN_PATH), true);

std::string write_temp(const std::string& name, const std::string& text) {
  return spmd::testing::write_temp_scenario("spmd_cli_test", name, text);
}

RunOutcome run_text(const std::string& name, const std::string& text, RunSettings s = {},
                    const std::string& input = "") {
  return spmd::testing::run_temp_scenario("spmd_cli_test", name, text, std::move(s), input);
}

const char* kSkip = R"(# spmd: devices=4
import jax
import jax.numpy as jnp
from jax import lax

def f(x):
    return lax.cond(lax.axis_index('i') == 1, lambda v: v, lambda v: lax.psum(v, 'i'), x)

print(jax.pmap(f, axis_name='i')(jnp.arange(4.0)))
)";

}  // namespace

TEST_CASE("cli::header: keys, expectations and errors", "[cli]") {
  ScenarioHeader h = parse_scenario_header(
      "#!/usr/bin/env python\n# spmd: devices=4 threads=2 seed=7 processes=3 expect=error:NameError expect-line=9 expect-message=did you mean\n"
      "# spmd: expect-stdout: a b\n# spmd: expect-stdout:\n\nimport jax\n# spmd: devices=99\n",
      "h.py");
  REQUIRE(h.devices == 4);
  REQUIRE(h.threads == 2);
  REQUIRE(h.seed == 7u);
  REQUIRE(h.processes == 3);
  REQUIRE(h.expect == "error:NameError");
  REQUIRE(h.expect_line == 9);
  REQUIRE(h.expect_message == std::vector<std::string>{"did you mean"});
  REQUIRE(h.expect_stdout == std::vector<std::string>{"a b", ""});
  auto bad = [](const std::string& text) {
    try {
      parse_scenario_header(text, "b.py");
    } catch (const InvalidArgument& e) {
      return e.report().message;
    }
    return std::string("no error");
  };
  REQUIRE(bad("# spmd: devices=zero\n") == "b.py:1: bad spmd header: devices=zero is not a number >= 1");
  REQUIRE(bad("\n# spmd: expect=hang\n") == "b.py:2: bad spmd header: expect=hang is not an outcome");
  REQUIRE(parse_scenario_header("# spmd: expect=exit:255\n", "b.py").expect == "exit:255");
  for (const char* status : {"exit:", "exit:0", "exit:256", "exit:+3", "exit:3x"}) {
    REQUIRE(bad(std::string("# spmd: expect=") + status + "\n") ==
            std::string("b.py:1: bad spmd header: expect=") + status + " is not an outcome");
  }
  REQUIRE(bad("# spmd: colour=blue\n") == "b.py:1: bad spmd header: unknown key 'colour'");
  REQUIRE(bad("# spmd: processes=0\n") == "b.py:1: bad spmd header: processes=0 is not a number >= 1");
}

TEST_CASE("cli::run: exit codes by verdict", "[cli]") {
  REQUIRE(exit_code_for_kind("Deadlock") == 3);
  REQUIRE(exit_code_for_kind("CollectiveMismatch") == 4);
  REQUIRE(exit_code_for_kind("SyntaxError") == 2);
  REQUIRE(exit_code_for_kind("NameError") == 1);
  REQUIRE(exit_code_for_kind("Interrupted") == 130);
  REQUIRE(status_for_kind("Interrupted") == "interrupted");
  REQUIRE(status_for_kind("UsageError") == "error");
  REQUIRE(status_for_kind("CollectiveMismatch") == "mismatch");
  REQUIRE(outcome_of_kind("TabError") == Outcome::kBadInput);
  REQUIRE(outcome_of_kind("BudgetExceeded") == Outcome::kError);
  REQUIRE(exit_code(Outcome::kBadInput) == 2);
  REQUIRE(verdict_word(Outcome::kBadInput) == "error");
  REQUIRE(run_text("ok.py", "print(1 + 1)\n").exit_code == 0);
  REQUIRE(run_text("ok.py", "print(1 + 1)\n").stdout_text == "2\n");
  RunOutcome dl = run_text("skip.py", kSkip);
  REQUIRE(dl.exit_code == 3);
  REQUIRE(dl.status == "deadlock");
  REQUIRE(dl.report->kind == "Deadlock");
  REQUIRE(dl.report->where.line == 7);
  REQUIRE(dl.report->source_line ==
          "    return lax.cond(lax.axis_index('i') == 1, lambda v: v, lambda v: lax.psum(v, 'i'), x)");
  RunOutcome syn = run_text("syntax.py", "def f(:\n    pass\n");
  REQUIRE(syn.exit_code == 2);
  REQUIRE(syn.report->kind == "SyntaxError");
  REQUIRE(syn.report->where.line == 1);
  RunOutcome missing = run_scenario(RunSettings{.path = "/nonexistent/x.py"}, std::cout, std::cerr, std::cin);
  REQUIRE(missing.exit_code == 2);
  REQUIRE(missing.report->kind == "UsageError");
}

TEST_CASE("cli::run: --devices overrides the header, the default is 8", "[cli]") {
  const char* prog = "import jax\nprint(jax.device_count())\n";
  REQUIRE(run_text("n.py", prog).stdout_text == "8\n");
  REQUIRE(run_text("n.py", std::string("# spmd: devices=3\n") + prog).stdout_text == "3\n");
  RunSettings s;
  s.devices = 5;
  REQUIRE(run_text("n.py", std::string("# spmd: devices=3\n") + prog, s).stdout_text == "5\n");
}

TEST_CASE("cli::run: the JSON report has status, error and per-device states", "[cli]") {
  RunOutcome o = run_text("skip.py", kSkip);
  Json j = o.to_json();
  REQUIRE(j.find("status")->as_string() == "deadlock");
  REQUIRE(j.find("exit_code")->as_int() == 3);
  REQUIRE(j.find("error_kind")->as_string() == "Deadlock");
  REQUIRE(j.find("where")->find("line")->as_int() == 7);
  const auto& devices = j.find("devices")->as_array();
  REQUIRE(devices.size() == 4);
  REQUIRE(devices[1].find("state")->as_string() == "finished");
  REQUIRE(devices[0].find("state")->as_string() == "waiting");
  REQUIRE(devices[0].find("detail")->as_string() == "psum over 'i' #0 f32[]");
  REQUIRE(devices[0].find("where")->find("line")->as_int() == 7);
  REQUIRE(!devices[0].find("recent_events")->as_array().empty());
  // and it parses back as JSON
  REQUIRE(Json::parse(j.dump(2)).find("status")->as_string() == "deadlock");
}

TEST_CASE("cli::run: a clean run reports every device finished", "[cli]") {
  RunOutcome o = run_text("ok2.py", R"(# spmd: devices=2
import jax
import jax.numpy as jnp
from jax import lax
print(jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(jnp.ones(2)))
)");
  REQUIRE(o.exit_code == 0);
  REQUIRE(o.stdout_text == "[2. 2.]\n");
  REQUIRE(o.pmap_runs == 1);
  REQUIRE(o.devices.size() == 2);
  REQUIRE(o.devices[1].state == "finished");
  REQUIRE(o.devices[1].collectives_done == 1);
}

TEST_CASE("cli::test: expectations pass and fail with reasons", "[cli]") {
  std::string good = write_temp("good.py", std::string("# spmd: expect=deadlock expect-line=7\n") + (kSkip + 18));
  TestResult r = test_scenario(good, RunSettings{});
  INFO((r.problems.empty() ? std::string() : r.problems[0]));
  REQUIRE(r.passed);
  std::string wrong = write_temp("wrong.py", "# spmd: expect=mismatch\nprint('hi')\n# spmd: expect=ok\n");
  TestResult w = test_scenario(wrong, RunSettings{});
  REQUIRE_FALSE(w.passed);
  REQUIRE(w.problems == std::vector<std::string>{"expected mismatch, got ok"});
  std::string no_expect = write_temp("none.py", "print('hi')\n");
  REQUIRE(test_scenario(no_expect, RunSettings{}).problems ==
          std::vector<std::string>{"no expectation: add a header line such as '# spmd: expect=ok'"});
  std::string out_diff = write_temp("out.py", "# spmd: expect=ok\n# spmd: expect-stdout: 3\nprint(1 + 1)\n");
  REQUIRE(test_scenario(out_diff, RunSettings{}).problems ==
          std::vector<std::string>{"stdout differs (paths relative to the scenario's directory):\n--- expected\n3\n"
                                   "--- got\n2\n"});
  std::string xml = junit_xml({r, w});
  REQUIRE(xml.find("tests=\"2\" failures=\"1\"") != std::string::npos);
  REQUIRE(xml.find("<failure message=\"expected mismatch, got ok\">") != std::string::npos);
  std::ostringstream log;
  REQUIRE(run_tests({good, wrong}, RunSettings{}, "", log) == 1);
  REQUIRE(log.str().find("1 passed, 1 failed") != std::string::npos);
  REQUIRE_THROWS_AS(collect_scenarios({"/nonexistent"}), InvalidArgument);
}

TEST_CASE("cli::test: expect-stdout and expect-message name files relative to the scenario, however it is given", "[cli]") {
  // Issue 33: a scenario printing its own file name passed only when given as the header's author gave it.
  const std::string path = write_temp("prints_its_path.py",
                                      "# spmd: expect=error:ValueError expect-message=prints_its_path.py:5\n"
                                      "# spmd: expect-stdout: prints_its_path.py\n"
                                      "import sys\n"
                                      "print(sys.argv[0])\n"
                                      "raise ValueError('no')\n");
  const TestResult absolute = test_scenario(path, RunSettings{});
  CHECK(absolute.problems.empty());
  CHECK(absolute.passed);
  const std::string relative = std::filesystem::relative(path).string();
  REQUIRE(relative != path);
  const TestResult given_relative = test_scenario(relative, RunSettings{});
  CHECK(given_relative.problems == std::vector<std::string>{});
  CHECK(given_relative.passed);
}

TEST_CASE("cli::test: a scenario's exit (threads joined, atexit handlers, sys.exit status) is judged too", "[cli]") {
  // Issue 35 for spmd test: what a scenario prints and does as it ends counts, as under spmd run.
  const std::string path = write_temp("ends.py",
                                      "# spmd: devices=2 expect=exit:4\n"
                                      "# spmd: expect-stdout: main\n# spmd: expect-stdout: thread\n"
                                      "# spmd: expect-stdout: atexit 2.0\n"
                                      "import atexit, sys, threading, time\nimport jax, jax.numpy as jnp\n"
                                      "atexit.register(lambda: print('atexit', jax.pmap(lambda x: jax.lax.psum(x, 'i'), "
                                      "axis_name='i')(jnp.ones(2))[0]))\n"
                                      "threading.Thread(target=lambda: (time.sleep(0.1), print('thread'))).start()\n"
                                      "print('main')\nsys.exit(4)\n");
  const TestResult t = test_scenario(path, RunSettings{});
  CHECK(t.problems == std::vector<std::string>{});
  CHECK(t.passed);
  CHECK(t.got == "exit:4");
}

TEST_CASE("cli::test: the JUnit XML replaces bytes that are not UTF-8 and characters XML cannot hold", "[cli]") {
  TestResult t;
  t.file = "bad\xff.py";
  t.problems = {"stdout differs: \xC3(\xED\xA0\x80)\x7F\r\xF0\x9F\x98\x80 \x0B"};
  const std::string xml = junit_xml({t});
  CHECK(xml.find("name=\"bad\xEF\xBF\xBD.py\"") != std::string::npos);
  // A lone lead byte, a surrogate's three bytes, DEL and CR kept, an emoji kept, vertical tab.
  CHECK(xml.find("stdout differs: \xEF\xBF\xBD(\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD)\x7F\r\xF0\x9F\x98\x80 \xEF\xBF\xBD") !=
        std::string::npos);
}

TEST_CASE("cli::test: requires= skips a scenario whose module cannot be imported, runs one that can", "[cli]") {
  std::string needs = write_temp("needs.py", "# spmd: requires=json,no_such_module_xyz expect=ok\nimport no_such_module_xyz\n");
  TestResult skipped = test_scenario(needs, RunSettings{});
  REQUIRE(skipped.passed);
  REQUIRE(skipped.skipped ==
          "needs no_such_module_xyz, which cannot be imported here: pip install it into a venv and run with the venv "
          "active (VIRTUAL_ENV)");
  // flax is not installed here: spmdsim's explanation of the missing library is "cannot be imported" too.
  std::string flax = write_temp("flax_needed.py", "# spmd: requires=flax expect=ok\nimport flax\n");
  REQUIRE(test_scenario(flax, RunSettings{}).skipped.rfind("needs flax,", 0) == 0);
  std::string present = write_temp("present.py", "# spmd: requires=json expect=ok\n# spmd: expect-stdout: 2\nprint(1 + 1)\n");
  TestResult ran = test_scenario(present, RunSettings{});
  REQUIRE(ran.skipped.empty());
  REQUIRE(ran.passed);
  std::ostringstream log;
  REQUIRE(run_tests({needs, present}, RunSettings{}, "", log) == 0);
  REQUIRE(log.str().find("SKIP " + needs + "  (needs no_such_module_xyz,") != std::string::npos);
  REQUIRE(log.str().find("1 passed, 0 failed, 1 skipped") != std::string::npos);
  REQUIRE(junit_xml({skipped, ran}).find("tests=\"2\" failures=\"0\" skipped=\"1\"") != std::string::npos);
  std::string empty_name = write_temp("empty_name.py", "# spmd: requires=optax,,flax expect=ok\n");
  REQUIRE(test_scenario(empty_name, RunSettings{}).problems.at(0).find("has an empty module name") != std::string::npos);
}

TEST_CASE("cli::replay: a trace recorded by spmd run replays to the same verdict", "[cli]") {
  RunSettings s;
  s.trace_path = std::filesystem::path(write_temp("skip.jsonl", "")).string();
  s.deterministic = true;
  RunOutcome o = run_text("skip.py", kSkip, s);
  REQUIRE(o.status == "deadlock");
  try {
    replay_trace_file(s.trace_path);
    FAIL("replay did not deadlock");
  } catch (const DeadlockError& e) {
    REQUIRE(e.report().message == o.report->message);
    REQUIRE(e.report().divergence.decision_summary == o.report->divergence.decision_summary);
  }
}

TEST_CASE("cli::run: the program's own arguments reach its sys.argv", "[cli]") {
  const std::string path = spmd::testing::write_temp_scenario(
      "spmd_cli_test", "args.py",
      "import sys, argparse\np = argparse.ArgumentParser()\np.add_argument('--lr', type=float, default=1.0)\n"
      "print(sys.argv[1:], p.parse_args().lr)\n");
  RunSettings s{.path = path};
  s.program_args = {"--lr", "0.1"};
  std::ostringstream out;
  std::istringstream in;
  RunOutcome o = run_scenario(s, out, std::cerr, in);
  CHECK(o.exit_code == 0);
  CHECK(out.str() == "['--lr', '0.1'] 0.1\n");
}

TEST_CASE("cli::test: each scenario is judged as if it ran alone", "[cli]") {
  // Issue 36, finding 10: scenarios shared one interpreter, so one's changes
  // (print options, math.pi, builtins, XLA_FLAGS, the working directory, a
  // daemon thread printing) reached the next; each passed alone.
  std::string dirty = write_temp("a_dirty.py", R"(# spmd: devices=2 expect=ok
import builtins, math, os, threading, time
import numpy as np
np.set_printoptions(precision=1)
math.pi = 3
builtins.print_twice = True
os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=2'
os.chdir('/')
def chatter():
    while True:
        print('daemon of a_dirty')
        time.sleep(0.001)
threading.Thread(target=chatter, daemon=True).start()
time.sleep(0.05)
)");
  std::string clean = write_temp("b_clean.py", R"(# spmd: expect=ok
# spmd: expect-stdout: 3.14159 3.141592653589793 False 8
import builtins, math, os, time
import numpy as np
import jax
time.sleep(0.05)
print(np.array([math.pi])[0].round(5), math.pi, hasattr(builtins, 'print_twice'), jax.device_count())
)");
  TestResult alone = test_scenario(clean, RunSettings{});
  CHECK(alone.problems.empty());
  std::ostringstream log;
  CHECK(run_tests({dirty, clean, clean}, RunSettings{}, "", log) == 0);
  INFO(log.str());
  CHECK(log.str().find("3 passed, 0 failed") != std::string::npos);
}
