#pragma once
// Where the virtual devices run and how their collectives move data; pure
// logic (no CUDA calls), tested on the CPU.
//
//   transport "nccl": one GPU per virtual device (device i on GPU i), NCCL
//                     communicators per group. Needs devices <= GPUs.
//   transport "copy": devices placed round-robin (device i on GPU i % gpus),
//                     collectives by device copies and a rank-order reduction
//                     kernel (copy_transport.h). Bit-identical to the sim.
// SPMD_CUDA_TRANSPORT=nccl|copy|auto (default auto: nccl when every device
// gets its own GPU, else copy).

#include <string>
#include <vector>

namespace spmd::cuda {

struct DevicePlan {
  std::vector<int> ordinals;  ///< GPU of each virtual device
  std::string transport;      ///< "nccl" or "copy"
  std::string note;           ///< why this transport, for logs and reports ("" when obvious)
};

/// `devices`: the devices this process runs. `processes` > 1: a run with
/// local devices, whose collectives cross processes: only "nccl" can move
/// them, so it needs one GPU per local device.
/// Throws BackendUnavailable for gpus == 0, devices < 1, an unknown
/// transport name, "nccl" with more devices than GPUs, or "copy" across
/// processes.
DevicePlan plan_devices(int devices, int gpus, const std::string& transport_setting, int processes = 1);

}  // namespace spmd::cuda
