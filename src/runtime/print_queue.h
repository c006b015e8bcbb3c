#pragma once
// Debug prints held back until their place in the deterministic order is
// certain: sorted by (epoch, device, program order), where the epoch is how
// many collectives the device had completed when it printed.

#include <cstdint>
#include <vector>

#include "spmd/debug/debug_print.h"

namespace spmd::detail {

class PrintQueue {
 public:
  /// `uid` breaks ties between a nested pmap's parent and child on one device.
  void push(DebugPrint p, int uid);
  bool empty() const { return entries_.empty(); }
  /// Removes and returns, in order, the prints with epoch < `watermark`.
  std::vector<DebugPrint> take_before(std::int64_t watermark);
  std::vector<DebugPrint> take_all();

 private:
  struct Entry {
    DebugPrint print;
    int uid;
    std::uint64_t order;
  };
  std::vector<Entry> entries_;
  std::uint64_t next_order_ = 0;
};

}  // namespace spmd::detail
