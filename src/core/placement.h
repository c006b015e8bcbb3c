#pragma once
// Which device the calling fiber runs as. The sim scheduler switches this on
// every fiber switch; the CUDA backend sets it once per host thread.
// Read it through current_placement() every time: a fiber may migrate between
// threads across a suspension, so a cached pointer to the thread-local is wrong.

#include <memory>

#include "spmd/core/device_id.h"

namespace spmd::detail {

class Arena;
class DeviceContext;

struct Placement {
  DeviceContext* context = nullptr;  ///< null on the host
  std::shared_ptr<Arena> arena;
  DeviceId device = kHost;
};

/// Never null: the host placement when no device runs on this thread.
const Placement* current_placement() noexcept;
/// `p` must outlive its installation; nullptr restores the host placement.
void set_current_placement(const Placement* p) noexcept;

/// Installs `p` for the current scope and restores the previous placement on exit.
class PlacementScope {
 public:
  explicit PlacementScope(const Placement* p);
  ~PlacementScope();
  PlacementScope(const PlacementScope&) = delete;
  PlacementScope& operator=(const PlacementScope&) = delete;

 private:
  const Placement* previous_;
};

}  // namespace spmd::detail
