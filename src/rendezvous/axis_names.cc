#include "rendezvous/axis_names.h"

#include <map>
#include <mutex>

#include "spmd/collectives/axis_set.h"

namespace spmd::detail {

const AxisNames::Entry AxisNames::kEmpty{{}, AxisSet(std::vector<std::string>{}).to_string()};

AxisNames AxisNames::intern(const std::vector<std::string>& names) {
  if (names.empty()) return AxisNames();
  // Leaked on purpose: interned tuples must outlive every signature, including
  // those in reports that escape a Runtime. A process names few distinct tuples.
  static auto* table = new std::map<std::vector<std::string>, std::string>();
  static auto* mu = new std::mutex();
  std::lock_guard<std::mutex> lock(*mu);
  auto it = table->find(names);
  if (it == table->end()) it = table->emplace(names, AxisSet(names).to_string()).first;
  return AxisNames(&*it);
}

}  // namespace spmd::detail
