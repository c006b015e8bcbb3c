// spmd errors crossing into Python.
//
// A C++ spmd::Error (a deadlock, a mismatch, a shape error while tracing)
// becomes a Python exception of class _spmd.SpmdError carrying the report's
// fields and the original C++ exception. The user's program may catch it;
// when it escapes, the runner rethrows the original, so the CLI reports it
// exactly as it reports any other run.

#include "python/bindings.h"
#include "runtime/run.h"
#include "spmd/error.h"

namespace spmd::python {

namespace {

PyObject* g_spmd_error = nullptr;
PyObject* g_host_stop = nullptr;
PyObject* g_device_stopped = nullptr;

// Errors of array operations are also the builtin exception JAX raises for
// the same mistake, so `except TypeError:` in the user's program catches a
// shape mismatch as it would under JAX.
struct BuiltinKind {
  const char* kind;
  PyObject** builtin;
  PyObject* type = nullptr;
};
BuiltinKind g_builtin_kinds[] = {
    {"ShapeError", &PyExc_TypeError}, {"TypeError", &PyExc_TypeError},   {"ValueError", &PyExc_ValueError},
    {"AxisError", &PyExc_ValueError}, {"IndexError", &PyExc_IndexError},
    {"AxisNameError", &PyExc_NameError},  // JAX raises NameError for an unbound axis name
    {"DeviceCountError", &PyExc_ValueError}, {"InputSplitError", &PyExc_ValueError},  // and ValueError for these
};

PyObject* exception_type_for(const std::string& kind) {
  for (const BuiltinKind& b : g_builtin_kinds) {
    if (kind == b.kind) return b.type;
  }
  return g_spmd_error;
}

void capsule_free(PyObject* capsule) {
  delete static_cast<std::exception_ptr*>(PyCapsule_GetPointer(capsule, "spmd.error"));
}

// The original C++ exception rides on the Python one, so the runner can
// rethrow it as itself when it escapes the program.
void attach_original(py::object& exc, std::exception_ptr p) {
  exc.attr("_error") = py::reinterpret_steal<py::object>(
      PyCapsule_New(new std::exception_ptr(std::move(p)), "spmd.error", capsule_free));
}

void raise_spmd_error(const Error& e, std::exception_ptr p) {
  const Report& r = e.report();
  // str(e) is the whole report: what a test runner shows for a failed test.
  PyObject* type = exception_type_for(r.kind);
  py::object exc = py::reinterpret_steal<py::object>(PyObject_CallFunction(type, "s", e.what()));
  if (!exc) return;  // a Python error is already set
  exc.attr("kind") = r.kind;
  exc.attr("message") = r.message;
  exc.attr("hint") = r.hint;
  exc.attr("report") = std::string(e.what());
  attach_original(exc, std::move(p));
  PyErr_SetObject(type, exc.ptr());
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
  for (BuiltinKind& b : g_builtin_kinds) {
    const std::string name = std::string("_spmd.") + b.kind;
    PyObject* bases = PyTuple_Pack(2, g_spmd_error, *b.builtin);
    b.type = PyErr_NewException(name.c_str(), bases, nullptr);
    Py_DECREF(bases);
    m.attr(name.substr(6).c_str()) = py::handle(b.type);
  }
  g_host_stop = PyErr_NewExceptionWithDoc("_spmd.HostStop",
                                          "raised in the program's main thread when the run is interrupted or out of "
                                          "time (a BaseException: `except Exception` does not stop it)",
                                          PyExc_BaseException, nullptr);
  m.attr("HostStop") = py::handle(g_host_stop);
  g_device_stopped = PyErr_NewExceptionWithDoc(
      "_spmd.DeviceStopped",
      "raised in a device's Python code (disable_jit) when the run stops it because another device failed (a "
      "BaseException: `except Exception` does not keep the device running)",
      PyExc_BaseException, nullptr);
  m.attr("DeviceStopped") = py::handle(g_device_stopped);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise_spmd_error(e, p);
    } catch (const detail::RunAborted&) {
      // The runtime unwinds a stopped device with RunAborted; it crosses the
      // device's Python frames and is rethrown as itself on the way out, so
      // the device counts as stopped, not as having raised.
      py::object exc = py::reinterpret_steal<py::object>(PyObject_CallNoArgs(g_device_stopped));
      if (!exc) return;
      attach_original(exc, p);
      PyErr_SetObject(g_device_stopped, exc.ptr());
    }
  });
}

}  // namespace spmd::python
