#pragma once
// The collectives one device entered, as interned sites, oldest first. The
// last capacity() of them are retained for reports (the first point where
// devices' sequences diverge, a device's recent events).
//
// Recording is on every collective's path, and with a thousand devices every
// per-device cache line a rendezvous writes is a miss each time round (the
// other devices' lines evict it in between). So the newest entries are staged
// in kStaged slots inside this object, which DeviceContext keeps in one of its
// hot lines, and copied to the heap ring a group at a time: one ring line is
// written per kStaged collectives instead of one per collective.

#include <cstdint>
#include <memory>

namespace spmd::detail {

struct CollectiveSite;

class CollectiveHistory {
 public:
  static constexpr std::int64_t kStaged = 4;

  /// Retains the last `capacity` entries (rounded up to a power of two, at
  /// least kStaged). The ring is allocated when first needed, after kStaged
  /// entries: a device that enters a few collectives costs no allocation.
  explicit CollectiveHistory(std::size_t capacity);

  void record(const CollectiveSite* site) {
    const std::int64_t slot = total_ % kStaged;
    if (slot == 0 && total_ > 0) flush();
    staged_[slot] = site;
    ++total_;
  }

  /// Entries recorded so far.
  std::int64_t size() const { return total_; }
  std::int64_t capacity() const { return mask_ + 1; }
  /// Entry `i` (0-based over all recorded), or nullptr when it is no longer
  /// retained (i < size() - capacity()) or not recorded yet.
  const CollectiveSite* at(std::int64_t i) const;
  /// The newest entry, nullptr before the first.
  const CollectiveSite* last() const { return total_ == 0 ? nullptr : staged_[(total_ - 1) % kStaged]; }

 private:
  // Moves the full group in staged_ (entries size()-kStaged .. size()-1) to the ring.
  void flush();

  const CollectiveSite* staged_[kStaged] = {};
  std::unique_ptr<const CollectiveSite*[]> ring_;
  std::int64_t mask_;
  std::int64_t total_ = 0;
};

}  // namespace spmd::detail
