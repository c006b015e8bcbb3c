#pragma once
// Everything the runtime knows about one running device. Fields are grouped
// by who may touch them: the device itself, or anyone holding the Run's mutex.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "core/placement.h"
#include "rendezvous/collective_signature.h"
#include "rendezvous/collective_site.h"
#include "runtime/rendezvous.h"
#include "runtime/collective_history.h"
#include "runtime/decision_log.h"
#include "spmd/core/array.h"
#include "spmd/runtime/device.h"
#include "spmd/trace/event.h"

namespace spmd::detail {

class Run;
struct Arrival;
struct Communicator;

enum class DeviceState : std::uint8_t {
  kReady,             // created, not started
  kRunning,
  kWaitingCollective, // parked at a rendezvous
  kAtBreakpoint,      // parked at a breakpoint
  kWaitingChildren,   // running a nested pmap
  kFinished,
  kRaised,
  kAborted,           // stopped because the run ended elsewhere
};

std::string_view device_state_name(DeviceState s);

/// A compact record of what a device did, rendered only for reports.
/// Collective events name their site instead of carrying op/axes/types.
struct RecentEvent {
  EventKind kind;
  bool completed = false;  // a collective entered here has completed
  std::int64_t seq = -1;
  std::int64_t after_collectives = 0;  // collectives the device had entered before this event
  const CollectiveSite* site = nullptr;
  SourceLoc loc{};
  std::int64_t value = 0;
  std::string op{};  // a collective's or decision's name; an error's kind
  std::string axes{};
  std::string types{};
  std::string text{};
  std::string render() const;
};

/// a == b for the short names axes have, without a memcmp call per name.
inline bool same_names(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string& x = a[i];
    const std::string& y = b[i];
    if (x.size() != y.size()) return false;
    for (std::size_t k = 0; k < x.size(); ++k) {
      if (x[k] != y[k]) return false;
    }
  }
  return true;
}

class alignas(64) DeviceContext {
 public:
  /// Collectives retained per device (more when RuntimeOptions::recent_events asks for more).
  static constexpr std::size_t kHistoryCapacity = 128;

  DeviceContext(Run& run, DeviceContext* parent, int uid, DeviceId device, std::vector<AxisBinding> env,
                int index_in_pmap, int devices_in_pmap, int pmap_axes, std::shared_ptr<Arena> arena,
                std::unique_ptr<Parker> parker);
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  // --- hot: what every collective reads or writes, in two cache lines and
  //     the parker's (at a thousand devices, each line a rendezvous touches
  //     per device is a cache miss when it comes around; the static_assert
  //     below the class checks the layout). Line 1 holds all that the device
  //     completing a rendezvous reads and writes for each member it releases,
  //     the pointer to its parker included; line 2 what only the device
  //     itself touches. ---
  Placement placement;

 private:
  // The device's life, guarded by Run::mutex() and written only by the
  // life-cycle methods below.
  DeviceState state_ = DeviceState::kReady;
  std::atomic<bool> released_ = false;  // set by wake(); read by the parked device after a wakeup
  const Arrival* waiting_ = nullptr;    // the collective it is parked at
  std::int64_t collectives_done_ = 0;
  std::unique_ptr<Parker> parker_;  // the backend's; its object sits on a cache line of its own

 public:
  /// Device only: the axes its last collective named (see axes_cache).
  ResolvedAxes* last_axes = nullptr;
  Run& run;

 private:
  // Device only. The collectives entered, as shared sites; recent()
  // interleaves them with the ring of other events.
  CollectiveHistory history_;

 public:
  /// The device's Parker (made by the backend when the context was).
  Parker& parker() noexcept { return *parker_; }

  // --- fixed at creation ---
  DeviceContext* const parent;
  const int uid;              // unique within the run (parents and children differ)
  const DeviceId device;      // physical device: arena and reports
  const std::vector<AxisBinding> env;  // outermost first
  const int index_in_pmap;
  const int devices_in_pmap;  // this process's devices in the innermost pmap, this one included
  const int pmap_axes;        // how many trailing env axes the innermost pmap bound
  const std::string label;    // "device 3" or "device 3 (i=1, j=1)"

  // --- touched only by the device itself (reporters read them once it is parked or done) ---
  SourceLoc current_loc;
  std::uint64_t steps = 0;
  /// Axes named by this device's collectives, resolved once (see rendezvous.h).
  std::deque<ResolvedAxes> axes_cache;  // deque: stable references
  /// Records an event other than entering a collective (keeping `capacity` of them).
  void record_recent(RecentEvent e, std::size_t capacity);
  /// The run's site of `sig`, found in the sites this device used before
  /// when it can be (no lock).
  const CollectiveSite& intern_site(const CollectiveSignature& sig) {
    // A loop calls the same site again and again: check the last one first.
    const CollectiveSite* last = history_.last();
    if (last != nullptr && last->matches(sig)) return *last;
    return intern_new_site(sig);
  }
  /// resolve_axes_cached(*this, axes, ...), with the common case inline: the
  /// same axes as this device's previous collective.
  ResolvedAxes& resolve(const std::vector<std::string>& axes, std::string_view op, SourceLoc loc) {
    if (last_axes != nullptr && same_names(last_axes->names.names(), axes)) return *last_axes;
    return resolve_axes_cached(*this, axes, op, loc);
  }
  /// Appends collective #history_size() to the history.
  void record_collective(const CollectiveSite& site) { history_.record(&site); }
  /// The last RuntimeOptions::recent_events events, collectives entered and
  /// others, oldest first; a collective entered is marked completed when
  /// collectives_done counts it (read under Run::mutex()).
  std::vector<RecentEvent> recent() const;
  /// Collectives entered so far and the retained tail of them.
  std::int64_t history_size() const { return history_.size(); }
  std::int64_t history_capacity() const { return history_.capacity(); }
  /// Collective `i` (0-based over all collectives entered), if still retained.
  const CollectiveSite* history_at(std::int64_t i) const { return history_.at(i); }
  DecisionLog decisions;

  // --- the device's life: every transition is one method, called under
  //     Run::mutex(). A transition the life cycle does not have (a finished
  //     device that starts to wait, say) throws std::logic_error: a bug in the
  //     runtime is reported, never left as a wrong state in a report.
  //
  //   ready -> running -> waiting (a collective) | at breakpoint | in nested pmap -> running ...
  //   running or parked -> finished | raised | stopped ---

  /// The error a device raised, as data: reports render it, nothing parses it back.
  struct Raised {
    std::string kind;     // "NameError", "DeviceError", ...
    std::string message;
    SourceLoc where;      // the line it was raised at, when known
    std::string text() const { return "raised " + kind + ": " + message; }
  };

  DeviceState state() const { return state_; }
  /// Finished, raised or stopped: it runs no more.
  bool ended() const {
    return state_ == DeviceState::kFinished || state_ == DeviceState::kRaised || state_ == DeviceState::kAborted;
  }
  /// The collective it is parked at (state kWaitingCollective), else null.
  const Arrival* waiting() const { return waiting_; }
  /// Collectives it completed: every device's complete in the order it entered them.
  std::int64_t collectives_done() const { return collectives_done_; }
  /// Whether wake() ran since it began to wait; the one field a parked device
  /// reads without the mutex (after a wakeup).
  bool released() const { return released_.load(std::memory_order_acquire); }
  const std::optional<Raised>& raised() const { return raised_; }
  /// Why and where the run stopped it (state kAborted), or where it ended.
  const std::string& end_detail() const { return end_detail_; }
  SourceLoc end_loc() const { return end_loc_; }
  const std::vector<std::pair<std::string, Array>>& breakpoint_values() const { return breakpoint_values_; }
  SourceLoc breakpoint_loc() const { return breakpoint_loc_; }

  /// ready -> running.
  void start() { become(DeviceState::kRunning); }
  /// running -> parked: at the collective `at` (kWaitingCollective), at a
  /// breakpoint (after hold_breakpoint) or for nested devices (after wait_for_children).
  void begin_wait(DeviceState why, const Arrival* at = nullptr) {
    become(why);
    waiting_ = at;
    released_.store(false, std::memory_order_relaxed);  // under the mutex
  }
  /// parked -> running; the values a breakpoint held go with it.
  void wake() {
    if (state_ == DeviceState::kAtBreakpoint) breakpoint_values_.clear();
    become(DeviceState::kRunning);
    waiting_ = nullptr;
    released_.store(true, std::memory_order_release);
  }
  /// The collective it waited at (or completed last) is done.
  void complete_collective() { ++collectives_done_; }
  /// Keeps what a breakpoint shows until the handler ran (before begin_wait(kAtBreakpoint)).
  void hold_breakpoint(std::vector<std::pair<std::string, Array>> values, SourceLoc loc) {
    breakpoint_values_ = std::move(values);
    breakpoint_loc_ = loc;
  }
  /// running -> in nested pmap, until `children` nested devices ended.
  void wait_for_children(int children) {
    children_pending_ = children;
    begin_wait(DeviceState::kWaitingChildren);
  }
  /// One nested device ended; true for the last, which wakes the parent.
  bool child_ended() { return --children_pending_ == 0; }
  /// running -> finished, at the line it stood at.
  void finish() {
    become(DeviceState::kFinished);
    end_loc_ = current_loc;
  }
  /// -> raised `error` (from any state a live device is in: an exception can
  /// escape from anywhere on its stack).
  void raise(Raised error);
  /// -> stopped, because the run ended elsewhere; says why unless note_stop did.
  void stop();
  /// Why the run stops it and where, kept for the report; the first reason
  /// given stands (the device that saw the abort first knows best).
  void note_stop(std::string detail, SourceLoc loc);
  /// note_stop for a parked device: what it was parked at.
  void note_stop_while_parked();

 private:
  void become(DeviceState next);
  int children_pending_ = 0;
  std::optional<Raised> raised_;
  std::string end_detail_;
  SourceLoc end_loc_;
  std::vector<std::pair<std::string, Array>> breakpoint_values_;
  SourceLoc breakpoint_loc_;

 private:
  const CollectiveSite& intern_new_site(const CollectiveSignature& sig);
  std::vector<const CollectiveSite*> sites_;  // the run's sites this device used
  // Fixed ring of the other events: entries are overwritten in place, so
  // recording an event reuses the strings' storage instead of allocating.
  std::vector<RecentEvent> recent_;
  std::size_t recent_next_ = 0;
  std::size_t recent_count_ = 0;
};

/// The layout the hot-fields comment above promises: what the releaser
/// touches fills the first cache line, and the device's own fields start the second.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"  // not standard layout; GCC and Clang give the offset
static_assert(alignof(DeviceContext) == 64 && offsetof(DeviceContext, last_axes) == 64,
              "DeviceContext's releaser fields no longer fill its first cache line");
#pragma GCC diagnostic pop

/// The context of the calling fiber, or nullptr on the host.
inline DeviceContext* current_context() noexcept { return current_placement()->context; }

}  // namespace spmd::detail
