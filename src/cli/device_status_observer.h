#pragma once
// Tracks where each device of the latest pmap run stands, from its events:
// what `spmd run --format json` reports for runs that end without error.

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "spmd/report.h"
#include "spmd/trace/observer.h"

namespace spmd::cli {

class DeviceStatusObserver final : public Observer {
 public:
  explicit DeviceStatusObserver(std::size_t recent) : recent_(recent) {}
  void on_run_start(const RunInfo& info) override;
  void on_event(const Event& e) override;
  std::vector<DeviceStatus> statuses() const;
  int runs() const;

 private:
  struct Track {
    DeviceStatus status;
    std::deque<std::string> recent;
  };
  std::size_t recent_;
  mutable std::mutex mu_;
  std::map<int, Track> tracks_;  // by uid
  int runs_ = 0;
};

}  // namespace spmd::cli
