#pragma once
// The number of memory mappings of this process (/proc/self/maps): leak tests
// check that it stops growing over thousands of runs.

#include <cstddef>
#include <fstream>
#include <string>

namespace spmd::testing {

inline std::size_t mapping_count() {
  std::ifstream maps("/proc/self/maps");
  std::size_t n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

}  // namespace spmd::testing
