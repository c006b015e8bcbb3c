#pragma once
// One collective call site (op, axes, operand types, line), interned per run:
// every device that calls the same collective at the same line with the same
// operand types shares one CollectiveSite. Histories and recent-event rings
// point at it, so entering a collective copies no strings, and a thousand
// devices checking "same site as last time" all read the same cache lines.

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "rendezvous/collective_signature.h"

namespace spmd::detail {

struct CollectiveSite {
  CollectiveKind kind = CollectiveKind::kBarrier;
  AxisNames axes;
  std::vector<OperandType> operands;
  std::string types;  // "f32[4],i32[]", rendered once
  SourceLoc loc;

  /// Whether `sig` was made at this site (parameters such as perm are not part of a site).
  bool matches(const CollectiveSignature& sig) const {
    return kind == sig.kind && axes == sig.axes && loc == sig.loc && operands == sig.operands;
  }
  /// Same collective as another site (compares contents, not addresses).
  friend bool operator==(const CollectiveSite& a, const CollectiveSite& b) {
    return a.kind == b.kind && a.axes == b.axes && a.operands == b.operands && a.loc == b.loc;
  }
  /// "psum over 'i' f32[4] at f.py:12".
  std::string describe() const;
};

/// The sites of one run. Thread-safe; devices keep the sites they use (see
/// DeviceContext::intern_site) and come here only for a site new to them.
class SiteTable {
 public:
  const CollectiveSite& intern(const CollectiveSignature& sig);

 private:
  std::mutex mu_;
  std::deque<CollectiveSite> sites_;  // deque: stable addresses
};

}  // namespace spmd::detail
