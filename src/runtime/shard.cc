#include "runtime/shard.h"

#include <cstring>

#include "core/device_ops.h"

namespace spmd::detail {

namespace {
struct Rows {
  std::int64_t outer = 1;
  std::int64_t inner_bytes = 1;
};
Rows rows_around(const Shape& s, int axis, DType dtype) {
  Rows r;
  r.inner_bytes = static_cast<std::int64_t>(dtype_size(dtype));
  for (int i = 0; i < axis; ++i) r.outer *= s[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < s.size(); ++i) r.inner_bytes *= s[i];
  return r;
}
}  // namespace

Array take_slice(const Array& x, int axis, std::int64_t i) {
  Shape out_shape = x.shape();
  std::int64_t dim = out_shape[static_cast<std::size_t>(axis)];
  out_shape.erase(out_shape.begin() + axis);
  Array out = Array::uninitialized(out_shape, x.dtype(), "pmap input shard");
  Rows r = rows_around(x.shape(), axis, x.dtype());
  auto* dst = static_cast<std::byte*>(out.mutable_raw_data());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  const auto row = static_cast<std::size_t>(r.inner_bytes);
  copy_rows_between(dst, out.memory_kind(), out.device(), row, src + i * r.inner_bytes, x.memory_kind(), x.device(),
                    static_cast<std::size_t>(dim) * row, row, static_cast<std::size_t>(r.outer), "pmap input shard");
  return out.with_weak_type(x.weak_type());
}

Array stack_along(const std::vector<const Array*>& parts, int axis) {
  const Array& first = *parts[0];
  Shape out_shape = first.shape();
  std::int64_t n = static_cast<std::int64_t>(parts.size());
  out_shape.insert(out_shape.begin() + axis, n);
  Array out = Array::uninitialized(out_shape, first.dtype(), "pmap output");
  Rows r = rows_around(out_shape, axis, first.dtype());
  auto* dst = static_cast<std::byte*>(out.mutable_raw_data());
  const auto row = static_cast<std::size_t>(r.inner_bytes);
  for (std::int64_t i = 0; i < n; ++i) {
    const Array& part = *parts[static_cast<std::size_t>(i)];
    copy_rows_between(dst + i * r.inner_bytes, out.memory_kind(), out.device(), static_cast<std::size_t>(n) * row,
                      part.raw_data(), part.memory_kind(), part.device(), row, row, static_cast<std::size_t>(r.outer),
                      "pmap output");
  }
  return out.with_weak_type(first.weak_type());
}

Array merge_dims(const Array& x, int axis, int count) {
  if (count == 1) return x;
  Shape s = x.shape();
  std::int64_t merged = 1;
  for (int i = 0; i < count; ++i) merged *= s[static_cast<std::size_t>(axis + i)];
  s.erase(s.begin() + axis, s.begin() + axis + count);
  s.insert(s.begin() + axis, merged);
  return x.reshaped_view(s);
}

Array split_dim(const Array& x, int axis, const std::vector<std::int64_t>& sizes) {
  if (sizes.size() == 1) return x;
  Shape s = x.shape();
  s.erase(s.begin() + axis);
  s.insert(s.begin() + axis, sizes.begin(), sizes.end());
  return x.reshaped_view(s);
}

}  // namespace spmd::detail
