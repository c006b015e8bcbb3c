#include "runtime/print_queue.h"

#include <algorithm>

namespace spmd::detail {

void PrintQueue::push(DebugPrint p, int uid) {
  const std::int64_t epoch = p.epoch;
  by_epoch_[epoch].push_back({std::move(p), uid, next_order_++});
}

std::vector<DebugPrint> PrintQueue::take_before(std::int64_t watermark) {
  std::vector<DebugPrint> out;
  while (!by_epoch_.empty() && by_epoch_.begin()->first < watermark) {
    std::vector<Entry>& ready = by_epoch_.begin()->second;
    std::sort(ready.begin(), ready.end(), [](const Entry& a, const Entry& b) {
      if (a.print.device != b.print.device) return a.print.device < b.print.device;
      if (a.uid != b.uid) return a.uid < b.uid;
      return a.order < b.order;
    });
    for (auto& e : ready) out.push_back(std::move(e.print));
    by_epoch_.erase(by_epoch_.begin());
  }
  return out;
}

std::vector<DebugPrint> PrintQueue::take_all() { return take_before(INT64_MAX); }

}  // namespace spmd::detail
