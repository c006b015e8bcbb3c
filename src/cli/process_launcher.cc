#include "cli/process_launcher.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "cli/signals.h"
#include "spmd/error.h"
#include "spmd/report.h"
#include "spmd/util/json.h"

namespace spmd::cli {

namespace {

// The binary children run: a function's static, so a test binary's own
// static initializer may set it before this file's globals exist.
std::string& spmd_executable() {
  static std::string path = "/proc/self/exe";
  return path;
}

struct Child {
  pid_t pid = -1;
  int fds[2] = {-1, -1};         // stdout, stderr
  std::string pending[2];        // a partial line per stream
  int code = -1;
};

// The ranks alive, for the forced-exit hook (the signal thread): a launcher
// that exits without waiting kills them first, so no rank is orphaned.
std::mutex g_ranks_mu;
std::vector<pid_t> g_ranks;

void kill_ranks() {
  std::lock_guard<std::mutex> lock(g_ranks_mu);
  for (pid_t pid : g_ranks) ::kill(pid, SIGKILL);
}

void forget_rank(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_ranks_mu);
  g_ranks.erase(std::remove(g_ranks.begin(), g_ranks.end(), pid), g_ranks.end());
}

// The exit code of a rank from its wait status.
int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

[[noreturn]] void launch_error(const std::string& what) {
  Report r = make_report("LaunchError", what + ": " + std::strerror(errno),
                         "the launcher forks one spmd per process; check the process limit (ulimit -u)");
  throw Error(std::move(r));
}

}  // namespace

LineSink marked_lines(std::ostream& out, std::ostream& err) {
  return [&out, &err](int rank, bool is_stderr, const std::string& line) {
    std::ostream& os = is_stderr ? err : out;
    os << "[process " << rank << "] " << line << '\n' << std::flush;
  };
}

std::vector<std::string> gpus_per_process(int processes, int local_devices, const char* visible) {
  std::vector<std::string> ids;
  if (visible != nullptr && *visible != '\0') {
    std::stringstream list(visible);
    for (std::string id; std::getline(list, id, ',');) ids.push_back(id);
  } else {
    for (int i = 0; i < processes * local_devices; ++i) ids.push_back(std::to_string(i));
  }
  if (static_cast<int>(ids.size()) < processes * local_devices) return {};
  std::vector<std::string> out(static_cast<std::size_t>(processes));
  for (int r = 0; r < processes; ++r) {
    for (int i = 0; i < local_devices; ++i) {
      out[static_cast<std::size_t>(r)] += (i ? "," : "") + ids[static_cast<std::size_t>(r * local_devices + i)];
    }
  }
  return out;
}

std::vector<std::string> gpus_for_launch(const ProcessLayout& layout, const std::string& backend) {
  if (backend != "cuda" || !layout.local_devices || layout.devices % layout.processes != 0) return {};
  return gpus_per_process(layout.processes, layout.devices / layout.processes, std::getenv("CUDA_VISIBLE_DEVICES"));
}

LaunchResult launch_processes(const std::vector<std::string>& argv, int n, std::string store, const LineSink& sink,
                              const std::vector<std::string>& gpus) {
  LaunchResult result;
  const bool temporary = store.empty();
  if (temporary) {
    char tmpl[] = "/tmp/spmd-store-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) launch_error("cannot create a store directory under /tmp");
    store = tmpl;
  }
  result.store = temporary ? "" : store;
  // A store made here goes with the processes; one the user named stays.
  struct RemoveTemporary {
    const bool remove;
    const std::string& dir;
    ~RemoveTemporary() {
      std::error_code ec;
      if (remove) std::filesystem::remove_all(dir, ec);
    }
  } cleanup{temporary, store};
  std::vector<Child> children(static_cast<std::size_t>(n));
  // The ranks report within their own grace period after a forwarded
  // signal; the launcher waits for that, then relays it.
  set_forced_exit_hook(&kill_ranks);
  set_grace_seconds(20);
  const std::string executable = spmd_executable();
  for (int r = 0; r < n; ++r) {
    Child& c = children[static_cast<std::size_t>(r)];
    int out_pipe[2], err_pipe[2];
    if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) launch_error("cannot create a pipe");
    c.pid = ::fork();
    if (c.pid < 0) launch_error("cannot fork process " + std::to_string(r));
    if (c.pid == 0) {
      ::dup2(out_pipe[1], 1);
      ::dup2(err_pipe[1], 2);
      for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
      // One host, several ranks: each its own GPUs.
      if (!gpus.empty()) ::setenv("CUDA_VISIBLE_DEVICES", gpus[static_cast<std::size_t>(r)].c_str(), 1);
      // The store is passed once, as the directory chosen above (the user's
      // own --store, if any, is that one already).
      std::vector<std::string> args;
      for (std::size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] == "--store" && i + 1 < argv.size()) {
          ++i;
        } else if (argv[i].rfind("--store=", 0) != 0) {
          args.push_back(argv[i]);
        }
      }
      // Before `--`: what follows it is the program's own arguments.
      args.insert(std::find(args.begin(), args.end(), std::string("--")),
                  {"--process-id", std::to_string(r), "--store", store});
      std::vector<char*> cargs;
      for (auto& a : args) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      ::execv(executable.c_str(), cargs.data());
      ::_exit(127);
    }
    {
      std::lock_guard<std::mutex> lock(g_ranks_mu);
      g_ranks.push_back(c.pid);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    c.fds[0] = out_pipe[0];
    c.fds[1] = err_pipe[0];
  }
  // Relay whole lines as they come, each marked with its process. Reap each
  // rank as soon as it exits: a dead rank that stays a zombie looks alive
  // to the others' liveness checks (kill(pid, 0)), and they would wait for it.
  int open_fds = 2 * n;
  int running = n;
  bool forwarded = false;
  std::vector<pollfd> polls;
  char buf[4096];
  auto reap = [&] {
    for (Child& c : children) {
      if (c.code >= 0) continue;
      int status = 0;
      pid_t got = ::waitpid(c.pid, &status, WNOHANG);
      if (got == c.pid) {
        c.code = exit_code_of(status);
        forget_rank(c.pid);
        --running;
      }
    }
  };
  while (open_fds > 0 || running > 0) {
    reap();
    // SIGINT/SIGTERM to the launcher: every rank gets it, stops, and reports.
    if (int sig = received_signal(); sig != 0 && !forwarded) {
      forwarded = true;
      for (const Child& c : children) {
        if (c.code < 0) ::kill(c.pid, sig);
      }
    }
    if (open_fds == 0) {
      // Pipes closed, a rank not yet gone: wait for it without spinning.
      timespec pause{0, 10'000'000};
      ::nanosleep(&pause, nullptr);
      continue;
    }
    polls.clear();
    std::vector<std::pair<int, int>> who;  // (rank, stream)
    for (int r = 0; r < n; ++r) {
      for (int s = 0; s < 2; ++s) {
        int fd = children[static_cast<std::size_t>(r)].fds[s];
        if (fd < 0) continue;
        polls.push_back({fd, POLLIN, 0});
        who.emplace_back(r, s);
      }
    }
    if (::poll(polls.data(), polls.size(), 50) < 0) {
      if (errno == EINTR) continue;  // a signal: the children got it too
      launch_error("poll failed");
    }
    for (std::size_t i = 0; i < polls.size(); ++i) {
      if (polls[i].revents == 0) continue;
      auto [r, s] = who[i];
      Child& c = children[static_cast<std::size_t>(r)];
      ssize_t got = ::read(c.fds[s], buf, sizeof(buf));
      if (got > 0) {
        c.pending[s].append(buf, static_cast<std::size_t>(got));
        std::size_t nl;
        while ((nl = c.pending[s].find('\n')) != std::string::npos) {
          sink(r, s == 1, c.pending[s].substr(0, nl));
          c.pending[s].erase(0, nl + 1);
        }
      } else if (got == 0 || (got < 0 && errno != EINTR)) {
        if (!c.pending[s].empty()) sink(r, s == 1, c.pending[s]);
        c.pending[s].clear();
        ::close(c.fds[s]);
        c.fds[s] = -1;
        --open_fds;
      }
    }
  }
  set_forced_exit_hook(nullptr);
  for (int r = 0; r < n; ++r) {
    Child& c = children[static_cast<std::size_t>(r)];
    result.process_codes.push_back(c.code);
    result.exit_code = std::max(result.exit_code, c.code);
  }
  return result;
}

void set_spmd_executable(std::string path) { spmd_executable() = std::move(path); }

RunOutcome run_scenario_apart(const RunSettings& settings, const ProcessLayout& layout) {
  const int n = layout.processes;
  const RunSettings defaults;
  std::vector<std::string> argv = {"spmd", "run", settings.path, "--format", "json", "--breakpoints", "print",
                                   "--num-processes", std::to_string(n)};
  if (settings.devices) argv.insert(argv.end(), {"--devices", std::to_string(*settings.devices)});
  // Processes of one run schedule their devices on one thread each.
  if (settings.threads && n == 1) argv.insert(argv.end(), {"--threads", std::to_string(*settings.threads)});
  if (settings.seed) argv.insert(argv.end(), {"--seed", std::to_string(*settings.seed)});
  if (settings.max_steps) argv.insert(argv.end(), {"--max-steps", std::to_string(*settings.max_steps)});
  // --max-seconds 0 is no budget: said explicitly, since spmd run's default may differ from the caller's.
  argv.insert(argv.end(), {"--max-seconds", std::to_string(settings.max_seconds)});
  if (settings.backend != "sim") argv.insert(argv.end(), {"--backend", settings.backend});
  if (settings.watchdog_seconds != defaults.watchdog_seconds) {
    argv.insert(argv.end(), {"--watchdog-seconds", std::to_string(settings.watchdog_seconds)});
  }
  if (settings.arena_capacity != defaults.arena_capacity) {
    argv.insert(argv.end(), {"--arena-capacity", std::to_string(settings.arena_capacity) + "B"});
  }
  if (settings.stack_size != defaults.stack_size) {
    argv.insert(argv.end(), {"--stack-size", std::to_string(settings.stack_size) + "B"});
  }
  if (settings.strict) argv.emplace_back("--strict");
  if (settings.process_local_devices) {
    argv.insert(argv.end(), {"--process-devices", *settings.process_local_devices ? "local" : "all"});
  }
  std::vector<std::string> json(static_cast<std::size_t>(n));
  LaunchResult launched = launch_processes(
      argv, n, settings.store,
      [&](int rank, bool is_stderr, const std::string& line) {
        if (!is_stderr) json[static_cast<std::size_t>(rank)] += line + "\n";
      },
      gpus_for_launch(layout, settings.backend));
  RunOutcome decisive;
  decisive.exit_code = -1;
  std::string all_stdout;
  for (int r = 0; r < n; ++r) {
    RunOutcome o;
    o.file = settings.path;
    o.exit_code = launched.process_codes[static_cast<std::size_t>(r)];
    try {
      Json j = Json::parse(json[static_cast<std::size_t>(r)], "process " + std::to_string(r));
      o.status = j.find("status")->as_string();
      o.pmap_runs = static_cast<int>(j.find("pmap_runs")->as_int());
      o.device_count = static_cast<int>(j.find("device_count")->as_int());
      if (const Json* rep = j.find("report"); rep != nullptr && !rep->is_null()) {
        o.report = Report::from_json(*rep);
        o.devices = o.report->devices;
      }
      o.stdout_text = j.find("stdout")->as_string();
    } catch (const std::exception&) {
      o.status = "error";
      o.report = make_report("LaunchError",
                             "process " + std::to_string(r) + " exited with code " + std::to_string(o.exit_code) +
                                 " without a report",
                             "run it alone: spmd run " + settings.path + " --num-processes " + std::to_string(n) +
                                 " --process-id " + std::to_string(r) + " --store DIR");
    }
    if (n == 1) {
      all_stdout = o.stdout_text;
    } else {
      std::istringstream lines(o.stdout_text);
      for (std::string line; std::getline(lines, line);) all_stdout += "[process " + std::to_string(r) + "] " + line + "\n";
    }
    if (o.exit_code > decisive.exit_code) decisive = std::move(o);
  }
  decisive.stdout_text = all_stdout;
  return decisive;
}

}  // namespace spmd::cli
