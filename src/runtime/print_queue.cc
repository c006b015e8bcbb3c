#include "runtime/print_queue.h"

#include <algorithm>

namespace spmd::detail {

void PrintQueue::push(DebugPrint p, int uid) { entries_.push_back({std::move(p), uid, next_order_++}); }

std::vector<DebugPrint> PrintQueue::take_before(std::int64_t watermark) {
  auto mid = std::stable_partition(entries_.begin(), entries_.end(),
                                   [&](const Entry& e) { return e.print.epoch < watermark; });
  std::vector<Entry> ready(std::make_move_iterator(entries_.begin()), std::make_move_iterator(mid));
  entries_.erase(entries_.begin(), mid);
  std::sort(ready.begin(), ready.end(), [](const Entry& a, const Entry& b) {
    if (a.print.epoch != b.print.epoch) return a.print.epoch < b.print.epoch;
    if (a.print.device != b.print.device) return a.print.device < b.print.device;
    if (a.uid != b.uid) return a.uid < b.uid;
    return a.order < b.order;
  });
  std::vector<DebugPrint> out;
  out.reserve(ready.size());
  for (auto& e : ready) out.push_back(std::move(e.print));
  return out;
}

std::vector<DebugPrint> PrintQueue::take_all() { return take_before(INT64_MAX); }

}  // namespace spmd::detail
