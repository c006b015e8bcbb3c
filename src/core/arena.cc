#include "core/arena.h"

#include <cstdlib>
#include <new>

#include "spmd/error.h"
#include "util/format_bytes.h"

namespace spmd::detail {

namespace {
constexpr std::size_t kAlignment = 64;
}

Arena::Arena(DeviceId device, std::size_t capacity, std::string label)
    : device_(device), capacity_(capacity), label_(std::move(label)) {}

void* Arena::allocate(std::size_t nbytes, std::string_view what) {
  std::size_t live = live_.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  if (capacity_ != kUnlimited && live > capacity_) {
    live_.fetch_sub(nbytes, std::memory_order_relaxed);
    Report r = make_report(
        "OutOfMemoryError",
        label_ + ": out of memory allocating " + format_bytes(nbytes) + " for " + std::string(what),
        "the arena holds " + format_bytes(live - nbytes) + " of " + format_bytes(capacity_) +
            "; shard the data over more devices, free intermediates, or raise the capacity "
            "(--arena-capacity / RuntimeOptions::arena_capacity)");
    r.device = device_;
    r.op = std::string(what);
    throw OutOfMemoryError(std::move(r));
  }
  std::size_t peak = peak_.load(std::memory_order_relaxed);
  while (live > peak && !peak_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  allocations_.fetch_add(1, std::memory_order_relaxed);
  std::size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (p == nullptr) {
    live_.fetch_sub(nbytes, std::memory_order_relaxed);
    Report r = make_report("OutOfMemoryError",
                           label_ + ": the host is out of memory allocating " + format_bytes(nbytes) +
                               " for " + std::string(what),
                           "the simulator keeps every device's arrays in host memory; use fewer "
                           "devices or smaller arrays");
    r.device = device_;
    throw OutOfMemoryError(std::move(r));
  }
  return p;
}

void Arena::deallocate(void* p, std::size_t nbytes) noexcept {
  std::free(p);
  live_.fetch_sub(nbytes, std::memory_order_relaxed);
}

ArenaStats Arena::stats() const {
  return {capacity_, live_.load(std::memory_order_relaxed), peak_.load(std::memory_order_relaxed),
          allocations_.load(std::memory_order_relaxed)};
}

const std::shared_ptr<Arena>& Arena::host() {
  static const std::shared_ptr<Arena> arena = std::make_shared<Arena>(kHost, kUnlimited, "host");
  return arena;
}

}  // namespace spmd::detail
