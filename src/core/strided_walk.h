#pragma once
// Walks a row-major index space over N operands that each have their own
// element strides (0 for broadcast axes, negative for flipped ones), calling
// the kernel once per run along the innermost axis. Adjacent axes that are
// contiguous for every operand are merged first, so same-shape contiguous
// operands become one long run.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "spmd/core/shape.h"

namespace spmd::detail {

template <std::size_t N>
struct StridedLoop {
  std::vector<std::int64_t> shape;  // coalesced, outermost first, never empty
  std::array<std::vector<std::int64_t>, N> strides;
  std::int64_t size = 0;
};

template <std::size_t N>
StridedLoop<N> make_strided_loop(const Shape& shape, const std::array<std::vector<std::int64_t>, N>& strides) {
  StridedLoop<N> loop;
  loop.size = num_elements(shape);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!loop.shape.empty()) {
      bool merge = true;
      for (std::size_t k = 0; k < N; ++k) {
        if (loop.strides[k].back() != strides[k][i] * shape[i]) merge = false;
      }
      if (merge) {
        loop.shape.back() *= shape[i];
        for (std::size_t k = 0; k < N; ++k) loop.strides[k].back() = strides[k][i];
        continue;
      }
    }
    loop.shape.push_back(shape[i]);
    for (std::size_t k = 0; k < N; ++k) loop.strides[k].push_back(strides[k][i]);
  }
  if (loop.shape.empty()) {
    loop.shape.push_back(1);
    for (std::size_t k = 0; k < N; ++k) loop.strides[k].push_back(0);
  }
  return loop;
}

/// Calls f(offsets, count, inner_strides) for the runs covering row-major
/// positions [begin, end); offsets start from `base`.
template <std::size_t N, class F>
void walk_strided(const StridedLoop<N>& loop, const std::array<std::int64_t, N>& base, std::int64_t begin,
                  std::int64_t end, F&& f) {
  if (begin >= end) return;
  const int d = static_cast<int>(loop.shape.size());
  std::vector<std::int64_t> idx(static_cast<std::size_t>(d));
  std::array<std::int64_t, N> off = base;
  std::int64_t rem = begin;
  for (int i = d - 1; i >= 0; --i) {
    idx[i] = rem % loop.shape[i];
    rem /= loop.shape[i];
    for (std::size_t k = 0; k < N; ++k) off[k] += idx[i] * loop.strides[k][i];
  }
  std::array<std::int64_t, N> inner;
  for (std::size_t k = 0; k < N; ++k) inner[k] = loop.strides[k][d - 1];
  const std::int64_t n_inner = loop.shape[d - 1];
  std::int64_t pos = begin;
  while (true) {
    std::int64_t count = std::min(n_inner - idx[d - 1], end - pos);
    f(off, count, inner);
    pos += count;
    if (pos >= end) return;
    for (std::size_t k = 0; k < N; ++k) off[k] += count * inner[k];
    idx[d - 1] += count;
    for (int i = d - 1; i > 0 && idx[i] == loop.shape[i]; --i) {
      for (std::size_t k = 0; k < N; ++k) off[k] += loop.strides[k][i - 1] - idx[i] * loop.strides[k][i];
      idx[i] = 0;
      ++idx[i - 1];
    }
  }
}

/// Strides of `in` (right-aligned, numpy broadcasting) viewed in `out`'s index
/// space: 0 on broadcast axes. `in` must broadcast to `out`.
inline std::vector<std::int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<std::int64_t> s(out.size(), 0);
  auto rm = row_major_strides(in);
  std::size_t lead = out.size() - in.size();
  for (std::size_t i = 0; i < in.size(); ++i) s[lead + i] = in[i] == 1 ? 0 : rm[i];
  return s;
}

}  // namespace spmd::detail
