#pragma once
// Test helper: runs a command with its stdout and stderr on pipes, reads them
// as the child writes, signals it, and waits for it. Every wait is bounded by
// a safety limit (the child is killed and the test fails past it), so a test
// using it cannot hang; the limit is not an assertion about speed.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace spmd::testing {

class Subprocess {
 public:
  static constexpr std::chrono::seconds kSafetyLimit{300};

  explicit Subprocess(const std::vector<std::string>& argv) {
    int out[2], err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::close(out[0]);
      ::close(out[1]);
      ::close(err[0]);
      ::close(err[1]);
      // The child must see SIGINT/SIGTERM with their default disposition.
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    start_ = std::chrono::steady_clock::now();
  }
  ~Subprocess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /// Reads until stdout contains `marker`; false at end of output or past the safety limit.
  bool read_until(const std::string& marker) { return read_until_in(out_, marker); }
  /// The same for stderr.
  bool read_err_until(const std::string& marker) { return read_until_in(err_, marker); }

  void signal(int sig) { ::kill(pid_, sig); }

  /// Bytes the child wrote to stderr that nobody has read yet (the pipe
  /// holds 64 KiB: at that, a child writing more is blocked).
  int unread_err_bytes() const {
    int n = 0;
    return err_fd_ >= 0 && ::ioctl(err_fd_, FIONREAD, &n) == 0 ? n : -1;
  }

 private:
  bool read_until_in(const std::string& text, const std::string& marker) {
    while (text.find(marker) == std::string::npos) {
      if (!pump()) return text.find(marker) != std::string::npos;
    }
    return true;
  }

 public:

  /// Reads both streams to their end and reaps the child: its exit code, or
  /// 128 + the signal that killed it, or -1 past the safety limit (killed).
  int wait() {
    while (pump()) {
    }
    if (past_limit()) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      reaped_ = true;
      return -1;
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
  }

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  bool past_limit() const { return std::chrono::steady_clock::now() - start_ > kSafetyLimit; }

  // One round of reading; false once both streams ended or past the limit.
  bool pump() {
    if ((out_fd_ < 0 && err_fd_ < 0) || past_limit()) return false;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, 100);
    if (n <= 0) return true;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      int& fd = i == 0 ? out_fd_ : err_fd_;
      if (got <= 0) {
        ::close(fd);
        fd = -1;
      } else {
        (i == 0 ? out_ : err_).append(buf, static_cast<std::size_t>(got));
      }
    }
    return true;
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  std::string out_, err_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace spmd::testing
