#pragma once
// An axis-name tuple interned for the whole process: equal tuples share one
// address. Signatures and call sites carry one, so building a signature per
// collective call copies a pointer instead of a vector of strings, comparing
// what two devices brought compares pointers, and every device's reports
// render the same "('i', 'j')" string.

#include <string>
#include <utility>
#include <vector>

namespace spmd::detail {

class AxisNames {
 public:
  /// The empty tuple.
  AxisNames() : entry_(&kEmpty) {}
  /// The interned copy of `names` (thread-safe; takes a lock: call it once per
  /// device and call site, not per collective).
  static AxisNames intern(const std::vector<std::string>& names);

  const std::vector<std::string>& names() const { return entry_->first; }
  /// "'i'" or "('i', 'j')", as Python prints the axis_name argument.
  const std::string& text() const { return entry_->second; }
  bool empty() const { return entry_->first.empty(); }

  friend bool operator==(AxisNames a, AxisNames b) { return a.entry_ == b.entry_; }

 private:
  using Entry = std::pair<const std::vector<std::string>, std::string>;
  static const Entry kEmpty;
  explicit AxisNames(const Entry* entry) : entry_(entry) {}
  const Entry* entry_;
};

}  // namespace spmd::detail
