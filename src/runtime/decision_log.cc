#include "runtime/decision_log.h"

#include <algorithm>

#include "spmd/report.h"

namespace spmd::detail {

bool DecisionLog::record(std::string_view what, SourceLoc loc, std::int64_t outcome) {
  if (!runs_.empty()) {
    Decision& last = runs_.back().decision;
    if (last.outcome == outcome && last.loc == loc && last.what == what) {
      ++runs_.back().count;
      ++total_;
      return false;
    }
  }
  if (runs_.size() >= kMaxRuns) {
    truncated_ = true;
    return true;
  }
  runs_.push_back({Decision{std::string(what), loc, outcome}, 1});
  ++total_;
  return true;
}

std::optional<Decision> DecisionLog::at(std::uint64_t i) const {
  for (const auto& r : runs_) {
    if (i < r.count) return r.decision;
    i -= r.count;
  }
  return std::nullopt;
}

std::uint64_t DecisionLog::occurrences_before(std::uint64_t i, const SourceLoc& loc) const {
  std::uint64_t seen = 0;
  for (const auto& r : runs_) {
    std::uint64_t take = std::min(i, r.count);
    if (r.decision.loc == loc) seen += take;
    i -= take;
    if (i == 0) break;
  }
  return seen;
}

std::optional<std::uint64_t> DecisionLog::first_difference(const DecisionLog& a, const DecisionLog& b) {
  std::size_t ia = 0, ib = 0;
  std::uint64_t left_a = a.runs_.empty() ? 0 : a.runs_[0].count;
  std::uint64_t left_b = b.runs_.empty() ? 0 : b.runs_[0].count;
  std::uint64_t pos = 0;
  while (ia < a.runs_.size() && ib < b.runs_.size()) {
    if (!(a.runs_[ia].decision == b.runs_[ib].decision)) return pos;
    std::uint64_t step = std::min(left_a, left_b);
    pos += step;
    left_a -= step;
    left_b -= step;
    if (left_a == 0 && ++ia < a.runs_.size()) left_a = a.runs_[ia].count;
    if (left_b == 0 && ++ib < b.runs_.size()) left_b = b.runs_[ib].count;
  }
  // One log ending early is not a difference: that device may simply be
  // stopped earlier in the same program.
  return std::nullopt;
}

Json DecisionLog::to_json() const {
  Json runs = Json::array();
  for (const auto& r : runs_) {
    Json j = Json::object();
    j.set("what", r.decision.what);
    j.set("loc", loc_to_json(r.decision.loc));
    j.set("outcome", r.decision.outcome);
    j.set("count", r.count);
    runs.push(std::move(j));
  }
  return runs;
}

DecisionLog DecisionLog::from_json(const Json& j) {
  DecisionLog log;
  if (!j.is_array()) return log;
  for (const Json& r : j.as_array()) {
    if (!r.is_object()) continue;
    const std::int64_t count = r.int_at("count", 0);
    if (count <= 0 || log.runs_.size() >= kMaxRuns) continue;
    log.runs_.push_back({Decision{r.string_at("what"), loc_from_json(r.find("loc")), r.int_at("outcome", 0)},
                         static_cast<std::uint64_t>(count)});
    log.total_ += static_cast<std::uint64_t>(count);
  }
  return log;
}

}  // namespace spmd::detail
