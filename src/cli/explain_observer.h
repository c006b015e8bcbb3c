#pragma once
// spmd run --explain: for every top-level pmap run, how its arguments reached
// the devices (global shape, in_axis, per-device shape, split or
// replicated), how its outputs came back (per-device shape, out_axis,
// stacked shape) and which collectives the devices ran, in tables on
// stderr, and the same facts in the JSON report (the guide's habit "check
// the shapes carefully", automated).

#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "spmd/trace/observer.h"
#include "spmd/util/json.h"

namespace spmd::cli {

class ExplainObserver final : public Observer {
 public:
  /// Tables go to `out` as each run ends (nullptr: JSON only).
  explicit ExplainObserver(std::ostream* out) : out_(out) {}
  void on_run_start(const RunInfo& info) override;
  void on_event(const Event& e) override;
  void on_run_end(const RunInfo& info, const Report* failure) override;
  /// One object per run: "pmap", "devices", "arguments", "outputs", "collectives".
  Json runs() const;

 private:
  struct Collective {
    std::string what;          // "psum over 'i' f32[3] at f.py:7:12"
    std::map<int, int> count;  // device -> times entered
  };
  std::ostream* out_;
  mutable std::mutex mu_;
  std::vector<Collective> collectives_;  // this run's, in first-entered order
  std::map<std::string, std::size_t> index_;
  Json runs_ = Json::array();
};

}  // namespace spmd::cli
