#pragma once
/// \file
/// Shape and layout ops: reshape, transpose, slicing, concatenation.
/// All results are row-major arrays on the calling device. Arrays are
/// immutable, so reshape, ravel, expand_dims and squeeze of an array already
/// on the calling device share its storage instead of copying. Results keep
/// the input's weak type.
///
/// Error kinds: bad axes "AxisError", incompatible shapes "ShapeError",
/// bad values (zero slice step, negative counts) "ValueError", bad indices
/// "IndexError", non-integer take indices "TypeError".

#include <cstdint>
#include <optional>
#include <vector>

#include "spmd/core/array.h"

namespace spmd {

/// One entry of a numpy basic index: x[1, 2:5, None, ..., ::-1].
struct IndexItem {
  enum class Kind { kInt, kSlice, kNewAxis, kEllipsis };
  Kind kind = Kind::kInt;
  std::int64_t index = 0;                 // kInt (negative counts from the end)
  std::optional<std::int64_t> start, stop, step;  // kSlice (python semantics)

  static IndexItem at(std::int64_t i) { return {Kind::kInt, i, {}, {}, {}}; }
  static IndexItem slice(std::optional<std::int64_t> start = {}, std::optional<std::int64_t> stop = {},
                         std::optional<std::int64_t> step = {}) {
    return {Kind::kSlice, 0, start, stop, step};
  }
  static IndexItem new_axis() { return {Kind::kNewAxis, 0, {}, {}, {}}; }
  static IndexItem ellipsis() { return {Kind::kEllipsis, 0, {}, {}, {}}; }
};

/// New shape may contain one -1. Throws ShapeError when sizes disagree.
Array reshape(const Array& x, Shape shape);
/// `perm` empty reverses the axes (x.T).
Array transpose(const Array& x, std::vector<int> perm = {});
Array swapaxes(const Array& x, int a, int b);
Array moveaxis(const Array& x, int source, int destination);
Array expand_dims(const Array& x, int axis);
/// Removes the given size-1 axes (all size-1 axes when empty).
Array squeeze(const Array& x, std::vector<int> axes = {});
Array ravel(const Array& x);
Array broadcast_to(const Array& x, const Shape& shape);
Array concatenate(const std::vector<Array>& xs, int axis = 0);
Array stack(const std::vector<Array>& xs, int axis = 0);
/// jnp.split(x, sections, axis): `sections` equal parts (must divide).
std::vector<Array> split(const Array& x, std::int64_t sections, int axis = 0);
/// Part `index` of `parts` equal pieces along `axis` (must divide).
Array chunk(const Array& x, std::int64_t parts, std::int64_t index, int axis);
Array flip(const Array& x, std::optional<int> axis = std::nullopt);
/// jnp.tile / jnp.repeat (repeat with nullopt axis flattens first).
Array tile(const Array& x, const std::vector<std::int64_t>& reps);
Array repeat(const Array& x, std::int64_t repeats, std::optional<int> axis = std::nullopt);
/// jnp.roll(x, shift, axis) (nullopt axis rolls the flattened array).
Array roll(const Array& x, std::int64_t shift, std::optional<int> axis = std::nullopt);

/// Basic indexing; out-of-range integer indices throw InvalidArgument (kind
/// "IndexError") naming the axis and size.
Array index(const Array& x, const std::vector<IndexItem>& items);
/// x.at[items].set(value) / .add(value): a new array, `value` cast to x's
/// dtype and broadcast to the indexed region (extra leading size-1 axes of
/// `value` are dropped, as in numpy assignment).
enum class UpdateMode { kSet, kAdd, kMultiply, kMin, kMax };
Array index_update(const Array& x, const std::vector<IndexItem>& items, const Array& value, UpdateMode mode);
/// jnp.take(x, indices, axis): gather along one axis; indices int32/int64.
/// Negative indices count from the end, then out-of-range ones are clamped
/// (jnp's mode="clip"; recent jnp versions default to "fill" instead).
Array take(const Array& x, const Array& indices, std::optional<int> axis = std::nullopt);

}  // namespace spmd
