#pragma once
// The copy transport: collectives as device copies (cudaMemcpyAsync, peer
// copies between GPUs) and one reduction kernel that combines the members in
// rank order with the host data plane's accumulation, so its results equal
// the simulator's bit for bit. Used when virtual devices share a GPU (NCCL
// refuses two ranks on one GPU: --devices 8 on a one-GPU machine), or when
// forced with SPMD_CUDA_TRANSPORT=copy. Slower than NCCL across GPUs (the
// reduction reads every member's buffer from each member's GPU).
//
// Ordering: the member streams are joined (each waits on an event of every
// other) before and after each call, so a member's buffer is ready before
// another stream reads it and is not reused before that read finished.

#include <memory>
#include <vector>

#include "backend/cuda/device_resources.h"
#include "backend/cuda/watchdog.h"
#include "dataplane/transport.h"

namespace spmd::cuda {

class CopyTransport final : public detail::Transport {
 public:
  explicit CopyTransport(std::shared_ptr<WaitPolicy> policy);

  std::string_view name() const override { return "copy"; }
  void all_reduce(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                  const std::vector<const void*>& in, const std::vector<void*>& out) override;
  void all_gather(const detail::TransportGroup& g, std::size_t bytes, const std::vector<const void*>& in,
                  const std::vector<void*>& out) override;
  void reduce_scatter(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                      const std::vector<const void*>& in, const std::vector<void*>& out) override;
  void exchange(const detail::TransportGroup& g, const std::vector<detail::Transfer>& transfers) override;
  void complete() override;
  void reset_pending() noexcept { pending_ = Pending{}; }

 private:
  using Devices = std::vector<std::shared_ptr<DeviceResources>>;
  Devices devices_of(const detail::TransportGroup& g);
  void join(const Devices& devs, const std::string& op);
  // out[r] = reduction over s of in[s][offset + i], on r's stream.
  void reduce_into(const Devices& devs, std::size_t r, detail::ReduceKind op, DType dtype, std::int64_t count,
                   const std::vector<const void*>& in, std::int64_t offset, void* out, const std::string& what);

  std::shared_ptr<WaitPolicy> policy_;
  struct Pending {
    std::vector<StreamRef> streams;
    std::string op;
  };
  static thread_local Pending pending_;
};

}  // namespace spmd::cuda
