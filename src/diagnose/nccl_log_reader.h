#pragma once
// Reads NCCL_DEBUG=INFO logs (NCCL 2.18 to 2.30; older ones without commId
// too; RCCL's, which add fields of their own) into a Recording: the
// communicator set-up lines ("comm 0x... rank R
// nranks N cudaDev D ... commId 0x... - Init START / Init COMPLETE", their
// ncclCommSplit forms) map each process's communicator pointers to ranks;
// the collective lines ("AllReduce: opCount 5 sendbuff ... count 1024
// datatype 7 op 0 root 0 comm 0x... [nranks=8] stream ...") become each
// rank's calls. Lines of several processes may be interleaved in one file or
// spread over many; any text before the "host:pid:tid [dev]" prefix
// (timestamps, launcher prefixes such as torchrun's or Ray's) is skipped, a
// line that two processes wrote at once belongs to its last prefix, and a
// call line that lost its prefix goes to the one process that owns its
// communicator. Lines that are not NCCL's are ignored.

#include <string>
#include <string_view>
#include <vector>

#include "diagnose/collective_record.h"

namespace spmd::detail {

struct LogFile {
  std::string path;
  std::string text;
};

/// True when `text` holds at least one NCCL INFO or WARN line.
bool looks_like_nccl_log(std::string_view text);

/// A set-up or collective line that does not parse is skipped and said in
/// cannot_tell with its file:line (as is a last line cut short by a dying
/// process); only when no line at all could be read is the first such line a
/// SyntaxError. Throws UsageError when a collective names a communicator that
/// no set-up line introduced.
Recording read_nccl_logs(const std::vector<LogFile>& files);

/// NCCL's numbers in words: datatype 7 is "float32", op 0 is "sum".
std::string nccl_datatype_name(int datatype);
std::string nccl_redop_name(int op);

}  // namespace spmd::detail
