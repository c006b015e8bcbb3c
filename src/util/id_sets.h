#pragma once
// Sets of device or rank numbers in words, as every report writes them.

#include <string>
#include <string_view>
#include <vector>

namespace spmd::detail {

/// "device 2", "devices {0, 1, 3}", "devices {0..7}".
std::string format_devices(std::vector<int> ids);
/// The same with other nouns: format_ids({0, 1}, "rank", "ranks") is "ranks {0, 1}".
std::string format_ids(std::vector<int> ids, std::string_view one, std::string_view many);

}  // namespace spmd::detail
