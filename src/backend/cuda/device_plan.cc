#include "backend/cuda/device_plan.h"

#include "spmd/error.h"

namespace spmd::cuda {

DevicePlan plan_devices(int devices, int gpus, const std::string& transport_setting, int processes) {
  if (gpus <= 0) {
    throw BackendUnavailable(make_report("BackendUnavailable", "no CUDA device found",
                                         "the cuda backend needs an NVIDIA GPU and its driver (check nvidia-smi and "
                                         "CUDA_VISIBLE_DEVICES), or use --backend sim"));
  }
  if (devices < 1) {
    throw BackendUnavailable(make_report("BackendUnavailable", "cuda backend: devices must be >= 1, got " +
                                                                   std::to_string(devices)));
  }
  std::string t = transport_setting.empty() ? "auto" : transport_setting;
  if (t != "auto" && t != "nccl" && t != "copy") {
    throw BackendUnavailable(make_report("BackendUnavailable", "unknown SPMD_CUDA_TRANSPORT '" + t + "'",
                                         "use nccl, copy or auto"));
  }
  DevicePlan plan;
  if (processes > 1) {
    // Device copies cannot reach another process's GPUs: NCCL moves the data.
    if (t == "copy") {
      throw BackendUnavailable(make_report(
          "BackendUnavailable", "SPMD_CUDA_TRANSPORT=copy cannot move data between processes",
          "with --process-devices local the collectives cross processes; use SPMD_CUDA_TRANSPORT=nccl (or auto)"));
    }
    if (devices > gpus) {
      throw BackendUnavailable(make_report(
          "BackendUnavailable",
          "each of the " + std::to_string(processes) + " processes runs " + std::to_string(devices) +
              " local devices, but this host has " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s"),
          "NCCL needs one GPU per device: run with --devices " + std::to_string(processes * gpus) + " (" +
              std::to_string(processes) + " processes x " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
              "), or start more processes"));
    }
    t = "nccl";
  }
  if (t == "nccl" && devices > gpus) {
    throw BackendUnavailable(make_report(
        "BackendUnavailable",
        "NCCL needs one GPU per device: " + std::to_string(devices) + " devices but " + std::to_string(gpus) + " GPU" +
            (gpus == 1 ? "" : "s"),
        "NCCL refuses two ranks on one GPU; run with --devices " + std::to_string(gpus) +
            ", or SPMD_CUDA_TRANSPORT=copy (or auto) to place several devices per GPU"));
  }
  if (t == "auto") t = devices <= gpus ? "nccl" : "copy";
  plan.transport = t;
  for (int i = 0; i < devices; ++i) plan.ordinals.push_back(i % gpus);
  if (t == "copy" && devices > gpus) {
    plan.note = std::to_string(devices) + " devices on " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
                ": collectives use device copies (NCCL refuses two ranks on one GPU)";
  } else if (t == "copy") {
    plan.note = "SPMD_CUDA_TRANSPORT=copy: collectives use device copies instead of NCCL";
  }
  return plan;
}

}  // namespace spmd::cuda
