#pragma once
// What the cuda backend holds per virtual device: the GPU it runs on, the
// stream all its work is ordered on, and the GPU's memory pool. Arrays keep
// them alive (through their arena) after the backend is gone.
//
// DeviceTable maps virtual device ids to these for CudaDeviceOps, which gets
// only a DeviceId per call; the backend installs its table when created.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "spmd/core/device_id.h"
#include "spmd/report.h"

namespace spmd::cuda {

struct DeviceResources {
  DeviceId device = 0;       ///< virtual device id (NCCL rank in single-process mode)
  int ordinal = 0;           ///< CUDA device ordinal
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  /// The device's cuBLAS handle, made at its first product (blas_handle()).
  cublasHandle_t blas = nullptr;
  std::once_flag blas_once;
  ~DeviceResources();
};

/// Makes `ordinal` the calling thread's current CUDA device for the scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

/// Settings and hooks shared by everything that waits on a GPU.
struct WaitPolicy {
  double watchdog_s = 300;  ///< 0: wait forever
  /// Called with the error just before a fatal CUDA/NCCL error or watchdog
  /// timeout is thrown (the backend aborts its communicators and the run).
  std::function<void(const Report&)> on_fatal;
  /// Lines describing where every device stands, for watchdog reports.
  std::function<std::vector<std::string>()> describe_devices;
};

class DeviceTable {
 public:
  static DeviceTable& instance();
  void install(std::vector<std::shared_ptr<DeviceResources>> devices, std::shared_ptr<WaitPolicy> policy);
  /// Throws BackendError for a device the table does not hold.
  std::shared_ptr<DeviceResources> at(DeviceId device) const;
  std::shared_ptr<WaitPolicy> policy() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<DeviceResources>> devices_;
  std::shared_ptr<WaitPolicy> policy_;
};

}  // namespace spmd::cuda
