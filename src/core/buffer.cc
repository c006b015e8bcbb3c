#include "spmd/detail/buffer.h"

#include <stdexcept>

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

std::shared_ptr<Buffer> Buffer::over_block(const std::shared_ptr<Arena>& arena, std::shared_ptr<void> block,
                                           std::size_t nbytes, std::string_view what) {
  if (arena->memory_kind() != MemoryKind::kHost) {
    throw std::logic_error("Buffer::over_block: only host-memory arenas can share a block");
  }
  arena->charge(nbytes, what);
  try {
    void* data = block.get();
    return std::make_shared<Buffer>(Key{}, arena, data, nbytes, std::move(block));
  } catch (...) {
    arena->uncharge(nbytes);
    throw;
  }
}

std::shared_ptr<void> Buffer::block() {
  if (arena_->memory_kind() != MemoryKind::kHost) {
    throw std::logic_error("Buffer::block: device memory is not shared between devices");
  }
  std::call_once(share_once_, [this] {
    if (shared_block_) return;  // made over a shared block already
    // From now on the block frees the memory and this buffer only uncharges
    // its arena (see the destructor): the same two halves deallocate() does.
    // Made whole before it owns anything, so a failed allocation leaves the
    // buffer as it was.
    struct Owner {
      Owner(std::shared_ptr<Arena> a, void* d, std::size_t n) : arena(std::move(a)), data(d), nbytes(n) {}
      Owner(const Owner&) = delete;
      Owner& operator=(const Owner&) = delete;
      ~Owner() { arena->release(data, nbytes); }
      std::shared_ptr<Arena> arena;
      void* data;
      std::size_t nbytes;
    };
    auto owner = std::make_shared<Owner>(arena_, data_, nbytes_);  // built in place: no temporary frees
    shared_block_ = std::shared_ptr<void>(owner, data_);
  });
  return shared_block_;
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
