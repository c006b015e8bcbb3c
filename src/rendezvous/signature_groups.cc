#include "rendezvous/signature_groups.h"

#include <algorithm>

#include "util/id_sets.h"

namespace spmd::detail {

SignatureGroups group_signatures(const std::vector<std::pair<const CollectiveSignature*, int>>& brought) {
  SignatureGroups groups;
  for (const auto& b : brought) {  // not a structured binding: clang cannot capture one
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return *g.first == *b.first; });
    if (it == groups.end()) {
      groups.push_back({b.first, {b.second}});
    } else {
      it->second.push_back(b.second);
    }
  }
  return groups;
}

ReportTable signature_table(const SignatureGroups& groups, std::string_view one, std::string_view many) {
  ReportTable t;
  t.columns = {std::string(many), "op", "axes", "operands", "params", "where"};
  for (const auto& [sig, ids] : groups) {
    t.rows.push_back({format_ids(ids, one, many), std::string(collective_name(sig->kind)), sig->axes.text(),
                      sig->operand_types(), sig->params(), sig->loc.to_string()});
  }
  return t;
}

}  // namespace spmd::detail
