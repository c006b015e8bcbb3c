#pragma once
#include <cstddef>
#include <string>

namespace spmd {

/// "512 B", "1.0 KiB", "16.0 GiB".
std::string format_bytes(std::size_t bytes);

}  // namespace spmd
