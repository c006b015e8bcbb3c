#pragma once
/// \file
/// Reductions over axes (jnp.sum, mean, max, ...). Large reductions run on
/// oneTBB; the summation order is fixed (lanes within fixed-size blocks,
/// blocks pairwise) so results do not depend on the thread count.

#include <optional>
#include <vector>

#include "spmd/core/array.h"

namespace spmd {

enum class ReduceOp { kSum, kProd, kMax, kMin, kMean, kAny, kAll, kArgMax, kArgMin, kVar, kStd };

std::string_view op_name(ReduceOp op);

/// The dtype reduce(op, x) gives for x of dtype `x` (see reduce()).
DType reduction_dtype(ReduceOp op, DType x);

/// Reduces `x` over `axes` (negative allowed; nullopt = all axes).
/// Result dtypes as jnp: sum/prod of bool -> int32, of ints -> same int;
/// mean/var/std of ints -> float32; any/all -> bool; argmax/argmin -> int32
/// (these take at most one axis). max/min of an empty axis throw
/// InvalidArgument (kind "ValueError"). Duplicate axes throw InvalidArgument
/// (kind "ValueError"); an empty `axes` vector reduces nothing.
///
/// Accumulation: double for every float dtype, wrapping int64 for ints and
/// bools, in blocks of 4096 elements combined pairwise, a float block in 8
/// lanes (element i in lane i % 8) added pairwise at its end, so the bits do
/// not depend on the thread count (src/core/reduce_rules.h). max/min propagate NaN; argmax/argmin count a
/// NaN as the extreme (first one wins). mean/var/std of an empty axis are
/// nan; var/std are population statistics (ddof=0). The result keeps x's
/// weak type except for any/all/argmax/argmin.
Array reduce(ReduceOp op, const Array& x, std::optional<std::vector<int>> axes = std::nullopt,
             bool keepdims = false);

inline Array sum(const Array& x, std::optional<std::vector<int>> axes = std::nullopt, bool keepdims = false) {
  return reduce(ReduceOp::kSum, x, std::move(axes), keepdims);
}
inline Array mean(const Array& x, std::optional<std::vector<int>> axes = std::nullopt, bool keepdims = false) {
  return reduce(ReduceOp::kMean, x, std::move(axes), keepdims);
}
inline Array max(const Array& x, std::optional<std::vector<int>> axes = std::nullopt, bool keepdims = false) {
  return reduce(ReduceOp::kMax, x, std::move(axes), keepdims);
}
inline Array min(const Array& x, std::optional<std::vector<int>> axes = std::nullopt, bool keepdims = false) {
  return reduce(ReduceOp::kMin, x, std::move(axes), keepdims);
}

/// jnp.cumsum / cumprod along one axis (nullopt = over the flattened array).
/// Dtypes as sum; a running double (floats) or wrapping int64 accumulator.
Array cumsum(const Array& x, std::optional<int> axis = std::nullopt);
Array cumprod(const Array& x, std::optional<int> axis = std::nullopt);

/// True when every slice of `x` along `axis` equals the first one, as
/// numpy's array_equal(equal_nan=True) compares (0.0 == -0.0, any nan equals
/// any nan). Stops at the first difference: a device-varying array costs a
/// few comparisons, a replicated one a single pass.
bool slices_equal(const Array& x, int axis);

}  // namespace spmd
