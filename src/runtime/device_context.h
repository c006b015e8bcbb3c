#pragma once
// Everything the runtime knows about one running device. Fields are grouped
// by who may touch them: the device itself, or anyone holding the Run's mutex.

#include <atomic>
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

/// One collective call site as a device saw it (op, axes, operand types,
/// line). Interned per device: the history and recent-event rings point at
/// it, so entering a collective copies no strings.
struct CollectiveSite {
  CollectiveKind kind = CollectiveKind::kBarrier;
  const std::string* axes = nullptr;  // ResolvedAxes::text in the device's axes cache
  std::vector<OperandType> operands;
  std::string types;  // "f32[4],i32[]", rendered once
  SourceLoc loc;
  /// Same collective as another device's (compares contents, not addresses).
  friend bool operator==(const CollectiveSite& a, const CollectiveSite& b) {
    return a.kind == b.kind && *a.axes == *b.axes && a.operands == b.operands && a.loc == b.loc;
  }
  std::string describe() const;
};

/// A compact record of what a device did, rendered only for reports.
/// Collective events name their site instead of carrying op/axes/types.
struct RecentEvent {
  EventKind kind;
  bool completed = false;  // a collective entered here has completed
  std::int64_t seq = -1;
  const CollectiveSite* site = nullptr;
  SourceLoc loc{};
  std::int64_t value = 0;
  std::string op{};
  std::string axes{};
  std::string types{};
  std::string text{};
  std::string render() const;
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
  const std::pair<std::vector<std::string>, ResolvedAxes>* last_axes = nullptr;  // checked first
  std::vector<std::pair<std::uint64_t, Communicator*>> comm_cache;  // axes mask -> communicator
  void record_recent(RecentEvent e, std::size_t capacity);
  /// The site of `sig` (axes_text: the cached ResolvedAxes::text), interned.
  const CollectiveSite& intern_site(const CollectiveSignature& sig, const std::string& axes_text);
  /// Appends collective #history_size() to the history and, as entered, to
  /// the recent events (keeping `recent_capacity` of them).
  void record_collective(const CollectiveSite& site, std::size_t recent_capacity);
  /// The retained recent events, oldest first; a collective entered is marked
  /// completed when collectives_done counts it (read under Run::mutex()).
  std::vector<RecentEvent> recent() const;
  /// Collectives entered so far and the retained tail of them.
  std::int64_t history_size() const { return history_total_; }
  /// Collective `i` (0-based over all collectives entered), if still retained.
  const CollectiveSite* history_at(std::int64_t i) const;
  DecisionLog decisions;

  // --- guarded by Run::mutex() ---
  DeviceState state = DeviceState::kReady;
  Arrival* waiting = nullptr;          // the collective it is parked at
  std::atomic<bool> released = false;  // set by Run::release() under the mutex; read after a wake
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
  RecentEvent& next_recent_slot(std::size_t capacity);
  std::deque<CollectiveSite> sites_;  // deque: stable addresses
  const CollectiveSite* last_site_ = nullptr;
  std::vector<const CollectiveSite*> history_;  // ring of kHistoryCapacity
  std::int64_t history_total_ = 0;
};

/// The context of the calling fiber, or nullptr on the host.
DeviceContext* current_context() noexcept;

}  // namespace spmd::detail
