#pragma once
/// \file
/// Internal: the storage behind an Array. Installed because Array holds one,
/// but not part of the API.

#include <cstddef>
#include <memory>
#include <string_view>

#include "spmd/core/device_id.h"
#include "spmd/core/memory_kind.h"

namespace spmd::detail {

class Arena;

/// A block of memory charged to one arena (one device, or the host).
/// Immutable once filled: Arrays share buffers freely within one device.
class Buffer {
 public:
  /// Allocates on the calling fiber's device (the host outside any device).
  /// `what` names the allocation for out-of-memory reports ("psum output").
  /// Throws OutOfMemoryError when the device arena is over capacity.
  static std::shared_ptr<Buffer> allocate(std::size_t nbytes, std::string_view what);
  /// Allocates on a given arena (used by the runtime to place per-device copies).
  static std::shared_ptr<Buffer> allocate_on(const std::shared_ptr<Arena>& arena, std::size_t nbytes,
                                             std::string_view what);

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
  Buffer(std::shared_ptr<Arena> arena, void* data, std::size_t nbytes)
      : arena_(std::move(arena)), data_(data), nbytes_(nbytes) {}
  std::shared_ptr<Arena> arena_;
  void* data_;
  std::size_t nbytes_;
};

}  // namespace spmd::detail
