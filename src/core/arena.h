#pragma once
// A device's memory arena: an allocation domain with a capacity, live and peak
// byte counts. Buffers hold a shared_ptr to their arena so that arrays which
// outlive a run (leaked through a side effect) still release correctly.
//
// The accounting (capacity, live/peak bytes, OutOfMemoryError reports) is the
// same for every memory kind; where the bytes come from is the strategy of a
// subclass: this class hands out host memory (with a cache of freed large
// blocks), the cuda backend's arena overrides obtain_raw/release_raw with a
// GPU memory pool.

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "spmd/core/device_id.h"
#include "spmd/core/memory_kind.h"

namespace spmd::detail {

struct ArenaStats {
  std::size_t capacity = 0;
  std::size_t live_bytes = 0;
  std::size_t peak_bytes = 0;
  std::size_t allocations = 0;  ///< allocations made over the arena's life
};

class Arena {
 public:
  static constexpr std::size_t kUnlimited = ~std::size_t{0};

  Arena(DeviceId device, std::size_t capacity, std::string label, MemoryKind kind = MemoryKind::kHost);
  virtual ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// 64-byte aligned. Throws OutOfMemoryError naming the device, `what`, the
  /// request, the live bytes and the capacity. Safe from any thread.
  /// The same as charge() then obtain().
  void* allocate(std::size_t nbytes, std::string_view what);
  void deallocate(void* p, std::size_t nbytes) noexcept;

  /// The two halves of allocate(), for storage that several arenas share
  /// (Buffer::allocate_shared): charge() counts `nbytes` as live in this
  /// arena, or throws the OutOfMemoryError allocate() would; obtain() gets
  /// raw memory without counting it anywhere (OutOfMemoryError only when the
  /// memory itself is exhausted). Undo each with uncharge() / release().
  void charge(std::size_t nbytes, std::string_view what);
  void uncharge(std::size_t nbytes) noexcept;
  void* obtain(std::size_t nbytes, std::string_view what);
  void release(void* p, std::size_t nbytes) noexcept { release_raw(p, nbytes); }

  DeviceId device() const { return device_; }
  /// Where the arena's blocks live: host memory, or one GPU's memory (which
  /// the host must not dereference).
  MemoryKind memory_kind() const { return kind_; }
  const std::string& label() const { return label_; }
  ArenaStats stats() const;

  /// The arena for arrays created outside any device (unlimited).
  static const std::shared_ptr<Arena>& host();

 protected:
  /// Raw storage for `nbytes` (0 allowed), aligned to 64 bytes at least;
  /// nullptr when the underlying memory is exhausted (the caller reports it).
  /// May throw BackendError for other failures. Safe from any thread.
  virtual void* obtain_raw(std::size_t nbytes);
  /// Gives back a block from obtain_raw(nbytes). Safe from any thread.
  virtual void release_raw(void* p, std::size_t nbytes) noexcept;
  /// Names the exhausted memory and what to do, for the OutOfMemoryError
  /// raised when obtain_raw returns nullptr.
  virtual std::string exhausted_message(std::size_t nbytes, std::string_view what) const;
  virtual std::string exhausted_hint() const;

 private:
  // Large blocks are expensive to obtain fresh: every page faults on first
  // touch (12-30 us per 4 KiB page on a VM). Freed large blocks are kept for
  // reuse by size (a collective's output is usually the size of the last
  // one's), bounded per arena and process-wide; blocks of 2 MiB and more come
  // from mmap with transparent huge pages requested.
  static constexpr std::size_t kLargeBlock = std::size_t{64} << 10;
  static constexpr std::size_t kHugeBlock = std::size_t{2} << 20;
  void* take_cached(std::size_t rounded);
  bool keep_cached(void* p, std::size_t rounded);
  static std::size_t rounded_size(std::size_t nbytes);
  static void* host_obtain(std::size_t rounded);
  static void host_release(void* p, std::size_t rounded);

  DeviceId device_;
  MemoryKind kind_;
  std::size_t capacity_;
  std::string label_;
  std::atomic<std::size_t> live_{0};
  std::atomic<std::size_t> peak_{0};
  std::atomic<std::size_t> allocations_{0};
  std::mutex cache_mu_;
  std::multimap<std::size_t, void*> cache_;  // rounded size -> block
  std::size_t cached_bytes_ = 0;
};

}  // namespace spmd::detail
