#pragma once
// The cuda backend's entry point for backend_registry.cc; no CUDA types here.

#include <memory>

#include "backend/backend.h"

namespace spmd::cuda {

/// A backend for `devices` virtual devices of which this process runs
/// `local` on the machine's GPUs (all of them in a one-process run). Throws
/// BackendUnavailable ("no CUDA device found", or an impossible placement)
/// when it cannot run them. Registers the cuda DeviceOps.
std::unique_ptr<detail::Backend> create_cuda_backend(int devices, detail::LocalDevices local);

}  // namespace spmd::cuda
