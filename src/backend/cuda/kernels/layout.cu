// strided_copy, index_update, take: the layout primitives on the GPU.

#include "backend/cuda/kernels/dispatch.cuh"
#include "spmd/core/layout.h"

namespace spmd::cuda::kernels {

namespace {

using namespace spmd::cuda::dev;

template <class U>
__global__ void strided_copy_kernel(const U* x, std::int64_t offset, U* out, StridedDims d, std::int64_t n) {
  SPMD_GRID_LOOP(i, n) { out[i] = x[offset + offset_of(d, 1, i)]; }
}

// indexing.cc combine()
template <class C>
__device__ __forceinline__ C combine(int mode, C old, C v) {
  switch (static_cast<UpdateMode>(mode)) {
    case UpdateMode::kSet: return v;
    case UpdateMode::kAdd:
      if constexpr (std::is_same_v<C, bool>) return old || v;
      else if constexpr (std::is_integral_v<C>) return wrap_add(old, v);
      else return old + v;
    case UpdateMode::kMultiply:
      if constexpr (std::is_same_v<C, bool>) return old && v;
      else if constexpr (std::is_integral_v<C>) return wrap_mul(old, v);
      else return old * v;
    case UpdateMode::kMin:
      if constexpr (std::is_floating_point_v<C>) {
        if (m_isnan(old) || m_isnan(v)) return m_isnan(old) ? old : v;
      }
      return v < old ? v : old;
    case UpdateMode::kMax:
      if constexpr (std::is_floating_point_v<C>) {
        if (m_isnan(old) || m_isnan(v)) return m_isnan(old) ? old : v;
      }
      return old < v ? v : old;
  }
  return v;
}

template <class T>
__global__ void index_update_kernel(T* out, std::int64_t offset, const T* value, int mode, StridedDims d,
                                    std::int64_t n) {
  SPMD_GRID_LOOP(i, n) {
    std::int64_t oo = offset, vo = 0, flat = i;
    for (int k = d.ndim - 1; k >= 0; --k) {
      std::int64_t idx = flat % d.shape[k];
      flat /= d.shape[k];
      oo += idx * d.strides[0][k];
      vo += idx * d.strides[1][k];
    }
    T& dst = out[oo];
    dst = narrow<T>(combine<Compute<T>>(mode, widen(dst), widen(value[vo])));
  }
}

template <class U, class I>
__global__ void take_kernel(const U* x, const I* indices, std::int64_t count, U* out, std::int64_t n,
                            std::int64_t inner, std::int64_t total) {
  SPMD_GRID_LOOP(e, total) {
    std::int64_t t = e % inner;
    std::int64_t rest = e / inner;
    std::int64_t j = rest % count;
    std::int64_t o = rest / count;
    std::int64_t i = static_cast<std::int64_t>(indices[j]);
    if (i < 0) i += n;
    i = i < 0 ? 0 : (i > n - 1 ? n - 1 : i);
    out[e] = x[(o * n + i) * inner + t];
  }
}

}  // namespace

void strided_copy(cudaStream_t s, std::size_t elem_size, const void* x, std::int64_t offset, void* out,
                  const StridedDims& d, std::int64_t n) {
  SPMD_DISPATCH_SIZE(elem_size, U,
                     strided_copy_kernel<U><<<grid_for(n), kThreads, 0, s>>>(static_cast<const U*>(x), offset,
                                                                              static_cast<U*>(out), d, n));
}

void index_update(cudaStream_t s, DType dtype, void* out, std::int64_t offset, const void* value, int mode,
                  const StridedDims& d, std::int64_t n) {
  SPMD_DISPATCH_DTYPE(dtype, T,
                      index_update_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(out), offset,
                                                                               static_cast<const T*>(value), mode, d,
                                                                               n));
}

void take(cudaStream_t s, std::size_t elem_size, const void* x, DType index_dtype, const void* indices,
          std::int64_t count, void* out, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  const std::int64_t total = outer * count * inner;
  SPMD_DISPATCH_SIZE(elem_size, U, {
    if (index_dtype == DType::kInt64) {
      take_kernel<U, std::int64_t><<<grid_for(total), kThreads, 0, s>>>(
          static_cast<const U*>(x), static_cast<const std::int64_t*>(indices), count, static_cast<U*>(out), n, inner,
          total);
    } else {
      take_kernel<U, std::int32_t><<<grid_for(total), kThreads, 0, s>>>(
          static_cast<const U*>(x), static_cast<const std::int32_t*>(indices), count, static_cast<U*>(out), n, inner,
          total);
    }
  });
}

}  // namespace spmd::cuda::kernels
