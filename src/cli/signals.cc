#include "cli/signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cli/scenario_runner.h"
#include "spmd/runtime/runtime.h"

namespace spmd::cli {

namespace {
std::atomic<bool> g_finished{false};
constexpr auto kGrace = std::chrono::seconds(3);
}  // namespace

void mark_finished() { g_finished.store(true); }

void install_signal_handling() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) return;
    const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    int code = 128 + sig;
    if (g_finished.load()) {
      std::cout << std::flush;
      std::_Exit(code);
    }
    std::cerr << "\nspmd: " << name << " received: stopping every device and reporting where each stands\n"
              << std::flush;
    if (Runtime* rt = active_runtime().load()) rt->interrupt(std::string("interrupted by ") + name);
    auto deadline = std::chrono::steady_clock::now() + kGrace;
    while (std::chrono::steady_clock::now() < deadline) {
      if (g_finished.load()) return;  // main prints the report and exits
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::cout << std::flush;
    std::cerr << "spmd: the program did not stop within 3 s (it runs on the host, outside any pmap, or in code "
                 "that never reaches a collective or a step count); exiting\n"
              << std::flush;
    std::_Exit(code);
  }).detach();
}

}  // namespace spmd::cli
