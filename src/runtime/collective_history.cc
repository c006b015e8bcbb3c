#include "runtime/collective_history.h"

#include <algorithm>
#include <bit>

namespace spmd::detail {

CollectiveHistory::CollectiveHistory(std::size_t capacity)
    : mask_(static_cast<std::int64_t>(std::bit_ceil(std::max<std::size_t>(capacity, kStaged))) - 1) {}

void CollectiveHistory::flush() {
  if (!ring_) ring_ = std::make_unique<const CollectiveSite*[]>(static_cast<std::size_t>(capacity()));
  // total_ is a multiple of kStaged here and capacity() a power of two >= kStaged,
  // so the group lands in kStaged consecutive ring slots.
  std::copy(staged_, staged_ + kStaged, ring_.get() + ((total_ - kStaged) & mask_));
}

const CollectiveSite* CollectiveHistory::at(std::int64_t i) const {
  if (i < 0 || i >= total_ || i < total_ - capacity()) return nullptr;
  const std::int64_t staged_from = (total_ - 1) / kStaged * kStaged;
  if (i >= staged_from) return staged_[i % kStaged];
  return ring_[static_cast<std::size_t>(i & mask_)];
}

}  // namespace spmd::detail
