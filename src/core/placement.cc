#include "core/placement.h"

#include "core/arena.h"

namespace spmd::detail {

namespace {
const Placement& host_placement() {
  static const Placement p{nullptr, Arena::host(), kHost};
  return p;
}
thread_local const Placement* t_current = nullptr;
}  // namespace

// noinline: callers must re-read the thread-local after every possible fiber
// migration instead of reusing an address computed on another thread.
__attribute__((noinline)) const Placement* current_placement() noexcept {
  const Placement* p = t_current;
  return p != nullptr ? p : &host_placement();
}

__attribute__((noinline)) void set_current_placement(const Placement* p) noexcept { t_current = p; }

PlacementScope::PlacementScope(const Placement* p) : previous_(t_current) { set_current_placement(p); }
PlacementScope::~PlacementScope() { set_current_placement(previous_); }

}  // namespace spmd::detail
