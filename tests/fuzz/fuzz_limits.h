#pragma once
// Bounds shared by the fuzz targets: small enough that every input ends
// within libFuzzer's -timeout and -rss_limit_mb, large enough for the seed
// scenarios to run to their verdicts.

#include <cstddef>
#include <cstdint>

#include "spmd/runtime/runtime.h"

namespace spmd::fuzz {

inline constexpr std::size_t kMaxInputBytes = 16 * 1024;
inline constexpr std::uint64_t kMaxHostSteps = 20000;

inline RuntimeOptions runtime_options() {
  RuntimeOptions o;
  o.devices = 4;
  o.threads = 1;
  o.arena_capacity = std::size_t{1} << 20;
  o.fiber_stack_size = std::size_t{1} << 20;
  o.step_budget = 20000;
  o.time_budget_s = 2;
  return o;
}

}  // namespace spmd::fuzz
