#pragma once
// The narrow interface between the runtime and an execution backend
// (simulated fibers, or CUDA host threads). Above this line nothing knows how
// devices run; below it nothing knows about pmap or reports.

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/core/device_id.h"

namespace spmd::dist {
class ProcessGroup;
}

namespace spmd::detail {

class Arena;
class DeviceContext;
struct Placement;
class Run;
struct CollectiveCall;

/// Blocks one device until another device wakes it. Called under the Run's
/// mutex: park() releases `lock` and does not take it back.
class Parker {
 public:
  virtual ~Parker() = default;
  /// Releases `lock` and waits for unpark(); returns with `lock` released.
  /// May return spuriously: the caller re-checks its condition.
  virtual void park(std::unique_lock<std::mutex>& lock) = 0;
  /// Wakes the parked device; call under the lock park() released.
  virtual void unpark() = 0;
};

using DeviceBody = std::function<void(DeviceContext&)>;

/// What a backend may ask of the run that launched its devices, for its own
/// reports (queries only: a backend never changes a device's life):
/// declared here, implemented by the runtime's Run, so a backend never sees
/// the Run itself.
class LaunchedRun {
 public:
  virtual ~LaunchedRun() = default;
  /// How long a wait for device work may take before the backend reports it
  /// (RuntimeOptions::watchdog_s; 0: no limit).
  virtual double watchdog_seconds() const = 0;
  /// One line per device: its label and state, and the collective it waits
  /// at ("device 3: waiting at psum over 'i' #4 (f.py:9)"), with the device
  /// id. Empty with `busy` set when the run's lock is held elsewhere (the
  /// caller may be inside it).
  virtual std::vector<std::pair<DeviceId, std::string>> device_lines(bool& busy) = 0;
};

/// What a backend needs of a device the runtime hands it: where its arrays
/// live (its placement, to install on the fiber or thread that runs it).
/// Defined by the runtime, which owns DeviceContext: backends never see
/// its inside.
Placement& placement_of(DeviceContext& ctx);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  /// Devices this backend can run at most (virtual devices: the configured count).
  virtual int device_count() const = 0;
  virtual std::shared_ptr<Arena> make_arena(DeviceId device, std::size_t capacity, std::string label) = 0;
  /// A device's Parker, owned by its context. At a thousand devices each
  /// wake is a cache miss on the parker: backends give theirs a cache line of
  /// its own (alignas(64)), so it shares none with another device's.
  virtual std::unique_ptr<Parker> make_parker() = 0;
  /// Runs `body` once per context, each as its own device (a fiber, a host
  /// thread) with the context's placement installed, and returns when all
  /// have returned. `body` is the runtime's whole device lifecycle
  /// (Run::run_device): it records errors itself and never throws. Called on
  /// the host for a top-level pmap and from a device for a nested one; the
  /// caller is then accounted as waiting.
  virtual void launch(LaunchedRun& run, std::span<DeviceContext* const> devices, const DeviceBody& body) = 0;
  /// Why this backend cannot run a nested pmap (devices launched from a
  /// device), or null when it can: the runtime then ends those devices with
  /// this error instead of launching them.
  virtual std::exception_ptr nested_launch_error() const { return nullptr; }
  /// On the device's own fiber or thread, inside its lifecycle, just before
  /// and just after the user's function (CUDA binds the thread to its GPU,
  /// then waits for the device's last kernels). An exception ends the device
  /// with that error.
  virtual void enter_device(DeviceContext&) {}
  virtual void leave_device(DeviceContext&) {}
  /// Lets other devices run (fairness for long computations without collectives).
  virtual void yield() = 0;
  /// Moves data for a collective whose members all arrived with matching
  /// signatures: fills call.outputs of every member. Runs on the last arriving
  /// device, without the Run's lock.
  virtual void execute(CollectiveCall& call) = 0;
  /// Like execute() for a collective whose group spans processes (a run
  /// with local devices): `call` holds this process's members, the others
  /// are placeholders (ctx == nullptr) that `processes` reaches. Runs after
  /// the processes' signatures were checked equal. The default refuses.
  virtual void execute_across_processes(CollectiveCall& call, dist::ProcessGroup& processes);
};

/// The devices one process runs, of all `devices` of the job: every one
/// (count == devices), or its share in a multi-process run with local
/// devices (RuntimeOptions::process_local_devices).
struct LocalDevices {
  int first = 0;
  int count = 0;
  bool contains(DeviceId d) const { return d >= first && d < first + count; }
};

}  // namespace spmd::detail
