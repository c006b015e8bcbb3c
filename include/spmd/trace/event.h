#pragma once
/// \file
/// What a device did: the unit of traces, timelines and "last events" lists.

#include <cstdint>
#include <string>
#include <vector>

#include "spmd/core/device_id.h"
#include "spmd/runtime/device.h"
#include "spmd/source_loc.h"

namespace spmd {

enum class EventKind : std::uint8_t {
  kDeviceStart,      ///< the device's function began
  kCollectiveEnter,  ///< arrived at a collective (waits there until all members arrive)
  kCollectiveExit,   ///< the collective completed on this device
  kDebugPrint,       ///< jax.debug.print / spmd::debug_print
  kDecision,         ///< a control-flow decision: lax.cond branch, loop trip, while test
  kBreakpoint,       ///< stopped at a breakpoint
  kNestedPmap,       ///< started a nested pmap
  kError,            ///< the device raised
  kDeviceFinish,     ///< the device's function returned
};

/// "device_start", "collective_enter", ... (the trace's "ev" field).
std::string_view event_kind_name(EventKind kind);
bool parse_event_kind(std::string_view name, EventKind& out);

struct Event {
  EventKind kind = EventKind::kDeviceStart;
  DeviceId device = kHost;
  std::string device_label;          ///< "device 3 (i=1, j=1)"
  int uid = -1;                      ///< the device context within the run (nested pmaps create more)
  int parent_uid = -1;               ///< the context that ran the nested pmap, or -1
  std::vector<AxisBinding> env;      ///< bound axes (device_start only)
  std::int64_t seq = -1;             ///< collective index on this device (collective events)
  std::string op;                    ///< "psum", "lax.cond", ...
  std::vector<std::string> axes;     ///< axis names (collective events)
  std::vector<std::string> operands; ///< abstract types, "f32[4,8]" (collective events)
  std::string params;                ///< op parameters rendered, e.g. "axis=0 tiled=False"
  std::int64_t value = 0;            ///< decision outcome (branch index, loop trips, 0/1)
  std::string text;                  ///< print text, error message
  std::string error_kind;            ///< kError: the report kind ("NameError", ...)
  SourceLoc loc;
  double time_us = 0;                ///< since the run started

  /// One line for "last events" lists: "#3 psum over 'i' f32[4] at f.py:12".
  std::string summary() const;
};

}  // namespace spmd
