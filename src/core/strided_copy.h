#pragma once
// Materialises a strided view of an array (transpose, slice, flip, broadcast)
// as a fresh row-major array on the calling device. The building block of the
// layout and indexing ops.

#include <cstdint>
#include <string_view>
#include <vector>

#include "spmd/core/array.h"

namespace spmd::detail {

/// Element (i0, i1, ...) of the result is x's flat element
/// offset + sum(i_k * strides[k]). Keeps x's dtype and weak type.
Array strided_copy(const Array& x, std::int64_t offset, const Shape& shape, const std::vector<std::int64_t>& strides,
                   std::string_view what);

/// x with its axes permuted: result axis i is x's axis perm[i] (perm is valid).
Array permuted_copy(const Array& x, const std::vector<int>& perm, std::string_view what);

/// x converted to `dtype` for use as an op's operand (x itself when it already
/// has that dtype); keeps the weak flag.
Array converted(const Array& x, DType dtype, std::string_view what);

/// True when `x` lives in the calling device's arena (or both are the host).
bool on_current_device(const Array& x);

}  // namespace spmd::detail
