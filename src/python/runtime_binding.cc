// The devices: counts, process index, and pmap of a traced program.

#include <pybind11/stl.h>

#include <atomic>
#include <charconv>

#include "python/bindings.h"
#include "spmd/runtime/device.h"
#include "python/python_errors.h"
#include "spmd/error.h"
#include "spmd/program/executor.h"
#include "runtime/pmap_impl.h"
#include "spmd/runtime/runtime.h"
#include "util/log.h"

namespace spmd::python {

namespace {
// Atomic: a host watch thread reads it (started_runtime()).
std::atomic<Runtime*> g_runtime = nullptr;
std::atomic<int> g_eager_runs{0};
RuntimeFactory g_factory;

// The device count a CPU JAX program sets for itself before its first device
// query: XLA_FLAGS=--xla_force_host_platform_device_count=N, or
// jax.config.update('jax_num_cpu_devices', N), which wins as in JAX.
std::optional<int> program_device_count() {
  std::optional<int> n;
  py::object flags = py::module_::import("os").attr("environ").attr("get")("XLA_FLAGS");
  if (!flags.is_none()) {
    const std::string text = flags.cast<std::string>();
    const std::string key = "--xla_force_host_platform_device_count=";
    if (std::size_t at = text.find(key); at != std::string::npos) {
      std::size_t end = text.find_first_of(" \t", at);
      std::string value = text.substr(at + key.size(), end == std::string::npos ? std::string::npos : end - at - key.size());
      int count = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
      if (ec != std::errc() || ptr != value.data() + value.size() || count < 1) {
        throw InvalidArgument(make_report("ValueError", "XLA_FLAGS sets " + key + value + ", which is not a positive device count",
                                          "write e.g. os.environ['XLA_FLAGS'] = '" + key + "8'"));
      }
      n = count;
    }
  }
  py::dict modules = py::module_::import("sys").attr("modules");
  if (modules.contains("jax._src.config")) {
    py::object v = modules["jax._src.config"].attr("_values").attr("get")("jax_num_cpu_devices");
    if (!v.is_none() && v.cast<int>() > 0) n = v.cast<int>();
  }
  return n;
}
}  // namespace

void set_runtime_factory(RuntimeFactory factory) {
  g_factory = std::move(factory);
  g_runtime = nullptr;
}

bool runtime_started() { return g_runtime != nullptr; }

Runtime* started_runtime() { return g_runtime.load(); }

bool eager_run_in_progress() { return g_eager_runs.load() > 0; }

Runtime& runtime() {
  if (g_runtime == nullptr) {
    if (!g_factory) {
      throw InvalidArgument(make_report("RuntimeError", "spmdsim's jax has no devices: the program is not run by spmd",
                                        "run it with `spmd run prog.py`"));
    }
    const std::optional<int> asked = program_device_count();
    if (asked) SPMD_LOG(kPython, info, "the program asks for {} devices (XLA_FLAGS or jax_num_cpu_devices)", *asked);
    g_runtime = &g_factory(asked);
    SPMD_LOG(kPython, info, "runtime started: {} devices, backend {}", g_runtime.load()->device_count(),
             g_runtime.load()->backend_name());
  }
  return *g_runtime.load();
}

void bind_runtime(py::module_& m) {
  m.def("runtime_started", &runtime_started);
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

  // A branch a device took in eager code (disable_jit): the deadlock report's
  // "first differing decision". Host code decides for every device at once.
  m.def("in_device", [] { return in_device(); });
  m.def("record_decision", [](const std::string& what, std::int64_t outcome, const py::handle& loc) {
    if (in_device()) record_decision(what, outcome, to_loc(loc));
  });
  m.def("pmap_axis_size", [](const std::vector<Array>& args, const PmapOptions& o) {
    return runtime().pmap_axis_size(args, o);
  });
  // An error found while tracing a pmap-ed function gets the same notes as one
  // raised on a device (a replicated argument that looks meant to be split).
  m.def("add_note", [](const py::handle& exc, const std::string& line) {
    std::exception_ptr p = original_error(exc);
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (Error& e) {
      e.mutable_report().details.push_back(line);
      exc.attr("report") = std::string(e.what());
    }
  }, "appends a line of explanation to a runtime error's report");
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
  // pmap under jax.disable_jit(): every device runs the Python function itself,
  // with its own concrete values. Each device fiber gets its own Python thread
  // state and holds the GIL only while Python runs: every call that can block
  // (a collective, a breakpoint) releases it first (apply_primitive), so a
  // device never parks holding the GIL and the runtime still sees every
  // device blocked, and detects a deadlock exactly.
  //
  // `device_fn(shards)` returns (output leaves, flat out_axes, exception or
  // None): the outputs'
  // structure is known only once a device returned, so the first device to
  // return sets how they are stacked (the runtime reads out_axes when it
  // stacks, after every device finished).
  m.def("pmap_eager", [](const py::function& device_fn, const std::vector<Array>& args, PmapOptions o) {
    PyInterpreterState* interp = PyThreadState_Get()->interp;
    bool out_axes_set = false;
    DeviceFn fn = [&](std::span<const Array> shards) -> std::vector<Array> {
      PyThreadState* ts = PyThreadState_New(interp);
      take_gil(ts);
      std::vector<Array> out;
      std::exception_ptr error;
      // device_fn catches every exception and returns it: a pybind11
      // error_already_set must not be made here, since it takes the GIL
      // through the PyGILState API, which knows one thread state per OS
      // thread, not one per device fiber.
      try {
        // A raw call: pybind11's own (object_api::operator()) checks
        // PyGILState_Check in debug builds, which fails with a thread state
        // per fiber.
        py::object arg = py::cast(std::vector<Array>(shards.begin(), shards.end()));
        py::object r = py::reinterpret_steal<py::object>(PyObject_CallOneArg(device_fn.ptr(), arg.ptr()));
        if (!r) {
          PyErr_Clear();  // device_fn returns every exception; this is its own bug
          throw InvalidArgument(make_report("InternalError", "the device function of a disable_jit pmap failed"));
        }
        py::tuple t = r.cast<py::tuple>();
        if (!t[2].is_none()) throw_spmd_error(t[2]);
        out = t[0].cast<std::vector<Array>>();
        if (!out_axes_set) {
          o.out_axes = t[1].cast<std::vector<MapAxis>>();
          out_axes_set = true;
        }
      } catch (...) {
        error = std::current_exception();
      }
      PyThreadState_Clear(ts);
      gil_releasing();
      PyThreadState_DeleteCurrent();  // and releases the GIL
      if (error) std::rethrow_exception(error);
      return out;
    };
    runtime();  // a clear error when no runtime is set
    // Devices on several OS threads (--threads N) hand the GIL over only where
    // a fiber parks or ends (annotated for TSan), never on CPython's timer:
    // device order stays reproducible and every hand-off is one we make.
    py::module_ sys = py::module_::import("sys");
    py::object interval = sys.attr("getswitchinterval")();
    sys.attr("setswitchinterval")(1e6);
    std::vector<Array> result;
    std::exception_ptr error;
    {
      FiberSafeGilRelease release;
      g_eager_runs.fetch_add(1);
      struct Ended {
        ~Ended() { g_eager_runs.fetch_sub(1); }
      } ended;
      try {
        result = runtime().pmap(fn, args, o);
      } catch (...) {
        error = std::current_exception();
      }
    }
    sys.attr("setswitchinterval")(interval);
    if (error) std::rethrow_exception(error);
    return result;
  });

  m.def("pmap", [](const std::shared_ptr<program::Program>& p, const std::vector<Array>& args, const PmapOptions& o) {
    runtime();  // a clear error when no runtime is set
    SPMD_LOG(kPython, debug, "pmap runs a traced program of {} equations on {} arguments", p->equations().size(),
             args.size());
    // No Python runs on the devices: other threads (the host watch) may have the GIL meanwhile.
    return run_from_host([&] { return program::pmap_program(p, args, o); });
  });
}

}  // namespace spmd::python
