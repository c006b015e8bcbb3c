#pragma once
/// \file
/// jax.debug.breakpoint for devices: the calling device stops; once every live
/// device is stopped (at the breakpoint or waiting elsewhere), the runtime's
/// BreakpointHandler sees every stopped device's named values, then the
/// devices at the breakpoint resume. If the handler throws, the run ends with
/// that error.

#include <string>
#include <utility>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/source_loc.h"

namespace spmd {

struct BreakpointStop {
  DeviceId device = kHost;
  std::string device_label;
  SourceLoc loc;
  std::vector<std::pair<std::string, Array>> values;
};

void breakpoint(std::vector<std::pair<std::string, Array>> values = {},
                SourceLoc loc = SourceLoc::from(std::source_location::current()));

}  // namespace spmd
