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
             (completed ? " (done)" : " (entered)");
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
  if (recent_.size() < capacity) recent_.resize(capacity);
  RecentEvent& slot = recent_[recent_next_];
  // Copy-assign the strings: the slot keeps its buffers from earlier events.
  slot.kind = e.kind;
  slot.seq = e.seq;
  slot.op = e.op;
  slot.axes = e.axes;
  slot.types = e.types;
  slot.value = e.value;
  slot.text = e.text;
  slot.loc = e.loc;
  slot.completed = false;
  recent_next_ = (recent_next_ + 1) % recent_.size();
  recent_count_ = std::min(recent_count_ + 1, recent_.size());
}

void DeviceContext::complete_last_collective() {
  if (recent_count_ == 0) return;
  RecentEvent& last = recent_[(recent_next_ + recent_.size() - 1) % recent_.size()];
  if (last.kind == EventKind::kCollectiveEnter) last.completed = true;
}

std::vector<RecentEvent> DeviceContext::recent() const {
  std::vector<RecentEvent> out;
  out.reserve(recent_count_);
  std::size_t first = (recent_next_ + recent_.size() - recent_count_) % std::max<std::size_t>(recent_.size(), 1);
  for (std::size_t i = 0; i < recent_count_; ++i) out.push_back(recent_[(first + i) % recent_.size()]);
  return out;
}

void DeviceContext::record_history(const CollectiveSignature& sig, std::string axes_text) {
  // Collective n lives in slot n % capacity; the vector grows until the ring is full.
  std::size_t index = static_cast<std::size_t>(history_total_ % static_cast<std::int64_t>(kHistoryCapacity));
  if (index >= history_.size()) history_.resize(index + 1);
  HistoryEntry& h = history_[index];
  h.kind = sig.kind;
  h.axes = std::move(axes_text);
  h.types.clear();
  for (std::size_t i = 0; i < sig.operands.size(); ++i) {
    if (i) h.types += ',';
    h.types += abstract_type(sig.operands[i].dtype, sig.operands[i].shape);
  }
  h.loc = sig.loc;
  ++history_total_;
}

const HistoryEntry* DeviceContext::history_at(std::int64_t i) const {
  std::int64_t retained = std::min<std::int64_t>(history_total_, static_cast<std::int64_t>(kHistoryCapacity));
  if (i < history_total_ - retained || i >= history_total_) return nullptr;
  return &history_[static_cast<std::size_t>(i % static_cast<std::int64_t>(kHistoryCapacity))];
}

DeviceContext* current_context() noexcept { return current_placement()->context; }

}  // namespace spmd::detail
