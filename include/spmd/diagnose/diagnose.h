#pragma once
/// \file
/// `spmd diagnose`: explains a hung or failed multi-GPU job from what it
/// left behind, without rerunning it: NCCL_DEBUG=INFO logs of its ranks (any
/// framework), or PyTorch's NCCL flight-recorder dumps. The ranks' recorded
/// calls are replayed against each other as the simulator runs devices, so
/// the verdict and the report are the simulator's: a hang (DeadlockError,
/// with where the ranks parted, who never arrived and what each was doing
/// instead) or ranks that met with different arguments (CollectiveMismatch).

#include <cstdint>
#include <string>
#include <vector>

namespace spmd {

struct DiagnoseOptions {
  std::string timeline_path;  ///< also write the ranks' calls as a Chrome trace here, if set
  std::string repro;          ///< the command, for the report
};

struct DiagnoseSummary {
  std::string source_kind;                ///< "NCCL INFO log" or "flight-recorder dump"
  int ranks = 0;
  int communicators = 0;
  std::int64_t calls = 0;
  std::vector<std::string> cannot_tell;   ///< what the inputs do not say
};

/// Reads `paths` (files, or directories whose files are read) and returns a
/// summary when every rank completed the same calls. Throws DeadlockError or
/// CollectiveMismatch with the report otherwise; InvalidArgument (UsageError)
/// for inputs it cannot use (a mix of formats, an unknown dump version, a
/// file that is neither) and SyntaxError naming the file and line (or entry)
/// for a malformed one. Never hangs: the replay ends when no rank can move.
DiagnoseSummary diagnose_files(const std::vector<std::string>& paths, const DiagnoseOptions& options = {});

}  // namespace spmd
