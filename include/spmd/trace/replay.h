#pragma once
/// \file
/// `spmd replay`: re-runs the per-device collective sequences of a recorded
/// trace (from the simulator or a GPU run) through the rendezvous, without
/// data, and ends exactly like a live run would: DeadlockError,
/// CollectiveMismatch, or the error a device raised, with the same report.

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "spmd/runtime/runtime.h"

namespace spmd {

struct ReplaySummary {
  int devices = 0;                 ///< device contexts replayed (nested ones included)
  std::int64_t collectives = 0;    ///< collective arrivals replayed
  std::string recorded_status;     ///< the trace's run_end status ("ok", "error", or "" when absent)
  std::string recorded_kind;       ///< the recorded error kind, if any
};

/// Parses and replays. Malformed traces throw SyntaxError naming
/// source:line:column. `options.devices` is raised to what the trace needs;
/// collectives_move_data is forced off.
ReplaySummary replay_trace(std::istream& in, const std::string& source, RuntimeOptions options = {});
ReplaySummary replay_trace_file(const std::string& path, RuntimeOptions options = {});
/// Replays the traces of one run's processes together (each process of a
/// run with local devices records only its own devices, e.g.
/// run.process0.jsonl and run.process1.jsonl): their devices meet at the
/// same rendezvous, so a deadlock across processes gets the simulator's
/// per-device report. Throws UsageError when a device is in two traces (with
/// every device in every process, replay one process's trace) or when the
/// traces miss some of the run's devices.
ReplaySummary replay_trace_files(const std::vector<std::string>& paths, RuntimeOptions options = {});

}  // namespace spmd
