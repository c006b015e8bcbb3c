// The GIL as device fibers share it: who takes it, who gives it up, and what
// happens to a thread that asks for it once its program (or the interpreter)
// is ending.

#include <unistd.h>

#include "python/bindings.h"
#include "python/program_threads.h"
#include "spmd/runtime/device.h"
#include "util/tsan_annotations.h"

namespace spmd::python {

namespace {
#if PYBIND11_INTERNALS_VERSION == 4
auto& life_support_key() { return py::detail::get_local_internals().loader_life_support_tls_key; }
#else
auto& life_support_key() { return py::detail::get_internals().loader_life_support_tls_key; }
#endif

const char g_gil_token = 0;
}  // namespace

void gil_acquired() { detail::tsan_acquire(&g_gil_token); }
void gil_releasing() { detail::tsan_release(&g_gil_token); }

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

void take_gil(PyThreadState* state) {
  // Once the interpreter finalizes, CPython ends any other thread that asks
  // for the GIL with pthread_exit, whose forced unwind cannot leave a fiber's
  // stack (std::terminate): a device fiber's thread waits for the process to
  // end instead, as CPython 3.14 leaves such threads. The host's own frames
  // let the unwind pass (~FiberSafeGilRelease may throw it).
  if (in_device() && interpreter_finalizing()) {
    for (;;) ::pause();
  }
  PyEval_RestoreThread(state);
  gil_acquired();
}

FiberSafeGilRelease::FiberSafeGilRelease()
    : life_support_(PYBIND11_TLS_GET_VALUE(life_support_key())), host_(!in_device()) {
  if (host_) host_run_begins();
  PYBIND11_TLS_REPLACE_VALUE(life_support_key(), nullptr);
  gil_releasing();
  state_ = PyEval_SaveThread();
}

FiberSafeGilRelease::~FiberSafeGilRelease() noexcept(false) {
  // First the frames: taking the GIL may end the thread, whose unwind passes
  // pybind11's frames, which check their stack. Nothing else runs on this OS
  // thread while it waits for the GIL.
  PYBIND11_TLS_REPLACE_VALUE(life_support_key(), life_support_);
  if (host_) host_run_returns();
  take_gil(state_);
}

}  // namespace spmd::python
