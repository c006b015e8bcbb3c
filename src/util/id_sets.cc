#include "util/id_sets.h"

#include <algorithm>

namespace spmd::detail {

std::string format_devices(std::vector<int> ids) { return format_ids(std::move(ids), "device", "devices"); }

std::string format_ids(std::vector<int> ids, std::string_view one, std::string_view many) {
  std::sort(ids.begin(), ids.end());
  if (ids.size() == 1) return std::string(one) + " " + std::to_string(ids[0]);
  std::string s = std::string(many) + " {";
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (i) s += ", ";
    if (j >= i + 2) {
      s += std::to_string(ids[i]) + ".." + std::to_string(ids[j]);
    } else {
      s += std::to_string(ids[i]);
      if (j == i + 1) s += ", " + std::to_string(ids[j]);
    }
    i = j + 1;
  }
  return s + "}";
}

}  // namespace spmd::detail
