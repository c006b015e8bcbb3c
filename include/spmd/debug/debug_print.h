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
  bool program_output = false;  ///< the program's own stdout (program_print), not jax.debug.print

  /// What a terminal shows: "[device 3] text\n" for jax.debug.print; program
  /// output as written (it carries its own line ends).
  std::string line() const;
};

/// On a device: queued for ordered delivery to RuntimeOptions::print_sink.
/// On the host: delivered at once.
void debug_print(std::string text, SourceLoc loc = SourceLoc::from(std::source_location::current()));

/// The program's own output written on a device (Python's print() run per
/// device under jax.disable_jit): queued and ordered exactly like debug_print,
/// so threads do not reorder it, and delivered untagged (program_output set).
/// On the host: written to stdout at once.
void program_print(std::string text, SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
