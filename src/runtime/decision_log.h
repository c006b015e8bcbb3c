#pragma once
// Run-length encoded control-flow decisions of one device, compared across
// devices to find the first cond/loop whose outcome differed.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spmd/source_loc.h"
#include "spmd/util/json.h"

namespace spmd::detail {

struct Decision {
  std::string what;  // "lax.cond", "lax.while_loop", ...
  SourceLoc loc;
  std::int64_t outcome = 0;
  friend bool operator==(const Decision& a, const Decision& b) {
    return a.outcome == b.outcome && a.loc == b.loc && a.what == b.what;
  }
};

class DecisionLog {
 public:
  static constexpr std::size_t kMaxRuns = 4096;

  /// Returns true when this decision differs from the previous one (a new run).
  bool record(std::string_view what, SourceLoc loc, std::int64_t outcome);
  std::uint64_t size() const { return total_; }
  bool truncated() const { return truncated_; }
  /// The decision at logical position `i` (0-based), if recorded.
  std::optional<Decision> at(std::uint64_t i) const;
  /// How many decisions at `loc` precede position `i` (for "test #k of this loop").
  std::uint64_t occurrences_before(std::uint64_t i, const SourceLoc& loc) const;
  /// First position where both logs have a decision and they differ, or nullopt.
  static std::optional<std::uint64_t> first_difference(const DecisionLog& a, const DecisionLog& b);

  /// The log as JSON, run-length encoded ([{"what", "loc", "outcome",
  /// "count"}, ...]), and back: what a process posts for the others, so a
  /// report across processes names the first decision that differed.
  Json to_json() const;
  static DecisionLog from_json(const Json& j);

 private:
  struct RunOfDecisions {
    Decision decision;
    std::uint64_t count;
  };
  std::vector<RunOfDecisions> runs_;
  std::uint64_t total_ = 0;
  bool truncated_ = false;
};

}  // namespace spmd::detail
