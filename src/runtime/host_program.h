#pragma once
// The host side of a front end's program (the scenario interpreter's module
// code, outside any pmap). While a HostProgramScope is installed on a thread,
// count_steps() and set_current_location() called on that thread outside any
// device count the program's host steps against a budget, remember its line,
// and stop it when its Runtime is interrupted: a host loop that never ends
// ends with BudgetExceeded or Interrupted at its line instead of hanging.

#include <chrono>
#include <cstdint>

#include "spmd/source_loc.h"

namespace spmd {
class Runtime;
}

namespace spmd::detail {

class HostProgramScope {
 public:
  /// `max_steps` 0 and `max_seconds` 0 mean unlimited; `runtime` may be null.
  HostProgramScope(const Runtime* runtime, std::uint64_t max_steps, double max_seconds);
  ~HostProgramScope();
  HostProgramScope(const HostProgramScope&) = delete;
  HostProgramScope& operator=(const HostProgramScope&) = delete;

  /// The scope installed on this thread, or null.
  static HostProgramScope* current() noexcept;

  /// Counts `n` steps; throws BudgetExceeded or the runtime's Interrupted
  /// error, located at the last location set.
  void step(std::uint64_t n);
  void set_location(SourceLoc loc) noexcept { loc_ = loc; }
  SourceLoc location() const noexcept { return loc_; }

 private:
  const Runtime* runtime_;
  std::uint64_t max_steps_;
  double max_seconds_;
  std::uint64_t steps_ = 0;
  SourceLoc loc_;
  std::chrono::steady_clock::time_point start_;
  HostProgramScope* previous_;
};

}  // namespace spmd::detail
