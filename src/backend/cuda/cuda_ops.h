#pragma once
// DeviceOps for MemoryKind::kCuda: the core's primitives as kernels on the
// device's stream (kernels/*.cu), memory moves as cudaMemcpy(2D)Async. A
// download waits for the stream through the watchdog (watchdog.h).

#include "core/device_ops.h"

namespace spmd::cuda {

/// The process-wide instance; the cuda backend registers it when created.
detail::DeviceOps& cuda_device_ops();

}  // namespace spmd::cuda
