#pragma once
// A device arena over the GPU's stream-ordered memory pool (cudaMallocAsync;
// never managed memory). Capacity, live/peak accounting and OutOfMemoryError
// reports are the base Arena's; a GPU that runs out before the capacity is
// reached gives the same report, naming the GPU.

#include <memory>

#include "backend/cuda/device_resources.h"
#include "core/arena.h"

namespace spmd::cuda {

class CudaArena final : public detail::Arena {
 public:
  CudaArena(DeviceId device, std::size_t capacity, std::string label, std::shared_ptr<DeviceResources> res);
  ~CudaArena() override;
  const std::shared_ptr<DeviceResources>& resources() const { return res_; }

 protected:
  void* obtain_raw(std::size_t nbytes) override;
  void release_raw(void* p, std::size_t nbytes) noexcept override;
  std::string exhausted_message(std::size_t nbytes, std::string_view what) const override;
  std::string exhausted_hint() const override;

 private:
  std::shared_ptr<DeviceResources> res_;
};

}  // namespace spmd::cuda
