#include "rendezvous/collective_signature.h"

namespace spmd::detail {

std::string CollectiveSignature::op_and_axes() const {
  return std::string(collective_name(kind)) + " over " + axes.text();
}

std::string CollectiveSignature::operand_types() const {
  std::string s;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i) s += ",";
    s += abstract_type(operands[i].dtype, operands[i].shape);
  }
  return s;
}

std::string CollectiveSignature::params() const {
  std::string s;
  auto add = [&](const std::string& p) {
    if (!s.empty()) s += " ";
    s += p;
  };
  auto py_bool = [](bool b) { return b ? "True" : "False"; };
  switch (kind) {
    case CollectiveKind::kAllGather:
      add("axis=" + std::to_string(axis));
      add(std::string("tiled=") + py_bool(tiled));
      break;
    case CollectiveKind::kPsumScatter:
      add("scatter_dimension=" + std::to_string(axis));
      add(std::string("tiled=") + py_bool(tiled));
      break;
    case CollectiveKind::kAllToAll:
      add("split_axis=" + std::to_string(axis));
      add("concat_axis=" + std::to_string(concat_axis));
      add(std::string("tiled=") + py_bool(tiled));
      break;
    case CollectiveKind::kPpermute: {
      std::string p = "perm=[";
      for (std::size_t i = 0; i < perm.size(); ++i) {
        if (i) p += ", ";
        p += "(" + std::to_string(perm[i].first) + ", " + std::to_string(perm[i].second) + ")";
      }
      add(p + "]");
      break;
    }
    default:
      break;
  }
  if (!groups.empty()) {
    std::string g = "axis_index_groups=[";
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (i) g += ", ";
      g += "[";
      for (std::size_t j = 0; j < groups[i].size(); ++j) {
        if (j) g += ", ";
        g += std::to_string(groups[i][j]);
      }
      g += "]";
    }
    add(g + "]");
  }
  return s;
}

std::string CollectiveSignature::describe() const {
  std::string s = op_and_axes();
  if (!operands.empty()) s += " " + operand_types();
  std::string p = params();
  if (!p.empty()) s += " " + p;
  if (loc.valid()) s += " at " + loc.to_string();
  return s;
}

std::string CollectiveSignature::first_difference(const CollectiveSignature& o) const {
  if (kind != o.kind) return "op";
  if (axes != o.axes) return "axis";
  if (operands.size() != o.operands.size()) return "operand count";
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].dtype != o.operands[i].dtype) return "dtype";
  }
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].shape != o.operands[i].shape) return "shape";
  }
  if (axis != o.axis || concat_axis != o.concat_axis || tiled != o.tiled || perm != o.perm || groups != o.groups) {
    return "parameters";
  }
  if (!(loc == o.loc)) return "call site";
  return {};
}

}  // namespace spmd::detail
