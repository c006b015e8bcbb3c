#include "python/host_signals.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "python/bindings.h"
#include "python/python_errors.h"
#include "spmd/error.h"
#include "spmd/runtime/device.h"

namespace spmd::python {

namespace {

using clock = std::chrono::steady_clock;

// How often a device run serves the host's signals: well within "about a
// second" for a Ctrl-C or a test timeout, and rare enough that taking the
// GIL costs nothing measurable.
constexpr auto kServeEvery = std::chrono::milliseconds(50);

// The main thread's state while its run is in progress (null otherwise).
std::atomic<PyThreadState*> g_released{nullptr};
std::atomic<unsigned long> g_main_ident{0};
std::atomic<clock::rep> g_next_serve{0};
// The exception a handler raised in this run; touched only with the GIL.
PyObject* g_handler_exception = nullptr;
// A handler that itself reaches a safe point (it runs on a device's fiber)
// is not served again from within.
thread_local bool t_serving = false;

std::optional<Report> serve_signals() {
  PyThreadState* main_state = g_released.load(std::memory_order_acquire);
  if (main_state == nullptr || t_serving) return std::nullopt;
  // Only the main OS thread runs Python's signal handlers; its ident needs no GIL.
  if (PyThread_get_thread_ident() != g_main_ident.load(std::memory_order_relaxed)) return std::nullopt;
  const clock::rep now = clock::now().time_since_epoch().count();
  if (now < g_next_serve.load(std::memory_order_relaxed)) return std::nullopt;
  g_next_serve.store(now + std::chrono::duration_cast<clock::duration>(kServeEvery).count(), std::memory_order_relaxed);

  if (interpreter_finalizing()) return std::nullopt;
  t_serving = true;
  take_gil(main_state);
  std::optional<Report> stop;
  if (PyErr_CheckSignals() != 0) {
    PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    if (trace != nullptr && value != nullptr) PyException_SetTraceback(value, trace);
    Py_XDECREF(type);
    Py_XDECREF(trace);
    if (value != nullptr) {
      std::string name = Py_TYPE(value)->tp_name;
      std::string text = exception_text(value);
      Py_XDECREF(g_handler_exception);
      g_handler_exception = value;
      stop = make_report("Interrupted",
                         "a Python signal handler raised " + name + (text.empty() ? "" : ": " + text) +
                             " during the device run",
                         "the handler's exception is raised where the program started the run; this report shows "
                         "where each device stood");
    }
  }
  gil_releasing();
  PyEval_SaveThread();
  t_serving = false;
  return stop;
}

}  // namespace

SignalsDuringRun::SignalsDuringRun(PyThreadState* released) {
  // The GIL is released: ask the thread, not the interpreter.
  if (released == nullptr || in_device() || g_released.load(std::memory_order_acquire) != nullptr) return;
  if (PyThread_get_thread_ident() != g_main_ident.load(std::memory_order_relaxed)) return;
  g_next_serve.store((clock::now() + kServeEvery).time_since_epoch().count(), std::memory_order_relaxed);
  g_released.store(released, std::memory_order_release);
  armed_ = true;
}

SignalsDuringRun::~SignalsDuringRun() {
  if (armed_) g_released.store(nullptr, std::memory_order_release);
}

void SignalsDuringRun::raise_handler_exception(const Error* run_error) {
  if (g_handler_exception == nullptr) return;
  py::object exc = py::reinterpret_steal<py::object>(g_handler_exception);
  g_handler_exception = nullptr;
  if (run_error != nullptr && py::hasattr(exc, "add_note")) {
    try {
      exc.attr("add_note")(std::string(run_error->what()));
    } catch (py::error_already_set&) {
      // A note the exception refuses leaves the exception itself.
    }
  }
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

void install_signals_during_runs() {
  py::object main = py::module_::import("threading").attr("main_thread")();
  g_main_ident.store(main.attr("ident").cast<unsigned long>(), std::memory_order_relaxed);
  set_safe_point_check(&serve_signals);
}

}  // namespace spmd::python
