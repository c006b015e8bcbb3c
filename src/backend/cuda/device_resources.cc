#include "backend/cuda/device_resources.h"

#include "backend/cuda/cublas_library.h"

#include "spmd/error.h"

namespace spmd::cuda {

DeviceResources::~DeviceResources() {
  if (stream != nullptr || blas != nullptr) {
    int prev = -1;
    if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(ordinal) == cudaSuccess) {
      if (blas != nullptr) cublas("cuBLAS handle").destroy(blas);  // loaded: the handle came from it
      if (stream != nullptr) cudaStreamDestroy(stream);  // returns at once; pending work still completes
      cudaSetDevice(prev);
    }
    cudaGetLastError();
  }
}

DeviceGuard::DeviceGuard(int ordinal) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != ordinal) {
    previous_ = current;
    cudaSetDevice(ordinal);
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

DeviceTable& DeviceTable::instance() {
  static DeviceTable t;
  return t;
}

void DeviceTable::install(std::vector<std::shared_ptr<DeviceResources>> devices, std::shared_ptr<WaitPolicy> policy) {
  std::lock_guard<std::mutex> lock(mu_);
  devices_ = std::move(devices);
  policy_ = std::move(policy);
}

std::shared_ptr<DeviceResources> DeviceTable::at(DeviceId device) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (device < 0 || static_cast<std::size_t>(device) >= devices_.size() || !devices_[static_cast<std::size_t>(device)]) {
    Report r = make_report("BackendError",
                           "cuda backend: device " + std::to_string(device) + " has no GPU resources",
                           "device arrays can only be used while the cuda Runtime that created them exists");
    r.device = device;
    throw BackendError(std::move(r));
  }
  return devices_[static_cast<std::size_t>(device)];
}

std::shared_ptr<WaitPolicy> DeviceTable::policy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return policy_;
}

}  // namespace spmd::cuda
