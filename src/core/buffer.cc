#include "spmd/detail/buffer.h"

#include "core/arena.h"
#include "core/placement.h"

namespace spmd::detail {

std::shared_ptr<Buffer> Buffer::allocate(std::size_t nbytes, std::string_view what) {
  return allocate_on(current_placement()->arena, nbytes, what);
}

std::shared_ptr<Buffer> Buffer::allocate_on(const std::shared_ptr<Arena>& arena, std::size_t nbytes,
                                            std::string_view what) {
  void* data = arena->allocate(nbytes, what);
  return std::shared_ptr<Buffer>(new Buffer(arena, data, nbytes));
}

Buffer::~Buffer() { arena_->deallocate(data_, nbytes_); }

DeviceId Buffer::device() const { return arena_->device(); }

MemoryKind Buffer::memory_kind() const { return arena_->memory_kind(); }

}  // namespace spmd::detail
