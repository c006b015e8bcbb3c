#pragma once
// Reads PyTorch's NCCL flight-recorder dumps (one file per rank, written on a
// watchdog timeout with TORCH_NCCL_DUMP_ON_TIMEOUT=1 to
// TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>, or by
// torch._C._distributed_c10d._dump_nccl_trace / _dump_nccl_trace_json) into
// a Recording. Both forms, pickle and JSON, of dump versions 2.2 to 2.10
// (PyTorch 2.3 to 2.10): "version", "pg_config" (each process group's name,
// description and ranks), "entries" (record_id, process_group,
// collective_seq_id, p2p_seq_id, profiling_name "nccl:all_reduce" /
// "nccl:send 0->1", input/output sizes and dtypes, state, frames).

#include <string>
#include <string_view>
#include <vector>

#include "diagnose/collective_record.h"

namespace spmd::detail {

struct DumpFile {
  std::string path;
  std::string bytes;
};

/// True when `bytes` is a pickle (protocol 2+), or JSON with a "version"
/// and "pg_config" at its start.
bool looks_like_flight_recorder_dump(std::string_view bytes);

/// The rank is the number that ends the file name (trace_3 is rank 3), as
/// PyTorch's own analyzer reads it. Throws UsageError for a name without a
/// rank, two files of one rank, or a dump version outside 2.2..2.10, and
/// SyntaxError naming the file and entry for a malformed dump.
Recording read_flight_recorder_dumps(const std::vector<DumpFile>& files);

}  // namespace spmd::detail
