#pragma once
// What a real GPU job left behind, read into one form whatever wrote it
// (NCCL INFO logs, PyTorch flight-recorder dumps): the ranks, the
// communicators they share, and each rank's collective calls in the order it
// made them. The hang analysis (hang_analysis.h) reads only this.

#include <cstdint>
#include <string>
#include <vector>

#include "spmd/source_loc.h"

namespace spmd::detail {

/// One collective or point-to-point call a rank made.
struct CallRecord {
  int comm = -1;            ///< index into Recording::comms
  std::int64_t seq = 0;     ///< its number on that communicator, the same on every rank (0-based for NCCL
                            ///< logs; the flight recorder's collective_seq_id / p2p_seq_id)
  bool p2p = false;         ///< Send/Recv: matched with one peer, not with the whole communicator
  bool sends = false;       ///< p2p: a send (else a receive)
  int peer = -1;            ///< p2p: the peer's rank in the communicator
  int group = -1;           ///< calls with one group id on one rank are posted together (ncclGroupStart/End,
                            ///< a coalesced batch); -1: a call of its own
  std::string op;           ///< as the source names it: "AllReduce", "all_reduce"
  /// What every rank must bring alike, one "name value" pair per element,
  /// e.g. {"count 1024", "datatype 7 (float32)", "op 0 (sum)", "root 0"}.
  std::vector<std::string> signature;
  std::string state;        ///< "completed", "started", "scheduled" (flight recorder); "" (NCCL logs say only that it was called)
  bool completed = false;   ///< the source says it completed
  std::string frames;       ///< the Python frames that made the call, innermost first ("f at x.py:3"), if any
  SourceLoc user_frame;     ///< the innermost frame outside torch's own files, if any
  SourceLoc at;             ///< where it is recorded: the log's file and line, or the dump's file
  std::string recorded_at;  ///< the same in words: "rank1.log:88", "trace_1 entry 12"
  std::string label;        ///< e.g. "AllReduce #5 on comm 0x3f1a9c2b (opCount 5)"

  /// The signature in one line: "count 1024, datatype 7 (float32), op 0 (sum)".
  std::string arguments() const {
    std::string s;
    for (const std::string& part : signature) s += (s.empty() ? "" : ", ") + part;
    return s;
  }
};

/// One communicator (an NCCL communicator, a PyTorch process group).
struct CommRecord {
  std::string name;          ///< e.g. "comm 0x3f1a9c2b", "process group 1 (tp)"
  int size = 0;              ///< its number of ranks
  std::vector<int> members;  ///< members[i]: the global rank of its rank i (-1: never seen)
  std::vector<int> unfinished;  ///< members that began setting it up and never finished (NCCL's Init START alone)
};

/// One rank of the job (a GPU of a process).
struct RankRecord {
  int rank = -1;                  ///< global rank
  std::string label;              ///< "rank 3 (node1:4242, cudaDev 3)"
  std::vector<CallRecord> calls;  ///< in the order the rank made them
  std::string last_words;         ///< its last line in the log when that is not a call (a WARN), if any
  SourceLoc last_line;            ///< where its record ends
  bool present = true;            ///< false: a member of a communicator whose own record is missing
};

/// Everything read from the inputs.
struct Recording {
  std::string source_kind;           ///< "NCCL INFO log" or "flight-recorder dump"
  std::vector<RankRecord> ranks;     ///< indexed by global rank
  std::vector<CommRecord> comms;
  std::vector<std::string> cannot_tell;  ///< what the inputs do not say, in words for the report
};

}  // namespace spmd::detail
