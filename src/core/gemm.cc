#include "core/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/parallel.h"

extern "C" void omp_set_num_threads(int);  // libgomp; omp.h needs -fopenmp under clang

namespace spmd::detail {

namespace {

// OpenBLAS's own threads would race the devices' for the cores and make a
// product's blocking depend on the machine: parallelism is ours (row blocks on
// oneTBB, devices on --threads). Its OpenMP build sizes each call by the
// calling thread's OpenMP setting, so every thread that calls asks for one
// (a thread-local store in libgomp; no OpenMP thread is ever started).
void single_threaded_blas() { omp_set_num_threads(1); }

// Where an operand's element (row, col) of op(x) lives: x + row * rows + col * cols.
struct Layout {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;  // BLAS's leading dimension of x as stored
  bool transposed = false;
};

// op(x) is r x c; x is stored r x c, or c x r when transposed.
Layout layout_of(std::int64_t r, std::int64_t c, bool transposed) {
  return transposed ? Layout{1, r, r, true} : Layout{c, 1, c, false};
}

template <class T>
void gemm_call(const T* a, Layout la, const T* b, Layout lb, T* c, std::int64_t m, std::int64_t k, std::int64_t n) {
  const auto M = static_cast<blasint>(m), K = static_cast<blasint>(k), N = static_cast<blasint>(n);
  const auto ta = la.transposed ? CblasTrans : CblasNoTrans, tb = lb.transposed ? CblasTrans : CblasNoTrans;
  const auto lda = static_cast<blasint>(la.ld), ldb = static_cast<blasint>(lb.ld);
  single_threaded_blas();  // on the thread that calls: a oneTBB worker, or a device's
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, a, lda, b, ldb, 0.0f, c, N);
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, a, lda, b, ldb, 0.0, c, N);
  }
}

// Integers: c = sum over k ascending of a * b, wrapping (two's complement).
void int_gemm(const std::int64_t* a, Layout la, const std::int64_t* b, Layout lb, std::int64_t* c, std::int64_t m,
              std::int64_t k, std::int64_t n) {
  for (std::int64_t i = 0; i < m; ++i) {
    auto* pc = reinterpret_cast<std::uint64_t*>(c + i * n);
    std::fill(pc, pc + n, std::uint64_t{0});
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const auto av = static_cast<std::uint64_t>(a[i * la.rows + kk * la.cols]);
      const std::int64_t* brow = b + kk * lb.rows;
      for (std::int64_t j = 0; j < n; ++j) pc[j] += av * static_cast<std::uint64_t>(brow[j * lb.cols]);
    }
  }
}

}  // namespace

template <class T>
void gemm_batches(const T* a, const T* b, T* c, const std::vector<std::int64_t>& a_off,
                  const std::vector<std::int64_t>& b_off, std::int64_t m, std::int64_t k, std::int64_t n,
                  bool transpose_a, bool transpose_b) {
  const Layout la = layout_of(m, k, transpose_a), lb = layout_of(k, n, transpose_b);
  const auto batches = static_cast<std::int64_t>(a_off.size());
  const std::int64_t blocks_per_batch = (m + kGemmRowBlock - 1) / kGemmRowBlock;
  const std::int64_t tasks = batches * blocks_per_batch;
  if (k == 0) {  // an empty sum: zeros (BLAS may leave c unwritten)
    std::memset(c, 0, static_cast<std::size_t>(batches * m * n) * sizeof(T));
    return;
  }
  // Parallel only beyond about a million multiply-adds, one task per block.
  const std::int64_t work = batches * m * k * n;
  parallel_ranges(tasks, work > (std::int64_t{1} << 20) ? work : 0, 1, [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t batch = t / blocks_per_batch;
      const std::int64_t row = (t % blocks_per_batch) * kGemmRowBlock;
      const std::int64_t rows = std::min(kGemmRowBlock, m - row);
      const T* pa = a + a_off[static_cast<std::size_t>(batch)] + row * la.rows;  // the block's first row of op(a)
      const T* pb = b + b_off[static_cast<std::size_t>(batch)];
      T* pc = c + (batch * m + row) * n;
      if constexpr (std::is_same_v<T, std::int64_t>) {
        int_gemm(pa, la, pb, lb, pc, rows, k, n);
      } else {
        gemm_call(pa, la, pb, lb, pc, rows, k, n);
      }
    }
  });
}

template void gemm_batches<float>(const float*, const float*, float*, const std::vector<std::int64_t>&,
                                  const std::vector<std::int64_t>&, std::int64_t, std::int64_t, std::int64_t, bool,
                                  bool);
template void gemm_batches<double>(const double*, const double*, double*, const std::vector<std::int64_t>&,
                                   const std::vector<std::int64_t>&, std::int64_t, std::int64_t, std::int64_t, bool,
                                   bool);
template void gemm_batches<std::int64_t>(const std::int64_t*, const std::int64_t*, std::int64_t*,
                                         const std::vector<std::int64_t>&, const std::vector<std::int64_t>&,
                                         std::int64_t, std::int64_t, std::int64_t, bool, bool);

}  // namespace spmd::detail
