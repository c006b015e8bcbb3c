#include "backend/cuda/watchdog.h"

#include <chrono>
#include <thread>

#include "backend/cuda/cuda_error.h"
#include "spmd/error.h"

namespace spmd::cuda {

Report watchdog_report(std::string_view op, double seconds, const std::vector<DeviceId>& stuck,
                       const std::vector<std::string>& device_lines) {
  std::string devices;
  for (DeviceId d : stuck) devices += (devices.empty() ? "" : ", ") + std::to_string(d);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", seconds);
  Report r = make_report("WatchdogTimeout",
                         "watchdog: " + std::string(op) + " did not complete within " + secs + " s on device" +
                             (stuck.size() == 1 ? " " : "s ") + devices,
                         "something below the host is stuck (a kernel that does not end, or a peer that never joins "
                         "the NCCL call); the communicators were aborted and the run stopped. Raise the limit with "
                         "--watchdog-seconds (0 disables it) if the work is just slow");
  r.op = std::string(op);
  if (!stuck.empty()) r.device = stuck.front();
  for (const auto& line : device_lines) r.details.push_back(line);
  return r;
}

void wait_streams(const std::vector<StreamRef>& streams, const std::vector<CommRef>& comms, std::string_view op,
                  const WaitPolicy& policy) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::vector<StreamRef> pending = streams;
  auto fatal = [&](Report r) {
    if (policy.on_fatal) policy.on_fatal(r);
    throw_report(std::move(r));
  };
  auto poll_comms = [&] {
    for (const auto& c : comms) {
      ncclResult_t async = ncclSuccess;
      ncclResult_t res = ncclCommGetAsyncError(c.comm, &async);
      if (res == ncclSuccess && async != ncclSuccess && async != ncclInProgress) {
        const char* last = ncclGetLastError(c.comm);
        fatal(nccl_error_report(async, "ncclCommGetAsyncError", ErrorSite{c.device, std::string(op)},
                                last ? last : ""));
      }
    }
  };
  std::int64_t polls = 0;
  auto last_comm_poll = start;
  while (!pending.empty()) {
    for (std::size_t i = 0; i < pending.size();) {
      DeviceGuard guard(pending[i].ordinal);
      cudaError_t q = cudaStreamQuery(pending[i].stream);
      if (q == cudaSuccess) {
        pending[i] = pending.back();
        pending.pop_back();
      } else if (q == cudaErrorNotReady) {
        ++i;
      } else {
        cudaGetLastError();
        fatal(cuda_error_report(q, "cudaStreamQuery", ErrorSite{pending[i].device, std::string(op)}));
      }
    }
    if (pending.empty()) break;
    const auto now = Clock::now();
    if (!comms.empty() && now - last_comm_poll > std::chrono::milliseconds(5)) {
      poll_comms();
      last_comm_poll = now;
    }
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (policy.watchdog_s > 0 && elapsed > policy.watchdog_s) {
      std::vector<DeviceId> stuck;
      for (const auto& p : pending) stuck.push_back(p.device);
      std::vector<std::string> lines;
      if (policy.describe_devices) lines = policy.describe_devices();
      fatal(watchdog_report(op, policy.watchdog_s, stuck, lines));
    }
    // Spin briefly (collectives usually finish in microseconds), then back off.
    ++polls;
    if (polls < 200) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(polls < 2000 ? 20 : 500));
    }
  }
  if (!comms.empty()) poll_comms();
}

}  // namespace spmd::cuda
