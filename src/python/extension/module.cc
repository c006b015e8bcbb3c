// The `_spmd` extension module, for spmdsim's jax package in a plain
// `python3` (a script, a pytest suite): the same module as the spmd binary
// embeds, with a Runtime of its own, made on first use with the device count
// the program set (XLA_FLAGS, jax_num_cpu_devices) or 8.
//
// Errors reach Python as _spmd.SpmdError whose text is the whole report, so
// a test whose pmap would hang fails at once with the deadlock report.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <vector>

#include "python/bindings.h"
#include "python/program_threads.h"
#include "spmd/pmap/pmap.h"
#include "spmd/runtime/runtime.h"

namespace {

struct Standalone {
  std::unique_ptr<spmd::Runtime> runtime;
  std::optional<int> devices;  // set by configure(); else the program's count, else 8
  // Runtimes replaced while another thread was still in a device run on one
  // (a test's background thread, still in its pmap as the next test starts):
  // kept until no run is in progress, so that run ends as it would have.
  std::vector<std::unique_ptr<spmd::Runtime>> retired;
};

Standalone& standalone() {
  static Standalone s;
  return s;
}

spmd::Runtime& make_runtime(std::optional<int> program_devices) {
  Standalone& s = standalone();
  if (!s.runtime) {
    spmd::RuntimeOptions o;
    o.devices = s.devices.value_or(program_devices.value_or(8));
    s.runtime = std::make_unique<spmd::Runtime>(o);
    spmd::set_default_runtime(s.runtime.get());
  }
  return *s.runtime;
}

// A fresh Runtime from the next use on (the pytest plugin calls it per test).
void configure(std::optional<int> devices) {
  Standalone& s = standalone();
  spmd::set_default_runtime(nullptr);
  if (spmd::python::host_runs_in_progress()) {
    if (s.runtime) s.retired.push_back(std::move(s.runtime));
  } else {
    s.retired.clear();
  }
  s.runtime.reset();
  s.devices = devices;
  spmd::python::set_runtime_factory(make_runtime);
}

}  // namespace

PYBIND11_MODULE(_spmd, m) {
  spmd::python::define_module(m);
  spmd::python::set_runtime_factory(make_runtime);
  // At python3's exit (after its non-daemon threads were joined, as its
  // other atexit callbacks run), a daemon thread still in a device run is
  // stopped and never comes back, before the Runtime goes away with the
  // process's statics.
  m.def("_end_program_threads", [] {
    for (auto& rt : standalone().retired) rt->interrupt("the program ended while a daemon thread's device run was in progress");
    spmd::python::program_begins();  // atexit callbacks run on the main thread
    spmd::python::program_ended(spmd::python::started_runtime(), /*end_threads=*/false);
  });
  pybind11::module_::import("atexit").attr("register")(m.attr("_end_program_threads"));
  m.def("configure_standalone", &configure, pybind11::arg("devices") = pybind11::none(),
        "a fresh Runtime on next use, with `devices` devices (None: the program's count, else 8)");
}
