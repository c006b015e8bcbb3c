#pragma once
// What a device brings to a collective. The rendezvous compares these across
// members and reports any difference; the data plane reads the parameters.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rendezvous/axis_names.h"
#include "spmd/collectives/axis_set.h"
#include "spmd/collectives/collective_kind.h"
#include "spmd/core/dtype.h"
#include "spmd/core/shape.h"
#include "spmd/source_loc.h"

namespace spmd::detail {

struct OperandType {
  DType dtype = DType::kFloat32;
  Shape shape;
  friend bool operator==(const OperandType&, const OperandType&) = default;
};

struct CollectiveSignature {
  CollectiveKind kind = CollectiveKind::kBarrier;
  AxisNames axes;                         // as the caller named them, in its order
  std::vector<OperandType> operands;
  int axis = 0;          // all_gather axis, psum_scatter scatter_dimension, all_to_all split_axis
  int concat_axis = 0;   // all_to_all
  bool tiled = false;
  std::vector<std::pair<int, int>> perm;  // ppermute
  std::vector<std::vector<int>> groups;   // axis_index_groups
  SourceLoc loc;

  /// "psum over 'i'" / "all_gather over ('i', 'j')".
  std::string op_and_axes() const;
  /// "f32[4],i32[]".
  std::string operand_types() const;
  /// "axis=0 tiled=False", "perm=[(0, 1), (1, 0)]", "" when there are none.
  std::string params() const;
  /// "psum over 'i' f32[4] at f.py:12".
  std::string describe() const;

  /// Which field differs first (for the mismatch headline), or "" when equal.
  std::string first_difference(const CollectiveSignature& other) const;
  /// Same as first_difference(other).empty(), without building a string:
  /// the rendezvous asks this once per arriving device.
  bool operator==(const CollectiveSignature& other) const {
    return kind == other.kind && axes == other.axes && axis == other.axis && concat_axis == other.concat_axis &&
           tiled == other.tiled && loc == other.loc && operands == other.operands && perm == other.perm &&
           groups == other.groups;
  }
};

}  // namespace spmd::detail
