#pragma once
// The real-GPU backend: every virtual device is a host thread driving one
// GPU (cudaSetDevice, its own stream); arrays live in GPU memory from the
// GPU's stream-ordered pool; array ops run as kernels (cuda_ops.h);
// collectives meet at the same rendezvous as the simulator (so mismatches and
// deadlocks are reported before any data moves) and the completing device
// moves the data for all members through NCCL (nccl_transport.h) or device
// copies (copy_transport.h). CUDA/NCCL failures and hangs below the host end
// the run with a report naming device and op, after every communicator was
// aborted (cuda_error.h, watchdog.h).
//
// Nested pmaps are not supported (BackendError): a device is a host thread
// bound to one GPU stream.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/copy_transport.h"
#include "backend/cuda/device_plan.h"
#include "backend/cuda/device_resources.h"
#include "backend/cuda/nccl_transport.h"

namespace spmd::cuda {

class CudaBackend final : public detail::Backend {
 public:
  /// Runs `local` of `devices` (all of them in a one-process run) on the
  /// GPUs `plan` names (plan.ordinals[i] for device local.first + i).
  CudaBackend(int devices, detail::LocalDevices local, DevicePlan plan);
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  int device_count() const override { return devices_; }
  std::shared_ptr<detail::Arena> make_arena(DeviceId device, std::size_t capacity, std::string label) override;
  std::unique_ptr<detail::Parker> make_parker() override;
  void launch(detail::LaunchedRun& run, std::span<detail::DeviceContext* const> devices,
              const detail::DeviceBody& body) override;
  std::exception_ptr nested_launch_error() const override;
  void yield() override;
  void enter_device(detail::DeviceContext& ctx) override;
  void leave_device(detail::DeviceContext& ctx) override;
  void execute(detail::CollectiveCall& call) override;
  /// NCCL communicators across processes (ncclCommInitRank, the unique id
  /// shared through `processes`); this process issues its ranks' calls.
  void execute_across_processes(detail::CollectiveCall& call, dist::ProcessGroup& processes) override;

  const DevicePlan& plan() const { return plan_; }

 private:
  void device_main(detail::DeviceContext& ctx, const detail::DeviceBody& body);
  std::vector<std::string> describe_devices();
  void on_fatal(const Report& r);

  int devices_;
  detail::LocalDevices local_;
  DevicePlan plan_;
  std::vector<std::shared_ptr<DeviceResources>> resources_;
  std::shared_ptr<WaitPolicy> policy_;
  std::unique_ptr<NcclTransport> nccl_;
  std::unique_ptr<CopyTransport> copy_;
  std::mutex state_mu_;
  detail::LaunchedRun* run_ = nullptr;      // the run in progress (for watchdog reports)
  std::vector<std::string> last_completed_;  // per device: its last completed collective
};

}  // namespace spmd::cuda
