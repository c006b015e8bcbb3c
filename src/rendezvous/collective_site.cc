#include "rendezvous/collective_site.h"

namespace spmd::detail {

std::string CollectiveSite::describe() const {
  std::string s = std::string(collective_name(kind)) + " over " + axes.text();
  if (!types.empty()) s += " " + types;
  if (loc.valid()) s += " at " + loc.to_string();
  return s;
}

const CollectiveSite& SiteTable::intern(const CollectiveSignature& sig) {
  std::lock_guard<std::mutex> lock(mu_);
  // Newest first: a program's sites are few, and a new one is usually near.
  for (auto it = sites_.rbegin(); it != sites_.rend(); ++it) {
    if (it->matches(sig)) return *it;
  }
  CollectiveSite& site = sites_.emplace_back();
  site.kind = sig.kind;
  site.axes = sig.axes;
  site.operands = sig.operands;
  site.types = sig.operand_types();
  site.loc = sig.loc;
  return site;
}

}  // namespace spmd::detail
