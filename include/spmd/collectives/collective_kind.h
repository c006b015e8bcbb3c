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
std::string_view collective_name(CollectiveKind kind);
std::optional<CollectiveKind> parse_collective(std::string_view name);

}  // namespace spmd
