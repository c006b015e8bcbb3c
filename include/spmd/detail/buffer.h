#pragma once
/// \file
/// Internal: the storage behind an Array. Installed because Array holds one,
/// but not part of the API.

#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "spmd/core/device_id.h"
#include "spmd/core/memory_kind.h"

namespace spmd::detail {

class Arena;

/// A block of memory charged to one arena (one device, or the host).
/// Immutable once filled: Arrays share buffers freely within one device, and
/// buffers of equal contents on several devices may share one block of host
/// memory (allocate_shared), each still charged to its own device.
class Buffer {
 public:
  /// Allocates on the calling fiber's device (the host outside any device).
  /// `what` names the allocation for out-of-memory reports ("psum output").
  /// Throws OutOfMemoryError when the device arena is over capacity.
  static std::shared_ptr<Buffer> allocate(std::size_t nbytes, std::string_view what);
  /// Allocates on a given arena (used by the runtime to place per-device copies).
  static std::shared_ptr<Buffer> allocate_on(const std::shared_ptr<Arena>& arena, std::size_t nbytes,
                                             std::string_view what);
  /// One buffer per arena, all over one block of `nbytes` obtained from the
  /// first arena; each arena is charged `nbytes` as if it held its own copy
  /// (the same OutOfMemoryError, for the first arena over capacity). The
  /// block is freed with the last of them. For host-memory arenas only: the
  /// simulator's collectives whose result is the same on every member.
  static std::vector<std::shared_ptr<Buffer>> allocate_shared(const std::vector<std::shared_ptr<Arena>>& arenas,
                                                              std::size_t nbytes, std::string_view what);
  /// A buffer over `block` (from block() of a host-memory buffer), charged
  /// to `arena` as a copy of its `nbytes` would be: the same
  /// OutOfMemoryError when the arena is over capacity. Host-memory arenas
  /// only (std::logic_error otherwise).
  static std::shared_ptr<Buffer> over_block(const std::shared_ptr<Arena>& arena, std::shared_ptr<void> block,
                                            std::size_t nbytes, std::string_view what);

  /// This buffer's memory as a block other arenas' buffers may share
  /// (over_block). A buffer that owned its memory alone hands the ownership
  /// to the block: its memory is then freed with the last buffer over the
  /// block, while its arena is still uncharged when it dies. Host memory only
  /// (std::logic_error otherwise). Safe to call from several threads.
  std::shared_ptr<void> block();

  /// Only the factories above can make the key: construct through them.
  class Key {
    friend class Buffer;
    explicit Key() = default;
  };
  Buffer(Key, std::shared_ptr<Arena> arena, void* data, std::size_t nbytes, std::shared_ptr<void> shared_block = nullptr)
      : arena_(std::move(arena)), data_(data), nbytes_(nbytes), shared_block_(std::move(shared_block)) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  /// Host memory, or device memory the host must not dereference.
  void* data() { return data_; }
  const void* data() const { return data_; }
  std::size_t size() const { return nbytes_; }
  DeviceId device() const;
  MemoryKind memory_kind() const;

 private:
  std::shared_ptr<Arena> arena_;  // charged nbytes_
  void* data_;
  std::size_t nbytes_;
  std::once_flag share_once_;  // makes shared_block_ for a buffer that owned its memory (block())
  std::shared_ptr<void> shared_block_;  // set: data_ is this block, shared with other arenas' buffers
};

}  // namespace spmd::detail
