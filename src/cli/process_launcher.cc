#include "cli/process_launcher.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "spmd/error.h"

namespace spmd::cli {

namespace {

struct Child {
  pid_t pid = -1;
  int fds[2] = {-1, -1};         // stdout, stderr
  std::string pending[2];        // a partial line per stream
  int code = -1;
};

[[noreturn]] void launch_error(const std::string& what) {
  Report r = make_report("LaunchError", what + ": " + std::strerror(errno),
                         "the launcher forks one spmd per process; check the process limit (ulimit -u)");
  throw Error(std::move(r));
}

void emit(std::ostream& os, int rank, const std::string& line) {
  os << "[process " << rank << "] " << line << '\n' << std::flush;
}

}  // namespace

LaunchResult launch_processes(const std::vector<std::string>& argv, int n, std::string store, std::ostream& out,
                              std::ostream& err) {
  LaunchResult result;
  if (store.empty()) {
    char tmpl[] = "/tmp/spmd-store-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) launch_error("cannot create a store directory under /tmp");
    store = tmpl;
  }
  result.store = store;
  std::vector<Child> children(static_cast<std::size_t>(n));
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
      std::vector<std::string> args = argv;
      args.insert(args.end(), {"--process-id", std::to_string(r), "--store", store});
      std::vector<char*> cargs;
      for (auto& a : args) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      ::execv("/proc/self/exe", cargs.data());
      ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    c.fds[0] = out_pipe[0];
    c.fds[1] = err_pipe[0];
  }
  // Relay whole lines as they come, each marked with its process.
  int open_fds = 2 * n;
  std::vector<pollfd> polls;
  char buf[4096];
  while (open_fds > 0) {
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
    if (::poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR) continue;  // a signal: the children got it too
      launch_error("poll failed");
    }
    for (std::size_t i = 0; i < polls.size(); ++i) {
      if (polls[i].revents == 0) continue;
      auto [r, s] = who[i];
      Child& c = children[static_cast<std::size_t>(r)];
      std::ostream& os = s == 0 ? out : err;
      ssize_t got = ::read(c.fds[s], buf, sizeof(buf));
      if (got > 0) {
        c.pending[s].append(buf, static_cast<std::size_t>(got));
        std::size_t nl;
        while ((nl = c.pending[s].find('\n')) != std::string::npos) {
          emit(os, r, c.pending[s].substr(0, nl));
          c.pending[s].erase(0, nl + 1);
        }
      } else if (got == 0 || (got < 0 && errno != EINTR)) {
        if (!c.pending[s].empty()) emit(os, r, c.pending[s]);
        c.pending[s].clear();
        ::close(c.fds[s]);
        c.fds[s] = -1;
        --open_fds;
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    Child& c = children[static_cast<std::size_t>(r)];
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    result.process_codes.push_back(c.code);
    result.exit_code = std::max(result.exit_code, c.code);
  }
  return result;
}

}  // namespace spmd::cli
