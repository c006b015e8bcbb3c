#pragma once
// A communicator is the meeting place of one group of devices for collectives
// over one set of axes (e.g. all devices with the same 'j' index for a psum
// over 'i'). Every collective blocks until all members arrive, so a
// communicator has at most one rendezvous in progress: members arrive at the
// same position of their sequences by construction, and no sequence number is
// needed to match them.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rendezvous/collective_signature.h"
#include "spmd/core/array.h"

namespace spmd::detail {

class DeviceContext;
struct Placement;

/// A device parked at a rendezvous; lives on that device's stack.
struct Arrival {
  DeviceContext* ctx = nullptr;
  const CollectiveSignature* sig = nullptr;  // in the caller's frame, alive while it waits
  std::span<const Array> inputs;
  std::vector<Array>* outputs = nullptr;  // the caller's, filled by the data plane; null for a barrier
  std::int64_t seq = 0;        // the device's collective index
  int index = 0;               // its index along the axes as the caller named them
};

struct Communicator {
  std::string key;            // identity within the run
  std::vector<int> reduced;   // env positions the collective runs over
  int size = 0;               // members in this process: the arrivals that complete a rendezvous
  std::vector<Arrival*> slots;  // by member position (row-major over `reduced`, env order); one per
                                // member of the group, null for those of other processes
  int arrived = 0;
  Arrival* first = nullptr;
  bool mismatch = false;

  void reset() {
    std::fill(slots.begin(), slots.end(), nullptr);
    arrived = 0;
    first = nullptr;
    mismatch = false;
  }
};

/// One member as the data plane sees it.
/// A member of another process (a run with local devices) is a placeholder:
/// ctx and outputs null, no inputs, only its device id. A barrier's members
/// have no outputs (null) either.
struct CollectiveMember {
  DeviceContext* ctx;                    ///< the runtime's handle on the device; null: a member in another process
  std::span<const Array> inputs;
  std::vector<Array>* outputs;
  DeviceId device = -1;
  const Placement* placement = nullptr;  ///< the device's arena, where its outputs are allocated
  std::int64_t seq = -1;                 ///< this collective's number on the device (for error texts)
  bool here() const { return ctx != nullptr; }
};

/// A matched collective: members ordered by their index along the axes in the
/// order the caller named them (axis_index order).
struct CollectiveCall {
  const CollectiveSignature* sig = nullptr;
  std::vector<CollectiveMember> members;
  /// Some members are in other processes (placeholders).
  bool spans_processes() const {
    return std::any_of(members.begin(), members.end(), [](const CollectiveMember& m) { return !m.here(); });
  }
};

}  // namespace spmd::detail
