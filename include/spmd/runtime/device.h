#pragma once
/// \file
/// The calling device: its id, its position on every bound axis, and hooks the
/// scenario interpreter (or any front end) uses to annotate what it runs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/core/device_id.h"
#include "spmd/report.h"
#include "spmd/source_loc.h"

namespace spmd {

/// One bound mapped axis as seen from a device.
struct AxisBinding {
  std::string name;
  int index = 0;  ///< this device's position on the axis
  int size = 0;
};

struct DeviceInfo {
  DeviceId id = kHost;
  std::string label;                ///< "device 3 (i=1, j=1)"
  std::vector<AxisBinding> axes;    ///< outermost first
  /// Index of this device within the innermost pmap (0-based, row-major over
  /// the axes that pmap bound); 0 for the first device of each pmap.
  int index_in_pmap = 0;
  /// How many devices of this process run that pmap (this one included).
  int devices_in_pmap = 1;
};

/// True when called from a device function (inside pmap).
bool in_device();
/// The calling device; throws InvalidArgument when called on the host.
DeviceInfo current_device();

/// Front ends call this before each equation or statement a device runs, so
/// events and errors carry the user's line (e.g. the program's file:line)
/// instead of the C++ call site. Does nothing on the host.
void set_current_location(SourceLoc loc);
/// The location set above on this device (invalid on the host, or before any call).
SourceLoc current_location();

/// Records a control-flow decision on the calling device: the outcome of a
/// lax.cond/switch (branch index), a while_loop test, a loop's trip count.
/// Deadlock and mismatch reports name the first decision whose outcome
/// differed between devices. `what` is e.g. "lax.cond". No-op on the host.
void record_decision(std::string_view what, std::int64_t outcome, SourceLoc loc);

/// Counts `n` program steps against RuntimeOptions::step_budget and lets
/// other devices run now and then; throws BudgetExceeded when over, and
/// unwinds the device when the run was stopped elsewhere. Does nothing on the
/// host (the Python front end stops host code itself: python/host_watch.h).
void count_steps(std::uint64_t n = 1);

/// A front end's own check at the devices' safe points (where count_steps
/// lets other devices run, about every 1024 steps): the Python front end runs
/// the program's signal handlers there while a long device run holds the
/// host's main thread. It returns the report of an error that stops the run
/// (the runtime fills in the device and line that ran the check), or nothing.
/// It runs on device fibers of any OS thread and must not park.
using SafePointCheck = std::optional<Report> (*)();
/// Installs `check` (nullptr: none) for every later safe point of every run.
void set_safe_point_check(SafePointCheck check);

}  // namespace spmd
