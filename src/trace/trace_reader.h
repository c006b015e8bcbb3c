#pragma once
// Reads a JSONL trace (see jsonl_trace.h) into per-device step lists.

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "rendezvous/collective_signature.h"
#include "rendezvous/signature_text.h"
#include "spmd/runtime/device.h"

namespace spmd::detail {

struct TraceStep {
  enum class Kind { kCollective, kDecision, kNestedPmap };
  Kind kind = Kind::kCollective;
  CollectiveSignature sig;   // kCollective
  bool completed = false;    // kCollective: an exit was recorded
  std::string what;          // kDecision
  std::int64_t value = 0;    // kDecision
  SourceLoc loc;             // kDecision
};

struct TraceDevice {
  int uid = -1;
  int parent = -1;
  int start_line = 0;  // the line of its device_start event
  DeviceId device = kHost;
  std::string label;
  std::vector<AxisBinding> env;
  std::vector<TraceStep> steps;
  enum class End { kOpen, kFinished, kRaised } end = End::kOpen;
  std::string error_kind;
  std::string error_text;
  SourceLoc error_loc;
};

struct Trace {
  std::string backend;
  int devices = 0;
  std::vector<TraceDevice> contexts;  // indexed by uid
  std::string end_status;             // "" when the trace has no run_end
  std::string end_kind;
};

/// Throws SyntaxError with source:line:column for malformed lines, unknown
/// events, missing fields, and events of devices that never started.
Trace read_trace(std::istream& in, const std::string& source);

/// The first top-level device, and the first one whose axes (names and
/// sizes) differ from its, if any: a replay runs one pmap over one mesh.
struct TopLevelAxes {
  const TraceDevice* first = nullptr;
  const TraceDevice* differs = nullptr;
};
TopLevelAxes check_top_level_axes(const Trace& trace);


}  // namespace spmd::detail
