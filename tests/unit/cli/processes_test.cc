// `spmd run --num-processes N`: several processes running one scenario,
// each collective checked across them (src/dist). Runs the real binary.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "support/subprocess.h"
#include "support/temp_scenario.h"

using spmd::testing::Subprocess;
using spmd::testing::write_temp_scenario;

namespace {

// Correct on one process; on two (its header asks for two), process 1 skips
// the second psum (line 21).
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

TEST_CASE("cli::processes: one process is the plain run; the launcher runs N and marks their output", "[cli]") {
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
                           path + ":21:12) but rank 1 finished after 1 collective\n"));
  REQUIRE(has(p.err(), "[process 0]   reproduce: spmd run " + path +
                           " --devices 4 --threads 1 --seed 0 --num-processes 2\n"));
  REQUIRE(has(p.err(), "[process 1] spmd: ok: 1 pmap run on 4 virtual devices\n"));
  REQUIRE(has(p.err(), "spmd: 2 processes exited with [3, 0]\n"));
}

TEST_CASE("cli::processes: each rank started by hand with a shared store; a shape mismatch stops both", "[cli]") {
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
  REQUIRE(no_store.wait() == 1);
  REQUIRE(has(no_store.err(), "Runtime: 2 processes need a store directory they share"));
  Subprocess threads({SPMD_BIN_PATH, "run", path, "--num-processes", "2", "--threads", "2"});
  REQUIRE(threads.wait() == 1);
  REQUIRE(has(threads.err(), "Runtime: multi-process runs need threads == 1, got 2"));
}
