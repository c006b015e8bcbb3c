#include "core/parallel.h"

#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "util/tsan_annotations.h"

namespace spmd::detail {

void parallel_ranges_erased(std::int64_t n, std::int64_t work, std::int64_t grain, RangeFn fn, void* ctx) {
  if (n <= 0) return;
  if (work <= kParallelThreshold || n == 1) {
    fn(ctx, 0, n);
    return;
  }
  // oneTBB's task hand-off is invisible to ThreadSanitizer (the library is not
  // instrumented): say that the caller's writes precede every chunk and every
  // chunk precedes the caller's next step.
  const void* order = &n;
  tsan_release(order);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, std::max<std::int64_t>(1, grain)),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      tsan_acquire(order);
                      fn(ctx, r.begin(), r.end());
                      tsan_release(order);
                    });
  tsan_acquire(order);
}

}  // namespace spmd::detail
