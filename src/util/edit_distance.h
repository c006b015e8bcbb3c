#pragma once
// Levenshtein distance, for "did you mean ...?" hints.

#include <cstddef>
#include <string_view>

namespace spmd {

std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace spmd
