#pragma once
/// \file
/// The axes a collective works over: one name ('i') or a tuple (('data', 'model')).

#include <initializer_list>
#include <string>
#include <vector>

namespace spmd {

struct AxisSet {
  std::vector<std::string> names;

  AxisSet() = default;
  AxisSet(const char* name) : names{name} {}
  AxisSet(std::string name) : names{std::move(name)} {}
  AxisSet(std::initializer_list<std::string> ns) : names(ns) {}
  AxisSet(std::vector<std::string> ns) : names(std::move(ns)) {}

  /// "'i'" or "('data', 'model')", as Python would print it.
  std::string to_string() const;
};

/// axis_index_groups: a partition of the axis indices into equal-size groups;
/// the collective runs within each group. Empty means one group of all.
using AxisIndexGroups = std::vector<std::vector<int>>;

}  // namespace spmd
