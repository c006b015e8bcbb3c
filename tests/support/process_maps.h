#pragma once
// The number of memory mappings of this process (/proc/self/maps): leak tests
// check that it stops growing over thousands of runs.

#include <cstddef>
#include <fstream>
#include <string>

namespace spmd::testing {

// ThreadSanitizer maps a trace region for every thread and fiber id it hands
// out, and shadow memory for every new thread stack, so under TSan the count
// grows with the runs whatever the program frees. The leak tests check it in
// every other build (ASan's included, where LeakSanitizer also checks the heap).
#ifdef SPMD_TSAN
inline constexpr bool kMappingCountIsOurs = false;
#else
inline constexpr bool kMappingCountIsOurs = true;
#endif

inline std::size_t mapping_count() {
  std::ifstream maps("/proc/self/maps");
  std::size_t n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

}  // namespace spmd::testing
