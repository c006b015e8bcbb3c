#pragma once
/// \file
/// Array shapes and axis arithmetic shared by every op.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/core/dtype.h"

namespace spmd {

using Shape = std::vector<std::int64_t>;

/// Product of the dimensions (1 for a scalar shape). Throws ShapeError when
/// it overflows 64 bits.
std::int64_t num_elements(const Shape& shape);

/// Bytes an array of `shape` and `dtype` takes. Throws ShapeError when the
/// count overflows.
std::size_t byte_count(const Shape& shape, DType dtype);

/// numpy's tuple spelling: "()", "(4,)", "(4, 10)".
std::string shape_to_string(const Shape& shape);

/// JAX's abstract spelling: "f32[4,10]", "i32[]".
std::string abstract_type(DType dtype, const Shape& shape);

/// Maps a possibly negative axis into [0, rank). Throws InvalidArgument
/// naming `op` and `what` (e.g. "in_axes[1]") when out of range.
int normalize_axis(std::int64_t axis, int rank, std::string_view op, std::string_view what = "axis");

/// Row-major strides in elements.
std::vector<std::int64_t> row_major_strides(const Shape& shape);

/// numpy broadcasting of two shapes. Throws ShapeError naming `op`.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);

}  // namespace spmd
