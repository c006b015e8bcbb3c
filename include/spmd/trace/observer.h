#pragma once
/// \file
/// Observers see every event of a run (traces, timelines, custom tools).

#include <string>
#include <vector>

#include "spmd/core/dtype.h"
#include "spmd/core/shape.h"
#include "spmd/trace/event.h"

namespace spmd {

struct Report;

/// An argument or output of a top-level pmap as the run lays it out (what
/// `spmd run --explain` shows: the guide's "check the shapes carefully").
struct ValueLayout {
  std::string name;      ///< "argument 0 'x'", "output[0]['loss']"
  Shape shape;           ///< global: as the program passed it in, or gets it back (stacked)
  DType dtype = DType::kFloat32;
  int mapped_axis = -1;  ///< in_axis / out_axis; -1: replicated (None)
  Shape per_device;      ///< what each device gets, or returns
};

struct RunInfo {
  std::string backend;
  int devices = 0;       ///< devices of the top-level pmap
  std::string axes;      ///< "i=8" or "data=2,model=4"
  SourceLoc pmap_loc;
  std::vector<ValueLayout> arguments;  ///< from the start of the run
  std::vector<ValueLayout> outputs;    ///< at the end of a run that completed
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
