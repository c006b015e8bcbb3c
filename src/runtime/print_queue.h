#pragma once
// Debug prints held back until their place in the deterministic order is
// certain: sorted by (epoch, device, program order), where the epoch is how
// many collectives the device had completed when it printed. Prints wait in
// one bucket per epoch, so taking the ready ones touches only those: devices
// printing without a collective in between (every print waits in epoch 0
// until they finish) cost linear time, not a scan of the queue per print.

#include <cstdint>
#include <map>
#include <vector>

#include "spmd/debug/debug_print.h"

namespace spmd::detail {

class PrintQueue {
 public:
  /// `uid` breaks ties between a nested pmap's parent and child on one device.
  void push(DebugPrint p, int uid);
  bool empty() const { return by_epoch_.empty(); }
  /// Removes and returns, in order, the prints with epoch < `watermark`.
  std::vector<DebugPrint> take_before(std::int64_t watermark);
  std::vector<DebugPrint> take_all();

 private:
  struct Entry {
    DebugPrint print;
    int uid;
    std::uint64_t order;
  };
  std::map<std::int64_t, std::vector<Entry>> by_epoch_;
  std::uint64_t next_order_ = 0;
};

}  // namespace spmd::detail
