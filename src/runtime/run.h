#pragma once
// One top-level pmap execution: the devices (nested ones included), their
// communicators, and the one mutex that orders every blocking decision.
//
// Deadlock detection is exact: `blocked_` counts devices parked at a
// rendezvous, a breakpoint or a nested pmap, `live_` counts started devices
// that have not ended. Whenever a device blocks or ends, under the mutex,
// blocked_ == live_ > 0 means nothing can ever wake anyone: the run stops with
// a DeadlockError (or a CollectiveMismatch when a partial rendezvous already
// disagrees). No timeout is involved.

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "dist/process_group.h"
#include "runtime/device_context.h"
#include "runtime/print_queue.h"
#include "spmd/report.h"
#include "spmd/runtime/runtime.h"

namespace spmd::detail {

class Backend;
struct Communicator;

/// Thrown inside devices to unwind them when the run ended elsewhere. Not an
/// spmd::Error: user code catching spmd::Error does not stop the unwinding.
struct RunAborted {};

/// State shared by all runs of one Runtime.
struct RuntimeState {
  RuntimeOptions options;
  std::unique_ptr<Backend> backend;
  std::vector<std::shared_ptr<Arena>> arenas;  // one per device, created lazily
  std::mutex arenas_mu;
  std::shared_ptr<Arena> arena(DeviceId device);
  // The top-level run in progress, for interrupt(), since when, and the
  // time of the finished ones (guarded by active_mu).
  std::mutex active_mu;
  class Run* active = nullptr;
  std::chrono::steady_clock::time_point active_since{};
  std::chrono::steady_clock::duration finished_run_time{};
  // Set by interrupt(), sticky; the reason is guarded by active_mu.
  std::atomic<bool> interrupted{false};
  std::string interrupt_reason;
  // Whether a top-level run took the interrupt (guarded by active_mu): that
  // run's pmap throws it, with where every device stood.
  bool interrupt_reached_run = false;
  /// The "Interrupted" error (lock active_mu first).
  std::exception_ptr interrupt_error_locked() const;
  /// The other processes of a multi-process run (process_count > 1), or null.
  std::unique_ptr<dist::ProcessGroup> processes;
  /// The devices this process runs: all, or its share (process_local_devices).
  LocalDevices local;
  bool runs_all_devices() const { return local.count == options.devices; }
};

class Run final : public LaunchedRun {
 public:
  Run(RuntimeState& runtime, RunInfo info);
  ~Run();

  RuntimeState& runtime() { return runtime_; }
  const RuntimeOptions& options() const { return runtime_.options; }
  Backend& backend() { return *runtime_.backend; }
  std::mutex& mutex() { return mu_; }
  const RunInfo& info() const { return info_; }
  std::chrono::steady_clock::time_point start_time() const { return start_; }

  /// Creates a device context (top-level: parent == nullptr).
  DeviceContext& add_context(DeviceContext* parent, DeviceId device, std::vector<AxisBinding> env,
                             int index_in_pmap, int devices_in_pmap, int pmap_axes);

  /// A device's whole life, the one place it is written: started, the
  /// backend's enter_device, `body`, leave_device, finished; or ended with
  /// the exception that escaped any of them (recorded, never rethrown).
  /// Backends run this on each device's fiber or thread (pmap_impl hands
  /// it to Backend::launch as the device body).
  void run_device(DeviceContext& ctx, const DeviceBody& body);

  /// Ends a device that could not start (the backend cannot launch it)
  /// with `error`, as if its body had raised it.
  void refuse_device(DeviceContext& ctx, std::exception_ptr error);

  // What a backend may ask while its devices run (LaunchedRun).
  double watchdog_seconds() const override;
  std::vector<std::pair<DeviceId, std::string>> device_lines(bool& busy) override;

  /// Marks the parent as waiting for `children` nested devices (before launch).
  void begin_nested(DeviceContext& parent, int children);
  /// After the nested launch returned: throws RunAborted when the run stopped.
  void end_nested(DeviceContext& parent);

  /// Parks `ctx` (lock held) in state `why` (at the collective `at`) until
  /// release() or abort; checks for quiescence first. Returns with `lock`
  /// released; throws RunAborted (lock state unspecified: the unique_lock
  /// knows) when the run was stopped.
  void block(std::unique_lock<std::mutex>& lock, DeviceContext& ctx, DeviceState why, const Arrival* at = nullptr);
  /// Wakes a parked device (lock held).
  void release(DeviceContext& ctx) {
    ctx.wake();
    --blocked_;
    ctx.parker().unpark();
  }

  /// Stops the run with `error` as its result unless one is already set
  /// (lock held); wakes every parked device.
  void abort_locked(std::exception_ptr error);
  void abort(std::exception_ptr error);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  /// The run's result: the first error, or null.
  std::exception_ptr error() const;

  /// The collective call sites of this run, shared by its devices.
  SiteTable& sites() { return sites_; }

  /// Communicator for the collective over `mask` (positions in ctx.env), lock
  /// held. Devices keep it in their ResolvedAxes: this runs once per device and axes.
  Communicator& communicator(DeviceContext& ctx, std::uint64_t mask);

  /// Events: ring buffer, observers. Collective events pass their signature
  /// so observers see every field.
  void record_event(DeviceContext& ctx, RecentEvent e, const CollectiveSignature* sig = nullptr,
                    bool keep_in_ring = true);
  bool has_observers() const { return !runtime_.options.observers.empty(); }
  void notify_observers(const Event& e);
  double now_us() const;

  /// Queues a debug print of `ctx` (see debug_print.h for the order).
  void queue_print(DeviceContext& ctx, DebugPrint p);
  bool has_pending_prints() const { return pending_prints_.load(std::memory_order_acquire) != 0; }
  /// Delivers queued debug prints that can no longer be preceded (call without the lock).
  void flush_prints(bool everything);

  /// Statuses of every device (lock held, or after all devices ended).
  std::vector<DeviceStatus> device_statuses() const;
  /// First differing collective and decision among `devices` (parked or ended).
  Divergence divergence(const std::vector<DeviceContext*>& devices) const;
  /// Top-level and nested contexts, in creation order.
  const std::vector<std::unique_ptr<DeviceContext>>& contexts() const { return contexts_; }

  /// Adds device statuses to the run's error report once every device ended.
  void finalize_error_report();

 private:
  void device_started(DeviceContext& ctx);
  void device_finished(DeviceContext& ctx);
  /// `error` is the exception that escaped the device (RunAborted included).
  void device_ended_with(DeviceContext& ctx, std::exception_ptr error);
  void check_quiescence(std::unique_lock<std::mutex>& lock);
  void fire_breakpoints(std::unique_lock<std::mutex>& lock);
  void report_deadlock();
  /// Accounts for a device that took its final state (lock held).
  void device_ended(DeviceContext& ctx);

  RuntimeState& runtime_;
  RunInfo info_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<DeviceContext>> contexts_;
  std::unordered_map<std::string, std::unique_ptr<Communicator>> communicators_;
  SiteTable sites_;
  int live_ = 0;
  int blocked_ = 0;
  std::atomic<bool> aborted_{false};
  std::exception_ptr error_;
  PrintQueue prints_;
  std::atomic<std::size_t> pending_prints_{0};
  std::mutex print_mu_;  // orders sink calls; taken before mu_, never while holding it
};

/// The Run of the calling device, or nullptr on the host.
Run* current_run() noexcept;

}  // namespace spmd::detail
