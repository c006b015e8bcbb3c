#pragma once
// Batched matrix products on the host: float32 and float64 on OpenBLAS
// (sgemm, dgemm), computed in the operands' own precision as XLA does on CPU;
// integers and bools in int64, wrapping, k ascending.
//
// Reproducible: each output row block of kGemmRowBlock rows is one BLAS call
// of the same shape whatever the thread count, and OpenBLAS runs each call on
// the calling thread (its own threads are off), so a result does not depend on
// how blocks were spread over threads, nor on --threads.

#include <cstdint>
#include <vector>

namespace spmd::detail {

/// Rows of one BLAS call: large enough that repacking B per block costs
/// little, small enough that a large product spreads over the cores.
inline constexpr std::int64_t kGemmRowBlock = 256;

/// c[batch] (m x n) = op(a[batch]) (m x k) @ op(b[batch]) (k x n), all
/// row-major and contiguous, where op transposes an operand stored the other
/// way round (transpose_a: a[batch] is k x m; transpose_b: b[batch] is n x k),
/// read in place; a_off[i] and b_off[i] are batch i's element offsets into a
/// and b (broadcast batches share operands); c's batches are consecutive.
template <class T>
void gemm_batches(const T* a, const T* b, T* c, const std::vector<std::int64_t>& a_off,
                  const std::vector<std::int64_t>& b_off, std::int64_t m, std::int64_t k, std::int64_t n,
                  bool transpose_a = false, bool transpose_b = false);

}  // namespace spmd::detail
