#pragma once
/// \file
/// Options of a pmap: how arguments are split, outputs stacked, axes named.

#include <optional>
#include <string>
#include <vector>

#include "spmd/source_loc.h"

namespace spmd {

/// The axis of an argument (or output) that is mapped over devices;
/// nullopt means replicated (in_axes=None) / not stacked (out_axes=None).
using MapAxis = std::optional<int>;
inline constexpr std::nullopt_t kReplicated = std::nullopt;

/// One named axis of a device mesh.
struct MeshAxis {
  std::string name;
  int size = 0;
};

struct PmapOptions {
  /// Name collectives use to refer to this mapped axis (pmap's axis_name).
  std::string axis_name;
  /// One per argument (negative counts from the end); empty means 0 for all.
  std::vector<MapAxis> in_axes;
  /// One per output; empty means 0 for all. nullopt returns one copy and
  /// checks every device produced the same value.
  std::vector<MapAxis> out_axes;
  /// Number of devices when no argument is mapped (pmap's axis_size).
  std::optional<int> axis_size;
  /// Explicit device ids; empty means row-major order. At top level, one per
  /// index of the mapped axis (pmap's devices=). For a pmap nested in others
  /// (a mesh whose devices are not in row-major order, from shard_map), one
  /// per row-major position of the whole nest, this pmap being the innermost
  /// level: the device of position p = parent's position * n + index is devices[p].
  std::vector<int> devices;
  /// Several named axes at once (a device mesh), outermost first, instead of
  /// axis_name/axis_size. A mapped argument then has the mesh sizes as
  /// consecutive dimensions starting at its in_axis, and outputs get them
  /// inserted at their out_axis: the same layout as nested pmaps.
  std::vector<MeshAxis> mesh;

  /// Where the pmap was called, and how to name arguments in reports
  /// (e.g. "x", "params['w']"); both optional.
  SourceLoc loc;
  std::vector<std::string> arg_names;
  std::vector<std::string> out_names;
};

}  // namespace spmd
