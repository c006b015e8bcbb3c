#pragma once
// Everything the runtime knows about one running device. Fields are grouped
// by who may touch them: the device itself, or anyone holding the Run's mutex.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "core/placement.h"
#include "rendezvous/collective_signature.h"
#include "rendezvous/rendezvous.h"
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
struct RecentEvent {
  EventKind kind;
  std::int64_t seq = -1;
  std::string op;
  std::string axes;
  std::string types;
  std::int64_t value = 0;
  std::string text;
  SourceLoc loc;
  bool completed = false;  // a collective entered here has completed
  std::string render() const;
};

/// One collective in a device's history (for divergence analysis).
struct HistoryEntry {
  CollectiveKind kind;
  std::string axes;
  std::string types;
  SourceLoc loc;
  friend bool operator==(const HistoryEntry&, const HistoryEntry&) = default;
  std::string describe() const;
};

class DeviceContext {
 public:
  static constexpr std::size_t kHistoryCapacity = 128;

  DeviceContext(Run& run, DeviceContext* parent, int uid, DeviceId device, std::vector<AxisBinding> env,
                int index_in_pmap, int pmap_axes, std::shared_ptr<Arena> arena);

  Run& run;
  DeviceContext* const parent;
  const int uid;              // unique within the run (parents and children differ)
  const DeviceId device;      // physical device: arena and reports
  const std::vector<AxisBinding> env;  // outermost first
  const int index_in_pmap;
  const int pmap_axes;        // how many trailing env axes the innermost pmap bound
  const std::string label;    // "device 3" or "device 3 (i=1, j=1)"
  Placement placement;
  std::unique_ptr<Parker> parker;

  // --- touched only by the device itself (reporters read them once it is parked or done) ---
  SourceLoc current_loc;
  std::uint64_t steps = 0;
  /// Axes named by this device's collectives, resolved once (see rendezvous.h).
  std::deque<std::pair<std::vector<std::string>, ResolvedAxes>> axes_cache;  // deque: stable references
  std::vector<std::pair<std::uint64_t, Communicator*>> comm_cache;  // axes mask -> communicator
  void record_recent(RecentEvent e, std::size_t capacity);
  /// Marks the newest recent event (the collective just entered) as completed,
  /// instead of recording a separate exit event.
  void complete_last_collective();
  void record_history(const CollectiveSignature& sig, std::string axes_text);
  /// The retained recent events, oldest first.
  std::vector<RecentEvent> recent() const;
  /// Collectives entered so far and the retained tail of them.
  std::int64_t history_size() const { return history_total_; }
  /// Entry `i` (0-based over all collectives entered), if still retained.
  const HistoryEntry* history_at(std::int64_t i) const;
  DecisionLog decisions;

  // --- guarded by Run::mutex() ---
  DeviceState state = DeviceState::kReady;
  Arrival* waiting = nullptr;          // the collective it is parked at
  bool released = false;               // park() predicate
  int children_pending = 0;
  std::int64_t collectives_done = 0;
  std::string end_detail;              // "raised NameError: ...", or what it was doing when aborted
  SourceLoc end_loc;
  std::vector<std::pair<std::string, Array>> breakpoint_values;
  SourceLoc breakpoint_loc;

 private:
  // Fixed rings: entries are overwritten in place, so recording an event
  // reuses the strings' storage instead of allocating.
  std::vector<RecentEvent> recent_;
  std::size_t recent_next_ = 0;
  std::size_t recent_count_ = 0;
  std::vector<HistoryEntry> history_;
  std::int64_t history_total_ = 0;
};

/// The context of the calling fiber, or nullptr on the host.
DeviceContext* current_context() noexcept;

}  // namespace spmd::detail
