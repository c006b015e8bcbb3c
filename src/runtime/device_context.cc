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
      if (site != nullptr) {
        return "#" + std::to_string(seq) + " " + std::string(collective_name(site->kind)) + " over " + *site->axes +
               (site->types.empty() ? "" : " " + site->types) + where + (completed ? " (done)" : " (entered)");
      }
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

std::string CollectiveSite::describe() const {
  std::string s = std::string(collective_name(kind)) + " over " + *axes;
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

RecentEvent& DeviceContext::next_recent_slot(std::size_t capacity) {
  if (recent_.size() < capacity) recent_.resize(capacity);
  RecentEvent& slot = recent_[recent_next_];
  recent_next_ = (recent_next_ + 1) % recent_.size();
  recent_count_ = std::min(recent_count_ + 1, recent_.size());
  return slot;
}

void DeviceContext::record_recent(RecentEvent e, std::size_t capacity) {
  if (capacity == 0) return;
  RecentEvent& slot = next_recent_slot(capacity);
  // Copy-assign the strings: the slot keeps its buffers from earlier events.
  slot.kind = e.kind;
  slot.completed = false;
  slot.seq = e.seq;
  slot.site = e.site;
  slot.loc = e.loc;
  slot.value = e.value;
  slot.op = e.op;
  slot.axes = e.axes;
  slot.types = e.types;
  slot.text = e.text;
}

const CollectiveSite& DeviceContext::intern_site(const CollectiveSignature& sig, const std::string& axes_text) {
  auto same = [&](const CollectiveSite& s) {
    return s.kind == sig.kind && s.axes == &axes_text && s.loc == sig.loc && s.operands == sig.operands;
  };
  // A loop calls the same site again and again: check the last one first.
  if (last_site_ != nullptr && same(*last_site_)) return *last_site_;
  for (auto it = sites_.rbegin(); it != sites_.rend(); ++it) {
    if (same(*it)) return *(last_site_ = &*it);
  }
  CollectiveSite& site = sites_.emplace_back();
  site.kind = sig.kind;
  site.axes = &axes_text;
  site.operands = sig.operands;
  site.types = sig.operand_types();
  site.loc = sig.loc;
  return *(last_site_ = &site);
}

void DeviceContext::record_collective(const CollectiveSite& site, std::size_t recent_capacity) {
  // Collective n lives in slot n % capacity.
  if (history_.empty()) history_.resize(kHistoryCapacity);
  history_[static_cast<std::size_t>(history_total_ % static_cast<std::int64_t>(kHistoryCapacity))] = &site;
  if (recent_capacity > 0) {
    // Only the fixed fields: the strings of a collective event stay unread.
    RecentEvent& slot = next_recent_slot(recent_capacity);
    slot.kind = EventKind::kCollectiveEnter;
    slot.completed = false;
    slot.seq = history_total_;
    slot.site = &site;
    slot.loc = site.loc;
  }
  ++history_total_;
}

std::vector<RecentEvent> DeviceContext::recent() const {
  std::vector<RecentEvent> out;
  out.reserve(recent_count_);
  std::size_t first = (recent_next_ + recent_.size() - recent_count_) % std::max<std::size_t>(recent_.size(), 1);
  for (std::size_t i = 0; i < recent_count_; ++i) {
    RecentEvent& e = out.emplace_back(recent_[(first + i) % recent_.size()]);
    // A device's collectives complete in order: the first collectives_done did.
    e.completed = e.kind == EventKind::kCollectiveEnter && e.seq < collectives_done;
  }
  return out;
}

const CollectiveSite* DeviceContext::history_at(std::int64_t i) const {
  std::int64_t retained = std::min<std::int64_t>(history_total_, static_cast<std::int64_t>(kHistoryCapacity));
  if (i < history_total_ - retained || i >= history_total_) return nullptr;
  return history_[static_cast<std::size_t>(i % static_cast<std::int64_t>(kHistoryCapacity))];
}

DeviceContext* current_context() noexcept { return current_placement()->context; }

}  // namespace spmd::detail
