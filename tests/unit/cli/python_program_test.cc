// Python programs through `spmd run`, in-process (the embedded CPython):
// tracing (once per signature, jaxpr text), JAX's errors at the user's
// expression, Python exceptions and syntax errors as reports, and
// disable_jit per device.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>

#include "cli/scenario_runner.h"
#include "support/temp_scenario.h"

using namespace spmd;
using namespace spmd::cli;

namespace {

RunOutcome run_python(const std::string& name, const std::string& text, RunSettings s = {}) {
  return spmd::testing::run_temp_scenario("spmd_cpython_test", name, text, std::move(s));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cpython: pmap traces once per signature, make_jaxpr prints JAX's text", "[cli][cpython]") {
  RunOutcome o = run_python("trace_once.py", R"(import jax
import jax.numpy as jnp
from jax import lax
traces = []
def f(x):
    traces.append(x.shape)
    return lax.psum(x * 2.0, 'i')
g = jax.pmap(f, axis_name='i')
print(g(jnp.arange(4.0)))
print(g(jnp.ones(4)))
print(g(jnp.ones((4, 2)))[0])
print(traces)
print(jax.make_jaxpr(f, axis_env=[('i', 4)])(jnp.ones(3)))
)",
                            RunSettings{.devices = 4});
  REQUIRE(o.exit_code == 0);
  REQUIRE(o.stdout_text ==
          "[12. 12. 12. 12.]\n"
          "[8. 8. 8. 8.]\n"
          "[8. 8.]\n"
          "[(), (2,)]\n"
          "{ lambda ; a:f32[3]. let\n"
          "    b:f32[3] = mul a 2.0:f32[]\n"
          "    c:f32[3] = psum[axes=('i',)] b\n"
          "  in (c,) }\n");
  REQUIRE(o.pmap_runs == 3);
}

TEST_CASE("cpython: a Python `if` on a traced value is JAX's error at the expression", "[cli][cpython]") {
  RunOutcome o = run_python("python_if.py", R"(import jax
import jax.numpy as jnp

def f(x):
    if x > 0:
        return x
    return -x

jax.pmap(f)(jnp.arange(8.0))
)");
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "TracerBoolConversionError");
  REQUIRE(o.report->where.line == 5);
  REQUIRE(o.report->where.column == 8);
  REQUIRE(contains(o.report->message, "Attempted boolean conversion of traced array with shape bool[]."));
  REQUIRE(contains(o.report->message, "the argument x"));
  REQUIRE(contains(o.report->hint, "lax.cond"));
}

TEST_CASE("cpython: a Python exception reports its class, line and a traceback of the user's frames", "[cli][cpython]") {
  RunOutcome o = run_python("zero_division.py", R"(import jax.numpy as jnp

def ratio(a, b):
    return a / b

x = jnp.ones(3)
print(ratio(1, 0))
)");
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "ZeroDivisionError");
  REQUIRE(o.report->message == "division by zero");
  REQUIRE(o.report->where.line == 4);
  REQUIRE(o.report->where.column == 12);
  REQUIRE(o.report->source_line == "    return a / b");
  REQUIRE(o.report->details.front() == "Traceback (most recent call last):");
  REQUIRE(o.report->details.back() == "ZeroDivisionError: division by zero");
  for (const std::string& line : o.report->details) REQUIRE_FALSE(contains(line, "src/python/jax"));
}

TEST_CASE("cpython: a syntax error exits 2 with file, line and column", "[cli][cpython]") {
  RunOutcome o = run_python("syntax.py", "import jax\nx = (1,\ny = 2\n");
  REQUIRE(o.exit_code == 2);
  REQUIRE(o.report->kind == "SyntaxError");
  REQUIRE(o.report->where.line == 2);
  REQUIRE(o.report->where.column == 5);
  REQUIRE(o.report->message == "'(' was never closed");
}

TEST_CASE("cpython: a missing import names the line to add", "[cli][cpython]") {
  RunOutcome o = run_python("no_lax.py", "import jax\nprint(lax.psum)\n");
  REQUIRE(o.report->kind == "NameError");
  REQUIRE(o.report->hint == "add `from jax import lax` at the top of the program");
}

TEST_CASE("cpython: under disable_jit each device runs Python, a skipped psum is still a deadlock", "[cli][cpython]") {
  RunOutcome o = run_python("eager_deadlock.py", R"(import jax
import jax.numpy as jnp
from jax import lax

def f(x):
    print("device value", float(x))
    if float(x) == 1.0:
        return x
    return lax.psum(x, 'i')

with jax.disable_jit():
    jax.pmap(f, axis_name='i')(jnp.arange(3.0))
)",
                            RunSettings{.devices = 3});
  REQUIRE(o.exit_code == 3);
  REQUIRE(o.report->kind == "Deadlock");
  REQUIRE(o.report->where.line == 9);
  REQUIRE(o.stdout_text == "device value 0.0\ndevice value 1.0\ndevice value 2.0\n");
  REQUIRE(o.devices.size() == 3);
  REQUIRE(o.devices[1].state == "finished");
  REQUIRE(o.devices[0].state == "waiting");
}

TEST_CASE("cpython: a Python exception on one device under disable_jit is that device's error", "[cli][cpython]") {
  RunOutcome o = run_python("eager_raise.py", R"(import jax
import jax.numpy as jnp
from jax import lax

def f(x):
    if float(x) == 2.0:
        raise ValueError("bad shard")
    return lax.psum(x, 'i')

with jax.disable_jit():
    jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)",
                            RunSettings{.devices = 4});
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "ValueError");
  REQUIRE(o.report->message == "bad shard");
  REQUIRE(o.report->device == 2);
  REQUIRE(o.report->where.line == 7);
}

TEST_CASE("cpython: the program's XLA_FLAGS device count is honoured, --devices wins and says so", "[cli][cpython]") {
  const char* program = R"(import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"
import jax
import jax.numpy as jnp
print(jax.device_count(), jax.pmap(lambda x: x + 1)(jnp.zeros(jax.device_count())))
)";
  RunOutcome own = run_python("xla_flags.py", program);
  REQUIRE(own.exit_code == 0);
  REQUIRE(own.stdout_text == "3 [1. 1. 1.]\n");
  REQUIRE(own.device_count == 3);
  RunOutcome forced = run_python("xla_flags_forced.py", program, RunSettings{.devices = 2});
  REQUIRE(forced.stdout_text == "2 [1. 1.]\n");
  RunOutcome late = run_python("late_config.py", R"(import jax
print(jax.device_count())
jax.config.update("jax_num_cpu_devices", 4)
)");
  REQUIRE(late.report->kind == "RuntimeError");
  REQUIRE(late.report->where.line == 3);
}

TEST_CASE("cpython: a JAX library spmdsim does not provide is named, with what to do", "[cli][cpython]") {
  RunOutcome o = run_python("uses_flax.py", "import flax.linen as nn\nimport jax\n");
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "ModuleNotFoundError");
  REQUIRE(o.report->message ==
          "No module named 'flax': spmdsim provides jax itself, not flax (a neural-network library over JAX)");
  REQUIRE(o.report->where.line == 1);
  REQUIRE(contains(o.report->hint, "pip install flax into a virtual environment"));
}

TEST_CASE("cpython: a module of JAX spmdsim lacks is named with what spmdsim provides, and find_spec probes get None", "[cli][cpython]") {
  // Issue 36, finding 25: was a bare "No module named 'jax.lax.linalg'".
  RunOutcome o = run_python("uses_linalg.py", "import importlib.util\n"
                                              "print(importlib.util.find_spec('jax.lax.linalg'), "
                                              "importlib.util.find_spec('flax'))\n"
                                              "from jax.experimental import mesh_utils, multihost_utils, pjit\n"
                                              "import jax.profiler, jax.example_libraries.optimizers\n"
                                              "from jax.experimental import jax2tf\n");
  REQUIRE(o.stdout_text == "None None\n");
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "ModuleNotFoundError");
  REQUIRE(o.report->message == "No module named 'jax.experimental.jax2tf': spmdsim's jax does not provide it");
  REQUIRE(o.report->where.line == 5);
  REQUIRE(contains(o.report->hint, "mesh_utils, multihost_utils, pjit, jax.profiler"));
  o = run_python("uses_linalg.py", "import jax\nimport jax.lax.linalg\n");
  REQUIRE(o.report->message == "No module named 'jax.lax.linalg': spmdsim's jax does not provide it");
  REQUIRE(o.report->where.line == 2);
}

TEST_CASE("cpython: a pmapped method binds self, static as JAX's static_broadcasted_argnums=0", "[cli][cpython]") {
  RunOutcome o = run_python("method.py", R"(from functools import partial
import jax
import jax.numpy as jnp
from jax import lax

class Model:
    def __init__(self, scale):
        self.scale = scale

    @partial(jax.pmap, axis_name='i', static_broadcasted_argnums=0)
    def step(self, x):
        return lax.psum(x * self.scale, 'i')

print(Model(3.0).step(jnp.arange(2.0)))
)",
                            RunSettings{.devices = 2});
  REQUIRE(o.exit_code == 0);
  REQUIRE(o.stdout_text == "[3. 3.]\n");
}

TEST_CASE("cpython: a program ends as python3 ends it: threads joined, atexit run, files flushed, sys.exit's status",
          "[cli][cpython][exit]") {
  const std::string out_file = "/tmp/spmd_exit_test_" + std::to_string(::getpid()) + ".txt";
  RunOutcome o = run_python("program_exit.py", R"(import atexit, sys, threading, time
import jax, jax.numpy as jnp
f = open(')" + out_file + R"(', 'w')
f.write('result 42\n')
atexit.register(lambda: print('atexit', jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')(jnp.ones(4))[0]))
def work():
    time.sleep(0.1)
    print('thread done')
threading.Thread(target=work).start()
print('main done')
sys.exit(2**70)
)",
                            RunSettings{.devices = 4});
  REQUIRE(o.stdout_text == "main done\nthread done\natexit 4.0\n");
  REQUIRE(o.status == "exit");
  REQUIRE(o.exit_code == 255);  // CPython: out of a C long's range is -1
  REQUIRE(o.pmap_runs == 1);
  std::ifstream in(out_file);
  std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(written == "result 42\n");
  std::remove(out_file.c_str());
}

TEST_CASE("cpython: --max-seconds covers the program's exit: a thread it joins, an atexit handler", "[cli][cpython][exit]") {
  // The budget covers the program's exit too (issue 35): a non-daemon thread that never ends, an endless atexit.
  RunOutcome joined = run_python("never_joins.py",
                                 "import threading, time\ndef work():\n    while True:\n        time.sleep(0.01)\n"
                                 "threading.Thread(target=work).start()\nprint('main done')\n",
                                 RunSettings{.max_seconds = 0.5});
  REQUIRE(joined.stdout_text == "main done\n");
  REQUIRE(joined.report->kind == "BudgetExceeded");
  REQUIRE(joined.report->where.line == 4);
  // (Threads are numbered per interpreter, and this one may have run other programs.)
  REQUIRE(std::regex_search(joined.report->details.at(0),
                            std::regex("^the program's end was waiting for the non-daemon thread 'Thread-\\d+ \\(work\\)' "
                                       "at .*never_joins\\.py:4 ")));
  RunOutcome at_exit = run_python("endless_atexit.py", "import atexit, time\n@atexit.register\ndef save():\n"
                                                       "    while True:\n        time.sleep(0.01)\n",
                                  RunSettings{.max_seconds = 0.5});
  REQUIRE(at_exit.report->kind == "BudgetExceeded");
  REQUIRE(at_exit.report->where.line == 5);
}

TEST_CASE("cpython: --max-seconds stops a blocking call and a raised KeyboardInterrupt exits 130", "[cli][cpython][exit]") {
  RunOutcome o = run_python("sleeps.py", "import time\ntime.sleep(100)\n", RunSettings{.max_seconds = 0.5});
  REQUIRE(o.report->kind == "BudgetExceeded");
  REQUIRE(o.report->where.line == 2);
  RunOutcome k = run_python("interrupts.py", "raise KeyboardInterrupt\n");
  REQUIRE(k.exit_code == 130);
}

TEST_CASE("cpython: an exception whose __str__ raises, or whose text holds a lone surrogate, is reported",
          "[cli][cpython]") {
  // Issue 36, findings 3 and 5: both aborted the run (pybind11's
  // error_already_set, UnicodeEncodeError). CPython prints
  // "E: <exception str() failed>" and writes a surrogate as \udcff.
  const std::string bad_str = "class E(Exception):\n    def __str__(self):\n        raise ValueError('no')\n";
  for (const std::string where : {"raise E()\n", "import jax, jax.numpy as jnp\n"
                                                 "def f(x):\n    raise E()\njax.pmap(f)(jnp.ones(2))\n"}) {
    INFO(where);
    RunOutcome o = run_python("str_fails.py", bad_str + where, RunSettings{.devices = 2});
    REQUIRE(o.report);
    CHECK(o.exit_code == 1);
    CHECK(o.report->kind == "E");
    CHECK(o.report->message == "<exception str() failed>");
    CHECK(o.report->where.line >= 4);
    REQUIRE_FALSE(o.report->details.empty());
    CHECK(o.report->details.back() == "E: <exception str() failed>");
  }
  RunOutcome s = run_python("surrogate.py", "import os\nraise ValueError(os.fsdecode(b'bad\\xff.txt'))\n");
  REQUIRE(s.report);
  CHECK(s.exit_code == 1);
  CHECK(s.report->kind == "ValueError");
  CHECK(s.report->message == "bad\\udcff.txt");
  CHECK(s.report->where.line == 2);
  CHECK(s.to_json().dump().find("bad\\\\udcff.txt") != std::string::npos);
}

TEST_CASE("cpython: a ppermute pair that is not two integer device indices is an error", "[cli][cpython]") {
  // Issue 36, finding 13: perm=[(0.5, 1)] acted as (0, 1). Real JAX 0.8.1
  // fails too ("list indices must be integers or slices, not float").
  RunOutcome f = run_python("perm_float.py", "import jax, jax.numpy as jnp\n"
                                             "g = lambda x: jax.lax.ppermute(x, 'i', [(0.5, 1), (1, 0)])\n"
                                             "jax.pmap(g, axis_name='i')(jnp.arange(2.0))\n",
                            RunSettings{.devices = 2});
  REQUIRE(f.report);
  CHECK(f.report->kind == "TypeError");
  CHECK(f.report->message == "ppermute perm entries must be integer device indices, got 0.5 (float) in the pair "
                             "(0.5, 1) of perm=[(0.5, 1), (1, 0)]");
  CHECK(f.report->where.line == 2);
  RunOutcome t = run_python("perm_triple.py", "import jax, jax.numpy as jnp\n"
                                              "jax.pmap(lambda x: jax.lax.ppermute(x, 'i', [(0, 1, 2)]), "
                                              "axis_name='i')(jnp.arange(2.0))\n",
                            RunSettings{.devices = 2});
  REQUIRE(t.report);
  CHECK(t.report->kind == "ValueError");
  CHECK(t.report->message == "ppermute perm entries must be (source, destination) pairs, got (0, 1, 2) in "
                             "perm=[(0, 1, 2)]");
}

TEST_CASE("cpython: sys.exit of a non-int object exits 1 and names the object", "[cli][cpython][exit]") {
  // Issue 36, finding 17: sys.exit([1, 2]) was reported as sys.exit(1).
  // python3 prints the object and exits 1.
  RunOutcome o = run_python("exit_list.py", "import sys\nprint('out')\nsys.exit([1, 2])\n");
  CHECK(o.stdout_text == "out\n");
  CHECK(o.status == "exit");
  CHECK(o.exit_code == 1);
  CHECK(o.summary() == "exit 1: the program ended with sys.exit([1, 2]) after 0 pmap runs");
}

TEST_CASE("cpython: a daemon thread's pmap ends with its program, and the next program runs", "[cli][cpython][exit]") {
  // Issue 36, finding 1: the Runtime went away under a daemon thread still in
  // a pmap (a crash in a third of the runs). The thread's run is stopped and
  // the thread never comes back, as CPython ends daemon threads at exit; one
  // that runs Python gets SystemExit, so nothing of it reaches the next program.
  for (int i = 0; i < 3; ++i) {
    RunOutcome o = run_python("daemon_pmap.py", R"(import threading, time, jax, jax.numpy as jnp
f = jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')
started = threading.Event()
def loop():
    x = jnp.ones((jax.device_count(), 1000))
    while True:
        f(x)
        started.set()
def chatter():
    while True:
        print("daemon of the first program")
        time.sleep(0.001)
threading.Thread(target=loop, daemon=True).start()
started.wait(10)
threading.Thread(target=chatter, daemon=True).start()
time.sleep(0.01)
print("main done")
)",
                              RunSettings{.devices = 4});
    REQUIRE(o.exit_code == 0);
    CHECK(o.status == "ok");
    CHECK(o.stdout_text.rfind("main done\n") != std::string::npos);
    RunOutcome next = run_python("after_daemon.py", "import jax, jax.numpy as jnp\n"
                                                    "print(jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')"
                                                    "(jnp.arange(4.0)))\n",
                                 RunSettings{.devices = 4});
    CHECK(next.status == "ok");
    CHECK(next.stdout_text == "[6. 6. 6. 6.]\n");
    CHECK(next.pmap_runs == 1);
  }
}

TEST_CASE("cpython: a Python signal handler runs during a long pmap", "[cli][cpython][signals]") {
  // Issue 36, finding 8: handlers waited for the device run to end.
  RunOutcome o = run_python("alarm.py", R"(import signal, jax, jax.numpy as jnp
def on_alarm(signum, frame):
    raise TimeoutError("took too long")
signal.signal(signal.SIGALRM, on_alarm)
f = jax.pmap(lambda x: jax.lax.fori_loop(0, 10**9, lambda i, c: c + 1.0, x))
signal.setitimer(signal.ITIMER_REAL, 0.2)
try:
    f(jnp.zeros(4))
finally:
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
)",
                            RunSettings{.devices = 4});
  REQUIRE(o.report);
  CHECK(o.report->kind == "TimeoutError");
  CHECK(o.report->message == "took too long");
  CHECK(o.report->where.line == 3);
}
