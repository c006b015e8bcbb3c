#include "backend/sim/stack_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "backend/sim/stack_guard.h"
#include "spmd/error.h"
#include "util/format_bytes.h"

namespace spmd::sim {

namespace {
std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}
}  // namespace

void StackPool::stacks_unavailable(int error) const {
  Report r = make_report(
      "OutOfMemoryError",
      "cannot reserve fiber stacks of " + format_bytes(stack_size_) + " for " + std::to_string(kStacksPerRegion) +
          " more devices (" + std::to_string(created_) + " reserved so far): " + std::strerror(error),
      "the address space (ulimit -v) or memory is too small for this many devices at this stack size; lower "
      "--stack-size (default 1MiB) or --devices");
  r.op = "fiber stack";
  throw OutOfMemoryError(std::move(r));
}

StackPool::StackPool(std::size_t stack_size) {
  std::size_t page = page_size();
  // Clamped far beyond any address space so the rounding cannot wrap; such a
  // size fails at its first mmap with a clear error.
  stack_size = std::clamp<std::size_t>(stack_size, 16 * 1024, std::size_t{1} << 56);
  stack_size_ = (stack_size + page - 1) / page * page;
  slot_size_ = stack_size_ + page;
}

StackPool::~StackPool() {
  for (auto [base, bytes] : regions_) {
    stack_guard::unregister_region(base);
    ::munmap(base, bytes);
  }
}

std::size_t StackPool::stacks_created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return created_;
}

boost::context::stack_context StackPool::allocate() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) {
    std::size_t bytes = 0;
    void* base = MAP_FAILED;
    int error = EOVERFLOW;
    if (!__builtin_mul_overflow(slot_size_, kStacksPerRegion, &bytes)) {
      base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      error = errno;
    }
    if (base == MAP_FAILED) stacks_unavailable(error);
    regions_.emplace_back(base, bytes);
    bool guard = created_ + kStacksPerRegion <= kMaxGuardedStacks;
    for (std::size_t i = kStacksPerRegion; i-- > 0;) {
      char* slot = static_cast<char*>(base) + i * slot_size_;
      // The lowest page of each slot traps a stack overflow instead of
      // silently corrupting the neighbouring stack.
      if (guard) ::mprotect(slot, page_size(), PROT_NONE);
      free_.push_back(slot);
    }
    // An overflow into a guard page is then a report, not a bare SIGSEGV.
    if (guard) stack_guard::register_region(base, slot_size_, kStacksPerRegion, stack_size_);
    created_ += kStacksPerRegion;
  }
  char* slot = static_cast<char*>(free_.back());
  free_.pop_back();
  // Stacks grow down from just below the top of the slot. Slots are a whole
  // number of pages apart, so without an offset every fiber's hottest lines
  // (Boost's fiber context at the top, the frames a switch saves) would share
  // the same few cache sets and evict each other; a thousand parked fibers
  // then miss on every resume. The offset, a different line within a page per
  // slot, spreads them over all sets.
  const std::size_t color = ((reinterpret_cast<std::uintptr_t>(slot) / slot_size_) % kColors) * kColorStep;
  boost::context::stack_context sctx;
  sctx.size = stack_size_ - color;
  sctx.sp = slot + slot_size_ - color;
  return sctx;
}

void StackPool::deallocate(boost::context::stack_context& sctx) noexcept {
  // The top of the slot is the first page boundary at or above sp.
  const std::uintptr_t page = page_size();
  const std::uintptr_t top = (reinterpret_cast<std::uintptr_t>(sctx.sp) + page - 1) / page * page;
  char* slot = reinterpret_cast<char*>(top) - slot_size_;
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(slot);
}

}  // namespace spmd::sim
