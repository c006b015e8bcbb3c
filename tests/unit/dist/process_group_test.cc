// ProcessGroup: ranks as separate processes (fork) meeting through a store.
// Every case forks `world` children; each joins the group, runs its part and
// writes what it raised (a report as JSON) for the parent to check.

#include <catch2/catch.hpp>

#include <numeric>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dist/process_group.h"
#include "spmd/error.h"
#include "support/temp_dir.h"

using namespace spmd;
using spmd::detail::AxisNames;
using spmd::detail::CollectiveSignature;
using spmd::dist::FileStore;
using spmd::dist::ProcessGroup;
using spmd::testing::TempDir;

namespace {

struct RankResult {
  int exit_code = -1;
  Json report;  // null when the rank finished without an error
  std::string kind() const { return report.is_null() ? "" : report.find("kind")->as_string(); }
  std::string message() const { return report.is_null() ? "" : report.find("message")->as_string(); }
};

// Forks `world` ranks over one fresh store and waits for all of them. The wait
// has a safety limit (the children are killed and the test fails past it) so
// that a broken group cannot hang the suite; it asserts nothing about speed.
// `worlds`, when given, is each rank's own idea of the world size (ranks
// started with different --num-processes).
std::vector<RankResult> run_ranks(int world, const std::function<void(ProcessGroup&)>& body,
                                  const std::vector<int>& worlds = {}) {
  TempDir tmp;
  const std::string store = tmp.path + "/store";
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      std::string out;
      try {
        ProcessGroup g(FileStore(store), r, worlds.empty() ? world : worlds[static_cast<std::size_t>(r)]);
        try {
          body(g);
          g.finish();
        } catch (const Error& e) {
          if (!g.ended()) g.fail(e.kind() + ": " + e.report().message);
          throw;
        }
      } catch (const Error& e) {
        out = e.report().to_json().dump();
        code = 1;
      } catch (...) {
        code = 2;
      }
      std::ofstream(tmp.path + "/out." + std::to_string(r)) << out;
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<RankResult> results(static_cast<std::size_t>(world));
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int left = world;
  while (left > 0) {
    for (int r = 0; r < world; ++r) {
      if (pids[static_cast<std::size_t>(r)] == 0) continue;
      int status = 0;
      if (::waitpid(pids[static_cast<std::size_t>(r)], &status, WNOHANG) == pids[static_cast<std::size_t>(r)]) {
        results[static_cast<std::size_t>(r)].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        pids[static_cast<std::size_t>(r)] = 0;
        --left;
      }
    }
    if (std::chrono::steady_clock::now() > limit) {
      for (pid_t p : pids) {
        if (p != 0) ::kill(p, SIGKILL), ::waitpid(p, nullptr, 0);
      }
      FAIL("ranks still running past the safety limit (a hang)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int r = 0; r < world; ++r) {
    std::ifstream in(tmp.path + "/out." + std::to_string(r));
    std::stringstream ss;
    ss << in.rdbuf();
    if (!ss.str().empty()) results[static_cast<std::size_t>(r)].report = Json::parse(ss.str());
  }
  return results;
}

CollectiveSignature sig(CollectiveKind kind, std::vector<std::int64_t> shape, std::uint32_t line) {
  CollectiveSignature s;
  s.kind = kind;
  s.axes = AxisNames::intern({"i"});
  if (kind != CollectiveKind::kBarrier) s.operands.push_back({DType::kFloat32, Shape(shape.begin(), shape.end())});
  s.loc = SourceLoc{"f.py", line, 5};
  return s;
}

const std::vector<int> kAll3 = {0, 1, 2};

}  // namespace

TEST_CASE("dist::ProcessGroup: matching collectives pass and rank 0 shares bytes with every rank", "[dist]") {
  auto results = run_ranks(3, [](ProcessGroup& g) {
    std::string id = g.share("nccl-id", [] { return std::string("\x00\x07unique", 8); });
    if (id != std::string("\x00\x07unique", 8)) throw std::runtime_error("wrong id");
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), kAll3);
    // A sub-group: ranks 0 and 2 only; rank 1 goes straight on.
    if (g.rank() != 1) g.check_collective(sig(CollectiveKind::kAllGather, {2, 2}, 11), {0, 2});
    g.check_collective(sig(CollectiveKind::kBarrier, {}, 12), kAll3);
    if (g.collectives_entered() != (g.rank() == 1 ? 2 : 3)) throw std::runtime_error("wrong count");
  });
  for (const auto& r : results) {
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.report.is_null());
  }
}

TEST_CASE("dist::ProcessGroup: different shapes are a mismatch every member reports with the same table", "[dist]") {
  auto results = run_ranks(3, [](ProcessGroup& g) {
    g.check_collective(sig(CollectiveKind::kPsum, {g.rank() == 1 ? 5 : 4}, 10), kAll3);
  });
  for (const auto& r : results) {
    REQUIRE(r.exit_code == 1);
    REQUIRE(r.kind() == "CollectiveMismatch");
    REQUIRE(r.message() ==
            "collective mismatch across processes at psum over 'i' (collective #0 of ranks {0..2}): shape differs");
    const Json& table = *r.report.find("table");
    REQUIRE(table.find("columns")->dump() == R"(["ranks","op","axes","operands","params","where"])");
    REQUIRE(table.find("rows")->dump() ==
            R"([["ranks {0, 2}","psum","'i'","f32[4]","","f.py:10:5"],["rank 1","psum","'i'","f32[5]","","f.py:10:5"]])");
  }
}

TEST_CASE("dist::ProcessGroup: a rank that returns early is a deadlock, reported exactly by every waiter",
          "[dist][deadlock]") {
  auto results = run_ranks(3, [](ProcessGroup& g) {
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), kAll3);
    if (g.rank() == 2) return;
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 12), kAll3);
  });
  REQUIRE(results[2].exit_code == 0);
  for (int r : {0, 1}) {
    const RankResult& res = results[static_cast<std::size_t>(r)];
    REQUIRE(res.exit_code == 1);
    REQUIRE(res.kind() == "Deadlock");
    REQUIRE(res.message() ==
            "deadlock across processes: ranks {0, 1} wait at psum over 'i' #1 (f.py:12:5) but rank 2 finished after 1 "
            "collective");
    const auto& devices = res.report.find("devices")->as_array();
    REQUIRE(devices.size() == 3);
    REQUIRE(devices[0].find("state")->as_string() == "waiting");
    REQUIRE(devices[0].find("detail")->as_string() == "psum over 'i' #1 f32[4]");
    REQUIRE(devices[0].find("where")->dump() == R"({"file":"f.py","line":12,"column":5})");
    REQUIRE(devices[0].find("label")->as_string().rfind("rank 0 (pid ", 0) == 0);
    REQUIRE(devices[0].find("collectives_done")->as_int() == 1);
    REQUIRE(devices[2].find("state")->as_string() == "finished");
    REQUIRE(devices[2].find("collectives_done")->as_int() == 1);
  }
}

TEST_CASE("dist::ProcessGroup: ranks waiting on each other in a cycle of groups are a deadlock", "[dist][deadlock]") {
  // 0 waits for 1, 1 waits for 2, 2 waits for 0: every rank waits, no group is complete.
  auto results = run_ranks(3, [](ProcessGroup& g) {
    const int r = g.rank();
    std::vector<int> members = {r, (r + 1) % 3};
    std::sort(members.begin(), members.end());
    g.check_collective(sig(CollectiveKind::kBarrier, {}, 20 + static_cast<std::uint32_t>(r)), members);
  });
  for (const auto& res : results) {
    REQUIRE(res.exit_code == 1);
    REQUIRE(res.kind() == "Deadlock");
  }
  REQUIRE(results[0].message() ==
          "deadlock across processes: rank 0 waits at barrier over 'i' #0 (f.py:20:5) but rank 1 waits at barrier "
          "over 'i' #0 (f.py:21:5)");
}

TEST_CASE("dist::ProcessGroup: a rank that raises stops the others with its error", "[dist]") {
  auto results = run_ranks(3, [](ProcessGroup& g) {
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), kAll3);
    if (g.rank() == 1) {
      g.fail("ValueError: bad input on rank 1");
      return;
    }
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 12), kAll3);
  });
  for (int r : {0, 2}) {
    REQUIRE(results[static_cast<std::size_t>(r)].kind() == "RankFailed");
    REQUIRE(results[static_cast<std::size_t>(r)].message() == "rank 1 raised: ValueError: bad input on rank 1");
  }
}

TEST_CASE("dist::ProcessGroup: a rank whose process disappears is reported, not waited for", "[dist]") {
  auto results = run_ranks(2, [](ProcessGroup& g) {
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), {0, 1});
    if (g.rank() == 1) ::_exit(3);  // no state posted: as if killed
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 12), {0, 1});
  });
  REQUIRE(results[1].exit_code == 3);
  REQUIRE(results[0].kind() == "RankLost");
  const std::string m = results[0].message();
  REQUIRE(m.rfind("rank 1 (pid ", 0) == 0);
  REQUIRE(m.find(") exited without reporting, after entering 1 collective(s); it was running") != std::string::npos);
}

TEST_CASE("dist::ProcessGroup: bad ranks and reused stores are refused", "[dist]") {
  TempDir tmp;
  auto message_of = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.report().message;
    }
    return std::string("no error");
  };
  REQUIRE(message_of([&] { ProcessGroup g(FileStore(tmp.path), 2, 2); }) == "rank 2 of a world of 2 is out of range");
  {
    ProcessGroup g(FileStore(tmp.path), 0, 1);
    g.check_collective(sig(CollectiveKind::kPsum, {1}, 10), {0});  // a world of one meets itself
    g.finish();
  }
  REQUIRE(message_of([&] { ProcessGroup g(FileStore(tmp.path), 0, 1); }) ==
          "the store " + tmp.path + " already holds the state of rank 0 (an earlier job used this directory)");
}

TEST_CASE("dist::ProcessGroup: the poll hook can stop a rank that waits for a slow one", "[dist]") {
  // The runtime's hook throws its Interrupted error: SIGINT on one host must
  // not leave that process waiting for the others.
  auto results = run_ranks(2, [](ProcessGroup& g) {
    if (g.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // busy elsewhere, never arrives
      return;
    }
    int polls = 0;
    g.set_poll_hook([&polls] {
      if (++polls == 3) {
        Report r = make_report("Interrupted", "interrupted by SIGINT");
        throw Error(std::move(r));
      }
    });
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), {0, 1});
  });
  REQUIRE(results[0].kind() == "Interrupted");
  REQUIRE(results[0].message() == "interrupted by SIGINT");
  REQUIRE(results[1].exit_code == 0);
}

TEST_CASE("dist::ProcessGroup: waiting for a rank that never joined says so once, and Ctrl-C still stops it",
          "[dist]") {
  TempDir tmp;
  ProcessGroup g(FileStore(tmp.path), 0, 3);  // ranks 1 and 2 are never started
  std::vector<std::string> notices;
  g.set_notice([&](const std::string& text) { notices.push_back(text); }, std::chrono::milliseconds(20));
  int polls_after_notice = 0;
  g.set_poll_hook([&] {
    if (!notices.empty() && ++polls_after_notice == 3) throw Error(make_report("Interrupted", "interrupted by SIGINT"));
  });
  try {
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), kAll3);
    FAIL("the wait should have been interrupted");
  } catch (const Error& e) {
    REQUIRE(e.report().kind == "Interrupted");
  }
  REQUIRE(notices == std::vector<std::string>{
                         "spmd: rank 0 is waiting for ranks {1, 2}, which have not joined the store " + tmp.path +
                         " yet: start them with --process-id and --store " + tmp.path + " (Ctrl-C stops this process)"});
  g.fail("interrupted");
}

TEST_CASE("dist::ProcessGroup: exchange gives every member each member's bytes, a member that ends first stops it",
          "[dist]") {
  auto ok = run_ranks(3, [](ProcessGroup& g) {
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), kAll3);
    std::vector<std::string> got = g.exchange("g", 0, "bytes of rank " + std::to_string(g.rank()), kAll3);
    if (got != std::vector<std::string>{"bytes of rank 0", "bytes of rank 1", "bytes of rank 2"}) {
      throw std::runtime_error("wrong bytes");
    }
    // Ranks 0 and 2 only, binary bytes.
    if (g.rank() != 1) {
      got = g.exchange("h", 0, std::string("\0x", 2) + std::to_string(g.rank()), {0, 2});
      if (got != std::vector<std::string>{std::string("\0x0", 3), std::string("\0x2", 3)}) {
        throw std::runtime_error("wrong sub-group bytes");
      }
    }
  });
  for (const auto& r : ok) {
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.report.is_null());
  }
  // Rank 1 passes the check, then ends without posting its part.
  auto stopped = run_ranks(2, [](ProcessGroup& g) {
    g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), {0, 1});
    if (g.rank() == 1) return;
    g.exchange("g", 0, "mine", {0, 1});
  });
  REQUIRE(stopped[1].exit_code == 0);
  REQUIRE(stopped[0].exit_code == 1);
  REQUIRE(stopped[0].kind() == "RankFailed");
  REQUIRE(stopped[0].message() == "rank 1 finished without sending its part of exchange g.0");
}

TEST_CASE("dist::ProcessGroup: a long job keeps a few files per rank in the store", "[dist]") {
  auto results = run_ranks(3, [](ProcessGroup& g) {
    for (int k = 0; k < 50; ++k) {
      g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), kAll3);
      g.exchange("g", k, std::string(64, static_cast<char>('a' + g.rank())), kAll3);
    }
    g.check_collective(sig(CollectiveKind::kBarrier, {}, 11), kAll3);
    if (g.rank() != 0) return;
    // 3 states, each rank's last signature (and the one before, for a rank
    // still finishing the barrier) and its last data: 12 at most, where
    // keeping everything would leave 306 files.
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(g.store().dir())) {
      if (entry.path().filename().string()[0] != '.') ++files;
    }
    if (files > 12) throw std::runtime_error("the store holds " + std::to_string(files) + " files");
  });
  for (const auto& r : results) {
    INFO(r.report.dump());
    REQUIRE(r.exit_code == 0);
  }
}

TEST_CASE("dist::ProcessGroup: ranks started with different process counts are told so, not deadlocked", "[dist]") {
  // Issue 19, finding 20: once "deadlock: rank 0 waits at psum #0 but rank 1 waits at psum #0".
  auto results = run_ranks(
      2,
      [](ProcessGroup& g) {
        std::vector<int> all(static_cast<std::size_t>(g.world()));
        std::iota(all.begin(), all.end(), 0);
        g.check_collective(sig(CollectiveKind::kPsum, {4}, 10), all);  // each its own idea of "every rank"
      },
      {2, 3});
  REQUIRE(results[0].exit_code == 1);
  REQUIRE(results[0].kind() == "UsageError");
  REQUIRE(results[0].message() ==
          "the processes of this job disagree on their number: rank 1 was started with --num-processes 3, this "
          "rank (0) with 2");
  REQUIRE(results[1].exit_code == 1);
  REQUIRE(results[1].kind() == "UsageError");
}
