#pragma once
// Fiber stacks carved from large anonymous mappings (MAP_NORESERVE): a stack
// costs address space, and memory only for the pages its fiber touches. One
// mapping per 64 stacks keeps the process far below vm.max_map_count even for
// 100k devices; guard pages (one extra mapping each) are added while the pool
// is small enough for them.

#include <boost/context/stack_context.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace spmd::sim {

class StackPool {
 public:
  explicit StackPool(std::size_t stack_size);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sctx) noexcept;
  std::size_t stack_size() const { return stack_size_; }
  std::size_t stacks_created() const;

 private:
  /// Throws OutOfMemoryError: the stacks could not be mapped (errno `error`).
  [[noreturn]] void stacks_unavailable(int error) const;

  static constexpr std::size_t kStacksPerRegion = 64;
  static constexpr std::size_t kMaxGuardedStacks = 16384;
  // Stack tops are offset by (slot number % kColors) lines: 64 lines of 64
  // bytes cover one 4 KiB page, i.e. every L1 set (see allocate()).
  static constexpr std::size_t kColors = 64;
  static constexpr std::size_t kColorStep = 64;

  std::size_t stack_size_;  // usable bytes, page-aligned
  std::size_t slot_size_;   // stack + guard page
  mutable std::mutex mu_;
  std::vector<std::pair<void*, std::size_t>> regions_;
  std::vector<void*> free_;  // slot bases
  std::size_t created_ = 0;
};

/// The StackAllocator Boost.Fiber copies into each fiber: a share of a pool.
/// Boost frees an ended fiber (and gives its stack back) only at its
/// thread's next dispatch, which may come after the run and its backend let
/// go of the pool: the fiber keeps the pool alive until then.
class PooledStack {
 public:
  explicit PooledStack(std::shared_ptr<StackPool> pool) : pool_(std::move(pool)) {}
  boost::context::stack_context allocate() { return pool_->allocate(); }
  void deallocate(boost::context::stack_context& sctx) noexcept { pool_->deallocate(sctx); }

 private:
  std::shared_ptr<StackPool> pool_;
};

}  // namespace spmd::sim
