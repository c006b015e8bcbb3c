#include "spmd/trace/replay.h"

#include <algorithm>
#include <atomic>
#include <sstream>

#include "runtime/rendezvous.h"
#include "runtime/run_reports.h"
#include "runtime/device_context.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/runtime/device.h"
#include "trace/trace_reader.h"
#include "util/input_file.h"

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

namespace {

// A top-level device's index in its pmap: row-major over its axes.
std::int64_t flat_index(const TraceDevice& d) {
  std::int64_t i = 0;
  for (const auto& b : d.env) i = i * b.size + b.index;
  return i;
}

// The top-level devices in pmap order; every index of the mesh exactly once.
std::vector<const TraceDevice*> top_level_devices(const Trace& trace, const std::vector<std::string>& sources,
                                                  const std::vector<std::size_t>& source_of) {
  std::vector<const TraceDevice*> top;
  for (const auto& d : trace.contexts) {
    if (d.parent < 0) top.push_back(&d);
  }
  std::stable_sort(top.begin(), top.end(),
                   [](const TraceDevice* a, const TraceDevice* b) { return flat_index(*a) < flat_index(*b); });
  std::int64_t n = 1;
  for (const auto& b : top[0]->env) n *= b.size;
  for (std::size_t k = 1; k < top.size(); ++k) {
    if (flat_index(*top[k]) != flat_index(*top[k - 1])) continue;
    const std::string& a = sources[source_of[static_cast<std::size_t>(top[k - 1]->uid)]];
    const std::string& b = sources[source_of[static_cast<std::size_t>(top[k]->uid)]];
    throw_invalid_argument("UsageError",
                           top[k]->label + " is recorded twice (" + (a == b ? "in " + a : "in " + a + " and " + b) +
                               ")",
                           sources.size() > 1 ? "a run with every device in every process records every device in "
                                                "each process's trace: replay one of them"
                                              : "a trace holds one pmap run; record each run to its own file");
  }
  if (static_cast<std::int64_t>(top.size()) != n) {
    std::vector<int> have;
    for (const TraceDevice* d : top) have.push_back(d->device);
    throw_invalid_argument(
        "UsageError",
        "the trace" + std::string(sources.size() > 1 ? "s hold " : " holds ") + std::to_string(top.size()) + " of the " +
            std::to_string(n) + " devices of the run (" + detail::format_ids(have, "device", "devices") + ")",
        "a process of a run with local devices records only its own devices: replay every process's trace "
        "together, e.g. spmd replay run.process0.jsonl run.process1.jsonl");
  }
  return top;
}

ReplaySummary replay_merged(const Trace& trace, const std::vector<std::string>& sources,
                            const std::vector<std::size_t>& source_of, RuntimeOptions options) {
  std::vector<const TraceDevice*> top = top_level_devices(trace, sources, source_of);
  int max_device = 0;
  for (const auto& d : trace.contexts) max_device = std::max(max_device, d.device);
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

// Read once and whole: a trace may come through a pipe, and a file that
// never ends (/dev/zero) must not be read forever.
constexpr std::size_t kMaxTraceBytes = std::size_t{1} << 30;

std::istringstream open_trace(const std::string& path) {
  return std::istringstream(read_input_file(path, "trace file", kMaxTraceBytes));
}

}  // namespace

ReplaySummary replay_trace(std::istream& in, const std::string& source, RuntimeOptions options) {
  Trace trace = detail::read_trace(in, source);
  return replay_merged(trace, {source}, std::vector<std::size_t>(trace.contexts.size(), 0), std::move(options));
}

ReplaySummary replay_trace_file(const std::string& path, RuntimeOptions options) {
  std::istringstream in = open_trace(path);
  return replay_trace(in, path, std::move(options));
}

ReplaySummary replay_trace_files(const std::vector<std::string>& paths, RuntimeOptions options) {
  if (paths.size() == 1) return replay_trace_file(paths[0], std::move(options));
  // One trace of all the processes' devices, uids renumbered after each other.
  Trace merged;
  std::vector<std::size_t> source_of;
  for (std::size_t k = 0; k < paths.size(); ++k) {
    std::istringstream in = open_trace(paths[k]);
    Trace t = detail::read_trace(in, paths[k]);
    const int offset = static_cast<int>(merged.contexts.size());
    for (TraceDevice& d : t.contexts) {
      d.uid += offset;
      if (d.parent >= 0) d.parent += offset;
      merged.contexts.push_back(std::move(d));
      source_of.push_back(k);
    }
    if (k == 0 || merged.backend.empty()) merged.backend = t.backend;
    merged.devices = std::max(merged.devices, t.devices);
    // The run ended as its worst process did: an error over ok.
    if (merged.end_status.empty() || (merged.end_status == "ok" && !t.end_status.empty())) {
      merged.end_status = t.end_status;
      merged.end_kind = t.end_kind;
    }
  }
  const detail::TopLevelAxes axes = detail::check_top_level_axes(merged);
  if (axes.differs != nullptr) {
    auto in = [&](const TraceDevice* d) { return d->label + " in " + paths[source_of[static_cast<std::size_t>(d->uid)]]; };
    throw_invalid_argument("UsageError",
                           "the traces disagree on the axes of their devices (" + in(axes.first) + ", " +
                               in(axes.differs) + ")",
                           "replay together only the traces of one run's processes");
  }
  return replay_merged(merged, paths, source_of, std::move(options));
}

}  // namespace spmd
