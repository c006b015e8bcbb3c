#pragma once
// The verdict on a recorded job, reached the way the simulator reaches it:
// every rank replays its recorded calls in order; a collective completes
// when every member of its communicator has posted it, a send or receive
// when its peer has posted the matching one; calls between one group start
// and end are posted together. When no rank can move and some have calls
// left, the job hung (exactly: no timeout is involved), and the report says
// where the ranks parted, who never arrived and what each was doing
// instead. Ranks that meet with different operations, counts, datatypes or
// reduction ops are reported at once, as a rendezvous would.

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/collective_record.h"
#include "spmd/report.h"

namespace spmd::detail {

struct HangVerdict {
  /// Kind "Deadlock" or "CollectiveMismatch"; an empty kind when every rank
  /// completed the same calls.
  Report report;
  std::int64_t calls = 0;           ///< calls recorded
  std::int64_t completed = 0;       ///< calls that completed in the replay
  std::vector<std::vector<bool>> done;  ///< done[rank][call]: it completed in the replay (the timeline shows which)
};

HangVerdict analyse_recording(const Recording& rec, const std::string& repro);

}  // namespace spmd::detail
