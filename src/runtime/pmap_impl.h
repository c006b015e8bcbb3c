#pragma once
// pmap: validate the split, create the devices, run them, stack the outputs.

#include <span>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/pmap/pmap_options.h"
#include "spmd/runtime/runtime.h"

namespace spmd::detail {

struct RuntimeState;

std::vector<Array> pmap_top_level(RuntimeState& runtime, const DeviceFn& fn, std::span<const Array> args,
                                  const PmapOptions& options);
std::vector<Array> pmap_nested(const DeviceFn& fn, std::span<const Array> args, const PmapOptions& options);

}  // namespace spmd::detail
