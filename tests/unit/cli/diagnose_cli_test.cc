// `spmd diagnose` as users run it: exit codes as for runs (0 ok, 2 unusable
// input, 3 hang, 4 mismatch), the report on stderr or as JSON on stdout.
// Runs the real binary on the fixtures of tests/fixtures/diagnose.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "spmd/util/json.h"
#include "support/subprocess.h"

#if !defined(SPMD_BIN_PATH) || !defined(SPMD_SOURCE_DIR)
#error "SPMD_BIN_PATH and SPMD_SOURCE_DIR must be defined by the build"
#endif

using spmd::testing::Subprocess;

namespace {

std::string fixture(const std::string& name) { return std::string(SPMD_SOURCE_DIR) + "/tests/fixtures/diagnose/" + name; }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cli::diagnose: a hang exits 3 with the report, a healthy job 0", "[cli][diagnose]") {
  Subprocess hang({SPMD_BIN_PATH, "diagnose", fixture("nccl_skip_allreduce.log")});
  CHECK(hang.wait() == 3);
  CHECK(has(hang.err(), "error[Deadlock]: hang: ranks {0, 1, 3} wait at AllReduce #4 on comm 0x4e2f8a17c3d9b605 (4 "
                        "ranks) but rank 2 never joins\n"));
  CHECK(has(hang.err(), "  reproduce: spmd diagnose " + fixture("nccl_skip_allreduce.log") + "\n"));
  Subprocess rccl({SPMD_BIN_PATH, "diagnose", fixture("rccl_skip_allreduce.log")});  // AMD's RCCL, ROCm 6.2
  CHECK(rccl.wait() == 3);
  CHECK(has(rccl.err(), "error[Deadlock]: hang: ranks {0, 1, 3} wait at AllReduce #4 on comm 0x4e2f8a17c3d9b605 (4 "
                        "ranks) but rank 2 never joins\n"));
  Subprocess ok({SPMD_BIN_PATH, "diagnose", fixture("fr_healthy")});
  CHECK(ok.wait() == 0);
  CHECK(has(ok.err(), "spmd: read 2 ranks' flight-recorder dumps: 1 communicator, 6 calls; every rank completed the "
                      "same calls on each communicator: no hang, no mismatch\n"));
}

TEST_CASE("cli::diagnose: --format json carries the verdict and the per-rank states", "[cli][diagnose]") {
  Subprocess p({SPMD_BIN_PATH, "diagnose", fixture("fr_size_mismatch"), "--format", "json"});
  CHECK(p.wait() == 4);
  const spmd::Json j = spmd::Json::parse(p.out());
  CHECK(j.string_at("status") == "mismatch");
  CHECK(j.int_at("exit_code") == 4);
  const spmd::Json* report = j.find("report");
  REQUIRE(report != nullptr);
  CHECK(report->string_at("kind") == "CollectiveMismatch");
  CHECK(report->string_at("axis") == "process group 0 (default_pg)");
}

TEST_CASE("cli::diagnose: an input it cannot use exits 2 with a hint", "[cli][diagnose]") {
  // The README talks about NCCL INFO lines and quotes some in prose: still not a log.
  Subprocess p({SPMD_BIN_PATH, "diagnose", std::string(SPMD_SOURCE_DIR) + "/README.md"});
  CHECK(p.wait() == 2);
  CHECK(has(p.err(), "README.md' is neither an NCCL log (no 'NCCL INFO' line) nor a PyTorch flight-recorder dump"));
  Subprocess missing({SPMD_BIN_PATH, "diagnose", "/nonexistent/rank0.log"});
  CHECK(missing.wait() == 2);
  CHECK(has(missing.err(), "cannot read the log or dump '/nonexistent/rank0.log': No such file or directory"));
}

TEST_CASE("cli::diagnose: a log given twice, or beside a log that holds it, is refused with both named", "[cli][diagnose]") {
  // Issue 36, finding 11: the copy's lines were appended to each rank's calls, a CollectiveMismatch (exit 4) where
  // the job hung (exit 3).
  const std::string log = fixture("nccl_skip_allreduce.log");
  Subprocess twice({SPMD_BIN_PATH, "diagnose", log, log});
  CHECK(twice.wait() == 2);
  CHECK(has(twice.err(), "error[UsageError]: '" + log + "' is given twice (line 5 was read already)\n"));
  CHECK(has(twice.err(), "hint: give each process's log once: either every rank's own log or the combined log"));
  // Per-rank logs and the job's combined log, as both get collected: the combined log names the rank's file.
  const std::string combined = (std::filesystem::temp_directory_path() /
                                ("diagnose-combined-" + std::to_string(::getpid()) + ".log")).string();
  {
    std::ofstream out(combined);
    for (int r = 0; r < 4; ++r) {
      std::ifstream in(fixture("nccl_healthy/rank" + std::to_string(r) + ".log"));
      out << "[launcher] " << in.rdbuf();  // a launcher's prefix in front: still the same NCCL lines
    }
  }
  Subprocess both({SPMD_BIN_PATH, "diagnose", fixture("nccl_healthy"), combined});
  CHECK(both.wait() == 2);
  CHECK(has(both.err(), "error[UsageError]: '" + combined + "' repeats lines of '" + fixture("nccl_healthy/rank0.log") +
                            "': line "));
  Subprocess alone({SPMD_BIN_PATH, "diagnose", combined});
  CHECK(alone.wait() == 0);
  std::filesystem::remove(combined);
}

TEST_CASE("cli::log: --log-level and SPMD_LOG_LEVEL show the rendezvous step by step, and change no verdict",
          "[cli][log]") {
  const std::string scenario = std::string(SPMD_SOURCE_DIR) + "/scenarios/deadlock/skip_psum_under_cond.py";
  Subprocess quiet({SPMD_BIN_PATH, "run", scenario});
  CHECK(quiet.wait() == 3);
  CHECK(!has(quiet.err(), "[spmd "));
  Subprocess logged({SPMD_BIN_PATH, "run", scenario, "--log-level", "rendezvous=debug"});
  CHECK(logged.wait() == 3);
  CHECK(has(logged.err(), "[spmd rendezvous] [debug] device 0 arrives at psum over 'i' #0 (1 of 4)\n"));
  CHECK(has(logged.err(), "[spmd rendezvous] [debug] device 3 arrives at psum over 'i' #0 (3 of 4)\n"));
  CHECK(!has(logged.err(), "[spmd runtime]"));
  Subprocess env({"/usr/bin/env", "SPMD_LOG_LEVEL=runtime=info", SPMD_BIN_PATH, "run", scenario});
  CHECK(env.wait() == 3);
  CHECK(has(env.err(), "[spmd runtime] [info] all 3 live devices are blocked and no collective can complete: deadlock\n"));
  Subprocess bad({SPMD_BIN_PATH, "run", scenario, "--log-level", "loud"});
  CHECK(bad.wait() == 2);
  CHECK(has(bad.err(), "error[UsageError]: unknown log level 'loud' in 'loud'"));
}
