#include "core/arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <new>

#include "spmd/error.h"
#include "util/format_bytes.h"

namespace spmd::detail {

namespace {
constexpr std::size_t kAlignment = 64;
// Bounds of the freed-block caches: per arena, and for the whole process. An
// arena may keep a whole shared result (all_gather of 1024 x 1 MiB: 1 GiB).
constexpr std::size_t kArenaCacheLimit = std::size_t{2} << 30;
std::size_t process_cache_limit() {
  static const std::size_t limit = [] {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    std::size_t ram = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                                            : std::size_t{8} << 30;
    return ram / 4;
  }();
  return limit;
}
std::atomic<std::size_t> g_cached_bytes{0};
}  // namespace

Arena::Arena(DeviceId device, std::size_t capacity, std::string label, MemoryKind kind)
    : device_(device), kind_(kind), capacity_(capacity), label_(std::move(label)) {}

Arena::~Arena() {
  for (auto& [size, p] : cache_) host_release(p, size);
  g_cached_bytes.fetch_sub(cached_bytes_, std::memory_order_relaxed);
}

std::size_t Arena::rounded_size(std::size_t nbytes) {
  if (nbytes >= kHugeBlock) return (nbytes + kHugeBlock - 1) / kHugeBlock * kHugeBlock;
  if (nbytes >= kLargeBlock) return (nbytes + 4095) / 4096 * 4096;
  std::size_t r = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  return r == 0 ? kAlignment : r;
}

void* Arena::host_obtain(std::size_t rounded) {
  if (rounded >= kHugeBlock) {
    void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    ::madvise(p, rounded, MADV_HUGEPAGE);
    return p;
  }
  return std::aligned_alloc(kAlignment, rounded);
}

void Arena::host_release(void* p, std::size_t rounded) {
  if (rounded >= kHugeBlock) {
    ::munmap(p, rounded);
  } else {
    std::free(p);
  }
}

void* Arena::take_cached(std::size_t rounded) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  auto it = cache_.find(rounded);
  if (it == cache_.end()) return nullptr;
  void* p = it->second;
  cache_.erase(it);
  cached_bytes_ -= rounded;
  g_cached_bytes.fetch_sub(rounded, std::memory_order_relaxed);
  return p;
}

bool Arena::keep_cached(void* p, std::size_t rounded) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (cached_bytes_ + rounded > std::min(kArenaCacheLimit, capacity_)) return false;
  if (g_cached_bytes.fetch_add(rounded, std::memory_order_relaxed) + rounded > process_cache_limit()) {
    g_cached_bytes.fetch_sub(rounded, std::memory_order_relaxed);
    return false;
  }
  cache_.emplace(rounded, p);
  cached_bytes_ += rounded;
  return true;
}

void Arena::charge(std::size_t nbytes, std::string_view what) {
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
}

void Arena::uncharge(std::size_t nbytes) noexcept { live_.fetch_sub(nbytes, std::memory_order_relaxed); }

void* Arena::obtain(std::size_t nbytes, std::string_view what) {
  void* p = obtain_raw(nbytes);
  if (p == nullptr) {
    Report r = make_report("OutOfMemoryError", exhausted_message(nbytes, what), exhausted_hint());
    r.device = device_;
    throw OutOfMemoryError(std::move(r));
  }
  return p;
}

void* Arena::allocate(std::size_t nbytes, std::string_view what) {
  charge(nbytes, what);
  try {
    return obtain(nbytes, what);
  } catch (...) {
    uncharge(nbytes);
    throw;
  }
}

void Arena::deallocate(void* p, std::size_t nbytes) noexcept {
  release_raw(p, nbytes);
  uncharge(nbytes);
}

void* Arena::obtain_raw(std::size_t nbytes) {
  std::size_t rounded = rounded_size(nbytes);
  void* p = rounded >= kLargeBlock ? take_cached(rounded) : nullptr;
  if (p == nullptr) p = host_obtain(rounded);
  return p;
}

void Arena::release_raw(void* p, std::size_t nbytes) noexcept {
  std::size_t rounded = rounded_size(nbytes);
  if (rounded < kLargeBlock || !keep_cached(p, rounded)) host_release(p, rounded);
}

std::string Arena::exhausted_message(std::size_t nbytes, std::string_view what) const {
  return label_ + ": the host is out of memory allocating " + format_bytes(nbytes) + " for " + std::string(what);
}

std::string Arena::exhausted_hint() const {
  return "the simulator keeps every device's arrays in host memory; use fewer devices or smaller arrays";
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
