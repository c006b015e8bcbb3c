#pragma once
// What a device brings to a collective. The rendezvous compares these across
// members and reports any difference; the data plane reads the parameters.

#include <cstdint>
#include <memory>
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

/// ppermute's (source, destination) pairs, immutable and shared: the devices
/// of a ppermute normally bring equal permutations (JAX's perm is static), and
/// their signatures then point at one copy, so n devices hold one n-pair list
/// instead of n of them and compare it by address.
class SharedPerm {
 public:
  using Pairs = std::vector<std::pair<int, int>>;
  SharedPerm() = default;
  explicit SharedPerm(Pairs pairs) : pairs_(std::make_shared<const Pairs>(std::move(pairs))) {}
  const Pairs& pairs() const { return pairs_ ? *pairs_ : empty_pairs(); }
  Pairs::const_iterator begin() const { return pairs().begin(); }
  Pairs::const_iterator end() const { return pairs().end(); }
  std::size_t size() const { return pairs().size(); }
  const std::pair<int, int>& operator[](std::size_t i) const { return pairs()[i]; }
  friend bool operator==(const SharedPerm& a, const SharedPerm& b) {
    return a.pairs_ == b.pairs_ || a.pairs() == b.pairs();
  }

 private:
  static const Pairs& empty_pairs() {
    static const Pairs none;
    return none;
  }
  std::shared_ptr<const Pairs> pairs_;
};

struct CollectiveSignature {
  CollectiveKind kind = CollectiveKind::kBarrier;
  AxisNames axes;                         // as the caller named them, in its order
  std::vector<OperandType> operands;
  int axis = 0;          // all_gather axis, psum_scatter scatter_dimension, all_to_all split_axis
  int concat_axis = 0;   // all_to_all
  bool tiled = false;
  SharedPerm perm;                        // ppermute
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
