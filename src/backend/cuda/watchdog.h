#pragma once
// Bounded waits on GPU work. Every place where the cuda backend waits for a
// stream (a collective's completion, a download to the host, a device's end)
// polls it here instead of blocking in the driver, so that
//  - a CUDA error of the stream becomes a BackendError naming device and op,
//  - an asynchronous NCCL error (ncclCommGetAsyncError) does too, and
//  - a hang below the host (a kernel that never ends, a peer that never
//    joins) ends after WaitPolicy::watchdog_s with a "WatchdogTimeout" report
//    naming the op and where every device stands,
// instead of hanging the process. On any of these the policy's on_fatal hook
// runs first (the backend aborts its NCCL communicators and the run).

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda/device_resources.h"
#include "spmd/report.h"

namespace spmd::cuda {

struct StreamRef {
  DeviceId device = 0;
  int ordinal = 0;
  cudaStream_t stream = nullptr;
};

struct CommRef {
  DeviceId device = 0;
  ncclComm_t comm = nullptr;
};

/// Waits until every stream finished its queued work; see the file comment.
void wait_streams(const std::vector<StreamRef>& streams, const std::vector<CommRef>& comms, std::string_view op,
                  const WaitPolicy& policy);

/// The report of a timeout: `op` did not complete on `stuck` within `seconds`.
Report watchdog_report(std::string_view op, double seconds, const std::vector<DeviceId>& stuck,
                       const std::vector<std::string>& device_lines);

}  // namespace spmd::cuda
