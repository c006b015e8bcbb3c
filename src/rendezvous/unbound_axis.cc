#include "rendezvous/unbound_axis.h"

#include <algorithm>
#include <cstdint>

#include "util/edit_distance.h"

namespace spmd::detail {

Report unbound_axis_report(std::string_view op, const std::string& name, const std::vector<std::string>* bound,
                           SourceLoc loc) {
  Report r;
  r.kind = "AxisNameError";
  r.op = std::string(op);
  r.axis = "'" + name + "'";
  r.where = loc;
  if (bound == nullptr) {
    r.message = std::string(op) + ": unbound axis name: '" + name + "' (called outside any pmap-ed function)";
    r.hint = "collectives only work inside a function mapped with pmap(..., axis_name='" + name +
             "'); on the host no axis is bound";
    return r;
  }
  std::string listed;
  const std::string* closest = nullptr;
  std::size_t best = SIZE_MAX;
  for (const std::string& b : *bound) {
    listed += (listed.empty() ? "'" : ", '") + b + "'";
    std::size_t d = edit_distance(name, b);
    if (d < best) {
      best = d;
      closest = &b;
    }
  }
  r.message = std::string(op) + ": unbound axis name: '" + name + "'. The bound axis names are: " +
              (listed.empty() ? "(none: pmap was called without axis_name)" : listed);
  if (listed.empty()) {
    r.hint = "give the pmap an axis name: pmap(f, axis_name='" + name + "')";
  } else if (closest && best <= std::max<std::size_t>(2, name.size() / 3)) {
    r.hint = "did you mean '" + *closest + "'? A collective names a bound axis exactly: the axis_name of a pmap or " +
             "vmap (pmap(..., axis_name='" + *closest + "')), or a mesh axis of a shard_map";
  } else {
    r.hint = "use one of the bound axis names (the axis_name of a pmap or vmap, or a mesh axis of a shard_map): " +
             listed;
  }
  return r;
}

}  // namespace spmd::detail
