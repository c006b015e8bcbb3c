#pragma once
/// \file
/// pmap with JAX semantics.
///
/// For n devices, each argument with in_axes[k] = d must have size n along d;
/// device i receives the slice i of that axis (the axis removed). Arguments
/// with in_axes[k] = kReplicated go whole to every device, charged to its
/// arena as a copy (in host memory, the devices read the argument's own block).
/// Each device runs `fn` on its own fiber; outputs are stacked along
/// out_axes (a new axis of size n), or returned once for kReplicated.
///
/// Errors raised before any device runs (InputSplitError) name the argument,
/// its shape, the axis and the device count. Errors inside a device stop the
/// run and are rethrown on the caller with that device's report.
///
/// Called inside a device, pmap nests: the new axis is bound in addition to the
/// enclosing ones and needs (outer devices x inner devices) virtual devices.

#include <span>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/pmap/pmap_options.h"
#include "spmd/runtime/runtime.h"

namespace spmd {

/// Nested pmap inside a device, or a pmap on the process's default Runtime
/// (RuntimeOptions{} unless set with set_default_runtime) when called on the host.
std::vector<Array> pmap(const DeviceFn& fn, std::span<const Array> args, const PmapOptions& options);

/// Makes `rt` the Runtime used by pmap() on the host (nullptr restores the
/// built-in default). The caller keeps ownership.
void set_default_runtime(Runtime* rt);

}  // namespace spmd
