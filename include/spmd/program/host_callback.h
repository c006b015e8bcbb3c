#pragma once
/// \file
/// Host callbacks (jax.debug.callback): a `debug_callback` equation hands
/// its operands to the front end, which calls the user's Python function on
/// the host. No Python runs on a device, so a call made inside a pmap is
/// recorded here and made once the devices' run is over (in device order,
/// also when the run ended in an error, before its report).

#include <cstdint>
#include <functional>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/core/device_id.h"
#include "spmd/source_loc.h"

namespace spmd::program {

struct CallbackCall {
  std::int64_t callback_id = 0;  ///< the front end's name for the function
  DeviceId device = kHost;       ///< the device that made the call (kHost outside pmap)
  std::vector<Array> operands;   ///< host copies
  SourceLoc loc;
};

/// Receives each call a debug_callback equation makes, from any device
/// (several OS threads with --threads N: the sink synchronises). Unset: the
/// equation is an error (nothing would ever call the function).
using CallbackSink = std::function<void(CallbackCall)>;
void set_callback_sink(CallbackSink sink);

/// What a debug_callback equation calls (its impl; see primitives.cc).
void record_callback(CallbackCall call);

}  // namespace spmd::program
