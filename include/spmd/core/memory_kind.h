#pragma once
/// \file
/// MemoryKind: where an Array's storage lives.
///
/// Arrays created on the host, and every array of the simulator backend, are
/// in host memory. Arrays created inside a device function running on the
/// cuda backend live in that GPU's memory: the host cannot dereference them.
/// Element accessors (element_as_double, to_doubles, identical, printing)
/// copy such arrays to the host first; `Array::to_host()` does it explicitly.

#include <string_view>

namespace spmd {

enum class MemoryKind {
  kHost,  ///< ordinary host memory (any backend's host arrays, every sim array)
  kCuda,  ///< device memory of one GPU (cuda backend)
};

/// "host" / "cuda".
std::string_view memory_kind_name(MemoryKind kind);

}  // namespace spmd
