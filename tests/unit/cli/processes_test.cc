// `spmd run --num-processes N`: several processes running one scenario,
// each collective checked across them (src/dist). Runs the real binary.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "cli/process_launcher.h"
#include "support/subprocess.h"
#include "support/temp_scenario.h"

using spmd::testing::Subprocess;
using spmd::testing::write_temp_scenario;

namespace {

// Correct on one process; on two (its header asks for two), process 1 skips
// the second psum (line 23).
const std::string kSkipOnProcessOne = std::string(SPMD_SOURCE_DIR) + "/scenarios/multiprocess/process_skips_psum.py";

// Process 1 feeds a longer array: same op, different shape.
const char* kShapeByProcess = R"(import jax
import jax.numpy as jnp
from jax import lax

n = 3 if jax.process_index() == 1 else 2
out = jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(jnp.ones((4, n)))
print(out.shape)
)";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cli::processes: one process is the plain run, the launcher runs N and marks their output", "[cli]") {
  // spmd test judges the processes together: rank 0's deadlock decides.
  {
    Subprocess t({SPMD_BIN_PATH, "test", kSkipOnProcessOne});
    REQUIRE(t.wait() == 0);
    REQUIRE(has(t.out(), "PASS " + kSkipOnProcessOne + "  (deadlock, "));
  }
  const std::string& path = kSkipOnProcessOne;
  {
    Subprocess p({SPMD_BIN_PATH, "run", path, "--num-processes", "1"});
    REQUIRE(p.wait() == 0);
    REQUIRE(p.out() == "0 1 [24. 24. 24. 24.]\n");
  }
  Subprocess p({SPMD_BIN_PATH, "run", path});  // the header's processes=2
  int code = p.wait();
  INFO("stdout:\n" << p.out() << "\nstderr:\n" << p.err());
  REQUIRE(code == 3);  // the deadlock's exit code, the highest of the two
  REQUIRE(p.out() == "[process 1] 1 2 [6. 6. 6. 6.]\n");
  REQUIRE(has(p.err(), "[process 0] error[Deadlock]: deadlock across processes: rank 0 waits at psum over 'i' #1 (" +
                           path + ":23:12) but rank 1 finished after 1 collective\n"));
  // The live report names the Python `if` on jax.process_index() (issue 14):
  // each rank posts its decisions, and the rank that finds the deadlock compares them.
  REQUIRE(has(p.err(), "[process 0]     first differing decision: if at " + path +
                           ":20:8: was false on rank 0; was true on rank 1\n"));
  REQUIRE(has(p.err(), "[process 0]   hint: The first differing decision was if at " + path +
                           ":20:8: was false on rank 0; was true on rank 1. Every rank must reach the same collectives"));
  REQUIRE(has(p.err(), "[process 0]   reproduce: spmd run " + path +
                           " --devices 4 --threads 1 --seed 0 --num-processes 2\n"));
  REQUIRE(has(p.err(), "[process 1] spmd: ok: 1 pmap run on 4 virtual devices\n"));
  REQUIRE(has(p.err(), "spmd: 2 processes exited with [3, 0]\n"));
}

TEST_CASE("cli::processes: each rank started by hand with a shared store, a shape mismatch stops both", "[cli]") {
  std::string path = write_temp_scenario("cli-processes", "shape.py", kShapeByProcess);
  auto store = std::filesystem::temp_directory_path() / ("cli-processes-store-" + std::to_string(::getpid()));
  std::filesystem::remove_all(store);
  Subprocess p0({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-id", "0", "--store",
                 store.string()});
  Subprocess p1({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-id", "1", "--store",
                 store.string()});
  int c0 = p0.wait(), c1 = p1.wait();
  INFO("rank 0:\n" << p0.err() << "\nrank 1:\n" << p1.err());
  REQUIRE(c0 == 4);
  REQUIRE(c1 == 4);
  for (const Subprocess* p : {&p0, &p1}) {
    REQUIRE(has(p->err(),
                "error[CollectiveMismatch]: collective mismatch across processes at psum over 'i' (collective #0 of "
                "ranks {0, 1}): shape differs\n"));
    REQUIRE(has(p->err(), "rank 0  psum  'i'   f32[2]"));
    REQUIRE(has(p->err(), "rank 1  psum  'i'   f32[3]"));
  }
  // A second job on the same store is refused, not mixed with the first.
  Subprocess again({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-id", "0",
                    "--store", store.string()});
  REQUIRE(again.wait() == 1);
  REQUIRE(has(again.err(), "already holds the state of rank 0 (an earlier job used this directory)"));
  std::filesystem::remove_all(store);
}

TEST_CASE("cli::processes: bad process options are usage errors", "[cli]") {
  const std::string& path = kSkipOnProcessOne;
  Subprocess bad_id({SPMD_BIN_PATH, "run", path, "--num-processes", "2", "--process-id", "2", "--store", "/tmp/x"});
  REQUIRE(bad_id.wait() == 2);
  REQUIRE(has(bad_id.err(), "--process-id: 2 is not below --num-processes 2"));
  Subprocess no_store({SPMD_BIN_PATH, "run", path, "--num-processes", "2", "--process-id", "0"});
  REQUIRE(no_store.wait() == 2);  // issue 19, finding 22: once exit 1
  REQUIRE(has(no_store.err(), "--store: a process started with --process-id needs --store DIR"));
  Subprocess threads({SPMD_BIN_PATH, "run", path, "--num-processes", "2", "--threads", "2"});
  REQUIRE(threads.wait() == 1);
  REQUIRE(has(threads.err(), "Runtime: multi-process runs need threads == 1, got 2"));
}

// --- local devices (--process-devices local): each process runs its share ---

namespace {

const std::string kLocalCollectives =
    std::string(SPMD_SOURCE_DIR) + "/scenarios/multiprocess/local_devices_collectives.py";

// With local devices: process 1 returns after the first psum (line 8 is the second).
const char* kLocalSkipOnProcessOne = R"(import jax
import jax.numpy as jnp
from jax import lax
def step(v):
    y = lax.psum(v, 'i')
    if jax.process_index() == 1:
        return y
    return lax.psum(y, 'i')
n = jax.local_device_count()
out = jax.pmap(step, axis_name='i')(jnp.arange(n * 1.0) + jax.process_index() * n)
print(out)
)";

// The lines of each "[process r] " in rank order, without the prefix.
std::string by_process(const std::string& text, int processes) {
  std::string out;
  for (int r = 0; r < processes; ++r) {
    const std::string prefix = "[process " + std::to_string(r) + "] ";
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(prefix, 0) == 0) out += line.substr(prefix.size()) + "\n";
    }
  }
  return out;
}

}  // namespace

TEST_CASE("cli::processes: with local devices every collective's data crosses processes bit for bit", "[cli]") {
  Subprocess one({SPMD_BIN_PATH, "run", kLocalCollectives, "--num-processes", "1"});
  REQUIRE(one.wait() == 0);
  REQUIRE(has(one.out(), "device 3 [3, "));
  Subprocess two({SPMD_BIN_PATH, "run", kLocalCollectives});  // its header: processes=2 process-devices=local
  int code = two.wait();
  INFO("stdout:\n" << two.out() << "\nstderr:\n" << two.err());
  REQUIRE(code == 0);
  // Process 0 printed devices 0 and 1, process 1 devices 2 and 3: together
  // the one-process run's lines, every value the same.
  REQUIRE(by_process(two.out(), 2) == one.out());
  REQUIRE(has(two.out(), "[process 1] device 2 [2, "));
  REQUIRE_FALSE(has(two.out(), "[process 0] device 2"));
  REQUIRE(has(two.err(), "[process 1] spmd: ok: 1 pmap run on 4 virtual devices (2 in this process)\n"));
  // The launcher with a store the user names: it stays, holding only each
  // rank's state and its last signature and data.
  auto store = std::filesystem::temp_directory_path() / ("cli-processes-local-" + std::to_string(::getpid()));
  std::filesystem::remove_all(store);
  Subprocess named({SPMD_BIN_PATH, "run", kLocalCollectives, "--store", store.string()});
  REQUIRE(named.wait() == 0);
  REQUIRE(by_process(named.out(), 2) == one.out());
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(store)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  // Per rank: its context (decisions, for reports), the last data of each of
  // the 3 groups that moved data (the whole axis and the two pairs), the
  // last of its 12 signatures, its state.
  INFO("store: " << files.size() << " files");
  REQUIRE(files.size() == 12);
  REQUIRE(files[0] == "context.0");
  REQUIRE(files[1] == "context.1");
  REQUIRE(std::count_if(files.begin(), files.end(), [](const std::string& f) { return f.rfind("data.", 0) == 0; }) == 6);
  REQUIRE(std::count_if(files.begin(), files.end(), [](const std::string& f) { return f.rfind("sig.", 0) == 0; }) == 2);
  REQUIRE(files[10] == "state.0");
  REQUIRE(files[11] == "state.1");
  std::filesystem::remove_all(store);
  // spmd test runs it the same way.
  Subprocess t({SPMD_BIN_PATH, "test", kLocalCollectives});
  REQUIRE(t.wait() == 0);
  REQUIRE(has(t.out(), "PASS " + kLocalCollectives + "  (ok, "));
}

TEST_CASE("cli::processes: with local devices a global batch, skipped psums and bad layouts are reported", "[cli]") {
  SECTION("every process feeds the global batch: an InputSplitError naming both counts, with the slice to take") {
    std::string path = write_temp_scenario("cli-processes", "global_batch.py", R"(import jax
import jax.numpy as jnp
from jax import lax
out = jax.pmap(lambda v: lax.psum(v, 'i'), axis_name='i')(jnp.arange(4.0))
)");
    Subprocess p({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-devices", "local"});
    REQUIRE(p.wait() == 1);
    REQUIRE(has(p.err(), "[process 1] error[InputSplitError]: pmap: the mapped axis has size 4 (axis 0 of argument "
                         "0 'v', shape (4,)) but this process runs 2 local devices (process 1 of 2 runs devices 2..3 "
                         "of 4)\n"));
    REQUIRE(has(p.err(), "hint: a pmap maps over jax.local_device_count() = 2 devices in each process, not over "
                         "jax.device_count() = 4; pass each process only its devices' rows, e.g. "
                         "x[jax.process_index() * 2:(jax.process_index() + 1) * 2]\n"));
    REQUIRE(has(p.err(), "spmd: 2 processes exited with [1, 1]\n"));
  }
  SECTION("process 1 returns after one psum: a deadlock across processes, exactly") {
    std::string path = write_temp_scenario("cli-processes", "local_skip.py", kLocalSkipOnProcessOne);
    Subprocess p({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-devices", "local"});
    REQUIRE(p.wait() == 3);
    REQUIRE(p.out() == "[process 1] [6. 6.]\n");  // 0 + 1 + 2 + 3 from both processes
    REQUIRE(has(p.err(), "[process 0] error[Deadlock]: deadlock across processes: rank 0 waits at psum over 'i' #1 (" +
                             path + ":8:12) but rank 1 finished after 1 collective\n"));
    REQUIRE(has(p.err(), "--num-processes 2 --process-devices local\n"));
  }
  SECTION("device 1 skips the psum in process 0: that process's deadlock, exactly; the other stops naming it") {
    std::string path = write_temp_scenario("cli-processes", "local_device_skips.py", R"(import jax
import jax.numpy as jnp
from jax import lax
def step(v):
    if lax.axis_index('i') == 1:
        return v
    return lax.psum(v, 'i')
with jax.disable_jit():
    out = jax.pmap(step, axis_name='i')(jnp.arange(2.0))
)");
    Subprocess p({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-devices", "local"});
    REQUIRE(p.wait() == 3);
    REQUIRE(has(p.err(), "[process 0] error[Deadlock]: deadlock: device 0 waits at psum over 'i' #0 (" + path +
                             ":7:12) but device 1 returned after 0 collectives\n"));
    REQUIRE(has(p.err(), "[process 0]   psum over 'i' at " + path +
                             ":7:12 needs 4 devices (2 in this process); 1 arrived (device 0)\n"));
    REQUIRE(has(p.err(), "[process 1] error[RankFailed]: rank 0 raised: Deadlock: deadlock: device 0 waits at psum"));
  }
  SECTION("devices that do not split evenly, and a nested pmap, are refused with the way out") {
    Subprocess uneven({SPMD_BIN_PATH, "run", kLocalCollectives, "--devices", "3"});
    REQUIRE(uneven.wait() == 1);
    REQUIRE(has(uneven.err(), "Runtime: 3 devices cannot be shared out evenly between 2 processes\n"));
    std::string path = write_temp_scenario("cli-processes", "local_nested.py", R"(import jax
import jax.numpy as jnp
from jax import lax
jax.config.update('jax_pmap_shmap_merge', False)  # the original pmap nests
inner = lambda x: jax.pmap(lambda y: lax.psum(y, 'm'), axis_name='m')(x)
out = jax.pmap(inner, axis_name='d')(jnp.ones((2, 2)))
)");
    Subprocess nested({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-devices",
                       "local"});
    REQUIRE(nested.wait() == 1);
    REQUIRE(has(nested.err(), "[process 0] error[InvalidArgument]: pmap: a nested pmap cannot run with local devices "
                              "(process 0 of 2 runs devices 0..1 of 4)\n"));
  }
}

TEST_CASE("cli::processes: each process traces to its own file, replaying them together finds the deadlock", "[cli]") {
  std::string path = write_temp_scenario("cli-processes", "traced_skip.py", kLocalSkipOnProcessOne);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const std::string t0 = dir + "/run.process0.jsonl", t1 = dir + "/run.process1.jsonl";
  std::filesystem::remove(t0);
  std::filesystem::remove(t1);
  Subprocess run({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-devices", "local",
                  "--trace", dir + "/run.jsonl"});
  REQUIRE(run.wait() == 3);
  REQUIRE(std::filesystem::exists(t0));
  REQUIRE(std::filesystem::exists(t1));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/run.jsonl"));

  // Together: the simulator's own per-device report of the same deadlock.
  Subprocess both({SPMD_BIN_PATH, "replay", t0, t1});
  REQUIRE(both.wait() == 3);
  INFO(both.err());
  REQUIRE(has(both.err(), "error[Deadlock]: deadlock: devices {0, 1} wait at psum over 'i' #1 (" + path +
                              ":8:12) but device 2 returned after 1 collective; device 3 returned after 1 collective\n"));
  REQUIRE(has(both.err(), "first differing decision: if at " + path +
                              ":6:8: was false on devices {0, 1}; was true on devices {2, 3}\n"));
  REQUIRE(has(both.err(), "reproduce: spmd replay " + t0 + " " + t1 + "\n"));

  // Alone, a process's trace is a part of the run, and says so.
  Subprocess one({SPMD_BIN_PATH, "replay", t1});
  REQUIRE(one.wait() == 2);
  REQUIRE(has(one.err(), "error[UsageError]: the trace holds 2 of the 4 devices of the run (devices {2, 3})\n"));
  REQUIRE(has(one.err(), "replay every process's trace together"));
  Subprocess twice({SPMD_BIN_PATH, "replay", t0, t0});
  REQUIRE(twice.wait() == 2);
  REQUIRE(has(twice.err(), "error[UsageError]: device 0 is recorded twice (in " + t0 + ")\n"));
  // Another run's trace (other axes) does not belong with them.
  std::string other = write_temp_scenario("cli-processes", "other_axis.py", R"(import jax
import jax.numpy as jnp
jax.pmap(lambda v: jax.lax.psum(v, 'j'), axis_name='j')(jnp.ones(2))
)");
  const std::string t2 = dir + "/other.jsonl";
  Subprocess rec({SPMD_BIN_PATH, "run", other, "--devices", "2", "--trace", t2});
  REQUIRE(rec.wait() == 0);
  Subprocess mixed({SPMD_BIN_PATH, "replay", t0, t2});
  REQUIRE(mixed.wait() == 2);
  REQUIRE(has(mixed.err(), "error[UsageError]: the traces disagree on the axes of their devices (device 0 in " + t0 +
                               ", device 0 in " + t2 + ")\n"));
}

TEST_CASE("cli::processes: one host's cuda ranks with local devices each get their own GPUs", "[cli]") {
  using spmd::cli::gpus_per_process;
  REQUIRE(gpus_per_process(2, 2, nullptr) == std::vector<std::string>{"0,1", "2,3"});
  REQUIRE(gpus_per_process(2, 1, "") == std::vector<std::string>{"0", "1"});
  // The ranks share out what this process may see, in its order.
  REQUIRE(gpus_per_process(2, 2, "7,5,3,1") == std::vector<std::string>{"7,5", "3,1"});
  REQUIRE(gpus_per_process(3, 1, "GPU-aa,GPU-bb,GPU-cc") == std::vector<std::string>{"GPU-aa", "GPU-bb", "GPU-cc"});
  // Too few: nothing is set, and each rank reports the GPUs it lacks.
  REQUIRE(gpus_per_process(2, 2, "0,1,2").empty());
  spmd::cli::ProcessLayout layout{2, 4, true};
  REQUIRE(spmd::cli::gpus_for_launch(layout, "sim").empty());
  layout.local_devices = false;
  REQUIRE(spmd::cli::gpus_for_launch(layout, "cuda").empty());
}

TEST_CASE("cli::processes: a rank killed under the launcher is RankLost for the others, not a hang", "[cli][processes]") {
  // Issue 19, finding 5: the launcher reaped ranks only after every pipe
  // closed, so a killed rank stayed a zombie that looked alive to the others.
  const std::string path = write_temp_scenario("spmd_processes_test", "killed_rank.py", R"(import os, signal
import jax, jax.numpy as jnp
from jax import lax
if jax.process_index() == 1:
    os.kill(os.getpid(), signal.SIGKILL)
print(jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(jnp.arange(4.0)))
)");
  Subprocess p({SPMD_BIN_PATH, "run", path, "--num-processes", "2", "--devices", "4"});
  CHECK(p.wait() == 137);  // the highest rank code: rank 1's SIGKILL
  CHECK(has(p.err(), "[process 0] error[RankLost]: rank 1 (pid "));
  CHECK(has(p.err(), "spmd: 2 processes exited with [1, 137]"));
}

TEST_CASE("cli::processes: SIGINT to the launcher reaches every rank, each reports, none is left", "[cli][processes]") {
  // Issue 19, finding 6: the ranks kept running, re-parented to init, and
  // the launcher exited after 10 s without their reports.
  const std::string path = write_temp_scenario("spmd_processes_test", "looping_ranks.py", R"(import jax, jax.numpy as jnp
from jax import lax
print("started", flush=True)
def body(c):
    return lax.psum(c, 'i') * 0 + c + 1
jax.pmap(lambda x: lax.while_loop(lambda c: c >= 0, body, x), axis_name='i')(jnp.arange(4))
)");
  Subprocess p({SPMD_BIN_PATH, "run", path, "--num-processes", "2", "--devices", "4"});
  REQUIRE(p.read_until("[process 0] started\n"));
  REQUIRE(p.read_until("[process 1] started\n"));
  p.signal(SIGINT);
  CHECK(p.wait() == 130);
  for (int r : {0, 1}) {
    INFO("rank " << r);
    const std::string tag = "[process " + std::to_string(r) + "] ";
    CHECK(has(p.err(), tag + "error[Interrupted]: interrupted by SIGINT"));
    CHECK(has(p.err(), tag + "spmd: interrupted (Interrupted), exit code 130"));
  }
  CHECK(has(p.err(), "spmd: 2 processes exited with [130, 130]"));
}

TEST_CASE("cli::processes: the launcher passes the program's own arguments after -- to every rank", "[cli][processes]") {
  const std::string path = write_temp_scenario("spmd_processes_test", "args.py", "import sys\nprint(sys.argv[1:])\n");
  Subprocess p({SPMD_BIN_PATH, "run", path, "--num-processes", "2", "--", "--lr", "0.5"});
  CHECK(p.wait() == 0);
  CHECK(has(p.out(), "[process 0] ['--lr', '0.5']\n"));
  CHECK(has(p.out(), "[process 1] ['--lr', '0.5']\n"));
}

TEST_CASE("cli::processes: every rank ends as python3 ends it: threads joined, atexit run, files written", "[cli][processes]") {
  // Issue 35: the exit-time behaviour holds for each process of --num-processes; the highest status wins.
  const std::string dir = "/tmp/spmd_processes_exit_" + std::to_string(::getpid());
  const std::string path = write_temp_scenario("spmd_processes_test", "ends.py", R"(import atexit, sys, threading, time
import jax, jax.numpy as jnp
r = jax.process_index()
f = open(sys.argv[1] + f'/out_{r}.txt', 'w')
f.write(f'process {r}\n')
atexit.register(lambda: print('atexit', r, jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')(jnp.ones(2))[0], flush=True))
threading.Thread(target=lambda: (time.sleep(0.2), print('thread', r, flush=True))).start()
sys.exit(3 + r)
)");
  std::filesystem::create_directories(dir);
  Subprocess p({SPMD_BIN_PATH, "run", path, "--num-processes", "2", "--devices", "4", "--", dir});
  CHECK(p.wait() == 4);
  for (int r : {0, 1}) {
    INFO("rank " << r << "\nstdout:\n" << p.out() << "\nstderr:\n" << p.err());
    const std::string tag = "[process " + std::to_string(r) + "] ";
    CHECK(has(p.out(), tag + "thread " + std::to_string(r) + "\n"));
    CHECK(has(p.out(), tag + "atexit " + std::to_string(r) + " 2.0\n"));
    CHECK(p.out().find(tag + "thread") < p.out().find(tag + "atexit"));
    CHECK(has(p.err(), tag + "spmd: exit " + std::to_string(3 + r) + ": the program ended with sys.exit(" +
                           std::to_string(3 + r) + ")"));
    std::ifstream in(dir + "/out_" + std::to_string(r) + ".txt");
    std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(written == "process " + std::to_string(r) + "\n");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli::processes: multihost_utils shares host values across processes with local devices", "[cli][processes]") {
  // Issue 36, finding 25: jax.experimental.multihost_utils. Each process
  // holds different values; the calls cross processes as collectives.
  std::string path = write_temp_scenario("cli-processes", "multihost_utils.py", R"(import numpy as np
import jax
from jax.experimental import multihost_utils
p = jax.process_index()
print(multihost_utils.broadcast_one_to_all({'a': np.arange(3) + 10 * p}))
print(multihost_utils.process_allgather(np.float32(p + 0.5)), multihost_utils.process_allgather(np.arange(2) + p, tiled=True))
multihost_utils.sync_global_devices('step')
try:
    multihost_utils.assert_equal(np.int32(p), 'differs:')
except AssertionError as e:
    print('AssertionError', e)
)");
  Subprocess two({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2", "--process-devices", "local"});
  int code = two.wait();
  INFO("stdout:\n" << two.out() << "\nstderr:\n" << two.err());
  REQUIRE(code == 0);
  for (std::string rank : {"0", "1"}) {
    REQUIRE(has(two.out(), "[process " + rank + "] {'a': array([0, 1, 2], dtype=int32)}\n"));
    REQUIRE(has(two.out(), "[process " + rank + "] [0.5 1.5] [0 1 1 2]\n"));
    REQUIRE(has(two.out(), "[process " + rank + "] AssertionError differs: Expected: 0; got: [0 1].\n"));
  }
  // Where every process simulates every device, nothing is shared: refused, with the option that shares.
  Subprocess mirrored({SPMD_BIN_PATH, "run", path, "--devices", "4", "--num-processes", "2"});
  REQUIRE(mirrored.wait() == 1);
  REQUIRE(has(mirrored.err(), "NotImplementedError: multihost_utils with 2 processes that each simulate all 4 devices: "
                              "the processes share no data"));
  REQUIRE(has(mirrored.err(), "hint: run with --process-devices local"));
}
