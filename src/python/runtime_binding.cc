// The devices: counts, process index, and pmap of a traced program.

#include <pybind11/stl.h>

#include "python/bindings.h"
#include "spmd/error.h"
#include "spmd/program/executor.h"
#include "runtime/pmap_impl.h"
#include "spmd/runtime/runtime.h"

namespace spmd::python {

namespace {
Runtime* g_runtime = nullptr;
}  // namespace

void set_runtime(Runtime* rt) { g_runtime = rt; }

Runtime& runtime() {
  if (g_runtime == nullptr) {
    throw InvalidArgument(make_report("RuntimeError", "spmdsim's jax has no devices: the program is not run by spmd",
                                      "run it with `spmd run prog.py`"));
  }
  return *g_runtime;
}

void bind_runtime(py::module_& m) {
  m.def("device_count", [] { return runtime().device_count(); });
  m.def("local_device_count", [] { return runtime().local_device_count(); });
  m.def("first_local_device", [] { return runtime().first_local_device(); });
  m.def("process_index", [] { return runtime().options().process_index; });
  m.def("process_count", [] { return runtime().options().process_count; });
  m.def("backend", [] { return runtime().backend_name(); });

  py::class_<PmapOptions>(m, "PmapOptions", "how a pmap splits, names and stacks")
      .def(py::init<>())
      .def_readwrite("axis_name", &PmapOptions::axis_name)
      .def_readwrite("in_axes", &PmapOptions::in_axes)
      .def_readwrite("out_axes", &PmapOptions::out_axes)
      .def_readwrite("axis_size", &PmapOptions::axis_size)
      .def_readwrite("devices", &PmapOptions::devices)
      .def_readwrite("arg_names", &PmapOptions::arg_names)
      .def_readwrite("out_names", &PmapOptions::out_names)
      .def_property(
          "loc", [](const PmapOptions&) { return py::none(); },
          [](PmapOptions& o, const py::handle& loc) { o.loc = to_loc(loc); });

  m.def("pmap_axis_size", [](const std::vector<Array>& args, const PmapOptions& o) {
    return runtime().pmap_axis_size(args, o);
  });
  // An error found while tracing a pmap-ed function gets the same notes as one
  // raised on a device (a replicated argument that looks meant to be split).
  m.def("add_pmap_notes", [](const py::handle& exc, const std::vector<Array>& args, const PmapOptions& o, int n) {
    std::exception_ptr p = original_error(exc);
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (Error& e) {
      detail::add_replication_notes(e, args, o, n);
      exc.attr("report") = std::string(e.what());
    }
  });
  m.def("pmap", [](const std::shared_ptr<program::Program>& p, const std::vector<Array>& args, const PmapOptions& o) {
    runtime();  // a clear error when no runtime is set
    return program::pmap_program(p, args, o);
  });
}

}  // namespace spmd::python
