#pragma once
// Runtime dtype -> storage type, and launch geometry, for the kernel files.

#include <algorithm>
#include <cstdint>

#include "backend/cuda/kernels/device_math.cuh"
#include "backend/cuda/kernels/kernels.h"

// Runs the statements with `T` the storage type of `dtype`.
#define SPMD_DISPATCH_DTYPE(dtype, T, ...)                 \
  switch (dtype) {                                         \
    case ::spmd::DType::kBool: {                           \
      using T = bool;                                      \
      __VA_ARGS__;                                         \
    } break;                                               \
    case ::spmd::DType::kInt32: {                          \
      using T = std::int32_t;                              \
      __VA_ARGS__;                                         \
    } break;                                               \
    case ::spmd::DType::kInt64: {                          \
      using T = std::int64_t;                              \
      __VA_ARGS__;                                         \
    } break;                                               \
    case ::spmd::DType::kFloat16: {                        \
      using T = ::spmd::cuda::dev::h16;                    \
      __VA_ARGS__;                                         \
    } break;                                               \
    case ::spmd::DType::kBFloat16: {                       \
      using T = ::spmd::cuda::dev::bf16;                   \
      __VA_ARGS__;                                         \
    } break;                                               \
    case ::spmd::DType::kFloat32: {                        \
      using T = float;                                     \
      __VA_ARGS__;                                         \
    } break;                                               \
    case ::spmd::DType::kFloat64: {                        \
      using T = double;                                    \
      __VA_ARGS__;                                         \
    } break;                                               \
  }

// Runs the statements with `U` an unsigned integer of `size` bytes.
#define SPMD_DISPATCH_SIZE(size, U, ...) \
  switch (size) {                        \
    case 1: {                            \
      using U = std::uint8_t;            \
      __VA_ARGS__;                       \
    } break;                             \
    case 2: {                            \
      using U = std::uint16_t;           \
      __VA_ARGS__;                       \
    } break;                             \
    case 4: {                            \
      using U = std::uint32_t;           \
      __VA_ARGS__;                       \
    } break;                             \
    default: {                           \
      using U = std::uint64_t;           \
      __VA_ARGS__;                       \
    } break;                             \
  }

namespace spmd::cuda::kernels {

inline constexpr int kThreads = 256;

inline unsigned grid_for(std::int64_t n) {
  std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, 8192)));
}

#define SPMD_GRID_LOOP(i, n) \
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// Offset of row-major position `flat` in operand `k` of `d`.
__device__ __forceinline__ std::int64_t offset_of(const StridedDims& d, int k, std::int64_t flat) {
  std::int64_t off = 0;
  for (int i = d.ndim - 1; i >= 0; --i) {
    std::int64_t idx = flat % d.shape[i];
    flat /= d.shape[i];
    off += idx * d.strides[k][i];
  }
  return off;
}

}  // namespace spmd::cuda::kernels
