#include "cli/signals.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "cli/scenario_runner.h"

namespace spmd::cli {

namespace {
std::atomic<bool> g_finished{false};
std::atomic<int> g_signal{0};
std::atomic<int> g_grace_seconds{10};
std::atomic<void (*)()> g_forced_exit_hook{nullptr};

[[noreturn]] void exit_now(int code) {
  if (auto hook = g_forced_exit_hook.load()) hook();
  std::cout << std::flush;
  std::cerr << std::flush;
  // stdout and stderr only: fflush(nullptr) would take stdin's lock too,
  // which a breakpoint prompt's read may hold until a line comes.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}
}  // namespace

void mark_finished() { g_finished.store(true); }

void set_forced_exit_hook(void (*hook)()) { g_forced_exit_hook.store(hook); }

void set_grace_seconds(int seconds) { g_grace_seconds.store(seconds); }

int received_signal() { return g_signal.load(); }

const char* signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

void install_signal_handling() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) return;
    g_signal.store(sig);
    int code = 128 + sig;
    if (g_finished.load()) exit_now(code);
    // One write: main may be printing a report, and the lines must not mix.
    std::cerr << (std::string("\nspmd: ") + signal_name(sig) +
                  " received: stopping every device and reporting where each stands\n")
              << std::flush;
    interrupt_scenarios(std::string("interrupted by ") + signal_name(sig));
    // Main prints the report and exits; wait for it, or for a second signal.
    const int grace = g_grace_seconds.load();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(grace);
    while (std::chrono::steady_clock::now() < deadline) {
      if (g_finished.load()) return;
      timespec poll{0, 20'000'000};
      int again = sigtimedwait(&set, nullptr, &poll);
      if (again > 0) {
        std::cerr << (std::string("\nspmd: ") + signal_name(again) + " received again: exiting without the report\n");
        exit_now(128 + sig);
      }
    }
    std::cerr << "spmd: the program did not stop within " << grace
              << " s (it is inside one long operation that never reaches a statement, a collective or a step "
                 "count); exiting\n";
    exit_now(code);
  }).detach();
}

}  // namespace spmd::cli
