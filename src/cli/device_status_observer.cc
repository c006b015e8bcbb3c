#include "cli/device_status_observer.h"

namespace spmd::cli {

void DeviceStatusObserver::on_run_start(const RunInfo&) {
  std::lock_guard<std::mutex> lock(mu_);
  tracks_.clear();
  ++runs_;
}

void DeviceStatusObserver::on_event(const Event& e) {
  std::lock_guard<std::mutex> lock(mu_);
  Track& t = tracks_[e.uid];
  t.status.device = e.device;
  t.status.label = e.device_label;
  switch (e.kind) {
    case EventKind::kDeviceStart: t.status.state = "running"; break;
    case EventKind::kDeviceFinish:
      t.status.state = "finished";
      t.status.detail = "returned after " + std::to_string(t.status.collectives_done) + " collective" +
                        (t.status.collectives_done == 1 ? "" : "s");
      break;
    case EventKind::kCollectiveEnter:
      t.status.detail = e.op + " #" + std::to_string(e.seq);
      t.status.loc = e.loc;
      break;
    case EventKind::kCollectiveExit: ++t.status.collectives_done; break;
    case EventKind::kError:
      t.status.state = "raised";
      t.status.detail = e.error_kind + ": " + e.text;
      t.status.loc = e.loc;
      break;
    default: break;
  }
  if (recent_ > 0) {
    if (t.recent.size() >= recent_) t.recent.pop_front();
    t.recent.push_back(e.summary());
  }
}

std::vector<DeviceStatus> DeviceStatusObserver::statuses() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<DeviceStatus> out;
  for (const auto& [uid, t] : tracks_) {
    DeviceStatus s = t.status;
    s.recent.assign(t.recent.begin(), t.recent.end());
    out.push_back(std::move(s));
  }
  return out;
}

int DeviceStatusObserver::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

}  // namespace spmd::cli
