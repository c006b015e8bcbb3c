#include "spmd/core/shape.h"

#include "spmd/error.h"

namespace spmd {

std::int64_t num_elements(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) {
    // A shape whose count overflows would index memory it never allocated.
    if (__builtin_mul_overflow(n, d, &n)) {
      throw_shape_error("shape", "the shape " + shape_to_string(shape) + " has more elements than 64 bits can count",
                        "no array can be that large; check the dimensions (a size in bytes or a power of two "
                        "where a count was meant?)");
    }
  }
  return n;
}

std::size_t byte_count(const Shape& shape, DType dtype) {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::size_t>(num_elements(shape)), dtype_size(dtype), &bytes)) {
    throw_shape_error("shape", "an array of shape " + shape_to_string(shape) + " and dtype " +
                                   std::string(dtype_name(dtype)) + " has more bytes than 64 bits can count",
                      "no array can be that large; check the dimensions");
  }
  return bytes;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string abstract_type(DType dtype, const Shape& shape) {
  std::string s(dtype_short_name(dtype));
  s += "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int normalize_axis(std::int64_t axis, int rank, std::string_view op, std::string_view what) {
  if (axis < -rank || axis >= rank) {
    throw_invalid_argument(
        "AxisError",
        std::string(op) + ": " + std::string(what) + " " + std::to_string(axis) +
            " is out of bounds for an array of rank " + std::to_string(rank),
        rank == 0 ? "a scalar has no axes" : "valid values are -" + std::to_string(rank) + ".." + std::to_string(rank - 1));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw_shape_error(op,
                        "shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                            " do not broadcast (axis " + std::to_string(i) + ": " + std::to_string(da) +
                            " vs " + std::to_string(db) + ")",
                        "trailing dimensions must be equal or 1; reshape or transpose one operand");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace spmd
