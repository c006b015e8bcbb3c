#include "python/program_threads.h"

#include <Python.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <thread>
#include <vector>

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
// How long the daemon threads of an ended program get to end.
constexpr auto kDaemonGrace = std::chrono::seconds(1);

bool thread_of_ended_program() {
  return g_ended.load(std::memory_order_acquire) &&
         PyThread_get_thread_ident() != g_program_thread.load(std::memory_order_relaxed);
}

// Threads that wait for the process to end (their idents).
std::mutex g_parked_mu;
std::set<unsigned long> g_parked;

[[noreturn]] void wait_for_process_end() {
  {
    std::lock_guard<std::mutex> lock(g_parked_mu);
    g_parked.insert(PyThread_get_thread_ident());
  }
  for (;;) ::pause();
}

bool parked(unsigned long ident) {
  std::lock_guard<std::mutex> lock(g_parked_mu);
  return g_parked.count(ident) > 0;
}

// The program's other threads still running Python (with the GIL): its
// daemon threads, and non-daemon ones whose join the exit never finished
// (stopped by SIGINT or the time budget), which CPython too leaves to
// finalization once threading._shutdown was interrupted.
std::vector<py::object> running_threads() {
  std::vector<py::object> out;
  py::module_ threading = py::module_::import("threading");
  py::object dummy = threading.attr("_DummyThread");
  const unsigned long self = g_program_thread.load(std::memory_order_relaxed);
  for (py::handle t : threading.attr("enumerate")()) {
    if (py::isinstance(t, dummy) || !t.attr("is_alive")().cast<bool>()) continue;
    py::object ident = t.attr("ident");
    if (ident.is_none() || ident.cast<unsigned long>() == self || parked(ident.cast<unsigned long>())) continue;
    out.push_back(py::reinterpret_borrow<py::object>(t));
  }
  return out;
}

}  // namespace

void program_begins() {
  g_program_thread.store(PyThread_get_thread_ident(), std::memory_order_relaxed);
  g_ended.store(false, std::memory_order_release);
}

// Stops the device runs other threads are in, and waits until they left them.
static void stop_device_runs(Runtime* runtime);

void program_ended(Runtime* runtime, bool end_threads) {
  g_ended.store(true, std::memory_order_seq_cst);
  if (!end_threads) {
    stop_device_runs(runtime);
    return;
  }
  // The daemon threads that run Python end as CPython ends them at exit,
  // before the next program's imports could meet them: SystemExit at their
  // next bytecode (which a thread ends on quietly); a blocking call returns
  // first. Those in a device run stop below and never come back.
  for (const py::object& t : running_threads()) {
    PyThreadState_SetAsyncExc(t.attr("ident").cast<unsigned long>(), PyExc_SystemExit);
  }
  stop_device_runs(runtime);
  // Bounded: a thread in a long blocking call is left to end with the process.
  const auto deadline = std::chrono::steady_clock::now() + kDaemonGrace;
  while (!running_threads().empty() && std::chrono::steady_clock::now() < deadline) {
    gil_releasing();
    PyThreadState* state = PyEval_SaveThread();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    take_gil(state);
  }
}

static void stop_device_runs(Runtime* runtime) {
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

bool host_runs_in_progress() { return g_host_runs.load(std::memory_order_seq_cst) > 0; }

}  // namespace spmd::python
