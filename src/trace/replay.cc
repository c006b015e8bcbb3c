#include "spmd/trace/replay.h"

#include <atomic>
#include <fstream>

#include "rendezvous/rendezvous.h"
#include "runtime/device_context.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/runtime/device.h"
#include "trace/trace_reader.h"

namespace spmd {

namespace {

using detail::Trace;
using detail::TraceDevice;
using detail::TraceStep;

struct Replayer {
  const Trace& trace;
  std::atomic<std::int64_t> collectives{0};

  // The children of `parent` created by its k-th nested pmap.
  std::vector<const TraceDevice*> children(const TraceDevice& parent, int k) const {
    std::vector<const TraceDevice*> all;
    for (const auto& d : trace.contexts) {
      if (d.parent == parent.uid) all.push_back(&d);
    }
    // Consecutive groups, one per nested pmap, each as large as its mesh.
    std::size_t pos = 0;
    for (int g = 0; pos < all.size(); ++g) {
      std::size_t size = 1;
      for (std::size_t a = parent.env.size(); a < all[pos]->env.size(); ++a) size *= static_cast<std::size_t>(all[pos]->env[a].size);
      if (g == k) return {all.begin() + static_cast<std::ptrdiff_t>(pos), all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), pos + size))};
      pos += size;
    }
    return {};
  }

  static PmapOptions mesh_of(const TraceDevice& first, std::size_t from) {
    PmapOptions o;
    for (std::size_t a = from; a < first.env.size(); ++a) o.mesh.push_back({first.env[a].name, first.env[a].size});
    std::int64_t n = 1;
    for (const auto& m : o.mesh) n *= m.size;
    o.axis_size = static_cast<int>(n);
    return o;
  }

  void run_group(const std::vector<const TraceDevice*>& group, std::size_t env_from) {
    if (group.empty()) return;
    PmapOptions o = mesh_of(*group[0], env_from);
    pmap(
        [this, group](std::span<const Array>) {
          const TraceDevice& d = *group.at(static_cast<std::size_t>(current_device().index_in_pmap));
          replay_device(d);
          return std::vector<Array>{};
        },
        {}, o);
  }

  void replay_device(const TraceDevice& d) {
    detail::DeviceContext& ctx = *detail::current_context();
    int nested = 0;
    for (const TraceStep& step : d.steps) {
      switch (step.kind) {
        case TraceStep::Kind::kCollective:
          set_current_location(step.sig.loc);
          collectives.fetch_add(1, std::memory_order_relaxed);
          detail::run_collective(ctx, step.sig, {});
          break;
        case TraceStep::Kind::kDecision: record_decision(step.what, step.value, step.loc); break;
        case TraceStep::Kind::kNestedPmap: run_group(children(d, nested++), d.env.size()); break;
      }
    }
    if (d.end == TraceDevice::End::kRaised) {
      Report r = make_report(d.error_kind, d.error_text, "recorded in the trace: this device raised it in the original run");
      r.where = d.error_loc;
      r.device = d.device;
      throw ProgramError(std::move(r));
    }
  }
};

}  // namespace

ReplaySummary replay_trace(std::istream& in, const std::string& source, RuntimeOptions options) {
  Trace trace = detail::read_trace(in, source);
  std::vector<const TraceDevice*> top;
  int max_device = 0;
  for (const auto& d : trace.contexts) {
    if (d.parent < 0) top.push_back(&d);
    max_device = std::max(max_device, d.device);
  }
  // read_trace checked that there are top-level devices and that they share one mesh.
  options.devices = std::max({options.devices, max_device + 1, trace.devices, static_cast<int>(top.size())});
  options.collectives_move_data = false;
  Runtime rt(options);
  Replayer replayer{trace};
  PmapOptions o = Replayer::mesh_of(*top[0], 0);
  rt.pmap(
      [&](std::span<const Array>) {
        replayer.replay_device(*top.at(static_cast<std::size_t>(current_device().index_in_pmap)));
        return std::vector<Array>{};
      },
      {}, o);
  return ReplaySummary{static_cast<int>(trace.contexts.size()), replayer.collectives.load(), trace.end_status,
                       trace.end_kind};
}

ReplaySummary replay_trace_file(const std::string& path, RuntimeOptions options) {
  std::ifstream in(path);
  if (!in) {
    throw_invalid_argument("UsageError", "cannot read the trace file '" + path + "'", "check the path");
  }
  return replay_trace(in, path, std::move(options));
}

}  // namespace spmd
