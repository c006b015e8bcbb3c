#pragma once
// The cuda backend's entry point for backend_registry.cc; no CUDA types here.

#include <memory>

#include "backend/backend.h"

namespace spmd::cuda {

/// A backend running `devices` virtual devices on the machine's GPUs. Throws
/// BackendUnavailable ("no CUDA device found", or an impossible placement)
/// when it cannot run them. Registers the cuda DeviceOps.
std::unique_ptr<detail::Backend> create_cuda_backend(int devices);

}  // namespace spmd::cuda
