#pragma once
// How reduce() adds and compares, for the host's reductions
// (core/reduction.cc) and for reductions fused into elementwise chains
// (core/row_reduction.h), which must give the same bits. The CUDA kernels
// (backend/cuda/kernels/reduce.cu) follow the same order.
//
// Include only from files compiled as reduction.cc is (its O3 lets GCC
// vectorize lane_sum); the order, not the vectorization, fixes the bits.

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/element_access.h"
#include "core/scalar_rules.h"

namespace spmd::detail::reduce_rules {

template <class T>
using ReduceCompute = decltype(widen(T{}));

// Summation blocks: each block is summed in kLanes lanes (below), block
// partials are combined pairwise in index order. Neither depends on the
// thread count.
constexpr std::int64_t kBlock = 4096;

// A float sum keeps kLanes running sums within a block, element i in lane
// (i - block start) % kLanes, and adds them pairwise at the block's end. One
// running sum is a chain of dependent additions, bound by the adder's latency
// (a 16K-element mean took 25 us); eight independent ones run at its
// throughput and vectorize. numpy's pairwise sum unrolls by 8 the same way.
// The CUDA kernels (backend/cuda/kernels/reduce.cu) keep the same order.
constexpr int kLanes = 8;

inline double combine_lanes(const double* lane) {
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// The lane sum of value(i) over [b, e), b a block's start.
template <class Value>
double lane_sum(std::int64_t b, std::int64_t e, Value value) {
  double lane[kLanes] = {};
  std::int64_t i = b;
  for (; i + kLanes <= e; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane[l] += value(i + l);
  }
  for (int l = 0; i < e; ++i, ++l) lane[l] += value(i);
  return combine_lanes(lane);
}

template <class Acc, class Combine>
Acc combine_pairwise(std::vector<Acc>& p, Combine combine) {
  std::size_t n = p.size();
  while (n > 1) {
    std::size_t half = n / 2;
    for (std::size_t i = 0; i < half; ++i) p[i] = combine(p[2 * i], p[2 * i + 1]);
    if (n % 2 != 0) {
      p[half] = p[n - 1];
      n = half + 1;
    } else {
      n = half;
    }
  }
  return p[0];
}

inline std::int64_t wrap_add64(std::int64_t a, std::int64_t b) { return rules::wrap_add(a, b); }
inline std::int64_t wrap_mul64(std::int64_t a, std::int64_t b) { return rules::wrap_mul(a, b); }

template <class T>
constexpr bool kFloatT = std::is_floating_point_v<ReduceCompute<T>>;

// A sum's block and combination: double lanes for floats, wrapping int64 for
// ints and bools. reduce() and RowReduction (fused chains) both use it.
template <class T>
struct SumRule {
  using Acc = std::conditional_t<kFloatT<T>, double, std::int64_t>;
  static constexpr Acc identity() { return Acc{0}; }
  Acc leaf(const T* q, std::int64_t b, std::int64_t e) const {
    if constexpr (kFloatT<T>) {
      return lane_sum(b, e, [q](std::int64_t i) { return static_cast<double>(widen(q[i])); });
    } else {
      Acc s = 0;
      for (std::int64_t i = b; i < e; ++i) s = wrap_add64(s, static_cast<std::int64_t>(q[i]));
      return s;
    }
  }
  Acc combine(Acc a, Acc b) const {
    if constexpr (kFloatT<T>) return a + b;
    else return wrap_add64(a, b);
  }
};

// max / min in the computation type; the first NaN (in index order) wins.
template <class T>
struct ExtremeRule {
  using Acc = ReduceCompute<T>;
  bool is_max;
  static constexpr Acc identity() { return Acc{}; }  // never stored: an empty max/min is refused
  bool better(Acc a, Acc b) const { return is_max ? b > a : b < a; }  // b replaces a
  Acc leaf(const T* q, std::int64_t b, std::int64_t e) const {
    Acc m = widen(q[b]);
    if constexpr (kFloatT<T>) {
      if (std::isnan(m)) return m;
    }
    for (std::int64_t i = b + 1; i < e; ++i) {
      Acc v = widen(q[i]);
      if constexpr (kFloatT<T>) {
        if (std::isnan(v)) return v;
      }
      if (better(m, v)) m = v;
    }
    return m;
  }
  Acc combine(Acc a, Acc b) const {
    if constexpr (kFloatT<T>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    return better(a, b) ? b : a;
  }
};

}  // namespace spmd::detail::reduce_rules
