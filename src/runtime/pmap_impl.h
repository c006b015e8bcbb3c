#pragma once
// pmap: validate the split, create the devices, run them, stack the outputs.

#include <span>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap_options.h"
#include "spmd/runtime/runtime.h"

namespace spmd::detail {

struct RuntimeState;

std::vector<Array> pmap_top_level(RuntimeState& runtime, const DeviceFn& fn, std::span<const Array> args,
                                  const PmapOptions& options);
/// Validates a top-level pmap's split as pmap_top_level would (same errors)
/// and returns the size of its mapped axis, without running anything.
int plan_top_level_axis_size(RuntimeState& runtime, std::span<const Array> args, const PmapOptions& options);
/// Adds a note to `e` for each replicated argument whose axis 0 equals the
/// device count: the classic in_axes=None mix-up. Front ends that trace call
/// it for errors found while tracing the mapped function.
void add_replication_notes(Error& e, std::span<const Array> args, const PmapOptions& options, int device_count);
std::vector<Array> pmap_nested(const DeviceFn& fn, std::span<const Array> args, const PmapOptions& options);

}  // namespace spmd::detail
