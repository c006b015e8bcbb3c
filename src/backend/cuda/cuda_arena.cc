#include "backend/cuda/cuda_arena.h"

#include "backend/cuda/nccl_check.h"
#include "util/format_bytes.h"

namespace spmd::cuda {

CudaArena::CudaArena(DeviceId device, std::size_t capacity, std::string label, std::shared_ptr<DeviceResources> res)
    : Arena(device, capacity, std::move(label), MemoryKind::kCuda), res_(std::move(res)) {}

CudaArena::~CudaArena() = default;

void* CudaArena::obtain_raw(std::size_t nbytes) {
  DeviceGuard guard(res_->ordinal);
  void* p = nullptr;
  // At least one 256-byte granule: zero-size arrays still get a unique pointer.
  cudaError_t err = cudaMallocFromPoolAsync(&p, nbytes == 0 ? 256 : nbytes, res_->pool, res_->stream);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it
    return nullptr;
  }
  SPMD_CUDA_CHECK(err, (ErrorSite{res_->device, "allocation of " + format_bytes(nbytes)}));
  return p;
}

void CudaArena::release_raw(void* p, std::size_t) noexcept {
  DeviceGuard guard(res_->ordinal);
  // Stream-ordered: the block is reused only after the work queued so far on
  // the device's stream (which may still read it) has finished.
  if (cudaFreeAsync(p, res_->stream) != cudaSuccess) cudaGetLastError();
}

std::string CudaArena::exhausted_message(std::size_t nbytes, std::string_view what) const {
  return label() + ": GPU " + std::to_string(res_->ordinal) + " is out of memory allocating " + format_bytes(nbytes) +
         " for " + std::string(what);
}

std::string CudaArena::exhausted_hint() const {
  return "the GPU's memory is shared by the devices placed on it; use a smaller --arena-capacity so the arena "
         "reports first, fewer devices per GPU, or smaller arrays";
}

}  // namespace spmd::cuda
