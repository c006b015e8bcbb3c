#include "spmd/collectives/collective_kind.h"

#include "spmd/collectives/axis_set.h"

namespace spmd {

std::optional<CollectiveKind> parse_collective(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(CollectiveKind::kBarrier); ++i) {
    auto kind = static_cast<CollectiveKind>(i);
    if (collective_name(kind) == name) return kind;
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
