// spmd_soak: runs thousands of random scenarios (tools/bench/soak/program.h)
// through `spmd run`, in this process (cli::run_scenario) and as separate
// spmd processes, and checks every verdict (ok / deadlock / mismatch) against
// the oracle (oracle.h). Not a test: a load check, run by hand (see README,
// "Reliability"). Exits 1 when any verdict is wrong.
//
//   spmd_soak [--runs 10000] [--seed 1] [--spmd build/bin/spmd] [--jobs 2]
//             [--mode both|in-process|processes] [--show SEED]

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/scenario_runner.h"
#include "oracle.h"
#include "program.h"

namespace fs = std::filesystem;
using namespace spmd::soak;

namespace {

double mib(long kib) { return static_cast<double>(kib) / 1024.0; }

long current_rss_kib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

std::string verdict_of_exit(int code) {
  switch (code) {
    case 0: return "ok";
    case 3: return "deadlock";
    case 4: return "mismatch";
    default: return "exit code " + std::to_string(code);
  }
}

struct Tally {
  long runs = 0, checked = 0, wrong = 0;
  std::map<std::string, long> by_verdict;
};

void report_wrong(const Program& p, const std::string& expected, const std::string& got, const std::string& detail,
                  const fs::path& keep) {
  fs::path file = keep / ("soak_seed_" + std::to_string(p.seed) + ".py");
  std::ofstream(file) << p.text;
  std::cerr << "WRONG VERDICT for seed " << p.seed << ": expected " << expected << ", got " << got << " (kept as "
            << file.string() << ")\n"
            << detail << "\n";
}

int run_process(const std::string& spmd, const std::string& file, int threads, std::uint64_t seed) {
  std::string t = std::to_string(threads), s = std::to_string(seed);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(spmd.c_str(), spmd.c_str(), "run", file.c_str(), "--threads", t.c_str(), "--seed", s.c_str(),
          "--max-steps", "1000000", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spmd_soak: random scenarios through spmd run, every verdict checked against an independent oracle"};
  long runs = 10000;
  std::uint64_t first_seed = 1;
  std::string spmd = "build/bin/spmd", mode = "both";
  int jobs = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::optional<std::uint64_t> show;
  app.add_option("--runs", runs, "scenarios per mode")->check(CLI::PositiveNumber);
  app.add_option("--seed", first_seed, "seed of the first scenario; scenario k uses seed + k");
  app.add_option("--spmd", spmd, "the spmd binary (for --mode processes/both)");
  app.add_option("--jobs", jobs, "processes run at once")->check(CLI::Range(1, 256));
  app.add_option("--mode", mode, "both, in-process or processes")->check(CLI::IsMember({"both", "in-process", "processes"}));
  app.add_option("--show", show, "print the scenario of this seed, each device's collectives and the verdict, then exit");
  CLI11_PARSE(app, argc, argv);

  if (show) {
    Program p = generate(*show);
    std::cout << p.text << "\n";
    for (int d = 0; d < p.devices; ++d) {
      std::cout << "device " << d << ":";
      for (const Call& c : sequence(p, d)) std::cout << " " << op_name(c.op) << "@" << c.line;
      std::cout << "\n";
    }
    std::cout << "verdict: " << verdict(p) << "\n";
    return 0;
  }

  fs::path dir = fs::temp_directory_path() / ("spmd_soak_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path keep = fs::current_path();

  std::map<std::string, long> expected_counts;
  for (long k = 0; k < runs; ++k) ++expected_counts[verdict(generate(first_seed + static_cast<std::uint64_t>(k)))];
  std::cout << "soak: " << runs << " scenarios per mode (seeds " << first_seed << ".." << first_seed + runs - 1
            << "); the oracle expects ok " << expected_counts["ok"] << ", deadlock " << expected_counts["deadlock"]
            << ", mismatch " << expected_counts["mismatch"] << "\n"
            << std::flush;
  bool all_right = true;

  if (mode != "processes") {
    Tally t;
    auto start = std::chrono::steady_clock::now();
    long rss_early = 0;
    for (long k = 0; k < runs; ++k) {
      Program p = generate(first_seed + static_cast<std::uint64_t>(k));
      std::string expected = verdict(p);
      fs::path file = dir / "in_process.py";
      std::ofstream(file) << p.text;
      spmd::cli::RunSettings s;
      s.path = file.string();
      s.threads = 1 + static_cast<int>(k % 2);
      s.seed = p.seed;
      s.max_steps = 1000000;
      s.stack_size = 256 * 1024;
      std::ostringstream out, err;
      std::istringstream in;
      spmd::cli::RunOutcome o = spmd::cli::run_scenario(s, out, err, in);
      ++t.runs;
      ++t.checked;
      ++t.by_verdict[o.status];
      if (o.status != expected) {
        ++t.wrong;
        report_wrong(p, expected, o.status, o.report ? o.report->to_text() : "", keep);
      }
      if (k == std::min(runs, 1000L) - 1) rss_early = current_rss_kib();
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("in-process: runs %ld, verdicts checked %ld, wrong verdicts %ld (ok %ld, deadlock %ld, mismatch %ld, "
                "other %ld), %.1f s, peak RSS %.1f MiB (RSS %.1f MiB after %ld runs, %.1f MiB at the end)\n",
                t.runs, t.checked, t.wrong, t.by_verdict["ok"], t.by_verdict["deadlock"], t.by_verdict["mismatch"],
                t.runs - t.by_verdict["ok"] - t.by_verdict["deadlock"] - t.by_verdict["mismatch"], secs,
                mib(ru.ru_maxrss), mib(rss_early), std::min(runs, 1000L), mib(current_rss_kib()));
    std::fflush(stdout);
    all_right = all_right && t.wrong == 0;
  }

  if (mode != "in-process") {
    if (!fs::exists(spmd)) {
      std::cerr << "spmd_soak: no spmd binary at '" << spmd << "' (use --spmd)\n";
      return 2;
    }
    Tally t;
    auto start = std::chrono::steady_clock::now();
    struct Job {
      Program p;
      std::string expected;
      fs::path file;
    };
    std::map<pid_t, Job> running;
    long next = 0;
    auto reap_one = [&] {
      int status = 0;
      pid_t pid = wait(&status);
      auto it = running.find(pid);
      if (it == running.end()) return;
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::string got = verdict_of_exit(code);
      ++t.runs;
      ++t.checked;
      ++t.by_verdict[got];
      if (got != it->second.expected) {
        ++t.wrong;
        report_wrong(it->second.p, it->second.expected, got, "rerun: " + spmd + " run FILE", keep);
      }
      fs::remove(it->second.file);
      running.erase(it);
    };
    while (next < runs || !running.empty()) {
      while (next < runs && static_cast<int>(running.size()) < jobs) {
        Job j{generate(first_seed + static_cast<std::uint64_t>(next)), "", {}};
        j.expected = verdict(j.p);
        j.file = dir / ("p" + std::to_string(next) + ".py");
        std::ofstream(j.file) << j.p.text;
        pid_t pid = run_process(spmd, j.file.string(), 1 + static_cast<int>(next % 2), j.p.seed);
        running.emplace(pid, std::move(j));
        ++next;
      }
      reap_one();
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage ru{};
    getrusage(RUSAGE_CHILDREN, &ru);
    std::printf("processes:  runs %ld, verdicts checked %ld, wrong verdicts %ld (ok %ld, deadlock %ld, mismatch %ld, "
                "other %ld), %.1f s with %d jobs, peak RSS of one spmd process %.1f MiB\n",
                t.runs, t.checked, t.wrong, t.by_verdict["ok"], t.by_verdict["deadlock"], t.by_verdict["mismatch"],
                t.runs - t.by_verdict["ok"] - t.by_verdict["deadlock"] - t.by_verdict["mismatch"], secs, jobs,
                mib(ru.ru_maxrss));
    all_right = all_right && t.wrong == 0;
  }
  fs::remove_all(dir);
  return all_right ? 0 : 1;
}
