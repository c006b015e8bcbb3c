// jax.debug.callback's host side: the calls debug_callback equations record
// (from any device fiber, any OS thread) wait here until the run that made
// them is over; then the host calls the Python functions, in device order
// (each device's calls in program order), with the GIL.

#include <algorithm>
#include <atomic>
#include <mutex>

#include "python/bindings.h"
#include "spmd/program/host_callback.h"

namespace spmd::python {

namespace {
std::mutex g_mu;
std::vector<program::CallbackCall> g_pending;
std::atomic<bool> g_any{false};
}  // namespace

void install_host_callbacks() {
  program::set_callback_sink([](program::CallbackCall call) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_pending.push_back(std::move(call));
    g_any.store(true, std::memory_order_release);
  });
}

void run_host_callbacks() {
  if (!g_any.load(std::memory_order_acquire)) return;
  std::vector<program::CallbackCall> calls;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    calls.swap(g_pending);
    g_any.store(false, std::memory_order_release);
  }
  // Device order whatever the schedule (--threads N); the host's own calls first.
  std::stable_sort(calls.begin(), calls.end(),
                   [](const program::CallbackCall& a, const program::CallbackCall& b) { return a.device < b.device; });
  py::object call_back = py::module_::import("jax.debug").attr("_call_back");
  // The first error ends the calls: the rest are dropped.
  for (const program::CallbackCall& call : calls) {
    py::list operands;
    // Host copies: the callback gets ordinary arrays it can print, compare and
    // compute with, as JAX hands it concrete values (the device's own buffer
    // is not the host's to use).
    for (const Array& a : call.operands) {
      Array bytes = a.to_host();  // a GPU's array: its bytes; a simulated device's: itself, still that device's
      operands.append(
          py::cast(Array::from_raw(bytes.raw_data(), bytes.shape(), bytes.dtype()).with_weak_type(a.weak_type())));
    }
    call_back(call.callback_id, call.device, operands);
  }
}

void run_host_callbacks_after_error() noexcept {
  try {
    run_host_callbacks();
  } catch (...) {
    // The run's own error is the one the program sees.
  }
}

}  // namespace spmd::python
