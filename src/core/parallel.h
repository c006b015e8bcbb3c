#pragma once
// Chunked loops that run on oneTBB only when the work is large enough to pay
// for it. Chunk boundaries never change results: callers either write disjoint
// outputs per index or combine fixed-size blocks in a fixed order.
//
// The TBB loop itself is compiled once (parallel.cc); kernels reach it through
// a function pointer, so each kernel does not instantiate its own parallel_for.

#include <cstdint>
#include <type_traits>
#include <utility>

namespace spmd::detail {

/// Element count above which an op goes parallel.
inline constexpr std::int64_t kParallelThreshold = std::int64_t{1} << 16;

using RangeFn = void (*)(void* ctx, std::int64_t begin, std::int64_t end);

/// Calls fn(ctx, begin, end) over [0, n): once when `work` (elements touched)
/// is at most kParallelThreshold, else in parallel chunks of at least `grain`.
void parallel_ranges_erased(std::int64_t n, std::int64_t work, std::int64_t grain, RangeFn fn, void* ctx);

/// body(begin, end) over [0, n), as parallel_ranges_erased.
template <class F>
void parallel_ranges(std::int64_t n, std::int64_t work, std::int64_t grain, F&& body) {
  if (n <= 0) return;
  if (work <= kParallelThreshold || n == 1) {
    body(std::int64_t{0}, n);
    return;
  }
  using Body = std::remove_reference_t<F>;
  parallel_ranges_erased(
      n, work, grain,
      [](void* ctx, std::int64_t b, std::int64_t e) { (*static_cast<Body*>(ctx))(b, e); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

/// parallel_ranges over n elements, each chunk about 16K elements.
template <class F>
void parallel_elements(std::int64_t n, F&& body) {
  parallel_ranges(n, n, std::int64_t{1} << 14, std::forward<F>(body));
}

}  // namespace spmd::detail
