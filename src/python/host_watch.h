#pragma once
// Stops the program's Python code on the host when the run is interrupted
// (SIGINT/SIGTERM reach the Runtime) or its --max-seconds budget runs out,
// even in a pure-Python loop that never enters spmdsim: a watcher thread
// raises _spmd.HostStop in the main thread (a BaseException, which user
// code's `except Exception` does not catch), and the runner reports the
// Runtime's Interrupted error or BudgetExceeded at the line the program was
// running. Code inside pmap is stopped by the runtime itself, and time in
// device runs (Runtime::device_run_time, however the run started: pmap, a
// jit or a shard_map) counts against the run's budget, not the host's.
//
// The stop is a real-time signal to the main thread whose Python handler
// (installed once, where the program has none of its own on that signal)
// raises HostStop: it runs between two bytecodes, and it also ends a blocking
// call (time.sleep, a lock, a thread's join, Event.wait: EINTR), where an
// asynchronous exception (the fallback) would wait for the call to return.

#include <Python.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <pthread.h>
#include <thread>

namespace spmd {
class Runtime;
}

namespace spmd::python {

class HostWatch {
 public:
  /// `interrupted` tells (from the watcher thread) whether the run was
  /// interrupted; the error is then the Runtime's (made if need be).
  /// `max_seconds` 0: no budget. Starts watching at once.
  HostWatch(std::function<bool()> interrupted, double max_seconds);
  /// Stops watching (and waits for the watcher thread).
  ~HostWatch();
  HostWatch(const HostWatch&) = delete;
  HostWatch& operator=(const HostWatch&) = delete;

 private:
  void watch();
  std::function<bool()> interrupted_;
  double max_seconds_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  unsigned long main_thread_;
  pthread_t main_pthread_;
  std::thread thread_;
};

/// The error that _spmd.HostStop stands for, once a HostWatch raised it.
std::exception_ptr host_stop_error();

}  // namespace spmd::python
