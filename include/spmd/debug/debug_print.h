#pragma once
/// \file
/// jax.debug.print for devices: the text is tagged with the device and
/// delivered in a deterministic order whatever the schedule: grouped by the
/// number of collectives each device had completed when it printed, then by
/// device id, then program order.

#include <cstdint>
#include <string>

#include "spmd/core/device_id.h"
#include "spmd/source_loc.h"

namespace spmd {

struct DebugPrint {
  DeviceId device = kHost;
  std::string device_label;  ///< "device 3" or "device 3 (i=1, j=1)"
  std::string text;
  SourceLoc loc;
  std::int64_t epoch = 0;    ///< collectives completed by the device when it printed
};

/// On a device: queued for ordered delivery to RuntimeOptions::print_sink.
/// On the host: delivered at once.
void debug_print(std::string text, SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
