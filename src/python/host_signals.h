#pragma once
// The program's Python signal handlers during a device run that the host's
// main thread started. CPython runs a handler (SIGINT's KeyboardInterrupt, a
// SIGALRM timeout as pytest-timeout sets one, the program's own) between two
// bytecodes of the main thread; a long pmap holds that thread in C++ with the
// GIL released, so the handler would wait for the run to end (and a hung run
// would never end). While such a run is in progress, a device's safe point
// (runtime/device.h) on the main OS thread takes the GIL with the main
// thread's state now and then and runs the pending handlers, on the device's
// fiber stack: a handler that returns lets the run go on, as it would under
// JAX; one that raises stops the run with its per-device report, and the
// handler's exception is what the program sees where it started the run,
// with the report added as a note.

#include <Python.h>
#include <pybind11/pybind11.h>

namespace spmd {
class Error;
}

namespace spmd::python {

class SignalsDuringRun {
 public:
  /// `released`: the calling thread's state, released for the run. Serves
  /// the handlers only where the caller is Python's main thread and the
  /// host (not a device); elsewhere does nothing.
  explicit SignalsDuringRun(PyThreadState* released);
  ~SignalsDuringRun();
  SignalsDuringRun(const SignalsDuringRun&) = delete;
  SignalsDuringRun& operator=(const SignalsDuringRun&) = delete;

  /// With the GIL, after the run: when a handler raised during it, raises
  /// that exception (py::error_already_set) with `run_error`'s report (the
  /// run's, null if it has none) as a note; else returns.
  static void raise_handler_exception(const Error* run_error);

 private:
  bool armed_ = false;
};

/// Installs the safe-point check that serves the handlers (once, at import).
void install_signals_during_runs();

}  // namespace spmd::python
