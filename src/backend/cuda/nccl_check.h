#pragma once
// SPMD_CUDA_CHECK / SPMD_NCCL_CHECK: evaluate a CUDA runtime or NCCL call and
// throw the mapped spmd error (cuda_error.h) when it fails. `site` is an
// ErrorSite naming the device and the op.

#include "backend/cuda/cuda_error.h"

#define SPMD_CUDA_CHECK(expr, site)                                                     \
  do {                                                                                  \
    cudaError_t spmd_err_ = (expr);                                                     \
    if (spmd_err_ != cudaSuccess) {                                                     \
      ::spmd::cuda::throw_cuda_error(spmd_err_, #expr, (site), __FILE__, __LINE__);     \
    }                                                                                   \
  } while (0)

#define SPMD_NCCL_CHECK(expr, site)                                                     \
  do {                                                                                  \
    ncclResult_t spmd_res_ = (expr);                                                    \
    if (spmd_res_ != ncclSuccess && spmd_res_ != ncclInProgress) {                      \
      ::spmd::cuda::throw_nccl_error(spmd_res_, #expr, (site), __FILE__, __LINE__);     \
    }                                                                                   \
  } while (0)

#define SPMD_CUBLAS_CHECK(expr, site)                                                   \
  do {                                                                                  \
    cublasStatus_t spmd_status_ = (expr);                                               \
    if (spmd_status_ != CUBLAS_STATUS_SUCCESS) {                                        \
      ::spmd::cuda::throw_cublas_error(spmd_status_, #expr, (site), __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)
