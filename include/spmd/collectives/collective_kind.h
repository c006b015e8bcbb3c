#pragma once
/// \file
/// The kinds of collective operations.

#include <cstdint>
#include <optional>
#include <string_view>

namespace spmd {

enum class CollectiveKind : std::uint8_t {
  kPsum, kPmean, kPmax, kPmin, kAllGather, kPsumScatter, kAllToAll, kPpermute, kBarrier,
};

/// JAX spelling: "psum", "all_gather", ... ("barrier" for kBarrier).
constexpr std::string_view collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kPsum: return "psum";
    case CollectiveKind::kPmean: return "pmean";
    case CollectiveKind::kPmax: return "pmax";
    case CollectiveKind::kPmin: return "pmin";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kPsumScatter: return "psum_scatter";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kPpermute: return "ppermute";
    case CollectiveKind::kBarrier: return "barrier";
  }
  return "?";
}
std::optional<CollectiveKind> parse_collective(std::string_view name);

}  // namespace spmd
