// SIGINT / SIGTERM on `spmd run`: the output printed before the signal is
// kept, the report says where every device stands, the exit code is
// 128 + the signal. Runs the real binary (signals are per process).

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "support/subprocess.h"
#include "support/temp_scenario.h"

#ifndef SPMD_BIN_PATH
#error "SPMD_BIN_PATH (the spmd binary) must be defined by the build"
#endif

using spmd::testing::Subprocess;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  return spmd::testing::write_temp_scenario("spmd_signals_test", name, text);
}

// Devices loop forever; each iteration prints and meets at a psum (line 10).
const char* kDevicesLoop = R"(# spmd: devices=4
import jax
import jax.numpy as jnp
from jax import lax

print("host: before the pmap")

def body(c):
    jax.debug.print("iteration {c}", c=c)
    return lax.psum(c, 'i') * 0 + c + 1

def f(x):
    return lax.while_loop(lambda c: c >= 0, body, x * 0)

jax.pmap(f, axis_name='i')(jnp.arange(4))
)";

// The host loops forever after a pmap run (lines 6-8).
const char* kHostLoops = R"(# spmd: devices=2
import jax
import jax.numpy as jnp
print(jax.pmap(lambda x: x + 1)(jnp.arange(2)))
print("host: looping")
n = 0
while True:
    n += 1
)";

// Lines of the device table in the text report: "    device 3  stopped  ...  file:line  ...".
std::vector<std::string> device_rows(const std::string& err) {
  std::vector<std::string> rows;
  std::regex row(R"(^    device \d+  .*$)");
  std::size_t pos = 0;
  while (pos < err.size()) {
    std::size_t end = err.find('\n', pos);
    if (end == std::string::npos) end = err.size();
    std::string line = err.substr(pos, end - pos);
    if (std::regex_match(line, row)) rows.push_back(line);
    pos = end + 1;
  }
  return rows;
}

}  // namespace

TEST_CASE("cli::signals: SIGINT/SIGTERM stop devices looping inside a pmap", "[cli][signals]") {
  auto [sig, code, name] = GENERATE(std::make_tuple(SIGINT, 130, "SIGINT"), std::make_tuple(SIGTERM, 143, "SIGTERM"));
  std::string path = write_temp("devices_loop.py", kDevicesLoop);
  Subprocess p({SPMD_BIN_PATH, "run", path});
  // Every device is in the loop once device 3's third iteration is printed.
  if (!p.read_until("[device 3] iteration 2\n")) FAIL("the output ended early\nstdout:\n" << p.out() << "\nstderr:\n" << p.err());
  p.signal(sig);
  int exit_code = p.wait();
  INFO("stdout:\n" << p.out() << "\nstderr:\n" << p.err());
  REQUIRE(exit_code == code);
  // Output before the signal is all there, in order, with no gap per device.
  REQUIRE(p.out().rfind("host: before the pmap\n", 0) == 0);
  for (int d = 0; d < 4; ++d) {
    std::regex line("\\[device " + std::to_string(d) + "\\] iteration (\\d+)\n");
    int expected = 0;
    for (auto it = std::sregex_iterator(p.out().begin(), p.out().end(), line); it != std::sregex_iterator(); ++it) {
      REQUIRE(std::stoi((*it)[1]) == expected);
      ++expected;
    }
    REQUIRE(expected >= 3);
  }
  // The report: the kind, the signal, and where each device stands.
  REQUIRE(p.err().find(std::string("error[Interrupted]: interrupted by ") + name) != std::string::npos);
  std::vector<std::string> rows = device_rows(p.err());
  REQUIRE(rows.size() == 4);
  std::set<std::string> lines_seen;
  for (int d = 0; d < 4; ++d) {
    INFO(rows[static_cast<std::size_t>(d)]);
    std::smatch m;
    std::regex cells("    device (\\d+)  +stopped  +(.*)  +" + std::regex_replace(path, std::regex("[.]"), "\\.") +
                     ":(\\d+):\\d+ .*");
    REQUIRE(std::regex_match(rows[static_cast<std::size_t>(d)], m, cells));
    REQUIRE(std::stoi(m[1]) == d);
    int line = std::stoi(m[3]);
    REQUIRE(line >= 9);  // in the loop body
    REQUIRE(line <= 13);
  }
  REQUIRE(p.err().find("spmd: interrupted (Interrupted), exit code") != std::string::npos);
}

TEST_CASE("cli::signals: SIGINT/SIGTERM stop a host loop", "[cli][signals]") {
  auto [sig, code, name] = GENERATE(std::make_tuple(SIGINT, 130, "SIGINT"), std::make_tuple(SIGTERM, 143, "SIGTERM"));
  std::string path = write_temp("host_loops.py", kHostLoops);
  Subprocess p({SPMD_BIN_PATH, "run", path});
  if (!p.read_until("host: looping\n")) FAIL("the output ended early\nstdout:\n" << p.out() << "\nstderr:\n" << p.err());
  p.signal(sig);
  int exit_code = p.wait();
  INFO("stdout:\n" << p.out() << "\nstderr:\n" << p.err());
  REQUIRE(exit_code == code);
  REQUIRE(p.out() == "[1 2]\nhost: looping\n");
  REQUIRE(p.err().find(std::string("error[Interrupted]: interrupted by ") + name) != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(p.err(), m, std::regex("  --> .*host_loops\\.py:(\\d+):\\d+")));
  // The signal may come before the loop starts (line 6) or inside it (7-8).
  REQUIRE(std::stoi(m[1]) >= 6);
  REQUIRE(std::stoi(m[1]) <= 8);
  // Stopped outside any pmap run: the report shows no devices of the earlier run.
  REQUIRE(device_rows(p.err()).empty());
}

TEST_CASE("cli::signals: SIGTERM at a breakpoint prompt whose input stays open ends the run", "[cli][signals]") {
  // Issue 19, finding 7: the prompt's read held stdin until a line came, and
  // the exit path's flush waited for that lock: the process lived on.
  std::string path = write_temp("prompt.py", R"(import jax, jax.numpy as jnp
def f(x):
    jax.debug.breakpoint()
    return x + 1
print(jax.pmap(f)(jnp.arange(2.0)))
)");
  // Input from a FIFO this test holds open and never writes to.
  std::string fifo = path + ".stdin";
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  int writer = ::open(fifo.c_str(), O_RDWR);
  REQUIRE(writer >= 0);
  Subprocess p({"/bin/sh", "-c",
                std::string("exec ") + SPMD_BIN_PATH + " run " + path + " --devices 2 --breakpoints prompt < " + fifo});
  REQUIRE(p.read_err_until("(spmd-pdb) "));
  p.signal(SIGTERM);
  const int status = p.wait();
  ::close(writer);
  std::filesystem::remove(fifo);
  INFO("stderr:\n" << p.err());
  CHECK(status == 143);
  CHECK(p.err().find("(interrupted: continuing, so every device stops where it stands)") != std::string::npos);
  CHECK(p.err().find("error[Interrupted]: interrupted by SIGTERM") != std::string::npos);
}

TEST_CASE("cli::signals: a signal while a deadlock report is written keeps the exit code the report states",
          "[cli][signals]") {
  // Issue 19, finding 16: the report said "exit code 3", the process exited 130.
  std::string path = write_temp("big_deadlock.py", R"(import jax, jax.numpy as jnp
from jax import lax
f = lambda x: lax.cond(lax.axis_index('i') == 1, lambda v: v, lambda v: lax.psum(v, 'i'), x)
jax.pmap(f, axis_name='i')(jnp.arange(2048.0))
)");
  Subprocess p({SPMD_BIN_PATH, "run", path, "--devices", "2048"});
  // The report (hundreds of KiB, more than the pipe holds) is being written
  // into the unread stderr pipe: the verdict is decided and the process
  // cannot finish writing it before the signal comes.
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (p.unread_err_bytes() < 32768) {
    if (std::chrono::steady_clock::now() > limit) FAIL("the report never filled the pipe");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  p.signal(SIGINT);
  CHECK(p.wait() == 3);
  INFO("the end of stderr:\n" << p.err().substr(p.err().size() > 1500 ? p.err().size() - 1500 : 0));
  CHECK(p.err().find("spmd: deadlock (Deadlock), exit code 3") != std::string::npos);
}

TEST_CASE("cli::signals: a device that overflows its fiber stack is a report naming it and --stack-size",
          "[cli][signals]") {
  // Issue 36, finding 2: C recursion in a device's Python (disable_jit) ran
  // off the fiber stack into its guard page: a bare SIGSEGV, no message.
  std::string path = write_temp("deep_repr.py", R"(import jax, jax.numpy as jnp
def f(x):
    v = []
    for _ in range(900 if jax.lax.axis_index('i') == 1 else 1):
        v = [v]
    return x + len(repr(v))
with jax.disable_jit():
    print(jax.pmap(f, axis_name='i')(jnp.zeros(2)))
)");
  Subprocess p({SPMD_BIN_PATH, "run", path, "--devices", "2", "--stack-size", "64KiB"});
  CHECK(p.wait() == 1);
  CHECK(p.err().find("error[StackOverflow]: device 1 overflowed its fiber stack of 64.0 KiB\n") != std::string::npos);
  CHECK(p.err().find("raise --stack-size (now 64.0 KiB)") != std::string::npos);
  // A stack that holds the recursion gives the result.
  Subprocess big({SPMD_BIN_PATH, "run", path, "--devices", "2", "--stack-size", "8MiB"});
  CHECK(big.wait() == 0);
  CHECK(big.out() == "[   4. 1802.]\n");
}

TEST_CASE("cli::signals: a device blocked in a lock another device holds across a psum is stopped",
          "[cli][signals]") {
  // Issue 36, finding 7: under disable_jit one device's Python blocked in
  // lock.acquire (or Event.wait) blocks the OS thread every device fiber
  // shares: --max-seconds and SIGINT were not honoured.
  std::string path = write_temp("lock_across_psum.py", R"(import threading, jax, jax.numpy as jnp
from jax import lax
lock = threading.Lock()
def f(x):
    with lock:
        return lax.psum(x, 'i')
with jax.disable_jit():
    print(jax.pmap(f, axis_name='i')(jnp.arange(2.0)))
)");
  const auto start = std::chrono::steady_clock::now();
  Subprocess budget({SPMD_BIN_PATH, "run", path, "--devices", "2", "--max-seconds", "0.5"});
  CHECK(budget.wait() == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(8));
  CHECK(budget.err().find("error[BudgetExceeded]: the run exceeded its time budget of 0.5 s while a device was "
                          "blocked in a Python call\n  --> " + path + ":5:5") != std::string::npos);
  CHECK(budget.err().find("  device: 1\n") != std::string::npos);
  CHECK(budget.err().find("stopped while waiting at psum over 'i' #0") != std::string::npos);

  Subprocess interrupted({SPMD_BIN_PATH, "run", path, "--devices", "2"});
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const auto signalled = std::chrono::steady_clock::now();
  interrupted.signal(SIGINT);
  CHECK(interrupted.wait() == 130);
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(5));  // not the 10 s grace
  CHECK(interrupted.err().find("error[Interrupted]: interrupted by SIGINT") != std::string::npos);
}

TEST_CASE("cli::signals: SIGINT/SIGTERM while a thread is joined or an atexit handler runs stop the exit", "[cli][signals]") {
  // Issue 35: the program's exit (non-daemon threads joined, atexit handlers) keeps the signals' behaviour.
  auto [sig, code, name] = GENERATE(std::make_tuple(SIGINT, 130, "SIGINT"), std::make_tuple(SIGTERM, 143, "SIGTERM"));
  auto [file, text, line] = GENERATE(
      std::make_tuple("joins.py",
                      "import threading, time\n"
                      "def work():\n"
                      "    print('thread: working', flush=True)\n"
                      "    while True:\n"
                      "        time.sleep(0.01)\n"
                      "threading.Thread(target=work).start()\n"
                      "print('main done', flush=True)\n",
                      5),
      std::make_tuple("atexit_loops.py",
                      "import atexit, time\n"
                      "def save():\n"
                      "    print('thread: working', flush=True)\n"
                      "    while True:\n"
                      "        time.sleep(0.01)\n"
                      "atexit.register(save)\n"
                      "print('main done', flush=True)\n",
                      5));
  INFO(file << " " << name);
  std::string path = write_temp(file, text);
  Subprocess p({SPMD_BIN_PATH, "run", path});
  if (!p.read_until("thread: working\n")) FAIL("the output ended early\nstdout:\n" << p.out() << "\nstderr:\n" << p.err());
  p.signal(sig);
  const int exit_code = p.wait();
  INFO("stdout:\n" << p.out() << "\nstderr:\n" << p.err());
  REQUIRE(exit_code == code);
  REQUIRE(p.err().find(std::string("error[Interrupted]: interrupted by ") + name) != std::string::npos);
  REQUIRE(p.out().find("main done\n") != std::string::npos);
  // Where it stood: the thread's (or the handler's) loop, not threading's join.
  REQUIRE(p.err().find(std::string(file) + ":" + std::to_string(line)) != std::string::npos);
  if (std::string(file) == "joins.py") {
    REQUIRE(p.err().find("the program's end was waiting for the non-daemon thread 'Thread-1 (work)' at ") !=
            std::string::npos);
  }
}
