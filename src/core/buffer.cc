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
  try {
    // One allocation for the buffer and its count: arrays are made by the thousand.
    return std::make_shared<Buffer>(Key{}, arena, data, nbytes);
  } catch (...) {
    arena->deallocate(data, nbytes);
    throw;
  }
}

std::vector<std::shared_ptr<Buffer>> Buffer::allocate_shared(const std::vector<std::shared_ptr<Arena>>& arenas,
                                                             std::size_t nbytes, std::string_view what) {
  std::vector<std::shared_ptr<Buffer>> buffers;
  if (arenas.empty()) return buffers;
  // Charge every arena first, so an arena over capacity fails before any
  // memory is obtained; each buffer made takes over its arena's charge.
  std::size_t charged = 0;
  try {
    for (; charged < arenas.size(); ++charged) arenas[charged]->charge(nbytes, what);
  } catch (...) {
    for (std::size_t i = 0; i < charged; ++i) arenas[i]->uncharge(nbytes);
    throw;
  }
  const std::shared_ptr<Arena>& source = arenas.front();
  std::shared_ptr<void> block;
  try {
    block = std::shared_ptr<void>(source->obtain(nbytes, what),
                                  [source, nbytes](void* p) { source->release(p, nbytes); });
  } catch (...) {
    for (const auto& arena : arenas) arena->uncharge(nbytes);
    throw;
  }
  try {
    buffers.reserve(arenas.size());
    for (const auto& arena : arenas) {
      buffers.push_back(std::make_shared<Buffer>(Key{}, arena, block.get(), nbytes, block));
    }
  } catch (...) {
    // The buffers made give their charges back as they go; the rest here.
    for (std::size_t i = buffers.size(); i < arenas.size(); ++i) arenas[i]->uncharge(nbytes);
    throw;
  }
  return buffers;
}

Buffer::~Buffer() {
  if (shared_block_) {
    arena_->uncharge(nbytes_);  // the block goes back with the last buffer over it
  } else {
    arena_->deallocate(data_, nbytes_);
  }
}

DeviceId Buffer::device() const { return arena_->device(); }

MemoryKind Buffer::memory_kind() const { return arena_->memory_kind(); }

}  // namespace spmd::detail
