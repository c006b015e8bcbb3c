// Faults inside scenario programs, through `spmd run` in-process: each ends
// with a clear report (kind, line, every device's state) and its exit code.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/scenario_runner.h"
#include "spmd/error.h"
#include "spmd/runtime/runtime.h"
#include "support/temp_scenario.h"

using namespace spmd;
using namespace spmd::cli;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  return spmd::testing::write_temp_scenario("spmd_faults_test", name, text);
}

RunOutcome run_text(const std::string& name, const std::string& text, RunSettings s = {},
                    const std::string& input = "") {
  return spmd::testing::run_temp_scenario("spmd_faults_test", name, text, std::move(s), input);
}

const DeviceStatus& status_of(const RunOutcome& o, int device) {
  for (const auto& d : o.devices) {
    if (d.device == device) return d;
  }
  throw std::runtime_error("no status for device " + std::to_string(device));
}

int line_of(const DeviceStatus& s) { return s.loc.valid() ? static_cast<int>(s.loc.line) : 0; }

// Device 2 loops forever without collectives (line 9); the others wait at the psum (line 11).
const char* kDeviceLoops = R"(# spmd: devices=4
import jax
import jax.numpy as jnp
from jax import lax

def spin(x):
    def body(c):
        return c + 1
    return lax.while_loop(lambda c: c >= 0, body, x)

def f(x):
    y = lax.cond(lax.axis_index('i') == 2, spin, lambda v: v, x)
    return lax.psum(y, 'i')

print(jax.pmap(f, axis_name='i')(jnp.arange(4)))
)";

}  // namespace

TEST_CASE("cli::faults: a device looping forever stops at the step budget, every device placed", "[cli][faults]") {
  RunSettings s;
  s.max_steps = 20000;
  RunOutcome o = run_text("device_loops.py", kDeviceLoops, s);
  REQUIRE(o.status == "error");
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report);
  REQUIRE(o.report->kind == "BudgetExceeded");
  REQUIRE(o.report->device == 2);
  REQUIRE(o.report->message == "device 2 exceeded the step budget of 20000 interpreter steps");
  REQUIRE(o.report->where.line == 8);  // the body of the loop
  REQUIRE(o.devices.size() == 4);
  REQUIRE(status_of(o, 2).state == "raised");
  for (int d : {0, 1, 3}) {
    INFO("device " << d);
    REQUIRE(status_of(o, d).state == "stopped");
    REQUIRE(status_of(o, d).detail == "stopped while waiting at psum over 'i' #0");
    REQUIRE(line_of(status_of(o, d)) == 13);
  }
  std::string text = o.report->to_text();
  REQUIRE(text.find("device 2 exceeded the step budget") != std::string::npos);
  REQUIRE(text.find("psum over 'i' #0") != std::string::npos);
}

TEST_CASE("cli::faults: a device looping forever stops at the time budget", "[cli][faults]") {
  // The budget holds for the run and, separately, for the host code before
  // it (starting CPython, importing jax, tracing): generous enough for that
  // to fit under the sanitizers, where it is several times slower.
  RunSettings s;
  s.max_seconds = 2;
  RunOutcome o = run_text("device_loops_time.py", kDeviceLoops, s);
  REQUIRE(o.status == "error");
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "BudgetExceeded");
  REQUIRE(o.report->device == 2);
  REQUIRE(o.report->message == "the run exceeded its time budget of 2 s while device 2 was running");
  REQUIRE(status_of(o, 2).state == "raised");
  for (int d : {0, 1, 3}) REQUIRE(line_of(status_of(o, d)) == 13);
}

TEST_CASE("cli::faults: a host loop stops at --max-seconds with its line", "[cli][faults]") {
  const char* text = R"(# spmd: devices=2
import jax
import jax.numpy as jnp
print(jax.pmap(lambda x: x + 1)(jnp.arange(2)))
n = 0
while True:
    n += 1
)";
  RunSettings s;
  s.max_seconds = 0.2;
  RunOutcome o = run_text("host_loops.py", text, s);
  REQUIRE(o.stdout_text == "[1 2]\n");
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "BudgetExceeded");
  REQUIRE(o.report->message == "the host program exceeded its time budget of 0.2 s");
  REQUIRE(o.report->where.line >= 6);
  REQUIRE(o.report->where.line <= 7);
  REQUIRE(o.report->device == -1);
  // The report shows no devices (the loop is outside any pmap run); the
  // outcome still says where the last run's devices ended: finished.
  REQUIRE(o.report->devices.empty());
  REQUIRE(o.devices.size() == 2);
  REQUIRE(status_of(o, 0).state == "finished");
}

TEST_CASE("cli::faults: a deadlock while other devices print loses no print", "[cli][faults]") {
  const char* text = R"(# spmd: devices=4
import jax
import jax.numpy as jnp
from jax import lax

def body(k, c):
    jax.debug.print("k={k}", k=k)
    return c + 1

def f(x):
    x = lax.fori_loop(0, 3, body, x)
    return lax.cond(lax.axis_index('i') == 3, lambda v: v, lambda v: lax.psum(v, 'i'), x)

print(jax.pmap(f, axis_name='i')(jnp.arange(4)))
)";
  auto threads = GENERATE(1, 2);
  RunSettings s;
  s.threads = threads;
  RunOutcome o = run_text("deadlock_while_printing.py", text, s);
  REQUIRE(o.status == "deadlock");
  REQUIRE(o.exit_code == 3);
  std::string expected;
  for (int d = 0; d < 4; ++d) {
    for (int k = 0; k < 3; ++k) expected += "[device " + std::to_string(d) + "] k=" + std::to_string(k) + "\n";
  }
  REQUIRE(o.stdout_text == expected);
  REQUIRE(o.report->where.line == 12);
  REQUIRE(status_of(o, 3).state == "finished");
  for (int d : {0, 1, 2}) REQUIRE(status_of(o, d).state == "waiting");
}

TEST_CASE("cli::faults: quitting the breakpoint prompt ends the run with every device placed", "[cli][faults]") {
  const char* text = R"(# spmd: devices=2
import jax
import jax.numpy as jnp

def f(x):
    y = x * 2
    jax.debug.breakpoint()
    return jax.lax.psum(y, 'i')

print(jax.pmap(f, axis_name='i')(jnp.arange(2.0)))
)";
  RunSettings s;
  s.breakpoints = BreakpointMode::kPrompt;
  SECTION("q abandons the breakpoint") {
    RunOutcome o = run_text("breakpoint_quit.py", text, s, "p y\nq\n");
    REQUIRE(o.exit_code == 1);
    REQUIRE(o.report->kind == "BreakpointAbandoned");
    REQUIRE(o.report->message == "the breakpoint prompt was quit");
    for (int d : {0, 1}) {
      REQUIRE(status_of(o, d).state == "stopped");
      REQUIRE(status_of(o, d).detail == "stopped at a breakpoint");
      REQUIRE(line_of(status_of(o, d)) == 7);
    }
  }
  SECTION("the end of input continues") {
    RunOutcome o = run_text("breakpoint_eof.py", text, s, "");
    REQUIRE(o.exit_code == 0);
    REQUIRE(o.stdout_text == "[2. 2.]\n");  // psum of [0, 2] on both devices
  }
}

TEST_CASE("cli::faults: an exception in one device names it and stops the others", "[cli][faults]") {
  // Under disable_jit each device runs the Python function itself, so one
  // device can raise where the others do not.
  const char* text = R"(# spmd: devices=4
import jax
import jax.numpy as jnp
from jax import lax

def f(x):
    z = jnp.ones((2,)) + jnp.ones((3,)) if float(x) == 1.0 else x
    return lax.psum(x, 'i')

with jax.disable_jit():
    print(jax.pmap(f, axis_name='i')(jnp.arange(4.0)))
)";
  RunOutcome o = run_text("device_raises.py", text);
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "ShapeError");
  REQUIRE(o.report->device == 1);
  REQUIRE(o.report->where.line == 7);
  REQUIRE(status_of(o, 1).state == "raised");
  // With one thread and seed 0 the devices run in order: device 0 waits at
  // the psum, device 1 raises, devices 2 and 3 never get to run.
  REQUIRE(status_of(o, 0).state == "stopped");
  REQUIRE(status_of(o, 0).detail == "stopped while waiting at psum over 'i' #0");
  REQUIRE(line_of(status_of(o, 0)) == 8);
  for (int d : {2, 3}) {
    REQUIRE(status_of(o, d).state == "stopped");
    REQUIRE(status_of(o, d).detail == "stopped before it ran");
  }
}

TEST_CASE("cli::faults: jnp.arange and jnp.eye in a pmap are iota equations charged to the device's arena", "[cli][faults]") {
  // Issue 36, finding 26: they were host constants of the program, never charged to any arena.
  const char* text = R"(# spmd: devices=4
import jax
import jax.numpy as jnp


def f(x):
    return jnp.sum(jnp.arange(2**20) * x) + jnp.sum(jnp.eye(2048)[0])


print(jax.pmap(f)(jnp.arange(4.0)))
)";
  RunSettings s;
  s.arena_capacity = 2 * 1024 * 1024;
  RunOutcome o = run_text("iota_oom.py", text, s);
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "OutOfMemoryError");
  REQUIRE(o.report->device == 0);
  REQUIRE(o.report->message == "device 0: out of memory allocating 4.0 MiB for iota");
  REQUIRE(o.report->where.line == 7);
  REQUIRE(o.report->where.column == 20);
  s.arena_capacity = 5 * 1024 * 1024;
  o = run_text("iota_oom.py", text, s);  // the arange fits; eye's two 2048 x 2048 iotas (16 MiB each) do not
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->message == "device 0: out of memory allocating 16.0 MiB for iota");
  REQUIRE(o.report->where.column == 53);
  s.arena_capacity = 64 * 1024 * 1024;
  o = run_text("iota_oom.py", text, s);
  REQUIRE(o.exit_code == 0);
  REQUIRE(o.stdout_text == "[1.0000000e+00 5.4975530e+11 1.0995106e+12 1.6492659e+12]\n");
}

TEST_CASE("cli::faults: a device arena out of memory names the device and the allocation", "[cli][faults]") {
  const char* text = R"(# spmd: devices=4
import jax
import jax.numpy as jnp
from jax import lax

def f(x):
    total = lax.cond(lax.axis_index('i') == 3, lambda v: jnp.sum(jnp.cumsum(jnp.zeros((100000,)) + v)), lambda v: jnp.sum(jnp.zeros((4,)) + v), x)
    return lax.psum(total, 'i')

print(jax.pmap(f, axis_name='i')(jnp.arange(4.0)))
)";
  // (The cumsum makes the sum's operand an array: a sum of zeros + v alone
  // is one fused pass that allocates nothing.)
  RunSettings s;
  s.arena_capacity = 64 * 1024;
  RunOutcome o = run_text("device_oom.py", text, s);
  REQUIRE(o.exit_code == 1);
  REQUIRE(o.report->kind == "OutOfMemoryError");
  REQUIRE(o.report->device == 3);
  REQUIRE(o.report->where.line == 7);
  REQUIRE(o.report->message.find("device 3: out of memory allocating 390.6 KiB") == 0);
  REQUIRE(status_of(o, 3).state == "raised");
  for (int d : {0, 1, 2}) REQUIRE(status_of(o, d).state == "stopped");
}

