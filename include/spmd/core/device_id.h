#pragma once
/// \file
/// Device identifiers.

namespace spmd {

/// Flat id of a virtual (or real) device: 0..N-1. Host memory is kHost.
using DeviceId = int;
inline constexpr DeviceId kHost = -1;

}  // namespace spmd
