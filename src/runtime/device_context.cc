#include "runtime/device_context.h"

#include <algorithm>
#include <stdexcept>

#include "rendezvous/communicator.h"
#include "runtime/run.h"

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
        return "#" + std::to_string(seq) + " " + std::string(collective_name(site->kind)) + " over " + site->axes.text() +
               (site->types.empty() ? "" : " " + site->types) + where + (completed ? " (done)" : " (entered)");
      }
      return "#" + std::to_string(seq) + " " + op + " over " + axes + (types.empty() ? "" : " " + types) + where +
             (completed ? " (done)" : " (entered)");
    case EventKind::kCollectiveExit: return "#" + std::to_string(seq) + " " + op + " over " + axes + " done";
    case EventKind::kDebugPrint: return "debug_print" + where + ": " + text;
    case EventKind::kDecision: return op + where + " -> " + std::to_string(value);
    case EventKind::kBreakpoint: return "breakpoint" + where;
    case EventKind::kNestedPmap: return "nested pmap over " + axes + where;
    case EventKind::kError: return "raised" + where + ": " + op + ": " + text;  // op: the error's kind
    case EventKind::kDeviceFinish: return "returned";
  }
  return "?";
}

DeviceContext::DeviceContext(Run& r, DeviceContext* p, int id, DeviceId dev, std::vector<AxisBinding> e,
                             int index, int devices, int axes_bound, std::shared_ptr<Arena> arena,
                             std::unique_ptr<Parker> parker)
    : parker_(std::move(parker)),
      run(r),
      history_(std::max(kHistoryCapacity, r.options().recent_events)),
      parent(p),
      uid(id),
      device(dev),
      env(std::move(e)),
      index_in_pmap(index),
      devices_in_pmap(devices),
      pmap_axes(axes_bound),
      label(make_label(device, env)) {
  placement.context = this;
  placement.arena = std::move(arena);
  placement.device = dev;
}

void DeviceContext::record_recent(RecentEvent e, std::size_t capacity) {
  if (capacity == 0) return;
  if (recent_.size() < capacity) recent_.resize(capacity);
  RecentEvent& slot = recent_[recent_next_];
  recent_next_ = (recent_next_ + 1) % recent_.size();
  recent_count_ = std::min(recent_count_ + 1, recent_.size());
  // Copy-assign the strings: the slot keeps its buffers from earlier events.
  slot.kind = e.kind;
  slot.completed = false;
  slot.seq = e.seq;
  slot.after_collectives = history_.size();
  slot.site = e.site;
  slot.loc = e.loc;
  slot.value = e.value;
  slot.op = e.op;
  slot.axes = e.axes;
  slot.types = e.types;
  slot.text = e.text;
}

const CollectiveSite& DeviceContext::intern_new_site(const CollectiveSignature& sig) {
  for (auto it = sites_.rbegin(); it != sites_.rend(); ++it) {
    if ((*it)->matches(sig)) return **it;
  }
  sites_.push_back(&run.sites().intern(sig));
  return *sites_.back();
}

std::vector<RecentEvent> DeviceContext::recent() const {
  const std::size_t wanted = run.options().recent_events;
  // Newest first: take the newer of the next other event and the next
  // collective. An event recorded after n collectives is newer than collective #k when n > k.
  std::vector<RecentEvent> newest_first;
  std::size_t other = 0;  // other events taken
  std::int64_t next_collective = history_.size() - 1;
  const std::int64_t oldest_retained = history_.size() - std::min(history_.size(), history_.capacity());
  while (newest_first.size() < wanted) {
    const RecentEvent* e =
        other < recent_count_ ? &recent_[(recent_next_ + recent_.size() - 1 - other) % recent_.size()] : nullptr;
    bool collective_left = next_collective >= oldest_retained;
    if (e != nullptr && (!collective_left || e->after_collectives > next_collective)) {
      newest_first.push_back(*e);
      ++other;
    } else if (collective_left) {
      RecentEvent c{EventKind::kCollectiveEnter};
      c.seq = next_collective;
      c.after_collectives = next_collective;
      c.site = history_at(next_collective);
      c.loc = c.site->loc;
      // A device's collectives complete in order: the first collectives_done did.
      c.completed = next_collective < collectives_done_;
      newest_first.push_back(std::move(c));
      --next_collective;
    } else {
      break;
    }
  }
  return {std::make_move_iterator(newest_first.rbegin()), std::make_move_iterator(newest_first.rend())};
}

namespace {

constexpr std::uint32_t bit(DeviceState s) { return std::uint32_t{1} << static_cast<unsigned>(s); }

// The states each state may go to (see the picture in device_context.h).
constexpr std::uint32_t kParked =
    bit(DeviceState::kWaitingCollective) | bit(DeviceState::kAtBreakpoint) | bit(DeviceState::kWaitingChildren);
constexpr std::uint32_t kEnds = bit(DeviceState::kRaised) | bit(DeviceState::kAborted);

constexpr std::uint32_t successors(DeviceState s) {
  switch (s) {
    case DeviceState::kReady: return bit(DeviceState::kRunning);
    case DeviceState::kRunning: return kParked | kEnds | bit(DeviceState::kFinished);
    case DeviceState::kWaitingCollective:
    case DeviceState::kAtBreakpoint:
    case DeviceState::kWaitingChildren: return bit(DeviceState::kRunning) | kEnds;
    case DeviceState::kFinished:
    case DeviceState::kRaised:
    case DeviceState::kAborted: return 0;
  }
  return 0;
}

}  // namespace

void DeviceContext::become(DeviceState next) {
  if ((successors(state_) & bit(next)) == 0) [[unlikely]] {
    throw std::logic_error("spmd runtime: " + label + " cannot go from " + std::string(device_state_name(state_)) +
                           " to " + std::string(device_state_name(next)) + " (please report this bug)");
  }
  state_ = next;
}

void DeviceContext::raise(Raised error) {
  become(DeviceState::kRaised);
  end_loc_ = error.where.valid() ? error.where : current_loc;
  raised_ = std::move(error);
}

void DeviceContext::stop() {
  if (end_detail_.empty()) {
    note_stop(state_ == DeviceState::kRunning && !current_loc.valid() && history_.size() == 0 ? "stopped before it ran"
                                                                                            : "stopped while running",
              current_loc);
  }
  become(DeviceState::kAborted);
}

void DeviceContext::note_stop(std::string detail, SourceLoc loc) {
  if (!end_detail_.empty()) return;
  end_detail_ = std::move(detail);
  end_loc_ = loc;
}

void DeviceContext::note_stop_while_parked() {
  if (state_ == DeviceState::kAtBreakpoint) {
    note_stop("stopped at a breakpoint", breakpoint_loc_);
  } else if (state_ == DeviceState::kWaitingCollective && waiting_ != nullptr) {
    note_stop("stopped while waiting at " + waiting_->sig->op_and_axes() + " #" + std::to_string(waiting_->seq),
              waiting_->sig->loc);
  }
}

Placement& placement_of(DeviceContext& ctx) { return ctx.placement; }

}  // namespace spmd::detail
