#pragma once
/// \file
/// Observers see every event of a run (traces, timelines, custom tools).

#include <string>

#include "spmd/trace/event.h"

namespace spmd {

struct Report;

struct RunInfo {
  std::string backend;
  int devices = 0;       ///< devices of the top-level pmap
  std::string axes;      ///< "i=8" or "data=2,model=4"
  SourceLoc pmap_loc;
};

/// Callbacks run on device fibers (or GPU host threads) concurrently when the
/// run uses several threads: implementations must be thread-safe. They must
/// not call back into the runtime.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_run_start(const RunInfo& info) {}
  virtual void on_event(const Event& event) {}
  /// `failure` is null for a run that completed.
  virtual void on_run_end(const RunInfo& info, const Report* failure) {}
};

}  // namespace spmd
