#include "python/host_watch.h"

#include <Python.h>

#include <pybind11/pybind11.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <sstream>

#include "python/bindings.h"
#include "python/python_errors.h"
#include "spmd/error.h"
#include "spmd/runtime/runtime.h"

namespace spmd::python {

namespace {

// The error the program stops with, set before the watcher raises
// _spmd.HostStop in the main thread.
std::mutex g_stop_mu;
std::exception_ptr g_stop_error;
bool g_stop_delivered = false;  // the wake handler raised it (under g_stop_mu)

using clock = std::chrono::steady_clock;

// Time the program's devices ran so far (none before the Runtime is made).
clock::duration device_time() {
  Runtime* rt = started_runtime();
  return rt != nullptr ? rt->device_run_time() : clock::duration{};
}

// Whether a device run has the interrupt, or will throw it: in progress, or
// one took it already.
bool interrupt_in_runs() {
  Runtime* rt = started_runtime();
  return rt != nullptr && (rt->device_run_in_progress() || rt->interrupt_reached_run());
}

std::exception_ptr budget_error(double max_seconds) {
  std::ostringstream budget;
  budget << max_seconds;
  return std::make_exception_ptr(BudgetExceeded(make_report(
      "BudgetExceeded", "the host program exceeded its time budget of " + budget.str() + " s",
      "a loop outside pmap may never end; raise the budget (--max-seconds) if the program is just slow")));
}

// Needs the GIL: the Runtime may be made now (bindings.h, runtime()).
std::exception_ptr interrupt_error() {
  try {
    runtime().check_interrupted();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

// The signal that wakes a blocked main thread: one programs leave alone.
int wake_signal() { return SIGRTMAX - 2; }
// Whether wake_handler() was installed on it (once per interpreter).
std::atomic<bool> g_wake_installed{false};

// How long a device run may outlive its stop (the interrupt, or its time
// budget) before the stop is raised in the main thread: the runtime stops
// devices at their safe points within milliseconds; one that has not
// stopped by then is blocked in a Python call of its own.
constexpr auto kRunStopGrace = std::chrono::milliseconds(500);

std::exception_ptr run_budget_error(double max_seconds) {
  std::ostringstream budget;
  budget << max_seconds;
  return std::make_exception_ptr(BudgetExceeded(make_report(
      "BudgetExceeded",
      "the run exceeded its time budget of " + budget.str() + " s while a device was blocked in a Python call",
      "under jax.disable_jit() a device's Python that blocks (a lock another device holds across a collective, "
      "Event.wait, time.sleep) holds up every device on its thread; release locks before collectives, or raise "
      "the budget (--max-seconds) if the call just takes long")));
}

// The wake signal's Python handler: HostStop once a stop is due. A plain C
// function, not a pybind11 one: it may run on a device fiber (a device
// blocked in a Python call under disable_jit), where pybind11's
// error_already_set would take the GIL through the per-OS-thread
// PyGILState API and wait for itself.
PyObject* raise_host_stop(PyObject*, PyObject*) {
  {
    std::lock_guard<std::mutex> lock(g_stop_mu);
    if (!g_stop_error || g_stop_delivered) Py_RETURN_NONE;
    g_stop_delivered = true;
  }
  PyErr_SetNone(host_stop_type());
  return nullptr;
}

PyObject* wake_handler() {
  static PyMethodDef method{"_spmd_host_stop", raise_host_stop, METH_VARARGS, "raises _spmd.HostStop once a stop is due"};
  static PyObject* handler = PyCFunction_New(&method, nullptr);
  return handler;
}

// Whether the wake signal still runs wake_handler (the program may have
// taken it since). Needs the GIL.
bool wake_handler_installed() {
  try {
    return pybind11::module_::import("signal").attr("getsignal")(wake_signal()).is(pybind11::handle(wake_handler()));
  } catch (const pybind11::error_already_set&) {
    return false;
  }
}

}  // namespace

std::exception_ptr host_stop_error() {
  std::lock_guard<std::mutex> lock(g_stop_mu);
  return g_stop_error;
}

HostWatch::HostWatch(std::function<bool()> interrupted, double max_seconds)
    : interrupted_(std::move(interrupted)),
      max_seconds_(max_seconds),
      main_thread_(PyThread_get_thread_ident()),
      main_pthread_(pthread_self()) {
  {
    std::lock_guard<std::mutex> lock(g_stop_mu);
    g_stop_error = nullptr;
    g_stop_delivered = false;
  }
  // Once per interpreter, where the program's signal is free; it stays (a
  // handler removed while a signal is on its way is CPython's "ignored due
  // to race condition" warning), and does nothing without a stop.
  static const bool installed = [] {
    try {
      pybind11::module_ signal = pybind11::module_::import("signal");
      pybind11::object previous = signal.attr("getsignal")(wake_signal());
      if (!previous.is_none() && !previous.equal(signal.attr("SIG_DFL"))) return false;
      signal.attr("signal")(wake_signal(), pybind11::handle(wake_handler()));
      g_wake_installed.store(true);
      return true;
    } catch (const pybind11::error_already_set&) {
      return false;  // not the main thread: asynchronous exceptions only
    }
  }();
  (void)installed;
  thread_ = std::thread([this] { watch(); });
}

HostWatch::~HostWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  {
    // A wake signal still on its way runs its handler at the next bytecode,
    // wherever that is (the CLI's report code): it must find nothing to raise.
    std::lock_guard<std::mutex> lock(g_stop_mu);
    g_stop_delivered = true;
  }
  {
    // The watcher may be waiting for the GIL to raise: let it have it.
    FiberSafeGilRelease release;
    thread_.join();
  }
  // A stop raised as the program was ending may still be pending: it must
  // not surface in whatever Python runs next (the next run's imports).
  PyThreadState_SetAsyncExc(main_thread_, nullptr);
}

void HostWatch::watch() {
  // The host budget counts the program's own time: device runs have theirs.
  const auto start = clock::now();
  const auto device_time_before = device_time();
  const auto budget = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(max_seconds_));
  auto over_budget = [&] {
    const auto now = clock::now();
    return (now - start) - (device_time() - device_time_before) > budget;
  };
  std::optional<clock::time_point> interrupted_since;
  std::unique_lock<std::mutex> lock(mu_);
  // Interrupts are polled: Runtime::interrupt comes from a signal thread that
  // knows nothing of Python. 20 ms is well below what a person notices.
  while (!cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return done_; })) {
    const bool interrupted = interrupted_();
    if (interrupted && !interrupted_since) interrupted_since = clock::now();
    if (Runtime* rt = started_runtime(); rt != nullptr && rt->device_run_in_progress() && eager_run_in_progress()) {
      // The runtime stops a run at its devices' safe points. A device blocked
      // in a Python call (disable_jit: lock.acquire, Event.wait, time.sleep)
      // blocks the OS thread its fiber shares with the others and reaches
      // none: once the run overstays its stop, the stop is raised in the main
      // thread as for host code. It ends the blocking call (EINTR), and the
      // device that made it raises it. No GIL: that device may hold it.
      std::exception_ptr stop;
      if (interrupted && clock::now() - *interrupted_since > kRunStopGrace) {
        try {
          rt->check_interrupted();
        } catch (...) {
          stop = std::current_exception();
        }
      } else if (!interrupted && max_seconds_ > 0 && rt->current_run_time() > budget + kRunStopGrace) {
        stop = run_budget_error(max_seconds_);
      }
      if (!stop || !g_wake_installed.load()) continue;
      {
        std::lock_guard<std::mutex> guard(g_stop_mu);
        g_stop_error = stop;
      }
      pthread_kill(main_pthread_, wake_signal());
      return;  // once, as below
    }
    if (!interrupted && !(max_seconds_ > 0 && over_budget())) continue;
    // Inside a device run the runtime stops the devices itself and its error,
    // with where every device stood, reaches the program: raising here too
    // would race it with a bare host report.
    // Likewise once a run took the interrupt: its error is on its way to the
    // program, which may be converting it (a stop raised then would land in
    // that C++ code). A program that catches it meets it again at its next
    // pmap; the CLI's grace period ends one that loops on the host instead.
    if (interrupted && interrupt_in_runs()) continue;
    // An asynchronous exception reaches the main thread between two
    // bytecodes, whatever Python loop it is in (a pending call would wait
    // for the main thread to look). Raising it needs the GIL: the main
    // thread gives it up every few milliseconds while it runs Python.
    lock.unlock();
    PyGILState_STATE gil = PyGILState_Ensure();
    gil_acquired();
    {
      std::lock_guard<std::mutex> stop(g_stop_mu);
      g_stop_error = interrupted ? interrupt_error() : budget_error(max_seconds_);
    }
    // The wake handler runs between two bytecodes too, and ends a blocking
    // call besides; without it, an asynchronous exception.
    if (wake_handler_installed()) {
      pthread_kill(main_pthread_, wake_signal());
    } else {
      PyThreadState_SetAsyncExc(main_thread_, host_stop_type());
    }
    gil_releasing();
    PyGILState_Release(gil);
    // Once is enough: the program ends with that error (or has caught it,
    // and the runtime's own checks stop it at its next pmap).
    return;
  }
}

}  // namespace spmd::python
