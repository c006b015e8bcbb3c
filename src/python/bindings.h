#pragma once
// The `_spmd` module: what spmdsim's `jax` package (src/python/jax) is built
// on. Python traces; C++ checks, records and runs. Each bind_* adds one
// concept's classes and functions to the module.

#include <pybind11/pybind11.h>

#include <cxxabi.h>

#include <exception>
#include <functional>
#include <optional>

#include "python/host_signals.h"
#include "spmd/core/array.h"
#include "spmd/error.h"
#include "spmd/config.h"
#include "spmd/source_loc.h"

namespace spmd {
class Runtime;
}

namespace spmd::python {

namespace py = pybind11;

void bind_arrays(py::module_& m);
void bind_programs(py::module_& m);
void bind_runtime(py::module_& m);
void bind_errors(py::module_& m);

/// jax.debug.callback (host_callbacks.cc): takes the calls debug_callback
/// equations make, and makes them on the host after a run (needs the GIL,
/// on the host). After a run that failed, errors of the callbacks are dropped
/// (the run's is the one to report).
void install_host_callbacks();
void run_host_callbacks();
void run_host_callbacks_after_error() noexcept;
/// fn(), then the calls it recorded.
template <class F>
auto then_host_callbacks(F&& fn) {
  try {
    auto result = fn();
    run_host_callbacks();
    return result;
  } catch (abi::__forced_unwind&) {
    throw;  // a thread ended by the interpreter's finalization: no GIL, no Python
  } catch (...) {
    run_host_callbacks_after_error();
    throw;
  }
}
void link_embedded_module();

/// Makes the Runtime the module's pmap, device_count, ... use, on first use,
/// from the device count the program asked for (python_runner.h). Set by the
/// runner for the program being run; empty outside a run (a RuntimeError
/// then tells the user spmd must run the program).
using RuntimeFactory = std::function<Runtime&(std::optional<int> program_devices)>;
void set_runtime_factory(RuntimeFactory factory);
Runtime& runtime();
/// True once runtime() made the Runtime of this run.
bool runtime_started();
/// That Runtime, or null before runtime() made it; safe from any thread.
Runtime* started_runtime();

/// (file, line, column) from Python, or None, as a SourceLoc with an
/// interned file name.
SourceLoc to_loc(const py::handle& loc);

/// ThreadSanitizer's view of the GIL: libpython is not instrumented, so the
/// order its lock gives between threads is invisible to TSan; our code says
/// so where it takes (gil_acquired) and gives up (gil_releasing) the GIL
/// itself. No-ops in other builds.
void gil_acquired();
void gil_releasing();
/// PyEval_RestoreThread(state), then gil_acquired(); on a device fiber once
/// the interpreter is finalizing, never returns (see gil.cc).
void take_gil(PyThreadState* state);
bool interpreter_finalizing();

/// Releases the GIL around a call that may park the calling device fiber (a
/// collective under disable_jit), in a way that other fibers on the same OS
/// thread may run Python meanwhile: besides the thread state, pybind11's
/// per-thread stack of argument-conversion frames (loader_life_support) is
/// set aside and given back on resumption, since fibers resume in any order.
class FiberSafeGilRelease {
 public:
  FiberSafeGilRelease();
  /// May end the thread (CPython's finalization ends every other thread that
  /// asks for the GIL): so never destroy one while an exception unwinds.
  ~FiberSafeGilRelease() noexcept(false);
  FiberSafeGilRelease(const FiberSafeGilRelease&) = delete;
  FiberSafeGilRelease& operator=(const FiberSafeGilRelease&) = delete;
  PyThreadState* released_state() const { return state_; }

 private:
  void* life_support_;
  bool host_;  // released by host code (not a device fiber): see program_threads.h
  PyThreadState* state_;
};

/// A device run that host code starts (a pmap, an eager primitive that runs
/// a program): `fn()` with the GIL released, the program's signal handlers
/// served meanwhile (host_signals.h), then the host callbacks it recorded.
/// Raises a handler's exception instead of the run's error it caused.
template <class F>
auto run_from_host(F&& fn) {
  return then_host_callbacks([&] {
    decltype(fn()) result;
    std::exception_ptr error;
    {
      FiberSafeGilRelease release;  // its destructor must not run while an exception unwinds
      SignalsDuringRun signals(release.released_state());
      try {
        result = fn();
      } catch (...) {
        error = std::current_exception();
      }
    }
    try {
      if (error) std::rethrow_exception(error);
    } catch (const Error& e) {
      SignalsDuringRun::raise_handler_exception(&e);
      throw;
    }
    // Every handler's exception stops the run, which then has an error.
    return result;
  });
}

/// Whether a pmap under jax.disable_jit() (devices running Python) is in
/// progress: only its devices can block in Python calls of their own.
bool eager_run_in_progress();

/// Where the jax package lives: $SPMD_PYTHON_DIR, else the source tree's
/// src/python of this build. Reports leave its frames out of tracebacks.
std::string package_dir();
/// Where the _spmd extension module for a plain python3 lives:
/// $SPMD_PYTHON_EXTENSION_DIR, else this build's.
std::string extension_dir();

/// Adds every class and function of the `_spmd` module to `m` (the embedded
/// module of the spmd binary and the extension module for python3 alike).
void define_module(py::module_& m);

/// numpy dtype name <-> spmd DType.
DType dtype_from_name(const std::string& name);

/// The class _spmd.HostStop (see host_watch.h).
PyObject* host_stop_type();

/// Sets the Python error for a C++ spmd::Error (as the exception translator
/// does), for code that returns to CPython without pybind11.
void set_python_error(std::exception_ptr error);

/// The C++ error a Python exception of class _spmd.SpmdError carries, or
/// nullptr for any other exception.
std::exception_ptr original_error(const py::handle& exc);

}  // namespace spmd::python
