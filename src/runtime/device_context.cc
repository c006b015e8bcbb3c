#include "runtime/device_context.h"

namespace spmd::detail {

namespace {
std::string make_label(DeviceId device, const std::vector<AxisBinding>& env) {
  std::string s = "device " + std::to_string(device);
  if (env.size() > 1) {
    s += " (";
    for (std::size_t i = 0; i < env.size(); ++i) {
      if (i) s += ", ";
      s += env[i].name + "=" + std::to_string(env[i].index);
    }
    s += ")";
  }
  return s;
}
}  // namespace

std::string_view device_state_name(DeviceState s) {
  switch (s) {
    case DeviceState::kReady: return "not started";
    case DeviceState::kRunning: return "running";
    case DeviceState::kWaitingCollective: return "waiting";
    case DeviceState::kAtBreakpoint: return "at breakpoint";
    case DeviceState::kWaitingChildren: return "in nested pmap";
    case DeviceState::kFinished: return "finished";
    case DeviceState::kRaised: return "raised";
    case DeviceState::kAborted: return "stopped";
  }
  return "?";
}

std::string RecentEvent::render() const {
  std::string where = loc.valid() ? " at " + loc.to_string() : "";
  switch (kind) {
    case EventKind::kDeviceStart: return "started";
    case EventKind::kCollectiveEnter:
      return "#" + std::to_string(seq) + " " + op + " over " + axes + (types.empty() ? "" : " " + types) + where +
             " (entered)";
    case EventKind::kCollectiveExit: return "#" + std::to_string(seq) + " " + op + " over " + axes + " done";
    case EventKind::kDebugPrint: return "debug_print" + where + ": " + text;
    case EventKind::kDecision: return op + where + " -> " + std::to_string(value);
    case EventKind::kBreakpoint: return "breakpoint" + where;
    case EventKind::kNestedPmap: return "nested pmap over " + axes + where;
    case EventKind::kError: return "raised" + where + ": " + text;
    case EventKind::kDeviceFinish: return "returned";
  }
  return "?";
}

std::string HistoryEntry::describe() const {
  std::string s = std::string(collective_name(kind)) + " over " + axes;
  if (!types.empty()) s += " " + types;
  if (loc.valid()) s += " at " + loc.to_string();
  return s;
}

DeviceContext::DeviceContext(Run& r, DeviceContext* p, int id, DeviceId dev, std::vector<AxisBinding> e,
                             int index, int axes_bound, std::shared_ptr<Arena> arena)
    : run(r), parent(p), uid(id), device(dev), env(std::move(e)), index_in_pmap(index), pmap_axes(axes_bound),
      label(make_label(dev, env)) {
  placement.context = this;
  placement.arena = std::move(arena);
  placement.device = dev;
}

void DeviceContext::record_recent(RecentEvent e, std::size_t capacity) {
  if (capacity == 0) return;
  if (recent_.size() >= capacity) recent_.pop_front();
  recent_.push_back(std::move(e));
}

void DeviceContext::record_history(HistoryEntry e) {
  if (history_.size() >= kHistoryCapacity) history_.pop_front();
  history_.push_back(std::move(e));
  ++history_total_;
}

const HistoryEntry* DeviceContext::history_at(std::int64_t i) const {
  std::int64_t first = history_total_ - static_cast<std::int64_t>(history_.size());
  if (i < first || i >= history_total_) return nullptr;
  return &history_[static_cast<std::size_t>(i - first)];
}

DeviceContext* current_context() noexcept { return current_placement()->context; }

}  // namespace spmd::detail
