#include "core/replicas.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "core/arena.h"
#include "spmd/detail/buffer.h"

namespace spmd::detail {

struct ArrayInternals {
  static Array over(std::shared_ptr<Buffer> buffer, const Shape& shape, DType dtype, bool weak = false) {
    return Array(std::move(buffer), shape, dtype, weak);
  }
  static const std::shared_ptr<Buffer>& buffer(const Array& a) { return a.buffer_; }
};

std::vector<Array> uninitialized_replicas(const std::vector<std::shared_ptr<Arena>>& arenas, const Shape& shape,
                                          DType dtype, std::string_view what) {
  const std::size_t nbytes = byte_count(shape, dtype);
  std::vector<Array> arrays;
  arrays.reserve(arenas.size());
  if (!std::all_of(arenas.begin(), arenas.end(), [](const auto& a) { return a->memory_kind() == MemoryKind::kHost; })) {
    throw std::logic_error("uninitialized_replicas: only host-memory arenas can share a block");
  }
  for (auto& buffer : Buffer::allocate_shared(arenas, nbytes, what)) {
    arrays.push_back(ArrayInternals::over(std::move(buffer), shape, dtype));
  }
  return arrays;
}

std::optional<SharedContents> SharedContents::of(const Array& a) {
  const std::shared_ptr<Buffer>& buffer = ArrayInternals::buffer(a);
  if (!buffer || buffer->memory_kind() != MemoryKind::kHost) return std::nullopt;
  return SharedContents(buffer->block(), buffer->size(), a.shape(), a.dtype(), a.weak_type());
}

SharedContents SharedContents::row(std::int64_t i) const {
  if (shape_.empty() || i < 0 || i >= shape_[0]) {
    throw std::out_of_range("SharedContents::row: no entry " + std::to_string(i) + " along the first axis of " +
                            shape_to_string(shape_));
  }
  const std::size_t row_bytes = nbytes_ / static_cast<std::size_t>(shape_[0]);
  // Aliasing: the row's pointer, the whole block's ownership.
  std::shared_ptr<void> part(block_, static_cast<std::byte*>(block_.get()) + static_cast<std::size_t>(i) * row_bytes);
  return SharedContents(std::move(part), row_bytes, Shape(shape_.begin() + 1, shape_.end()), dtype_, weak_);
}

Array SharedContents::on(const std::shared_ptr<Arena>& arena, std::string_view what) const {
  return ArrayInternals::over(Buffer::over_block(arena, block_, nbytes_, what), shape_, dtype_, weak_);
}

}  // namespace spmd::detail
