#pragma once
/// \file
/// Runtime: the device pool, its backend and the options of every run on it.
///
///   spmd::Runtime rt({.devices = 8});
///   auto out = rt.pmap(fn, {x, y}, {.axis_name = "i", .in_axes = {0, spmd::kReplicated}});
///
/// A Runtime runs one top-level pmap at a time (calls from several host
/// threads are serialised). Nested pmaps run inside a device of the current run.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/pmap/pmap_options.h"
#include "spmd/trace/observer.h"

namespace spmd {

class Error;
struct DebugPrint;
struct BreakpointStop;

/// Receives debug prints in deterministic order (see debug_print.h).
using PrintSink = std::function<void(const DebugPrint&)>;
/// Called once when every live device is stopped and some are at a breakpoint;
/// the devices at the breakpoint resume when it returns.
using BreakpointHandler = std::function<void(std::span<const BreakpointStop>)>;

struct RuntimeOptions {
  int devices = 8;                ///< virtual devices available (jax.device_count())
  int threads = 1;                ///< cores: OS threads the device fibers run on, and oneTBB's cap in kernels
  std::uint64_t seed = 0;         ///< schedule seed; with threads == 1 a run is reproducible
  std::size_t arena_capacity = std::size_t{16} << 30;  ///< bytes per device arena
  std::size_t fiber_stack_size = std::size_t{256} << 10;
  std::string backend = "sim";    ///< "sim" or "cuda"
  std::uint64_t step_budget = 0;  ///< max interpreter steps per device (0 = unlimited)
  double time_budget_s = 0;       ///< wall-clock budget for a run (0 = unlimited)
  /// cuda backend: seconds any wait for GPU work (a collective's completion,
  /// a download) may take before the run stops with a WatchdogTimeout naming
  /// the op each device last entered; 0 waits forever. Deadlocks between
  /// devices are detected exactly without it: it covers hangs below the host
  /// (a kernel that never ends). The sim backend ignores it.
  double watchdog_s = 300;
  std::size_t recent_events = 8;  ///< events kept per device for reports
  bool deterministic = false;     ///< no timestamps in traces
  /// false: collectives only meet and compare signatures, no data moves
  /// (outputs are empty). Used to replay recorded traces.
  bool collectives_move_data = true;
  std::vector<std::shared_ptr<Observer>> observers;
  PrintSink print_sink;           ///< default: stdout, "[device 3] text"
  BreakpointHandler breakpoint_handler;  ///< default: print every device's values, continue
  std::string repro;              ///< command that reproduces a run, shown in reports
  /// Several processes running the same program (jax.process_index() /
  /// process_count()): each simulates every device, and before each
  /// collective runs its signature is also checked against the other
  /// processes', through a directory they share (`process_store`; a shared
  /// mount across hosts). A process that diverges (a different collective,
  /// shape or order, an early exit, an error) stops every process with a
  /// report naming the ranks. Needs threads == 1 (the same schedule in every
  /// process). See README "Several processes".
  int process_count = 1;
  int process_index = 0;
  std::string process_store;
  /// Multi-process runs only: false (default) runs every device in every
  /// process, as above. true gives each process its own share of `devices`,
  /// as JAX does on several hosts: process r runs global devices
  /// r*L .. r*L+L-1 (L = devices / process_count = jax.local_device_count()),
  /// a top-level pmap maps over those L local devices (the mapped axis of an
  /// input has size L, its outputs stack the L local results), axis_index and
  /// axis_size are global, and collectives move data between processes
  /// (NCCL communicators across processes on the cuda backend, the store on
  /// the sim backend). devices must be a multiple of process_count; nested
  /// pmaps, meshes and devices= are refused in this mode.
  bool process_local_devices = false;
};

/// Per-device memory figures.
struct ArenaUsage {
  std::size_t capacity = 0;
  std::size_t live_bytes = 0;
  std::size_t peak_bytes = 0;
};

/// The function a device runs: its shard of each argument in, its outputs out.
using DeviceFn = std::function<std::vector<Array>(std::span<const Array> args)>;

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const RuntimeOptions& options() const;
  int device_count() const;
  /// Devices this process runs: device_count() / process_count with
  /// process_local_devices, else device_count() (jax.local_device_count()).
  int local_device_count() const;
  /// The first global device this process runs (0 unless process_local_devices).
  int first_local_device() const;
  const std::string& backend_name() const;

  /// Maps `fn` over devices (see pmap.h for the semantics). Blocks until every
  /// device finished; throws the run's first error (DeadlockError,
  /// CollectiveMismatch, DeviceError, ...), after every device stopped.
  std::vector<Array> pmap(const DeviceFn& fn, std::span<const Array> args, const PmapOptions& options);

  /// Checks how a top-level pmap would split `args` (the same
  /// InputSplitError / DeviceCountError it would throw) and returns the size
  /// of its mapped axis, without running anything: front ends that trace the
  /// function first learn the per-device shapes and the axis size this way.
  int pmap_axis_size(std::span<const Array> args, const PmapOptions& options);

  ArenaUsage arena_usage(DeviceId device) const;

  /// Stops the run in progress (if any) with an error of kind "Interrupted"
  /// and message `reason`: every device unwinds at its next collective,
  /// breakpoint or step count, and pmap throws with where each device stood.
  /// The Runtime stays interrupted: a later pmap stops the same way before
  /// its devices run, so an interrupt that arrives between two runs is not
  /// lost. Safe from any thread (e.g. a signal-handling thread).
  void interrupt(const std::string& reason);

  /// Multi-process runs (process_count > 1): tells the other processes this
  /// one stopped with `error`, so they stop too and name it. A failed pmap
  /// run does this itself; call it for an error outside pmap. A Runtime
  /// destroyed without one reports this process as finished.
  void report_process_error(const Error& error);
  /// True once interrupt() was called. Front ends poll it where no run is in
  /// progress (the scenario interpreter does, on the host).
  bool interrupted() const noexcept;
  /// Throws the Error of kind "Interrupted" when interrupted(); else returns.
  void check_interrupted() const;

  /// Wall time spent in top-level pmap runs so far, the run in progress
  /// included, and whether one is in progress. Safe from any thread: a host
  /// watchdog tells the program's own time from its devices' this way (a
  /// run has its own budget), and leaves an interrupt during a run to it.
  std::chrono::steady_clock::duration device_run_time() const;
  bool device_run_in_progress() const;
  /// How long the run in progress has run (zero when none). Safe from any thread.
  std::chrono::steady_clock::duration current_run_time() const;
  /// Whether a top-level run took the interrupt (it was in progress, or
  /// began after it): that run's pmap throws the Interrupted error, so a
  /// front end need not raise one of its own. Safe from any thread.
  bool interrupt_reached_run() const;

  /// Backends compiled into this build, e.g. {"sim", "cuda"}.
  static std::vector<std::string> available_backends();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmd
