#pragma once
// Host-callable launchers of the cuda backend's kernels (kernels/*.cu). Each
// enqueues work on `stream` and returns at once; errors surface through
// cudaGetLastError / the stream (the caller checks). Semantics: see
// core/device_ops.h, which CudaDeviceOps implements with these.
//
// Strided index spaces are passed coalesced (detail::make_strided_loop) as a
// StridedDims by value: at most kMaxDims dimensions.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "spmd/core/dtype.h"

namespace spmd::cuda::kernels {

inline constexpr int kMaxDims = 12;
inline constexpr int kMaxOperands = 4;

/// A row-major index space (outermost first) and each operand's element
/// strides over it.
struct StridedDims {
  int ndim = 0;
  std::int64_t shape[kMaxDims] = {};
  std::int64_t strides[kMaxOperands][kMaxDims] = {};
};

/// Sets n elements of `elem_size` bytes to the low bytes of `bits` (the host narrows the value).
void fill(cudaStream_t s, std::size_t elem_size, void* out, std::int64_t n, std::uint64_t bits);
/// op: spmd::UnaryOp; out is bool when out_bool, else x's dtype.
void unary(cudaStream_t s, int op, DType dtype, const void* x, void* out, bool out_bool, std::int64_t n);
/// op: spmd::BinaryOp; d.strides[1], [2] are a's and b's; out row-major.
void binary(cudaStream_t s, int op, DType dtype, const void* a, const void* b, void* out, bool out_bool,
            const StridedDims& d, std::int64_t n);
/// d.strides[1..3]: c, x, y.
void where(cudaStream_t s, DType dtype, const void* c, const void* x, const void* y, void* out, const StridedDims& d,
           std::int64_t n);
void astype(cudaStream_t s, DType from, const void* x, DType to, void* out, std::int64_t n);
/// d.strides[1]: x's, from `offset`; out row-major.
void strided_copy(cudaStream_t s, std::size_t elem_size, const void* x, std::int64_t offset, void* out,
                  const StridedDims& d, std::int64_t n);
/// d.strides[0]: out's (from offset), [1]: value's. mode: spmd::UpdateMode.
void index_update(cudaStream_t s, DType dtype, void* out, std::int64_t offset, const void* value, int mode,
                  const StridedDims& d, std::int64_t n);
void take(cudaStream_t s, std::size_t elem_size, const void* x, DType index_dtype, const void* indices,
          std::int64_t count, void* out, std::int64_t outer, std::int64_t n, std::int64_t inner);

/// Scratch bytes reduce() needs for (outer, r).
std::size_t reduce_scratch_bytes(std::int64_t outer, std::int64_t r);
/// op: spmd::ReduceOp; rows of x viewed as (outer, r).
void reduce(cudaStream_t s, int op, DType in, const void* x, DType out_dtype, void* out, std::int64_t outer,
            std::int64_t r, void* scratch);
void scan(cudaStream_t s, bool prod, DType in, const void* x, DType out_dtype, void* out, std::int64_t outer,
          std::int64_t n, std::int64_t inner);
/// Integer products (floats go to cuBLAS): c[b, i, j] = sum over kk
/// ascending of a[a_off[b] + i*k + kk] * b[b_off[b] + kk*n + j] on operands
/// already widened to int64, wrapping. a_off/b_off: device arrays of
/// `batches` element offsets.
void matmul_int64(cudaStream_t s, const std::int64_t* a, const std::int64_t* b, std::int64_t* c,
                  const std::int64_t* a_off, const std::int64_t* b_off, std::int64_t batches, std::int64_t m,
                  std::int64_t k, std::int64_t n);

/// The copy transport's reduction: out[i] = in[0][off+i] op in[1][off+i] ...
/// in rank order with the host data plane's accumulation (halves in float,
/// ints wrapping, NaN-propagating max/min). op: 0 sum, 1 max, 2 min.
/// `inputs` is a device array of g pointers.
void group_reduce(cudaStream_t s, int op, DType dtype, const void* const* inputs, int g, std::int64_t offset,
                  void* out, std::int64_t count);

/// Test helpers: a kernel that spins until *flag (mapped host memory) is
/// nonzero, and one that writes through an invalid address.
void spin_until(cudaStream_t s, const volatile int* flag);
void fault(cudaStream_t s);

}  // namespace spmd::cuda::kernels
