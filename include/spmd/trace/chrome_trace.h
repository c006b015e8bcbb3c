#pragma once
/// \file
/// `--timeline`: Chrome trace event JSON (chrome://tracing, Perfetto), one
/// track per device: the device function as a span, each collective as a span
/// from arrival to completion (the wait is visible), prints, decisions and
/// errors as instant events. Written when the run ends.

#include <mutex>
#include <string>
#include <vector>

#include "spmd/trace/observer.h"
#include "spmd/util/json.h"

namespace spmd {

class ChromeTraceWriter final : public Observer {
 public:
  explicit ChromeTraceWriter(std::string path);

  void on_run_start(const RunInfo& info) override;
  void on_event(const Event& event) override;
  void on_run_end(const RunInfo& info, const Report* failure) override;

  /// The document written so far ({"traceEvents": [...]}).
  Json document() const;
  /// Why the file could not be written ("cannot write the timeline file
  /// 'x.json': No space left on device"); empty when it was.
  std::string write_error() const;

 private:
  std::string path_;
  mutable std::mutex mu_;
  Json events_ = Json::array();
  std::vector<int> named_tracks_;
  std::string error_;
};

}  // namespace spmd
