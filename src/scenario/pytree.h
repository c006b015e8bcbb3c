#pragma once
// Pytrees (JAX's nested tuples, lists, dicts and None): flatten, unflatten,
// leaf paths for messages, and tree-prefix broadcasting for in_axes/out_axes.

#include <string>
#include <vector>

#include "scenario/interpreter.h"
#include "scenario/value.h"

namespace spmd::scenario {

struct TreeDef {
  enum class Type : std::uint8_t { kLeaf, kNone, kTuple, kList, kDict };
  Type type = Type::kLeaf;
  std::vector<TreeDef> children;
  std::vector<Value> keys;  ///< dict keys, sorted as JAX sorts them
  std::size_t num_leaves = 1;

  /// JAX's spelling: "PyTreeDef((*, {'a': *, 'b': None}))".
  std::string to_string(Interpreter& interp, ExecState& st) const;
  bool same_structure(const TreeDef& other) const;
};

/// Appends the leaves of `v` (depth-first, dict keys sorted) to `leaves`.
TreeDef tree_flatten(Interpreter& interp, ExecState& st, const Value& v, std::vector<Value>& leaves);
/// Rebuilds a tree from leaves in flatten order.
Value tree_unflatten(ExecState& st, const TreeDef& t, const std::vector<Value>& leaves);
/// Readable paths of the leaves: `base`, `base[0]`, `base['w']`, ...
void leaf_paths(Interpreter& interp, ExecState& st, const TreeDef& t, const std::string& base,
                std::vector<std::string>& out);
/// One value per leaf of `full`: `prefix` applies to whole subtrees where it
/// is a leaf (None included). Returns false when it is not a tree prefix.
bool broadcast_prefix(Interpreter& interp, ExecState& st, const Value& prefix, const TreeDef& full,
                      std::vector<Value>& out);

}  // namespace spmd::scenario
