#include "python/program_threads.h"

#include <Python.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "python/bindings.h"
#include "spmd/runtime/runtime.h"

namespace spmd::python {

namespace {

std::atomic<bool> g_ended{false};
std::atomic<unsigned long> g_program_thread{0};
// Device runs that host code is in, the GIL released (any thread).
std::atomic<int> g_host_runs{0};

// How long an ended program's device runs get to stop: a run stops at its
// devices' next safe point; only a device blocked in a Python call of its own
// (time.sleep under disable_jit) takes longer.
constexpr auto kStopGrace = std::chrono::seconds(5);

bool thread_of_ended_program() {
  return g_ended.load(std::memory_order_acquire) &&
         PyThread_get_thread_ident() != g_program_thread.load(std::memory_order_relaxed);
}

[[noreturn]] void wait_for_process_end() {
  for (;;) ::pause();
}

}  // namespace

void program_begins() {
  g_program_thread.store(PyThread_get_thread_ident(), std::memory_order_relaxed);
  g_ended.store(false, std::memory_order_release);
}

void program_ended(Runtime* runtime) {
  g_ended.store(true, std::memory_order_seq_cst);
  if (g_host_runs.load(std::memory_order_seq_cst) == 0) return;
  if (runtime != nullptr) runtime->interrupt("the program ended while a daemon thread's device run was in progress");
  const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
  gil_releasing();
  PyThreadState* state = PyEval_SaveThread();
  while (g_host_runs.load(std::memory_order_seq_cst) > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const bool stopped = g_host_runs.load(std::memory_order_seq_cst) == 0;
  take_gil(state);
  if (stopped) return;
  // The run cannot be freed under the thread still in it: end the process.
  std::cout << std::flush;
  std::cerr << "spmd: a daemon thread's device run did not stop within " << kStopGrace.count()
            << " s of the program's end (a device blocked in a Python call under jax.disable_jit?); exiting\n"
            << std::flush;
  std::fflush(nullptr);
  std::_Exit(1);
}

void host_run_begins() {
  if (thread_of_ended_program()) {
    gil_releasing();
    PyEval_SaveThread();
    wait_for_process_end();
  }
  g_host_runs.fetch_add(1, std::memory_order_seq_cst);
}

void host_run_returns() {
  const bool ended = thread_of_ended_program();
  g_host_runs.fetch_sub(1, std::memory_order_seq_cst);
  if (ended) wait_for_process_end();
}

}  // namespace spmd::python
