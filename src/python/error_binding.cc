// spmd errors crossing into Python.
//
// A C++ spmd::Error (a deadlock, a mismatch, a shape error while tracing)
// becomes a Python exception of class _spmd.SpmdError carrying the report's
// fields and the original C++ exception. The user's program may catch it;
// when it escapes, the runner rethrows the original, so the CLI reports it
// exactly as it reports any other run.

#include "python/bindings.h"
#include "spmd/error.h"

namespace spmd::python {

namespace {

PyObject* g_spmd_error = nullptr;
PyObject* g_host_stop = nullptr;

void capsule_free(PyObject* capsule) {
  delete static_cast<std::exception_ptr*>(PyCapsule_GetPointer(capsule, "spmd.error"));
}

void raise_spmd_error(const Error& e, std::exception_ptr p) {
  const Report& r = e.report();
  // str(e) is the whole report: what a test runner shows for a failed test.
  py::object exc = py::reinterpret_steal<py::object>(PyObject_CallFunction(g_spmd_error, "s", e.what()));
  if (!exc) return;  // a Python error is already set
  exc.attr("kind") = r.kind;
  exc.attr("message") = r.message;
  exc.attr("hint") = r.hint;
  exc.attr("report") = std::string(e.what());
  exc.attr("_error") = py::reinterpret_steal<py::object>(
      PyCapsule_New(new std::exception_ptr(std::move(p)), "spmd.error", capsule_free));
  PyErr_SetObject(g_spmd_error, exc.ptr());
}

}  // namespace

PyObject* host_stop_type() { return g_host_stop; }

void set_python_error(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    raise_spmd_error(e, p);
  }
}

std::exception_ptr original_error(const py::handle& exc) {
  if (!py::hasattr(exc, "_error")) return nullptr;
  py::object cap = exc.attr("_error");
  if (!PyCapsule_CheckExact(cap.ptr())) return nullptr;
  auto* p = static_cast<std::exception_ptr*>(PyCapsule_GetPointer(cap.ptr(), "spmd.error"));
  return p ? *p : nullptr;
}

void bind_errors(py::module_& m) {
  g_spmd_error = PyErr_NewExceptionWithDoc("_spmd.SpmdError", "an error reported by spmdsim's runtime", PyExc_Exception,
                                           nullptr);
  m.attr("SpmdError") = py::handle(g_spmd_error);
  g_host_stop = PyErr_NewExceptionWithDoc("_spmd.HostStop",
                                          "raised in the program's main thread when the run is interrupted or out of "
                                          "time (a BaseException: `except Exception` does not stop it)",
                                          PyExc_BaseException, nullptr);
  m.attr("HostStop") = py::handle(g_host_stop);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise_spmd_error(e, p);
    }
  });
}

}  // namespace spmd::python
