#pragma once
// Chunked loops that run on oneTBB only when the work is large enough to pay
// for it. Chunk boundaries never change results: callers either write disjoint
// outputs per index or combine fixed-size blocks in a fixed order.

#include <algorithm>
#include <cstdint>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace spmd::detail {

/// Element count above which an op goes parallel.
inline constexpr std::int64_t kParallelThreshold = std::int64_t{1} << 16;

/// Calls body(begin, end) over [0, n): once when `work` (elements touched) is
/// at most kParallelThreshold, else in parallel chunks of at least `grain`.
template <class F>
void parallel_ranges(std::int64_t n, std::int64_t work, std::int64_t grain, F&& body) {
  if (n <= 0) return;
  if (work <= kParallelThreshold || n == 1) {
    body(std::int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, std::max<std::int64_t>(1, grain)),
                    [&](const tbb::blocked_range<std::int64_t>& r) { body(r.begin(), r.end()); });
}

/// parallel_ranges over n elements, each chunk about 16K elements.
template <class F>
void parallel_elements(std::int64_t n, F&& body) {
  parallel_ranges(n, n, std::int64_t{1} << 14, std::forward<F>(body));
}

}  // namespace spmd::detail
