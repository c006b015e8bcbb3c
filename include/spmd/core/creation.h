#pragma once
/// \file
/// Array creation (jnp.zeros, ones, full, arange, ...). Results are placed on
/// the calling device (the host outside pmap).

#include <optional>

#include "spmd/core/array.h"

namespace spmd {

Array zeros(const Shape& shape, DType dtype = kDefaultFloat);
Array ones(const Shape& shape, DType dtype = kDefaultFloat);
/// Every element `value` converted to `dtype`.
Array full(const Shape& shape, double value, DType dtype = kDefaultFloat);
Array zeros_like(const Array& x);
Array ones_like(const Array& x);
Array full_like(const Array& x, double value);

/// jnp.arange(start, stop, step): int32 when all three are integral and no
/// dtype is given, else float32. Throws InvalidArgument for step == 0.
Array arange(double start, double stop, double step = 1, std::optional<DType> dtype = std::nullopt);
inline Array arange(std::int64_t stop) { return arange(0, static_cast<double>(stop), 1); }

/// jnp.linspace(start, stop, num, endpoint=True), float32 by default.
Array linspace(double start, double stop, std::int64_t num, bool endpoint = true,
               DType dtype = kDefaultFloat);
/// lax.broadcasted_iota: every element is its index along `dimension`
/// (0 <= dimension < rank). Numeric dtypes only; throws InvalidArgument
/// otherwise.
Array iota(const Shape& shape, int dimension, DType dtype = kDefaultInt);

/// jnp.eye(n, m).
Array eye(std::int64_t n, std::int64_t m = -1, DType dtype = kDefaultFloat);

/// A copy of `x` placed on the calling device (or host).
Array copy(const Array& x);

}  // namespace spmd
