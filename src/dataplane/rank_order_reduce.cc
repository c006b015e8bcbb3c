#include "dataplane/rank_order_reduce.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "core/element_access.h"

namespace spmd::detail {

namespace {

// The accumulator of an element type: halves in float, integers unsigned (a
// sum wraps as the host's does, with no signed-overflow UB).
template <class T>
using Acc = std::conditional_t<
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>, float,
    std::conditional_t<std::is_same_v<T, std::int32_t>, std::uint32_t,
                       std::conditional_t<std::is_same_v<T, std::int64_t>, std::uint64_t, T>>>;

}  // namespace

void reduce_in_rank_order(ReduceKind op, DType dtype, std::int64_t count, std::span<const void* const> in,
                          std::int64_t offset, void* out) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    constexpr bool wraps = std::is_same_v<A, std::uint32_t> || std::is_same_v<A, std::uint64_t>;
    T* o = static_cast<T*>(out);
    for (std::int64_t i = 0; i < count; ++i) {
      auto at = [&](std::size_t s) {
        T v = static_cast<const T*>(in[s])[offset + i];
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
          return static_cast<float>(v);
        } else {
          return static_cast<A>(v);
        }
      };
      A acc = at(0);
      for (std::size_t s = 1; s < in.size(); ++s) {
        A b = at(s);
        if (op == ReduceKind::kSum) {
          acc = static_cast<A>(acc + b);
        } else if constexpr (std::is_same_v<A, bool>) {
          acc = op == ReduceKind::kMax ? (acc || b) : (acc && b);
        } else if constexpr (wraps) {
          using S = std::make_signed_t<A>;
          bool take_b = op == ReduceKind::kMax ? !(static_cast<S>(acc) > static_cast<S>(b))
                                               : !(static_cast<S>(acc) < static_cast<S>(b));
          if (take_b) acc = b;
        } else {
          if (std::isnan(acc) || std::isnan(b)) {
            acc = std::numeric_limits<A>::quiet_NaN();
          } else {
            acc = op == ReduceKind::kMax ? (acc > b ? acc : b) : (acc < b ? acc : b);
          }
        }
      }
      if constexpr (wraps) {
        o[i] = static_cast<T>(static_cast<std::make_signed_t<A>>(acc));
      } else {
        o[i] = narrow<T>(acc);
      }
    }
  });
}

}  // namespace spmd::detail
