#include "backend/sim/stack_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>

namespace spmd::sim {

namespace {
std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}
}  // namespace

StackPool::StackPool(std::size_t stack_size) {
  std::size_t page = page_size();
  stack_size_ = (std::max<std::size_t>(stack_size, 16 * 1024) + page - 1) / page * page;
  slot_size_ = stack_size_ + page;
}

StackPool::~StackPool() {
  for (auto [base, bytes] : regions_) ::munmap(base, bytes);
}

std::size_t StackPool::stacks_created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return created_;
}

boost::context::stack_context StackPool::allocate() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) {
    std::size_t bytes = slot_size_ * kStacksPerRegion;
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    regions_.emplace_back(base, bytes);
    bool guard = created_ + kStacksPerRegion <= kMaxGuardedStacks;
    for (std::size_t i = kStacksPerRegion; i-- > 0;) {
      char* slot = static_cast<char*>(base) + i * slot_size_;
      // The lowest page of each slot traps a stack overflow instead of
      // silently corrupting the neighbouring stack.
      if (guard) ::mprotect(slot, page_size(), PROT_NONE);
      free_.push_back(slot);
    }
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
