#include "spmd/runtime/runtime.h"

#include <tbb/global_control.h>

#include <cctype>
#include <iostream>

#include "runtime/backend_registry.h"
#include "core/arena.h"
#include "runtime/run_reports.h"
#include "runtime/decision_log.h"
#include "runtime/pmap_impl.h"
#include "runtime/run.h"
#include "spmd/core/format.h"
#include "spmd/debug/breakpoint.h"
#include "spmd/debug/debug_print.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/runtime/device.h"

namespace spmd {

namespace {

void default_print_sink(const DebugPrint& p) { std::cout << p.line() << std::flush; }

void default_breakpoint_handler(std::span<const BreakpointStop> stops) {
  std::cout << "breakpoint: " << stops.size() << " device" << (stops.size() == 1 ? "" : "s") << " stopped";
  if (!stops.empty()) std::cout << " at " << stops[0].loc.to_string();
  std::cout << '\n';
  for (const auto& s : stops) {
    std::cout << "  [" << s.device_label << "]";
    if (s.values.empty()) std::cout << " (no values)";
    std::cout << '\n';
    for (const auto& [name, v] : s.values) std::cout << "    " << name << " = " << to_string(v) << '\n';
  }
  std::cout << std::flush;
}

Runtime* g_default_runtime = nullptr;

}  // namespace

struct Runtime::Impl {
  // --threads T is T cores: the device fibers' threads, and oneTBB inside
  // large kernels (at most T threads at once while this runtime lives).
  std::unique_ptr<tbb::global_control> cores;
  detail::RuntimeState state;
  std::mutex run_mu;  // one top-level run at a time
  std::string backend_name;
};

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.devices < 1) {
    throw_invalid_argument("InvalidArgument", "Runtime: devices must be >= 1, got " + std::to_string(options.devices),
                           "set RuntimeOptions::devices (the CLI's --devices) to the number of virtual devices");
  }
  if (options.threads < 1) {
    throw_invalid_argument("InvalidArgument", "Runtime: threads must be >= 1, got " + std::to_string(options.threads),
                           "use --threads 1 for a deterministic schedule");
  }
  impl_->cores = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                       static_cast<std::size_t>(options.threads));
  if (options.process_count > 1) {
    if (options.process_store.empty()) {
      throw_invalid_argument("InvalidArgument",
                             "Runtime: " + std::to_string(options.process_count) +
                                 " processes need a store directory they share",
                             "set RuntimeOptions::process_store (the CLI's --store, or SPMD_STORE): a fresh "
                             "directory, on a shared mount when the processes run on several hosts");
    }
    if (options.threads != 1) {
      throw_invalid_argument("InvalidArgument",
                             "Runtime: multi-process runs need threads == 1, got " + std::to_string(options.threads),
                             "every process must run its devices in the same order for their collectives to line "
                             "up; use --threads 1");
    }
    if (options.process_local_devices && options.devices % options.process_count != 0) {
      throw_invalid_argument("InvalidArgument",
                             "Runtime: " + std::to_string(options.devices) + " devices cannot be shared out evenly "
                                 "between " + std::to_string(options.process_count) + " processes",
                             "with local devices each process runs devices / processes of them: make --devices a "
                             "multiple of --num-processes (e.g. " + std::to_string(options.process_count) +
                                 " x the GPUs of one host)");
    }
    impl_->state.processes = std::make_unique<dist::ProcessGroup>(
        dist::FileStore(options.process_store), options.process_index, options.process_count);
    // Waiting for another process must not outlive an interrupt (SIGINT on one host only).
    detail::RuntimeState* state = &impl_->state;
    impl_->state.processes->set_poll_hook([state] {
      if (!state->interrupted.load(std::memory_order_acquire)) return;
      std::lock_guard<std::mutex> lock(state->active_mu);
      std::rethrow_exception(state->interrupt_error_locked());
    });
    // A report across processes names the first decision the ranks took apart.
    impl_->state.processes->set_report_annotator([](Report& r, const std::vector<std::pair<int, std::string>>& posted) {
      std::vector<detail::DecisionLog> logs;
      std::vector<int> ranks;
      for (const auto& [rank, text] : posted) {
        try {
          logs.push_back(detail::DecisionLog::from_json(Json::parse(text, "context." + std::to_string(rank))));
          ranks.push_back(rank);
        } catch (const std::exception&) {
          // A context being rewritten is read whole or not at all; one that
          // does not parse just leaves that rank out.
        }
      }
      std::vector<std::pair<const detail::DecisionLog*, int>> refs;
      for (std::size_t i = 0; i < logs.size(); ++i) refs.emplace_back(&logs[i], ranks[i]);
      detail::find_decision_divergence(r.divergence, refs, "rank", "ranks");
      detail::lead_hint_with_decision(r);
    });
  }
  if (!options.print_sink) options.print_sink = default_print_sink;
  if (!options.breakpoint_handler) options.breakpoint_handler = default_breakpoint_handler;
  if (options.process_local_devices && options.process_count > 1) {
    impl_->state.local.count = options.devices / options.process_count;
    impl_->state.local.first = options.process_index * impl_->state.local.count;
  } else {
    options.process_local_devices = false;  // one process runs every device
    impl_->state.local = {0, options.devices};
  }
  impl_->state.backend = detail::create_backend(options.backend, options.devices, options.threads, options.seed,
                                                options.fiber_stack_size, impl_->state.local);
  impl_->backend_name = std::string(impl_->state.backend->name());
  impl_->state.arenas.resize(static_cast<std::size_t>(options.devices));
  impl_->state.options = std::move(options);
}

Runtime::~Runtime() {
  if (g_default_runtime == this) g_default_runtime = nullptr;
  // A process whose runs all succeeded has finished its part; one whose run
  // failed has told the others already (pmap_top_level).
  if (impl_->state.processes) {
    try {
      impl_->state.processes->finish();
    } catch (...) {
      // The store went away: the others see this process's pid vanish.
    }
  }
}

void Runtime::report_process_error(const Error& error) {
  if (impl_->state.processes) impl_->state.processes->fail(error.kind() + ": " + error.report().message);
}

const RuntimeOptions& Runtime::options() const { return impl_->state.options; }
int Runtime::device_count() const { return impl_->state.options.devices; }
int Runtime::local_device_count() const { return impl_->state.local.count; }
int Runtime::first_local_device() const { return impl_->state.local.first; }
const std::string& Runtime::backend_name() const { return impl_->backend_name; }

int Runtime::pmap_axis_size(std::span<const Array> args, const PmapOptions& options) {
  return detail::plan_top_level_axis_size(impl_->state, args, options);
}

std::vector<Array> Runtime::pmap(const DeviceFn& fn, std::span<const Array> args, const PmapOptions& options) {
  if (detail::current_context() != nullptr) return detail::pmap_nested(fn, args, options);
  std::lock_guard<std::mutex> lock(impl_->run_mu);
  return detail::pmap_top_level(impl_->state, fn, args, options);
}

void Runtime::interrupt(const std::string& reason) {
  detail::RuntimeState& st = impl_->state;
  std::lock_guard<std::mutex> lock(st.active_mu);
  if (!st.interrupted.load(std::memory_order_acquire)) {
    st.interrupt_reason = reason;
    st.interrupted.store(true, std::memory_order_release);
  }
  if (st.active != nullptr) {
    st.active->abort(st.interrupt_error_locked());
    st.interrupt_reached_run = true;
  }
}

bool Runtime::interrupted() const noexcept { return impl_->state.interrupted.load(std::memory_order_acquire); }

void Runtime::check_interrupted() const {
  if (!interrupted()) return;
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> lock(impl_->state.active_mu);
    e = impl_->state.interrupt_error_locked();
  }
  std::rethrow_exception(e);
}

std::chrono::steady_clock::duration Runtime::device_run_time() const {
  const detail::RuntimeState& st = impl_->state;
  std::lock_guard<std::mutex> lock(impl_->state.active_mu);
  return st.finished_run_time +
         (st.active != nullptr ? std::chrono::steady_clock::now() - st.active_since : std::chrono::steady_clock::duration{});
}

std::chrono::steady_clock::duration Runtime::current_run_time() const {
  std::lock_guard<std::mutex> lock(impl_->state.active_mu);
  return impl_->state.active != nullptr ? std::chrono::steady_clock::now() - impl_->state.active_since
                                        : std::chrono::steady_clock::duration{};
}

bool Runtime::device_run_in_progress() const {
  std::lock_guard<std::mutex> lock(impl_->state.active_mu);
  return impl_->state.active != nullptr;
}

bool Runtime::interrupt_reached_run() const {
  std::lock_guard<std::mutex> lock(impl_->state.active_mu);
  return impl_->state.interrupt_reached_run;
}

ArenaUsage Runtime::arena_usage(DeviceId device) const {
  if (device < 0 || device >= device_count()) {
    throw_invalid_argument("InvalidArgument",
                           "arena_usage: no device " + std::to_string(device) + " (devices are 0.." +
                               std::to_string(device_count() - 1) + ")");
  }
  auto stats = impl_->state.arena(device)->stats();
  return {stats.capacity, stats.live_bytes, stats.peak_bytes};
}

std::vector<std::string> Runtime::available_backends() { return detail::compiled_backends(); }

std::vector<Array> pmap(const DeviceFn& fn, std::span<const Array> args, const PmapOptions& options) {
  if (detail::current_context() != nullptr) return detail::pmap_nested(fn, args, options);
  if (g_default_runtime != nullptr) return g_default_runtime->pmap(fn, args, options);
  static Runtime builtin{RuntimeOptions{}};
  return builtin.pmap(fn, args, options);
}

void set_default_runtime(Runtime* rt) { g_default_runtime = rt; }

}  // namespace spmd
