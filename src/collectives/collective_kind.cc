#include "spmd/collectives/collective_kind.h"

#include <array>

#include "spmd/collectives/axis_set.h"

namespace spmd {

namespace {
constexpr std::array<std::string_view, 9> kCollectiveNames = {"psum",        "pmean",      "pmax",     "pmin",   "all_gather",
                                                    "psum_scatter", "all_to_all", "ppermute", "barrier"};
}

std::string_view collective_name(CollectiveKind kind) { return kCollectiveNames[static_cast<int>(kind)]; }

std::optional<CollectiveKind> parse_collective(std::string_view name) {
  for (std::size_t i = 0; i < kCollectiveNames.size(); ++i) {
    if (kCollectiveNames[i] == name) return static_cast<CollectiveKind>(i);
  }
  return std::nullopt;
}

std::string AxisSet::to_string() const {
  if (names.size() == 1) return "'" + names[0] + "'";
  std::string s = "(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) s += ", ";
    s += "'" + names[i] + "'";
  }
  if (names.size() == 1) s += ",";
  return s + ")";
}

}  // namespace spmd
